# shardlens' model of megatron.core.tensor_parallel.random (not the library itself): RNG trackers and activation
# checkpointing, which change no shapes.
from contextlib import nullcontext

_MODEL_PARALLEL_RNG_TRACKER_NAME = "model-parallel-rng"
_DATA_PARALLEL_RNG_TRACKER_NAME = "data-parallel-rng"


class CudaRNGStatesTracker:
    def __init__(self):
        self.states_ = {}
        self.seeds_ = set()

    def reset(self):
        self.states_ = {}
        self.seeds_ = set()

    def get_states(self):
        return dict(self.states_)

    def set_states(self, states):
        self.states_ = states

    def add(self, name, seed):
        self.seeds_.add(seed)
        self.states_[name] = seed

    def fork(self, name=_MODEL_PARALLEL_RNG_TRACKER_NAME):
        return nullcontext()


_CUDA_RNG_STATE_TRACKER = CudaRNGStatesTracker()


def get_cuda_rng_tracker():
    return _CUDA_RNG_STATE_TRACKER


def get_data_parallel_rng_tracker_name():
    return _DATA_PARALLEL_RNG_TRACKER_NAME


def model_parallel_cuda_manual_seed(seed):
    pass


def checkpoint(function, distribute_saved_activations, *args):
    return function(*args)
