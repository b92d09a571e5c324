# Reduced from lang_eval_yolo.py: YOLOv5 parse_model: `eval(m)` of module names (incl. "nn.Conv2d") and `eval(a)` reading the caller's locals.
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, bias=False)
        self.bn = nn.BatchNorm2d(c2)


def parse(rows, nc):
    layers = []
    for m, args in rows:
        m = eval(m) if isinstance(m, str) else m
        for j, a in enumerate(args):
            args[j] = eval(a) if isinstance(a, str) else a  # "nc" is parse()'s local
        layers.append(m(*args))
    return nn.Sequential(*layers)


model = parse([["Conv", [3, 16, 3]], ["nn.Conv2d", [16, "nc", 1]]], nc=20)
