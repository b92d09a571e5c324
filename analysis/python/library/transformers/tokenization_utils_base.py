# shardlens' model of transformers.tokenization_utils_base (not the library itself): tokenizers are not modelled.


class PreTrainedTokenizerBase:
    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        raise NotImplementedError("shardlens does not model tokenizers")


class PreTrainedTokenizer(PreTrainedTokenizerBase):
    pass


class PreTrainedTokenizerFast(PreTrainedTokenizerBase):
    pass
