# shardlens' stand-in for torchtitan.components.tokenizer (not the package itself): tokenizers are not modelled.


class BaseTokenizer:
    eos_id = None
    bos_id = None

    def encode(self, *args, **kwargs):
        raise NotImplementedError("shardlens does not model tokenizers")

    def decode(self, *args, **kwargs):
        raise NotImplementedError("shardlens does not model tokenizers")

    def get_vocab_size(self):
        raise NotImplementedError("shardlens does not model tokenizers")


def build_hf_tokenizer(job_config):
    raise NotImplementedError("shardlens does not model tokenizers")
