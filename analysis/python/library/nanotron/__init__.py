# shardlens' model of the `nanotron` package (not the library itself): its tensor-parallel layers.
