# Reduced from lang_import_fallbacks.py: `except ImportError as e:` (with a name) around a failing optional import must still run the fallback branch.
import torch.nn as nn

try:
    from apex.normalization import FusedLayerNorm as LayerNorm
except ImportError as e:
    LayerNorm = nn.LayerNorm
    reason = str(e)


class Block(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.norm = LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)


model = Block()
