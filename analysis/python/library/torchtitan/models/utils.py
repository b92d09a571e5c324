# shardlens' stand-in for torchtitan.models.utils (not the package itself): the parameter and FLOP count a model's args report.
from torch import nn


def get_dense_model_nparams_and_flops(model_args, model, seq_len):
    nparams = sum(p.numel() for p in model.parameters())
    nparams_embedding = sum(sum(p.numel() for p in m.parameters()) for m in model.children() if isinstance(m, nn.Embedding))
    l, h, q, t = model_args.n_layers, model_args.n_heads, model_args.dim // model_args.n_heads, seq_len
    num_flops_per_token = 6 * (nparams - nparams_embedding) + 12 * l * h * q * t
    return nparams, num_flops_per_token
