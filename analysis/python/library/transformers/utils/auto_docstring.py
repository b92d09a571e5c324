# shardlens' model of transformers.utils.auto_docstring (not the library itself): the decorator changes only docstrings.


def auto_docstring(obj=None, *, custom_intro=None, custom_args=None, checkpoint=None):
    # bare (@auto_docstring) or with arguments (@auto_docstring(custom_intro=...))
    if obj is not None:
        return obj

    def decorator(target):
        return target

    return decorator
