# shardlens' model of safetensors.torch (not the library itself): the tensor-storage helpers; loading is not modelled.


def storage_ptr(tensor):
    return tensor.data_ptr()


def storage_size(tensor):
    return tensor.numel() * tensor.element_size()


def load_file(filename, device="cpu"):
    raise NotImplementedError(f"shardlens does not read checkpoint files ({filename})")


def load(data):
    raise NotImplementedError("shardlens does not read checkpoint files")


def save_file(tensors, filename, metadata=None):
    raise NotImplementedError("shardlens does not write checkpoint files")


def save(tensors, metadata=None):
    raise NotImplementedError("shardlens does not write checkpoint files")


def safe_open(filename, framework="pt", device="cpu"):
    raise NotImplementedError(f"shardlens does not read checkpoint files ({filename})")
