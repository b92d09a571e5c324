# shardlens' model of megatron.core.transformer.moe.grouped_gemm_util (not the library itself): no grouped_gemm kernels.
ops = None


def grouped_gemm_is_available():
    return False


def assert_grouped_gemm_is_available():
    assert grouped_gemm_is_available(), "Grouped GEMM is not available. Please run `pip install git+https://github.com/fanshiqing/grouped_gemm@main`."
