# shardlens' model of megatron.core.transformer.module (not the library itself): MegatronModule.
import torch

from ..dist_checkpointing.mapping import ShardedTensor


class MegatronModule(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def state_dict_for_save_checkpoint(self, prefix="", keep_vars=False):
        return self.state_dict(prefix=prefix, keep_vars=keep_vars)

    def sharded_state_dict(self, prefix="", sharded_offsets=()):
        return {prefix + name: ShardedTensor(prefix + name, tensor) for name, tensor in self.state_dict(keep_vars=True).items()}

    def set_is_first_microbatch(self):
        for module in self.modules():
            if hasattr(module, "is_first_microbatch"):
                module.is_first_microbatch = True


class Float16Module(MegatronModule):
    """Wraps a module and runs it in half precision."""

    def __init__(self, config, module):
        super().__init__(config)
        if config.fp16:
            self.add_module("module", module.half())
        elif config.bf16:
            self.add_module("module", module.bfloat16())
        else:
            raise Exception("Either config.fp16 or config.bf16 should be True.")

    def set_input_tensor(self, input):
        return self.module.set_input_tensor(input)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
