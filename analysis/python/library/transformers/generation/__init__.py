# shardlens' model of transformers.generation (not the library itself): the mixin that gives models .generate().
from .configuration_utils import GenerationConfig
from .utils import GenerationMixin
