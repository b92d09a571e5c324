# shardlens' model of timm.layers.weight_init (not the library itself).
from torch import nn


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    return nn.init.trunc_normal_(tensor, mean=mean, std=std, a=a, b=b)


def trunc_normal_tf_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    return nn.init.trunc_normal_(tensor, mean=0.0, std=1.0, a=a, b=b).mul_(std).add_(mean)


def lecun_normal_(tensor):
    fan_in = tensor.shape[1] if tensor.dim() > 1 else tensor.shape[0]
    return nn.init.trunc_normal_(tensor, std=(1.0 / fan_in) ** 0.5 / 0.87962566103423978)
