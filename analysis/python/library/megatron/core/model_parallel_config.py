# shardlens' model of megatron.core.model_parallel_config (not the library itself): the parallelism half of a config.
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch


@dataclass
class ModelParallelConfig:
    tensor_model_parallel_size: int = 1
    pipeline_model_parallel_size: int = 1
    virtual_pipeline_model_parallel_size: Optional[int] = None
    sequence_parallel: bool = False
    context_parallel_size: int = 1
    expert_model_parallel_size: int = 1
    perform_initialization: bool = True
    use_cpu_initialization: bool = False
    fp16: bool = False
    bf16: bool = False
    params_dtype: torch.dtype = torch.float32
    timers: Any = None
    gradient_accumulation_fusion: bool = False
    async_tensor_model_parallel_allreduce: bool = False
    tp_comm_overlap: bool = False
    tp_comm_bulk_wgrad: bool = True
    tp_comm_bulk_dgrad: bool = True
    tp_comm_overlap_ag: bool = True
    tp_comm_overlap_rs: bool = True
    tp_comm_split_ag: bool = True
    tp_comm_split_rs: bool = True
    tp_comm_atomic_ag: bool = True
    tp_comm_atomic_rs: bool = True
    pipeline_dtype: torch.dtype = None
    grad_scale_func: Optional[Callable] = None
    enable_autocast: bool = False
    autocast_dtype: torch.dtype = None
    variable_seq_lengths: bool = False
    num_microbatches_with_partial_activation_checkpoints: Optional[int] = None
    overlap_p2p_comm: bool = False
    batch_p2p_comm: bool = True
    batch_p2p_sync: bool = True
    use_ring_exchange_p2p: bool = False
    deallocate_pipeline_outputs: bool = False
    no_sync_func: Optional[Callable] = None
    grad_sync_func: Optional[Callable] = None
    param_sync_func: Optional[Callable] = None
    pipeline_model_parallel_split_rank: Optional[int] = None
    cpu_offloading: bool = False
    cpu_offloading_num_layers: int = 0
    _cpu_offloading_context: Any = None
    cpu_offloading_activations: bool = True
    cpu_offloading_weights: bool = True
    barrier_with_L1_time: bool = True

    def __post_init__(self):
        if self.sequence_parallel and self.tensor_model_parallel_size <= 1:
            raise ValueError("Can not use sequence paralllelism without tensor parallelism")
        if self.pipeline_model_parallel_size > 1 and self.pipeline_dtype is None:
            raise ValueError("When using pipeline parallelism, pipeline_dtype must be specified")
        if self.autocast_dtype is None:
            self.autocast_dtype = self.params_dtype
