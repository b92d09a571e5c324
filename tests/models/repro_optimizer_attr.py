# Reduced from biggan_discriminator.py: an optimizer stored on the module
# (`self.optim = optim.Adam(self.parameters(), ...)`, BigGAN-PyTorch style);
# shardlens: "attribute 'optim' ... could not be resolved (it may be a
# submodule): 'torch.optim.Adam' is not modelled by shardlens".
import torch.nn as nn
import torch.optim as optim


class Discriminator(nn.Module):
    def __init__(self, ch=64, lr=2e-4):
        super().__init__()
        self.conv = nn.Conv2d(3, ch, 3, padding=1)
        self.linear = nn.Linear(ch, 1)
        self.optim = optim.Adam(params=self.parameters(), lr=lr, betas=(0.0, 0.999), eps=1e-8)


model = Discriminator()
