# The model file of the language-server benchmark (bench/lsp/lsp_bench.js): one ~2,500-line
# modeling file in the style research codebases keep whole — a config dataclass with presets,
# rotary embeddings with several scaling rules, grouped-query / cross / fused-QKV attention,
# gated and plain MLPs, a top-k routed mixture-of-experts layer with shared experts, several block
# types, an encoder and a decoder, generation and loss helpers, docstrings and comments.
# `shardlens inspect` and torch 1.13 (tests/tools/check_inspect.py) build the same module tree.
# Importing it builds the 4.7B-parameter model at module level (as the test models do): the
# ground truth builds it on the meta device; do not `python3` this file on a small machine.
# The benchmark edits the lines it names in EDIT_SITES (lsp_bench.js): keep them when editing.
"""Seq2seq transformer with sparse mixture-of-experts decoder layers.

This module implements an encoder-decoder language model in the spirit of T5 / Switch
Transformer, modernised with the components decoder-only models made standard:

* RMSNorm everywhere (optionally LayerNorm for the encoder), pre-norm residual blocks;
* rotary position embeddings (default, linear, dynamic-NTK and YaRN scaling) on self-attention,
  relative position buckets as an alternative for the encoder;
* grouped-query attention (GQA) with an optional sliding window and QK-norm;
* SwiGLU / GeGLU feed-forward networks;
* top-k routed mixture-of-experts layers with shared experts in every second decoder layer;
* tied or untied input / output embeddings.

Everything lives in one file on purpose: the training and serving code import
``Seq2SeqMoEForConditionalGeneration`` and ``Seq2SeqMoEConfig`` and nothing else.

Shapes in comments use ``B`` for batch, ``S`` for source length, ``T`` for target length,
``H`` for query heads, ``K`` for key/value heads, ``D`` for the head dimension and ``E`` for
experts.
"""

import copy
import enum
import math
import warnings
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F


__all__ = [
    "Seq2SeqMoEConfig",
    "Seq2SeqMoEModel",
    "Seq2SeqMoEForConditionalGeneration",
    "Seq2SeqMoEEncoderForSequenceClassification",
    "PRESETS",
]

# Version of the checkpoint layout. Bumped when parameter names change so that the loader can
# remap old checkpoints (see ``_remap_legacy_state_dict``).
CHECKPOINT_FORMAT_VERSION = 3

# Initialisation constants shared by all modules.
DEFAULT_INIT_STD = 0.02
EMBEDDING_INIT_STD = 1.0
ROUTER_INIT_STD = 0.01

# The value used to mask attention logits. Large but finite so that bf16 does not overflow when
# a whole row is masked (padding-only rows in a batch).
MASK_VALUE = -1e4

_HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


# ---------------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------------


class NormKind(str, enum.Enum):
    """Which normalisation a block uses."""

    RMS = "rms"
    LAYER = "layer"
    SCALE = "scale"


class PositionKind(str, enum.Enum):
    """How self-attention learns about positions."""

    ROTARY = "rotary"
    RELATIVE = "relative"
    LEARNED = "learned"
    SINUSOIDAL = "sinusoidal"


class RopeScaling(str, enum.Enum):
    """Rules that stretch rotary frequencies beyond the training context."""

    NONE = "none"
    LINEAR = "linear"
    DYNAMIC = "dynamic"
    YARN = "yarn"


@dataclass
class MoEConfig:
    """Mixture-of-experts settings of the decoder.

    ``every`` selects which decoder layers are sparse: layer ``i`` is an MoE layer when
    ``i % every == every - 1`` and ``i >= first_dense_layers``.
    """

    num_experts: int = 8
    top_k: int = 2
    expert_ffn_dim: int = 4096
    num_shared_experts: int = 1
    shared_ffn_dim: int = 4096
    every: int = 2
    first_dense_layers: int = 2
    capacity_factor: float = 1.25
    router_jitter: float = 0.0
    router_z_loss_coef: float = 1e-3
    aux_loss_coef: float = 1e-2
    normalize_top_k: bool = True
    router_bias: bool = False

    def is_sparse(self, layer_idx: int) -> bool:
        if layer_idx < self.first_dense_layers:
            return False
        return layer_idx % self.every == self.every - 1


@dataclass
class Seq2SeqMoEConfig:
    """All hyper-parameters of the model.

    The defaults describe the 4.7B-parameter "base" checkpoint. ``PRESETS`` at the end of
    the file lists the other published sizes.
    """

    # vocabulary and embeddings
    vocab_size: int = 32128
    pad_token_id: int = 0
    bos_token_id: int = 1
    eos_token_id: int = 2
    decoder_start_token_id: int = 0
    tie_word_embeddings: bool = True
    scale_embeddings: bool = True

    # widths
    d_model: int = 2048
    d_ff: int = 5632
    num_heads: int = 32
    num_kv_heads: int = 8
    head_dim: int = 64
    cross_num_kv_heads: int = 32

    # depths
    num_encoder_layers: int = 24
    num_decoder_layers: int = 24

    # attention
    attention_bias: bool = False
    attention_dropout: float = 0.0
    qk_norm: bool = True
    sliding_window: Optional[int] = 4096
    global_every: int = 4
    softcap: Optional[float] = None

    # positions
    position_kind: str = "rotary"
    encoder_position_kind: str = "relative"
    max_position_embeddings: int = 8192
    rope_theta: float = 500000.0
    rope_scaling: str = "yarn"
    rope_factor: float = 4.0
    rope_original_max_position: int = 2048
    relative_num_buckets: int = 32
    relative_max_distance: int = 128

    # feed-forward
    hidden_act: str = "silu"
    gated_mlp: bool = True
    mlp_bias: bool = False

    # normalisation and residuals
    norm_kind: str = "rms"
    encoder_norm_kind: str = "rms"
    norm_eps: float = 1e-6
    residual_dropout: float = 0.0
    parallel_residual: bool = False
    decoder_block_type: str = "pre_norm"

    # mixture of experts
    moe: MoEConfig = field(default_factory=MoEConfig)

    # training-only
    initializer_range: float = DEFAULT_INIT_STD
    gradient_checkpointing: bool = False
    z_loss: float = 1e-4
    label_smoothing: float = 0.0

    def __post_init__(self):
        if self.d_model % self.num_heads != 0 and self.head_dim * self.num_heads != self.d_model:
            warnings.warn(
                f"d_model={self.d_model} is not num_heads * head_dim; the output projection "
                f"maps {self.num_heads * self.head_dim} -> {self.d_model}"
            )
        if self.num_heads % self.num_kv_heads != 0:
            raise ValueError(
                f"num_heads ({self.num_heads}) must be a multiple of num_kv_heads ({self.num_kv_heads})"
            )
        if self.num_heads % self.cross_num_kv_heads != 0:
            raise ValueError("cross_num_kv_heads must divide num_heads")
        if self.moe.top_k > self.moe.num_experts:
            raise ValueError("top_k cannot exceed the number of experts")
        if self.decoder_block_type not in ("pre_norm", "sandwich", "parallel"):
            raise ValueError(f"unknown decoder block type {self.decoder_block_type!r}")
        if self.rope_scaling not in ("none", "linear", "dynamic", "yarn"):
            raise ValueError(f"unknown rope scaling {self.rope_scaling!r}")

    # Convenience views used by the modules -------------------------------------------------

    @property
    def num_kv_groups(self) -> int:
        return self.num_heads // self.num_kv_heads

    @property
    def inner_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    def layer_is_global(self, layer_idx: int) -> bool:
        """Every ``global_every``-th layer attends to the whole context."""
        if self.sliding_window is None:
            return True
        return (layer_idx + 1) % self.global_every == 0

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Dict[str, Any]) -> "Seq2SeqMoEConfig":
        values = dict(values)
        moe = values.pop("moe", None)
        config = cls(**values)
        if moe is not None:
            config.moe = MoEConfig(**moe)
        return config

    def replace(self, **changes) -> "Seq2SeqMoEConfig":
        config = copy.deepcopy(self)
        for key, value in changes.items():
            if not hasattr(config, key):
                raise AttributeError(f"Seq2SeqMoEConfig has no field {key!r}")
            setattr(config, key, value)
        return config


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


def find_multiple(n: int, k: int) -> int:
    """The smallest multiple of ``k`` that is at least ``n``."""
    if n % k == 0:
        return n
    return n + k - (n % k)


def swiglu_hidden_dim(dim: int, multiple_of: int = 256, ffn_dim_multiplier: Optional[float] = None) -> int:
    """Hidden size of a SwiGLU MLP with the parameter count of a 4x GELU MLP (Llama rule)."""
    hidden_dim = 4 * dim
    hidden_dim = int(2 * hidden_dim / 3)
    if ffn_dim_multiplier is not None:
        hidden_dim = int(ffn_dim_multiplier * hidden_dim)
    return find_multiple(hidden_dim, multiple_of)


def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameters, counting tied tensors once."""
    seen = set()
    total = 0
    for p in module.parameters():
        if trainable_only and not p.requires_grad:
            continue
        if id(p) in seen:
            continue
        seen.add(id(p))
        total += p.numel()
    return total


def human_count(n: int) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f}{unit}"
    return str(n)


# Activations -----------------------------------------------------------------------------------


class GELUTanh(nn.Module):
    """GELU with the tanh approximation (the "gelu_new" of GPT-2)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


class QuickGELU(nn.Module):
    """x * sigmoid(1.702 x), the CLIP approximation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)


class SquaredReLU(nn.Module):
    """relu(x)^2 from Primer."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.square(F.relu(x))


ACT2CLS = {
    "gelu": nn.GELU,
    "gelu_tanh": GELUTanh,
    "quick_gelu": QuickGELU,
    "relu": nn.ReLU,
    "relu2": SquaredReLU,
    "silu": nn.SiLU,
    "swish": nn.SiLU,
    "tanh": nn.Tanh,
}


def get_activation(name: str) -> nn.Module:
    """An activation module by its config name."""
    if name not in ACT2CLS:
        raise KeyError(f"unknown activation {name!r}; choose one of {sorted(ACT2CLS)}")
    return ACT2CLS[name]()


# Initialisation --------------------------------------------------------------------------------


def trunc_normal_init_(tensor: torch.Tensor, std: float) -> torch.Tensor:
    """Truncated normal at +-3 std, the init of T5X / MaxText."""
    return nn.init.trunc_normal_(tensor, mean=0.0, std=std, a=-3 * std, b=3 * std)


def scaled_init_std(std: float, num_layers: int) -> float:
    """GPT-2 scaling of the residual output projections: std / sqrt(2 * layers)."""
    return std / math.sqrt(2.0 * num_layers)


# Masks -----------------------------------------------------------------------------------------


