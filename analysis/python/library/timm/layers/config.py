# shardlens' model of timm.layers.config (not the library itself): fused attention is F.scaled_dot_product_attention.


def use_fused_attn(experimental=False):
    return True
