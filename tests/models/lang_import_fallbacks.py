# OpenCLIP-style ViT-B/32 CLIP (text + vision towers) as written by code that
# runs with or without optional accelerators: `try: from apex... import X as
# LayerNorm except ImportError: LayerNorm = nn.LayerNorm`, try/except/else
# with a flag, `except (ImportError, ModuleNotFoundError)`, try/finally,
# `if TYPE_CHECKING:` imports that never run, class definitions inside
# if/else on those flags, a function defined conditionally, a class body
# with its own if/else, `getattr(nn, "Missing", None) or Fallback`,
# `warnings.warn` on the fallback path, and `__all__`.
import warnings
from typing import TYPE_CHECKING, Optional

import torch
import torch.nn as nn

if TYPE_CHECKING:
    from open_clip.model import CLIPVisionCfg  # noqa: F401
    LayerNorm = None

__all__ = ["CLIP"]

try:
    from apex.normalization import FusedLayerNorm as LayerNorm
    FUSED_LN = True
except ImportError:
    LayerNorm = nn.LayerNorm
    FUSED_LN = False

try:
    import xformers.ops as xops
except (ImportError, ModuleNotFoundError):
    xops = None
    warnings.warn("xformers not found, using the reference attention")
else:
    warnings.warn("using xformers")

_import_attempts = 0
try:
    _import_attempts += 1
    from flash_attn.modules.mha import MHA as FlashMHA
except ImportError as e:
    FlashMHA = None
    _reason = str(e)
finally:
    _import_attempts += 1

QuickGELU = getattr(nn, "QuickGELU", None)
if QuickGELU is None:
    class QuickGELU(nn.Module):
        def __init__(self):
            super().__init__()

if FlashMHA is not None:
    class Attention(nn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.mha = FlashMHA(width, heads)
else:
    class Attention(nn.MultiheadAttention):
        """the fallback keeps torch's parameter names (in_proj_weight, out_proj)"""
        def __init__(self, width, heads):
            super().__init__(width, heads, batch_first=True)

if xops is None:
    def make_mlp(width, ratio, act):
        hidden = int(width * ratio)
        return nn.Sequential(nn.Linear(width, hidden), act(), nn.Linear(hidden, width))
else:
    def make_mlp(width, ratio, act):
        return xops.SwiGLU(width, int(width * ratio))


class ResidualAttentionBlock(nn.Module):
    if FUSED_LN:
        norm_cls = LayerNorm
        ls_init = None
    else:
        norm_cls = nn.LayerNorm
        ls_init = 1e-5 if _import_attempts == 2 else None

    def __init__(self, width, heads, mlp_ratio=4.0, act=QuickGELU):
        super().__init__()
        self.ln_1 = self.norm_cls(width)
        self.attn = Attention(width, heads)
        self.ls_1 = nn.Parameter(self.ls_init * torch.ones(width)) if self.ls_init else None
        self.ln_2 = self.norm_cls(width)
        self.mlp = make_mlp(width, mlp_ratio, act)


class Transformer(nn.Module):
    def __init__(self, width, layers, heads, act):
        super().__init__()
        self.resblocks = nn.ModuleList([ResidualAttentionBlock(width, heads, act=act) for _ in range(layers)])


class VisionTransformer(nn.Module):
    def __init__(self, image_size=224, patch_size=32, width=768, layers=12, heads=12, output_dim=512):
        super().__init__()
        grid = image_size // patch_size
        self.conv1 = nn.Conv2d(3, width, patch_size, patch_size, bias=False)
        scale = width ** -0.5
        self.class_embedding = nn.Parameter(scale * torch.randn(width))
        self.positional_embedding = nn.Parameter(scale * torch.randn(grid ** 2 + 1, width))
        self.ln_pre = LayerNorm(width)
        self.transformer = Transformer(width, layers, heads, act=nn.GELU)
        self.ln_post = LayerNorm(width)
        self.proj = nn.Parameter(scale * torch.randn(width, output_dim))


class CLIP(nn.Module):
    def __init__(self, embed_dim=512, vocab_size=49408, context_length=77, width=512, layers=12, heads=8,
                 vision: Optional[dict] = None):
        super().__init__()
        self.visual = VisionTransformer(output_dim=embed_dim, **(vision or {}))
        self.transformer = Transformer(width, layers, heads, act=QuickGELU)
        self.token_embedding = nn.Embedding(vocab_size, width)
        self.positional_embedding = nn.Parameter(torch.empty(context_length, width))
        self.ln_final = LayerNorm(width)
        self.text_projection = nn.Parameter(torch.empty(width, embed_dim))
        self.logit_scale = nn.Parameter(torch.ones([]) * 2.6592)
        self.register_buffer("attn_mask", torch.empty(context_length, context_length).fill_(float("-inf")).triu_(1),
                             persistent=False)


model = CLIP()