def make_causal_mask(
    target_length: int,
    dtype: torch.dtype,
    device: Optional[torch.device] = None,
    past_length: int = 0,
    sliding_window: Optional[int] = None,
) -> torch.Tensor:
    """Additive causal mask of shape [1, 1, T, past + T].

    With ``sliding_window`` each query also stops seeing keys more than ``sliding_window``
    positions behind it (Mistral-style local attention).
    """
    total = past_length + target_length
    query_pos = torch.arange(past_length, total, device=device)[:, None]
    key_pos = torch.arange(total, device=device)[None, :]
    allowed = key_pos <= query_pos
    if sliding_window is not None:
        allowed = allowed & (query_pos - key_pos < sliding_window)
    mask = torch.zeros(target_length, total, dtype=dtype, device=device)
    mask = mask.masked_fill(~allowed, MASK_VALUE)
    return mask[None, None, :, :]


def expand_padding_mask(mask: torch.Tensor, dtype: torch.dtype, target_length: Optional[int] = None) -> torch.Tensor:
    """[B, S] 1/0 padding mask -> additive [B, 1, T, S] mask."""
    batch_size, source_length = mask.shape
    target_length = target_length if target_length is not None else source_length
    expanded = mask[:, None, None, :].expand(batch_size, 1, target_length, source_length).to(dtype)
    inverted = 1.0 - expanded
    return inverted.masked_fill(inverted.to(torch.bool), MASK_VALUE)


def combine_masks(*masks: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """Sum of the additive masks that are not None (None when all are)."""
    result = None
    for mask in masks:
        if mask is None:
            continue
        result = mask if result is None else result + mask
    if result is not None:
        result = result.clamp(min=MASK_VALUE)
    return result


def shift_tokens_right(input_ids: torch.Tensor, pad_token_id: int, decoder_start_token_id: int) -> torch.Tensor:
    """Teacher forcing: decoder inputs are the labels shifted one step to the right."""
    shifted = input_ids.new_zeros(input_ids.shape)
    shifted[:, 1:] = input_ids[:, :-1].clone()
    shifted[:, 0] = decoder_start_token_id
    # -100 marks ignored label positions; the decoder must see padding there
    shifted.masked_fill_(shifted == -100, pad_token_id)
    return shifted


# Rotary helpers --------------------------------------------------------------------------------


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """Rotates half the hidden dims of the input: [x1, x2] -> [-x2, x1]."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, unsqueeze_dim: int = 1
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Applies rotary position embeddings to query and key tensors.

    ``cos`` and ``sin`` are [B, T, D]; ``unsqueeze_dim`` is the heads dimension of ``q`` and ``k``
    ([B, H, T, D] layout by default).
    """
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """[B, K, T, D] -> [B, K * n_rep, T, D], the GQA expansion of keys and values."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def _default_inv_freq(dim: int, base: float) -> torch.Tensor:
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def _linear_inv_freq(dim: int, base: float, factor: float) -> torch.Tensor:
    # position interpolation: positions are divided by the factor, i.e. frequencies are
    return _default_inv_freq(dim, base) / factor


def _yarn_find_correction_dim(num_rotations: float, dim: int, base: float, max_position: int) -> float:
    return (dim * math.log(max_position / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn_find_correction_range(low_rot: float, high_rot: float, dim: int, base: float, max_position: int):
    low = math.floor(_yarn_find_correction_dim(low_rot, dim, base, max_position))
    high = math.ceil(_yarn_find_correction_dim(high_rot, dim, base, max_position))
    return max(low, 0), min(high, dim - 1)


def _yarn_linear_ramp(low: float, high: float, dim: int) -> torch.Tensor:
    if low == high:
        high += 0.001
    ramp = (torch.arange(dim, dtype=torch.float32) - low) / (high - low)
    return torch.clamp(ramp, 0, 1)


def _yarn_inv_freq(dim: int, base: float, factor: float, original_max_position: int,
                   beta_fast: float = 32.0, beta_slow: float = 1.0) -> torch.Tensor:
    """YaRN: interpolate low frequencies, extrapolate high ones, ramp in between."""
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = _yarn_find_correction_range(beta_fast, beta_slow, dim, base, original_max_position)
    extrapolation_factor = 1 - _yarn_linear_ramp(low, high, dim // 2)
    return inv_freq_interpolation * (1 - extrapolation_factor) + inv_freq_extrapolation * extrapolation_factor


def _yarn_attention_factor(factor: float) -> float:
    if factor <= 1:
        return 1.0
    return 0.1 * math.log(factor) + 1.0


def sinusoidal_table(num_positions: int, dim: int) -> torch.Tensor:
    """The fixed sin/cos position table of "Attention Is All You Need"."""
    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    div_term = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(num_positions, dim)
    table[:, 0::2] = torch.sin(position * div_term)
    table[:, 1::2] = torch.cos(position * div_term)
    return table


def relative_position_bucket(relative_position: torch.Tensor, bidirectional: bool = True,
                             num_buckets: int = 32, max_distance: int = 128) -> torch.Tensor:
    """T5's log-spaced relative position buckets.

    Half of the buckets are exact small distances, the other half grow logarithmically up to
    ``max_distance``; in bidirectional mode the sign takes one bit.
    """
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    """Root-mean-square layer norm (no mean subtraction, no bias).

    Computed in float32 and cast back, like T5LayerNorm / LlamaRMSNorm. ``zero_centered`` stores
    ``weight - 1`` (Gemma), which keeps weight decay from pulling the scale towards zero.
    """

    def __init__(self, dim: int, eps: float = 1e-6, zero_centered: bool = False):
        super().__init__()
        self.eps = eps
        self.zero_centered = zero_centered
        if zero_centered:
            self.weight = nn.Parameter(torch.zeros(dim))
        else:
            self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output = self._norm(x.float())
        if self.zero_centered:
            output = output * (1.0 + self.weight.float())
        else:
            output = output * self.weight.float()
        return output.type_as(x)

    def extra_repr(self) -> str:
        return f"{tuple(self.weight.shape)}, eps={self.eps}, zero_centered={self.zero_centered}"


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (PyTorch's has no ``bias=False`` before 2.1)."""

    def __init__(self, dim: int, eps: float = 1e-5, bias: bool = True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


class ScaleNorm(nn.Module):
    """ScaleNorm (Nguyen & Salazar 2019): one learned scalar times x / ||x||."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.tensor(math.sqrt(dim)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp(min=self.eps)
        return x * (self.scale / norm)


def build_norm(kind: str, dim: int, eps: float) -> nn.Module:
    """A normalisation module from its config name."""
    if kind == "rms":
        return RMSNorm(dim, eps=eps)
    if kind == "layer":
        return LayerNorm(dim, eps=eps, bias=False)
    if kind == "scale":
        return ScaleNorm(dim, eps=eps)
    raise ValueError(f"unknown norm kind {kind!r}")


# ---------------------------------------------------------------------------------------------
# Positions
# ---------------------------------------------------------------------------------------------


class RotaryEmbedding(nn.Module):
    """Computes the cos/sin tables of rotary position embeddings.

    The inverse frequencies are a non-persistent buffer: they are recomputed from the config when
    a checkpoint is loaded, so changing the scaling rule does not need a conversion. With the
    "dynamic" rule the frequencies are recomputed when a sequence longer than the training
    context shows up (NTK-aware scaling).
    """

    def __init__(self, config: Seq2SeqMoEConfig, device: Optional[torch.device] = None):
        super().__init__()
        self.dim = config.head_dim
        self.base = config.rope_theta
        self.scaling = config.rope_scaling
        self.factor = config.rope_factor
        self.max_seq_len_cached = config.max_position_embeddings
        self.original_max_seq_len = config.rope_original_max_position
        self.attention_scaling = 1.0

        if self.scaling == "linear":
            inv_freq = _linear_inv_freq(self.dim, self.base, self.factor)
        elif self.scaling == "yarn":
            inv_freq = _yarn_inv_freq(self.dim, self.base, self.factor, self.original_max_seq_len)
            self.attention_scaling = _yarn_attention_factor(self.factor)
        else:
            inv_freq = _default_inv_freq(self.dim, self.base)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_inv_freq = self.inv_freq

    @torch.no_grad()
    def _dynamic_frequency_update(self, position_ids: torch.Tensor, device: torch.device):
        seq_len = int(torch.max(position_ids)) + 1
        if seq_len > self.max_seq_len_cached:
            base = self.base * (
                (self.factor * seq_len / self.original_max_seq_len) - (self.factor - 1)
            ) ** (self.dim / (self.dim - 2))
            inv_freq = _default_inv_freq(self.dim, base).to(device)
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len and self.max_seq_len_cached > self.original_max_seq_len:
            # back to the original frequencies for short prompts (keeps precision)
            self.original_inv_freq = self.original_inv_freq.to(device)
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
            self.max_seq_len_cached = self.original_max_seq_len

    @torch.no_grad()
    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if self.scaling == "dynamic":
            self._dynamic_frequency_update(position_ids, x.device)
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


class LearnedPositionalEmbedding(nn.Embedding):
    """Learned absolute positions with an offset (BART/OPT keep two extra rows)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, offset: int = 2):
        self.offset = offset
        super().__init__(num_embeddings + offset, embedding_dim)

    def forward(self, position_ids: torch.Tensor) -> torch.Tensor:
        return super().forward(position_ids + self.offset)


class SinusoidalPositionalEmbedding(nn.Module):
    """Fixed positions kept as a non-persistent buffer."""

    def __init__(self, num_positions: int, dim: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(num_positions, dim), persistent=False)

    def forward(self, position_ids: torch.Tensor) -> torch.Tensor:
        return self.table[position_ids]


class RelativePositionBias(nn.Module):
    """T5 relative attention bias: one learned scalar per (bucket, head).

    Only the first layer of a stack owns the table; the other layers reuse the bias it computes
    (passed down the stack as ``position_bias``).
    """

    def __init__(self, num_heads: int, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True):
        super().__init__()
        self.num_heads = num_heads
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bidirectional = bidirectional
        self.relative_attention_bias = nn.Embedding(num_buckets, num_heads)

    def forward(self, query_length: int, key_length: int, device: Optional[torch.device] = None) -> torch.Tensor:
        context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        relative_position = memory_position - context_position
        buckets = relative_position_bucket(
            relative_position,
            bidirectional=self.bidirectional,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )
        values = self.relative_attention_bias(buckets)  # [Q, K, H]
        return values.permute([2, 0, 1]).unsqueeze(0)  # [1, H, Q, K]


# ---------------------------------------------------------------------------------------------
# Key/value cache
# ---------------------------------------------------------------------------------------------


class KVCache:
    """Per-layer key/value tensors for incremental decoding.

    Self-attention caches grow by one position per step; cross-attention caches are computed once
    from the encoder output and reused (``is_static``).
    """

    def __init__(self, num_layers: int):
        self.keys: List[Optional[torch.Tensor]] = [None] * num_layers
        self.values: List[Optional[torch.Tensor]] = [None] * num_layers
        self.cross_keys: List[Optional[torch.Tensor]] = [None] * num_layers
        self.cross_values: List[Optional[torch.Tensor]] = [None] * num_layers

    def seen_tokens(self, layer_idx: int = 0) -> int:
        keys = self.keys[layer_idx]
        return 0 if keys is None else keys.shape[-2]

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int) -> Tuple[torch.Tensor, torch.Tensor]:
        if self.keys[layer_idx] is None:
            self.keys[layer_idx] = key
            self.values[layer_idx] = value
        else:
            self.keys[layer_idx] = torch.cat([self.keys[layer_idx], key], dim=-2)
            self.values[layer_idx] = torch.cat([self.values[layer_idx], value], dim=-2)
        return self.keys[layer_idx], self.values[layer_idx]

    def has_cross(self, layer_idx: int) -> bool:
        return self.cross_keys[layer_idx] is not None

    def set_cross(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int):
        self.cross_keys[layer_idx] = key
        self.cross_values[layer_idx] = value

    def reorder(self, beam_idx: torch.Tensor):
        """Beam search: keep the cache rows of the surviving beams."""
        for i in range(len(self.keys)):
            if self.keys[i] is not None:
                self.keys[i] = self.keys[i].index_select(0, beam_idx)
                self.values[i] = self.values[i].index_select(0, beam_idx)
            if self.cross_keys[i] is not None:
                self.cross_keys[i] = self.cross_keys[i].index_select(0, beam_idx)
                self.cross_values[i] = self.cross_values[i].index_select(0, beam_idx)


# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------


def eager_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor],
    scaling: float,
    dropout: float = 0.0,
    softcap: Optional[float] = None,
    training: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Reference attention: softmax(q k^T * scale + mask) v, in float32 for the softmax.

    ``query`` is [B, H, T, D]; ``key`` and ``value`` are [B, H, S, D] (already expanded for GQA).
    Returns the output in [B, T, H, D] layout and the attention probabilities.
    """
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if softcap is not None:
        attn_weights = torch.tanh(attn_weights / softcap) * softcap
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask[:, :, :, : key.shape[-2]]
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = F.dropout(attn_weights, p=dropout, training=training)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


def sdpa_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor],
    scaling: float,
    dropout: float = 0.0,
    is_causal: bool = False,
    training: bool = False,
) -> torch.Tensor:
    """Fused attention when PyTorch has it (2.0+), the eager path otherwise."""
    if not _HAS_SDPA:
        output, _ = eager_attention(query, key, value, attention_mask, scaling, dropout, training=training)
        return output
    output = F.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=attention_mask,
        dropout_p=dropout if training else 0.0,
        is_causal=is_causal and attention_mask is None,
        scale=scaling,
    )
    return output.transpose(1, 2).contiguous()


class SelfAttention(nn.Module):
    """Grouped-query self-attention with rotary embeddings.

    ``num_kv_heads`` key/value heads are shared by groups of ``num_heads // num_kv_heads`` query
    heads. Optional QK-norm (RMSNorm over the head dimension of q and k, as in Gemma 3 / OLMo 2)
    and an optional sliding window for local layers. The encoder uses it non-causally.
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int, is_causal: bool = True,
                 use_rotary: bool = True):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.is_causal = is_causal
        self.use_rotary = use_rotary
        self.num_heads = config.num_heads
        self.num_kv_heads = config.num_kv_heads
        self.num_kv_groups = config.num_heads // config.num_kv_heads
        self.head_dim = config.head_dim
        self.scaling = self.head_dim ** -0.5
        self.attention_dropout = config.attention_dropout
        self.softcap = config.softcap
        self.sliding_window = None if config.layer_is_global(layer_idx) else config.sliding_window

        self.q_proj = nn.Linear(config.d_model, config.num_heads * config.head_dim, bias=config.attention_bias)
        self.k_proj = nn.Linear(config.d_model, config.num_kv_heads * config.head_dim, bias=config.attention_bias)
        self.v_proj = nn.Linear(config.d_model, config.num_kv_heads * config.head_dim, bias=config.attention_bias)
        self.o_proj = nn.Linear(config.num_heads * config.head_dim, config.d_model, bias=config.attention_bias)
        if config.qk_norm:
            self.q_norm = RMSNorm(config.head_dim, eps=config.norm_eps)
            self.k_norm = RMSNorm(config.head_dim, eps=config.norm_eps)
        else:
            self.q_norm = None
            self.k_norm = None

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        attention_mask: Optional[torch.Tensor] = None,
        position_bias: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        bsz, q_len, _ = hidden_states.shape

        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_kv_heads, self.head_dim)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_kv_heads, self.head_dim)
        if self.q_norm is not None:
            query_states = self.q_norm(query_states)
            key_states = self.k_norm(key_states)
        query_states = query_states.transpose(1, 2)
        key_states = key_states.transpose(1, 2)
        value_states = value_states.transpose(1, 2)

        if self.use_rotary and position_embeddings is not None:
            cos, sin = position_embeddings
            query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)

        if cache is not None:
            key_states, value_states = cache.update(key_states, value_states, self.layer_idx)

        key_states = repeat_kv(key_states, self.num_kv_groups)
        value_states = repeat_kv(value_states, self.num_kv_groups)

        mask = combine_masks(attention_mask, position_bias)
        attn_output, _ = eager_attention(
            query_states,
            key_states,
            value_states,
            mask,
            self.scaling,
            dropout=self.attention_dropout,
            softcap=self.softcap,
            training=self.training,
        )
        attn_output = attn_output.reshape(bsz, q_len, self.num_heads * self.head_dim)
        return self.o_proj(attn_output)


class CrossAttention(nn.Module):
    """Decoder-to-encoder attention.

    Queries come from the decoder, keys and values from the encoder output. Keys and values are
    computed once per source sequence and cached for every decoding step. No rotary embeddings:
    source and target positions live in different spaces.
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.num_heads = config.num_heads
        self.num_kv_heads = config.cross_num_kv_heads
        self.num_kv_groups = config.num_heads // config.cross_num_kv_heads
        self.head_dim = config.head_dim
        self.scaling = self.head_dim ** -0.5
        self.attention_dropout = config.attention_dropout

        self.q_proj = nn.Linear(config.d_model, config.num_heads * config.head_dim, bias=False)
        self.k_proj = nn.Linear(config.d_model, config.cross_num_kv_heads * config.head_dim, bias=False)
        self.v_proj = nn.Linear(config.d_model, config.cross_num_kv_heads * config.head_dim, bias=False)
        self.o_proj = nn.Linear(config.num_heads * config.head_dim, config.d_model, bias=False)

    def forward(
        self,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        bsz, q_len, _ = hidden_states.shape
        src_len = encoder_hidden_states.shape[1]

        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        if cache is not None and cache.has_cross(self.layer_idx):
            key_states = cache.cross_keys[self.layer_idx]
            value_states = cache.cross_values[self.layer_idx]
        else:
            key_states = self.k_proj(encoder_hidden_states).view(bsz, src_len, self.num_kv_heads, self.head_dim)
            value_states = self.v_proj(encoder_hidden_states).view(bsz, src_len, self.num_kv_heads, self.head_dim)
            key_states = key_states.transpose(1, 2)
            value_states = value_states.transpose(1, 2)
            if cache is not None:
                cache.set_cross(key_states, value_states, self.layer_idx)

        key_states = repeat_kv(key_states, self.num_kv_groups)
        value_states = repeat_kv(value_states, self.num_kv_groups)
        attn_output, _ = eager_attention(
            query_states,
            key_states,
            value_states,
            encoder_attention_mask,
            self.scaling,
            dropout=self.attention_dropout,
            training=self.training,
        )
        attn_output = attn_output.reshape(bsz, q_len, self.num_heads * self.head_dim)
        return self.o_proj(attn_output)


class FusedQKVAttention(nn.Module):
    """Multi-head attention with one fused QKV projection (GPT-NeoX / Falcon layout).

    Used by the parallel-residual blocks, where the attention and the MLP read the same
    normalised input. The fused weight is [(H + 2K) * D, d_model].
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.num_heads = config.num_heads
        self.num_kv_heads = config.num_kv_heads
        self.num_kv_groups = config.num_heads // config.num_kv_heads
        self.head_dim = config.head_dim
        self.scaling = self.head_dim ** -0.5
        self.qkv_size = (config.num_heads + 2 * config.num_kv_heads) * config.head_dim
        self.query_key_value = nn.Linear(config.d_model, self.qkv_size, bias=config.attention_bias)
        self.dense = nn.Linear(config.num_heads * config.head_dim, config.d_model, bias=config.attention_bias)

    def _split_heads(self, fused: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q_size = self.num_heads * self.head_dim
        kv_size = self.num_kv_heads * self.head_dim
        query, key, value = fused.split([q_size, kv_size, kv_size], dim=-1)
        return query, key, value

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        bsz, q_len, _ = hidden_states.shape
        fused = self.query_key_value(hidden_states)
        query, key, value = self._split_heads(fused)
        query = query.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key = key.view(bsz, q_len, self.num_kv_heads, self.head_dim).transpose(1, 2)
        value = value.view(bsz, q_len, self.num_kv_heads, self.head_dim).transpose(1, 2)
        if position_embeddings is not None:
            cos, sin = position_embeddings
            query, key = apply_rotary_pos_emb(query, key, cos, sin)
        if cache is not None:
            key, value = cache.update(key, value, self.layer_idx)
        key = repeat_kv(key, self.num_kv_groups)
        value = repeat_kv(value, self.num_kv_groups)
        attn_output, _ = eager_attention(query, key, value, attention_mask, self.scaling, training=self.training)
        return self.dense(attn_output.reshape(bsz, q_len, -1))


ATTENTION_CLASSES = {
    "self": SelfAttention,
    "cross": CrossAttention,
    "fused": FusedQKVAttention,
}


# ---------------------------------------------------------------------------------------------
# Feed-forward networks
# ---------------------------------------------------------------------------------------------


class MLP(nn.Module):
    """Two-layer MLP: down(act(up(x)))."""

    def __init__(self, dim: int, hidden_dim: int, act: str = "gelu", bias: bool = False, dropout: float = 0.0):
        super().__init__()
        self.up_proj = nn.Linear(dim, hidden_dim, bias=bias)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=bias)
        self.act_fn = get_activation(act)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.dropout(self.act_fn(self.up_proj(x))))


