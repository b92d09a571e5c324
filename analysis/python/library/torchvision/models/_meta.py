# shardlens' model of torchvision.models._meta (not the library itself): dataset label lists. Only their lengths
# decide structure (num_classes), so the names here are placeholders of the right count.

_IMAGENET_CATEGORIES = [f"imagenet_class_{i}" for i in range(1000)]
_COCO_CATEGORIES = [f"coco_class_{i}" for i in range(91)]
_COCO_PERSON_CATEGORIES = ["no person", "person"]
_COCO_PERSON_KEYPOINT_NAMES = [f"keypoint_{i}" for i in range(17)]
_VOC_CATEGORIES = [f"voc_class_{i}" for i in range(21)]
_KINETICS400_CATEGORIES = [f"kinetics_class_{i}" for i in range(400)]
