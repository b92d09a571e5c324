# shardlens' model of the `einx` package (not the library itself): the elementwise operations, whose inputs are
# named-axis patterns ("b h i, b h j -> b h i j") broadcast to the output's axes, as torch permute/reshape and the
# torch operation itself. (The bracket notation of einx's reductions and indexing is not modelled.)
import torch

from einops.einops import _parse_side


def _axis_names(pattern, ndim, ellipsis_total):
    """Elementary axis names of one side; '...' becomes the trailing-aligned names of the broadcast dimensions."""
    names = []
    for group in _parse_side(pattern):
        for name in group:
            if name == "...":
                count = ndim - (len(_parse_side(pattern)) - 1) if ndim is not None else ellipsis_total
                for i in range(ellipsis_total - count, ellipsis_total):
                    names.append("..." + str(i))
            else:
                names.append(name)
    return names


def _elementwise(op, pattern, *tensors):
    inputs, output = pattern.split("->")
    input_patterns = [p.strip() for p in inputs.split(",")]
    ellipsis_total = 0
    for p, t in zip(input_patterns, tensors):
        if "..." in p and isinstance(t, torch.Tensor):
            ellipsis_total = max(ellipsis_total, t.dim() - (len(_parse_side(p)) - 1))
    output_groups = []
    for group in _parse_side(output.strip()):
        names = []
        for name in group:
            if name == "...":
                for i in range(ellipsis_total):
                    names.append("..." + str(i))
            else:
                names.append(name)
        output_groups.append(names)
    output_axes = [name for group in output_groups for name in group]
    sizes = {}
    aligned = []
    for p, t in zip(input_patterns, tensors):
        if p == "" or not isinstance(t, torch.Tensor):
            aligned.append(t)
            continue
        names = _axis_names(p, t.dim(), ellipsis_total)
        for name, size in zip(names, t.shape):
            sizes[name] = max(sizes.get(name, 1), size)
        order = [names.index(name) for name in output_axes if name in names]
        t = t.permute(order)
        view = []
        position = 0
        for name in output_axes:
            if name in names:
                view.append(t.shape[position])
                position += 1
            else:
                view.append(1)
        aligned.append(t.reshape(view))
    result = op(*aligned)
    if any(len(group) != 1 for group in output_groups):
        result = result.expand([sizes.get(name, 1) for name in output_axes])
        shape = []
        for group in output_groups:
            length = 1
            for name in group:
                length = length * sizes.get(name, 1)
            shape.append(length)
        result = result.reshape(shape)
    return result


def add(pattern, *tensors):
    return _elementwise(lambda a, b: a + b, pattern, *tensors)


def subtract(pattern, *tensors):
    return _elementwise(lambda a, b: a - b, pattern, *tensors)


def multiply(pattern, *tensors):
    return _elementwise(lambda a, b: a * b, pattern, *tensors)


def divide(pattern, *tensors):
    return _elementwise(lambda a, b: a / b, pattern, *tensors)


def true_divide(pattern, *tensors):
    return divide(pattern, *tensors)


def maximum(pattern, *tensors):
    return _elementwise(lambda a, b: torch.maximum(torch.as_tensor(a), torch.as_tensor(b)), pattern, *tensors)


def minimum(pattern, *tensors):
    return _elementwise(lambda a, b: torch.minimum(torch.as_tensor(a), torch.as_tensor(b)), pattern, *tensors)


def less(pattern, *tensors):
    return _elementwise(lambda a, b: a < b, pattern, *tensors)


def less_equal(pattern, *tensors):
    return _elementwise(lambda a, b: a <= b, pattern, *tensors)


def greater(pattern, *tensors):
    return _elementwise(lambda a, b: a > b, pattern, *tensors)


def greater_equal(pattern, *tensors):
    return _elementwise(lambda a, b: a >= b, pattern, *tensors)


def equal(pattern, *tensors):
    return _elementwise(lambda a, b: a == b, pattern, *tensors)


def not_equal(pattern, *tensors):
    return _elementwise(lambda a, b: a != b, pattern, *tensors)


def logical_and(pattern, *tensors):
    return _elementwise(lambda a, b: a & b, pattern, *tensors)


def logical_or(pattern, *tensors):
    return _elementwise(lambda a, b: a | b, pattern, *tensors)


def where(pattern, *tensors):
    return _elementwise(lambda c, a, b: torch.where(c, a, b), pattern, *tensors)
