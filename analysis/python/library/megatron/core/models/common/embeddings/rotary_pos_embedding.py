# shardlens' model of megatron.core.models.common.embeddings.rotary_pos_embedding (not the library itself).
import torch
from torch import nn

from .... import parallel_state


class RotaryEmbedding(nn.Module):
    """forward(max_seq_len) -> frequencies (max_seq_len, 1, 1, dim). inv_freq is a plain attribute, not a buffer."""

    def __init__(self, kv_channels, rotary_percent, rotary_interleaved=False, seq_len_interpolation_factor=None,
                 rotary_base=10000):
        super().__init__()
        dim = kv_channels
        if rotary_percent < 1.0:
            dim = int(dim * rotary_percent)
        self.rotary_interleaved = rotary_interleaved
        self.seq_len_interpolation_factor = seq_len_interpolation_factor
        self.inv_freq = 1.0 / (rotary_base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))

    def forward(self, max_seq_len, offset=0):
        seq = torch.arange(max_seq_len, device=self.inv_freq.device, dtype=self.inv_freq.dtype) + offset
        if self.seq_len_interpolation_factor is not None:
            seq = seq * (1 / self.seq_len_interpolation_factor)
        freqs = torch.outer(seq, self.inv_freq)
        if not self.rotary_interleaved:
            emb = torch.cat((freqs, freqs), dim=-1)
        else:
            emb = torch.stack((freqs.view(-1, 1), freqs.view(-1, 1)), dim=-1).view(freqs.shape[0], -1)
        return emb[:, None, None, :]

    def get_rotary_seq_len(self, inference_params, transformer, transformer_input, transformer_config):
        if inference_params is not None:
            return inference_params.max_sequence_length
        if transformer.input_tensor is not None:
            rotary_seq_len = transformer.input_tensor.size(0)
        else:
            rotary_seq_len = transformer_input.size(0)
        if transformer_config.sequence_parallel:
            rotary_seq_len *= transformer_config.tensor_model_parallel_size
        rotary_seq_len *= transformer_config.context_parallel_size
        return rotary_seq_len


def _rotate_half(x, rotary_interleaved):
    if not rotary_interleaved:
        x1, x2 = torch.chunk(x, 2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x_new = torch.stack((-x2, x1), dim=-1)
    return x_new.view(x_new.shape[0], x_new.shape[1], x_new.shape[2], -1)


def apply_rotary_pos_emb_bshd(t, freqs, rotary_interleaved=False):
    rot_dim = freqs.shape[-1]
    t_rot = t[..., :rot_dim]
    t_pass = t[..., rot_dim:]
    cos_ = torch.cos(freqs).to(t.dtype)
    sin_ = torch.sin(freqs).to(t.dtype)
    t_rot = (t_rot * cos_) + (_rotate_half(t_rot, rotary_interleaved) * sin_)
    return torch.cat((t_rot, t_pass), dim=-1)


def apply_rotary_pos_emb(t, freqs, config, cu_seqlens=None):
    """t (s, b, h, d) rotated by freqs (s, 1, 1, rot_dim)."""
    return apply_rotary_pos_emb_bshd(t, freqs, rotary_interleaved=config.rotary_interleaved)
