# shardlens' model of the `torch_einops_utils` package (not the library itself): small tensor helpers.
import torch
import torch.nn.functional as F
from torch.utils._pytree import tree_map


def exists(v):
    return v is not None


def pad_at_dim(t, pad, dim=-1, value=0.0):
    """F.pad of `pad` = (before, after) applied to dimension `dim` only."""
    dims_from_right = (-dim - 1) if dim < 0 else (t.ndim - dim - 1)
    zeros = (0, 0) * dims_from_right
    return F.pad(t, (*zeros, *pad), value=value)


def masked_mean(t, mask=None, dim=None, keepdim=False, eps=1e-5):
    """Mean over `dim` of the entries where mask (shaped like t without its last dimension) is True."""
    if mask is None:
        if dim is None:
            return t.mean()
        return t.mean(dim=dim, keepdim=keepdim)
    mask = mask.unsqueeze(-1) if mask.ndim < t.ndim else mask
    total = (t * mask).sum(dim=dim, keepdim=keepdim)
    count = mask.sum(dim=dim, keepdim=keepdim).clamp(min=eps)
    return total / count


def safe_cat(tensors, dim=0):
    tensors = [t for t in tensors if exists(t)]
    if len(tensors) == 0:
        return None
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim=dim)


def tree_map_tensor(fn, tree):
    return tree_map(lambda t: fn(t) if torch.is_tensor(t) else t, tree)
