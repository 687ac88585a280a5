"""attn.scaled_dot_product_attention: torch.nn.functional's, on attn's
kernels.

The arguments are checked here, in plain Python that torch.compile traces,
before the custom op (attn/ops.py) runs: an input the kernels cannot serve is
a ValueError (a TypeError for an argument of the wrong type) that says what
to change, never a silent fallback
to another implementation. The checks need only torch; the op needs torch
>= 2.4, and on an older torch a call that passes them says so.
"""

import torch

from . import mods

try:
    from . import ops
    _OPS_MISSING = None
except ImportError as e:  # torch < 2.4: no torch.library.custom_op
    ops = None
    _OPS_MISSING = str(e)

__all__ = ["scaled_dot_product_attention"]

_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def scaled_dot_product_attention(query, key, value, attn_mask=None, *,
                                 is_causal=False, scale=None,
                                 enable_gqa=False, score_mod=None,
                                 mask_mod=None, mod_name=None):
    """softmax(query key^T * scale + mask) value on attn's GPU kernels,
    with torch.nn.functional.scaled_dot_product_attention's arguments and
    their meanings, less dropout: there is no dropout_p (attn's kernels have
    no dropout). is_causal, scale and enable_gqa are keyword-only, so that a
    call written for torch that passes dropout_p by position fails instead
    of reading it as is_causal.

    query [B, Hq, Sq, D], key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv]: CUDA
    tensors of one dtype, bfloat16, float16 or float32 (under torch.autocast
    on CUDA, floating inputs are cast to its dtype first, as torch's SDPA
    is), any strides. float32 runs on TF32 tensor cores: three TF32
    products a step (3xTF32, f32's accuracy) by default, one (f16's
    accuracy, about 2x faster) where torch allows TF32 for f32 matmuls
    (torch.backends.cuda.matmul.fp32_precision = 'tf32', or allow_tf32 =
    True). Hq != Hkv (GQA, MQA) needs enable_gqa=True and Hq % Hkv == 0.
    attn_mask: None, or a tensor that broadcasts to [B, Hq, Sq, Sk]: bool
    (True = the key takes part) or floating of query's dtype (added to the
    scores); it gets no gradient, so one that requires grad is refused.
    is_causal: the top-left causal mask, torch.ones(Sq, Sk).tril() (query
    i sees keys j <= i, also when Sq != Sk); an error together with
    attn_mask, as in torch. scale: None = 1/sqrt(D).

    score_mod(score, b, h, q_idx, kv_idx) -> score and mask_mod(b, h,
    q_idx, kv_idx) -> bool (True keeps the key): FlexAttention's
    modifications, traced into the kernels' MLIR (attn.mods says which
    operations). score is the scaled score; h the query head; the mask,
    is_causal and mask_mod apply to the modified score; the gradient flows
    through score_mod. They may read captured tensors (bias[h, q_idx -
    kv_idx], doc_ids[q_idx]; a 0-dim tensor as a value), which the kernels
    take as operands at every call: on query's device, float32, float16,
    bfloat16, bool, int32 or int64, up to 4 dims; no gradient flows to
    them, so one that requires grad is refused while autograd records.
    mod_name: the name the kernels are compiled and cached under (1 to 64
    of [A-Za-z0-9_]; None: a hash of the traced regions, whose text has
    the tensors' dtypes and ranks but not their sizes or values); one name
    may not stand for two different modifications in a process.

    Returns [B, Hq, Sq, Dv] in query's dtype. A query row that sees no key
    gets zeros (and zero gradients); torch's math backend gives NaN there.
    Differentiable in query, key and value: the backward runs attn's
    backward kernels on the saved output and log-sum-exp. The kernels come
    from attn.kernels (ATTN_KERNELS, the cache, or attn-compile).
    """
    _check_operands(query, key, value, enable_gqa)
    _check_options(is_causal, scale)
    if attn_mask is not None:
        _check_mask(attn_mask, query, key, is_causal)
    mod, mod_operands = _mod_operands(score_mod, mask_mod, mod_name)
    query, key, value, attn_mask = _autocast(query, key, value, attn_mask)
    _check_dtypes(query, key, value, attn_mask)
    _check_devices(query, key, value, attn_mask)
    _check_mod_operands(mod_operands, query)
    if ops is None:
        raise RuntimeError(_OPS_MISSING)
    out, _ = torch.ops.attn.sdpa_forward(
        query, key, value, attn_mask, "top_left" if is_causal else "none",
        None if scale is None else float(scale), mod, mod_operands)
    return out


