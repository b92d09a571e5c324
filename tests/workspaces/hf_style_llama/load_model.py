# A user's loader: a Hugging Face-style decoder built from its config (tied input/output embeddings).
from mypkg.configuration_tiny import TinyConfig
from mypkg.modeling_tiny import TinyForCausalLM

config = TinyConfig(n_layer=4, rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                             "high_freq_factor": 4.0, "original_max_position_embeddings": 64})
model = TinyForCausalLM(config)
# expected-total: 248896
