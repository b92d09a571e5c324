# shardlens' stand-in for mistral_inference.model (not the package itself): ModelBase, the abstract base of its models.
import torch.nn as nn


class ModelBase(nn.Module):
    """An ABC in the real package with abstract dtype/device/forward/args/from_folder."""

    def __init__(self):
        super().__init__()
