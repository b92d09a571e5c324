# shardlens' stand-in for torchtitan.components.optimizer (not the package itself): training machinery, not modelled.


def build_optimizers(model_parts, optimizer_config, parallel_dims, ft_manager=None):
    raise NotImplementedError("shardlens does not model torchtitan's training loop")
