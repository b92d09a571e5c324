# shardlens' model of transformers.integrations.fsdp (not the library itself): no module is managed by FSDP.
from _shardlens_common.answers import answer

is_fsdp_managed_module = answer(False)
is_fsdp_enabled = answer(False)
