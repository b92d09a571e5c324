# MMDetection/NeMo-flavoured encoder-decoder segmentation model (ResNet-ish
# backbone, FPN neck, UPerNet-like head) assembled from a registry that is
# filled by `__init_subclass__` (with a class keyword `key="..."` in the
# class statement), abc.ABC bases with @abstractmethod (one abstract
# property), `@classmethod from_config(cls, cfg)` factories that subclasses
# inherit and that return `cls(...)`, `@staticmethod` helpers called through
# the instance and through the class, and `cls.__name__` / `type(self)` use.
import abc
from typing import Dict, List

import torch
import torch.nn as nn


class Registered(nn.Module, abc.ABC):
    REGISTRY: Dict[str, type] = {}

    def __init_subclass__(cls, key=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if key is not None:
            Registered.REGISTRY[key] = cls
        cls.kind = key or cls.__name__.lower()

    @classmethod
    def from_config(cls, cfg):
        cfg = dict(cfg)
        target = cls.REGISTRY[cfg.pop("type")]
        return target(**cfg)

    @property
    @abc.abstractmethod
    def out_channels(self):
        ...


class Backbone(Registered):
    @abc.abstractmethod
    def stages(self) -> List[int]:
        raise NotImplementedError


class ConvNet(Backbone, key="convnet"):
    def __init__(self, widths=(64, 128, 256, 512), depths=(2, 2, 2, 2), in_ch=3):
        super().__init__()
        self.widths = list(widths)
        self.stem = self.conv_bn(in_ch, widths[0], 7, 2)
        layers = []
        prev = widths[0]
        for w, d in zip(widths, depths):
            blocks = [ConvNet.conv_bn(prev, w, 3, 1 if prev == w else 2)]
            blocks += [self.conv_bn(w, w, 3, 1) for _ in range(d - 1)]
            layers.append(nn.Sequential(*blocks))
            prev = w
        self.layers = nn.ModuleList(layers)

    @staticmethod
    def conv_bn(cin, cout, k, s):
        return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True))

    def stages(self):
        return self.widths

    @property
    def out_channels(self):
        return self.widths[-1]


class WideConvNet(ConvNet, key="wide_convnet"):
    def __init__(self, widen=2, **kwargs):
        super().__init__(widths=tuple(w * widen for w in (64, 128, 256, 512)), **kwargs)


class Neck(Registered):
    pass


class FPN(Neck, key="fpn"):
    def __init__(self, in_channels, out_channels=256):
        super().__init__()
        self._out = out_channels
        self.lateral = nn.ModuleList(nn.Conv2d(c, out_channels, 1) for c in in_channels)
        self.smooth = nn.ModuleList(nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels)

    @property
    def out_channels(self):
        return self._out


class Head(Registered):
    @classmethod
    def from_config(cls, cfg, in_channels=None):
        cfg = {**cfg, "in_channels": in_channels}
        return super().from_config(cfg)


class UPerHead(Head, key="uper"):
    def __init__(self, in_channels, num_classes, channels=512, pool_scales=(1, 2, 3, 6)):
        super().__init__()
        self.ppm = nn.ModuleList(
            nn.Sequential(nn.AdaptiveAvgPool2d(s), nn.Conv2d(in_channels, channels, 1), nn.BatchNorm2d(channels))
            for s in pool_scales)
        self.bottleneck = nn.Conv2d(in_channels + len(pool_scales) * channels, channels, 3, padding=1)
        self.cls_seg = nn.Conv2d(channels, num_classes, 1)

    @property
    def out_channels(self):
        return self.cls_seg.out_channels


class EncoderDecoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.backbone = Registered.from_config(cfg["backbone"])
        self.neck = Neck.from_config({**cfg["neck"], "in_channels": self.backbone.stages()})
        self.decode_head = Head.from_config(cfg["head"], in_channels=self.neck.out_channels)
        assert isinstance(self.backbone, Backbone), type(self.backbone).__name__
        try:
            Backbone()
        except TypeError:
            # abstract classes cannot be instantiated
            self.aux_head = UPerHead(self.backbone.out_channels, cfg["head"]["num_classes"], channels=256,
                                     pool_scales=(1,))


CFG = dict(
    backbone=dict(type="wide_convnet", widen=2, depths=(3, 4, 6, 3)),
    neck=dict(type="fpn", out_channels=256),
    head=dict(type="uper", num_classes=150),
)
model = EncoderDecoder(CFG)
