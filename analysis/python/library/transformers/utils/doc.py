# shardlens' model of transformers.utils.doc (not the library itself): docstring decorators, identity here.


def _identity_decorator(*args, **kwargs):
    def decorator(fn):
        return fn

    return decorator


add_start_docstrings = _identity_decorator
add_start_docstrings_to_model_forward = _identity_decorator
add_end_docstrings = _identity_decorator
add_code_sample_docstrings = _identity_decorator
replace_return_docstrings = _identity_decorator
