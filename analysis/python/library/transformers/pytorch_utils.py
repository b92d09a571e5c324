# shardlens' model of transformers.pytorch_utils (not the library itself): Conv1D and the pruning / chunking helpers.
import torch
from torch import nn

ALL_LAYERNORM_LAYERS = [nn.LayerNorm]


class Conv1D(nn.Module):
    """A linear layer with a transposed weight, (in_features, out_features), as in the original GPT."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.nx = nx
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def __repr__(self):
        return "Conv1D(nf={nf}, nx={nx})".format(**self.__dict__)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        x = x.view(size_out)
        return x


def apply_chunking_to_forward(forward_fn, chunk_size, chunk_dim, *input_tensors):
    if chunk_size > 0:
        num_chunks = input_tensors[0].shape[chunk_dim] // chunk_size
        input_tensors_chunks = [t.chunk(num_chunks, dim=chunk_dim) for t in input_tensors]
        output_chunks = [forward_fn(*chunk) for chunk in zip(*input_tensors_chunks)]
        return torch.cat(output_chunks, dim=chunk_dim)
    return forward_fn(*input_tensors)


def find_pruneable_heads_and_indices(heads, n_heads, head_size, already_pruned_heads):
    mask = torch.ones(n_heads, head_size)
    heads = set(heads) - already_pruned_heads
    for head in heads:
        head = head - sum(1 if h < head else 0 for h in already_pruned_heads)
        mask[head] = 0
    mask = mask.view(-1).contiguous().eq(1)
    index = torch.arange(len(mask))[mask].long()
    return heads, index


def prune_linear_layer(layer, index, dim=0):
    index = index.to(layer.weight.device)
    W = layer.weight.index_select(dim, index).detach().clone()
    if layer.bias is not None:
        b = layer.bias if dim == 1 else layer.bias[index]
        b = b.detach().clone()
    new_size = list(layer.weight.size())
    new_size[dim] = len(index)
    new_layer = nn.Linear(new_size[1], new_size[0], bias=layer.bias is not None).to(layer.weight.device)
    new_layer.weight.requires_grad = False
    new_layer.weight.copy_(W.contiguous())
    new_layer.weight.requires_grad = True
    if layer.bias is not None:
        new_layer.bias.requires_grad = False
        new_layer.bias.copy_(b.contiguous())
        new_layer.bias.requires_grad = True
    return new_layer


def prune_conv1d_layer(layer, index, dim=1):
    """prune_linear_layer for Conv1D, whose weight is [in, out]."""
    W = layer.weight.index_select(dim, index).detach().clone()
    b = layer.bias.detach().clone() if dim == 0 else layer.bias[index].detach().clone()
    new_size = list(layer.weight.size())
    new_size[dim] = len(index)
    new_layer = Conv1D(new_size[1], new_size[0])
    new_layer.weight.requires_grad = False
    new_layer.weight.copy_(W.contiguous())
    new_layer.weight.requires_grad = True
    new_layer.bias.requires_grad = False
    new_layer.bias.copy_(b.contiguous())
    new_layer.bias.requires_grad = True
    return new_layer


def meshgrid(*tensors, indexing=None):
    return torch.meshgrid(*tensors, indexing=indexing)


def isin_mps_friendly(elements, test_elements):
    return torch.isin(elements, test_elements)


def compile_compatible_method_lru_cache(*lru_args, **lru_kwargs):
    """An lru_cache that steps aside under torch.compile: caching does not change what a method returns."""

    def decorator(func):
        return func

    return decorator


def softmax_backward_data(parent, grad_output, output, dim, self):
    """Training only (DeBERTa's XSoftmax.backward): never reached by an inference forward."""
    raise NotImplementedError("softmax_backward_data is a backward pass")


def is_torch_greater_or_equal_than(version):
    return True


is_torch_greater_or_equal_than_2_0 = True
is_torch_greater_or_equal_than_1_13 = True
