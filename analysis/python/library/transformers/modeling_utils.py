# shardlens' model of transformers.modeling_utils (not the library itself): PreTrainedModel and the attention registry.
import copy

import torch
from _shardlens_common.modules import ModelQueries, as_loaded, set_gradient_checkpointing
from torch import nn

from .configuration_utils import PretrainedConfig
from .generation import GenerationConfig, GenerationMixin
from .integrations.flash_attention import flash_attention_forward
from .integrations.sdpa_attention import sdpa_attention_forward
from .pytorch_utils import Conv1D  # noqa: F401  (old model files import it from here)
from .utils import logging

logger = logging.get_logger(__name__)


class AttentionInterface(dict):
    """attn_implementation name -> fn(module, query, key, value, attention_mask, **kwargs) -> (output, weights).
    "eager" is not in it: models call their own eager_attention_forward for that."""

    def register(self, key, value):
        self[key] = value

    def valid_keys(self):
        return list(self.keys())

    def get_interface(self, attn_implementation, default):
        return self.get(attn_implementation, default)


ALL_ATTENTION_FUNCTIONS = AttentionInterface(
    {
        "sdpa": sdpa_attention_forward,
        "flash_attention_2": flash_attention_forward,
        "flash_attention_3": flash_attention_forward,
        "flex_attention": sdpa_attention_forward,
        "paged_attention": sdpa_attention_forward,
        "sdpa_paged": sdpa_attention_forward,
    }
)


def _torch_dtype(dtype, config):
    if dtype == "auto":
        dtype = getattr(config, "torch_dtype", None)
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    return dtype


class ModuleUtilsMixin(ModelQueries):
    """The mask and dtype helpers older model files call from their forward (device and dtype: ModelQueries)."""

    def invert_attention_mask(self, encoder_attention_mask):
        if encoder_attention_mask.dim() == 3:
            extended = encoder_attention_mask[:, None, :, :]
        else:
            extended = encoder_attention_mask[:, None, None, :]
        extended = extended.to(dtype=self.dtype)
        return (1.0 - extended) * torch.finfo(self.dtype).min

    def get_extended_attention_mask(self, attention_mask, input_shape, device=None, dtype=None):
        if dtype is None:
            dtype = self.dtype
        if attention_mask.dim() == 3:
            extended = attention_mask[:, None, :, :]
        elif self.config.is_decoder:
            batch_size, seq_length = input_shape[0], input_shape[1]
            seq_ids = torch.arange(seq_length, device=attention_mask.device)
            causal = seq_ids[None, None, :].repeat(batch_size, seq_length, 1) <= seq_ids[None, :, None]
            causal = causal.to(attention_mask.dtype)
            extended = causal[:, None, :, :] * attention_mask[:, None, None, :]
        else:
            extended = attention_mask[:, None, None, :]
        extended = extended.to(dtype=dtype)
        return (1.0 - extended) * torch.finfo(dtype).min

    def get_head_mask(self, head_mask, num_hidden_layers, is_attention_chunked=False):
        if head_mask is None:
            return [None] * num_hidden_layers
        if head_mask.dim() == 1:
            head_mask = head_mask[None, None, :, None, None].expand(num_hidden_layers, -1, -1, -1, -1)
        elif head_mask.dim() == 2:
            head_mask = head_mask[:, None, :, None, None]
        return head_mask.to(dtype=self.dtype)

    def warn_if_padding_and_no_attention_mask(self, input_ids, attention_mask):
        pass


