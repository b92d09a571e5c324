# shardlens' model of diffusers.loaders.single_file_model (not the library itself): single-file checkpoints are not read.


class FromOriginalModelMixin:
    @classmethod
    def from_single_file(cls, pretrained_model_link_or_path_or_dict=None, **kwargs):
        raise NotImplementedError("shardlens does not read single-file checkpoints")
