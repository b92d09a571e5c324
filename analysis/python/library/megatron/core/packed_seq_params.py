# shardlens' model of megatron.core.packed_seq_params (not the library itself).
from dataclasses import dataclass
from typing import Any


@dataclass
class PackedSeqParams:
    qkv_format: str = None
    cu_seqlens_q: Any = None
    cu_seqlens_kv: Any = None
    max_seqlen_q: Any = None
    max_seqlen_kv: Any = None
