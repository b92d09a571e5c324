# shardlens' model of transformers.generation.configuration_utils (not the library itself): GenerationConfig.
from ..configuration_utils import set_from_keywords

# GenerationConfig's attributes, with their defaults, in the real class's order.
_DEFAULTS = (
    ("max_length", 20), ("max_new_tokens", None), ("do_sample", False), ("num_beams", 1), ("temperature", 1.0),
    ("top_k", 50), ("top_p", 1.0), ("use_cache", True), ("bos_token_id", None), ("eos_token_id", None),
    ("pad_token_id", None), ("decoder_start_token_id", None),
)


class GenerationConfig:
    def __init__(self, **kwargs):
        set_from_keywords(self, kwargs, _DEFAULTS)
        for key, value in kwargs.items():
            setattr(self, key, value)

    @classmethod
    def from_model_config(cls, model_config):
        return cls(
            bos_token_id=getattr(model_config, "bos_token_id", None),
            eos_token_id=getattr(model_config, "eos_token_id", None),
            pad_token_id=getattr(model_config, "pad_token_id", None),
            decoder_start_token_id=getattr(model_config, "decoder_start_token_id", None),
        )

    def update(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)
        return {}
