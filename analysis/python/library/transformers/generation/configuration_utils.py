# shardlens' model of transformers.generation.configuration_utils (not the library itself): GenerationConfig.


class GenerationConfig:
    def __init__(self, **kwargs):
        self.max_length = kwargs.pop("max_length", 20)
        self.max_new_tokens = kwargs.pop("max_new_tokens", None)
        self.do_sample = kwargs.pop("do_sample", False)
        self.num_beams = kwargs.pop("num_beams", 1)
        self.temperature = kwargs.pop("temperature", 1.0)
        self.top_k = kwargs.pop("top_k", 50)
        self.top_p = kwargs.pop("top_p", 1.0)
        self.use_cache = kwargs.pop("use_cache", True)
        self.bos_token_id = kwargs.pop("bos_token_id", None)
        self.eos_token_id = kwargs.pop("eos_token_id", None)
        self.pad_token_id = kwargs.pop("pad_token_id", None)
        self.decoder_start_token_id = kwargs.pop("decoder_start_token_id", None)
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
