# Reduced from lang_container_surgery.py: nn.Sequential slicing `features[2:-1]` returns a Sequential keeping the original keys.
import torch.nn as nn

features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 16, 3), nn.ReLU(), nn.MaxPool2d(2))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = features[:2]     # keys "0", "1"
        self.tail = features[2:-1]   # keeps the original keys "2", "3"


model = Net()
