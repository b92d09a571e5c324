# shardlens' model of diffusers.utils.peft_utils (not the library itself): LoRA scaling without PEFT.
import functools


def scale_lora_layers(model, weight):
    pass


def unscale_lora_layers(model, weight=None):
    pass


def apply_lora_scale(kwargs_name="joint_attention_kwargs"):
    """Decorates a forward whose `kwargs_name` dict may carry a LoRA "scale": the scale is taken out of the dict
    (PEFT would apply it to the LoRA layers; without PEFT there are none)."""

    def decorator(forward_fn):
        @functools.wraps(forward_fn)
        def wrapper(self, *args, **kwargs):
            attention_kwargs = kwargs.get(kwargs_name)
            if attention_kwargs is not None and "scale" in attention_kwargs:
                attention_kwargs = dict(attention_kwargs)
                attention_kwargs.pop("scale")
                kwargs[kwargs_name] = attention_kwargs
            return forward_fn(self, *args, **kwargs)

        return wrapper

    return decorator
