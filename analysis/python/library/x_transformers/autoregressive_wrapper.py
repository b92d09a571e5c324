# shardlens' stand-in for x_transformers.autoregressive_wrapper (not the package itself): sampling is not modelled.
from torch import nn


class AutoregressiveWrapper(nn.Module):
    def __init__(self, net, *args, **kwargs):
        super().__init__()
        self.net = net
        self.max_seq_len = getattr(net, "max_seq_len", None)

    def forward(self, x, **kwargs):
        return self.net(x, **kwargs)

    def generate(self, *args, **kwargs):
        raise NotImplementedError("shardlens does not run generation")
