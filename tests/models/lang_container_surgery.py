# Feature-extractor / fine-tuning "surgery" on containers, as perceptual-loss
# (LPIPS), detection and PEFT code does it: slicing an nn.Sequential (keeps
# the original string keys) vs slicing an nn.ModuleList (renumbers),
# `add_module(str(x), features[x])` copying layers under their old indices,
# `nn.Sequential(*list(net.children())[:-2])`, negative indexing and
# `seq[-1] = ...`, `del seq[i]` (Sequential does not renumber), `del
# mlist[i]` (ModuleList renumbers), `ModuleList.extend/insert/append`,
# `Sequential.append`, replacing children found with `named_children()` via
# setattr, and a LoRA injection pass over `named_modules()` that finds the
# parent with `name.rsplit(".", 1)` + `get_submodule` and swaps children.
import torch
import torch.nn as nn

VGG_CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


def make_vgg(cfg=VGG_CFG):
    layers, c = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
            c = v
    return nn.Sequential(*layers)


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.relu = nn.ReLU(inplace=True)
        self.down = nn.Conv2d(cin, mid, 1, stride, bias=False) if stride != 1 or cin != mid else None


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(Bottleneck(64, 64), Bottleneck(64, 64))
        self.layer2 = nn.Sequential(Bottleneck(64, 128, 2), Bottleneck(128, 128))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(128, 1000)


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=8):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)


class Surgery(nn.Module):
    def __init__(self):
        super().__init__()
        features = make_vgg()
        # LPIPS: five slices keeping the original indices as names
        self.slice1, self.slice2, self.slice3 = nn.Sequential(), nn.Sequential(), nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), features[x])
        for x in range(9, 16):
            self.slice3.add_module(str(x), features[x])
        self.slice4 = features[16:23]           # Sequential slice: keys "16".."22"
        self.slice5 = features[23:-1]
        self.last_pool = features[-1]

        resnet = TinyResNet()
        self.backbone = nn.Sequential(*list(resnet.children())[:-2])
        self.backbone[-1][-1].relu = nn.SiLU()
        for name, child in self.backbone.named_children():
            if isinstance(child, nn.ReLU):
                setattr(self.backbone, name, nn.GELU())
        self.backbone.append(nn.Conv2d(128, 256, 1))

        head = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Dropout(0.1), nn.Linear(512, 10))
        del head[2]                              # torch 1.13 renumbers: "0", "1", "2"
        head[-1] = nn.Linear(512, 20)
        self.head = head

        blocks = nn.ModuleList(nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True) for _ in range(6))
        del blocks[1]                            # ModuleList renumbers 0..4
        blocks.insert(0, nn.LayerNorm(256))
        blocks.extend([nn.Linear(256, 256), nn.LayerNorm(256)])
        self.blocks = blocks
        self.even_blocks = self.blocks[::2]      # ModuleList slice: renumbered 0..3

        # PEFT-style injection into every attention out_proj and linear2
        targets = [n for n, m in self.blocks.named_modules() if n.endswith(("out_proj", "linear2"))]
        for name in targets:
            parent_name, child_name = name.rsplit(".", 1)
            parent = self.blocks.get_submodule(parent_name)
            setattr(parent, child_name, LoRALinear(getattr(parent, child_name), r=4))


model = Surgery()
