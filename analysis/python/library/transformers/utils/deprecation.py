# shardlens' model of transformers.utils.deprecation (not the library itself): renamed keyword arguments.
import functools


def deprecate_kwarg(old_name, version=None, new_name=None, warn_if_greater_or_equal_version=False,
                    raise_if_greater_or_equal_version=False, raise_if_both_names=False, additional_message=None):
    """A call passing `old_name=` is passed on as `new_name=` (or the argument is dropped when there is no new name)."""

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if old_name in kwargs:
                value = kwargs.pop(old_name)
                if new_name is not None and new_name not in kwargs:
                    kwargs[new_name] = value
            return func(*args, **kwargs)

        return wrapper

    return decorator
