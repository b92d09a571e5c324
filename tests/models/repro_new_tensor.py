# Found while reducing the swin/whisper failures: `x.new_tensor(data)` takes its
# shape from `data`, but shardlens gives the buffer x's shape ([6, 4] instead of
# [2]) with no unresolved entry.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        x = torch.zeros(6, 4)
        self.register_buffer("b", x.new_tensor([1.0, 2.0]))


model = Net()
