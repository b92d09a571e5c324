# shardlens' model of numbers (not the library itself): the numeric tower's abstract classes.
# Python registers the built-in numbers with these classes; `__shardlens_registered__` tells the
# interpreter which (isinstance(3, numbers.Integral) is True). CPython ignores it.


class Number:
    __slots__ = ()
    __shardlens_registered__ = ("int", "bool", "float", "complex")


class Complex(Number):
    __slots__ = ()
    __shardlens_registered__ = ("int", "bool", "float", "complex")


class Real(Complex):
    __slots__ = ()
    __shardlens_registered__ = ("int", "bool", "float")


class Rational(Real):
    __slots__ = ()
    __shardlens_registered__ = ("int", "bool")


class Integral(Rational):
    __slots__ = ()
    __shardlens_registered__ = ("int", "bool")
