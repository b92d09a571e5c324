# MobileNetV2 x0.75 / GhostNet-flavoured classifier whose widths come from
# numeric and string expressions with easy-to-get-wrong semantics:
# `_make_divisible` (int(v + d/2) // d * d and the 0.9 guard), Python's
# banker's `round(2.5) == 2`, `divmod` / `//` / `%` on negative numbers,
# `math.ceil` / `math.floor` / `math.gcd` / `math.prod` / `math.isclose`,
# `int()` truncation of negative floats, walrus `:=` in conditions and
# comprehensions, chained comparisons `0 < x <= y`, truthiness traps
# (`0.0 or default`, `is not None`), `True + True`, `bool` being an `int`,
# conditional-expression chains, and names built with str.join, .format,
# %-formatting, f-string format specs, .upper/.replace/.split/.zfill.
import math

import torch
import torch.nn as nn


def _make_divisible(v, divisor=8, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, groups=1):
        padding = (k - 1) // 2
        super().__init__(nn.Conv2d(cin, cout, k, stride, padding, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio, se_ratio=0.0):
        super().__init__()
        assert stride in [1, 2], f"stride must be 1 or 2, got {stride!r}"
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, k=1))
        layers.append(ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim))
        # 0.0 is "no SE"; None would mean "use the default 0.25"
        se_ratio = 0.25 if se_ratio is None else se_ratio
        if se_ratio:
            squeeze = max(1, int(inp * se_ratio))
            layers.append(nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(hidden_dim, squeeze, 1), nn.ReLU(),
                                        nn.Conv2d(squeeze, hidden_dim, 1), nn.Hardsigmoid()))
        layers.extend([nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup)])
        self.conv = nn.Sequential(*layers)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000, width_mult=0.75, round_nearest=8, dropout=0.2, se=(0.0, None, 0.25)):
        super().__init__()
        input_channel = 32
        last_channel = 1280
        setting = [
            # t, c, n, s
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 3, 2],
            [6, 64, 4, 2],
            [6, 96, 3, 1],
            [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for idx, (t, c, n, s) in enumerate(setting):
            output_channel = _make_divisible(c * width_mult, round_nearest)
            ratio = se[idx % len(se)]
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(InvertedResidual(input_channel, output_channel, stride, expand_ratio=t,
                                                 se_ratio=ratio if 2 < idx <= 5 else 0.0))
                input_channel = output_channel
        features.append(ConvBNReLU(input_channel, self.last_channel, k=1))
        self.features = nn.Sequential(*features)

        # numeric traps, each checked by a layer's shape
        a, b = divmod(-7, 2)                  # (-4, 1)
        r1, r2, r3 = round(2.5), round(3.5), round(0.125, 2)   # 2, 4, 0.12
        t = int(-2.7)                         # -2 (truncation, not floor)
        g = math.gcd(self.last_channel, 96)   # 32
        p = math.prod([2, 3, 4])              # 24
        flags = True + True + (3 > 2 > 1) + (1 < 2 < 2)   # 3
        self.traps = nn.ModuleList([
            nn.Linear(-a, b + 8),
            nn.Linear(r1 * 8, r2 * 8),
            nn.Linear(int(r3 * 100), math.ceil(7 / 2) + math.floor(-7 / 2)),
            nn.Linear(-t * 5, g),
            nn.Linear(p, flags),
            nn.Linear(-7 // 2 + 10, -7 % 3 + 1),
            nn.Linear(int(0.1 + 0.2 == 0.3) + 1, int(math.isclose(0.1 + 0.2, 0.3)) + 1),
            nn.Linear(isinstance(True, int) + 1, (type(True) is int) + 1),
        ])

        drop = dropout or 0.5       # 0.0 would become 0.5 here
        self.classifier = nn.Sequential(nn.Dropout(drop), nn.Linear(self.last_channel, num_classes))

        # walrus in a comprehension and in a condition
        dims = [d for c in (12, 20, 28, 36, 44) if (d := _make_divisible(c * 1.5, 8)) % 16 == 0]
        self.aux = nn.ModuleDict()
        for i, d in enumerate(dims):
            key = "_".join(["aux", str(i).zfill(2), "{:d}x{}".format(d, d)])
            self.aux[key] = nn.Linear(self.last_channel, d)
        if (n := len(dims)) > 1:
            self.aux_fuse = nn.Linear(sum(dims), n)
        names = "stem.conv,stem.bn ,head".replace(" ", "").split(",")
        self.named = nn.ModuleDict({("%s_%d" % (s.upper().replace(".", "_"), i)): nn.Identity()
                                    for i, s in enumerate(names)})
        self.temperature = nn.Parameter(torch.ones(f"{3.14159:.2f}".count("1") + len(f"{7:>4}")))


model = MobileNetV2()
