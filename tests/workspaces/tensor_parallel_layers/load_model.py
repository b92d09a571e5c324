# A user's loader: a fairscale LLaMA-1-style model (the size asked of initialize_model_parallel is recorded, layers
# keep full logical shapes), plus a TGI-style block and a nanotron-style MLP inside it.
import fairscale.nn.model_parallel.initialize as fs_init
from torch import nn

from tplm.fairscale_llama import Transformer
from tplm.nanotron_style import NanoMLP
from tplm.tgi_style import ShapeWeights, TGIBlock

fs_init.initialize_model_parallel(4)
shapes = {"blk.embed.weight": (100, 16), "blk.q.weight": (16, 16), "blk.k.weight": (16, 16), "blk.v.weight": (16, 16),
          "blk.q.bias": (16,), "blk.k.bias": (16,), "blk.v.bias": (16,), "blk.o.weight": (16, 16)}


class Combined(nn.Module):
    def __init__(self):
        super().__init__()
        self.llama = Transformer(vocab_size=300, dim=32, n_layers=2, n_heads=4)
        self.tgi = TGIBlock("blk", config=None, weights=ShapeWeights(shapes))
        self.nano = NanoMLP(vocab=50, dim=8, hidden=24)


model = Combined()
assert model.llama.output.shardlens_layout == "column" and model.tgi.o.shardlens_layout == "row"
assert tuple(model.tgi.qkv.linear.weight.shape) == (48, 16)
# expected-total: 55752
