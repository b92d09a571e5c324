# shardlens-test: --model "build_efficientnet('efficientnet-b4', tasks=TASKS, act='swish')"
# EfficientNet-B4 with a multi-task head, written the way config-driven vision
# code is written: module-level constant tables of plain dicts read with
# `.get(key, default)`, `{**base, **overrides}` and **kwargs splats,
# width/depth scaling with math.ceil, int(), min/max and `//` / `%`,
# f-string names in add_module(f"block_{i}", ...), a generator expression fed
# to nn.ModuleList, enumerate, conditional expressions and a registry dict of
# activation classes. No module-level instance: the root comes from the
# --model expression in the directive above.
import math
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

# kernel, repeats, in, out, expand, stride, se
DEFAULT_BLOCKS_ARGS = [
    {"kernel_size": 3, "repeats": 1, "filters_in": 32, "filters_out": 16, "expand_ratio": 1, "id_skip": True,
     "strides": 1, "se_ratio": 0.25},
    {"kernel_size": 3, "repeats": 2, "filters_in": 16, "filters_out": 24, "expand_ratio": 6, "id_skip": True,
     "strides": 2, "se_ratio": 0.25},
    {"kernel_size": 5, "repeats": 2, "filters_in": 24, "filters_out": 40, "expand_ratio": 6, "id_skip": True,
     "strides": 2, "se_ratio": 0.25},
    {"kernel_size": 3, "repeats": 3, "filters_in": 40, "filters_out": 80, "expand_ratio": 6, "id_skip": True,
     "strides": 2, "se_ratio": 0.25},
    {"kernel_size": 5, "repeats": 3, "filters_in": 80, "filters_out": 112, "expand_ratio": 6, "id_skip": True,
     "strides": 1, "se_ratio": 0.25},
    {"kernel_size": 5, "repeats": 4, "filters_in": 112, "filters_out": 192, "expand_ratio": 6, "id_skip": True,
     "strides": 2, "se_ratio": 0.25},
    {"kernel_size": 3, "repeats": 1, "filters_in": 192, "filters_out": 320, "expand_ratio": 6, "id_skip": True,
     "strides": 1, "se_ratio": 0.25},
]

# (width_coefficient, depth_coefficient, resolution, dropout_rate)
PARAMS = {
    "efficientnet-b0": {"width": 1.0, "depth": 1.0, "res": 224, "dropout": 0.2},
    "efficientnet-b1": {"width": 1.0, "depth": 1.1, "res": 240, "dropout": 0.2},
    "efficientnet-b2": {"width": 1.1, "depth": 1.2, "res": 260, "dropout": 0.3},
    "efficientnet-b3": {"width": 1.2, "depth": 1.4, "res": 300, "dropout": 0.3},
    "efficientnet-b4": {"width": 1.4, "depth": 1.8, "res": 380, "dropout": 0.4},
    "efficientnet-b5": {"width": 1.6, "depth": 2.2, "res": 456, "dropout": 0.4},
}

DIVISOR = 8
STEM_FILTERS = 32
HEAD_FILTERS = 1280
BN_MOMENTUM = 0.01
BN_EPS = 1e-3

ACTIVATIONS = {
    "swish": nn.SiLU,
    "relu": nn.ReLU,
    "relu6": nn.ReLU6,
    "hswish": nn.Hardswish,
}

TASKS = {
    "imagenet": 1000,
    "attributes": 40,
    "scene": 365,
}


