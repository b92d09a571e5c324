# shardlens' model of fairscale.nn (not the library itself).
