# shardlens' model of transformers.models.auto.configuration_auto (not the library itself): model_type -> config class.
from ...configuration_utils import PretrainedConfig
from .auto_factory import import_model_module

# model_type -> config class name, in transformers.models.<module>.configuration_<module>
CONFIG_MAPPING_NAMES = {
    "albert": "AlbertConfig",
    "clip_text_model": "CLIPTextConfig",
    "clip_vision_model": "CLIPVisionConfig",
    "siglip_text_model": "SiglipTextConfig",
    "siglip_vision_model": "SiglipVisionConfig",
    "bart": "BartConfig",
    "bert": "BertConfig",
    "bloom": "BloomConfig",
    "clip": "CLIPConfig",
    "cohere": "CohereConfig",
    "deberta": "DebertaConfig",
    "deberta-v2": "DebertaV2Config",
    "deepseek_v2": "DeepseekV2Config",
    "deepseek_v3": "DeepseekV3Config",
    "distilbert": "DistilBertConfig",
    "electra": "ElectraConfig",
    "falcon": "FalconConfig",
    "gemma": "GemmaConfig",
    "gemma2": "Gemma2Config",
    "gemma3": "Gemma3Config",
    "gemma3_text": "Gemma3TextConfig",
    "glm": "GlmConfig",
    "glm4": "Glm4Config",
    "gpt2": "GPT2Config",
    "gpt_bigcode": "GPTBigCodeConfig",
    "gpt_neo": "GPTNeoConfig",
    "gpt_neox": "GPTNeoXConfig",
    "gptj": "GPTJConfig",
    "granite": "GraniteConfig",
    "llama": "LlamaConfig",
    "mamba": "MambaConfig",
    "mamba2": "Mamba2Config",
    "marian": "MarianConfig",
    "mbart": "MBartConfig",
    "mistral": "MistralConfig",
    "mixtral": "MixtralConfig",
    "modernbert": "ModernBertConfig",
    "mpt": "MptConfig",
    "mt5": "MT5Config",
    "olmo": "OlmoConfig",
    "olmo2": "Olmo2Config",
    "openai-gpt": "OpenAIGPTConfig",
    "opt": "OPTConfig",
    "pegasus": "PegasusConfig",
    "persimmon": "PersimmonConfig",
    "phi": "PhiConfig",
    "phi3": "Phi3Config",
    "qwen2": "Qwen2Config",
    "qwen2_moe": "Qwen2MoeConfig",
    "qwen3": "Qwen3Config",
    "qwen3_moe": "Qwen3MoeConfig",
    "roberta": "RobertaConfig",
    "siglip": "SiglipConfig",
    "smollm3": "SmolLM3Config",
    "stablelm": "StableLmConfig",
    "starcoder2": "Starcoder2Config",
    "t5": "T5Config",
    "umt5": "UMT5Config",
    "vit": "ViTConfig",
    "wav2vec2": "Wav2Vec2Config",
    "whisper": "WhisperConfig",
    "xlm-roberta": "XLMRobertaConfig",
}


def config_class_for(model_type):
    module = import_model_module(model_type, "configuration")
    name = CONFIG_MAPPING_NAMES.get(model_type)
    if name is not None:
        return getattr(module, name)
    # a model type this table does not list: the module's config class that declares it
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, PretrainedConfig) and value.model_type == model_type:
            return value
    raise ValueError(f"transformers.models: no configuration class with model_type '{model_type}'")


class _LazyConfigMapping:
    """CONFIG_MAPPING: model_type -> config class, its module imported when asked for (composite configs such as
    Llava's build their sub-configs through it)."""

    def __getitem__(self, model_type):
        try:
            return config_class_for(model_type)
        except (ImportError, ValueError):
            raise KeyError(model_type)

    def __contains__(self, model_type):
        try:
            self[model_type]
        except KeyError:
            return False
        return True

    def get(self, model_type, default=None):
        return self[model_type] if model_type in self else default

    def keys(self):
        return list(CONFIG_MAPPING_NAMES.keys())

    def register(self, key, value, exist_ok=False):
        CONFIG_MAPPING_NAMES[key] = value.__name__


CONFIG_MAPPING = _LazyConfigMapping()


class AutoConfig:
    def __init__(self):
        raise EnvironmentError("AutoConfig is designed to be instantiated using `AutoConfig.from_pretrained(...)`")

    @classmethod
    def for_model(cls, model_type, *args, **kwargs):
        return config_class_for(model_type)(*args, **kwargs)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, cache_dir=None, subfolder="", revision=None, **kwargs):
        for key in ("trust_remote_code", "force_download", "local_files_only", "token", "use_auth_token", "proxies",
                    "resume_download", "_from_auto", "code_revision"):
            kwargs.pop(key, None)
        config_dict = PretrainedConfig.get_config_dict(
            pretrained_model_name_or_path, cache_dir=cache_dir, subfolder=subfolder, revision=revision
        )
        model_type = config_dict.get("model_type")
        if model_type is None:
            raise ValueError(
                f"Unrecognized model in {pretrained_model_name_or_path}: its config.json has no `model_type` key"
            )
        result = config_class_for(model_type).from_dict(config_dict, **kwargs)
        config = result[0] if isinstance(result, tuple) else result
        config.name_or_path = pretrained_model_name_or_path
        return result

    @staticmethod
    def register(model_type, config, exist_ok=False):
        CONFIG_MAPPING_NAMES[model_type] = config.__name__
