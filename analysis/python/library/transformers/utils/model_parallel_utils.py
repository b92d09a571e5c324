# shardlens' model of transformers.utils.model_parallel_utils (not the library itself): the legacy parallelize() device maps.
from math import ceil


def assert_device_map(device_map, num_blocks):
    blocks = list(range(0, num_blocks))
    device_map_blocks = [item for sublist in list(device_map.values()) for item in sublist]
    missing = [i for i in blocks if i not in device_map_blocks]
    if missing:
        raise ValueError(f"Blocks {missing} are not assigned to a device in the device_map")


def get_device_map(n_layers, devices):
    layers = list(range(n_layers))
    n_blocks = int(ceil(n_layers / len(devices)))
    layers_list = [layers[i : i + n_blocks] for i in range(0, n_layers, n_blocks)]
    return dict(zip(devices, layers_list))
