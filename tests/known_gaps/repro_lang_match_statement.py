# Reduced from lang_control_flow.py: structural pattern matching (`match`/`case` with literal, class-capture and mapping patterns).
import torch.nn as nn


def make(spec, cin):
    match spec:
        case "conv":
            return nn.Conv2d(cin, cin, 3)
        case ("conv", int(cout)):
            return nn.Conv2d(cin, cout, 3)
        case {"type": "linear", "dim": dim}:
            return nn.Linear(cin, dim)
        case _:
            return nn.Identity()


model = nn.ModuleList([make("conv", 8), make(("conv", 16), 8), make({"type": "linear", "dim": 4}, 8)])
