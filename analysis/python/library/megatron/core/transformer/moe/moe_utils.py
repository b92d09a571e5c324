# shardlens' model of megatron.core.transformer.moe.moe_utils (not the library itself): router losses.
import torch


def switch_load_balancing_loss_func(gates, mask, moe_aux_loss_coeff):
    num_experts = mask.size(-1)
    gates_mean = gates.mean(dim=0)
    top_k = mask[0].count_nonzero()
    selection_mean = mask.float().mean(dim=0) / top_k
    return torch.sum(gates_mean * selection_mean) * num_experts * moe_aux_loss_coeff


def z_loss_func(logits, z_loss_coeff):
    return torch.mean(torch.square(torch.logsumexp(logits, dim=-1))) * z_loss_coeff


def sinkhorn(cost, tol=0.0001):
    """Sinkhorn balancing of a (tokens, experts) cost matrix (a few fixed rounds here)."""
    cost = torch.exp(cost)
    d0 = torch.ones(cost.size(0), device=cost.device, dtype=cost.dtype)
    d1 = torch.ones(cost.size(1), device=cost.device, dtype=cost.dtype)
    eps = 0.00000001
    for _ in range(3):
        d0 = (1 / d0.size(0)) * 1 / (torch.sum(d1 * cost, 1) + eps)
        d1 = (1 / d1.size(0)) * 1 / (torch.sum(d0.unsqueeze(1) * cost, 0) + eps)
    return d1 * cost * d0.unsqueeze(1)


class MoEAuxLossAutoScaler:
    """An autograd Function in the real library: forward returns the activations untouched (the aux loss only adds
    a gradient)."""

    main_loss_backward_scale = 1.0

    @staticmethod
    def apply(output, aux_loss):
        return output

    @staticmethod
    def set_loss_scale(scale):
        MoEAuxLossAutoScaler.main_loss_backward_scale = scale
