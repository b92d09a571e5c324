# shardlens' model of the `megatron.core` package (not the library itself): Megatron-Core v0.5-era API on one process
# (every parallel world size is 1, layers keep their full logical shapes).
from pkgutil import extend_path; __path__ = extend_path(__path__, __name__)
__path__ = __path__[1:] + __path__[:1]  # real source files first, this folder last (shardlens resolves the same way)

from . import parallel_state, tensor_parallel, utils
from .inference_params import InferenceParams
from .model_parallel_config import ModelParallelConfig
from .packed_seq_params import PackedSeqParams

__version__ = "0.5.0"
