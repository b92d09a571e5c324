import os

import numpy as np
import torch

import torch_xla


class Mesh:
    def __init__(self, device_ids, mesh_shape, axis_names=None):
        if not isinstance(device_ids, np.ndarray):
            raise TypeError("Mesh: device_ids must be a numpy array, not %s" % type(device_ids).__name__)
        ids = [int(i) for i in device_ids.flatten()]
        shape = tuple(mesh_shape)
        if not all(isinstance(d, int) and d > 0 for d in shape):
            raise ValueError("Mesh: bad mesh_shape %r" % (mesh_shape,))
        if len(ids) != int(np.prod(shape)) or sorted(ids) != list(range(len(ids))):
            raise ValueError("Mesh: device_ids %r do not fill mesh_shape %r" % (ids, shape))
        if axis_names is not None:
            axis_names = tuple(axis_names)
            if len(axis_names) != len(shape) or len(set(axis_names)) != len(axis_names):
                raise ValueError("Mesh: axis_names %r do not match mesh_shape %r" % (axis_names, shape))
        self.device_ids = device_ids
        self.mesh_shape = shape
        self.axis_names = axis_names
        torch_xla.RECORD.meshes.append((ids, shape, axis_names))

    def size(self):
        return len(self.device_ids)

    def shape(self):
        return dict(zip(self.axis_names or range(len(self.mesh_shape)), self.mesh_shape))


def _axis_size(mesh, axis):
    if isinstance(axis, int):
        return mesh.mesh_shape[axis]
    if mesh.axis_names is None or axis not in mesh.axis_names:
        raise ValueError("mark_sharding: axis %r is not in the mesh %r" % (axis, mesh.axis_names))
    return mesh.mesh_shape[mesh.axis_names.index(axis)]


def mark_sharding(t, mesh, partition_spec):
    if not torch_xla.RECORD.spmd:
        raise RuntimeError("mark_sharding before xr.use_spmd()")
    if os.environ.get("CONVERT_SHLO_TO_SHARDY") != "1":
        raise RuntimeError("mark_sharding without CONVERT_SHLO_TO_SHARDY=1")
    if not isinstance(t, torch.Tensor):
        raise TypeError("mark_sharding: not a tensor: %s" % type(t).__name__)
    if not isinstance(mesh, Mesh):
        raise TypeError("mark_sharding: not a Mesh: %s" % type(mesh).__name__)
    if not isinstance(partition_spec, tuple) or len(partition_spec) != t.dim():
        raise ValueError("mark_sharding: spec %r for a %d-dim tensor" % (partition_spec, t.dim()))
    used = set()
    for dim, entry in enumerate(partition_spec):
        if entry is None:
            continue
        axes = entry if isinstance(entry, tuple) else (entry,)
        split = 1
        for axis in axes:
            if axis in used:
                raise ValueError("mark_sharding: axis %r used twice in %r" % (axis, partition_spec))
            used.add(axis)
            split *= _axis_size(mesh, axis)
        if t.shape[dim] % split:
            raise ValueError("mark_sharding: dim %d of %s does not split evenly in %d" % (dim, tuple(t.shape), split))
    torch_xla.RECORD.marks.append((t, mesh, partition_spec))
    return t
