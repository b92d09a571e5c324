# shardlens-test: known-gap ground truth needs a config folder layout the torch runner does not resolve the same way
# A user's loader: a diffusers-style model from a pipeline folder's transformer/config.json (weights never read);
# @register_to_config records passed and defaulted arguments, from_config rebuilds the same model.
from mydit.model import MyDiT

model = MyDiT.from_pretrained("weights", subfolder="transformer")
assert model.config.num_layers == 3 and model.config.in_channels == 4 and model.config["patch_size"] == 2
assert model.num_layers == 3  # config values read as attributes, as ModelMixin allows

small = MyDiT(8, 2, num_layers=1)
assert small.config.sample_size == 8 and small.config.num_layers == 1 and small.config.out_channels is None
again = MyDiT.from_config(small.config)
assert sum(p.numel() for p in again.parameters()) == sum(p.numel() for p in small.parameters())
# expected-total: 127168
