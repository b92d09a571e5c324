# A user's loader: a DiT-style model built on timm layers and einops layers (EinMix has parameters,
# Rearrange has none).
import torch

from ditlib.dit import DiT, pooled_tokens

model = DiT(input_size=16, patch_size=2, hidden_size=64, depth=3, num_heads=4)
assert pooled_tokens(torch.zeros(2, 16, 8)).shape == (2, 2, 8)
# expected-total: 243472