class GatedMLP(nn.Module):
    """Gated MLP (SwiGLU with silu, GeGLU with gelu): down(act(gate(x)) * up(x)).

    Shazeer 2020, "GLU Variants Improve Transformer". The gate and up projections are separate
    weights so that a column-parallel split needs no re-layout.
    """

    def __init__(self, dim: int, hidden_dim: int, act: str = "silu", bias: bool = False, dropout: float = 0.0):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden_dim, bias=bias)
        self.up_proj = nn.Linear(dim, hidden_dim, bias=bias)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=bias)
        self.act_fn = get_activation(act)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.act_fn(self.gate_proj(x)) * self.up_proj(x)
        return self.down_proj(self.dropout(hidden))


def build_mlp(config: Seq2SeqMoEConfig, hidden_dim: Optional[int] = None) -> nn.Module:
    hidden_dim = hidden_dim if hidden_dim is not None else config.d_ff
    if config.gated_mlp:
        return GatedMLP(config.d_model, hidden_dim, act=config.hidden_act, bias=config.mlp_bias,
                        dropout=config.residual_dropout)
    return MLP(config.d_model, hidden_dim, act=config.hidden_act, bias=config.mlp_bias,
               dropout=config.residual_dropout)


# ---------------------------------------------------------------------------------------------
# Mixture of experts
# ---------------------------------------------------------------------------------------------


def load_balancing_loss(router_probs: torch.Tensor, expert_indices: torch.Tensor, num_experts: int) -> torch.Tensor:
    """Switch Transformer auxiliary loss: num_experts * sum_e f_e * P_e.

    ``router_probs`` is [N, E] (softmax over experts per token), ``expert_indices`` is [N, k].
    ``f_e`` is the fraction of tokens dispatched to expert e, ``P_e`` the mean router probability
    of e. The loss is 1 when the load is perfectly uniform.
    """
    expert_mask = F.one_hot(expert_indices, num_experts).float()  # [N, k, E]
    tokens_per_expert = expert_mask.sum(dim=1).mean(dim=0)  # [E]
    router_prob_per_expert = router_probs.mean(dim=0)  # [E]
    return num_experts * torch.sum(tokens_per_expert * router_prob_per_expert)


def router_z_loss(router_logits: torch.Tensor) -> torch.Tensor:
    """ST-MoE z-loss: mean(logsumexp(logits)^2), keeps router logits small."""
    log_z = torch.logsumexp(router_logits, dim=-1)
    return torch.mean(log_z ** 2)


def expert_capacity(num_tokens: int, num_experts: int, top_k: int, capacity_factor: float) -> int:
    """Tokens an expert accepts per batch before it drops the rest."""
    capacity = math.ceil(num_tokens * top_k * capacity_factor / num_experts)
    return max(capacity, 4)


class TopKRouter(nn.Module):
    """Linear router with top-k selection.

    Returns, per token, the indices of the ``top_k`` experts and their combine weights. With
    ``normalize_top_k`` the selected probabilities are renormalised to sum to one (Mixtral); the
    raw softmax probabilities are kept for the auxiliary loss.
    """

    def __init__(self, dim: int, moe: MoEConfig):
        super().__init__()
        self.num_experts = moe.num_experts
        self.top_k = moe.top_k
        self.jitter = moe.router_jitter
        self.normalize_top_k = moe.normalize_top_k
        self.classifier = nn.Linear(dim, moe.num_experts, bias=moe.router_bias)

    def forward(self, hidden_states: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        if self.training and self.jitter > 0:
            noise = torch.empty_like(hidden_states).uniform_(1.0 - self.jitter, 1.0 + self.jitter)
            hidden_states = hidden_states * noise
        router_logits = self.classifier(hidden_states)  # [N, E]
        router_probs = F.softmax(router_logits, dim=-1, dtype=torch.float32)
        top_weights, top_indices = torch.topk(router_probs, self.top_k, dim=-1)
        if self.normalize_top_k:
            top_weights = top_weights / top_weights.sum(dim=-1, keepdim=True)
        return top_weights.to(hidden_states.dtype), top_indices, router_probs, router_logits


class Expert(nn.Module):
    """One SwiGLU expert."""

    def __init__(self, dim: int, hidden_dim: int, act: str = "silu"):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)
        self.act_fn = get_activation(act)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(self.act_fn(self.w1(x)) * self.w3(x))


class SparseMoE(nn.Module):
    """Top-k routed experts plus always-on shared experts (DeepSeekMoE).

    Tokens are flattened to [N, d_model], routed, processed by the experts they were sent to, and
    scattered back weighted by the router. The auxiliary losses of the last forward are kept in
    ``self.aux_loss`` / ``self.z_loss`` for the training loop to collect.
    """

    def __init__(self, config: Seq2SeqMoEConfig):
        super().__init__()
        moe = config.moe
        self.num_experts = moe.num_experts
        self.top_k = moe.top_k
        self.capacity_factor = moe.capacity_factor
        self.aux_loss_coef = moe.aux_loss_coef
        self.z_loss_coef = moe.router_z_loss_coef
        self.router = TopKRouter(config.d_model, moe)
        self.experts = nn.ModuleList(
            [Expert(config.d_model, moe.expert_ffn_dim, act=config.hidden_act) for _ in range(moe.num_experts)]
        )
        if moe.num_shared_experts > 0:
            self.shared_experts = GatedMLP(
                config.d_model, moe.shared_ffn_dim * moe.num_shared_experts, act=config.hidden_act
            )
            self.shared_gate = nn.Linear(config.d_model, 1, bias=False)
        else:
            self.shared_experts = None
            self.shared_gate = None
        self.aux_loss = None
        self.z_loss = None

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch_size, seq_len, dim = hidden_states.shape
        flat = hidden_states.view(-1, dim)
        routing_weights, selected_experts, router_probs, router_logits = self.router(flat)
        if self.training:
            self.aux_loss = self.aux_loss_coef * load_balancing_loss(router_probs, selected_experts, self.num_experts)
            self.z_loss = self.z_loss_coef * router_z_loss(router_logits)

        final = torch.zeros_like(flat)
        # [E, k, N]: which (token, slot) pairs each expert serves
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            expert = self.experts[expert_idx]
            slot, token_idx = torch.where(expert_mask[expert_idx])
            if token_idx.numel() == 0:
                continue
            current = flat[token_idx]
            current = expert(current) * routing_weights[token_idx, slot, None]
            final.index_add_(0, token_idx, current.to(flat.dtype))

        if self.shared_experts is not None:
            shared = self.shared_experts(flat)
            final = final + torch.sigmoid(self.shared_gate(flat)) * shared
        return final.view(batch_size, seq_len, dim)


