# What the model base classes of several libraries share (transformers' PreTrainedModel through ModuleUtilsMixin,
# diffusers' ModelMixin): a model's device, dtype and size, read from its parameters, and its gradient-checkpointing
# switch, which is a flag on the submodules that have one; the model from_pretrained returns.
import torch


def as_loaded(model, dtype):
    """The model as from_pretrained returns it: cast to `dtype` (when one is given), in eval mode."""
    if dtype is not None:
        model = model.to(dtype)
    model.eval()
    return model


def set_gradient_checkpointing(model, enabled):
    for module in model.modules():
        if hasattr(module, "gradient_checkpointing"):
            module.gradient_checkpointing = enabled


class ModelQueries:
    """A mixin for nn.Module subclasses: whether any submodule checkpoints, the device and dtype of the first
    parameter (cpu / float32 without one), the parameter count."""

    @property
    def is_gradient_checkpointing(self):
        for module in self.modules():
            if getattr(module, "gradient_checkpointing", False):
                return True
        return False

    @property
    def device(self):
        for p in self.parameters():
            return p.device
        return torch.device("cpu")

    @property
    def dtype(self):
        for p in self.parameters():
            return p.dtype
        return torch.float32

    def num_parameters(self, only_trainable=False, exclude_embeddings=False):
        total = 0
        for p in self.parameters():
            if p.requires_grad or not only_trainable:
                total += p.numel()
        return total
