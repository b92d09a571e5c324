# shardlens' stand-in for litgpt.scripts.convert_hf_checkpoint (not the package itself): checkpoint conversion reads
# weights, which shardlens never does.


def qkv_reassemble(param, config):
    raise NotImplementedError("shardlens does not convert checkpoints")
