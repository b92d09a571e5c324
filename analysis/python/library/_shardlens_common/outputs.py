# Model outputs read by name, by key, or by position, None fields skipped: the base of transformers' ModelOutput
# and diffusers' BaseOutput.
from _shardlens_common.tables import table_dataclass


class FieldsByPosition:
    def keys(self):
        return [k for k, v in self.__dict__.items() if v is not None]

    def values(self):
        return [v for k, v in self.__dict__.items() if v is not None]

    def items(self):
        return [(k, v) for k, v in self.__dict__.items() if v is not None]

    def to_tuple(self):
        return tuple(self.values())

    def __getitem__(self, k):
        if isinstance(k, str):
            return self.__dict__[k]
        return self.to_tuple()[k]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())


def output_dataclass(name, base, field_names):
    """The @dataclass `class name(base)` whose fields, in the order of `field_names` (space-separated), all default
    to None: the libraries' many output classes differ only in their field lists, kept as one table line each."""
    return table_dataclass(name, (base,), dict.fromkeys(field_names.split()))
