# shardlens' stand-in for torchtitan.distributed (not the package itself): ParallelDims, the mesh sizes a run asks for.
from dataclasses import dataclass


@dataclass
class ParallelDims:
    dp_replicate: int = 1
    dp_shard: int = 1
    cp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    etp: int = 1
    world_size: int = 1

    @property
    def tp_enabled(self):
        return self.tp > 1

    @property
    def pp_enabled(self):
        return self.pp > 1

    @property
    def cp_enabled(self):
        return self.cp > 1

    @property
    def dp_shard_enabled(self):
        return self.dp_shard > 1

    @property
    def dp_replicate_enabled(self):
        return self.dp_replicate > 1

    @property
    def fsdp_enabled(self):
        return self.dp_shard_enabled or self.cp_enabled
