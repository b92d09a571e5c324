# shardlens' model of diffusers.models.attention (not the library itself): the attention mixins and FeedForward.
# shardlens: partial model (an installed diffusers has the whole module: it is read instead when on the search path)
import torch.nn as nn

from .activations import GEGLU, GELU, ApproximateGELU, LinearActivation, SwiGLU
from .attention_processor import AttnProcessor2_0


class AttentionMixin:
    """Processor plumbing for a model: walks its attention modules, adds no parameters."""

    @property
    def attn_processors(self):
        processors = {}
        for name, module in self.named_modules():
            if hasattr(module, "get_processor"):
                processors[f"{name}.processor"] = module.get_processor()
        return processors

    def set_attn_processor(self, processor):
        for name, module in self.named_modules():
            if hasattr(module, "set_processor"):
                if isinstance(processor, dict):
                    module.set_processor(processor.pop(f"{name}.processor"))
                else:
                    module.set_processor(processor)

    def set_default_attn_processor(self):
        self.set_attn_processor(AttnProcessor2_0())

    def fuse_qkv_projections(self):
        pass

    def unfuse_qkv_projections(self):
        pass


class AttentionModuleMixin:
    """What an attention module shares: its processor (the object that runs its forward) and backend."""

    _default_processor_cls = None
    _available_processors = []
    _supports_qkv_fusion = True
    fused_projections = False

    def set_processor(self, processor):
        if processor is None and self._default_processor_cls is not None:
            processor = self._default_processor_cls()
        self.processor = processor

    def get_processor(self, return_deprecated_lora=False):
        return self.processor

    def set_attention_backend(self, backend):
        self.processor._attention_backend = backend

    def set_use_memory_efficient_attention_xformers(self, use_memory_efficient_attention_xformers, attention_op=None):
        pass


class FeedForward(nn.Module):
    """activation projection (dim -> inner_dim), dropout, Linear(inner_dim -> dim_out), [dropout]."""

    def __init__(self, dim, dim_out=None, mult=4, dropout=0.0, activation_fn="geglu", final_dropout=False,
                 inner_dim=None, bias=True):
        super().__init__()
        if inner_dim is None:
            inner_dim = int(dim * mult)
        dim_out = dim_out if dim_out is not None else dim
        if activation_fn == "gelu":
            act_fn = GELU(dim, inner_dim, bias=bias)
        elif activation_fn == "gelu-approximate":
            act_fn = GELU(dim, inner_dim, approximate="tanh", bias=bias)
        elif activation_fn == "geglu":
            act_fn = GEGLU(dim, inner_dim, bias=bias)
        elif activation_fn == "geglu-approximate":
            act_fn = ApproximateGELU(dim, inner_dim, bias=bias)
        elif activation_fn == "swiglu":
            act_fn = SwiGLU(dim, inner_dim, bias=bias)
        elif activation_fn == "linear-silu":
            act_fn = LinearActivation(dim, inner_dim, bias=bias, activation="silu")
        else:
            raise ValueError(f"shardlens' model of diffusers' FeedForward has no activation_fn '{activation_fn}'")
        self.net = nn.ModuleList([])
        self.net.append(act_fn)
        self.net.append(nn.Dropout(dropout))
        self.net.append(nn.Linear(inner_dim, dim_out, bias=bias))
        if final_dropout:
            self.net.append(nn.Dropout(dropout))

    def forward(self, hidden_states, *args, **kwargs):
        for module in self.net:
            hidden_states = module(hidden_states)
        return hidden_states
