# shardlens' model of einops.packing (not the library itself): pack / unpack along the axis marked "*".
import torch


def _star_position(pattern):
    names = pattern.split()
    if names.count("*") != 1:
        raise ValueError(f"pattern '{pattern}' must have exactly one '*'")
    return names.index("*"), len(names)


def pack(tensors, pattern):
    """Each tensor's dimensions at the '*' are flattened into one, then all are concatenated along it.
    Returns (packed, packed_shapes), packed_shapes being each tensor's '*' dimensions."""
    position, count = _star_position(pattern)
    after = count - position - 1
    flattened = []
    packed_shapes = []
    for tensor in tensors:
        ndim = len(tensor.shape)
        shape = list(tensor.shape)
        star = shape[position : ndim - after]
        packed_shapes.append(star)
        flattened.append(tensor.reshape(shape[:position] + [-1] + shape[ndim - after :]))
    return torch.cat(flattened, dim=position), packed_shapes


def unpack(tensor, packed_shapes, pattern):
    position, count = _star_position(pattern)
    lengths = []
    for star in packed_shapes:
        length = 1
        for size in star:
            length = length * size
        lengths.append(length)
    pieces = torch.split(tensor, lengths, dim=position)
    shape = list(tensor.shape)
    out = []
    for piece, star in zip(pieces, packed_shapes):
        out.append(piece.reshape(shape[:position] + list(star) + shape[position + 1 :]))
    return out
