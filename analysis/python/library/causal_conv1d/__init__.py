# shardlens' model of the `causal_conv1d` package (not the library itself): the CUDA kernels are not installed, so
# importing them fails and model code takes its PyTorch path (nn.Conv1d), which is what shardlens traces.
raise ImportError("causal_conv1d's CUDA kernels are not available: use the PyTorch path")
