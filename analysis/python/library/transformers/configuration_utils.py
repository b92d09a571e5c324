# shardlens' model of transformers.configuration_utils (not the library itself): PretrainedConfig.
import copy
import json
import os

from .utils.hub import cached_file


def set_from_keywords(config, kwargs, defaults):
    """config.<name> = kwargs.pop(name, default) for each (name, default), in order."""
    for name, default in defaults:
        setattr(config, name, kwargs.pop(name, default))


# PretrainedConfig's attributes, with their defaults, in the real class's order.
_OUTPUT_OPTIONS = (("return_dict", True), ("output_hidden_states", False), ("output_attentions", False),
                   ("torchscript", False))
_ARCHITECTURE_OPTIONS = (
    ("tie_word_embeddings", True), ("chunk_size_feed_forward", 0), ("is_encoder_decoder", False),
    ("is_decoder", False), ("cross_attention_hidden_size", None), ("add_cross_attention", False),
    ("tie_encoder_decoder", False), ("architectures", None), ("finetuning_task", None), ("id2label", None),
    ("label2id", None),
)
_TOKEN_OPTIONS = (
    ("tokenizer_class", None), ("prefix", None), ("bos_token_id", None), ("pad_token_id", None),
    ("eos_token_id", None), ("sep_token_id", None), ("decoder_start_token_id", None), ("task_specific_params", None),
    ("problem_type", None),
)
# Generation options that older configs still set and read (Bart's forced_bos_token_id), with the real defaults.
_GENERATION_OPTIONS = (
    ("max_length", 20), ("min_length", 0), ("do_sample", False), ("early_stopping", False), ("num_beams", 1),
    ("num_beam_groups", 1), ("diversity_penalty", 0.0), ("temperature", 1.0), ("top_k", 50), ("top_p", 1.0),
    ("typical_p", 1.0), ("repetition_penalty", 1.0), ("length_penalty", 1.0), ("no_repeat_ngram_size", 0),
    ("encoder_no_repeat_ngram_size", 0), ("bad_words_ids", None), ("num_return_sequences", 1), ("output_scores", False),
    ("return_dict_in_generate", False), ("forced_bos_token_id", None), ("forced_eos_token_id", None),
    ("remove_invalid_values", False), ("exponential_decay_length_penalty", None), ("suppress_tokens", None),
    ("begin_suppress_tokens", None),
)


