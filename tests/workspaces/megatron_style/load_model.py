# A user's loader: a Megatron-Core-style GPT; the tensor-parallel size the script asks for is recorded, layers keep
# their full logical shapes.
import torch.nn.functional as F

from megatron.core import parallel_state
from megatron.core.transformer.transformer_config import TransformerConfig
from minigpt.model import MiniGPT, local_block_spec

parallel_state.initialize_model_parallel(tensor_model_parallel_size=2)
config = TransformerConfig(num_layers=2, hidden_size=64, num_attention_heads=4, ffn_hidden_size=160,
                           gated_linear_unit=True, activation_func=F.silu, tensor_model_parallel_size=2)
assert config.kv_channels == 16 and config.num_query_groups == 4
model = MiniGPT(config, local_block_spec(), vocab_size=512, max_sequence_length=128)
assert model.layers[0].qkv.shardlens_layout == "column" and model.layers[0].proj.shardlens_layout == "row"
assert tuple(model.layers[0].qkv.weight.shape) == (192, 64)
# expected-total: 169856
