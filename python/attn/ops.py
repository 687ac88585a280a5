"""attn's attention as torch.library custom ops.

    attn::sdpa_forward(q, k, v, mask?, causal, scale?, mod) -> (out, lse)
    attn::sdpa_backward(dout, q, k, v, out, lse, mask?, causal, scale?, mod)
        -> (dq, dk, dv)

q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv] in any strides
(a copy only where the kernels cannot read them in place); mask None or a
tensor that broadcasts to [B, Hq, Sq, Sk] (bool: True keeps a key;
floating, of q's dtype: added to the scores); causal 'none', 'top_left' or
'bottom_right'; scale None = 1/sqrt(D); mod "" (none, the default) or
the name of a modification in attn.mods' registry (a custom op takes no
Python function: attn.scaled_dot_product_attention registers the traced
score_mod/mask_mod and passes its name), whose kernels (manifest mod=)
both ops run. out is [B, Hq, Sq, Dv] laid out as [B, Sq, Hq, Dv] in memory
(as SDPA's flash backend does: the out.transpose(1, 2) that models take
next is free), lse [B, Hq, Sq] f32. The gradients come in their inputs'
layouts where the last dim is innermost.

Each op has a fake implementation that allocates exactly as the real one,
so torch.compile traces through them without a graph break, and the forward
has an autograd formula: the backward op, no gradient for the mask (the
caller refuses masks that require one) and none through lse. The ops
validate nothing that attn.scaled_dot_product_attention checks first; the
runtime refuses the rest with an attn_runtime.AttnError.

The backward op reads attn.set_atomic_dq's setting and torch's
deterministic mode each time it runs (not when it is traced): with the
setting on and the mode off, it asks for the atomic dQ kernels and the
larger workspace they need.
"""

from typing import Optional, Tuple

import torch

from . import atomic_dq_enabled
from . import mods
from .kernels import default_provider
from .spec import KernelSpec

if not hasattr(torch.library, "custom_op"):
    raise ImportError("attn's PyTorch ops need torch >= 2.4 "
                      "(torch.library.custom_op); this is torch %s"
                      % torch.__version__)

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}
_ALIGNMENT = 16  # bytes: of data pointers and strides (docs/Runtime.md)


def _spec(q, v, mask, causal, backward, atomic_dq=False, mod=""):
    if mask is None:
        mask_kind = "none"
    else:
        mask_kind = "bool" if mask.dtype == torch.bool else "add"
    return KernelSpec(DTYPES[q.dtype], q.shape[-1], v.shape[-1], causal,
                      mask_kind, backward, atomic_dq, mods.lookup(mod))


def _module(q, v, mask, causal, backward, atomic_dq=False, mod=""):
    return default_provider().module(
        _spec(q, v, mask, causal, backward, atomic_dq, mod), q.device)


def _use_atomic_dq():
    """attn.set_atomic_dq(True), unless torch asks for deterministic
    algorithms."""
    return (atomic_dq_enabled()
            and not torch.are_deterministic_algorithms_enabled())


def _readable(t):
    """t, or a contiguous copy where the kernels cannot read it in place:
    they take any strides with the last one 1, and 16-byte aligned data
    pointers and strides (of dims of size > 1); rows that are not whole
    16-byte chunks (head dims such as 59) only the element's alignment."""
    alignment = _ALIGNMENT if t.shape[-1] * t.element_size() % _ALIGNMENT \
        == 0 else t.element_size()
    step = alignment // t.element_size()
    aligned = all(s % step == 0 for s, n in zip(t.stride()[:-1],
                                                t.shape[:-1]) if n > 1)
    if t.stride(-1) == 1 and aligned and t.data_ptr() % alignment == 0:
        return t
    return t.clone(memory_format=torch.contiguous_format)


def _outputs(q, v):
    """out and lse, for the real op and the fake one alike."""
    b, hq, sq, _ = q.shape
    out = q.new_empty((b, sq, hq, v.shape[-1])).transpose(1, 2)
    lse = q.new_empty((b, hq, sq), dtype=torch.float32)
    return out, lse


def _grad_like(t):
    """A gradient in t's layout when its last dim is innermost (so that
    autograd's views of it stay free), else contiguous."""
    g = torch.empty_like(t)
    if g.stride(-1) == 1:
        return g
    return t.new_empty(t.shape)


@torch.library.custom_op("attn::sdpa_forward", mutates_args=(),
                         device_types="cuda")
def sdpa_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                 mask: Optional[torch.Tensor], causal: str,
                 scale: Optional[float], mod: str = ""
                 ) -> Tuple[torch.Tensor, torch.Tensor]:
    module = _module(q, v, mask, causal, backward=False, mod=mod)
    out, lse = _outputs(q, v)
    q, k, v = (_readable(t) for t in (q, k, v))
    module.forward(q, k, v, causal=causal, scale=scale, mask=mask, out=out,
                   lse=lse, mod=mod or None)
    return out, lse


@sdpa_forward.register_fake
def _(q, k, v, mask, causal, scale, mod=""):
    return _outputs(q, v)


@torch.library.custom_op("attn::sdpa_backward", mutates_args=(),
                         device_types="cuda")
def sdpa_backward(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                  v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                  mask: Optional[torch.Tensor], causal: str,
                  scale: Optional[float], mod: str = ""
                  ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    atomic_dq = _use_atomic_dq()
    module = _module(q, v, mask, causal, backward=True, atomic_dq=atomic_dq,
                     mod=mod)
    dq, dk, dv = (_grad_like(t) for t in (q, k, v))
    q, k, v, out, dout = (_readable(t) for t in (q, k, v, out, dout))
    # With atomic_dq the binding allocates the atomic kernels' larger
    # workspace where the module has them (the provider may have fallen
    # back to deterministic ones).
    module.backward(q, k, v, out, dout, lse, dq, dk, dv, causal=causal,
                    scale=scale, mask=mask, atomic_dq=atomic_dq,
                    mod=mod or None)
    return dq, dk, dv


@sdpa_backward.register_fake
def _(dout, q, k, v, out, lse, mask, causal, scale, mod=""):
    return tuple(_grad_like(t) for t in (q, k, v))


def _setup_context(ctx, inputs, output):
    q, k, v, mask, causal, scale = inputs[:6]
    mod = inputs[6] if len(inputs) > 6 else ""
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, mask)
    ctx.causal = causal
    ctx.scale = scale
    ctx.mod = mod
    ctx.mark_non_differentiable(lse)


def _backward(ctx, dout, _):
    q, k, v, out, lse, mask = ctx.saved_tensors
    dq, dk, dv = torch.ops.attn.sdpa_backward(dout, q, k, v, out, lse, mask,
                                              ctx.causal, ctx.scale, ctx.mod)
    return dq, dk, dv, None, None, None, None


sdpa_forward.register_autograd(_backward, setup_context=_setup_context)
