# A logger whose messages go nowhere: the base of the library models' loggers (transformers, diffusers).


class NullLogger:
    def __init__(self, name=None):
        self.name = name

    def _discard(self, *args, **kwargs):
        """A message, dropped."""

    debug = info = warning = warn = error = _discard

    def setLevel(self, level):
        pass
