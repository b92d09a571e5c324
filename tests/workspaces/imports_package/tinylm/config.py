from dataclasses import dataclass


@dataclass
class TinyConfig:
    vocab_size: int = 512
    dim: int = 64
    n_head: int = 4
    n_layer: int = 2
    ffn_mult: int = 4

    @classmethod
    def small(cls, **overrides):
        return cls(dim=96, n_head=6, **overrides)
