# Reduced from lang_import_fallbacks.py: `getattr(nn, "QuickGELU", None)` is None (torch.nn has no such name), so the local fallback class is defined.
import torch
import torch.nn as nn

QuickGELU = getattr(nn, "QuickGELU", None)  # torch.nn has no QuickGELU -> None
if QuickGELU is None:
    class QuickGELU(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = nn.Parameter(torch.ones(1))

model = nn.Sequential(nn.Linear(8, 8), QuickGELU())
