# shardlens' model of megatron.core.model_parallel_config (not the library itself): the parallelism half of a config.
# Fields as a table by default value; their order differs from the library's (nobody passes 44 fields by position).
import torch
from _shardlens_common.tables import defaults_by_value, table_dataclass


def _check_parallelism(self):
    if self.sequence_parallel and self.tensor_model_parallel_size <= 1:
        raise ValueError("Can not use sequence paralllelism without tensor parallelism")
    if self.pipeline_model_parallel_size > 1 and self.pipeline_dtype is None:
        raise ValueError("When using pipeline parallelism, pipeline_dtype must be specified")
    if self.autocast_dtype is None:
        self.autocast_dtype = self.params_dtype


_DEFAULTS = defaults_by_value(
    [
        ("tensor_model_parallel_size pipeline_model_parallel_size context_parallel_size expert_model_parallel_size", 1),
        ("virtual_pipeline_model_parallel_size timers pipeline_dtype grad_scale_func autocast_dtype"
         " num_microbatches_with_partial_activation_checkpoints no_sync_func grad_sync_func param_sync_func"
         " pipeline_model_parallel_split_rank _cpu_offloading_context", None),
        ("perform_initialization tp_comm_bulk_wgrad tp_comm_bulk_dgrad tp_comm_overlap_ag tp_comm_overlap_rs"
         " tp_comm_split_ag tp_comm_split_rs tp_comm_atomic_ag tp_comm_atomic_rs batch_p2p_comm batch_p2p_sync"
         " cpu_offloading_activations cpu_offloading_weights barrier_with_L1_time", True),
        ("sequence_parallel use_cpu_initialization fp16 bf16 gradient_accumulation_fusion"
         " async_tensor_model_parallel_allreduce tp_comm_overlap enable_autocast variable_seq_lengths"
         " overlap_p2p_comm use_ring_exchange_p2p deallocate_pipeline_outputs cpu_offloading", False),
    ],
    params_dtype=torch.float32,
    cpu_offloading_num_layers=0,
)

ModelParallelConfig = table_dataclass("ModelParallelConfig", (), _DEFAULTS, __post_init__=_check_parallelism)