def _constant_result(fn):
    """fn, which torch.compile calls while tracing and whose result (a str)
    it takes as a constant: the modification's tracer (hashlib included)
    is not for Dynamo to trace, and the op then sees a constant name."""
    mark = getattr(getattr(torch, "compiler", None), "assume_constant_result",
                   None)
    return mark(fn) if mark is not None else fn


# torch.compiler.is_compiling (torch >= 2.3), which torch.compile takes for
# True while it traces.
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling",
                        None) or (lambda: False)


def _mod_operands(score_mod, mask_mod, mod_name):
    """The registered name of the traced modification ("" for none) and
    the tensors it reads. Eagerly, the tensors the tracer found; under
    torch.compile, the same tensors read again where the functions read
    them (mods.follow), so that they are inputs of the compiled graph, not
    constants of it."""
    if _is_compiling():
        lines = _modification(score_mod, mask_mod, mod_name).split("\n")
        return lines[0], [mods.follow(score_mod, mask_mod, path)
                          for path in lines[1:]]
    mod = _traced(score_mod, mask_mod, mod_name)
    if mod is None:
        return "", []
    return mod.name, list(mod.operands)


def _traced(score_mod, mask_mod, mod_name):
    """The traced and registered modification, None for none."""
    if score_mod is None and mask_mod is None:
        if mod_name is not None:
            raise ValueError("mod_name=%r names a modification, but there is "
                             "no score_mod or mask_mod" % (mod_name,))
        return None
    mod = mods.Modification(score_mod, mask_mod, mod_name)
    mods.register(mod)
    return mod


@_constant_result
def _modification(score_mod, mask_mod, mod_name):
    """The registered name of the traced modification ("" for none), then
    a line per tensor it reads: where the functions find it
    (Modification.paths). A str, which torch.compile takes as a
    constant."""
    mod = _traced(score_mod, mask_mod, mod_name)
    if mod is None:
        return ""
    return "\n".join((mod.name,) + mod.paths)


def _check_operands(query, key, value, enable_gqa):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s must be a torch.Tensor, not %s"
                            % (name, type(t).__name__))
        if t.dim() != 4:
            raise ValueError(
                "%s has shape %s: attn takes 4-D [B, H, S, D] tensors (add a "
                "batch dim to 3-D ones with .unsqueeze(0))"
                % (name, tuple(t.shape)))
    b, hq, _, d = query.shape
    if key.shape[0] != b or value.shape[0] != b:
        raise ValueError("query, key and value must have one batch size B, "
                         "not %d, %d and %d"
                         % (b, key.shape[0], value.shape[0]))
    if key.shape[1] != value.shape[1] or key.shape[2] != value.shape[2]:
        raise ValueError("key %s and value %s must have the same heads Hkv "
                         "and length Sk" % (tuple(key.shape),
                                            tuple(value.shape)))
    if key.shape[3] != d:
        raise ValueError("query and key must have the same head dim D, not "
                         "%d and %d" % (d, key.shape[3]))
    hkv = key.shape[1]
    if hq != hkv and not enable_gqa:
        raise ValueError("query has %d heads, key and value %d: pass "
                         "enable_gqa=True for grouped-query attention"
                         % (hq, hkv))
    if hq % hkv != 0:
        raise ValueError("query's %d heads are not a multiple of key's and "
                         "value's %d (grouped-query attention needs Hq %% Hkv "
                         "== 0)" % (hq, hkv))
    for name, t in (("query", query), ("key", key), ("value", value)):
        if 0 in t.shape:
            raise ValueError("%s has shape %s: attn's kernels need every "
                             "size >= 1" % (name, tuple(t.shape)))


