# shardlens' stand-in for torchtitan.distributed.pipeline_parallel (not the package itself): pipeline splitting is not modelled.


def pipeline_llm(*args, **kwargs):
    raise NotImplementedError("shardlens does not model torchtitan's pipeline splitting")
