# shardlens' model of the `fairscale` package (not the library itself): its model-parallel layers.
__version__ = "0.4.13"
