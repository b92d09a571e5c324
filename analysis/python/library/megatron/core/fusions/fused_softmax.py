# shardlens' model of megatron.core.fusions.fused_softmax (not the library itself): scale, mask, softmax.
import torch
from torch import nn

from ..transformer.enums import AttnMaskType


class FusedScaleMaskSoftmax(nn.Module):
    def __init__(self, input_in_fp16, input_in_bf16, attn_mask_type, scaled_masked_softmax_fusion, mask_func,
                 softmax_in_fp32, scale):
        super().__init__()
        self.input_in_fp16 = input_in_fp16
        self.input_in_bf16 = input_in_bf16
        self.input_in_float16 = input_in_fp16 or input_in_bf16
        self.attn_mask_type = attn_mask_type
        self.scaled_masked_softmax_fusion = scaled_masked_softmax_fusion
        self.mask_func = mask_func
        self.softmax_in_fp32 = softmax_in_fp32
        self.scale = scale

    def forward(self, input, mask):
        """input (b, np, sq, sk) scores; mask True where attention is not allowed."""
        if self.input_in_float16 and self.softmax_in_fp32:
            input = input.float()
        if self.scale is not None:
            input = input * self.scale
        if self.attn_mask_type == AttnMaskType.causal and mask is None and input.shape[2] > 1:
            sq = input.shape[2]
            sk = input.shape[3]
            mask = torch.ones(sq, sk, dtype=torch.bool, device=input.device).triu(diagonal=1)[None, None, :, :]
        mask_output = self.mask_func(input, mask) if mask is not None else input
        probs = torch.nn.Softmax(dim=-1)(mask_output)
        if self.input_in_float16 and self.softmax_in_fp32:
            probs = probs.half() if self.input_in_fp16 else probs.bfloat16()
        return probs