class DenseMoE(nn.Module):
    """Soft mixture: every expert runs on every token, weighted by the router (no top-k).

    Used for ablations and distillation of the sparse layers; far more compute per token.
    """

    def __init__(self, config: Seq2SeqMoEConfig, num_experts: int = 4):
        super().__init__()
        self.gate = nn.Linear(config.d_model, num_experts, bias=False)
        self.experts = nn.ModuleList(
            [GatedMLP(config.d_model, config.d_ff // num_experts, act=config.hidden_act) for _ in range(num_experts)]
        )

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        weights = F.softmax(self.gate(hidden_states), dim=-1)
        outputs = torch.stack([expert(hidden_states) for expert in self.experts], dim=-1)
        return torch.einsum("...de,...e->...d", outputs, weights)


# ---------------------------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------------------------


class EncoderBlock(nn.Module):
    """Pre-norm encoder block: x + attn(norm(x)), then x + mlp(norm(x)).

    Bidirectional self-attention; positions come either from rotary embeddings or from the T5
    relative bias computed by the first block and shared by the others.
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        use_rotary = config.encoder_position_kind == "rotary"
        self.self_attn = SelfAttention(config, layer_idx, is_causal=False, use_rotary=use_rotary)
        self.mlp = build_mlp(config)
        self.input_layernorm = build_norm(config.encoder_norm_kind, config.d_model, config.norm_eps)
        self.post_attention_layernorm = build_norm(config.encoder_norm_kind, config.d_model, config.norm_eps)
        self.dropout = nn.Dropout(config.residual_dropout)

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        attention_mask: Optional[torch.Tensor] = None,
        position_bias: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings, attention_mask, position_bias)
        hidden_states = residual + self.dropout(hidden_states)

        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + self.dropout(hidden_states)


class DecoderBlock(nn.Module):
    """Pre-norm decoder block: causal self-attention, cross-attention, then a dense MLP or a
    sparse MoE layer (chosen by ``config.moe.is_sparse(layer_idx)``).
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.is_sparse = config.moe.is_sparse(layer_idx)
        self.self_attn = SelfAttention(config, layer_idx, is_causal=True)
        self.cross_attn = CrossAttention(config, layer_idx)
        if self.is_sparse:
            self.mlp = SparseMoE(config)
        else:
            self.mlp = build_mlp(config)
        self.input_layernorm = build_norm(config.norm_kind, config.d_model, config.norm_eps)
        self.cross_attention_layernorm = build_norm(config.norm_kind, config.d_model, config.norm_eps)
        self.post_attention_layernorm = build_norm(config.norm_kind, config.d_model, config.norm_eps)
        self.dropout = nn.Dropout(config.residual_dropout)

    def forward(
        self,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        attention_mask: Optional[torch.Tensor] = None,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        # causal self-attention over the target prefix
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings, attention_mask, None, cache)
        hidden_states = residual + self.dropout(hidden_states)

        # attention over the encoder output
        residual = hidden_states
        hidden_states = self.cross_attention_layernorm(hidden_states)
        hidden_states = self.cross_attn(hidden_states, encoder_hidden_states, encoder_attention_mask, cache)
        hidden_states = residual + self.dropout(hidden_states)

        # feed-forward (dense or routed)
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + self.dropout(hidden_states)


class SandwichDecoderBlock(nn.Module):
    """Decoder block with norms before *and* after each sub-layer (Gemma 2 / 3 "sandwich").

    The post-norms bound the residual updates, which lets the deeper configs train in bf16
    without loss spikes.
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.self_attn = SelfAttention(config, layer_idx, is_causal=True)
        self.cross_attn = CrossAttention(config, layer_idx)
        self.mlp = SparseMoE(config) if config.moe.is_sparse(layer_idx) else build_mlp(config)
        self.pre_self_attn_norm = RMSNorm(config.d_model, eps=config.norm_eps, zero_centered=True)
        self.post_self_attn_norm = RMSNorm(config.d_model, eps=config.norm_eps, zero_centered=True)
        self.pre_cross_attn_norm = RMSNorm(config.d_model, eps=config.norm_eps, zero_centered=True)
        self.post_cross_attn_norm = RMSNorm(config.d_model, eps=config.norm_eps, zero_centered=True)
        self.pre_feedforward_norm = RMSNorm(config.d_model, eps=config.norm_eps, zero_centered=True)
        self.post_feedforward_norm = RMSNorm(config.d_model, eps=config.norm_eps, zero_centered=True)

    def forward(
        self,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        attention_mask: Optional[torch.Tensor] = None,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.pre_self_attn_norm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings, attention_mask, None, cache)
        hidden_states = residual + self.post_self_attn_norm(hidden_states)

        residual = hidden_states
        hidden_states = self.pre_cross_attn_norm(hidden_states)
        hidden_states = self.cross_attn(hidden_states, encoder_hidden_states, encoder_attention_mask, cache)
        hidden_states = residual + self.post_cross_attn_norm(hidden_states)

        residual = hidden_states
        hidden_states = self.mlp(self.pre_feedforward_norm(hidden_states))
        return residual + self.post_feedforward_norm(hidden_states)


class ParallelDecoderBlock(nn.Module):
    """GPT-J / PaLM parallel block: x + attn(norm(x)) + mlp(norm(x)), one shared norm.

    The attention and the MLP read the same input, so a tensor-parallel layout needs a single
    all-reduce per block instead of two. Cross-attention stays sequential.
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.self_attn = FusedQKVAttention(config, layer_idx)
        self.cross_attn = CrossAttention(config, layer_idx)
        self.mlp = SparseMoE(config) if config.moe.is_sparse(layer_idx) else build_mlp(config)
        self.input_layernorm = build_norm(config.norm_kind, config.d_model, config.norm_eps)
        self.cross_attention_layernorm = build_norm(config.norm_kind, config.d_model, config.norm_eps)

    def forward(
        self,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        attention_mask: Optional[torch.Tensor] = None,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        residual = hidden_states
        normed = self.input_layernorm(hidden_states)
        attn_output = self.self_attn(normed, position_embeddings, attention_mask, cache)
        mlp_output = self.mlp(normed)
        hidden_states = residual + attn_output + mlp_output

        residual = hidden_states
        hidden_states = self.cross_attention_layernorm(hidden_states)
        hidden_states = self.cross_attn(hidden_states, encoder_hidden_states, encoder_attention_mask, cache)
        return residual + hidden_states


DECODER_BLOCK_CLASSES = {
    "pre_norm": DecoderBlock,
    "sandwich": SandwichDecoderBlock,
    "parallel": ParallelDecoderBlock,
}


# ---------------------------------------------------------------------------------------------
# Stacks
# ---------------------------------------------------------------------------------------------


class ScaledEmbedding(nn.Embedding):
    """Token embedding multiplied by sqrt(d_model) (T5 / Gemma convention when enabled)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None,
                 scale: bool = True):
        super().__init__(num_embeddings, embedding_dim, padding_idx=padding_idx)
        self.embed_scale = math.sqrt(embedding_dim) if scale else 1.0

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(input_ids, self.weight, self.padding_idx) * self.embed_scale


class Seq2SeqMoEPreTrainedModel(nn.Module):
    """Weight initialisation and checkpoint helpers shared by every model class."""

    config_class = Seq2SeqMoEConfig
    base_model_prefix = "model"
    supports_gradient_checkpointing = True
    _no_split_modules = ["EncoderBlock", "DecoderBlock", "SandwichDecoderBlock", "ParallelDecoderBlock"]
    _keys_to_ignore_on_load_unexpected = [r"rotary_emb\.inv_freq"]

    def __init__(self, config: Seq2SeqMoEConfig):
        super().__init__()
        self.config = config

    def post_init(self):
        """Initialises the weights; called at the end of each subclass ``__init__``."""
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module):
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            trunc_normal_init_(module.weight, std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=EMBEDDING_INIT_STD if self.config.scale_embeddings else std)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, TopKRouter):
            nn.init.normal_(module.classifier.weight, mean=0.0, std=ROUTER_INIT_STD)

    def _rescale_output_projections(self):
        """GPT-2 style: shrink the projections that write into the residual stream."""
        num_layers = self.config.num_encoder_layers + self.config.num_decoder_layers
        std = scaled_init_std(self.config.initializer_range, num_layers)
        for name, param in self.named_parameters():
            if name.endswith("o_proj.weight") or name.endswith("down_proj.weight") or name.endswith("w2.weight"):
                with torch.no_grad():
                    trunc_normal_init_(param, std)

    def num_parameters(self, exclude_embeddings: bool = False) -> int:
        total = count_parameters(self)
        if exclude_embeddings:
            total -= self.config.vocab_size * self.config.d_model
        return total

    def gradient_checkpointing_enable(self):
        self.config.gradient_checkpointing = True


class Seq2SeqMoEEncoder(Seq2SeqMoEPreTrainedModel):
    """Stack of encoder blocks over the source tokens."""

    def __init__(self, config: Seq2SeqMoEConfig, embed_tokens: Optional[nn.Embedding] = None):
        super().__init__(config)
        self.embed_tokens = embed_tokens
        self.embed_scale = math.sqrt(config.d_model) if config.scale_embeddings else 1.0
        self.layers = nn.ModuleList([EncoderBlock(config, i) for i in range(config.num_encoder_layers)])
        self.norm = build_norm(config.encoder_norm_kind, config.d_model, config.norm_eps)
        if config.encoder_position_kind == "relative":
            self.relative_bias = RelativePositionBias(
                config.num_heads,
                num_buckets=config.relative_num_buckets,
                max_distance=config.relative_max_distance,
                bidirectional=True,
            )
            self.rotary_emb = None
        else:
            self.relative_bias = None
            self.rotary_emb = RotaryEmbedding(config)
        self.dropout = nn.Dropout(config.residual_dropout)

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        batch_size, seq_length = input_ids.shape
        hidden_states = self.embed_tokens(input_ids) * self.embed_scale
        hidden_states = self.dropout(hidden_states)

        mask = None
        if attention_mask is not None:
            mask = expand_padding_mask(attention_mask, hidden_states.dtype)

        position_embeddings = None
        position_bias = None
        if self.relative_bias is not None:
            position_bias = self.relative_bias(seq_length, seq_length, device=input_ids.device)
        else:
            position_ids = torch.arange(seq_length, device=input_ids.device)[None, :].expand(batch_size, -1)
            position_embeddings = self.rotary_emb(hidden_states, position_ids)

        for layer in self.layers:
            hidden_states = layer(hidden_states, position_embeddings, mask, position_bias)
        return self.norm(hidden_states)


class Seq2SeqMoEDecoder(Seq2SeqMoEPreTrainedModel):
    """Stack of decoder blocks: causal over the target, cross-attending to the encoder."""

    def __init__(self, config: Seq2SeqMoEConfig, embed_tokens: Optional[nn.Embedding] = None):
        super().__init__(config)
        self.embed_tokens = embed_tokens
        self.embed_scale = math.sqrt(config.d_model) if config.scale_embeddings else 1.0
        block_class = DECODER_BLOCK_CLASSES[config.decoder_block_type]
        self.layers = nn.ModuleList([block_class(config, i) for i in range(config.num_decoder_layers)])
        self.norm = build_norm(config.norm_kind, config.d_model, config.norm_eps)
        self.rotary_emb = RotaryEmbedding(config)
        self.dropout = nn.Dropout(config.residual_dropout)

    def forward(
        self,
        input_ids: torch.Tensor,
        encoder_hidden_states: torch.Tensor,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        batch_size, seq_length = input_ids.shape
        hidden_states = self.embed_tokens(input_ids) * self.embed_scale
        hidden_states = self.dropout(hidden_states)

        past_length = cache.seen_tokens() if cache is not None else 0
        position_ids = torch.arange(past_length, past_length + seq_length, device=input_ids.device)
        position_ids = position_ids[None, :].expand(batch_size, -1)
        position_embeddings = self.rotary_emb(hidden_states, position_ids)

        causal_mask = make_causal_mask(seq_length, hidden_states.dtype, input_ids.device, past_length)
        cross_mask = None
        if encoder_attention_mask is not None:
            cross_mask = expand_padding_mask(encoder_attention_mask, hidden_states.dtype, seq_length)

        for layer in self.layers:
            hidden_states = layer(hidden_states, encoder_hidden_states, position_embeddings, causal_mask,
                                  cross_mask, cache)
        return self.norm(hidden_states)

    def moe_losses(self) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]:
        """Sum of the auxiliary and z-losses of the sparse layers of the last forward."""
        aux_loss = None
        z_loss = None
        for layer in self.layers:
            mlp = layer.mlp
            if isinstance(mlp, SparseMoE) and mlp.aux_loss is not None:
                aux_loss = mlp.aux_loss if aux_loss is None else aux_loss + mlp.aux_loss
                z_loss = mlp.z_loss if z_loss is None else z_loss + mlp.z_loss
        return aux_loss, z_loss


class Seq2SeqMoEModel(Seq2SeqMoEPreTrainedModel):
    """Encoder + decoder sharing one token embedding; returns the decoder's hidden states."""

    def __init__(self, config: Seq2SeqMoEConfig):
        super().__init__(config)
        self.shared = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_token_id)
        self.encoder = Seq2SeqMoEEncoder(config, self.shared)
        self.decoder = Seq2SeqMoEDecoder(config, self.shared)
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.shared

    def set_input_embeddings(self, new_embeddings: nn.Embedding):
        self.shared = new_embeddings
        self.encoder.embed_tokens = new_embeddings
        self.decoder.embed_tokens = new_embeddings

    def forward(
        self,
        input_ids: torch.Tensor,
        decoder_input_ids: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        encoder_hidden_states = self.encoder(input_ids, attention_mask)
        return self.decoder(decoder_input_ids, encoder_hidden_states, attention_mask, cache)


def cross_entropy_with_z_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    z_loss: float = 0.0,
    label_smoothing: float = 0.0,
    ignore_index: int = -100,
) -> torch.Tensor:
    """Token-level cross-entropy plus PaLM's z-loss on the softmax normaliser."""
    vocab_size = logits.shape[-1]
    logits = logits.float().view(-1, vocab_size)
    labels = labels.view(-1)
    loss = F.cross_entropy(logits, labels, ignore_index=ignore_index, label_smoothing=label_smoothing)
    if z_loss > 0:
        valid = labels != ignore_index
        log_z = torch.logsumexp(logits[valid], dim=-1)
        loss = loss + z_loss * (log_z ** 2).mean()
    return loss


class Seq2SeqMoEForConditionalGeneration(Seq2SeqMoEPreTrainedModel):
    """The model with a language-modelling head on the decoder.

    With ``tie_word_embeddings`` the head shares the token embedding and the decoder output is
    rescaled by d_model^-0.5 first (Mesh TensorFlow convention).
    """

    _tied_weights_keys = ["lm_head.weight"]

    def __init__(self, config: Seq2SeqMoEConfig):
        super().__init__(config)
        self.model = Seq2SeqMoEModel(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.shared.weight
        self.post_init()

    def get_encoder(self) -> Seq2SeqMoEEncoder:
        return self.model.encoder

    def get_decoder(self) -> Seq2SeqMoEDecoder:
        return self.model.decoder

    def forward(
        self,
        input_ids: torch.Tensor,
        decoder_input_ids: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        hidden_states = self.model(input_ids, decoder_input_ids, attention_mask, cache)
        if self.config.tie_word_embeddings:
            hidden_states = hidden_states * (self.config.d_model ** -0.5)
        logits = self.lm_head(hidden_states)
        return logits

    def compute_loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        loss = cross_entropy_with_z_loss(
            logits, labels, z_loss=self.config.z_loss, label_smoothing=self.config.label_smoothing
        )
        aux_loss, router_z = self.model.decoder.moe_losses()
        if aux_loss is not None:
            loss = loss + aux_loss + router_z
        return loss

    def prepare_decoder_input_ids_from_labels(self, labels: torch.Tensor) -> torch.Tensor:
        return shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)


class ClassificationHead(nn.Module):
    """Pooler + classifier over the first (or mean) encoder position."""

    def __init__(self, d_model: int, num_labels: int, pooling: str = "mean", dropout: float = 0.1):
        super().__init__()
        self.pooling = pooling
        self.dense = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(d_model, num_labels)

    def forward(self, hidden_states: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if self.pooling == "first":
            pooled = hidden_states[:, 0]
        elif attention_mask is not None:
            weights = attention_mask.to(hidden_states.dtype).unsqueeze(-1)
            pooled = (hidden_states * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        else:
            pooled = hidden_states.mean(dim=1)
        pooled = torch.tanh(self.dense(self.dropout(pooled)))
        return self.out_proj(self.dropout(pooled))


class Seq2SeqMoEEncoderForSequenceClassification(Seq2SeqMoEPreTrainedModel):
    """Encoder only, for classification fine-tuning (the decoder weights are not loaded)."""

    def __init__(self, config: Seq2SeqMoEConfig, num_labels: int = 2):
        super().__init__(config)
        self.num_labels = num_labels
        self.shared = ScaledEmbedding(config.vocab_size, config.d_model, padding_idx=config.pad_token_id)
        self.encoder = Seq2SeqMoEEncoder(config, self.shared)
        self.classifier = ClassificationHead(config.d_model, num_labels)
        self.post_init()

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        hidden_states = self.encoder(input_ids, attention_mask)
        return self.classifier(hidden_states, attention_mask)


# ---------------------------------------------------------------------------------------------
# Decoder-only variant (shares the blocks' building pieces)
# ---------------------------------------------------------------------------------------------


class CausalBlock(nn.Module):
    """Decoder-only block: self-attention and a dense or sparse MLP, no cross-attention.

    The decoder-only checkpoints are distilled from the seq2seq ones; keeping the parameter names
    of ``DecoderBlock`` lets the converter copy the weights one to one.
    """

    def __init__(self, config: Seq2SeqMoEConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.self_attn = SelfAttention(config, layer_idx, is_causal=True)
        self.mlp = SparseMoE(config) if config.moe.is_sparse(layer_idx) else build_mlp(config)
        self.input_layernorm = build_norm(config.norm_kind, config.d_model, config.norm_eps)
        self.post_attention_layernorm = build_norm(config.norm_kind, config.d_model, config.norm_eps)

    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: Tuple[torch.Tensor, torch.Tensor],
        attention_mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
    ) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), position_embeddings, attention_mask,
                                       None, cache)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.mlp(self.post_attention_layernorm(hidden_states))
        return residual + hidden_states


class Seq2SeqMoEForCausalLM(Seq2SeqMoEPreTrainedModel):
    """A decoder-only language model built from the same components."""

    def __init__(self, config: Seq2SeqMoEConfig):
        super().__init__(config)
        self.embed_tokens = ScaledEmbedding(config.vocab_size, config.d_model, padding_idx=config.pad_token_id,
                                            scale=config.scale_embeddings)
        self.layers = nn.ModuleList([CausalBlock(config, i) for i in range(config.num_decoder_layers)])
        self.norm = build_norm(config.norm_kind, config.d_model, config.norm_eps)
        self.rotary_emb = RotaryEmbedding(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        self.post_init()

    def forward(self, input_ids: torch.Tensor, cache: Optional[KVCache] = None) -> torch.Tensor:
        batch_size, seq_length = input_ids.shape
        hidden_states = self.embed_tokens(input_ids)
        past_length = cache.seen_tokens() if cache is not None else 0
        position_ids = torch.arange(past_length, past_length + seq_length, device=input_ids.device)
        position_embeddings = self.rotary_emb(hidden_states, position_ids[None, :].expand(batch_size, -1))
        mask = make_causal_mask(seq_length, hidden_states.dtype, input_ids.device, past_length,
                                sliding_window=self.config.sliding_window)
        for layer in self.layers:
            hidden_states = layer(hidden_states, position_embeddings, mask, cache)
        return self.lm_head(self.norm(hidden_states))


# ---------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------


def top_k_top_p_filtering(logits: torch.Tensor, top_k: int = 0, top_p: float = 1.0,
                          filter_value: float = -float("inf"), min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Masks logits outside the top-k tokens and outside the top-p nucleus.

    ``logits`` is [B, V]. Both filters keep at least ``min_tokens_to_keep`` tokens.
    """
    if top_k > 0:
        top_k = min(max(top_k, min_tokens_to_keep), logits.size(-1))
        kth_value = torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.masked_fill(logits < kth_value, filter_value)
    if top_p < 1.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_indices_to_remove = cumulative_probs > top_p
        # keep the first token above the threshold too
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., :min_tokens_to_keep] = False
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        logits = logits.masked_fill(indices_to_remove, filter_value)
    return logits


def apply_repetition_penalty(logits: torch.Tensor, generated: torch.Tensor, penalty: float) -> torch.Tensor:
    """CTRL repetition penalty: divide positive (multiply negative) logits of seen tokens."""
    if penalty == 1.0:
        return logits
    score = torch.gather(logits, 1, generated)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return logits.scatter(1, generated, score)


@dataclass
class GenerationConfig:
    max_new_tokens: int = 128
    do_sample: bool = False
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    num_beams: int = 1
    length_penalty: float = 1.0
    early_stopping: bool = True


@torch.no_grad()
def generate(
    model: Seq2SeqMoEForConditionalGeneration,
    input_ids: torch.Tensor,
    attention_mask: Optional[torch.Tensor] = None,
    generation_config: Optional[GenerationConfig] = None,
) -> torch.Tensor:
    """Greedy or sampled decoding with a KV cache; the encoder runs once."""
    gen = generation_config or GenerationConfig()
    config = model.config
    batch_size = input_ids.shape[0]
    device = input_ids.device

    encoder_hidden_states = model.get_encoder()(input_ids, attention_mask)
    cache = KVCache(config.num_decoder_layers)
    decoder_input_ids = torch.full((batch_size, 1), config.decoder_start_token_id, dtype=torch.long, device=device)
    generated = decoder_input_ids
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)

    for _ in range(gen.max_new_tokens):
        hidden_states = model.get_decoder()(decoder_input_ids, encoder_hidden_states, attention_mask, cache)
        if config.tie_word_embeddings:
            hidden_states = hidden_states * (config.d_model ** -0.5)
        logits = model.lm_head(hidden_states[:, -1, :]).float()
        logits = apply_repetition_penalty(logits, generated, gen.repetition_penalty)
        if gen.do_sample:
            logits = top_k_top_p_filtering(logits / max(gen.temperature, 1e-5), gen.top_k, gen.top_p)
            next_tokens = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1).squeeze(1)
        else:
            next_tokens = torch.argmax(logits, dim=-1)
        next_tokens = torch.where(finished, torch.full_like(next_tokens, config.pad_token_id), next_tokens)
        generated = torch.cat([generated, next_tokens[:, None]], dim=-1)
        finished = finished | (next_tokens == config.eos_token_id)
        if bool(finished.all()):
            break
        decoder_input_ids = next_tokens[:, None]
    return generated


class BeamHypotheses:
    """The n best finished hypotheses of one input, scored by length-normalised log-probability."""

    def __init__(self, num_beams: int, length_penalty: float, early_stopping: bool):
        self.num_beams = num_beams
        self.length_penalty = length_penalty
        self.early_stopping = early_stopping
        self.beams: List[Tuple[float, torch.Tensor]] = []
        self.worst_score = 1e9

    def __len__(self) -> int:
        return len(self.beams)

    def add(self, hyp: torch.Tensor, sum_logprobs: float):
        score = sum_logprobs / (hyp.shape[-1] ** self.length_penalty)
        if len(self) < self.num_beams or score > self.worst_score:
            self.beams.append((score, hyp))
            if len(self) > self.num_beams:
                sorted_scores = sorted([(s, idx) for idx, (s, _) in enumerate(self.beams)])
                del self.beams[sorted_scores[0][1]]
                self.worst_score = sorted_scores[1][0]
            else:
                self.worst_score = min(score, self.worst_score)

    def is_done(self, best_sum_logprobs: float, cur_len: int) -> bool:
        if len(self) < self.num_beams:
            return False
        if self.early_stopping:
            return True
        return self.worst_score >= best_sum_logprobs / (cur_len ** self.length_penalty)


@torch.no_grad()
def beam_search(
    model: Seq2SeqMoEForConditionalGeneration,
    input_ids: torch.Tensor,
    attention_mask: Optional[torch.Tensor] = None,
    num_beams: int = 4,
    max_new_tokens: int = 128,
    length_penalty: float = 1.0,
) -> List[torch.Tensor]:
    """Beam search over the decoder; returns the best hypothesis of each input."""
    config = model.config
    batch_size = input_ids.shape[0]
    device = input_ids.device
    input_ids = input_ids.repeat_interleave(num_beams, dim=0)
    if attention_mask is not None:
        attention_mask = attention_mask.repeat_interleave(num_beams, dim=0)

    encoder_hidden_states = model.get_encoder()(input_ids, attention_mask)
    cache = KVCache(config.num_decoder_layers)
    hypotheses = [BeamHypotheses(num_beams, length_penalty, early_stopping=True) for _ in range(batch_size)]
    beam_scores = torch.zeros(batch_size, num_beams, device=device)
    beam_scores[:, 1:] = -1e9  # only the first beam is live at the start
    beam_scores = beam_scores.view(-1)
    sequences = torch.full((batch_size * num_beams, 1), config.decoder_start_token_id, dtype=torch.long, device=device)
    done = [False] * batch_size

    for step in range(max_new_tokens):
        hidden_states = model.get_decoder()(sequences[:, -1:], encoder_hidden_states, attention_mask, cache)
        logits = model.lm_head(hidden_states[:, -1, :]).float()
        log_probs = F.log_softmax(logits, dim=-1) + beam_scores[:, None]
        vocab_size = log_probs.shape[-1]
        log_probs = log_probs.view(batch_size, num_beams * vocab_size)
        top_scores, top_ids = torch.topk(log_probs, 2 * num_beams, dim=1)
        beam_origin = top_ids // vocab_size
        token_ids = top_ids % vocab_size

        next_scores = []
        next_tokens = []
        next_origins = []
        for b in range(batch_size):
            if done[b]:
                next_scores.extend([0.0] * num_beams)
                next_tokens.extend([config.pad_token_id] * num_beams)
                next_origins.extend([b * num_beams] * num_beams)
                continue
            kept = 0
            for score, token, origin in zip(top_scores[b], token_ids[b], beam_origin[b]):
                row = b * num_beams + int(origin)
                if int(token) == config.eos_token_id:
                    hypotheses[b].add(sequences[row].clone(), float(score))
                else:
                    next_scores.append(float(score))
                    next_tokens.append(int(token))
                    next_origins.append(row)
                    kept += 1
                if kept == num_beams:
                    break
            done[b] = hypotheses[b].is_done(float(top_scores[b].max()), step + 1)
        if all(done):
            break
        beam_idx = torch.tensor(next_origins, device=device)
        cache.reorder(beam_idx)
        sequences = torch.cat([sequences[beam_idx], torch.tensor(next_tokens, device=device)[:, None]], dim=-1)
        beam_scores = torch.tensor(next_scores, device=device)

    best = []
    for b in range(batch_size):
        if len(hypotheses[b]) == 0:
            best.append(sequences[b * num_beams])
        else:
            best.append(max(hypotheses[b].beams, key=lambda item: item[0])[1])
    return best


# ---------------------------------------------------------------------------------------------
# Speech front end (speech translation fine-tuning)
# ---------------------------------------------------------------------------------------------


class Conv1dSubsampler(nn.Module):
    """Strided 1-D convolutions that turn 80-dim filterbank frames into d_model vectors.

    Each layer halves the frame rate (stride 2) and doubles the channels before a GLU halves them
    again, as in fairseq's S2T transformer: 10 ms frames -> 40 ms encoder positions with two
    layers.
    """

    def __init__(self, in_channels: int, mid_channels: int, out_channels: int, kernel_sizes: Sequence[int] = (5, 5)):
        super().__init__()
        self.n_layers = len(kernel_sizes)
        self.conv_layers = nn.ModuleList(
            nn.Conv1d(
                in_channels if i == 0 else mid_channels // 2,
                mid_channels if i < self.n_layers - 1 else out_channels * 2,
                k,
                stride=2,
                padding=k // 2,
            )
            for i, k in enumerate(kernel_sizes)
        )

    def output_lengths(self, input_lengths: torch.Tensor) -> torch.Tensor:
        out = input_lengths.clone()
        for _ in range(self.n_layers):
            out = ((out.float() - 1) / 2 + 1).floor().long()
        return out

    def forward(self, features: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        x = features.transpose(1, 2).contiguous()  # [B, T, C] -> [B, C, T]
        for conv in self.conv_layers:
            x = conv(x)
            x = F.glu(x, dim=1)
        return x.transpose(1, 2).contiguous(), self.output_lengths(lengths)


def lengths_to_padding_mask(lengths: torch.Tensor, max_length: Optional[int] = None) -> torch.Tensor:
    """[B] lengths -> [B, T] 1/0 mask (1 = real frame)."""
    max_length = max_length if max_length is not None else int(lengths.max())
    positions = torch.arange(max_length, device=lengths.device)[None, :]
    return (positions < lengths[:, None]).long()


class Seq2SeqMoEForSpeechTranslation(Seq2SeqMoEPreTrainedModel):
    """Speech encoder front end + the text model's encoder blocks and decoder.

    The subsampler replaces the token embedding of the encoder; everything after it is loaded from
    the text checkpoint, which is why the encoder is built without an embedding.
    """

    def __init__(self, config: Seq2SeqMoEConfig, num_mel_bins: int = 80, conv_channels: int = 1024):
        super().__init__(config)
        self.subsample = Conv1dSubsampler(num_mel_bins, conv_channels, config.d_model)
        self.encoder = Seq2SeqMoEEncoder(config, embed_tokens=None)
        self.shared = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_token_id)
        self.decoder = Seq2SeqMoEDecoder(config, self.shared)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.post_init()

    def encode(self, features: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        hidden_states, lengths = self.subsample(features, lengths)
        mask = lengths_to_padding_mask(lengths, hidden_states.shape[1])
        padding = expand_padding_mask(mask, hidden_states.dtype)
        seq_length = hidden_states.shape[1]
        position_bias = None
        if self.encoder.relative_bias is not None:
            position_bias = self.encoder.relative_bias(seq_length, seq_length, device=hidden_states.device)
        for layer in self.encoder.layers:
            hidden_states = layer(hidden_states, None, padding, position_bias)
        return self.encoder.norm(hidden_states), mask

    def forward(self, features: torch.Tensor, lengths: torch.Tensor, decoder_input_ids: torch.Tensor) -> torch.Tensor:
        encoder_hidden_states, mask = self.encode(features, lengths)
        hidden_states = self.decoder(decoder_input_ids, encoder_hidden_states, mask)
        return self.lm_head(hidden_states)


# ---------------------------------------------------------------------------------------------
# Adapters (LoRA) and fine-tuning helpers
# ---------------------------------------------------------------------------------------------


class LoRALinear(nn.Module):
    """A frozen linear layer plus a trainable low-rank update: W x + (alpha / r) B A x.

    ``lora_A`` starts random and ``lora_B`` at zero, so the wrapped layer computes exactly what
    the base layer did until fine-tuning moves B.
    """

    def __init__(self, base: nn.Linear, rank: int = 16, alpha: float = 32.0, dropout: float = 0.05):
        super().__init__()
        self.base = base
        self.rank = rank
        self.scaling = alpha / rank
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        self.lora_dropout = nn.Dropout(dropout)
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        for p in self.base.parameters():
            p.requires_grad = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        update = F.linear(F.linear(self.lora_dropout(x), self.lora_A), self.lora_B)
        return self.base(x) + update * self.scaling

    @torch.no_grad()
    def merge(self) -> nn.Linear:
        """Folds the update into the base weight and returns the plain layer."""
        self.base.weight += (self.lora_B @ self.lora_A) * self.scaling
        return self.base


def apply_lora(model: nn.Module, target_names: Sequence[str] = ("q_proj", "v_proj"), rank: int = 16,
               alpha: float = 32.0) -> int:
    """Wraps every ``nn.Linear`` whose attribute name is in ``target_names``; returns the count."""
    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if name in target_names and isinstance(child, nn.Linear):
                setattr(module, name, LoRALinear(child, rank=rank, alpha=alpha))
                replaced += 1
    return replaced


def merge_lora(model: nn.Module) -> int:
    """Replaces every LoRALinear by its merged base layer; returns the count."""
    merged = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, LoRALinear):
                setattr(module, name, child.merge())
                merged += 1
    return merged


def parameter_groups(model: nn.Module, weight_decay: float = 0.1,
                     no_decay_names: Sequence[str] = ("bias", "norm", "embed", "shared")) -> List[Dict[str, Any]]:
    """AdamW groups: no weight decay for biases, norms and embeddings."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim < 2 or any(key in name for key in no_decay_names):
            no_decay.append(param)
        else:
            decay.append(param)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def cosine_schedule(step: int, warmup_steps: int, total_steps: int, min_ratio: float = 0.1) -> float:
    """Linear warm-up then cosine decay to ``min_ratio`` of the peak learning rate."""
    if step < warmup_steps:
        return (step + 1) / max(1, warmup_steps)
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    progress = min(progress, 1.0)
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def inverse_sqrt_schedule(step: int, warmup_steps: int = 10000) -> float:
    """T5's schedule: constant during warm-up, then 1 / sqrt(step)."""
    return 1.0 / math.sqrt(max(step, warmup_steps))


def freeze_except(model: nn.Module, trainable: Sequence[str]) -> List[str]:
    """Freezes every parameter whose name does not contain one of ``trainable``."""
    kept = []
    for name, param in model.named_parameters():
        param.requires_grad = any(key in name for key in trainable)
        if param.requires_grad:
            kept.append(name)
    return kept


def resize_token_embeddings(model: Seq2SeqMoEForConditionalGeneration, new_num_tokens: int,
                            pad_to_multiple_of: int = 128) -> nn.Embedding:
    """Grows (or shrinks) the shared embedding and the head; new rows get the mean embedding."""
    new_num_tokens = find_multiple(new_num_tokens, pad_to_multiple_of)
    old = model.model.shared
    old_num_tokens, dim = old.weight.shape
    new = ScaledEmbedding(new_num_tokens, dim, padding_idx=old.padding_idx, scale=model.config.scale_embeddings)
    new.to(old.weight.device, dtype=old.weight.dtype)
    n = min(old_num_tokens, new_num_tokens)
    with torch.no_grad():
        new.weight[:n] = old.weight[:n]
        if new_num_tokens > old_num_tokens:
            new.weight[old_num_tokens:] = old.weight.mean(dim=0, keepdim=True)
    model.model.set_input_embeddings(new)
    if model.config.tie_word_embeddings:
        model.lm_head = nn.Linear(dim, new_num_tokens, bias=False)
        model.lm_head.weight = new.weight
    model.config.vocab_size = new_num_tokens
    return new


# ---------------------------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------------------------

# Parameter names of format versions 1 and 2 -> current names. Version 1 used T5's "SelfAttention"
# / "EncDecAttention" / "DenseReluDense" names; version 2 fused q/k/v.
_LEGACY_RENAMES = [
    ("layer.0.SelfAttention.q", "self_attn.q_proj"),
    ("layer.0.SelfAttention.k", "self_attn.k_proj"),
    ("layer.0.SelfAttention.v", "self_attn.v_proj"),
    ("layer.0.SelfAttention.o", "self_attn.o_proj"),
    ("layer.1.EncDecAttention.q", "cross_attn.q_proj"),
    ("layer.1.EncDecAttention.k", "cross_attn.k_proj"),
    ("layer.1.EncDecAttention.v", "cross_attn.v_proj"),
    ("layer.1.EncDecAttention.o", "cross_attn.o_proj"),
    ("DenseReluDense.wi_0", "mlp.gate_proj"),
    ("DenseReluDense.wi_1", "mlp.up_proj"),
    ("DenseReluDense.wo", "mlp.down_proj"),
    ("layer.0.layer_norm", "input_layernorm"),
    ("final_layer_norm", "norm"),
    ("block.", "layers."),
]


def _remap_legacy_state_dict(state_dict: Dict[str, torch.Tensor], version: int,
                             config: Seq2SeqMoEConfig) -> Dict[str, torch.Tensor]:
    """Renames (and splits fused) tensors of older checkpoint formats."""
    if version >= CHECKPOINT_FORMAT_VERSION:
        return state_dict
    remapped = {}
    for key, value in state_dict.items():
        new_key = key
        for old, new in _LEGACY_RENAMES:
            new_key = new_key.replace(old, new)
        if version == 2 and new_key.endswith("self_attn.qkv_proj.weight"):
            q_size = config.num_heads * config.head_dim
            kv_size = config.num_kv_heads * config.head_dim
            q, k, v = value.split([q_size, kv_size, kv_size], dim=0)
            prefix = new_key[: -len("qkv_proj.weight")]
            remapped[prefix + "q_proj.weight"] = q
            remapped[prefix + "k_proj.weight"] = k
            remapped[prefix + "v_proj.weight"] = v
            continue
        remapped[new_key] = value
    return remapped


def load_checkpoint(model: Seq2SeqMoEForConditionalGeneration, path: str, strict: bool = True) -> List[str]:
    """Loads a checkpoint written by ``save_checkpoint`` (any format version)."""
    payload = torch.load(path, map_location="cpu")
    version = payload.get("format_version", 1)
    state_dict = _remap_legacy_state_dict(payload["model"], version, model.config)
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = [k for k in missing if not (model.config.tie_word_embeddings and k == "lm_head.weight")]
    if strict and (missing or unexpected):
        raise RuntimeError(f"checkpoint mismatch: missing {missing[:8]}, unexpected {unexpected[:8]}")
    return missing


def save_checkpoint(model: Seq2SeqMoEForConditionalGeneration, path: str, step: int = 0):
    torch.save(
        {
            "format_version": CHECKPOINT_FORMAT_VERSION,
            "config": model.config.to_dict(),
            "step": step,
            "model": model.state_dict(),
        },
        path,
    )


def describe(model: nn.Module) -> str:
    """One line per top-level child: name, class, parameter count."""
    lines = [f"{type(model).__name__}: {human_count(count_parameters(model))} parameters"]
    for name, child in model.named_children():
        lines.append(f"  {name:<24} {type(child).__name__:<32} {human_count(count_parameters(child))}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Weight-only int8 inference
# ---------------------------------------------------------------------------------------------


class Int8WeightOnlyLinear(nn.Module):
    """Linear layer with int8 weights and one bf16 scale per output channel.

    The weight is dequantised on the fly: y = x (W_q * s)^T. Halves the memory of the dense layers
    at serving time with no calibration data (absmax per row).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = False):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.register_buffer("weight", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scales", torch.ones(out_features, dtype=torch.bfloat16))
        if bias:
            self.register_buffer("bias", torch.zeros(out_features, dtype=torch.bfloat16))
        else:
            self.bias = None

    @classmethod
    def from_linear(cls, linear: nn.Linear) -> "Int8WeightOnlyLinear":
        layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None)
        with torch.no_grad():
            w = linear.weight.float()
            scales = w.abs().amax(dim=1).clamp(min=1e-8) / 127.0
            layer.weight.copy_(torch.round(w / scales[:, None]).clamp(-128, 127).to(torch.int8))
            layer.scales.copy_(scales.to(torch.bfloat16))
            if linear.bias is not None:
                layer.bias.copy_(linear.bias.to(torch.bfloat16))
        return layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight.to(x.dtype) * self.scales[:, None].to(x.dtype)
        return F.linear(x, weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def quantize_int8_(model: nn.Module, skip: Sequence[str] = ("lm_head", "router", "shared_gate")) -> int:
    """Replaces the dense linear layers in place; returns how many were converted."""
    converted = 0
    for module_name, module in list(model.named_modules()):
        for name, child in list(module.named_children()):
            full_name = f"{module_name}.{name}" if module_name else name
            if any(key in full_name for key in skip):
                continue
            if isinstance(child, nn.Linear):
                setattr(module, name, Int8WeightOnlyLinear.from_linear(child))
                converted += 1
    return converted


# ---------------------------------------------------------------------------------------------
# Pre-training data: T5 span corruption
# ---------------------------------------------------------------------------------------------


def random_spans_noise_mask(length: int, noise_density: float = 0.15, mean_noise_span_length: float = 3.0,
                            generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """Boolean mask of ``length`` positions, ~noise_density of them in spans (T5 objective)."""
    num_noise_tokens = int(round(length * noise_density))
    num_noise_tokens = min(max(num_noise_tokens, 1), length - 1)
    num_noise_spans = max(int(round(num_noise_tokens / mean_noise_span_length)), 1)
    num_nonnoise_tokens = length - num_noise_tokens

    def _random_segmentation(num_items: int, num_segments: int) -> torch.Tensor:
        order = torch.randperm(num_items - 1, generator=generator)
        first_in_segment = torch.zeros(num_items, dtype=torch.long)
        first_in_segment[order[: num_segments - 1] + 1] = 1
        segment_id = torch.cumsum(first_in_segment, dim=0)
        return torch.bincount(segment_id, minlength=num_segments)

    noise_span_lengths = _random_segmentation(num_noise_tokens, num_noise_spans)
    nonnoise_span_lengths = _random_segmentation(num_nonnoise_tokens, num_noise_spans)
    interleaved = torch.stack([nonnoise_span_lengths, noise_span_lengths], dim=1).reshape(-1)
    span_starts = torch.cumsum(interleaved, dim=0)[:-1]
    span_start_indicator = torch.zeros(length, dtype=torch.long)
    span_start_indicator[span_starts] = 1
    span_num = torch.cumsum(span_start_indicator, dim=0)
    return span_num % 2 == 1


def span_corrupt(tokens: torch.Tensor, sentinel_start: int, eos_token_id: int,
                 noise_density: float = 0.15) -> Tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets) for one sequence: noise spans replaced by sentinels in the input, and the
    targets list each sentinel followed by the span it replaced.
    """
    mask = random_spans_noise_mask(tokens.shape[0], noise_density)
    inputs, targets = [], []
    sentinel = sentinel_start
    previous_noise = False
    for token, noisy in zip(tokens.tolist(), mask.tolist()):
        if noisy:
            if not previous_noise:
                inputs.append(sentinel)
                targets.append(sentinel)
                sentinel -= 1
            targets.append(token)
        else:
            inputs.append(token)
        previous_noise = noisy
    inputs.append(eos_token_id)
    targets.append(eos_token_id)
    return torch.tensor(inputs, dtype=torch.long), torch.tensor(targets, dtype=torch.long)


class Seq2SeqCollator:
    """Pads a list of (inputs, targets) pairs into a batch for ``compute_loss``."""

    def __init__(self, pad_token_id: int = 0, label_pad_id: int = -100, pad_to_multiple_of: int = 8):
        self.pad_token_id = pad_token_id
        self.label_pad_id = label_pad_id
        self.pad_to_multiple_of = pad_to_multiple_of

    def _pad(self, sequences: List[torch.Tensor], value: int) -> torch.Tensor:
        longest = find_multiple(max(s.shape[0] for s in sequences), self.pad_to_multiple_of)
        batch = torch.full((len(sequences), longest), value, dtype=torch.long)
        for i, s in enumerate(sequences):
            batch[i, : s.shape[0]] = s
        return batch

    def __call__(self, examples: List[Tuple[torch.Tensor, torch.Tensor]]) -> Dict[str, torch.Tensor]:
        input_ids = self._pad([inputs for inputs, _ in examples], self.pad_token_id)
        labels = self._pad([targets for _, targets in examples], self.label_pad_id)
        return {
            "input_ids": input_ids,
            "attention_mask": (input_ids != self.pad_token_id).long(),
            "labels": labels,
        }


def estimate_flops_per_token(config: Seq2SeqMoEConfig, source_length: int = 512, target_length: int = 128) -> float:
    """Forward FLOPs per target token (2 * multiply-adds), counting only the active experts."""
    d = config.d_model
    attn = 2 * d * (config.inner_dim + 2 * config.kv_dim) + 2 * config.inner_dim * d
    dense_mlp = 2 * 3 * d * config.d_ff
    moe = config.moe
    sparse_mlp = 2 * 3 * d * (moe.top_k * moe.expert_ffn_dim + moe.num_shared_experts * moe.shared_ffn_dim)
    encoder = config.num_encoder_layers * (attn + dense_mlp) * source_length / target_length
    decoder = 0.0
    for i in range(config.num_decoder_layers):
        decoder += 2 * attn  # self + cross
        decoder += sparse_mlp if moe.is_sparse(i) else dense_mlp
    head = 2 * d * config.vocab_size
    return encoder + decoder + head


# ---------------------------------------------------------------------------------------------
# Published sizes
# ---------------------------------------------------------------------------------------------

PRESETS: Dict[str, Seq2SeqMoEConfig] = {
    # 0.5B parameters: ablations and CI
    "small": Seq2SeqMoEConfig(
        d_model=1024,
        d_ff=2816,
        num_heads=16,
        num_kv_heads=4,
        head_dim=64,
        cross_num_kv_heads=16,
        num_encoder_layers=12,
        num_decoder_layers=12,
        moe=MoEConfig(num_experts=8, top_k=2, expert_ffn_dim=1408, shared_ffn_dim=1408),
    ),
    # 4.7B parameters: the default
    "base": Seq2SeqMoEConfig(),
    # 28B parameters
    "large": Seq2SeqMoEConfig(
        d_model=4096,
        d_ff=11008,
        num_heads=32,
        num_kv_heads=8,
        head_dim=128,
        cross_num_kv_heads=8,
        num_encoder_layers=32,
        num_decoder_layers=32,
        decoder_block_type="sandwich",
        moe=MoEConfig(num_experts=16, top_k=2, expert_ffn_dim=5632, shared_ffn_dim=5632),
    ),
}


def build_model(name: str = "base", **overrides) -> Seq2SeqMoEForConditionalGeneration:
    """The model of a preset, with optional config overrides (``build_model("small", d_ff=4096)``)."""
    config = PRESETS[name]
    if overrides:
        config = config.replace(**overrides)
    return Seq2SeqMoEForConditionalGeneration(config)


# The configuration this file is served with (the "base" preset, written out), and the model.
config = Seq2SeqMoEConfig(
    vocab_size=32128,
    d_model=2048,
    d_ff=5632,
    num_heads=32,
    num_kv_heads=8,
    head_dim=64,
    num_encoder_layers=24,
    num_decoder_layers=24,
    moe=MoEConfig(num_experts=8, top_k=2, expert_ffn_dim=4096, shared_ffn_dim=4096),
)
model = Seq2SeqMoEForConditionalGeneration(config)
