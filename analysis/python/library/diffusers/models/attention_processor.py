# shardlens' model of diffusers.models.attention_processor (not the library itself): the classic Attention module and
# shardlens: partial model (an installed diffusers has the whole module: it is read instead when on the search path)
# the processors that run its forward.
import torch
import torch.nn.functional as F
from torch import nn

from _shardlens_common.attributes import set_attributes

from ..utils.torch_utils import maybe_allow_in_graph


class SpatialNorm(nn.Module):
    def __init__(self, f_channels, zq_channels):
        super().__init__()
        self.norm_layer = nn.GroupNorm(num_channels=f_channels, num_groups=32, eps=1e-6, affine=True)
        self.conv_y = nn.Conv2d(zq_channels, f_channels, kernel_size=1, stride=1, padding=0)
        self.conv_b = nn.Conv2d(zq_channels, f_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, f, zq):
        f_size = f.shape[-2:]
        zq = F.interpolate(zq, size=f_size, mode="nearest")
        norm_f = self.norm_layer(f)
        return norm_f * self.conv_y(zq) + self.conv_b(zq)


def _qk_norm(kind, dim, eps, elementwise_affine):
    from .normalization import FP32LayerNorm, LpNorm, RMSNorm

    if kind == "layer_norm":
        return nn.LayerNorm(dim, eps=eps, elementwise_affine=elementwise_affine)
    if kind == "fp32_layer_norm":
        return FP32LayerNorm(dim, elementwise_affine=False, bias=False, eps=eps)
    if kind == "rms_norm":
        return RMSNorm(dim, eps=eps, elementwise_affine=elementwise_affine)
    if kind == "l2":
        return LpNorm(p=2, dim=-1, eps=eps)
    raise ValueError(f"unknown qk_norm: {kind}")


