# shardlens' model of diffusers.loaders.peft (not the library itself): LoRA adapters are not modelled.


class PeftAdapterMixin:
    _hf_peft_config_loaded = False

    def add_adapter(self, adapter_config, adapter_name="default"):
        raise NotImplementedError("shardlens' model of diffusers has no PEFT adapters")
