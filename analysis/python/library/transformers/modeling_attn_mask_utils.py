# shardlens' model of transformers.modeling_attn_mask_utils (not the library itself): the older 4D mask helpers.
# Masks are additive floats (0 where attended, dtype min where not), shaped (batch, 1, query_length, key_length).
import torch


def _expand_mask(mask, dtype, tgt_len=None):
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


def _make_causal_mask(input_ids_shape, dtype, device, past_key_values_length=0, sliding_window=None):
    bsz, tgt_len = input_ids_shape[0], input_ids_shape[1]
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
    mask_cond = torch.arange(mask.size(-1), device=device)
    mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)
    if past_key_values_length > 0:
        mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype, device=device), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)


class AttentionMaskConverter:
    def __init__(self, is_causal, sliding_window=None):
        self.is_causal = is_causal
        self.sliding_window = sliding_window

    def to_causal_4d(self, batch_size, query_length, key_value_length, dtype, device="cpu"):
        past_key_values_length = key_value_length - query_length
        return _make_causal_mask((batch_size, query_length), dtype, device, past_key_values_length, self.sliding_window)

    def to_4d(self, attention_mask_2d, query_length, dtype, key_value_length=None):
        input_shape = (attention_mask_2d.shape[0], query_length)
        expanded = _expand_mask(attention_mask_2d, dtype, tgt_len=query_length)
        if self.is_causal and query_length > 1:
            past_key_values_length = key_value_length - query_length
            causal = _make_causal_mask(input_shape, dtype, attention_mask_2d.device, past_key_values_length, self.sliding_window)
            expanded = causal.masked_fill(expanded.to(torch.bool), torch.finfo(dtype).min)
        return expanded

    @staticmethod
    def _unmask_unattended(expanded_mask, min_dtype):
        return expanded_mask

    @staticmethod
    def _ignore_causal_mask_sdpa(attention_mask, inputs_embeds, past_key_values_length, sliding_window=None, is_training=False):
        # the real check also skips an all-ones padding mask, which needs its values: only the no-mask case here
        return attention_mask is None and sliding_window is None


def _prepare_4d_attention_mask(mask, dtype, tgt_len=None):
    return _expand_mask(mask, dtype, tgt_len)


def _prepare_4d_attention_mask_for_sdpa(mask, dtype, tgt_len=None):
    return _expand_mask(mask, dtype, tgt_len)


def _prepare_4d_causal_attention_mask(attention_mask, input_shape, inputs_embeds, past_key_values_length, sliding_window=None):
    converter = AttentionMaskConverter(is_causal=True, sliding_window=sliding_window)
    key_value_length = input_shape[-1] + past_key_values_length
    if attention_mask is not None and attention_mask.dim() == 2:
        return converter.to_4d(attention_mask, input_shape[-1], inputs_embeds.dtype, key_value_length)
    if attention_mask is not None and attention_mask.dim() == 4:
        return attention_mask
    return converter.to_causal_4d(input_shape[0], input_shape[-1], key_value_length, inputs_embeds.dtype, inputs_embeds.device)


def _prepare_4d_causal_attention_mask_for_sdpa(attention_mask, input_shape, inputs_embeds, past_key_values_length, sliding_window=None):
    if attention_mask is None and sliding_window is None:
        return None
    return _prepare_4d_causal_attention_mask(attention_mask, input_shape, inputs_embeds, past_key_values_length, sliding_window)
