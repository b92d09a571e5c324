# shardlens' model of nanotron.parallel.tensor_parallel (not the library itself).
