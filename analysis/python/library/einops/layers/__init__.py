# shardlens' model of einops.layers (not the library itself): see einops.layers.torch.
