# shardlens' model of megatron.core.dist_checkpointing (not the library itself): checkpoint descriptions only.
from .mapping import LocalNonpersitentObject, ShardedObject, ShardedTensor


def load(sharded_state_dict, checkpoint_dir, *args, **kwargs):
    raise NotImplementedError("shardlens does not read checkpoints")


def save(sharded_state_dict, checkpoint_dir, *args, **kwargs):
    raise NotImplementedError("shardlens does not write checkpoints")
