# shardlens' stand-in for torchtitan.components.lr_scheduler (not the package itself): training machinery, not modelled.


def build_lr_schedulers(optimizers, lr_scheduler_config, training_steps):
    raise NotImplementedError("shardlens does not model torchtitan's training loop")
