# LLaVA-style VLM (CLIP ViT-L/14-336 tower, 2-layer GELU projector, a
# TinyLlama-1.1B-sized decoder + a replace()'d draft decoder) driven by the
# three kinds of config objects real code mixes: dataclasses with
# `field(default_factory=...)`, `field(init=False)` filled in `__post_init__`,
# inheritance between dataclasses, a frozen dataclass using
# `object.__setattr__` in __post_init__, `@property` with a setter,
# `dataclasses.replace` (which re-runs __post_init__), `dataclasses.asdict`;
# `typing.NamedTuple` with defaults, a property and `_replace`; and a
# `types.SimpleNamespace` built from a dict.
import dataclasses
import types
from dataclasses import dataclass, field
from typing import ClassVar, List, NamedTuple, Optional

import torch
import torch.nn as nn


class VisionConfig(NamedTuple):
    width: int = 1024
    layers: int = 24
    heads: int = 16
    patch: int = 14
    image_size: int = 336
    mlp_ratio: float = 4.0

    @property
    def grid(self):
        return self.image_size // self.patch


@dataclass
class BaseConfig:
    vocab_size: int = 32000
    dim: int = 2048
    norm_eps: float = 1e-5
    model_type: ClassVar[str] = "base"


@dataclass
class TextConfig(BaseConfig):
    n_layers: int = 22
    n_heads: int = 32
    n_kv_heads: Optional[int] = 4
    multiple_of: int = 256
    ffn_dim_multiplier: Optional[float] = None
    layer_types: List[str] = field(default_factory=lambda: ["full", "full", "sliding"])
    head_dim: int = field(init=False, default=0)
    _ffn_override: Optional[int] = field(default=None, repr=False)
    model_type: ClassVar[str] = "llama"

    def __post_init__(self):
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        self.head_dim = self.dim // self.n_heads
        pattern = list(self.layer_types)
        self.layer_types = (pattern * (self.n_layers // len(pattern) + 1))[: self.n_layers]

    @property
    def ffn_dim(self):
        if self._ffn_override is not None:
            return self._ffn_override
        hidden = int(2 * (4 * self.dim) / 3)
        if self.ffn_dim_multiplier is not None:
            hidden = int(self.ffn_dim_multiplier * hidden)
        return self.multiple_of * ((hidden + self.multiple_of - 1) // self.multiple_of)

    @ffn_dim.setter
    def ffn_dim(self, value):
        self._ffn_override = value


@dataclass(frozen=True)
class ProjectorConfig:
    in_dim: int
    out_dim: int
    depth: int = 2
    hidden: int = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "hidden", self.out_dim)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: TextConfig, idx: int):
        super().__init__()
        hd = cfg.head_dim
        self.q_proj = nn.Linear(cfg.dim, cfg.n_heads * hd, bias=False)
        self.k_proj = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.v_proj = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.o_proj = nn.Linear(cfg.n_heads * hd, cfg.dim, bias=False)
        self.gate_proj = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.up_proj = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.down_proj = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)
        self.input_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.dim, cfg.norm_eps)
        if cfg.layer_types[idx] == "sliding":
            self.register_buffer("window", torch.zeros(1, 1, 1, 4096), persistent=False)


class TextModel(nn.Module):
    def __init__(self, cfg: TextConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)


class VisionTower(nn.Module):
    def __init__(self, cfg: VisionConfig):
        super().__init__()
        w = cfg.width
        self.patch_embedding = nn.Conv2d(3, w, cfg.patch, cfg.patch, bias=False)
        self.class_embedding = nn.Parameter(torch.zeros(w))
        self.position_embedding = nn.Embedding(cfg.grid ** 2 + 1, w)
        self.pre_layrnorm = nn.LayerNorm(w)
        layer = lambda: nn.TransformerEncoderLayer(w, cfg.heads, int(w * cfg.mlp_ratio), batch_first=True,
                                                   norm_first=True, activation="gelu")
        self.layers = nn.ModuleList([layer() for _ in range(cfg.layers)])


class Projector(nn.Sequential):
    def __init__(self, cfg: ProjectorConfig, act: types.SimpleNamespace):
        mods = [nn.Linear(cfg.in_dim, cfg.hidden)]
        for _ in range(1, cfg.depth):
            mods += [getattr(nn, act.name)(), nn.Linear(cfg.hidden, cfg.hidden)]
        super().__init__(*mods)


class Llava(nn.Module):
    def __init__(self, text: TextConfig, vision: VisionConfig, proj: types.SimpleNamespace):
        super().__init__()
        # LLaVA drops the last ViT layer (select_layer=-2)
        vision = vision._replace(layers=vision.layers + proj.select_layer + 1)
        self.vision_tower = VisionTower(vision)
        pcfg = ProjectorConfig(in_dim=vision.width, out_dim=text.dim, depth=proj.depth)
        self.mm_projector = Projector(pcfg, proj.act)
        self.language_model = TextModel(text)
        # a 4-layer speculative draft model with the same widths; replace()
        # re-runs __post_init__ on the already-expanded layer_types
        draft = dataclasses.replace(text, n_layers=4, n_kv_heads=None)
        draft.ffn_dim = 2048
        self.draft = TextModel(draft)
        self.config = dataclasses.asdict(text)


text_cfg = TextConfig(n_layers=22, ffn_dim_multiplier=None)
proj_cfg = types.SimpleNamespace(**{"depth": 2, "select_layer": -2, "act": types.SimpleNamespace(name="GELU")})
model = Llava(text_cfg, VisionConfig(), proj_cfg)