class PreTrainedModel(nn.Module, ModuleUtilsMixin):
    config_class = None
    base_model_prefix = ""
    main_input_name = "input_ids"
    model_tags = None
    _auto_class = None
    _no_split_modules = None
    _skip_keys_device_placement = None
    _keep_in_fp32_modules = None
    _keep_in_fp32_modules_strict = None
    _keys_to_ignore_on_load_missing = None
    _keys_to_ignore_on_load_unexpected = None
    _keys_to_ignore_on_save = None
    _tied_weights_keys = None
    is_parallelizable = False
    supports_gradient_checkpointing = False
    _is_stateful = False
    _supports_flash_attn = False
    _supports_sdpa = False
    _supports_flex_attn = False
    _can_compile_fullgraph = False
    _supports_attention_backend = False
    _can_record_outputs = None
    _tp_plan = None
    _pp_plan = None
    _input_embed_layer = "embed_tokens"

    def __init__(self, config, *inputs, **kwargs):
        super().__init__()
        if not isinstance(config, PretrainedConfig):
            raise TypeError(
                f"Parameter config in `{self.__class__.__name__}(config)` should be an instance of class "
                "`PretrainedConfig`. To create a model from a pretrained model use "
                f"`model = {self.__class__.__name__}.from_pretrained(PRETRAINED_MODEL_NAME)`"
            )
        self.config = config
        # the real check also verifies that the requested backend is installed
        if config._attn_implementation_internal is None:
            config._attn_implementation_internal = "sdpa" if self._supports_sdpa else "eager"
        self.name_or_path = config.name_or_path
        self.warnings_issued = {}
        self.generation_config = GenerationConfig.from_model_config(config) if self.can_generate() else None

    # ---- after construction

    def post_init(self):
        """Called at the end of every model's __init__. The real one also runs _init_weights on every module
        (values only); here only the structural part remains: tying weights."""
        self.init_weights()

    def init_weights(self):
        self.tie_weights()

    def _init_weights(self, module):
        pass

    def _initialize_weights(self, module):
        pass

    def tie_weights(self):
        if getattr(self.config.get_text_config(decoder=True), "tie_word_embeddings", True):
            output_embeddings = self.get_output_embeddings()
            if output_embeddings is not None:
                self._tie_or_clone_weights(output_embeddings, self.get_input_embeddings())
        if getattr(self.config, "is_encoder_decoder", False) and getattr(self.config, "tie_encoder_decoder", False):
            base = getattr(self, self.base_model_prefix, self)
            self._tie_encoder_decoder_weights(base.encoder, base.decoder)
        for module in self.modules():
            if hasattr(module, "_tie_weights"):
                module._tie_weights()

    def _tie_or_clone_weights(self, output_embeddings, input_embeddings):
        if self.config.torchscript:
            output_embeddings.weight = nn.Parameter(input_embeddings.weight.clone())
        else:
            output_embeddings.weight = input_embeddings.weight
        if hasattr(output_embeddings, "out_features") and hasattr(input_embeddings, "num_embeddings"):
            output_embeddings.out_features = input_embeddings.num_embeddings

    @staticmethod
    def _tie_encoder_decoder_weights(encoder, decoder):
        # the decoder's modules that have an encoder module of the same name share its weight and bias
        encoder_modules = dict(encoder.named_modules())
        for name, decoder_module in decoder.named_modules():
            encoder_module = encoder_modules.get(name)
            if encoder_module is None or name == "":
                continue
            if hasattr(decoder_module, "weight") and hasattr(encoder_module, "weight"):
                decoder_module.weight = encoder_module.weight
                if getattr(decoder_module, "bias", None) is not None and getattr(encoder_module, "bias", None) is not None:
                    decoder_module.bias = encoder_module.bias

    # ---- embeddings

    @property
    def base_model(self):
        return getattr(self, self.base_model_prefix, self)

    def get_input_embeddings(self):
        embedding = getattr(self, self._input_embed_layer, None)
        if embedding is not None:
            return embedding
        base_model = getattr(self, self.base_model_prefix, None)
        if base_model is not None and base_model is not self:
            return base_model.get_input_embeddings()
        raise NotImplementedError(
            f"`get_input_embeddings` not auto-handled for {self.__class__.__name__}; please override in the subclass."
        )

    def set_input_embeddings(self, value):
        base_model = getattr(self, self.base_model_prefix, self)
        if base_model is not self:
            base_model.set_input_embeddings(value)
        else:
            setattr(self, self._input_embed_layer, value)

    def get_output_embeddings(self):
        if not hasattr(self, "lm_head"):
            return None
        try:
            self.get_input_embeddings()
        except NotImplementedError:
            return None
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        if hasattr(self, "lm_head"):
            self.lm_head = new_embeddings

    def get_decoder(self):
        return getattr(self, "model", self)

    # ---- generation and training switches

    @classmethod
    def can_generate(cls):
        return issubclass(cls, GenerationMixin)

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        set_gradient_checkpointing(self, True)

    def gradient_checkpointing_disable(self):
        set_gradient_checkpointing(self, False)

    @property
    def loss_function(self):
        def causal_lm_loss(logits, labels, vocab_size, ignore_index=-100, shift_labels=None, **kwargs):
            logits = logits.float()
            if shift_labels is None:
                labels = nn.functional.pad(labels, (0, 1), value=ignore_index)
                shift_labels = labels[..., 1:].contiguous()
            logits = logits.view(-1, vocab_size)
            shift_labels = shift_labels.view(-1).to(logits.device)
            return nn.functional.cross_entropy(logits, shift_labels, ignore_index=ignore_index)

        return causal_lm_loss

    # ---- construction from a config or a checkpoint folder

    @classmethod
    def _from_config(cls, config, **kwargs):
        dtype = _torch_dtype(kwargs.pop("torch_dtype", kwargs.pop("dtype", None)), config)
        attn_implementation = kwargs.pop("attn_implementation", None)
        config = copy.deepcopy(config)
        if attn_implementation is not None:
            config._attn_implementation_internal = attn_implementation
        model = cls(config, **kwargs)
        if dtype is not None:
            model = model.to(dtype)
        return model

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, **kwargs):
        """Builds the model from the checkpoint's config.json (a local folder or the Hugging Face cache);
        the weights themselves are never read: only the structure matters here."""
        dtype = kwargs.pop("torch_dtype", None)
        dtype = kwargs.pop("dtype", dtype)
        attn_implementation = kwargs.pop("attn_implementation", None)
        hub_kwargs = {}
        for key in ("cache_dir", "subfolder", "revision"):
            if key in kwargs:
                hub_kwargs[key] = kwargs.pop(key)
        for key in ("device_map", "low_cpu_mem_usage", "trust_remote_code", "token", "use_auth_token",
                    "quantization_config", "use_safetensors", "local_files_only", "force_download", "state_dict",
                    "max_memory", "offload_folder", "offload_state_dict", "variant", "output_loading_info",
                    "ignore_mismatched_sizes", "tp_plan", "tp_size", "device_mesh", "key_mapping", "proxies",
                    "resume_download", "from_tf", "from_flax", "weights_only", "_from_auto", "_fast_init"):
            kwargs.pop(key, None)
        if not isinstance(config, PretrainedConfig):
            config_path = pretrained_model_name_or_path if config is None else config
            config_class = cls.config_class
            if config_class is None:
                from .models.auto.configuration_auto import AutoConfig

                config_class = AutoConfig
            config, model_kwargs = config_class.from_pretrained(
                config_path, return_unused_kwargs=True, **hub_kwargs, **kwargs
            )
        else:
            model_kwargs = kwargs
        if attn_implementation is not None:
            config._attn_implementation_internal = attn_implementation
        config.name_or_path = pretrained_model_name_or_path
        model = cls(config, *model_args, **model_kwargs)
        dtype = _torch_dtype(dtype, config)
        return as_loaded(model, dtype)

    def save_pretrained(self, save_directory, **kwargs):
        raise NotImplementedError("shardlens' model of transformers does not save checkpoints")


def unwrap_model(model, recursive=False):
    if hasattr(model, "module"):
        return unwrap_model(model.module)
    return model
