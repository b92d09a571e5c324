# shardlens' model of megatron.core.models.common.language_module.language_module (not the library itself).
from ....tensor_parallel import vocab_parallel_cross_entropy
from ....transformer.module import MegatronModule


class LanguageModule(MegatronModule):
    def __init__(self, config):
        super().__init__(config=config)

    def compute_language_model_loss(self, labels, logits):
        """labels (b, s), logits (s, b, vocab) -> loss (b, s)."""
        labels = labels.transpose(0, 1).contiguous()
        loss = vocab_parallel_cross_entropy(logits.float(), labels)
        return loss.transpose(0, 1).contiguous()

    def initialize_last_stage_with_word_embeddings(self):
        """With one pipeline stage the output layer reads the input embedding's weight at forward time
        (it was built with skip_weight_param_allocation), so nothing is allocated or copied here."""
        if not self.share_embeddings_and_output_weights:
            return
        if self.post_process and not self.pre_process:
            self.output_layer.weight.data.fill_(0)
            self.output_layer.weight.shared = True
        if self.pre_process:
            self.shared_embedding_or_output_weight().zero_out_wgrad = True

    def shared_embedding_or_output_weight(self):
        if self.pre_process:
            return self.embedding.word_embeddings.weight
        if self.post_process:
            return self.output_layer.weight
        return None
