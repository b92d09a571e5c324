# shardlens' stand-in for torchtitan.distributed.tensor_parallel (not the package itself).


def maybe_enable_async_tp(job_config, tp_mesh):
    pass
