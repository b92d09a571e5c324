import os

import torch_xla


def use_spmd(auto=False):
    torch_xla.RECORD.spmd = True


def is_spmd():
    return torch_xla.RECORD.spmd


def global_runtime_device_count():
    return int(os.environ.get("FAKE_XLA_DEVICES", "8"))
