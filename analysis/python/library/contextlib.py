# shardlens' model of contextlib (not the library itself): the context managers model code builds.
# The interpreter runs a `with` body once and binds `as` to the manager itself, so these only have
# to exist and be callable.


class AbstractContextManager:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None


class nullcontext(AbstractContextManager):
    def __init__(self, enter_result=None):
        self.enter_result = enter_result

    def __enter__(self):
        return self.enter_result


class suppress(AbstractContextManager):
    def __init__(self, *exceptions):
        self._exceptions = exceptions


class ExitStack(AbstractContextManager):
    def __init__(self):
        self._managers = []

    def enter_context(self, cm):
        self._managers.append(cm)
        return cm

    def callback(self, fn, *args, **kwargs):
        return fn

    def close(self):
        return None


class _GeneratorContextManager(AbstractContextManager):
    def __init__(self, func, args, kwds):
        self.func = func
        self.args = args
        self.kwds = kwds


def contextmanager(func):
    def helper(*args, **kwds):
        return _GeneratorContextManager(func, args, kwds)

    helper.__wrapped__ = func
    return helper
