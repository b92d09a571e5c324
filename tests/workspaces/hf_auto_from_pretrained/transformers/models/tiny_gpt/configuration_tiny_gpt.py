# A GPT-2-style config written for shardlens' tests, laid out as a model folder of transformers.
from ...configuration_utils import PretrainedConfig


class TinyGPTConfig(PretrainedConfig):
    model_type = "tiny_gpt"
    attribute_map = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head"}

    def __init__(self, vocab_size=500, n_positions=64, n_embd=48, n_layer=2, n_head=4, n_inner=None,
                 activation_function="gelu_new", layer_norm_epsilon=1e-5, **kwargs):
        self.vocab_size = vocab_size
        self.n_positions = n_positions
        self.n_embd = n_embd
        self.n_layer = n_layer
        self.n_head = n_head
        self.n_inner = n_inner
        self.activation_function = activation_function
        self.layer_norm_epsilon = layer_norm_epsilon
        super().__init__(**kwargs)
