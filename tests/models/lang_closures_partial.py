# ResNeXt-50 (32x4d) with SE and configurable norm/activation, where every
# layer factory is a closure: `make_norm(kind)` returning lambdas or inner
# functions, `functools.partial` chains and partial-of-partial (later
# keywords override earlier ones; partial.func/.args/.keywords are read),
# a `nonlocal` counter in a closure, closures created in a loop with the
# late-binding trap (all see the last value) vs a default argument that
# binds early, `functools.reduce` over stage widths and an `lru_cache`d helper.
import functools
import operator
from functools import partial

import torch
import torch.nn as nn


def make_norm(kind, **defaults):
    if kind == "bn":
        return lambda c: nn.BatchNorm2d(c, **defaults)
    if kind == "gn":
        def gn(c):
            return nn.GroupNorm(min(32, c // 4), c, **defaults)
        return gn
    if kind == "frozen":
        def frozen(c):
            bn = nn.BatchNorm2d(c, affine=False, track_running_stats=True)
            return bn
        return frozen
    raise ValueError(kind)


def make_act(name):
    table = {"relu": nn.ReLU, "silu": nn.SiLU, "gelu": nn.GELU}
    return partial(table[name], inplace=True) if name != "gelu" else table[name]


@functools.lru_cache(maxsize=None)
def se_width(c, ratio):
    return max(8, int(c * ratio))


def conv_factory():
    count = 0

    def conv(cin, cout, k=1, s=1, groups=1):
        nonlocal count
        count += 1
        return nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False)

    conv.num_calls = lambda: count
    return conv


class SE(nn.Module):
    def __init__(self, c, ratio=0.25, act=nn.ReLU):
        super().__init__()
        r = se_width(c, ratio)
        self.fc1 = nn.Conv2d(c, r, 1)
        self.act = act()
        self.fc2 = nn.Conv2d(r, c, 1)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride, conv, norm, act, groups=32, base_width=4, se=None):
        super().__init__()
        width = int(planes * (base_width / 64.0)) * groups
        out = planes * self.expansion
        self.conv1 = conv(cin, width)
        self.bn1 = norm(width)
        self.conv2 = conv(width, width, 3, stride, groups=groups)
        self.bn2 = norm(width)
        self.conv3 = conv(width, out)
        self.bn3 = norm(out)
        self.se = se(out) if se is not None else None
        self.act = act()
        if stride != 1 or cin != out:
            self.downsample = nn.Sequential(conv(cin, out, 1, stride), norm(out))


class ResNeXt(nn.Module):
    def __init__(self, depths=(3, 4, 6, 3), norm="bn", act="relu", num_classes=1000):
        super().__init__()
        conv = conv_factory()
        norm_layer = make_norm(norm, eps=1e-5, momentum=0.1)
        act_layer = make_act(act)
        se_layer = partial(SE, ratio=0.25)
        se_layer = partial(se_layer, act=act_layer)     # partial of partial
        block = partial(Bottleneck, conv=conv, norm=norm_layer, act=act_layer, groups=32)
        block = partial(block, base_width=4, se=se_layer)
        assert block.func is Bottleneck and block.keywords["groups"] == 32

        self.stem = nn.Sequential(conv(3, 32, 3, 2), norm_layer(32), act_layer(),
                                  conv(32, 32, 3), norm_layer(32), act_layer(),
                                  conv(32, 64, 3), norm_layer(64), act_layer())
        widths = [64 * 2 ** i for i in range(len(depths))]
        cin = 64
        stages = []
        for i, (w, d) in enumerate(zip(widths, depths)):
            blocks = []
            for j in range(d):
                blocks.append(block(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w * Bottleneck.expansion
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)

        # late binding: every lambda sees the final `w`; the default argument
        # binds each value
        late = [lambda: nn.Linear(w, w) for w in (16, 32, 64)]
        early = [lambda w=w: nn.Linear(w, w) for w in (16, 32, 64)]
        self.late = nn.ModuleList(f() for f in late)
        self.early = nn.ModuleList(f() for f in early)

        total = functools.reduce(operator.add, (w * Bottleneck.expansion for w in widths))
        self.neck = nn.Linear(cin, total // 8)
        self.fc = nn.Linear(total // 8, num_classes)
        self.num_convs = conv.num_calls()
        self.register_buffer("conv_count", torch.zeros(self.num_convs))


model = ResNeXt()
