# shardlens' model of einops.einops (not the library itself): rearrange / reduce / repeat as torch reshape, permute,
# reductions and expand, so a traced forward sees the tensor operations they stand for.
import torch


class EinopsError(ValueError):
    pass


def _parse_side(text):
    """"b (h w) ... c" -> [["b"], ["h", "w"], ["..."], ["c"]]; a numeric token is an anonymous axis of that size,
    "()" an empty group (a dimension of size 1)."""
    groups = []
    current = None
    name = ""
    for ch in text + " ":
        if ch == "(" or ch == ")" or ch == " ":
            if name:
                if current is None:
                    groups.append([name])
                else:
                    current.append(name)
                name = ""
            if ch == "(":
                if current is not None:
                    raise EinopsError(f"nested parentheses in '{text}'")
                current = []
            elif ch == ")":
                if current is None:
                    raise EinopsError(f"unbalanced parentheses in '{text}'")
                groups.append(current)
                current = None
        else:
            name += ch
    if current is not None:
        raise EinopsError(f"unbalanced parentheses in '{text}'")
    return groups


def _split_pattern(pattern):
    if "->" not in pattern:
        raise EinopsError(f"pattern '{pattern}' has no '->'")
    left, right = pattern.split("->")
    return _parse_side(left.strip()), _parse_side(right.strip())


def _is_number(name):
    return name.isdigit()


def _ellipsis_names(count):
    return ["..." + str(i) for i in range(count)]


def _expand_ellipsis(groups, count):
    out = []
    for group in groups:
        names = []
        for name in group:
            if name == "...":
                names.extend(_ellipsis_names(count))
            else:
                names.append(name)
        if group == ["..."]:
            for axis in _ellipsis_names(count):
                out.append([axis])
        else:
            out.append(names)
    return out


def _name_anonymous(groups, prefix, sizes):
    """Numeric axes become fresh names whose size is known."""
    out = []
    counter = 0
    for group in groups:
        names = []
        for name in group:
            if _is_number(name):
                fresh = prefix + str(counter)
                counter += 1
                sizes[fresh] = int(name)
                names.append(fresh)
            else:
                names.append(name)
        out.append(names)
    return out


def _prepare(tensor, pattern, axes_lengths):
    """(left groups, right groups, sizes of the left's elementary axes, sizes of all known axes)."""
    left, right = _split_pattern(pattern)
    ndim = len(tensor.shape)
    has_ellipsis = False
    for group in left:
        if "..." in group:
            has_ellipsis = True
    if has_ellipsis:
        ellipsis_count = ndim - (len(left) - 1)
        if ellipsis_count < 0:
            raise EinopsError(f"pattern '{pattern}' needs at least {len(left) - 1} dimensions, the tensor has {ndim}")
    else:
        ellipsis_count = 0
        if len(left) != ndim:
            raise EinopsError(f"pattern '{pattern}' has {len(left)} dimensions on the left, the tensor has {ndim}")
    left = _expand_ellipsis(left, ellipsis_count)
    right = _expand_ellipsis(right, ellipsis_count)
    sizes = {}
    for key, value in axes_lengths.items():
        sizes[key] = value
    left = _name_anonymous(left, "#left", sizes)
    right = _name_anonymous(right, "#right", sizes)
    for dim, group in enumerate(left):
        length = tensor.shape[dim]
        unknown = []
        known = 1
        for name in group:
            if name in sizes:
                known = known * sizes[name]
            else:
                unknown.append(name)
        if len(unknown) > 1:
            raise EinopsError(f"could not infer sizes for {unknown} in '{pattern}'")
        if len(unknown) == 1:
            sizes[unknown[0]] = length // known
    return left, right, sizes


def _flat(groups):
    names = []
    for group in groups:
        for name in group:
            names.append(name)
    return names


def _group_shape(groups, sizes):
    shape = []
    for group in groups:
        length = 1
        for name in group:
            length = length * sizes[name]
        shape.append(length)
    return shape


