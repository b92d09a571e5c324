# wav2vec 2.0 base (conv feature encoder, weight-normed positional conv,
# 12-layer post-LN transformer, quantizer + projections) configured through
# the dunder-heavy config objects seen in research code: an EasyDict-like
# `class AttrDict(dict)` with `__getattr__ = dict.__getitem__` and
# `__setattr__ = dict.__setitem__`, a `dotdict` using `dict.get` (missing ->
# None), a layered config whose `__getattr__` falls back to a parent and
# raises AttributeError (so `getattr(cfg, name, default)` works), a config
# with `__getitem__`/`__contains__`/`__iter__`/`__len__`/`__bool__`, and a
# callable spec object (`__call__`) building a layer.
import math

import torch
import torch.nn as nn


class AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class dotdict(dict):
    __getattr__ = dict.get
    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__


class Layered:
    def __init__(self, parent=None, **values):
        self.__dict__["_parent"] = parent
        self.__dict__["_values"] = dict(values)

    def __getattr__(self, name):
        values = self.__dict__["_values"]
        if name in values:
            return values[name]
        if self._parent is not None:
            return getattr(self._parent, name)
        raise AttributeError(name)

    def __setattr__(self, name, value):
        self._values[name] = value


class ConvSpec:
    """(dim, kernel, stride) triples with sequence dunders"""

    def __init__(self, layers):
        self._layers = list(layers)

    def __len__(self):
        return len(self._layers)

    def __getitem__(self, i):
        return self._layers[i]

    def __iter__(self):
        return iter(self._layers)

    def __contains__(self, dim):
        return any(d == dim for d, _, _ in self._layers)

    def __bool__(self):
        return len(self._layers) > 0


class NormSpec:
    def __init__(self, kind, **kw):
        self.kind, self.kw = kind, kw

    def __call__(self, dim):
        if self.kind == "group":
            return nn.GroupNorm(num_groups=dim, num_channels=dim, affine=True)
        return nn.LayerNorm(dim, **self.kw)


class FeatureEncoder(nn.Module):
    def __init__(self, spec: ConvSpec, first_norm: NormSpec, bias=False):
        super().__init__()
        layers = []
        in_d = 1
        for i, (dim, k, s) in enumerate(spec):
            block = [nn.Conv1d(in_d, dim, k, s, bias=bias)]
            if i == 0 and first_norm:
                block.append(first_norm(dim))
            block.append(nn.GELU())
            layers.append(nn.Sequential(*block))
            in_d = dim
        self.conv_layers = nn.ModuleList(layers)


class EncoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(cfg.encoder_embed_dim, cfg.encoder_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(cfg.encoder_embed_dim)
        self.fc1 = nn.Linear(cfg.encoder_embed_dim, cfg.encoder_ffn_embed_dim)
        self.fc2 = nn.Linear(cfg.encoder_ffn_embed_dim, cfg.encoder_embed_dim)
        self.final_layer_norm = nn.LayerNorm(cfg.encoder_embed_dim)


class Wav2Vec2(nn.Module):
    def __init__(self, cfg: Layered, extra: dotdict, quant: AttrDict):
        super().__init__()
        spec = ConvSpec(cfg.conv_feature_layers)
        self.feature_extractor = FeatureEncoder(spec, NormSpec(cfg.extractor_mode), bias=cfg.conv_bias)
        self.embed = spec[-1][0]
        self.layer_norm = nn.LayerNorm(self.embed)
        self.post_extract_proj = (nn.Linear(self.embed, cfg.encoder_embed_dim)
                                  if self.embed != cfg.encoder_embed_dim else None)
        self.mask_emb = nn.Parameter(torch.empty(cfg.encoder_embed_dim).uniform_())
        dim = cfg.encoder_embed_dim
        pos_conv = nn.Conv1d(dim, dim, kernel_size=cfg.conv_pos, padding=cfg.conv_pos // 2,
                             groups=cfg.conv_pos_groups)
        std = math.sqrt((4 * (1.0 - cfg.dropout)) / (cfg.conv_pos * dim))
        nn.init.normal_(pos_conv.weight, mean=0, std=std)
        nn.init.constant_(pos_conv.bias, 0)
        pos_conv = nn.utils.weight_norm(pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(pos_conv, nn.GELU())
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.encoder_layers))
        self.encoder_layer_norm = nn.LayerNorm(dim) if getattr(cfg, "layer_norm_first", False) else None
        # quantizer
        vq_dim = quant.latent_dim if quant.latent_dim > 0 else cfg.final_dim
        self.quantizer_vars = nn.Parameter(torch.empty(1, quant.groups * quant.latent_vars, vq_dim // quant.groups))
        self.quantizer_weight_proj = nn.Linear(self.embed, quant.groups * quant.latent_vars)
        self.project_q = nn.Linear(vq_dim, cfg.final_dim)
        self.final_proj = nn.Linear(dim, cfg.final_dim)
        if extra.target_glu:
            self.target_glu = nn.Sequential(nn.Linear(cfg.final_dim, cfg.final_dim * 2), nn.GLU())
        self.num_updates = extra.num_updates or 0
        if 768 in spec:
            self.adapter = nn.Linear(768, 768)
        if 512 in spec and len(spec) == 7:
            self.spec_adapter = nn.Linear(spec[0][0], extra.get("adapter_dim", 64))


base = Layered(
    conv_feature_layers=[(512, 10, 5)] + [(512, 3, 2)] * 4 + [(512, 2, 2)] * 2,
    extractor_mode="group",
    conv_bias=False,
    encoder_embed_dim=768,
    encoder_ffn_embed_dim=3072,
    encoder_attention_heads=12,
    encoder_layers=12,
    conv_pos=128,
    conv_pos_groups=16,
    dropout=0.1,
    final_dim=256,
)
cfg = Layered(base, encoder_layers=12, final_dim=256)
cfg.dropout = 0.0
quant = AttrDict(groups=2, latent_vars=320)
quant.latent_dim = 0
model = Wav2Vec2(cfg, dotdict(num_updates=None), quant)
