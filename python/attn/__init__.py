"""attn for PyTorch: scaled_dot_product_attention on attn's kernels.

    import attn
    out = attn.scaled_dot_product_attention(q, k, v, is_causal=True)
    attn.hf.register()          # transformers: attn_implementation="attn"
    print(attn.kernel_cache_info())
    attn.set_atomic_dq(True)    # atomic dQ: dq not bitwise reproducible

With python/ on sys.path. The kernels come from attn.kernels' provider
($ATTN_KERNELS folders, the cache, or attn-compile); docs/PyTorch.md says
more. attn.spec and attn.kernels need no torch; the rest is imported on
first use, so that they work where torch is missing or older than 2.4.
"""

import importlib

__all__ = ["atomic_dq_enabled", "hf", "kernel_cache_info",
           "scaled_dot_product_attention", "set_atomic_dq"]

_atomic_dq = False


def set_atomic_dq(enabled):
    """Lets the backward use attn's atomic dQ kernels (enabled=True) or not
    (False, the default), for the whole process from the next backward on.

    The atomic dQ mode sums each query row's dQ over the key tiles with f32
    reductions in the dK/dV kernel instead of a second pass over the keys:
    dq is then not bitwise reproducible run to run (dk and dv still are).
    On an H200 it runs at 1.08x to 1.19x the deterministic kernels' speed
    at D = 128 and 0.94x to 1.02x at D = 64 (docs/GPU.md, "dQ through a
    tensor map"). It is ignored, and the
    deterministic kernels run, while
    torch.are_deterministic_algorithms_enabled() is True. The
    kernels come from attn-compile --atomic-dq (a cache entry of their
    own) or an ATTN_KERNELS folder that has them (manifest dq=atomic);
    where nothing supplies them (sm_80 has none), the deterministic ones
    run, with a warning on the `attn` logger."""
    global _atomic_dq
    if not isinstance(enabled, bool):
        raise TypeError("set_atomic_dq takes a bool, not %s"
                        % type(enabled).__name__)
    _atomic_dq = enabled


def atomic_dq_enabled():
    """What set_atomic_dq() last set (False by default), whatever torch's
    deterministic mode says."""
    return _atomic_dq


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
