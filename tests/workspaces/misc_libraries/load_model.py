# A user's loader: args from a dict (as read from a params.json) with a nested MoE section.
import torch

from pkg.model import Model, ModelArgs, relative_distances, safe_cat

args = ModelArgs.from_dict({"dim": 32, "n_layers": 2, "vocab_size": 100, "moe": {"num_experts": 3}})
assert args.moe.num_experts == 3 and args.moe.num_experts_per_tok == 1
model = Model(args)
assert relative_distances(4).shape == (4, 5) and safe_cat([None, torch.ones(2)]).shape == (2,)
# expected-total: 39936
