# Functions with one answer whatever they are asked: a library model's queries about its environment (which
# optional packages are installed, the process groups of a world of one process).


def answer(value):
    """A function of any arguments that returns `value`."""

    def query(*args, **kwargs):
        return value

    return query
