# shardlens' model of nanotron.parallel (not the library itself).
