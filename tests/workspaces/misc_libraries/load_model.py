# shardlens-test: known-gap packaging.version parsing and a dict-built nested dataclass are not followed yet
# A user's loader: args from a dict (as read from a params.json) with a nested MoE section.
import torch

from pkg.model import BlockDiagonalCausalMask, Model, ModelArgs, relative_distances, safe_cat

args = ModelArgs.from_dict({"dim": 32, "n_layers": 2, "vocab_size": 100, "moe": {"num_experts": 3}})
assert args.moe.num_experts == 3 and args.moe.num_experts_per_tok == 1
model = Model(args)
assert relative_distances(4).shape == (4, 5) and safe_cat([None, torch.ones(2)]).shape == (2,)
mask = BlockDiagonalCausalMask.from_seqlens([2, 4]).materialize((1, 1, 6, 6))
assert mask.shape == (1, 1, 6, 6) and mask[0, 0, 1, 0] == 0 and mask[0, 0, 2, 1] == float("-inf")
# expected-total: 39936
