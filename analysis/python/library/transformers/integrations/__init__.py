# shardlens' model of transformers.integrations (not the library itself): kernel hooks and attention backends.
from .hub_kernels import LayerRepository, register_kernel_mapping, replace_kernel_forward_from_hub, use_kernel_forward_from_hub
from .sdpa_attention import sdpa_attention_forward
