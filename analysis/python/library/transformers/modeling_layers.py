# shardlens' model of transformers.modeling_layers (not the library itself): the layer base and the generic task heads.
from torch import nn

from .modeling_outputs import QuestionAnsweringModelOutput, SequenceClassifierOutputWithPast, TokenClassifierOutput


class GradientCheckpointingLayer(nn.Module):
    """A decoder layer; the real class reroutes __call__ through torch.utils.checkpoint when training with
    gradient checkpointing, which changes neither its parameters nor its inference forward."""

    gradient_checkpointing = False


class _GenericHead:
    """A task head over the base model, which it holds as `base_model_prefix` (built by AutoModel)."""

    base_model_prefix = "model"

    def _add_base_model(self, config):
        from .models.auto.modeling_auto import AutoModel

        setattr(self, self.base_model_prefix, AutoModel.from_config(config))

    def _base_model_outputs(self, input_ids, attention_mask, position_ids, past_key_values, inputs_embeds, **kwargs):
        return getattr(self, self.base_model_prefix)(
            input_ids, attention_mask=attention_mask, position_ids=position_ids, past_key_values=past_key_values,
            inputs_embeds=inputs_embeds, **kwargs,
        )


class GenericForSequenceClassification(_GenericHead):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._add_base_model(config)
        self.score = nn.Linear(config.hidden_size, self.num_labels, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, **kwargs):
        outputs = self._base_model_outputs(input_ids, attention_mask, position_ids, past_key_values, inputs_embeds,
                                           use_cache=use_cache, **kwargs)
        hidden_states = outputs.last_hidden_state
        logits = self.score(hidden_states)
        pooled_logits = logits[:, -1]
        return SequenceClassifierOutputWithPast(logits=pooled_logits, past_key_values=outputs.past_key_values)


class GenericForQuestionAnswering(_GenericHead):
    def __init__(self, config):
        super().__init__(config)
        self._add_base_model(config)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, **kwargs):
        outputs = self._base_model_outputs(input_ids, attention_mask, position_ids, past_key_values, inputs_embeds,
                                           **kwargs)
        logits = self.qa_outputs(outputs.last_hidden_state)
        start_logits, end_logits = logits.split(1, dim=-1)
        return QuestionAnsweringModelOutput(start_logits=start_logits.squeeze(-1).contiguous(),
                                            end_logits=end_logits.squeeze(-1).contiguous())


class GenericForTokenClassification(_GenericHead):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._add_base_model(config)
        if getattr(config, "classifier_dropout", None) is not None:
            classifier_dropout = config.classifier_dropout
        elif getattr(config, "hidden_dropout", None) is not None:
            classifier_dropout = config.hidden_dropout
        else:
            classifier_dropout = 0.1
        self.dropout = nn.Dropout(classifier_dropout)
        self.score = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, **kwargs):
        outputs = self._base_model_outputs(input_ids, attention_mask, position_ids, past_key_values, inputs_embeds,
                                           **kwargs)
        logits = self.score(self.dropout(outputs.last_hidden_state))
        return TokenClassifierOutput(logits=logits)
