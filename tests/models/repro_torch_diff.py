# Reduced from torchvision_regnet.py (BlockParams.from_init_params): stage depths
# from `torch.diff(torch.tensor([...])).int().tolist()`; shardlens: "loop over a
# value that could not be evaluated was skipped: 'torch.diff' is not modelled".
import torch
import torch.nn as nn


class Trunk(nn.Module):
    def __init__(self, split_points=[0, 2, 5, 6]):
        super().__init__()
        stage_depths = torch.diff(torch.tensor(split_points)).int().tolist()
        self.stages = nn.ModuleList(
            [nn.Sequential(*[nn.Conv2d(32, 32, 3, padding=1) for _ in range(d)]) for d in stage_depths])


model = Trunk()
