# shardlens' model of inspect (not the library itself): signature() and Parameter read from a function's
# __code__ / __defaults__ / __kwdefaults__, the predicates model code asks (isclass, isfunction, ...), getmro.
# Config decorators (diffusers' register_to_config, transformers' deprecate_kwarg) list a constructor's
# parameters and defaults this way.
from collections import OrderedDict


class _empty:
    pass


class Parameter:
    POSITIONAL_ONLY = 0
    POSITIONAL_OR_KEYWORD = 1
    VAR_POSITIONAL = 2
    KEYWORD_ONLY = 3
    VAR_KEYWORD = 4
    empty = _empty

    def __init__(self, name, kind, default=_empty, annotation=_empty):
        self.name = name
        self.kind = kind
        self.default = default
        self.annotation = annotation

    def __repr__(self):
        return "<Parameter \"" + self.name + "\">"


class Signature:
    empty = _empty

    def __init__(self, parameters=None, return_annotation=_empty):
        self.parameters = OrderedDict((p.name, p) for p in (parameters or []))
        self.return_annotation = return_annotation

    def bind(self, *args, **kwargs):
        return self._bind(args, kwargs, False)

    def bind_partial(self, *args, **kwargs):
        return self._bind(args, kwargs, True)

    def _bind(self, args, kwargs, partial):
        arguments = OrderedDict()
        rest = list(args)
        for name, p in self.parameters.items():
            if p.kind in (Parameter.POSITIONAL_ONLY, Parameter.POSITIONAL_OR_KEYWORD) and rest:
                arguments[name] = rest.pop(0)
            elif p.kind == Parameter.VAR_POSITIONAL:
                arguments[name] = tuple(rest)
                rest = []
            elif p.kind == Parameter.VAR_KEYWORD:
                extra = {k: v for k, v in kwargs.items() if k not in arguments}
                if extra:
                    arguments[name] = extra
            elif name in kwargs:
                arguments[name] = kwargs[name]
            elif p.default is _empty and not partial:
                raise TypeError("missing a required argument: '" + name + "'")
        if rest:
            raise TypeError("too many positional arguments")
        return BoundArguments(self, arguments)


class BoundArguments:
    def __init__(self, signature, arguments):
        self.signature = signature
        self.arguments = arguments

    def apply_defaults(self):
        for name, p in self.signature.parameters.items():
            if name not in self.arguments:
                if p.kind == Parameter.VAR_POSITIONAL:
                    self.arguments[name] = ()
                elif p.kind == Parameter.VAR_KEYWORD:
                    self.arguments[name] = {}
                elif p.default is not _empty:
                    self.arguments[name] = p.default

    @property
    def args(self):
        out = []
        for name, p in self.signature.parameters.items():
            if name not in self.arguments:
                break
            if p.kind == Parameter.VAR_POSITIONAL:
                out.extend(self.arguments[name])
            elif p.kind in (Parameter.POSITIONAL_ONLY, Parameter.POSITIONAL_OR_KEYWORD):
                out.append(self.arguments[name])
        return tuple(out)

    @property
    def kwargs(self):
        out = {}
        for name, p in self.signature.parameters.items():
            if name not in self.arguments:
                continue
            if p.kind == Parameter.VAR_KEYWORD:
                out.update(self.arguments[name])
            elif p.kind == Parameter.KEYWORD_ONLY:
                out[name] = self.arguments[name]
        return out


def unwrap(func):
    while hasattr(func, "__wrapped__"):
        func = func.__wrapped__
    return func


def _parameters_of(func):
    code = func.__code__
    names = list(code.co_varnames)
    n_positional = code.co_argcount
    n_keyword_only = code.co_kwonlyargcount
    defaults = func.__defaults__ or ()
    kwdefaults = func.__kwdefaults__ or {}
    annotations = getattr(func, "__annotations__", None) or {}
    params = []
    first_default = n_positional - len(defaults)
    for i in range(n_positional):
        name = names[i]
        default = defaults[i - first_default] if i >= first_default else _empty
        params.append(Parameter(name, Parameter.POSITIONAL_OR_KEYWORD, default, annotations.get(name, _empty)))
    at = n_positional + n_keyword_only
    if code.co_flags & 0x04:
        params.append(Parameter(names[at], Parameter.VAR_POSITIONAL))
        at += 1
    for name in names[n_positional:n_positional + n_keyword_only]:
        params.append(Parameter(name, Parameter.KEYWORD_ONLY, kwdefaults.get(name, _empty), annotations.get(name, _empty)))
    if code.co_flags & 0x08:
        params.append(Parameter(names[at], Parameter.VAR_KEYWORD))
    return params


def signature(obj, follow_wrapped=True):
    if isinstance(obj, type):
        init = obj.__init__
        return Signature(_parameters_of(unwrap(init) if follow_wrapped else init)[1:])
    bound_to = getattr(obj, "__self__", None)
    func = getattr(obj, "__func__", obj)
    if follow_wrapped:
        func = unwrap(func)
    if not hasattr(func, "__code__"):
        raise ValueError("no signature found for " + repr(obj))
    params = _parameters_of(func)
    if bound_to is not None and params:
        params = params[1:]
    return Signature(params)


class FullArgSpec:
    def __init__(self, args, varargs, varkw, defaults, kwonlyargs, kwonlydefaults, annotations):
        self.args = args
        self.varargs = varargs
        self.varkw = varkw
        self.defaults = defaults
        self.kwonlyargs = kwonlyargs
        self.kwonlydefaults = kwonlydefaults
        self.annotations = annotations


def getfullargspec(func):
    func = getattr(func, "__func__", func)
    params = _parameters_of(func)
    args = [p.name for p in params if p.kind == Parameter.POSITIONAL_OR_KEYWORD]
    varargs = [p.name for p in params if p.kind == Parameter.VAR_POSITIONAL]
    varkw = [p.name for p in params if p.kind == Parameter.VAR_KEYWORD]
    kwonly = [p.name for p in params if p.kind == Parameter.KEYWORD_ONLY]
    return FullArgSpec(args, varargs[0] if varargs else None, varkw[0] if varkw else None, func.__defaults__, kwonly,
                       func.__kwdefaults__, getattr(func, "__annotations__", None) or {})


def isclass(obj):
    return isinstance(obj, type)


def isfunction(obj):
    return hasattr(obj, "__code__") and not hasattr(obj, "__self__")


def ismethod(obj):
    return hasattr(obj, "__func__") and hasattr(obj, "__self__")


def isroutine(obj):
    return callable(obj) and not isinstance(obj, type)


def ismodule(obj):
    return type(obj).__name__ == "module"


def iscoroutinefunction(obj):
    return False


def isgeneratorfunction(obj):
    return False


def getmro(cls):
    return cls.__mro__
