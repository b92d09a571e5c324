# A small window-attention backbone config in the Hugging Face style, written for shardlens' tests:
# stage names and out_features / out_indices aligned by the library's backbone mixin.
from transformers.configuration_utils import PretrainedConfig
from transformers.utils.backbone_utils import BackboneConfigMixin, get_aligned_output_features_output_indices


class WindowConfig(BackboneConfigMixin, PretrainedConfig):
    model_type = "window"

    def __init__(self, image_size=32, patch_size=4, embed_dim=32, depths=(2, 2), num_heads=(2, 4), window_size=4,
                 out_features=None, out_indices=None, **kwargs):
        super().__init__(**kwargs)
        self.image_size = image_size
        self.patch_size = patch_size
        self.embed_dim = embed_dim
        self.depths = list(depths)
        self.num_heads = list(num_heads)
        self.window_size = window_size
        self.stage_names = ["stem"] + [f"stage{i}" for i in range(1, len(depths) + 1)]
        self._out_features, self._out_indices = get_aligned_output_features_output_indices(
            out_features=out_features, out_indices=out_indices, stage_names=self.stage_names
        )
