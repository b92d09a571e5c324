# Reduced from detectron2_rpn.py (FrozenBatchNorm2d.convert_frozen_batchnorm):
# classes reached through the module path `nn.modules.batchnorm` bound to a
# local first; shardlens silently takes the isinstance() as False (no
# unresolved entry; written inline it reports "'torch.nn.modules.batchnorm' is
# not modelled"), so BatchNorm2d is listed instead of Identity.
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=False)
        self.bn = nn.BatchNorm2d(8)
        bn_module = nn.modules.batchnorm
        if isinstance(self.bn, (bn_module.BatchNorm2d, bn_module.SyncBatchNorm)):
            self.bn = nn.Identity()


model = Net()
