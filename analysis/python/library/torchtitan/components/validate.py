# shardlens' stand-in for torchtitan.components.validate (not the package itself): training machinery, not modelled.


def build_validator(*args, **kwargs):
    raise NotImplementedError("shardlens does not model torchtitan's training loop")
