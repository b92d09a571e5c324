# shardlens' model of transformers.integrations.deepspeed (not the library itself): DeepSpeed is not in use.
from _shardlens_common.answers import answer

is_deepspeed_available = answer(False)
is_deepspeed_zero3_enabled = answer(False)
deepspeed_config = answer(None)
