# shardlens' model of the `xformers` package (not the library itself): only xformers.ops' memory-efficient attention.
# Imported inside `try: ... except ImportError:` it is absent, so code with a fallback takes its PyTorch path.
from _shardlens_common.imports import absent_where_optional

absent_where_optional("xformers")
