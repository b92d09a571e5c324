# MAE ViT-Large/16 (encoder + 8-layer decoder) assembled through decorators:
# a registry decorator factory with arguments (`@MODELS.register("name",
# aliases=...)`) on classes and on functions, a class decorator that wraps
# `__init__` (functools.wraps) to add a module after the original __init__
# runs, a decorator that sets class attributes, stacked decorators on a
# builder function, `@staticmethod` / `@classmethod` under a user decorator,
# `functools.singledispatch` dispatching on the config's type (dict vs int
# vs tuple), `@torch.no_grad()` and `@torch.jit.ignore` on methods called
# during construction, and `@property` on the module.
import functools
from functools import partial

import torch
import torch.nn as nn


class Registry:
    def __init__(self, name):
        self.name = name
        self._map = {}

    def register(self, name=None, *, aliases=()):
        def deco(obj):
            key = name or obj.__name__.lower()
            for k in (key, *aliases):
                self._map[k] = obj
            return obj
        return deco

    def build(self, key, *args, **kwargs):
        return self._map[key](*args, **kwargs)


MODELS = Registry("models")
BLOCKS = Registry("blocks")


def with_attrs(**attrs):
    def deco(cls):
        for k, v in attrs.items():
            setattr(cls, k, v)
        return cls
    return deco


def add_head_norm(cls):
    orig_init = cls.__init__

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        self.head_norm = nn.LayerNorm(self.embed_dim)

    cls.__init__ = __init__
    return cls


def log_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)
    wrapper.calls = 0
    return wrapper


@functools.singledispatch
def mlp_hidden(cfg, dim):
    raise TypeError(type(cfg))


@mlp_hidden.register
def _(cfg: int, dim):
    return cfg


@mlp_hidden.register(float)
def _(cfg, dim):
    return int(dim * cfg)


@mlp_hidden.register(dict)
def _(cfg, dim):
    return int(dim * cfg.get("ratio", 4.0)) // cfg.get("multiple", 1) * cfg.get("multiple", 1)


@BLOCKS.register("vit", aliases=("block", "transformer"))
@with_attrs(norm_first=True, expansion=1)
class Block(nn.Module):
    def __init__(self, dim, heads, mlp, norm_layer=nn.LayerNorm):
        super().__init__()
        hidden = mlp_hidden(mlp, dim)
        self.norm1 = norm_layer(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = norm_layer(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim * self.expansion))


class PatchEmbed(nn.Module):
    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, patch_size)

    @classmethod
    @log_calls
    def for_vit(cls, embed_dim, **kw):
        return cls(embed_dim=embed_dim, **kw)


@MODELS.register()
@add_head_norm
class MaskedAutoencoderViT(nn.Module):
    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=1024, depth=24, num_heads=16,
                 decoder_embed_dim=512, decoder_depth=8, decoder_num_heads=16, mlp_ratio=4.0,
                 norm_layer=nn.LayerNorm, norm_pix_loss=False):
        super().__init__()
        self.embed_dim = embed_dim
        self.patch_embed = PatchEmbed.for_vit(embed_dim, img_size=img_size, patch_size=patch_size,
                                              in_chans=in_chans)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim), requires_grad=False)
        self.blocks = nn.ModuleList([BLOCKS.build("vit", embed_dim, num_heads, mlp_ratio, norm_layer=norm_layer)
                                     for _ in range(depth)])
        self.norm = norm_layer(embed_dim)
        self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim, bias=True)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, decoder_embed_dim))
        self.decoder_pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, decoder_embed_dim),
                                              requires_grad=False)
        self.decoder_blocks = nn.ModuleList([
            BLOCKS.build("transformer", decoder_embed_dim, decoder_num_heads,
                         {"ratio": mlp_ratio, "multiple": 64} if i % 2 else 2048, norm_layer=norm_layer)
            for i in range(decoder_depth)])
        self.decoder_norm = norm_layer(decoder_embed_dim)
        self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size ** 2 * in_chans, bias=True)
        self.norm_pix_loss = norm_pix_loss
        self.initialize_weights()
        self.build_aux()

    @torch.no_grad()
    def initialize_weights(self):
        torch.nn.init.normal_(self.cls_token, std=0.02)
        torch.nn.init.normal_(self.mask_token, std=0.02)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)

    @torch.jit.ignore
    def build_aux(self):
        if PatchEmbed.for_vit.calls == 1:
            self.aux_pred = nn.Linear(self.embed_dim, 1)

    @property
    def num_layers(self):
        return len(self.blocks) + len(self.decoder_blocks)


model = MODELS.build("maskedautoencodervit", norm_layer=partial(nn.LayerNorm, eps=1e-6))
