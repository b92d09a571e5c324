# A small Hugging Face-style config written for shardlens' tests: attribute_map, **kwargs, defaults.
from transformers.configuration_utils import PretrainedConfig


class TinyConfig(PretrainedConfig):
    model_type = "tiny"
    attribute_map = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers"}

    def __init__(self, vocab_size=1000, hidden_size=64, intermediate_size=176, num_hidden_layers=3,
                 num_attention_heads=4, num_key_value_heads=2, hidden_act="silu", max_position_embeddings=128,
                 rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=True, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.num_key_value_heads = num_key_value_heads
        self.hidden_act = hidden_act
        self.max_position_embeddings = max_position_embeddings
        self.rms_norm_eps = rms_norm_eps
        self.rope_theta = rope_theta
        self.rope_scaling = rope_scaling
        self.head_dim = hidden_size // num_attention_heads
        super().__init__(tie_word_embeddings=tie_word_embeddings, **kwargs)
        # As Bart's config: a generation option PretrainedConfig sets, read back after super().__init__.
        if self.forced_bos_token_id is None and kwargs.get("force_bos_token_to_be_generated", False):
            self.forced_bos_token_id = self.bos_token_id
