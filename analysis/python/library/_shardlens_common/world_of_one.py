# A world of one process, as the tensor-parallel libraries' models see it (Megatron-Core, fairscale, ...): every
# copy / gather / scatter / reduce between ranks is the identity.


def identity(input_, *args, **kwargs):
    return input_
