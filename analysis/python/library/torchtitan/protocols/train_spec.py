# shardlens' stand-in for torchtitan.protocols.train_spec (not the package itself): what a model registers for training.
from dataclasses import dataclass
from typing import Any, Callable, Optional


class ModelProtocol:
    """A typing.Protocol in the real package: a model built from its args, with init_weights()."""

    def init_weights(self, buffer_device=None):
        pass


@dataclass
class TrainSpec:
    model_cls: Any = None
    model_args: Any = None
    parallelize_fn: Optional[Callable] = None
    pipelining_fn: Optional[Callable] = None
    build_optimizers_fn: Optional[Callable] = None
    build_lr_schedulers_fn: Optional[Callable] = None
    build_dataloader_fn: Optional[Callable] = None
    build_tokenizer_fn: Optional[Callable] = None
    build_loss_fn: Optional[Callable] = None
    build_validator_fn: Optional[Callable] = None
    build_metrics_processor_fn: Optional[Callable] = None
    state_dict_adapter: Any = None
