# shardlens' model of the `transformers` package (not the library itself): the names model code imports from the top level.
from pkgutil import extend_path; __path__ = extend_path(__path__, __name__)
__path__ = __path__[1:] + __path__[:1]  # real source files first, this folder last (shardlens resolves the same way)

__version__ = "4.56.0"

from .configuration_utils import PretrainedConfig, PreTrainedConfig
from .modeling_utils import PreTrainedModel
from .generation import GenerationConfig, GenerationMixin
from .activations import ACT2FN, get_activation
from .pytorch_utils import Conv1D
from .tokenization_utils_base import PreTrainedTokenizerBase, PreTrainedTokenizer, PreTrainedTokenizerFast
from .utils import TensorType, is_torch_available, logging
from .models.auto import *  # noqa: F401,F403  (AutoConfig, AutoModel*, CONFIG_MAPPING_NAMES)
from .models.auto.auto_factory import import_model_module


def _model_type_of(name):
    # "LlamaForCausalLM" -> "llama": the model type whose class prefix is the longest prefix of the name
    best = None
    best_len = 0
    for model_type, config_name in CONFIG_MAPPING_NAMES.items():
        prefix = config_name[: -len("Config")]
        if name.startswith(prefix) and len(prefix) > best_len:
            best = model_type
            best_len = len(prefix)
    return best


def __getattr__(name):
    # transformers.LlamaForCausalLM, transformers.LlamaConfig, ...: found in transformers.models.<type>
    model_type = _model_type_of(name)
    if model_type is None:
        raise AttributeError(f"module 'transformers' has no attribute '{name}'")
    kind = "configuration" if name.endswith("Config") else "modeling"
    module = import_model_module(model_type, kind)
    return getattr(module, name)
