# shardlens' model of torchvision.transforms._presets (not the library itself): inference preprocessing presets,
# modules without parameters.
from torch import nn

from .functional import InterpolationMode


class ImageClassification(nn.Module):
    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        raise NotImplementedError("shardlens does not model image preprocessing")
