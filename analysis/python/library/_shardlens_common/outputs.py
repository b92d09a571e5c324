# Model outputs read by name, by key, or by position, None fields skipped: the base of transformers' ModelOutput
# and diffusers' BaseOutput.


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
