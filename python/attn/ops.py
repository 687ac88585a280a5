"""attn's attention as torch.library custom ops.

    attn::sdpa_forward(q, k, v, mask?, causal, scale?, mod, mod_operands)
        -> (out, lse)
    attn::sdpa_backward(dout, q, k, v, out, lse, mask?, causal, scale?, mod,
        mod_operands) -> (dq, dk, dv)

q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv] in any strides (a
copy only where the kernels cannot read them in place); mask None or a
tensor that broadcasts to [B, Hq, Sq, Sk] (bool: True keeps a key;
floating, of q's dtype: added to the scores); causal 'none', 'top_left' or
'bottom_right'; scale None = 1/sqrt(D); mod "" (none) or the name of a
modification in attn.mods' registry (a custom op takes no Python function:
attn.scaled_dot_product_attention registers the traced score_mod/mask_mod
and passes its name), whose kernels (manifest mod=) both ops run;
mod_operands the tensors it reads, in its order (its operand_types: dtype
and rank), [] for none: inputs of the ops, so that torch.compile's graphs
take them at every call rather than keep the traced ones. out is [B, Hq,
Sq, Dv] laid out as [B, Sq, Hq, Dv] in memory (as SDPA's flash backend
does: the out.transpose(1, 2) that models take next is free), lse [B, Hq,
Sq] f32. The gradients come in their inputs' layouts where the last dim is
innermost.

Each op has a fake implementation that allocates exactly as the real one,
so torch.compile traces through them without a graph break, and the forward
has an autograd formula: the backward op, no gradient for the mask and the
mod operands (the caller refuses ones that require one) and none through
lse. The ops validate nothing that attn.scaled_dot_product_attention checks
first, but for the mod operands' dtypes and ranks, which must be the
registered modification's (a ValueError); the runtime refuses the rest with
an attn_runtime.AttnError.

The backward op reads attn.set_atomic_dq's setting and torch's
deterministic mode each time it runs (not when it is traced): with the
setting on and the mode off, it asks for the atomic dQ kernels and the
larger workspace they need. Both ops read torch's TF32 setting for f32
matmuls the same way: with it on, f32 inputs may run on kernels of one
TF32 product a step (attn-compile --tf32), else on 3xTF32's.
"""

from typing import List, Optional, Tuple

import torch

from . import atomic_dq_enabled
from . import mods
from .kernels import default_provider
from .spec import KernelSpec

if not hasattr(torch.library, "custom_op"):
    raise ImportError("attn's PyTorch ops need torch >= 2.4 "
                      "(torch.library.custom_op); this is torch %s"
                      % torch.__version__)

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
_ALIGNMENT = 16  # bytes: of data pointers and strides (docs/Runtime.md)


def _spec(q, v, mask, causal, backward, atomic_dq=False, mod="",
          mod_operands=()):
    if mask is None:
        mask_kind = "none"
    else:
        mask_kind = "bool" if mask.dtype == torch.bool else "add"
    return KernelSpec(DTYPES[q.dtype], q.shape[-1], v.shape[-1], causal,
                      mask_kind, backward, atomic_dq,
                      _modification(mod, mod_operands),
                      tf32=q.dtype == torch.float32 and _tf32_allowed())


def _tf32_allowed():
    """Whether torch lets f32 matmuls on CUDA run on TF32
    (torch.backends.cuda.matmul.fp32_precision == 'tf32', or allow_tf32
    on a torch without it): then f32 calls may take kernels of one TF32
    product a step (f16's accuracy, about 2x faster); else 3xTF32's
    (f32's accuracy)."""
    matmul = torch.backends.cuda.matmul
    precision = getattr(matmul, "fp32_precision", None)
    if precision is not None:
        return precision == "tf32"
    return bool(matmul.allow_tf32)


def _modification(mod, mod_operands):
    """The registered modification of name `mod` (None for ""), checked
    against the tensors given for it."""
    registered = mods.lookup(mod)
    given = tuple(mods.operand_type(t) for t in mod_operands)
    wanted = registered.operand_types if registered is not None else ()
    if given != wanted:
        raise ValueError(
            "the modification %r reads %d tensors (dtype and rank: %s), but "
            "the op was given %d (%s)" % (mod, len(wanted), list(wanted),
                                          len(given), list(given)))
    return registered


def _module(q, v, mask, causal, backward, atomic_dq=False, mod="",
            mod_operands=()):
    spec = _spec(q, v, mask, causal, backward, atomic_dq, mod, mod_operands)
    module = default_provider().module(spec, q.device)
    # The runtime then takes f32=tf32 kernels where the module has them.
    module.allow_tf32 = spec.tf32
    return module


def _mod_kwargs(mod, mod_operands):
    """The binding's modification arguments: mod_operands= only where the
    modification reads tensors."""
    kwargs = {"mod": mod or None}
    if mod_operands:
        kwargs["mod_operands"] = list(mod_operands)
    return kwargs


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
                 scale: Optional[float], mod: str,
                 mod_operands: List[torch.Tensor]
                 ) -> Tuple[torch.Tensor, torch.Tensor]:
    module = _module(q, v, mask, causal, backward=False, mod=mod,
                     mod_operands=mod_operands)
    out, lse = _outputs(q, v)
    q, k, v = (_readable(t) for t in (q, k, v))
    module.forward(q, k, v, causal=causal, scale=scale, mask=mask, out=out,
                   lse=lse, **_mod_kwargs(mod, mod_operands))
    return out, lse


@sdpa_forward.register_fake
def _(q, k, v, mask, causal, scale, mod, mod_operands):
    return _outputs(q, v)


@torch.library.custom_op("attn::sdpa_backward", mutates_args=(),
                         device_types="cuda")
def sdpa_backward(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                  v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                  mask: Optional[torch.Tensor], causal: str,
                  scale: Optional[float], mod: str,
                  mod_operands: List[torch.Tensor]
                  ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    atomic_dq = _use_atomic_dq()
    module = _module(q, v, mask, causal, backward=True, atomic_dq=atomic_dq,
                     mod=mod, mod_operands=mod_operands)
    dq, dk, dv = (_grad_like(t) for t in (q, k, v))
    q, k, v, out, dout = (_readable(t) for t in (q, k, v, out, dout))
    # With atomic_dq the binding allocates the atomic kernels' larger
    # workspace where the module has them (the provider may have fallen
    # back to deterministic ones).
    module.backward(q, k, v, out, dout, lse, dq, dk, dv, causal=causal,
                    scale=scale, mask=mask, atomic_dq=atomic_dq,
                    **_mod_kwargs(mod, mod_operands))
    return dq, dk, dv


@sdpa_backward.register_fake
def _(dout, q, k, v, out, lse, mask, causal, scale, mod, mod_operands):
    return tuple(_grad_like(t) for t in (q, k, v))


def _setup_context(ctx, inputs, output):
    q, k, v, mask, causal, scale, mod, mod_operands = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, mask, *mod_operands)
    ctx.causal = causal
    ctx.scale = scale
    ctx.mod = mod
    ctx.mark_non_differentiable(lse)


def _backward(ctx, dout, _):
    q, k, v, out, lse, mask, *mod_operands = ctx.saved_tensors
    dq, dk, dv = torch.ops.attn.sdpa_backward(dout, q, k, v, out, lse, mask,
                                              ctx.causal, ctx.scale, ctx.mod,
                                              mod_operands)
    # One gradient per input; for the list of mod operands a list of None
    # (the caller refuses operands that require grad).
    return (dq, dk, dv, None, None, None, None,
            [None] * len(mod_operands))


sdpa_forward.register_autograd(_backward, setup_context=_setup_context)