class PretrainedConfig:
    model_type = ""
    base_config_key = ""
    sub_configs = {}
    has_no_defaults_at_init = False
    attribute_map = {}
    base_model_tp_plan = None
    base_model_pp_plan = None
    base_model_ep_plan = None
    _auto_class = None

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __init__(self, **kwargs):
        set_from_keywords(self, kwargs, _OUTPUT_OPTIONS)
        self.torch_dtype = kwargs.pop("torch_dtype", kwargs.pop("dtype", None))
        self.use_bfloat16 = kwargs.pop("use_bfloat16", False)
        self.pruned_heads = kwargs.pop("pruned_heads", {})
        set_from_keywords(self, kwargs, _ARCHITECTURE_OPTIONS)
        if self.id2label is not None:
            kwargs.pop("num_labels", None)
            self.id2label = {int(key): value for key, value in self.id2label.items()}
        else:
            self.num_labels = kwargs.pop("num_labels", 2)
        set_from_keywords(self, kwargs, _TOKEN_OPTIONS)
        set_from_keywords(self, kwargs, _GENERATION_OPTIONS)
        self._name_or_path = str(kwargs.pop("name_or_path", ""))
        self._commit_hash = kwargs.pop("_commit_hash", None)
        self._attn_implementation_internal = kwargs.pop("attn_implementation", None)
        self.transformers_version = kwargs.pop("transformers_version", None)
        # Newer configs (transformers v5) set `rope_parameters` before calling this: the legacy
        # rope_theta / rope_scaling / partial_rotary_factor keywords are folded into it, per layer
        # type where the config has several.
        if hasattr(self, "rope_parameters"):
            kwargs = self.convert_rope_params_to_dict(**kwargs)
        # every other keyword becomes an attribute, as in the real class
        for key, value in kwargs.items():
            setattr(self, key, value)

    default_theta = 10000.0

    def convert_rope_params_to_dict(self, ignore_keys_at_rope_validation=None, **kwargs):
        rope_scaling = kwargs.pop("rope_scaling", None)
        self.rope_parameters = rope_scaling or self.rope_parameters
        self.rope_parameters = self.rope_parameters if self.rope_parameters is not None else {}
        self.rope_parameters.setdefault("rope_theta", kwargs.pop("rope_theta", self.default_theta))
        if "partial_rotary_factor" in kwargs:
            self.rope_parameters.setdefault("partial_rotary_factor", kwargs["partial_rotary_factor"])
        self.standardize_rope_params()
        return kwargs

    def validate_rope(self, ignore_keys=None):
        """Checks the RoPE parameters and warns: no model structure depends on it."""
        return None

    def standardize_rope_params(self):
        rope_theta = getattr(self, "rope_theta", None)
        partial_rotary_factor = getattr(self, "partial_rotary_factor", None)
        rope_parameters = getattr(self, "rope_parameters", None) or {}
        layer_types = getattr(self, "layer_types", None)
        if not (rope_parameters or rope_theta):
            return
        if layer_types is None or rope_parameters == {} or not set(rope_parameters.keys()).issubset(layer_types):
            # one set of parameters for every layer
            rope_parameters.setdefault("rope_type", rope_parameters.get("type", "default"))
            rope_parameters.setdefault("rope_theta", rope_theta)
            if partial_rotary_factor is not None:
                rope_parameters["partial_rotary_factor"] = partial_rotary_factor
            if rope_parameters["rope_type"] in ["llama3", "yarn", "longrope"]:
                if hasattr(self, "original_max_position_embeddings"):
                    rope_parameters["original_max_position_embeddings"] = self.original_max_position_embeddings
                else:
                    rope_parameters.setdefault("original_max_position_embeddings", self.max_position_embeddings)
        else:
            # one set per layer type (Gemma 3: full and sliding attention)
            for layer_type in set(layer_types):
                params = rope_parameters.get(layer_type)
                if params is None:
                    continue
                params.setdefault("rope_type", params.get("type", "default"))
                params.setdefault("rope_theta", rope_theta)
                if partial_rotary_factor is not None:
                    params["partial_rotary_factor"] = partial_rotary_factor
        self.rope_parameters = rope_parameters

    @property
    def name_or_path(self):
        return self._name_or_path

    @name_or_path.setter
    def name_or_path(self, value):
        self._name_or_path = str(value)

    @property
    def use_return_dict(self):
        return self.return_dict and not self.torchscript

    @property
    def num_labels(self):
        return len(self.id2label)

    @num_labels.setter
    def num_labels(self, num_labels):
        if getattr(self, "id2label", None) is None or len(self.id2label) != num_labels:
            self.id2label = {i: f"LABEL_{i}" for i in range(num_labels)}
            self.label2id = {f"LABEL_{i}": i for i in range(num_labels)}

    @property
    def _attn_implementation(self):
        internal = self._attn_implementation_internal
        return "eager" if internal is None else internal

    @_attn_implementation.setter
    def _attn_implementation(self, value):
        self._attn_implementation_internal = value

    def get_text_config(self, decoder=None, encoder=None):
        for key in ("text_config", "decoder", "generator", "text_encoder"):
            sub = getattr(self, key, None)
            if isinstance(sub, PretrainedConfig):
                return sub
        return self

    # ---- construction from dicts and files

    @classmethod
    def from_dict(cls, config_dict, **kwargs):
        return_unused_kwargs = kwargs.pop("return_unused_kwargs", False)
        config_dict = dict(config_dict)
        config_dict.pop("model_type", None)
        attn_implementation = kwargs.pop("attn_implementation", None)
        config = cls(**config_dict)
        if attn_implementation is not None:
            config._attn_implementation_internal = attn_implementation
        unused = {}
        for key, value in kwargs.items():
            if hasattr(config, key):
                setattr(config, key, value)
            else:
                unused[key] = value
        if return_unused_kwargs:
            return config, unused
        return config

    @classmethod
    def get_config_dict(cls, pretrained_model_name_or_path, cache_dir=None, subfolder="", revision=None, **kwargs):
        """The dict of config.json: from a folder, a .json file, or the local Hugging Face cache (never the network)."""
        path = str(pretrained_model_name_or_path)
        if os.path.isfile(path):
            config_file = path
        else:
            config_file = cached_file(path, "config.json", cache_dir=cache_dir, subfolder=subfolder, revision=revision)
        with open(config_file) as f:
            return json.load(f)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, cache_dir=None, subfolder="", revision=None, **kwargs):
        for key in ("force_download", "local_files_only", "token", "use_auth_token", "trust_remote_code",
                    "proxies", "resume_download", "_from_auto", "_from_pipeline"):
            kwargs.pop(key, None)
        config_dict = cls.get_config_dict(pretrained_model_name_or_path, cache_dir=cache_dir, subfolder=subfolder,
                                          revision=revision)
        result = cls.from_dict(config_dict, **kwargs)
        config = result[0] if isinstance(result, tuple) else result
        config.name_or_path = pretrained_model_name_or_path
        return result

    @classmethod
    def from_json_file(cls, json_file):
        with open(json_file) as f:
            return cls(**json.load(f))

    # ---- export

    def to_dict(self):
        output = {}
        for key, value in self.__dict__.items():
            if key in ("_attn_implementation_internal", "_commit_hash", "_auto_class"):
                continue
            if isinstance(value, PretrainedConfig):
                value = value.to_dict()
            output[key] = copy.deepcopy(value)
        output["model_type"] = self.__class__.model_type
        return output

    def to_diff_dict(self):
        return self.to_dict()

    def to_json_string(self, use_diff=True):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def update(self, config_dict):
        for key, value in config_dict.items():
            setattr(self, key, value)

    def __eq__(self, other):
        return isinstance(other, PretrainedConfig) and self.__dict__ == other.__dict__

    def __repr__(self):
        return f"{self.__class__.__name__} {self.to_json_string()}"


# transformers >= 4.57 spells it PreTrainedConfig
PreTrainedConfig = PretrainedConfig
