"""A recording stand-in for torch_xla (tests only): put tests/emit/fake_xla first on sys.path.

It implements what shardlens' emitted code calls -- xr.use_spmd(), xm.xla_device(), xs.Mesh,
xs.mark_sharding -- checks each call the way a real SPMD run would reject it (mesh shape and axis
names, spec length, unknown or repeated axes, uneven splits, SPMD not enabled), and records the
calls in `torch_xla.RECORD` for the test to compare with the plan.
"""


class Recorder:
    def __init__(self):
        self.reset()

    def reset(self):
        self.spmd = False
        self.devices_requested = 0
        self.meshes = []  # (device_ids list, shape tuple, axis_names tuple)
        self.marks = []  # (tensor, mesh, spec)


RECORD = Recorder()


def device(index=None):
    from torch_xla.core import xla_model

    return xla_model.xla_device(index)
