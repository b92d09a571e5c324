# shardlens' model of transformers.masking_utils (not the library itself): the attention masks a decoder builds.
# With sdpa and no padding mask the real library returns None (attention runs with is_causal); otherwise a
# (batch, 1, query_length, kv_length) mask: boolean for sdpa, additive float (0 / dtype min) for eager.
import torch


def _kv_length(past_key_values, input_embeds):
    past = 0 if past_key_values is None else past_key_values.get_seq_length()
    return past, past + input_embeds.shape[1]


def _build_mask(config, input_embeds, attention_mask, cache_position, past_key_values, sliding_window=None):
    implementation = config._attn_implementation
    if attention_mask is not None and attention_mask.dim() == 4:
        return attention_mask
    if implementation in ("flash_attention_2", "flash_attention_3"):
        return attention_mask
    batch_size = input_embeds.shape[0]
    query_length = input_embeds.shape[1]
    past, kv_length = _kv_length(past_key_values, input_embeds)
    # As _ignore_causal_mask_sdpa: no padding mask, one query token or as many as keys, and a sliding window (if any)
    # wider than the keys: sdpa's is_causal does it all.
    if (implementation == "sdpa" and attention_mask is None and (query_length == 1 or kv_length == query_length)
            and (sliding_window is None or kv_length < sliding_window)):
        return None
    if cache_position is None:
        cache_position = torch.arange(past, past + query_length, device=input_embeds.device)
    kv_idx = torch.arange(kv_length, device=input_embeds.device)
    allowed = kv_idx[None, :] <= cache_position[:, None]
    if sliding_window is not None:
        allowed = allowed & (kv_idx[None, :] > cache_position[:, None] - sliding_window)
    mask = allowed[None, None, :, :].expand(batch_size, 1, query_length, kv_length)
    if attention_mask is not None:
        mask = mask & attention_mask[:, None, None, :kv_length].to(torch.bool)
    if implementation == "eager":
        min_value = torch.finfo(input_embeds.dtype).min
        return torch.zeros(mask.shape, dtype=input_embeds.dtype, device=input_embeds.device).masked_fill(~mask, min_value)
    return mask


def create_causal_mask(config, input_embeds, attention_mask, cache_position, past_key_values, position_ids=None,
                       or_mask_function=None, and_mask_function=None):
    return _build_mask(config, input_embeds, attention_mask, cache_position, past_key_values)


def create_sliding_window_causal_mask(config, input_embeds, attention_mask, cache_position, past_key_values,
                                      position_ids=None, or_mask_function=None, and_mask_function=None):
    return _build_mask(config, input_embeds, attention_mask, cache_position, past_key_values,
                       sliding_window=getattr(config, "sliding_window", None))


def create_chunked_causal_mask(config, input_embeds, attention_mask, cache_position, past_key_values,
                               position_ids=None, or_mask_function=None, and_mask_function=None):
    return _build_mask(config, input_embeds, attention_mask, cache_position, past_key_values)


def create_bidirectional_mask(config, input_embeds, attention_mask, encoder_hidden_states=None, **kwargs):
    if attention_mask is None or config._attn_implementation in ("flash_attention_2", "flash_attention_3"):
        return attention_mask
    mask = attention_mask[:, None, None, :].to(torch.bool)
    if config._attn_implementation == "eager":
        min_value = torch.finfo(input_embeds.dtype).min
        return torch.zeros(mask.shape, dtype=input_embeds.dtype, device=input_embeds.device).masked_fill(~mask, min_value)
    return mask


def create_masks_for_generate(config, input_embeds, attention_mask, cache_position, past_key_values, position_ids=None, **kwargs):
    return create_causal_mask(config, input_embeds, attention_mask, cache_position, past_key_values, position_ids)


def causal_mask_function(batch_idx, head_idx, q_idx, kv_idx):
    return kv_idx <= q_idx


def sliding_window_causal_mask_function(sliding_window):
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (kv_idx > q_idx - sliding_window)

    return inner_mask
