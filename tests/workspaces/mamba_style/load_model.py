# A user's loader: a small Mamba-style LM (tied head; mamba_ssm's selective scan and RMSNorm modelled in torch).
import torch

from minimamba.mixer import MiniMambaLM, causal_conv1d_fn

assert causal_conv1d_fn is None
model = MiniMambaLM(vocab_size=256, d_model=32, n_layer=2)
with torch.no_grad():
    assert model(torch.zeros(1, 5, dtype=torch.long)).shape == (1, 5, 256)
# expected-total: 25056
