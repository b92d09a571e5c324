# A ViT-B/16 encoder with LoRA adapters, built from mixins the way
# framework code (diffusers ModelMixin/ConfigMixin, peft layers, timm) does:
# cooperative `super().__init__(**kwargs)` chains where each class takes its
# own keyword arguments out of **kwargs, a diamond whose MRO decides the
# registration order, `class LoRALinear(LoRAMixin, nn.Linear)` where the mixin
# runs nn.Linear.__init__ through super(), old-style
# `super(Class, self).__init__()`, explicit `nn.Module.__init__(self)`,
# a super() call to an overridden hook, and mixin properties/class attributes.
import math

import torch
import torch.nn as nn


class ConfigMixin:
    config_name = "config.json"
    ignore_for_config = ("lora_rank",)

    def __init__(self, *args, **kwargs):
        self._internal_dict = {k: v for k, v in kwargs.items() if k not in self.ignore_for_config}
        super().__init__(*args, **kwargs)

    @property
    def config(self):
        return self._internal_dict


class LoRAMixin:
    def __init__(self, *args, lora_rank=0, lora_alpha=16, **kwargs):
        super().__init__(*args, **kwargs)
        self.lora_rank = lora_rank
        if lora_rank > 0:
            self.lora_A = nn.Parameter(torch.zeros(lora_rank, self.in_features))
            self.lora_B = nn.Parameter(torch.zeros(self.out_features, lora_rank))
            self.scaling = lora_alpha / lora_rank
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))


class LoRALinear(LoRAMixin, nn.Linear):
    pass


class Base(nn.Module):
    def __init__(self, dim, **kwargs):
        super().__init__()
        self.dim = dim


class NormMixin(Base):
    def __init__(self, dim, norm_eps=1e-6, **kwargs):
        super().__init__(dim, **kwargs)
        self.norm = nn.LayerNorm(dim, eps=norm_eps)


class DropPathMixin(Base):
    def __init__(self, dim, drop_path=0.0, **kwargs):
        super().__init__(dim, **kwargs)
        self.drop_path = nn.Dropout(drop_path) if drop_path > 0 else nn.Identity()


class Attention(nn.Module):
    def __init__(self, dim, num_heads, lora_rank=0):
        super(Attention, self).__init__()
        self.num_heads = num_heads
        self.qkv = LoRALinear(dim, dim * 3, lora_rank=lora_rank)
        self.proj = LoRALinear(in_features=dim, out_features=dim, lora_rank=lora_rank, lora_alpha=32)


class Mlp(nn.Module):
    def __init__(self, dim, ratio=4.0):
        nn.Module.__init__(self)
        hidden = int(dim * ratio)
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)


class Block(NormMixin, DropPathMixin):
    """MRO: Block, NormMixin, DropPathMixin, Base, nn.Module -> drop_path is
    registered before norm."""

    def __init__(self, dim, num_heads, lora_rank=0, **kwargs):
        super().__init__(dim, **kwargs)
        self.attn = Attention(dim, num_heads, lora_rank=lora_rank)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim)


class ModelMixin(nn.Module):
    _no_split_modules = ["Block"]

    def __init__(self, **config):
        super().__init__()
        self.build_stem()

    def build_stem(self):
        self.patch_embed = nn.Conv2d(3, self.config["dim"], 16, 16)

    @property
    def num_blocks(self):
        return len(self.blocks)


class VisionEncoder(ConfigMixin, ModelMixin):
    def __init__(self, dim=768, depth=12, num_heads=12, lora_rank=8, num_classes=1000, img_size=224):
        super().__init__(dim=dim, depth=depth, num_heads=num_heads, lora_rank=lora_rank)
        num_patches = (img_size // 16) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, dim))
        dpr = [0.1 * i / (depth - 1) for i in range(depth)]
        self.blocks = nn.ModuleList([
            Block(dim, num_heads, lora_rank=lora_rank if i % 2 else 0, drop_path=dpr[i], norm_eps=1e-6)
            for i in range(depth)
        ])
        self.norm = nn.LayerNorm(dim)
        self.head = LoRALinear(dim, num_classes)

    def build_stem(self):
        # runs from ModelMixin.__init__, before the attributes above exist
        super().build_stem()
        self.pos_drop = nn.Dropout(0.0)


model = VisionEncoder()
