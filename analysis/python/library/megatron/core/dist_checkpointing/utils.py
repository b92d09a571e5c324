# shardlens' model of megatron.core.dist_checkpointing.utils (not the library itself): key renaming in state dicts.


def replace_prefix_for_sharding(sharded_state_dict, old_prefix, new_prefix):
    for value in sharded_state_dict.values():
        key = getattr(value, "key", None)
        if key is not None and key.startswith(old_prefix):
            value.key = new_prefix + key[len(old_prefix):]


def apply_prefix_mapping(sharded_state_dict, prefix_map):
    for value in sharded_state_dict.values():
        key = getattr(value, "key", None)
        if key is None:
            continue
        for old_prefix, new_prefix in prefix_map.items():
            if key.startswith(old_prefix):
                value.key = new_prefix + key[len(old_prefix):]
                break
