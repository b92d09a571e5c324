# shardlens' model of torchvision.models._utils (not the library itself): builder helpers.
import functools


class _ModelURLs(dict):
    """Deprecated model_urls dicts."""


def _ovewrite_named_param(kwargs, param, new_value):
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def _ovewrite_value_param(param, actual, expected):
    if actual is not None:
        if actual != expected:
            raise ValueError(f"The parameter '{param}' expected value {expected} but got {actual} instead.")
    return expected


def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def handle_legacy_interface(**weights):
    """The legacy `pretrained=True` keyword becomes `weights=<default>` (False: `weights=None`).
    `weights` maps each weights parameter to (legacy parameter name, default weights or fn(kwargs) -> weights)."""

    def outer_wrapper(builder):
        @functools.wraps(builder)
        def inner_wrapper(*args, **kwargs):
            for weights_param, (pretrained_param, default) in weights.items():
                if pretrained_param not in kwargs:
                    continue
                value = kwargs.pop(pretrained_param)
                if callable(default):
                    default = default(kwargs)
                kwargs[weights_param] = default if value else None
            return builder(*args, **kwargs)

        inner_wrapper.__name__ = builder.__name__
        return inner_wrapper

    return outer_wrapper
