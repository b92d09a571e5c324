# Conformer-CTC Large (NeMo-style encoder) configured through enum.Enum choices
# and argparse: `parser.parse_args()` + `EncDecCTCModel(**vars(args))`,
# string options turned into enums with `NormType(args.conv_norm_type)`,
# `class PosEnc(str, enum.Enum)`, `enum.auto()`, an enum method returning a
# module from a dict keyed by members, `is` comparisons on members, macaron
# feed-forwards `... if macaron_style else None`, relative-position attention
# with pos_bias_u/pos_bias_v Parameters and a bias-free linear_pos, a
# positional encoding that registers its `pe` buffer lazily (`if hasattr(self,
# 'pe'): self.pe = pe else: register_buffer(...)`), ConvSubsampling whose
# output Linear width comes from `int(calc_length(torch.tensor(feat_in), ...))`
# (tensor arithmetic with torch.div/floor) and whose Sequential repeats one
# shared activation instance, and depthwise Conv1d with groups=d_model.
import argparse
import enum
import math
from typing import Optional

import torch
import torch.nn as nn

INF_VAL = 10000.0


class NormType(enum.Enum):
    BATCH = "batch_norm"
    LAYER = "layer_norm"
    GROUP = "group_norm"


class PosEnc(str, enum.Enum):
    ABS = "abs_pos"
    REL = "rel_pos"


class Activation(enum.Enum):
    SWISH = enum.auto()
    RELU = enum.auto()
    GELU = enum.auto()

    def build(self):
        return {Activation.SWISH: Swish, Activation.RELU: nn.ReLU, Activation.GELU: nn.GELU}[self]()


class Swish(nn.SiLU):
    pass


def calc_length(lengths, all_paddings, kernel_size, stride, ceil_mode, repeat_num=1):
    """ Calculates the output length of a Tensor passed through a convolution or max pooling layer"""
    add_pad: float = all_paddings - kernel_size
    one: float = 1.0
    for i in range(repeat_num):
        lengths = torch.div(lengths.to(dtype=torch.float) + add_pad, stride) + one
        if ceil_mode:
            lengths = torch.ceil(lengths)
        else:
            lengths = torch.floor(lengths)
    return lengths.to(dtype=torch.int)


class ConvSubsampling(nn.Module):
    def __init__(self, subsampling, subsampling_factor, feat_in, feat_out, conv_channels, activation=nn.ReLU()):
        super().__init__()
        self._subsampling = subsampling
        self._conv_channels = conv_channels
        self._feat_in = feat_in
        self._feat_out = feat_out

        if subsampling_factor % 2 != 0:
            raise ValueError("Sampling factor should be a multiply of 2!")
        self._sampling_num = int(math.log(subsampling_factor, 2))
        self.subsampling_factor = subsampling_factor

        in_channels = 1
        layers = []

        if subsampling == "striding":
            self._stride = 2
            self._kernel_size = 3
            self._ceil_mode = False
            self._left_padding = (self._kernel_size - 1) // 2
            self._right_padding = (self._kernel_size - 1) // 2

            for i in range(self._sampling_num):
                layers.append(
                    torch.nn.Conv2d(
                        in_channels=in_channels,
                        out_channels=conv_channels,
                        kernel_size=self._kernel_size,
                        stride=self._stride,
                        padding=self._left_padding,
                    )
                )
                layers.append(activation)
                in_channels = conv_channels
        else:
            raise ValueError(f"Not valid sub-sampling: {subsampling}!")

        in_length = torch.tensor(feat_in, dtype=torch.float)
        out_length = calc_length(
            lengths=in_length,
            all_paddings=self._left_padding + self._right_padding,
            kernel_size=self._kernel_size,
            stride=self._stride,
            ceil_mode=self._ceil_mode,
            repeat_num=self._sampling_num,
        )
        self.out = torch.nn.Linear(conv_channels * int(out_length), feat_out)
        self.conv = torch.nn.Sequential(*layers)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout_rate, max_len=5000, xscale=None, dropout_rate_emb=0.0):
        super().__init__()
        self.d_model = d_model
        self.xscale = xscale
        self.dropout = torch.nn.Dropout(p=dropout_rate)
        self.max_len = max_len
        if dropout_rate_emb > 0:
            self.dropout_emb = nn.Dropout(dropout_rate_emb)
        else:
            self.dropout_emb = None

    def create_pe(self, positions, dtype):
        pos_length = positions.size(0)
        pe = torch.zeros(pos_length, self.d_model, device=positions.device)
        div_term = torch.exp(
            torch.arange(0, self.d_model, 2, dtype=torch.float32, device=positions.device)
            * -(math.log(INF_VAL) / self.d_model)
        )
        pe[:, 0::2] = torch.sin(positions * div_term)
        pe[:, 1::2] = torch.cos(positions * div_term)
        pe = pe.unsqueeze(0).to(dtype)
        if hasattr(self, 'pe'):
            self.pe = pe
        else:
            self.register_buffer('pe', pe, persistent=False)

    def extend_pe(self, length, device, dtype):
        if hasattr(self, 'pe') and self.pe.size(1) >= length:
            return
        positions = torch.arange(0, length, dtype=torch.float32, device=device).unsqueeze(1)
        self.create_pe(positions=positions, dtype=dtype)


