# shardlens' model of diffusers.utils.import_utils (not the library itself): modern PyTorch, no optional accelerators.

_TORCH_VERSION = (2, 6, 0)  # the PyTorch this model of diffusers stands for


def _version_tuple(version):
    parts = []
    for piece in str(version).split("+")[0].split("."):
        digits = ""
        for ch in piece:
            if ch.isdigit():
                digits += ch
            else:
                break
        parts.append(int(digits) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts[:3])


def compare_versions(library_or_version, operation, requirement_version):
    current = _version_tuple(library_or_version)
    required = _version_tuple(requirement_version)
    if operation == ">=":
        return current >= required
    if operation == ">":
        return current > required
    if operation == "<=":
        return current <= required
    if operation == "<":
        return current < required
    if operation == "==":
        return current == required
    if operation == "!=":
        return current != required
    raise ValueError(f"unknown comparison {operation}")


def is_torch_version(operation, version):
    return compare_versions(".".join(str(p) for p in _TORCH_VERSION), operation, version)


def is_torch_available():
    return True


def is_torch_npu_available():
    return False


def is_torch_xla_available():
    return False


def is_torch_xla_version(operation, version):
    return False


def is_xformers_available():
    return False


def is_flash_attn_available():
    return False


def is_flash_attn_3_available():
    return False


def is_sageattention_available():
    return False


def is_accelerate_available():
    return False


def is_peft_available():
    return False


def is_transformers_available():
    return True


def is_torch_mlu_available():
    return False


def is_kernels_available():
    return False
