# VGG-16-BN features + a YOLO-style detection neck, written with generator
# functions: `yield` of single layers, `yield from` of sub-generators (and the
# *return value* of a sub-generator captured with `out = yield from ...`),
# generator methods on the module, `nn.Sequential(*gen())`,
# `nn.ModuleList(gen())`, `next(it)` taking a stem off an iterator before the
# rest goes to a Sequential, itertools.chain of generators, and a generator
# expression that reads a variable lazily (its value at consumption time).
import itertools

import torch
import torch.nn as nn

VGG16 = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


def conv_bn_act(cin, cout, k=3, s=1, act=True):
    yield nn.Conv2d(cin, cout, k, s, k // 2, bias=False)
    yield nn.BatchNorm2d(cout)
    if act:
        yield nn.LeakyReLU(0.1, inplace=True)


def vgg_features(cfg, in_ch=3):
    for v in cfg:
        if v == "M":
            yield nn.MaxPool2d(kernel_size=2, stride=2)
            continue
        yield from conv_bn_act(in_ch, v)
        in_ch = v


def csp_stage(cin, cout, n):
    """Yields a CSP-ish stage and returns its output width."""
    hidden = cout // 2
    yield from conv_bn_act(cin, hidden, k=1)
    for _ in range(n):
        yield from conv_bn_act(hidden, hidden)
    yield nn.Conv2d(hidden, cout, 1)
    return cout


class Neck(nn.Module):
    def __init__(self, widths=(512, 256, 128), depth=2):
        super().__init__()
        self.stages = nn.ModuleList(self._stages(widths, depth))
        self.out_channels = []
        self.lateral = nn.ModuleList(
            nn.Conv2d(w, w // 2, 1) for w in widths[:-1]
        )

    def _stages(self, widths, depth):
        cin = widths[0]
        for w in widths:
            layers = []
            gen = csp_stage(cin, w, depth)
            while True:
                try:
                    layers.append(next(gen))
                except StopIteration as stop:
                    cin = stop.value
                    break
            yield nn.Sequential(*layers)


class Head(nn.Module):
    def __init__(self, in_channels, num_anchors=3, num_classes=80):
        super().__init__()
        no = num_anchors * (num_classes + 5)
        self.m = nn.ModuleList(self.branch(c, no) for c in in_channels)

    @staticmethod
    def branch(c, no):
        return nn.Sequential(*conv_bn_act(c, c * 2), nn.Conv2d(c * 2, no, 1))


class Detector(nn.Module):
    def __init__(self, num_classes=80):
        super().__init__()
        layers = iter(vgg_features(VGG16))
        self.stem = nn.Sequential(*itertools.islice(layers, 3))
        first = next(layers)
        self.first = first
        self.backbone = nn.Sequential(*layers)
        self.neck = Neck()
        out = []
        width = 64
        extra = (nn.Conv2d(width, width, 3, padding=1) for _ in range(2))
        width = 128  # the generator above reads `width` only when consumed
        self.extra = nn.Sequential(*extra)
        self.pyramid = nn.Sequential(*itertools.chain(
            conv_bn_act(512, 256, k=1), conv_bn_act(256, 128, k=1, act=False)))
        self.head = Head((512, 256, 128), num_classes=num_classes)
        self.tail = nn.Sequential(*self._tail())

    def _tail(self):
        c = 128
        while c > 16:
            yield nn.Conv2d(c, c // 2, 1)
            c //= 2
        yield nn.Flatten()


model = Detector()
