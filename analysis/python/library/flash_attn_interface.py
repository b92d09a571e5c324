# shardlens' model of `flash_attn_interface` (FlashAttention 3; not the library itself): the same attention functions
# as flash_attn's model. Imported inside `try: ... except ImportError:` it is absent, as flash_attn is.
from _shardlens_common.imports import absent_where_optional

absent_where_optional("flash_attn_interface")

from flash_attn import flash_attn_func, flash_attn_varlen_func  # noqa: E402