@maybe_allow_in_graph
class Attention(nn.Module):
    def __init__(self, query_dim, cross_attention_dim=None, heads=8, kv_heads=None, dim_head=64, dropout=0.0,
                 bias=False, upcast_attention=False, upcast_softmax=False, cross_attention_norm=None,
                 cross_attention_norm_num_groups=32, qk_norm=None, added_kv_proj_dim=None, added_proj_bias=True,
                 norm_num_groups=None, spatial_norm_dim=None, out_bias=True, scale_qk=True,
                 only_cross_attention=False, eps=1e-5, rescale_output_factor=1.0, residual_connection=False,
                 _from_deprecated_attn_block=False, processor=None, out_dim=None, out_context_dim=None,
                 context_pre_only=None, pre_only=False, elementwise_affine=True, is_causal=False):
        super().__init__()
        self.inner_dim = out_dim if out_dim is not None else dim_head * heads
        self.inner_kv_dim = self.inner_dim if kv_heads is None else dim_head * kv_heads
        set_attributes(self, query_dim=query_dim, use_bias=bias, is_cross_attention=cross_attention_dim is not None)
        self.cross_attention_dim = cross_attention_dim if cross_attention_dim is not None else query_dim
        set_attributes(self, upcast_attention=upcast_attention, upcast_softmax=upcast_softmax,
                       rescale_output_factor=rescale_output_factor, residual_connection=residual_connection,
                       dropout=dropout, fused_projections=False)
        self.out_dim = out_dim if out_dim is not None else query_dim
        self.out_context_dim = out_context_dim if out_context_dim is not None else query_dim
        set_attributes(self, context_pre_only=context_pre_only, pre_only=pre_only, is_causal=is_causal,
                       _from_deprecated_attn_block=_from_deprecated_attn_block, scale_qk=scale_qk)
        self.scale = dim_head**-0.5 if self.scale_qk else 1.0
        self.heads = out_dim // dim_head if out_dim is not None else heads
        set_attributes(self, sliceable_head_dim=heads, added_kv_proj_dim=added_kv_proj_dim,
                       only_cross_attention=only_cross_attention)
        if self.added_kv_proj_dim is None and self.only_cross_attention:
            raise ValueError("`only_cross_attention` can only be set to True if `added_kv_proj_dim` is not None.")

        self.group_norm = None
        if norm_num_groups is not None:
            self.group_norm = nn.GroupNorm(num_channels=query_dim, num_groups=norm_num_groups, eps=eps, affine=True)
        self.spatial_norm = None
        if spatial_norm_dim is not None:
            self.spatial_norm = SpatialNorm(f_channels=query_dim, zq_channels=spatial_norm_dim)

        self.norm_q = None
        self.norm_k = None
        if qk_norm == "layer_norm_across_heads":
            self.norm_q = nn.LayerNorm(dim_head * heads, eps=eps)
            self.norm_k = nn.LayerNorm(dim_head * kv_heads, eps=eps)
        elif qk_norm == "rms_norm_across_heads":
            from .normalization import RMSNorm

            self.norm_q = RMSNorm(dim_head * heads, eps=eps)
            self.norm_k = RMSNorm(dim_head * kv_heads, eps=eps)
        elif qk_norm is not None:
            self.norm_q = _qk_norm(qk_norm, dim_head, eps, elementwise_affine)
            self.norm_k = _qk_norm(qk_norm, dim_head, eps, elementwise_affine)

        if cross_attention_norm is None:
            self.norm_cross = None
        elif cross_attention_norm == "layer_norm":
            self.norm_cross = nn.LayerNorm(self.cross_attention_dim)
        elif cross_attention_norm == "group_norm":
            channels = added_kv_proj_dim if self.added_kv_proj_dim is not None else self.cross_attention_dim
            self.norm_cross = nn.GroupNorm(num_channels=channels, num_groups=cross_attention_norm_num_groups, eps=1e-5,
                                           affine=True)
        else:
            raise ValueError(f"unknown cross_attention_norm: {cross_attention_norm}")

        self.to_q = nn.Linear(query_dim, self.inner_dim, bias=bias)
        if not self.only_cross_attention:
            self.to_k = nn.Linear(self.cross_attention_dim, self.inner_kv_dim, bias=bias)
            self.to_v = nn.Linear(self.cross_attention_dim, self.inner_kv_dim, bias=bias)
        else:
            self.to_k = None
            self.to_v = None

        self.added_proj_bias = added_proj_bias
        self.add_q_proj = None
        self.add_k_proj = None
        self.add_v_proj = None
        if self.added_kv_proj_dim is not None:
            self.add_k_proj = nn.Linear(added_kv_proj_dim, self.inner_kv_dim, bias=added_proj_bias)
            self.add_v_proj = nn.Linear(added_kv_proj_dim, self.inner_kv_dim, bias=added_proj_bias)
            if self.context_pre_only is not None:
                self.add_q_proj = nn.Linear(added_kv_proj_dim, self.inner_dim, bias=added_proj_bias)

        if not self.pre_only:
            self.to_out = nn.ModuleList([])
            self.to_out.append(nn.Linear(self.inner_dim, self.out_dim, bias=out_bias))
            self.to_out.append(nn.Dropout(dropout))
        else:
            self.to_out = None

        if self.context_pre_only is not None and not self.context_pre_only:
            self.to_add_out = nn.Linear(self.inner_dim, self.out_context_dim, bias=out_bias)
        else:
            self.to_add_out = None

        self.norm_added_q = None
        self.norm_added_k = None
        if qk_norm is not None and added_kv_proj_dim is not None:
            if qk_norm == "rms_norm_across_heads":
                from .normalization import RMSNorm

                self.norm_added_k = RMSNorm(dim_head * kv_heads, eps=eps)
            else:
                self.norm_added_q = _qk_norm(qk_norm, dim_head, eps, elementwise_affine)
                self.norm_added_k = _qk_norm(qk_norm, dim_head, eps, elementwise_affine)

        if processor is None:
            processor = AttnProcessor2_0()
        self.set_processor(processor)

    def set_processor(self, processor):
        self.processor = processor

    def get_processor(self, return_deprecated_lora=False):
        return self.processor

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None, **cross_attention_kwargs):
        return self.processor(self, hidden_states, encoder_hidden_states=encoder_hidden_states,
                              attention_mask=attention_mask, **cross_attention_kwargs)

    def batch_to_head_dim(self, tensor):
        head_size = self.heads
        batch_size, seq_len, dim = tensor.shape
        tensor = tensor.reshape(batch_size // head_size, head_size, seq_len, dim)
        return tensor.permute(0, 2, 1, 3).reshape(batch_size // head_size, seq_len, dim * head_size)

    def head_to_batch_dim(self, tensor, out_dim=3):
        head_size = self.heads
        batch_size, seq_len, dim = tensor.shape
        tensor = tensor.reshape(batch_size, seq_len, head_size, dim // head_size)
        tensor = tensor.permute(0, 2, 1, 3)
        if out_dim == 3:
            tensor = tensor.reshape(batch_size * head_size, seq_len, dim // head_size)
        return tensor

    def get_attention_scores(self, query, key, attention_mask=None):
        if attention_mask is None:
            scores = torch.bmm(query, key.transpose(-1, -2)) * self.scale
        else:
            scores = torch.baddbmm(attention_mask, query, key.transpose(-1, -2), beta=1, alpha=self.scale)
        return scores.softmax(dim=-1).to(query.dtype)

    def prepare_attention_mask(self, attention_mask, target_length, batch_size, out_dim=3):
        current_length = attention_mask.shape[-1]
        if current_length != target_length:
            attention_mask = F.pad(attention_mask, (0, target_length), value=0.0)
        if out_dim == 3:
            if attention_mask.shape[0] < batch_size * self.heads:
                attention_mask = attention_mask.repeat_interleave(self.heads, dim=0)
        elif out_dim == 4:
            attention_mask = attention_mask.unsqueeze(1)
            attention_mask = attention_mask.repeat_interleave(self.heads, dim=1)
        return attention_mask

    def norm_encoder_hidden_states(self, encoder_hidden_states):
        if isinstance(self.norm_cross, nn.LayerNorm):
            return self.norm_cross(encoder_hidden_states)
        encoder_hidden_states = encoder_hidden_states.transpose(1, 2)
        encoder_hidden_states = self.norm_cross(encoder_hidden_states)
        return encoder_hidden_states.transpose(1, 2)


def _split_heads(attn, batch_size, head_dim, query, key, value, norm_q, norm_k):
    """[batch, seq, heads * head_dim] -> [batch, heads, seq, head_dim] for q, k and v, then the q/k norms."""
    query = query.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
    key = key.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
    value = value.view(batch_size, -1, attn.heads, head_dim).transpose(1, 2)
    if norm_q is not None:
        query = norm_q(query)
    if norm_k is not None:
        key = norm_k(key)
    return query, key, value


def _sdpa_merged(attn, batch_size, head_dim, query, key, value, **kwargs):
    """F.scaled_dot_product_attention, its heads merged back to [batch, seq, heads * head_dim]."""
    hidden_states = F.scaled_dot_product_attention(query, key, value, dropout_p=0.0, is_causal=False, **kwargs)
    hidden_states = hidden_states.transpose(1, 2).reshape(batch_size, -1, attn.heads * head_dim)
    return hidden_states.to(query.dtype)


class _SelfOrCrossAttnProcessor:
    """What AttnProcessor and AttnProcessor2_0 share: images as sequences, the norms, the projections and the
    output; `attend` is the attention core between them."""

    mask_per_head = False  # the mask reshaped to [batch, heads, ...] (as scaled_dot_product_attention takes it)

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, *args, **kwargs):
        residual = hidden_states
        if attn.spatial_norm is not None:
            hidden_states = attn.spatial_norm(hidden_states, temb)
        input_ndim = hidden_states.ndim
        if input_ndim == 4:
            batch_size, channel, height, width = hidden_states.shape
            hidden_states = hidden_states.view(batch_size, channel, height * width).transpose(1, 2)
        if encoder_hidden_states is None:
            batch_size, sequence_length, _ = hidden_states.shape
        else:
            batch_size, sequence_length, _ = encoder_hidden_states.shape
        if attention_mask is not None:
            attention_mask = attn.prepare_attention_mask(attention_mask, sequence_length, batch_size)
            if self.mask_per_head:
                attention_mask = attention_mask.view(batch_size, attn.heads, -1, attention_mask.shape[-1])
        if attn.group_norm is not None:
            hidden_states = attn.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
        query = attn.to_q(hidden_states)
        if encoder_hidden_states is None:
            encoder_hidden_states = hidden_states
        elif attn.norm_cross:
            encoder_hidden_states = attn.norm_encoder_hidden_states(encoder_hidden_states)
        key = attn.to_k(encoder_hidden_states)
        value = attn.to_v(encoder_hidden_states)
        hidden_states = self.attend(attn, batch_size, query, key, value, attention_mask)
        hidden_states = attn.to_out[0](hidden_states)
        hidden_states = attn.to_out[1](hidden_states)
        if input_ndim == 4:
            hidden_states = hidden_states.transpose(-1, -2).reshape(batch_size, channel, height, width)
        if attn.residual_connection:
            hidden_states = hidden_states + residual
        return hidden_states / attn.rescale_output_factor


class AttnProcessor(_SelfOrCrossAttnProcessor):
    """Attention by explicit scores (bmm, softmax, bmm)."""

    def attend(self, attn, batch_size, query, key, value, attention_mask):
        query = attn.head_to_batch_dim(query)
        key = attn.head_to_batch_dim(key)
        value = attn.head_to_batch_dim(value)
        attention_probs = attn.get_attention_scores(query, key, attention_mask)
        hidden_states = torch.bmm(attention_probs, value)
        return attn.batch_to_head_dim(hidden_states)


class AttnProcessor2_0(_SelfOrCrossAttnProcessor):
    """Attention through F.scaled_dot_product_attention."""

    mask_per_head = True

    def attend(self, attn, batch_size, query, key, value, attention_mask):
        inner_dim = key.shape[-1]
        head_dim = inner_dim // attn.heads
        query, key, value = _split_heads(attn, batch_size, head_dim, query, key, value, attn.norm_q, attn.norm_k)
        return _sdpa_merged(attn, batch_size, head_dim, query, key, value, attn_mask=attention_mask)


class JointAttnProcessor2_0:
    """SD3-style joint attention: the image and context streams attend together, then split again."""

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, *args, **kwargs):
        residual = hidden_states
        batch_size = hidden_states.shape[0]
        query = attn.to_q(hidden_states)
        key = attn.to_k(hidden_states)
        value = attn.to_v(hidden_states)
        inner_dim = key.shape[-1]
        head_dim = inner_dim // attn.heads
        query, key, value = _split_heads(attn, batch_size, head_dim, query, key, value, attn.norm_q, attn.norm_k)
        if encoder_hidden_states is not None:
            context_query = attn.add_q_proj(encoder_hidden_states)
            context_key = attn.add_k_proj(encoder_hidden_states)
            context_value = attn.add_v_proj(encoder_hidden_states)
            context_query, context_key, context_value = _split_heads(
                attn, batch_size, head_dim, context_query, context_key, context_value, attn.norm_added_q,
                attn.norm_added_k)
            query = torch.cat([query, context_query], dim=2)
            key = torch.cat([key, context_key], dim=2)
            value = torch.cat([value, context_value], dim=2)
        hidden_states = _sdpa_merged(attn, batch_size, head_dim, query, key, value)
        if encoder_hidden_states is not None:
            sample_length = residual.shape[1]
            context_hidden = hidden_states[:, sample_length:]
            hidden_states = hidden_states[:, :sample_length]
            if not attn.context_pre_only:
                context_hidden = attn.to_add_out(context_hidden)
        hidden_states = attn.to_out[0](hidden_states)
        hidden_states = attn.to_out[1](hidden_states)
        if encoder_hidden_states is not None:
            return hidden_states, context_hidden
        return hidden_states


# a Union of every processor class in the real library: used in annotations only
AttentionProcessor = object
