# shardlens-test: known-gap AutoConfig dispatch by model_type does not find the workspace's own config class yet
# A user's loader: the config comes from the local Hugging Face cache (models--acme--tiny-gpt/snapshots/...) and the
# model class from AutoModelForCausalLM's model_type dispatch; a keyword overrides a config.json value.
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

config = AutoConfig.from_pretrained("acme/tiny-gpt", cache_dir="hub", n_layer=2)
model = AutoModelForCausalLM.from_config(config)

# the same dispatch from a checkpoint folder (config.json only: weights are never read)
encoder = AutoModel.from_pretrained("checkpoint")
assert encoder.config.hidden_size == 32 and len(encoder.h) == 1
assert model.lm_head.weight is model.transformer.wte.weight

# composite configs (Llava's vision and text parts) build sub-configs through CONFIG_MAPPING
from transformers.models.auto import CONFIG_MAPPING

assert "tiny_gpt" in CONFIG_MAPPING and "not_a_model_type" not in CONFIG_MAPPING
assert CONFIG_MAPPING["tiny_gpt"](n_layer=1).n_layer == 1
# expected-total: 149248
