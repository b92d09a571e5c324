# shardlens' stand-in for mistral_inference.vision_encoder (not the package itself): placeholders; the Pixtral vision tower is model code this stand-in
# does not describe. Put mistral_inference's source on the search path to build vision models.
import torch.nn as nn


class VisionTransformer(nn.Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("shardlens has no model of mistral_inference's vision encoder")


class VisionLanguageAdapter(nn.Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("shardlens has no model of mistral_inference's vision encoder")


class PatchMerger(nn.Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("shardlens has no model of mistral_inference's vision encoder")
