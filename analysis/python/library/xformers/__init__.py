# shardlens' model of the `xformers` package (not the library itself): memory-efficient attention as plain attention.
__version__ = "0.0.28"
