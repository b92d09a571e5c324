# shardlens' stand-in for torchtitan.datasets.hf_datasets (not the package itself): data loading is not modelled.


def build_hf_dataloader(*args, **kwargs):
    raise NotImplementedError("shardlens does not model torchtitan's data loading")