def make_divisible(v, divisor=DIVISOR, min_value=None):
    """Round the number of filters to a multiple of `divisor` (never down by more than 10%)."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def round_filters(filters, width_coefficient):
    return make_divisible(filters * width_coefficient)


def round_repeats(repeats, depth_coefficient):
    return int(math.ceil(depth_coefficient * repeats))


def same_padding(kernel_size, stride=1, dilation=1):
    return ((stride - 1) + dilation * (kernel_size - 1)) // 2


class ConvBNAct(nn.Sequential):
    def __init__(self, in_ch, out_ch, kernel_size=3, stride=1, groups=1, act="swish", **bn_kwargs):
        act_layer = ACTIVATIONS.get(act) if act else None
        layers = [
            nn.Conv2d(in_ch, out_ch, kernel_size, stride, same_padding(kernel_size, stride), groups=groups,
                      bias=False),
            nn.BatchNorm2d(out_ch, **{"momentum": BN_MOMENTUM, "eps": BN_EPS, **bn_kwargs}),
        ]
        if act_layer is not None:
            layers.append(act_layer(inplace=True) if act != "hswish" else act_layer())
        super().__init__(*layers)


class SqueezeExcite(nn.Module):
    def __init__(self, channels, rd_channels, act="swish"):
        super().__init__()
        self.conv_reduce = nn.Conv2d(channels, rd_channels, 1, bias=True)
        self.act = ACTIVATIONS[act]()
        self.conv_expand = nn.Conv2d(rd_channels, channels, 1, bias=True)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * self.gate(self.conv_expand(self.act(self.conv_reduce(s))))


class MBConv(nn.Module):
    def __init__(self, cfg, drop_rate=0.0, act="swish"):
        super().__init__()
        filters_in = cfg["filters_in"]
        filters_out = cfg["filters_out"]
        expand_ratio = cfg.get("expand_ratio", 1)
        kernel_size = cfg.get("kernel_size", 3)
        stride = cfg.get("strides", 1)
        se_ratio = cfg.get("se_ratio", 0.0)
        filters = filters_in * expand_ratio

        self.has_skip = cfg.get("id_skip", True) and stride == 1 and filters_in == filters_out
        self.expand = ConvBNAct(filters_in, filters, 1, act=act) if expand_ratio != 1 else nn.Identity()
        self.dw = ConvBNAct(filters, filters, kernel_size, stride, groups=filters, act=act)
        if 0 < se_ratio <= 1:
            self.se = SqueezeExcite(filters, max(1, int(filters_in * se_ratio)), act=act)
        else:
            self.se = None
        self.project = ConvBNAct(filters, filters_out, 1, act=None)
        self.drop_rate = drop_rate if self.has_skip else 0.0

    def forward(self, x):
        shortcut = x
        x = self.dw(self.expand(x))
        if self.se is not None:
            x = self.se(x)
        x = self.project(x)
        if self.has_skip:
            if self.drop_rate > 0 and self.training:
                x = F.dropout(x, self.drop_rate, self.training)
            x = x + shortcut
        return x


class EfficientNet(nn.Module):
    def __init__(self, width_coefficient=1.0, depth_coefficient=1.0, dropout=0.2, drop_connect_rate=0.2,
                 blocks_args=None, tasks=None, act="swish", in_chans=3, **kwargs):
        super().__init__()
        blocks_args = blocks_args if blocks_args is not None else DEFAULT_BLOCKS_ARGS
        tasks = tasks or {"imagenet": 1000}
        stem_out = round_filters(STEM_FILTERS, width_coefficient)
        self.stem = ConvBNAct(in_chans, stem_out, 3, 2, act=act)

        total_blocks = float(sum(round_repeats(args["repeats"], depth_coefficient) for args in blocks_args))
        self.blocks = nn.Sequential()
        b = 0
        for i, args in enumerate(blocks_args):
            assert args["repeats"] > 0
            args = {**args,
                    "filters_in": round_filters(args["filters_in"], width_coefficient),
                    "filters_out": round_filters(args["filters_out"], width_coefficient)}
            stage = nn.Sequential()
            for j in range(round_repeats(args.pop("repeats"), depth_coefficient)):
                # the first block of a stage takes care of stride and filter size increase
                if j > 0:
                    args["strides"] = 1
                    args["filters_in"] = args["filters_out"]
                stage.add_module(f"block_{j}", MBConv(args, drop_connect_rate * b / total_blocks, act=act))
                b += 1
            self.blocks.add_module(f"stage{i + 1}", stage)

        last_in = round_filters(blocks_args[-1]["filters_out"], width_coefficient)
        num_features = round_filters(HEAD_FILTERS, width_coefficient)
        self.head = ConvBNAct(last_in, num_features, 1, act=act)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.task_names = list(tasks)
        self.classifiers = nn.ModuleList(nn.Linear(num_features, n) for n in tasks.values())
        # an extra low-capacity head for every third task, shared bottleneck size
        bottleneck = min(256, max(64, num_features // 8))
        self.aux = nn.ModuleDict()
        for k, (name, n) in enumerate(tasks.items()):
            if k % 3 == 0:
                self.aux[name] = nn.Sequential(nn.Linear(num_features, bottleneck), nn.ReLU(inplace=True),
                                               nn.Linear(bottleneck, n))

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                nn.init.normal_(m.weight, 0, math.sqrt(2.0 / fan_out))
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                init_range = 1.0 / math.sqrt(m.weight.size(0))
                nn.init.uniform_(m.weight, -init_range, init_range)
                nn.init.zeros_(m.bias)


def build_efficientnet(name, **overrides):
    params = PARAMS[name]
    cfg = {"width_coefficient": params.get("width", 1.0),
           "depth_coefficient": params.get("depth", 1.0),
           "dropout": params.get("dropout", 0.2),
           "drop_connect_rate": 0.2}
    cfg = {**cfg, **overrides}
    return EfficientNet(**cfg)

