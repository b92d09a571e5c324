# Reduced from sd_vae.py (ldm's instantiate_from_config): a class looked up by
# name in `globals()`; shardlens finds no model ("no nn.Module instance is
# assigned at module level").
import torch.nn as nn


class AutoencoderKL(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.quant_conv = nn.Conv2d(2 * embed_dim, 2 * embed_dim, 1)


def get_obj_from_str(string):
    module, cls = string.rsplit(".", 1)
    return globals()[cls]


model = get_obj_from_str("ldm.models.autoencoder.AutoencoderKL")(embed_dim=4)
