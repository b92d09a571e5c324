# shardlens' model of the `causal_conv1d` package (not the library itself): its CUDA kernels are not available, so
# the import fails as for a package that is not installed (ModuleNotFoundError, an ImportError) and model code takes
# its PyTorch path (nn.Conv1d), which is what shardlens traces.
raise ModuleNotFoundError("causal_conv1d's CUDA kernels are not available: use the PyTorch path", name="causal_conv1d")
