# ResNet-34 + FPN + per-level heads in the pre-ModuleList style of older
# detection/segmentation code: `setattr(self, f"layer{i}", ...)` and
# `setattr(self, "lateral_%d" % i, ...)` in loops read back with
# `getattr(self, name)`, `getattr(..., None)` defaults, `hasattr` checks,
# `delattr` and re-`setattr` (moves the module to the end), `setattr(self,
# name, None)` placeholders, `self.add_module` vs `self.__setattr__`,
# `object.__setattr__` to keep a back-reference unregistered, and reading
# built-in layer attributes (`out_channels`) through getattr chains.
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        for i, (cin, cout, s) in enumerate([(inplanes, planes, stride), (planes, planes, 1)], start=1):
            setattr(self, f"conv{i}", nn.Conv2d(cin, cout, 3, s, 1, bias=False))
            setattr(self, f"bn{i}", nn.BatchNorm2d(cout))
            if i == 1:
                self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample


class ResNet34FPN(nn.Module):
    def __init__(self, layers=(3, 4, 6, 3), fpn_dim=256, num_classes=91, num_anchors=9):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        for i, n in enumerate(layers):
            planes = 64 * 2 ** i
            setattr(self, "layer%d" % (i + 1), self._make_layer(planes, n, stride=1 if i == 0 else 2))
        self.fc = nn.Linear(512, 1000)
        # classification head is not used by the detector
        delattr(self, "fc")

        self.level_names = []
        for i in range(2, 5 + 1):
            layer = getattr(self, f"layer{i}", None)
            if layer is None:
                continue
            cin = getattr(layer[-1], "conv2").out_channels
            setattr(self, "lateral_%d" % i, nn.Conv2d(cin, fpn_dim, 1))
            self.add_module("output_%d" % i, nn.Conv2d(fpn_dim, fpn_dim, 3, padding=1))
            self.level_names.append("p%d" % i)
        # P6 from P5 output
        self.__setattr__("p6", nn.Conv2d(fpn_dim, fpn_dim, 3, 2, 1))
        setattr(self, "p7", None)
        if not hasattr(self, "p8"):
            self.p7 = nn.Sequential(nn.ReLU(), nn.Conv2d(fpn_dim, fpn_dim, 3, 2, 1))

        for kind, out in (("cls", num_anchors * num_classes), ("box", num_anchors * 4)):
            tower = []
            for _ in range(4):
                tower += [nn.Conv2d(fpn_dim, fpn_dim, 3, padding=1), nn.GroupNorm(32, fpn_dim), nn.ReLU()]
            setattr(self, kind + "_tower", nn.Sequential(*tower))
            setattr(self, kind + "_logits", nn.Conv2d(fpn_dim, out, 3, padding=1))
        # re-adding moves fc to the end of the registration order
        setattr(self, "fc", nn.Linear(fpn_dim, num_classes))
        for name in self.level_names:
            getattr(self, "output_%s" % name[1:]).parent_name = name
        object.__setattr__(self, "_backbone_ref", self.layer1)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * BasicBlock.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * BasicBlock.expansion),
            )
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * BasicBlock.expansion
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes))
        return nn.Sequential(*layers)


model = ResNet34FPN()