def _check_mod_operands(operands, query):
    for n, t in enumerate(operands):
        if t.device != query.device:
            raise ValueError("%s is on %s, query on %s: put it on query's "
                             "device" % (_operand_name(n, t), t.device,
                                         query.device))
        if t.requires_grad and torch.is_grad_enabled():
            raise ValueError(
                "%s requires grad, but attn does not differentiate through "
                "the tensors a modification reads: pass a detached tensor "
                "(t.detach()), or call under torch.no_grad()"
                % _operand_name(n, t))


def _operand_name(n, t):
    return "the tensor %d that the modification reads (%s %s)" % (
        n, t.dtype, list(t.shape))


def _check_options(is_causal, scale):
    if not isinstance(is_causal, bool):
        raise TypeError("is_causal must be a bool, not %s"
                        % type(is_causal).__name__)
    if scale is not None and not isinstance(scale, (int, float)):
        raise TypeError("scale must be None or a number, not %s"
                        % type(scale).__name__)


def _check_mask(mask, query, key, is_causal):
    if is_causal:
        raise ValueError("is_causal=True and attn_mask are exclusive (as in "
                         "torch): fold the causal mask into attn_mask, or "
                         "drop attn_mask")
    if not isinstance(mask, torch.Tensor):
        raise TypeError("attn_mask must be a torch.Tensor, not %s"
                        % type(mask).__name__)
    if mask.dtype != torch.bool and not mask.is_floating_point():
        raise ValueError("attn_mask has dtype %s: attn takes a bool mask "
                        "(True = keep) or a floating one of query's dtype "
                        "(added to the scores)" % mask.dtype)
    if mask.requires_grad:
        raise ValueError("attn_mask requires grad, but attn computes no "
                         "gradient for the mask: pass attn_mask.detach(), or "
                         "use torch's SDPA for a learned bias")
    full = (query.shape[0], query.shape[1], query.shape[2], key.shape[2])
    broadcasts = mask.dim() <= 4 and all(
        n in (1, f) for n, f in zip(reversed(mask.shape), reversed(full)))
    if not broadcasts:
        raise ValueError("attn_mask has shape %s, which does not broadcast "
                         "to [B, Hq, Sq, Sk] = %s"
                         % (tuple(mask.shape), list(full)))


def _autocast(query, key, value, mask):
    """The inputs as torch's SDPA sees them under CUDA autocast, which
    casts its floating inputs to the autocast dtype."""
    if not (query.is_cuda and torch.is_autocast_enabled("cuda")):
        return query, key, value, mask
    dtype = torch.get_autocast_dtype("cuda")

    def cast(t):
        return t.to(dtype) if t is not None and t.is_floating_point() else t
    return cast(query), cast(key), cast(value), cast(mask)


def _check_dtypes(query, key, value, mask):
    dtype = query.dtype
    if dtype not in _DTYPES:
        raise ValueError(
            "query has dtype %s: attn's kernels take torch.bfloat16, "
            "torch.float16 and torch.float32; cast the inputs "
            "(.to(torch.bfloat16)) or run under torch.autocast('cuda', "
            "dtype=torch.bfloat16)" % dtype)
    if key.dtype != dtype or value.dtype != dtype:
        raise ValueError("query, key and value must have one dtype, not %s, "
                        "%s and %s" % (dtype, key.dtype, value.dtype))
    if mask is not None and mask.is_floating_point() and mask.dtype != dtype:
        raise ValueError("a floating attn_mask must have query's dtype %s, "
                        "not %s: pass attn_mask.to(query.dtype), or a bool "
                        "mask (True = keep)" % (dtype, mask.dtype))


def _check_devices(query, key, value, mask):
    if not query.is_cuda:
        raise ValueError("query is on %s: attn's kernels run on CUDA devices; "
                         "move the inputs there (.cuda())" % query.device)
    named = [("key", key), ("value", value)]
    if mask is not None:
        named.append(("attn_mask", mask))
    for name, t in named:
        if t.device != query.device:
            raise ValueError("%s is on %s, query on %s: put them on one "
                             "device" % (name, t.device, query.device))
