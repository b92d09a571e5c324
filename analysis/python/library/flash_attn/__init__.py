# shardlens' model of the `flash_attn` package (not the library itself): its CUDA kernels are not available, so the
# import fails as for a package that is not installed (ModuleNotFoundError, an ImportError) and model code takes its
# PyTorch attention path, which is what shardlens traces.
raise ModuleNotFoundError("flash_attn's CUDA kernels are not available: use the PyTorch attention path", name="flash_attn")