class RelPositionalEncoding(PositionalEncoding):
    def extend_pe(self, length, device, dtype):
        needed_size = 2 * length - 1
        if hasattr(self, 'pe') and self.pe.size(1) >= needed_size:
            return
        # positions would be from negative numbers to positive
        # positive positions would be used for left positions and negative for right positions
        positions = torch.arange(length - 1, -length, -1, dtype=torch.float32, device=device).unsqueeze(1)
        self.create_pe(positions=positions, dtype=dtype)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_head, n_feat, dropout_rate):
        super().__init__()
        assert n_feat % n_head == 0
        # We assume d_v always equals d_k
        self.d_k = n_feat // n_head
        self.s_d_k = math.sqrt(self.d_k)
        self.h = n_head
        self.linear_q = nn.Linear(n_feat, n_feat)
        self.linear_k = nn.Linear(n_feat, n_feat)
        self.linear_v = nn.Linear(n_feat, n_feat)
        self.linear_out = nn.Linear(n_feat, n_feat)
        self.dropout = nn.Dropout(p=dropout_rate)


class RelPositionMultiHeadAttention(MultiHeadAttention):
    def __init__(self, n_head, n_feat, dropout_rate, pos_bias_u=None, pos_bias_v=None):
        super().__init__(n_head=n_head, n_feat=n_feat, dropout_rate=dropout_rate)
        # linear transformation for positional encoding
        self.linear_pos = nn.Linear(n_feat, n_feat, bias=False)
        # these two learnable biases are used in matrix c and matrix d
        # as described in https://arxiv.org/abs/1901.02860 Section 3.3
        if pos_bias_u is None or pos_bias_v is None:
            self.pos_bias_u = nn.Parameter(torch.FloatTensor(self.h, self.d_k).zero_())
            self.pos_bias_v = nn.Parameter(torch.FloatTensor(self.h, self.d_k).zero_())
            nn.init.zeros_(self.pos_bias_u)
            nn.init.zeros_(self.pos_bias_v)
        else:
            self.pos_bias_u = pos_bias_u
            self.pos_bias_v = pos_bias_v


class ConformerFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout, activation=Activation.SWISH):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = activation.build()
        self.dropout = nn.Dropout(p=dropout)
        self.linear2 = nn.Linear(d_ff, d_model)


