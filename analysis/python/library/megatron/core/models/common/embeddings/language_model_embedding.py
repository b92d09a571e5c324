# shardlens' model of megatron.core.models.common.embeddings.language_model_embedding (not the library itself).
import torch

from .... import tensor_parallel
from ....transformer.module import MegatronModule


class LanguageModelEmbedding(MegatronModule):
    """word_embeddings (vocab-parallel), optional learned position and token-type embeddings; output [s, b, h]."""

    def __init__(self, config, vocab_size, max_sequence_length, position_embedding_type="learned_absolute",
                 num_tokentypes=0):
        super().__init__(config=config)
        self.config = config
        self.vocab_size = vocab_size
        self.max_sequence_length = max_sequence_length
        self.add_position_embedding = position_embedding_type == "learned_absolute"
        self.num_tokentypes = num_tokentypes
        self.word_embeddings = tensor_parallel.VocabParallelEmbedding(
            num_embeddings=self.vocab_size, embedding_dim=self.config.hidden_size, init_method=self.config.init_method,
            config=self.config,
        )
        if self.add_position_embedding:
            self.position_embeddings = torch.nn.Embedding(self.max_sequence_length, self.config.hidden_size)
            if self.config.perform_initialization:
                self.config.init_method(self.position_embeddings.weight)
        if self.num_tokentypes > 0:
            self.tokentype_embeddings = torch.nn.Embedding(self.num_tokentypes, self.config.hidden_size)
            if self.config.perform_initialization:
                self.config.init_method(self.tokentype_embeddings.weight)
        else:
            self.tokentype_embeddings = None
        self.embedding_dropout = torch.nn.Dropout(self.config.hidden_dropout)

    def forward(self, input_ids, position_ids, tokentype_ids=None):
        """input_ids, position_ids (b, s) -> embeddings (s, b, h)."""
        word_embeddings = self.word_embeddings(input_ids)
        if self.add_position_embedding:
            embeddings = word_embeddings + self.position_embeddings(position_ids)
        else:
            embeddings = word_embeddings
        embeddings = embeddings.transpose(0, 1).contiguous()
        if tokentype_ids is not None:
            embeddings = embeddings + self.tokentype_embeddings(tokentype_ids).permute(1, 0, 2)
        if self.config.fp32_residual_connection:
            embeddings = embeddings.float()
        return self.embedding_dropout(embeddings)
