# Reduced from detectron2_rpn.py (`if module.affine:` on a BatchNorm2d): reading
# constructor attributes of built-in modules that shardlens does not model;
# "AttributeError: 'BatchNorm2d' object has no attribute 'affine'" and no model
# is found. Same for track_running_stats, Conv2d.stride/padding/dilation/
# padding_mode, LayerNorm.elementwise_affine, GroupNorm.affine,
# MultiheadAttention.head_dim, LSTM.hidden_size, Dropout.p, Module.training.
import torch.nn as nn


class Frozen(nn.Module):
    def __init__(self, bn=nn.BatchNorm2d(64), conv=nn.Conv2d(64, 64, 3, stride=2)):
        super().__init__()
        if bn.affine and bn.track_running_stats:
            self.weight = nn.Parameter(bn.weight.detach().clone())
        self.proj = nn.Linear(conv.stride[0] * 32, 64)


model = Frozen()
