# Which packages are installed, asked the way libraries ask: find_spec, then the distribution's version.
import importlib.metadata
import importlib.util
import operator

COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">=": operator.ge, ">": operator.gt}


def _installed(name):
    found = importlib.util.find_spec(name) is not None
    version = "N/A"
    if found:
        try:
            version = importlib.metadata.version(name)
        except (ImportError, importlib.metadata.PackageNotFoundError):
            found = False
    return found, version


_torch_available, _torch_version = _installed("torch")
_peft_available, _ = _installed("some_package_nobody_installed")


def _release(text):
    """(major, minor) of a version string such as 2.4.0, 2.6.0a0+git1234."""
    numbers = []
    for part in text.split(".")[:2]:
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        numbers.append(int(digits or "0"))
    return tuple(numbers)


def is_torch_available():
    return _torch_available


def is_peft_available():
    return _peft_available


def is_torch_version(op, wanted):
    return COMPARE[op](_release(_torch_version), _release(wanted))
