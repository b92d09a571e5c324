# Reduced from lang_import_fallbacks.py: `try: from apex... import X except ImportError: X = nn.LayerNorm` must take the except branch (apex is not installed).
import torch.nn as nn

try:
    from apex.normalization import FusedLayerNorm as LayerNorm
except ImportError:
    LayerNorm = nn.LayerNorm


class Block(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.norm = LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)


model = Block()
