# shardlens' model of diffusers.utils.deprecation_utils (not the library itself): deprecate() returns the old value.


def deprecate(*args, take_from=None, standard_warn=True, stacklevel=2):
    """Each argument is (name, removal_version, message). A name found in `take_from` (a kwargs dict, popped, or an
    object's attribute) gives its value back; leftover entries of a kwargs dict are unexpected keywords."""
    deprecated_kwargs = take_from
    values = ()
    if not isinstance(args[0], tuple):
        args = (args,)
    for attribute, version_name, message in args:
        if isinstance(deprecated_kwargs, dict) and attribute in deprecated_kwargs:
            values += (deprecated_kwargs.pop(attribute),)
        elif deprecated_kwargs is not None and not isinstance(deprecated_kwargs, dict) and hasattr(deprecated_kwargs, attribute):
            values += (getattr(deprecated_kwargs, attribute),)
    if isinstance(deprecated_kwargs, dict) and len(deprecated_kwargs) > 0:
        key = list(deprecated_kwargs.keys())[0]
        raise TypeError(f"got an unexpected keyword argument `{key}`")
    if len(values) == 0:
        return None
    if len(values) == 1:
        return values[0]
    return values