def _apply(tensor, pattern, reduction, axes_lengths):
    left, right, sizes = _prepare(tensor, pattern, axes_lengths)
    right_axes = _flat(right)
    # 1. split composite input dimensions into elementary axes (an anonymous size-1 axis the output drops goes)
    left_axes = [name for name in _flat(left) if name in right_axes or not name.startswith("#left") or sizes[name] != 1]
    tensor = tensor.reshape([sizes[name] for name in left_axes])
    # 2. reduce the axes the output drops
    reduced = [i for i, name in enumerate(left_axes) if name not in right_axes]
    if reduced:
        if reduction is None:
            raise EinopsError(f"axes {[left_axes[i] for i in reduced]} of '{pattern}' are not on the right")
        tensor = _reduce_axes(tensor, reduced, reduction)
        left_axes = [name for name in left_axes if name in right_axes]
    # 3. order the kept axes as on the right
    kept = [name for name in right_axes if name in left_axes]
    permutation = [left_axes.index(name) for name in kept]
    if permutation != list(range(len(permutation))):
        tensor = tensor.permute(permutation)
    # 4. new axes (repeat, or size-1 anonymous axes) are inserted and broadcast
    added = [name for name in right_axes if name not in left_axes]
    if added:
        view_shape = []
        expand_shape = []
        position = 0
        for name in right_axes:
            if name in left_axes:
                view_shape.append(tensor.shape[position])
                expand_shape.append(-1)
                position += 1
            else:
                if name not in sizes:
                    raise EinopsError(f"axis '{name}' of '{pattern}' needs its length")
                view_shape.append(1)
                expand_shape.append(sizes[name])
        tensor = tensor.reshape(view_shape)
        if any(size != 1 for size in expand_shape if size != -1):
            tensor = tensor.expand(expand_shape)
    # 5. merge the output's composite dimensions
    return tensor.reshape(_group_shape(right, sizes))


def _reduce_axes(tensor, dims, reduction):
    dims = tuple(dims)
    if callable(reduction):
        return reduction(tensor, dims)
    if reduction == "mean":
        return tensor.mean(dim=dims)
    if reduction == "sum":
        return tensor.sum(dim=dims)
    if reduction == "max":
        return torch.amax(tensor, dim=dims)
    if reduction == "min":
        return torch.amin(tensor, dim=dims)
    if reduction == "prod":
        for dim in reversed(dims):
            tensor = tensor.prod(dim=dim)
        return tensor
    if reduction == "any":
        return torch.any(tensor, dim=dims[0]) if len(dims) == 1 else tensor.bool().sum(dim=dims) > 0
    if reduction == "all":
        return torch.all(tensor, dim=dims[0]) if len(dims) == 1 else tensor.bool().sum(dim=dims) == tensor.numel()
    raise EinopsError(f"unknown reduction {reduction}")


def _as_tensor(tensor):
    if isinstance(tensor, (list, tuple)):
        return torch.stack(list(tensor))
    return tensor


def rearrange(tensor, pattern, **axes_lengths):
    return _apply(_as_tensor(tensor), pattern, None, axes_lengths)


def reduce(tensor, pattern, reduction, **axes_lengths):
    return _apply(_as_tensor(tensor), pattern, reduction, axes_lengths)


def repeat(tensor, pattern, **axes_lengths):
    return _apply(_as_tensor(tensor), pattern, None, axes_lengths)


def parse_shape(x, pattern):
    names = pattern.split()
    result = {}
    if "..." in names:
        before = names.index("...")
        after = len(names) - before - 1
        shape = list(x.shape)
        names = names[:before] + ["_"] * (len(shape) - before - after) + names[before + 1 :]
    for name, length in zip(names, x.shape):
        if name != "_":
            result[name] = length
    return result


def einsum(*tensors_and_pattern):
    """einops.einsum(a, b, "b h i d, b h j d -> b h i j"): multi-letter axis names, passed on to torch.einsum."""
    pattern = tensors_and_pattern[-1]
    tensors = tensors_and_pattern[:-1]
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    mapping = {}
    inputs, output = pattern.split("->")
    converted = []
    for side in inputs.split(",") + [output]:
        parts = []
        for name in side.split():
            if name == "...":
                parts.append("...")
                continue
            if name not in mapping:
                mapping[name] = letters[len(mapping)]
            parts.append(mapping[name])
        converted.append("".join(parts))
    equation = ",".join(converted[:-1]) + "->" + converted[-1]
    return torch.einsum(equation, *tensors)


def asnumpy(tensor):
    return tensor.detach().cpu().numpy()
