# ALBERT-base-v2 encoder with an MLM head plus a small Universal-Transformer
# style decoder, exercising the ways weights get shared: cross-layer
# sharing through `nn.ModuleList([layer] * n)` and `[a, b] * 3` (torch lists
# each shared module once, under its first name), one module instance
# placed in two containers, HF `_tie_or_clone_weights` tying a head weight to
# an embedding registered *after* it (so the parameter keeps the head's
# name), tying along deep paths (`self.decoder.layers[-1].ffn[2].weight =
# ...`), a tied bias, a Parameter attribute re-assigned on a second module,
# `copy.deepcopy` clones that are NOT shared, and a new Parameter from a
# transposed weight.
import copy
import math

import torch
import torch.nn as nn


class AlbertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.full_layer_layer_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn = nn.Linear(hidden, ffn)
        self.ffn_output = nn.Linear(ffn, hidden)
        self.activation = nn.GELU()


class AlbertEmbeddings(nn.Module):
    def __init__(self, vocab, emb, max_pos=512, types=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, emb, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_pos, emb)
        self.token_type_embeddings = nn.Embedding(types, emb)
        self.LayerNorm = nn.LayerNorm(emb, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)), persistent=False)


class AlbertMLMHead(nn.Module):
    def __init__(self, hidden, emb, vocab):
        super().__init__()
        self.dense = nn.Linear(hidden, emb)
        self.LayerNorm = nn.LayerNorm(emb)
        self.decoder = nn.Linear(emb, vocab)
        self.bias = nn.Parameter(torch.zeros(vocab))
        self.decoder.bias = self.bias


def _tie_or_clone_weights(output_embeddings, input_embeddings):
    output_embeddings.weight = input_embeddings.weight
    if getattr(output_embeddings, "bias", None) is not None:
        output_embeddings.bias.data = nn.functional.pad(
            output_embeddings.bias.data,
            (0, output_embeddings.weight.shape[0] - output_embeddings.bias.shape[0]), "constant", 0)
    if hasattr(output_embeddings, "out_features") and hasattr(input_embeddings, "num_embeddings"):
        output_embeddings.out_features = input_embeddings.num_embeddings


class DecoderLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, 8, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d, 8, batch_first=True)
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(3))
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))


class SharedDecoder(nn.Module):
    def __init__(self, d, vocab, shared_embed):
        super().__init__()
        a, b = DecoderLayer(d), DecoderLayer(d)
        self.layers = nn.ModuleList([a, b] * 3)
        self.embed = shared_embed
        self.final = copy.deepcopy(a)          # a clone, not shared
        self.out_norm = a.norms[0]             # same instance as layers.0.norms.0


class Albert(nn.Module):
    def __init__(self, vocab=30000, emb=128, hidden=768, layers=12, heads=12, ffn=3072, num_groups=1):
        super().__init__()
        # head registered first: after tying, the shared weight is named predictions.decoder.weight
        self.predictions = AlbertMLMHead(hidden, emb, vocab)
        self.embeddings = AlbertEmbeddings(vocab, emb)
        self.embedding_hidden_mapping_in = nn.Linear(emb, hidden)
        groups = [AlbertLayer(hidden, heads, ffn) for _ in range(num_groups)]
        self.albert_layer_groups = nn.ModuleList(groups)
        self.layer_schedule = nn.ModuleList([groups[int(i / (layers / num_groups))] for i in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)
        self.pooler_activation = nn.Tanh()
        self.sop_classifier = nn.Sequential(nn.Dropout(0.1), self.pooler, nn.Linear(hidden, 2))
        _tie_or_clone_weights(self.predictions.decoder, self.embeddings.word_embeddings)

        self.decoder = SharedDecoder(emb, vocab, self.embeddings.word_embeddings)
        self.decoder.layers[-1].ffn[2].weight = self.decoder.final.ffn[2].weight
        self.decoder.final.norms[2].bias = self.embeddings.LayerNorm.bias
        self.lm_scale = nn.Parameter(self.embedding_hidden_mapping_in.weight.t().clone())
        self.decoder.pos = self.embeddings.position_embeddings.weight


model = Albert()
