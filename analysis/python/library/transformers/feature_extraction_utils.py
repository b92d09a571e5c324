# shardlens' model of transformers.feature_extraction_utils (not the library itself): feature extractors are not modelled.


class FeatureExtractionMixin:
    pass


class BatchFeature(dict):
    pass
