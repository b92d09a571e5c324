# shardlens' model of megatron.core.dist_checkpointing.mapping (not the library itself).

ShardedStateDict = dict
ReplicaId = tuple


class ShardedTensor:
    def __init__(self, key, data, *args, **kwargs):
        self.key = key
        self.data = data

    @classmethod
    def from_rank_offsets(cls, key, data, *rank_offsets, replica_id=0, prepend_axis_num=0, **kwargs):
        return cls(key, data)


class ShardedTensorFactory:
    def __init__(self, key, data, build_fn, merge_fn, replica_id=0):
        self.key = key
        self.data = data
        self.build_fn = build_fn
        self.merge_fn = merge_fn


class ShardedObject:
    def __init__(self, key, data, global_shape=None, global_offset=None, replica_id=0):
        self.key = key
        self.data = data


class LocalNonpersitentObject:
    def __init__(self, obj):
        self.obj = obj
