# timm-style `create_model("resnet50d", ...)` -> `_create_resnet(variant,
# pretrained, **kwargs)` -> `build_model_with_cfg(cls, variant, pretrained,
# **kwargs)` -> `ResNet(**kwargs)`: keyword arguments forwarded through three
# levels with `kwargs.pop(name, default)` / `kwargs.setdefault` at each,
# `*args` tuples unpacked into nn.Conv2d, keyword-only and positional-only
# parameters, exceptions raised and caught during construction
# (`except ValueError:` falling back to a default, `except (KeyError,
# TypeError) as e`), `assert` with f-strings, `isinstance(x, (int, float))`
# / `isinstance(x, (tuple, list))` dispatch on config values, `callable()`
# checks on layer arguments, and `get_act_layer` accepting a name, a class or
# None.
from typing import Callable, Optional, Union

import torch
import torch.nn as nn

_ACT = {"relu": nn.ReLU, "silu": nn.SiLU, "swish": nn.SiLU, "gelu": nn.GELU, "hard_swish": nn.Hardswish}


def get_act_layer(name: Union[str, Callable, None]):
    if name is None:
        return None
    if not isinstance(name, str):
        assert callable(name), f"act layer must be callable, got {type(name).__name__}"
        return name
    try:
        return _ACT[name.lower()]
    except KeyError:
        raise ValueError(f"unknown activation {name!r}") from None


def to_2tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x, x)


def create_conv2d(in_chs, out_chs, kernel_size, /, stride=1, *, dilation=1, groups=1, bias=False):
    k = to_2tuple(kernel_size)
    padding = tuple(((stride - 1) + dilation * (kk - 1)) // 2 for kk in k)
    args = (in_chs, out_chs, k, stride, padding, dilation, groups)
    return nn.Conv2d(*args, bias=bias)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, *, cardinality=1, base_width=64,
                 act_layer=nn.ReLU, norm_layer=nn.BatchNorm2d, attn_layer=None, drop_block=None, **kwargs):
        super().__init__()
        unused = sorted(kwargs)
        assert not unused or unused == ["reduce_first"], f"unexpected block args {unused}"
        width = int(planes * (base_width / 64)) * cardinality
        outplanes = planes * self.expansion
        self.conv1 = create_conv2d(inplanes, width, 1)
        self.bn1 = norm_layer(width)
        self.act1 = act_layer(inplace=True)
        self.conv2 = create_conv2d(width, width, 3, stride, groups=cardinality)
        self.bn2 = norm_layer(width)
        self.drop_block = drop_block() if callable(drop_block) else nn.Identity()
        self.act2 = act_layer(inplace=True)
        self.conv3 = create_conv2d(width, outplanes, 1)
        self.bn3 = norm_layer(outplanes)
        self.se = attn_layer(outplanes) if attn_layer is not None else None
        self.act3 = act_layer(inplace=True)
        self.downsample = downsample


def downsample_avg(in_chs, out_chs, stride, norm_layer):
    pool = nn.AvgPool2d(2, stride, ceil_mode=True, count_include_pad=False) if stride != 1 else nn.Identity()
    return nn.Sequential(*[pool, create_conv2d(in_chs, out_chs, 1, stride=1), norm_layer(out_chs)])


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, in_chans=3, *, stem_width=64, stem_type="",
                 avg_down=False, act_layer="relu", norm_layer=nn.BatchNorm2d, drop_rate=0.0, **block_args):
        super().__init__()
        act_layer = get_act_layer(act_layer)
        assert isinstance(drop_rate, (int, float)) and 0.0 <= drop_rate < 1.0, f"bad drop_rate={drop_rate}"
        self.drop_rate = float(drop_rate)
        deep_stem = "deep" in stem_type
        inplanes = stem_width * 2 if deep_stem else 64
        if deep_stem:
            stem_chs = (stem_width, stem_width)
            if "tiered" in stem_type:
                stem_chs = (3 * (stem_width // 4), stem_width)
            self.conv1 = nn.Sequential(*[
                create_conv2d(in_chans, stem_chs[0], 3, 2), norm_layer(stem_chs[0]), act_layer(inplace=True),
                create_conv2d(stem_chs[0], stem_chs[1], 3, 1), norm_layer(stem_chs[1]), act_layer(inplace=True),
                create_conv2d(stem_chs[1], inplanes, 3, 1)])
        else:
            self.conv1 = create_conv2d(in_chans, inplanes, 7, 2)
        self.bn1 = norm_layer(inplanes)
        self.act1 = act_layer(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

        channels = (64, 128, 256, 512)
        for stage_idx, (planes, n) in enumerate(zip(channels, layers)):
            stride = 1 if stage_idx == 0 else 2
            downsample = None
            if stride != 1 or inplanes != planes * block.expansion:
                if avg_down:
                    downsample = downsample_avg(inplanes, planes * block.expansion, stride, norm_layer)
                else:
                    downsample = nn.Sequential(create_conv2d(inplanes, planes * block.expansion, 1, stride=stride),
                                               norm_layer(planes * block.expansion))
            blocks = []
            for i in range(n):
                blocks.append(block(inplanes, planes, stride if i == 0 else 1, downsample if i == 0 else None,
                                    act_layer=act_layer, norm_layer=norm_layer, **block_args))
                inplanes = planes * block.expansion
            self.add_module(f"layer{stage_idx + 1}", nn.Sequential(*blocks))
        self.num_features = inplanes
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()


def build_model_with_cfg(model_cls, variant, pretrained, **kwargs):
    pretrained_strict = kwargs.pop("pretrained_strict", True)
    feature_cfg = kwargs.pop("feature_cfg", None) or {}
    features = kwargs.pop("features_only", False)
    kwargs.setdefault("num_classes", 1000)
    try:
        num_classes = int(kwargs["num_classes"])
    except (KeyError, TypeError, ValueError):
        num_classes = 1000
    kwargs["num_classes"] = num_classes
    model = model_cls(**kwargs)
    model.pretrained_cfg = {"variant": variant, "strict": pretrained_strict, "features": features, **feature_cfg}
    return model


def _create_resnet(variant, pretrained=False, **kwargs):
    kwargs.pop("checkpoint_path", None)
    return build_model_with_cfg(ResNet, variant, pretrained, **kwargs)


def resnet50d(pretrained=False, **kwargs):
    model_args = dict(block=Bottleneck, layers=[3, 4, 6, 3], stem_width=32, stem_type="deep", avg_down=True)
    return _create_resnet("resnet50d", pretrained, **dict(model_args, **kwargs))


def create_model(model_name, pretrained=False, **kwargs):
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    drop = kwargs.pop("drop", None)
    if drop is not None:
        kwargs["drop_rate"] = drop
    try:
        act = get_act_layer(kwargs.get("act_layer", "relu"))
    except ValueError:
        act = nn.ReLU   # unknown names fall back to ReLU
    kwargs["act_layer"] = act
    return {"resnet50d": resnet50d}[model_name](pretrained=pretrained, **kwargs)


model = create_model("resnet50d", num_classes="11", drop=0.25, act_layer="mish", checkpoint_path=None,
                     pretrained_strict=False, cardinality=32, base_width=4, features_only=None)
