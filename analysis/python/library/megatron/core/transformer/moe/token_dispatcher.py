# shardlens' model of megatron.core.transformer.moe.token_dispatcher (not the library itself): dropless routing of
# tokens to experts on one rank (no expert parallelism): sort tokens by expert, then scatter the outputs back.
import torch


class MoETokenDispatcher:
    def __init__(self, config):
        self.config = config


class MoEDroplessTokenDispatcher(MoETokenDispatcher):
    def __init__(self, num_local_experts, local_expert_indices, config):
        super().__init__(config=config)
        self.num_local_experts = num_local_experts
        self.local_expert_indices = local_expert_indices
        self.router_topk = config.moe_router_topk
        self.add_bias = config.add_bias_linear

    def token_permutation(self, hidden_states, max_prob, max_ind):
        """hidden_states (s, b, h), max_prob / max_ind (s * b, topk) -> tokens sorted by expert (s * b * topk, h),
        tokens per expert, their probabilities, the sort order, and the token each row came from."""
        self.hidden_shape = hidden_states.shape
        hidden_states = hidden_states.view(-1, self.hidden_shape[-1])
        if self.router_topk > 1:
            global_local_map = torch.ones_like(max_ind).bool()
            local_indices = max_ind.masked_select(global_local_map)
            local_probs = max_prob.masked_select(global_local_map)
            global_local_map = global_local_map.nonzero()[:, 0]
            global_local_map = global_local_map.view(-1, 1).expand(-1, hidden_states.shape[-1])
            local_hidden_states = torch.gather(hidden_states, 0, global_local_map)
        else:
            local_indices = max_ind
            local_probs = max_prob
            local_hidden_states = hidden_states
            global_local_map = None
        with torch.no_grad():
            tokens_per_expert = torch.histc(local_indices.float(), bins=self.num_local_experts,
                                            min=self.local_expert_indices[0], max=self.local_expert_indices[-1])
            tokens_per_expert = tokens_per_expert.cpu().to(torch.long)
        indices = torch.argsort(local_indices.view(-1), dim=0)
        permuted_local_hidden_states = torch.gather(
            local_hidden_states, 0, indices.view(-1, 1).expand(-1, hidden_states.shape[-1])
        )
        return permuted_local_hidden_states, tokens_per_expert, local_probs, indices, global_local_map

    def token_unpermutation(self, hidden_states, scores, indices, global_local_map=None, bias=None):
        scores = scores.to(dtype=hidden_states.dtype)
        index = indices.view(-1, 1).expand(-1, hidden_states.shape[-1])
        unpermuted_local_hidden = torch.zeros_like(hidden_states).scatter(0, index, hidden_states)
        if self.router_topk > 1:
            unpermuted_local_hidden = unpermuted_local_hidden * scores.view(-1, 1)
        unpermuted_local_bias = None
        if self.add_bias and bias is not None:
            unpermuted_local_bias = torch.zeros_like(hidden_states).scatter(0, index, bias)
            if self.router_topk > 1:
                unpermuted_local_bias = unpermuted_local_bias * scores.view(-1, 1)
        output_total = unpermuted_local_hidden
        output_bias_total = unpermuted_local_bias
        if self.router_topk > 1:
            num_tokens = self.hidden_shape[0] * self.hidden_shape[1]
            output_total = torch.zeros(num_tokens, hidden_states.shape[-1], dtype=hidden_states.dtype,
                                       device=hidden_states.device).scatter_add(0, global_local_map, unpermuted_local_hidden)
            if unpermuted_local_bias is not None:
                output_bias_total = torch.zeros(num_tokens, hidden_states.shape[-1], dtype=hidden_states.dtype,
                                                device=hidden_states.device).scatter_add(0, global_local_map, unpermuted_local_bias)
        if self.router_topk == 1:
            output_total = output_total * scores.view(-1, 1)
        output_total = output_total.view(self.hidden_shape)
        if output_bias_total is not None:
            output_bias_total = output_bias_total.view(self.hidden_shape)
        return output_total, output_bias_total
