# Plain option attributes (numbers, flags, names; no modules or tensors) set in one call, in the order given: what
# a library model's __init__ would otherwise spell as a run of `self.x = x` lines.


def set_attributes(obj, **values):
    for name, value in values.items():
        setattr(obj, name, value)
