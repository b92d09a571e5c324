# shardlens' model of transformers.utils.backbone_utils (not the library itself): the backbone mixins that vision
# configs and models (Swin, ConvNeXt, DINOv2, ...) derive from, and the out_features / out_indices alignment.
import enum


class BackboneType(enum.Enum):
    TIMM = "timm"
    TRANSFORMERS = "transformers"


def get_aligned_output_features_output_indices(out_features, out_indices, stage_names):
    """Both given: kept; one given: the other follows from stage_names; none: the last stage."""
    out_indices = list(out_indices) if out_indices is not None else None
    if out_features is None and out_indices is None:
        return [stage_names[-1]], [len(stage_names) - 1]
    if out_indices is None:
        return out_features, [stage_names.index(name) for name in out_features]
    if out_features is None:
        return [stage_names[i] for i in out_indices], out_indices
    return out_features, out_indices


class _AlignedOutputs:
    """out_features and out_indices kept aligned with stage_names (set either, read both)."""

    def _align(self, out_features, out_indices):
        self._out_features, self._out_indices = get_aligned_output_features_output_indices(
            out_features, out_indices, self.stage_names
        )

    out_features = property(lambda self: self._out_features, lambda self, value: self._align(value, None))
    out_indices = property(lambda self: self._out_indices, lambda self, value: self._align(None, value))


class BackboneConfigMixin(_AlignedOutputs):
    pass


class BackboneMixin(_AlignedOutputs):
    backbone_type = None
    has_attentions = True

    def _init_backbone(self, config):
        self.config = config
        self.use_timm_backbone = getattr(config, "use_timm_backbone", False)
        self.backbone_type = BackboneType.TIMM if self.use_timm_backbone else BackboneType.TRANSFORMERS
        if self.use_timm_backbone:
            raise NotImplementedError("timm backbones are not modelled")
        self.stage_names = config.stage_names
        self._out_features, self._out_indices = get_aligned_output_features_output_indices(
            getattr(config, "out_features", None), getattr(config, "out_indices", None), config.stage_names
        )
        self.num_features = None  # set by the backbone model's __init__

    @property
    def out_feature_channels(self):
        return {stage: self.num_features[i] for i, stage in enumerate(self.stage_names)}

    @property
    def channels(self):
        return [self.out_feature_channels[name] for name in self.out_features]

    def forward_with_filtered_kwargs(self, *args, **kwargs):
        if not self.has_attentions:
            kwargs.pop("output_attentions", None)
        return self(*args, **kwargs)
