# shardlens' model of the `packaging` package (not the library itself): version parsing and comparison.
__version__ = "24.1"
