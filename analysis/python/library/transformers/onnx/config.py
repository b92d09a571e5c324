# shardlens' model of transformers.onnx.config (not the library itself): export descriptions, no model structure.


class PatchingSpec:
    def __init__(self, o, name, custom_op, orig_op=None, op_wrapper=None):
        self.o = o
        self.name = name
        self.custom_op = custom_op
        self.orig_op = orig_op
        self.op_wrapper = op_wrapper


class OnnxConfig:
    default_fixed_batch = 2
    default_fixed_sequence = 8

    def __init__(self, config, task="default", patching_specs=None):
        self._config = config
        self.task = task
        self._patching_specs = [] if patching_specs is None else patching_specs

    @classmethod
    def from_model_config(cls, config, task="default"):
        return cls(config, task=task)


class OnnxConfigWithPast(OnnxConfig):
    def __init__(self, config, task="default", patching_specs=None, use_past=False):
        super().__init__(config, task=task, patching_specs=patching_specs)
        self.use_past = use_past


class OnnxSeq2SeqConfigWithPast(OnnxConfigWithPast):
    pass
