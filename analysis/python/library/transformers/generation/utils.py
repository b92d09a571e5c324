# shardlens' model of transformers.generation.utils (not the library itself): GenerationMixin adds no modules or parameters.


class GenerationMixin:
    def prepare_inputs_for_generation(self, input_ids, past_key_values=None, attention_mask=None, inputs_embeds=None,
                                      cache_position=None, **kwargs):
        model_inputs = {"input_ids": input_ids, "past_key_values": past_key_values, "attention_mask": attention_mask,
                        "cache_position": cache_position}
        if inputs_embeds is not None:
            model_inputs["inputs_embeds"] = inputs_embeds
        model_inputs.update(kwargs)
        return model_inputs

    def generate(self, *args, **kwargs):
        raise NotImplementedError("shardlens does not run generation: plan with the model's forward instead")
