# shardlens' model of megatron.core.tensor_parallel.cross_entropy (not the library itself): per-token loss.
import torch.nn.functional as F


def vocab_parallel_cross_entropy(vocab_parallel_logits, target, label_smoothing=0.0):
    """logits (..., vocab), target (...) -> loss (...) per token."""
    vocab = vocab_parallel_logits.shape[-1]
    loss = F.cross_entropy(vocab_parallel_logits.reshape(-1, vocab), target.reshape(-1), reduction="none",
                           label_smoothing=label_smoothing)
    return loss.view(target.shape)
