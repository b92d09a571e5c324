# Reduced from detectron2_rpn.py (_broadcast_params):
# `isinstance(params[0], collections.abc.Sequence)`; shardlens: "'collections.abc'
# is not modelled by shardlens" (condition not evaluated, neither branch analysed).
import collections

import torch.nn as nn


class AnchorHead(nn.Module):
    def __init__(self, sizes=[[32, 64]], num_features=3):
        super().__init__()
        if not isinstance(sizes[0], collections.abc.Sequence):
            sizes = [sizes] * num_features
        else:
            sizes = list(sizes) * num_features
        self.convs = nn.ModuleList([nn.Conv2d(256, len(s), 1) for s in sizes])


model = AnchorHead()
