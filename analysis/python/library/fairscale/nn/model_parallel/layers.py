# shardlens' model of fairscale.nn.model_parallel.layers (not the library itself). The real layers keep 1/world of
# their weight per rank; these keep the whole logical weight (world size 1), and `shardlens_layout` records the split
# the real layer makes: "column" (output features), "row" (input features), "vocab" (embedding rows),
# "embedding_dim" (embedding columns).
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn import init
from torch.nn.parameter import Parameter

from _shardlens_common.attributes import set_attributes


class _Embedding(nn.Module):
    """What both embeddings share: F.embedding's options, one weight, and a forward through F.embedding."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse):
        super().__init__()
        set_attributes(self, num_embeddings=num_embeddings, embedding_dim=embedding_dim, padding_idx=padding_idx,
                       max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)

    def _create_weight(self, rows, columns, init_method, layout):
        self.weight = Parameter(torch.Tensor(rows, columns))
        init_method(self.weight)
        self.shardlens_layout = layout

    def forward(self, input_):
        return F.embedding(input_, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)


class VocabParallelEmbedding(_Embedding):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, init_method=init.xavier_normal_,
                 keep_master_weight_for_test=False):
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
        self.vocab_start_index = 0
        self.vocab_end_index = num_embeddings
        self.num_embeddings_per_partition = num_embeddings
        self._create_weight(self.num_embeddings_per_partition, self.embedding_dim, init_method, "vocab")


class ParallelEmbedding(_Embedding):
    """Embedding whose columns (the embedding dimension) are split: weight (num_embeddings, embedding_dim)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, init_method=init.xavier_normal_,
                 keep_master_weight_for_test=False):
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
        self.embedding_dim_per_partition = embedding_dim
        self._create_weight(self.num_embeddings, self.embedding_dim_per_partition, init_method, "embedding_dim")


class _ParallelLinear(nn.Module):
    """What both linears share: Y = XA^T + b with weight (out_features, in_features) and a zeroed bias. The layer's
    own options (`options`) are set after the sizes and before the parameters."""

    def __init__(self, in_features, out_features, bias, init_method, layout, **options):
        super().__init__()
        set_attributes(self, in_features=in_features, out_features=out_features, **options)
        # The split side's size on this rank: the whole side, in a world of one.
        if layout == "column":
            self.output_size_per_partition = out_features
        else:
            self.input_size_per_partition = in_features
        self.weight = Parameter(torch.Tensor(out_features, in_features))
        if bias:
            self.bias = Parameter(torch.Tensor(out_features))
            with torch.no_grad():
                self.bias.zero_()
        else:
            self.register_parameter("bias", None)
        init_method(self.weight)
        self.shardlens_layout = layout

    def get_master_weight(self):
        return self.weight

    def forward(self, input_):
        return F.linear(input_, self.weight, self.bias)


class ColumnParallelLinear(_ParallelLinear):
    """Y = XA^T + b, A split by output features: weight (out_features, in_features). forward returns Y."""

    def __init__(self, in_features, out_features, bias=True, gather_output=True, init_method=init.xavier_normal_,
                 stride=1, keep_master_weight_for_test=False):
        super().__init__(in_features, out_features, bias, init_method, "column", gather_output=gather_output)


class RowParallelLinear(_ParallelLinear):
    """Y = XA^T + b, A split by input features (partial outputs all-reduced, then the bias added): weight
    (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, input_is_parallel=False, init_method=init.xavier_normal_,
                 stride=1, keep_master_weight_for_test=False):
        super().__init__(in_features, out_features, bias, init_method, "row", input_is_parallel=input_is_parallel)

    def forward(self, input_):
        output = F.linear(input_, self.weight)
        if self.bias is not None:
            output = output + self.bias
        return output
