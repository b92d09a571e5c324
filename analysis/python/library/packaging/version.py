# shardlens' model of packaging.version (not the library itself): Version compares release numbers, then
# pre-release (a < b < rc < final) and post / dev markers.


class InvalidVersion(ValueError):
    pass


def _split_number(text):
    digits = ""
    rest = ""
    for i, ch in enumerate(text):
        if ch.isdigit():
            digits += ch
        else:
            rest = text[i:]
            break
    return digits, rest


class Version:
    def __init__(self, version):
        self._version = str(version).strip()
        text = self._version.lower()
        if text.startswith("v"):
            text = text[1:]
        local = ""
        if "+" in text:
            text, local = text.split("+", 1)
        release = []
        parts = text.split(".")
        pre = None
        post = None
        dev = None
        for i, part in enumerate(parts):
            digits, rest = _split_number(part)
            if digits == "":
                if i == 0:
                    raise InvalidVersion(f"Invalid version: '{version}'")
                rest = part
            else:
                release.append(int(digits))
            while rest:
                rest = rest.lstrip("-_.")
                for tag in ("rc", "alpha", "beta", "a", "b", "c", "post", "dev"):
                    if rest.startswith(tag):
                        number, rest = _split_number(rest[len(tag):])
                        number = int(number) if number else 0
                        if tag == "post":
                            post = number
                        elif tag == "dev":
                            dev = number
                        else:
                            pre = ({"alpha": "a", "beta": "b", "c": "rc"}.get(tag, tag), number)
                        break
                else:
                    raise InvalidVersion(f"Invalid version: '{version}'")
        if not release:
            raise InvalidVersion(f"Invalid version: '{version}'")
        self.release = tuple(release)
        self.pre = pre
        self.post = post
        self.dev = dev
        self.local = local or None

    def _key(self):
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre = (-2, 0)
        elif self.pre is None:
            pre = (2, 0)
        else:
            pre = ({"a": -1, "b": 0, "rc": 1}[self.pre[0]], self.pre[1])
        post = -1 if self.post is None else self.post
        dev = float("inf") if self.dev is None else self.dev
        return (tuple(release), pre, post, dev)

    @property
    def major(self):
        return self.release[0]

    @property
    def minor(self):
        return self.release[1] if len(self.release) > 1 else 0

    @property
    def micro(self):
        return self.release[2] if len(self.release) > 2 else 0

    @property
    def base_version(self):
        return ".".join(str(p) for p in self.release)

    @property
    def is_prerelease(self):
        return self.pre is not None or self.dev is not None

    def __lt__(self, other):
        return self._key() < other._key()

    def __le__(self, other):
        return self._key() <= other._key()

    def __gt__(self, other):
        return self._key() > other._key()

    def __ge__(self, other):
        return self._key() >= other._key()

    def __eq__(self, other):
        return isinstance(other, Version) and self._key() == other._key()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return self._version

    def __repr__(self):
        return f"<Version('{self._version}')>"


def parse(version):
    return Version(version)
