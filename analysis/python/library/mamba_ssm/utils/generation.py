# shardlens' model of mamba_ssm.utils.generation (not the library itself): generation adds no structure.


class InferenceParams:
    def __init__(self, max_seqlen, max_batch_size, seqlen_offset=0, batch_size_offset=0, key_value_memory_dict=None,
                 lengths_per_sample=None):
        self.max_seqlen = max_seqlen
        self.max_batch_size = max_batch_size
        self.seqlen_offset = seqlen_offset
        self.batch_size_offset = batch_size_offset
        self.key_value_memory_dict = {} if key_value_memory_dict is None else key_value_memory_dict
        self.lengths_per_sample = lengths_per_sample


class GenerationMixin:
    def allocate_inference_cache(self, batch_size, max_seqlen, dtype=None, **kwargs):
        raise NotImplementedError

    def generate(self, *args, **kwargs):
        raise NotImplementedError("shardlens does not run generation")