class ConformerConvolution(nn.Module):
    def __init__(self, d_model, kernel_size, norm_type=NormType.BATCH, pointwise_activation="glu_"):
        super().__init__()
        assert (kernel_size - 1) % 2 == 0
        self.d_model = d_model
        self.kernel_size = kernel_size
        self.norm_type = norm_type

        self.pointwise_conv1 = nn.Conv1d(
            in_channels=d_model, out_channels=d_model * 2, kernel_size=1, stride=1, padding=0, bias=True
        )
        self.depthwise_conv = nn.Conv1d(
            in_channels=d_model,
            out_channels=d_model,
            kernel_size=kernel_size,
            stride=1,
            padding=(kernel_size - 1) // 2,
            groups=d_model,
            bias=True,
        )
        if norm_type is NormType.BATCH:
            self.batch_norm = nn.BatchNorm1d(d_model)
        elif norm_type is NormType.LAYER:
            self.batch_norm = nn.LayerNorm(d_model)
        elif norm_type is NormType.GROUP:
            self.batch_norm = nn.GroupNorm(num_groups=d_model // 32, num_channels=d_model)
        else:
            raise ValueError(f"conv_norm_type={norm_type} is not valid!")

        self.activation = Swish()
        self.pointwise_conv2 = nn.Conv1d(
            in_channels=d_model, out_channels=d_model, kernel_size=1, stride=1, padding=0, bias=True
        )


class ConformerLayer(nn.Module):
    def __init__(
        self,
        d_model,
        d_ff,
        self_attention_model=PosEnc.REL,
        n_heads=4,
        conv_kernel_size=31,
        conv_norm_type=NormType.BATCH,
        macaron_style=True,
        dropout=0.1,
        dropout_att=0.1,
        pos_bias_u=None,
        pos_bias_v=None,
    ):
        super().__init__()
        self.self_attention_model = self_attention_model
        self.n_heads = n_heads
        self.fc_factor = 0.5 if macaron_style else 1.0

        # first feed forward module
        self.norm_feed_forward1 = nn.LayerNorm(d_model) if macaron_style else None
        self.feed_forward1 = ConformerFeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout) if macaron_style else None

        # convolution module
        self.norm_conv = nn.LayerNorm(d_model)
        self.conv = ConformerConvolution(d_model=d_model, kernel_size=conv_kernel_size, norm_type=conv_norm_type)

        # multi-headed self-attention module
        self.norm_self_att = nn.LayerNorm(d_model)
        if self_attention_model == PosEnc.REL:
            self.self_attn = RelPositionMultiHeadAttention(
                n_head=n_heads, n_feat=d_model, dropout_rate=dropout_att, pos_bias_u=pos_bias_u, pos_bias_v=pos_bias_v
            )
        elif self_attention_model == PosEnc.ABS:
            self.self_attn = MultiHeadAttention(n_head=n_heads, n_feat=d_model, dropout_rate=dropout_att)
        else:
            raise ValueError(f"'{self_attention_model}' is not a valid value for 'self_attention_model'")

        # second feed forward module
        self.norm_feed_forward2 = nn.LayerNorm(d_model)
        self.feed_forward2 = ConformerFeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout)

        self.dropout = nn.Dropout(dropout)
        self.norm_out = nn.LayerNorm(d_model)


class ConformerEncoder(nn.Module):
    def __init__(
        self,
        feat_in,
        n_layers,
        d_model,
        feat_out=-1,
        subsampling="striding",
        subsampling_factor=4,
        subsampling_conv_channels=-1,
        ff_expansion_factor=4,
        self_attention_model=PosEnc.REL,
        n_heads=4,
        pos_emb_max_len=5000,
        xscaling=True,
        untie_biases=True,
        conv_kernel_size=31,
        conv_norm_type=NormType.BATCH,
        dropout=0.1,
        dropout_pre_encoder=0.1,
        dropout_emb=0.1,
        dropout_att=0.0,
    ):
        super().__init__()
        d_ff = d_model * ff_expansion_factor
        self.d_model = d_model
        self.n_layers = n_layers
        self._feat_in = feat_in
        self.scale = math.sqrt(self.d_model)
        self.pos_emb_max_len = pos_emb_max_len

        if xscaling:
            self.xscale = math.sqrt(d_model)
        else:
            self.xscale = None

        if subsampling_conv_channels == -1:
            subsampling_conv_channels = d_model
        if subsampling and subsampling_factor > 1:
            self.pre_encode = ConvSubsampling(
                subsampling=subsampling,
                subsampling_factor=subsampling_factor,
                feat_in=feat_in,
                feat_out=d_model,
                conv_channels=subsampling_conv_channels,
                activation=nn.ReLU(True),
            )
        else:
            self.pre_encode = nn.Linear(feat_in, d_model)

        self._feat_out = d_model

        if not untie_biases and self_attention_model == PosEnc.REL:
            d_head = d_model // n_heads
            pos_bias_u = nn.Parameter(torch.Tensor(n_heads, d_head))
            pos_bias_v = nn.Parameter(torch.Tensor(n_heads, d_head))
            nn.init.zeros_(pos_bias_u)
            nn.init.zeros_(pos_bias_v)
        else:
            pos_bias_u = None
            pos_bias_v = None

        if self_attention_model == PosEnc.REL:
            self.pos_enc = RelPositionalEncoding(
                d_model=d_model,
                dropout_rate=dropout_pre_encoder,
                max_len=pos_emb_max_len,
                xscale=self.xscale,
                dropout_rate_emb=dropout_emb,
            )
        elif self_attention_model == PosEnc.ABS:
            pos_bias_u = None
            pos_bias_v = None
            self.pos_enc = PositionalEncoding(
                d_model=d_model, dropout_rate=dropout_pre_encoder, max_len=pos_emb_max_len, xscale=self.xscale
            )
        else:
            raise ValueError(f"Not valid self_attention_model: '{self_attention_model}'!")

        self.layers = nn.ModuleList()
        for i in range(n_layers):
            layer = ConformerLayer(
                d_model=d_model,
                d_ff=d_ff,
                self_attention_model=self_attention_model,
                n_heads=n_heads,
                conv_kernel_size=conv_kernel_size,
                conv_norm_type=conv_norm_type,
                dropout=dropout,
                dropout_att=dropout_att,
                pos_bias_u=pos_bias_u,
                pos_bias_v=pos_bias_v,
            )
            self.layers.append(layer)

        if feat_out > 0 and feat_out != self._feat_out:
            self.out_proj = nn.Linear(self._feat_out, feat_out)
            self._feat_out = feat_out
        else:
            self.out_proj = None
            self._feat_out = d_model
        self.set_max_audio_length(self.pos_emb_max_len)

    def set_max_audio_length(self, max_audio_length):
        """ Sets maximum input length.
            Pre-calculates internal seq_range mask.
        """
        self.max_audio_length = max_audio_length
        device = next(self.parameters()).device
        dtype = next(self.parameters()).dtype
        self.pos_enc.extend_pe(max_audio_length, device, dtype)


