"""attn for PyTorch: scaled_dot_product_attention on attn's kernels.

    import attn
    out = attn.scaled_dot_product_attention(q, k, v, is_causal=True)
    attn.hf.register()          # transformers: attn_implementation="attn"
    print(attn.kernel_cache_info())

With python/ on sys.path. The kernels come from attn.kernels' provider
($ATTN_KERNELS folders, the cache, or attn-compile); docs/PyTorch.md says
more. attn.spec and attn.kernels need no torch; the rest is imported on
first use, so that they work where torch is missing or older than 2.4.
"""

import importlib

__all__ = ["hf", "kernel_cache_info", "scaled_dot_product_attention"]


def kernel_cache_info():
    """Where this process's kernels came from: the provider's kernel
    folders, cache folder and compiler, and per spec its source, manifest,
    cold compile seconds and load seconds (KernelProvider.info)."""
    from .kernels import default_provider
    return default_provider().info()


def __getattr__(name):
    if name == "scaled_dot_product_attention":
        from .functional import scaled_dot_product_attention
        return scaled_dot_product_attention
    if name == "hf":
        return importlib.import_module(".hf", __name__)
    raise AttributeError("module 'attn' has no attribute %r" % name)
