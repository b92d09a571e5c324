# An audio-visual captioning model assembled from torch.nn built-ins, the way
# research code does it: nn.MultiheadAttention with kdim/vdim != embed_dim
# (separate q/k/v_proj_weight) and with equal dims + add_bias_kv,
# nn.TransformerEncoderLayer/TransformerEncoder and a TransformerDecoder with a
# module activation, nn.ConvTranspose2d, nn.Conv1d/Conv3d with groups,
# nn.Embedding with padding_idx, LayerNorm(elementwise_affine=False),
# BatchNorm1d(affine=False), InstanceNorm2d(affine=True),
# nn.ParameterList / nn.ParameterDict, register_module / add_module,
# nn.Sequential(OrderedDict(...)), ModuleList .extend/.insert/indexing/+=,
# ModuleDict item assignment, torch.nn.init calls and nn.PReLU.
import math
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

D_MODEL = 512
N_HEADS = 8
VOCAB = 10000
PAD_IDX = 0


class VideoStem(nn.Module):
    """Tubelet embedding: a Conv3d patchifier plus a grouped Conv3d refinement."""

    def __init__(self, in_chans=3, dim=D_MODEL, tubelet=(2, 16, 16)):
        super().__init__()
        self.proj = nn.Conv3d(in_chans, dim, kernel_size=tubelet, stride=tubelet)
        self.refine = nn.Conv3d(dim, dim, kernel_size=3, padding=1, groups=dim // 64, bias=False)
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)
        nn.init.xavier_uniform_(self.proj.weight.view(self.proj.weight.size(0), -1))
        nn.init.zeros_(self.proj.bias)

    def forward(self, x):
        x = self.refine(self.proj(x))
        return self.norm(x.flatten(2).transpose(1, 2))


class AudioStem(nn.Module):
    """Log-mel front end: Conv1d + depthwise Conv1d, BatchNorm1d without affine."""

    def __init__(self, n_mels=80, dim=D_MODEL):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, dim, kernel_size=3, stride=2, padding=1)
        self.dw = nn.Conv1d(dim, dim, kernel_size=5, padding=2, groups=dim)
        self.bn = nn.BatchNorm1d(dim, affine=False)
        self.act = nn.PReLU(num_parameters=dim, init=0.1)

    def forward(self, x):
        return self.act(self.bn(self.dw(self.conv(x)))).transpose(1, 2)


class CrossModalAttention(nn.Module):
    """Text queries attend to audio (kdim) and video (vdim) features of other widths."""

    def __init__(self, dim=D_MODEL, audio_dim=256, video_dim=384):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, N_HEADS, dropout=0.1, kdim=audio_dim, vdim=video_dim,
                                          batch_first=True)
        self.self_attn = nn.MultiheadAttention(dim, N_HEADS, bias=True, add_bias_kv=True, add_zero_attn=True)
        self.gate = nn.Parameter(torch.zeros(1))

    def forward(self, q, k, v):
        out, _ = self.attn(q, k, v)
        return q + torch.tanh(self.gate) * out


class MaskDecoder(nn.Module):
    """Upsamples patch features back to a saliency map with transposed convs."""

    def __init__(self, dim=D_MODEL):
        super().__init__()
        self.up = nn.Sequential(OrderedDict([
            ("deconv1", nn.ConvTranspose2d(dim, dim // 2, kernel_size=4, stride=2, padding=1)),
            ("norm1", nn.InstanceNorm2d(dim // 2, affine=True)),
            ("act1", nn.GELU()),
            ("deconv2", nn.ConvTranspose2d(dim // 2, dim // 4, kernel_size=4, stride=2, padding=1, groups=2,
                                           bias=False)),
            ("norm2", nn.GroupNorm(8, dim // 4)),
            ("act2", nn.PReLU()),
        ]))
        self.add_module("to_mask", nn.Conv2d(dim // 4, 1, kernel_size=1))


class CaptionModel(nn.Module):
    def __init__(self, vocab_size=VOCAB, d_model=D_MODEL, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, max_len=512):
        super().__init__()
        self.video = VideoStem(dim=d_model)
        self.audio = AudioStem(dim=256)
        self.video_proj = nn.Linear(d_model, 384)

        self.tok_embed = nn.Embedding(vocab_size, d_model, padding_idx=PAD_IDX)
        self.pos_embed = nn.Parameter(torch.zeros(1, max_len, d_model))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

        encoder_layer = nn.TransformerEncoderLayer(d_model, N_HEADS, dim_feedforward, dropout,
                                                   batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(encoder_layer, num_encoder_layers, norm=nn.LayerNorm(d_model))

        decoder_layer = nn.TransformerDecoderLayer(d_model, N_HEADS, dim_feedforward, dropout,
                                                   activation=nn.GELU(), batch_first=True)
        self.decoder = nn.TransformerDecoder(decoder_layer, num_decoder_layers)

        self.fusion = nn.ModuleList([CrossModalAttention(d_model) for _ in range(2)])
        self.fusion.extend([CrossModalAttention(d_model)])
        self.fusion.insert(1, nn.Identity())
        self.fusion += [nn.LayerNorm(d_model)]
        self.fusion[-1] = nn.LayerNorm(d_model, eps=1e-6)
        nn.init.ones_(self.fusion[0].gate)

        # learned per-modality prompts and scales
        self.prompts = nn.ParameterList([nn.Parameter(torch.randn(4, d_model) * 0.02) for _ in range(3)])
        self.prompts.append(nn.Parameter(torch.zeros(8, d_model)))
        self.scales = nn.ParameterDict({"video": nn.Parameter(torch.ones(d_model)),
                                        "audio": nn.Parameter(torch.ones(256)),
                                        "text": nn.Parameter(torch.ones(d_model))})
        self.scales["bias"] = nn.Parameter(torch.zeros(d_model))

        self.mask_decoder = MaskDecoder(d_model)

        self.heads = nn.ModuleDict()
        self.heads["caption"] = nn.Linear(d_model, vocab_size, bias=False)
        self.heads["retrieval"] = nn.Sequential(nn.Linear(d_model, 256), nn.Tanh())
        self.register_module("temperature_mlp", nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1)))

        self.register_buffer("logit_scale", torch.tensor(math.log(1 / 0.07)))
        self.register_buffer("causal_mask", torch.triu(torch.full((max_len, max_len), float("-inf")), diagonal=1),
                             persistent=False)

        for name, p in self.decoder.named_parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        nn.init.orthogonal_(self.video_proj.weight)
        nn.init.kaiming_normal_(self.mask_decoder.to_mask.weight, mode="fan_out", nonlinearity="relu")
        nn.init.constant_(self.mask_decoder.to_mask.bias, 0.0)

    def forward(self, video, audio, tokens):
        v = self.video(video)
        a = self.audio(audio)
        t = self.tok_embed(tokens) + self.pos_embed[:, : tokens.size(1)]
        t = self.fusion[0](t, a, self.video_proj(v))
        memory = self.encoder(v)
        out = self.decoder(t, memory, tgt_mask=self.causal_mask[: t.size(1), : t.size(1)])
        return self.heads["caption"](out)


model = CaptionModel()