class ConvASRDecoder(nn.Module):
    def __init__(self, feat_in, num_classes, init_mode="xavier_uniform", vocabulary=None):
        super().__init__()
        if vocabulary is not None:
            num_classes = len(vocabulary)
        self._feat_in = feat_in
        # Add 1 for blank char
        self._num_classes = num_classes + 1
        self.decoder_layers = torch.nn.Sequential(
            torch.nn.Conv1d(self._feat_in, self._num_classes, kernel_size=1, bias=True)
        )


class EncDecCTCModel(nn.Module):
    def __init__(self, feat_in, n_layers, d_model, n_heads, conv_kernel_size, subsampling_factor,
                 self_attention_model, conv_norm_type, activation, vocab_size, pos_emb_max_len,
                 xscaling, untie_biases):
        super().__init__()
        self.activation = Activation[activation.upper()]
        self.encoder = ConformerEncoder(
            feat_in=feat_in,
            n_layers=n_layers,
            d_model=d_model,
            n_heads=n_heads,
            conv_kernel_size=conv_kernel_size,
            subsampling_factor=subsampling_factor,
            self_attention_model=PosEnc(self_attention_model),
            conv_norm_type=NormType(conv_norm_type),
            pos_emb_max_len=pos_emb_max_len,
            xscaling=xscaling,
            untie_biases=untie_biases,
        )
        self.decoder = ConvASRDecoder(feat_in=self.encoder._feat_out, num_classes=vocab_size)


# conformer_ctc_char.yaml, Conformer-CTC Large
parser = argparse.ArgumentParser(description="Conformer-CTC")
parser.add_argument("--feat_in", type=int, default=80)
parser.add_argument("--n_layers", type=int, default=18)
parser.add_argument("--d_model", type=int, default=512)
parser.add_argument("--n_heads", type=int, default=8)
parser.add_argument("--conv_kernel_size", type=int, default=31)
parser.add_argument("--subsampling_factor", type=int, default=4)
parser.add_argument("--self_attention_model", choices=[e.value for e in PosEnc], default=PosEnc.REL.value)
parser.add_argument("--conv_norm_type", choices=[e.value for e in NormType], default="batch_norm")
parser.add_argument("--activation", type=str, default="swish")
parser.add_argument("--vocab_size", type=int, default=128)
parser.add_argument("--pos_emb_max_len", type=int, default=5000)
parser.add_argument("--xscaling", action="store_true", default=True)
parser.add_argument("--untie_biases", action="store_true")
args = parser.parse_args()

model = EncDecCTCModel(**vars(args))
