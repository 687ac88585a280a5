#!/usr/bin/env python3
"""GPU tests of python/attn, the PyTorch front door, on precompiled kernels.

    python3 test/GPU/torch_tests.py --kernels DIR [--lib LIB]
        [--only forward,grad,f32,compile,fake,mods,modtensors,train,hf]
        [--seed N]
        [--atomic-dq]
    python3 test/GPU/torch_tests.py --write-mlir FILE

DIR: a folder (or several, os.pathsep-separated) with attn.manifest, set as
ATTN_KERNELS: what attn-compile writes for examples/gpu/kernels.mlir and
examples/gpu/backward.mlir concatenated into one file, which has every spec
these tests use (a training spec needs the forward and the backward's three
kernels in one folder). LIB: libattn_runtime.so (default: ATTN_RUNTIME_LIB,
or build-rt/lib, build/lib). A case whose kernels nothing supplies is
skipped with the provider's reason, never passed.

Parts (--only picks some):
  forward  attn.scaled_dot_product_attention against float64 math attention
           on fresh random inputs: bf16 and f16, D 64 and 128, ragged Sq/Sk
           (77/1000, 1000/77, 1/4097), causal (top-left, as torch's
           is_causal, also for Sq != Sk), GQA and MQA with enable_gqa, bool
           and additive masks of several broadcast shapes with rows that see
           no key (zeros there, no NaN), BSHD views and a non-unit last
           stride. max |out - ref| <= tol * max |ref|, tol 2e-2 for bf16,
           5e-3 for f16.
  grad     the same cases' dq, dk, dv (mask cases: bf16 D64, the masked
           backward kernels examples/gpu has) against float64 autograd of the
           math reference, same tolerances per gradient; every element
           finite, exact zeros where no score reaches; a second backward
           bitwise equal to the first (determinism).
  f32      float32 inputs, D 64 and 128, the forward and grad parts'
           unmasked cases: out, dq, dk, dv within 1e-4 (f32's tolerance, as
           gpu_tests.py's) on 3xTF32 kernels (attn-compile of
           examples/gpu/f32.mlir), then with torch's TF32 setting for f32
           matmuls on within f16's 5e-3, which must run f32=tf32 kernels
           (attn-compile --tf32 of the same file; the check is skipped
           where only the 3xTF32 ones serve).
  compile  torch.compile(fullgraph=True) of a small attention block (causal;
           bool mask under f32 -> bf16 autocast; dynamic shapes at two
           lengths): forward and gradients within the tolerance of eager,
           and torch._dynamo.explain reports 0 graph breaks.
  fake     the ops' fake implementations under FakeTensorMode give the real
           ops' shapes, dtypes and strides; torch.library.opcheck on both.
  mods     score_mod (soft-cap 30 tanh(s / 30)) and mask_mod (prefix-LM,
           100 keys) through attn.scaled_dot_product_attention, bf16, D 64,
           Sq = Sk = 300, not causal and causal: out, dq, dk, dv against
           float64 torch autograd of the same functions on index tensors;
           the kernels (mod=softcap30, mod=prefix_lm100) come from the
           folder or attn-compile (a folder from KernelSpec(..., mod=...)
           .mlir()).
  modtensors  modifications that read tensors (the ops' mod_operands),
           bf16, D 64, ragged shapes: a document mask from int64 ids [S]
           (mask_mod doc[q] == doc[kv] & kv <= q, Sq = Sk = 333) and from
           ids [B, S] with is_causal; a relative-position bias from an f32
           table [Hq, 2047] (positions i - j + 1023) in score_mod (Sq 300,
           Sk 333); ALiBi
           with per-head f32 slopes [Hq] (GQA 8/2, causal): out, dq, dk,
           dv against float64 torch autograd of the same functions applied
           densely, outputs NaN-poisoned first (the allocator's blocks they
           come from are filled with NaN), same tolerance;
           torch.library.opcheck of the forward op with a tensor operand;
           torch.compile(fullgraph=True) of the document mask, its
           function read from a module global and from a closure: 0 graph
           breaks, compiled forward and gradients within the tolerance of
           eager, and after new ids are bound (rebinding the global, a new
           closure) the compiled results follow them.
  train    a 2-layer causal LM (d_model 256, 4 heads of 64), trained 300
           steps under bf16 autocast on a synthetic task (a random block
           of 16 tokens repeated: fetch the token 16 back), once with attn
           and once with F.scaled_dot_product_attention, same seed and data:
           both loss curves every 25 steps; passes when both learn (final
           loss below 80% of the first) and the final losses (mean of the
           last 25 steps) agree within 0.05 + 2% of torch's.
  hf       a 2-layer Llama (hidden 256, 4 heads, 2 KV heads, head_dim 64,
           bf16, random weights) with attn_implementation from
           attn.hf.register() against the same weights with "sdpa": logits
           and the gradients of a few weights, without and with left
           padding (logits of real tokens, no loss on predictions made at
           padding), within 3e-2 * max |ref|; skipped without transformers.

--atomic-dq: attn.set_atomic_dq(True) first, so every backward asks for
the atomic dQ kernels (a folder from attn-compile --atomic-dq); grad's
second backward must then repeat dk and dv bitwise, dq only within the
tolerance.

Prints one line per check and "N passed, N failed, N skipped"; exit status 0
when nothing failed.

--write-mlir FILE writes the MLIR of the kernels that the mods and
modtensors parts ask for (KernelSpec(..., mod=...).mlir() of each, traced
with stand-in CPU tensors: the kernels serve every size), for
`attn-compile FILE -o DIR` on a machine with the compiler, and exits; it
needs torch but no GPU. Add DIR to --kernels.
"""

import argparse
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))

PARTS = ("forward", "grad", "f32", "compile", "fake", "mods", "modtensors",
         "train", "hf")
# float32: 3xTF32's, f32's (gpu_tests.py's); with TF32 allowed f16's.
TOLERANCE = {torch.bfloat16: 2e-2, torch.float16: 5e-3, torch.float32: 1e-4}
TF32_TOLERANCE = 5e-3
HF_TOLERANCE = 3e-2
TRAIN_STEPS = 300
TRAIN_ABS, TRAIN_REL = 0.05, 0.02
PERIOD = 16
DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16",
               torch.float32: "f32"}


class Skip(Exception):
    """A check that cannot run here; its message says why."""


class Results:
    def __init__(self):
        self.counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def run(self, name, check):
        started = time.time()
        try:
            detail = check()
            status = "PASS"
        except Skip as e:
            status, detail = "SKIP", str(e)
        except AssertionError as e:
            status, detail = "FAIL", str(e)
        except Exception as e:  # noqa: BLE001 - a failing check, reported
            status = "FAIL"
            detail = "%s: %s" % (type(e).__name__, str(e).strip()[:2000])
            traceback.print_exc()
        self.counts[status] += 1
        print("%-4s %s (%.1f s)%s" % (status, name, time.time() - started,
                                      ": " + detail if detail else ""),
              flush=True)

    def summary(self):
        return "%d passed, %d failed, %d skipped" % (
            self.counts["PASS"], self.counts["FAIL"], self.counts["SKIP"])


def provided(call):
    """Runs call(); a kernel that nothing supplies makes the check a Skip."""
    from attn.kernels import NoKernelError
    try:
        return call()
    except NoKernelError as e:
        raise Skip(str(e).splitlines()[0]) from e

#===------------------------------------------------------------------------===#
# forward and grad
#===------------------------------------------------------------------------===#


def reference(q, k, v, mask, causal, scale=None):
    """Math attention in float64 (q, k, v float64 leaves): K and V repeated
    per query head (so that dk and dv sum over a group); a row that sees no
    key gives 0, with finite gradients (its max is taken as 0)."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ k.transpose(-1, -2) * scale
    if mask is not None and mask.dtype != torch.bool:
        s = s + mask.double()
    visible = visibility(q.shape, k.shape[2], mask, causal, q.device)
    s = s.masked_fill(~visible, float("-inf"))
    top = s.detach().amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(s - top)
    total = e.sum(dim=-1, keepdim=True)
    return (e / torch.where(total > 0, total, torch.ones_like(total))) @ v


def visibility(q_shape, sk, mask, causal, device):
    """[B, Hq, Sq, Sk]: which keys each query sees (torch's is_causal is
    top-left: key j <= query i)."""
    b, hq, sq, _ = q_shape
    visible = torch.ones((sq, sk), dtype=torch.bool, device=device)
    if causal:
        visible = visible.tril()
    visible = visible.expand(b, hq, sq, sk)
    if mask is not None:
        keep = mask if mask.dtype == torch.bool else ~torch.isneginf(mask)
        visible = visible & keep
    return visible


def case(dtype, d, b, hq, hkv, sq, sk, causal=False, mask=None,
         layout="bhsd", grad=True, tf32=False):
    return dict(dtype=dtype, d=d, b=b, hq=hq, hkv=hkv, sq=sq, sk=sk,
                causal=causal, mask=mask, layout=layout, grad=grad, tf32=tf32)


def case_name(c):
    name = "%s d%d B=%d H=%d/%d Sq=%d Sk=%d%s" % (
        DTYPE_NAMES[c["dtype"]], c["d"], c["b"], c["hq"], c["hkv"], c["sq"],
        c["sk"], " causal" if c["causal"] else "")
    if c["mask"]:
        name += " mask=%s%s" % c["mask"]
    return name + " " + c["layout"] + (" tf32" if c["tf32"] else "")


def cases():
    """Unmasked cases for every dtype and head dim; masked ones too, whose
    gradients only bf16 D64 has kernels for (examples/gpu/backward.mlir)."""
    out = []
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            masked_grad = dtype == torch.bfloat16 and d == 64
            out += [
                case(dtype, d, 2, 8, 8, 77, 1000),
                case(dtype, d, 2, 8, 8, 77, 1000, causal=True,
                     layout="bshd"),
                case(dtype, d, 1, 8, 8, 1000, 77, causal=True),
                case(dtype, d, 1, 4, 4, 1, 4097),
                case(dtype, d, 2, 4, 4, 100, 300, causal=True,
                     layout="strided"),
                case(dtype, d, 2, 8, 2, 256, 256, causal=True,
                     layout="bshd"),
                case(dtype, d, 1, 8, 1, 128, 300),
                case(dtype, d, 2, 8, 8, 77, 1000,
                     mask=("bool", "[B,1,Sq,Sk]"), grad=masked_grad),
                case(dtype, d, 2, 8, 2, 200, 333, mask=("add", "[Sq,Sk]"),
                     grad=masked_grad),
                case(dtype, d, 2, 4, 4, 1000, 77, mask=("bool", "[B,1,1,Sk]"),
                     layout="bshd", grad=masked_grad),
            ]
    return out


def f32_cases():
    """float32 cases without masks (examples/gpu/f32.mlir has none), on
    3xTF32 kernels and then with TF32 allowed."""
    out = []
    for tf32 in (False, True):
        for d in (64, 128):
            f32 = dict(dtype=torch.float32, d=d, tf32=tf32)
            out += [
                case(b=2, hq=8, hkv=8, sq=77, sk=1000, **f32),
                case(b=2, hq=8, hkv=8, sq=77, sk=1000, causal=True,
                     layout="bshd", **f32),
                case(b=1, hq=8, hkv=8, sq=1000, sk=77, causal=True, **f32),
                case(b=1, hq=4, hkv=4, sq=1, sk=4097, **f32),
                case(b=2, hq=8, hkv=2, sq=256, sk=256, causal=True,
                     layout="strided", **f32),
                case(b=1, hq=8, hkv=1, sq=128, sk=300, **f32),
            ]
    return out


class Tf32Allowed:
    """torch's TF32 setting for f32 matmuls on CUDA on (fp32_precision, or
    allow_tf32 on a torch without it), restored after."""

    def __enter__(self):
        self.matmul = torch.backends.cuda.matmul
        self.new_api = hasattr(self.matmul, "fp32_precision")
        name = "fp32_precision" if self.new_api else "allow_tf32"
        self.saved = getattr(self.matmul, name)
        setattr(self.matmul, name, "tf32" if self.new_api else True)

    def __exit__(self, *exc):
        setattr(self.matmul, "fp32_precision" if self.new_api
                else "allow_tf32", self.saved)


def tolerance(c):
    return TF32_TOLERANCE if c["tf32"] else TOLERANCE[c["dtype"]]


def run_f32(c, check, gen):
    """check(c, gen) with TF32 allowed for a tf32 case, which must then have
    run on f32=tf32 kernels (a Skip where their 3xTF32 fallback served)."""
    import attn
    if not c["tf32"]:
        return check(c, gen)
    with Tf32Allowed():
        detail = check(c, gen)
    used = [r for r in attn.kernel_cache_info()["modules"]
            if r["spec"].startswith("f32_d%d_" % c["d"])
            and r["spec"].endswith("_tf32")]
    if used and used[-1]["source"] == "3xTF32 fallback":
        raise Skip("no f32=tf32 kernels supplied; the 3xTF32 ones ran")
    assert used, "no f32=tf32 spec was asked for"
    return detail + ", f32=tf32 kernels"


def operand(b, h, s, d, dtype, layout, gen):
    """A [B, H, S, D] tensor: contiguous (bhsd), a view of [B, S, H, D]
    memory (bshd, as transformers passes them) or of [B, H, D, S] (strided:
    the last dim not innermost, which attn copies)."""
    if layout == "bshd":
        t = torch.randn(b, s, h, d, generator=gen, device="cuda")
        return t.to(dtype).transpose(1, 2)
    if layout == "strided":
        t = torch.randn(b, h, d, s, generator=gen, device="cuda")
        return t.to(dtype).transpose(2, 3)
    return torch.randn(b, h, s, d, generator=gen, device="cuda").to(dtype)


def make_mask(c, gen):
    """bool [B,1,Sq,Sk] keeping ~80% with the first rows hiding every key;
    additive [Sq,Sk] N(0, 1) with ~10% -inf; bool [B,1,1,Sk] key padding."""
    kind, shape = c["mask"]
    b, sq, sk = c["b"], c["sq"], c["sk"]
    if shape == "[B,1,Sq,Sk]":
        keep = torch.rand(b, 1, sq, sk, generator=gen, device="cuda") < 0.8
        keep[:, :, :3] = False
        return keep
    if shape == "[Sq,Sk]":
        bias = torch.randn(sq, sk, generator=gen, device="cuda")
        hide = torch.rand(sq, sk, generator=gen, device="cuda") < 0.1
        return bias.masked_fill(hide, float("-inf")).to(c["dtype"])
    keep = torch.ones(b, 1, 1, sk, dtype=torch.bool, device="cuda")
    keep[0, :, :, sk // 2:] = False
    return keep


def inputs(c, gen):
    q = operand(c["b"], c["hq"], c["sq"], c["d"], c["dtype"], c["layout"],
                gen)
    k = operand(c["b"], c["hkv"], c["sk"], c["d"], c["dtype"], c["layout"],
                gen)
    v = operand(c["b"], c["hkv"], c["sk"], c["d"], c["dtype"], c["layout"],
                gen)
    mask = make_mask(c, gen) if c["mask"] else None
    return q, k, v, mask


def relative_error(got, ref, name):
    """max |got - ref| / max |ref|, after checking that got is finite."""
    got = got.double()
    bad = int((~torch.isfinite(got)).sum())
    assert bad == 0, "%d non-finite elements in %s" % (bad, name)
    top = float(ref.abs().max())
    err = float((got - ref).abs().max())
    return err / top if top > 0 else err


def check_forward(c, gen):
    import attn
    q, k, v, mask = inputs(c, gen)
    out = provided(lambda: attn.scaled_dot_product_attention(
        q, k, v, mask, is_causal=c["causal"], enable_gqa=c["hq"] != c["hkv"]))
    ref = reference(q.double(), k.double(), v.double(), mask, c["causal"])
    rel = relative_error(out, ref, "out")
    tol = tolerance(c)
    assert rel <= tol, "out rel err %.2e > %.0e" % (rel, tol)
    unseen = ~visibility(q.shape, c["sk"], mask, c["causal"], q.device).any(-1)
    if bool(unseen.any()):
        assert bool((out[unseen] == 0).all()), "rows that see no key are not 0"
    return "rel err %.2e%s" % (rel, ", %d rows see no key" % int(unseen.sum())
                              if bool(unseen.any()) else "")


def check_grad(c, gen):
    import attn
    q, k, v, mask = inputs(c, gen)
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    out = provided(lambda: attn.scaled_dot_product_attention(
        *leaves, mask, is_causal=c["causal"], enable_gqa=c["hq"] != c["hkv"]))
    dout = torch.randn(out.shape, generator=gen, device="cuda").to(out.dtype)
    grads = provided(lambda: torch.autograd.grad(out, leaves, dout,
                                                 retain_graph=True))
    again = torch.autograd.grad(out, leaves, dout)
    # The atomic dQ mode repeats dk and dv bitwise, dq within rounding.
    repeated = grads[1:] if attn.atomic_dq_enabled() else grads
    assert all(torch.equal(a, b) for a, b in zip(repeated, again[-len(
        repeated):])), "a second backward differs bitwise from the first"
    ref_leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    ref = reference(*ref_leaves, mask, c["causal"])
    ref.backward(dout.double())
    visible = visibility(q.shape, c["sk"], mask, c["causal"], q.device)
    group = c["hq"] // c["hkv"]
    row_seen = visible.any(-1)
    key_seen = visible.reshape(c["b"], c["hkv"], group, c["sq"],
                               c["sk"]).any(3).any(2)
    worst = 0.0
    tol = tolerance(c)
    for name, g, r, seen in zip(("dq", "dk", "dv"), grads, ref_leaves,
                                (row_seen, key_seen, key_seen)):
        rel = relative_error(g, r.grad, name)
        assert rel <= tol, "%s rel err %.2e > %.0e" % (name, rel, tol)
        assert bool((g[~seen] == 0).all()), \
            "%s is nonzero where no score reaches" % name
        worst = max(worst, rel)
    return "worst rel err %.2e, %s" % (
        worst, "dk, dv deterministic" if attn.atomic_dq_enabled()
        else "deterministic")

#===------------------------------------------------------------------------===#
# compile and fake
#===------------------------------------------------------------------------===#


def attention_block(x, w, mask=None, heads=4):
    """qkv projection, attention, heads merged: what a model does around
    SDPA (q, k, v are BSHD views)."""
    import attn
    b, s, d = x.shape
    q, k, v = (x @ w).view(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
    out = attn.scaled_dot_product_attention(q, k, v, mask,
                                            is_causal=mask is None)
    return out.transpose(1, 2).reshape(b, s, d)


def run_block(fn, x, w, mask):
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_()
    out = fn(x, w, mask)
    out.float().square().mean().backward()
    return out.detach(), x.grad, w.grad


def check_compile(variant, gen):
    import torch._dynamo
    d = 256
    dtype = torch.float32 if variant == "autocast" else torch.bfloat16
    lengths = (128, 200) if variant == "dynamic" else (128,)
    compiled = torch.compile(attention_block, fullgraph=True,
                             dynamic=variant == "dynamic")
    details = []
    for s in lengths:
        x = torch.randn(2, s, d, generator=gen, device="cuda").to(dtype)
        w = (torch.randn(d, 3 * d, generator=gen, device="cuda")
             / math.sqrt(d)).to(dtype)
        mask = None
        if variant == "autocast":
            mask = torch.rand(2, 1, s, s, generator=gen, device="cuda") < 0.8
        with torch.autocast("cuda", dtype=torch.bfloat16,
                            enabled=variant == "autocast"):
            eager = provided(lambda: run_block(attention_block, x, w, mask))
            got = run_block(compiled, x, w, mask)
            explain = torch._dynamo.explain(attention_block)(x, w, mask)
        assert explain.graph_break_count == 0, \
            "%d graph breaks: %s" % (explain.graph_break_count,
                                     explain.break_reasons)
        for name, g, e in zip(("out", "dx", "dw"), got, eager):
            rel = relative_error(g, e.double(), name)
            assert rel <= TOLERANCE[torch.bfloat16], \
                "S=%d: compiled %s differs from eager by %.2e" % (s, name,
                                                                  rel)
        details.append("S=%d: %d graph(s), 0 breaks" % (s,
                                                        explain.graph_count))
    return "; ".join(details)


def fake_case(gen, fake_mode=None):
    """The arguments of the ops' fake check: BSHD q and k, a contiguous v
    (Dv = 64 != D), a bool mask, inside fake_mode when given."""
    def make():
        q = torch.randn(2, 77, 8, 128, device="cuda",
                        dtype=torch.bfloat16).transpose(1, 2)
        k = torch.randn(2, 100, 2, 128, device="cuda",
                        dtype=torch.bfloat16).transpose(1, 2)
        v = torch.randn(2, 2, 100, 128, device="cuda", dtype=torch.bfloat16)
        return q, k, v
    if fake_mode is None:
        return make()
    with fake_mode:
        return make()


def layouts(tensors):
    return [(tuple(t.shape), t.stride(), t.dtype, t.device.type)
            for t in tensors]


def check_fake():
    from torch._subclasses.fake_tensor import FakeTensorMode
    import attn.ops  # noqa: F401 - registers the ops
    ops = torch.ops.attn
    real_in = fake_case(None)
    mode = FakeTensorMode()
    fake_in = fake_case(None, mode)
    real_fwd = provided(lambda: ops.sdpa_forward(*real_in, None, "top_left",
                                                 None, "", []))
    with mode:
        fake_fwd = ops.sdpa_forward(*fake_in, None, "top_left", None, "", [])
    assert layouts(fake_fwd) == layouts(real_fwd), \
        "forward: fake %s, real %s" % (layouts(fake_fwd), layouts(real_fwd))
    dout = torch.randn_like(real_fwd[0])
    real_bwd = provided(lambda: ops.sdpa_backward(dout, *real_in,
                                                  *real_fwd, None,
                                                  "top_left", None, "", []))
    with mode:
        fake_dout = torch.empty_like(fake_fwd[0])
        fake_bwd = ops.sdpa_backward(fake_dout, *fake_in, *fake_fwd, None,
                                     "top_left", None, "", [])
    assert layouts(fake_bwd) == layouts(real_bwd), \
        "backward: fake %s, real %s" % (layouts(fake_bwd), layouts(real_bwd))
    if not hasattr(torch.library, "opcheck"):
        return "shapes and strides agree (no torch.library.opcheck)"
    q, k, v = (t.detach().requires_grad_() for t in real_in)
    torch.library.opcheck(ops.sdpa_forward.default,
                          (q, k, v, None, "top_left", None, "", []))
    torch.library.opcheck(ops.sdpa_backward.default,
                          (dout, *real_in, *real_fwd, None, "top_left", None,
                           "", []))
    return "shapes and strides agree; opcheck passed"


def check_fake_mask():
    """A masked call with a broadcast bool mask through opcheck (fake vs
    real, autograd registration, AOT dispatch)."""
    import attn.ops  # noqa: F401 - registers the ops
    if not hasattr(torch.library, "opcheck"):
        raise Skip("no torch.library.opcheck")
    q, k, v = (torch.randn(2, 4, 96, 64, device="cuda",
                           dtype=torch.bfloat16).requires_grad_()
               for _ in range(3))
    mask = torch.rand(2, 1, 1, 96, device="cuda") < 0.8
    provided(lambda: torch.library.opcheck(
        torch.ops.attn.sdpa_forward.default,
        (q, k, v, mask, "none", 0.1, "", [])))
    return "opcheck passed"

#===------------------------------------------------------------------------===#
# mods
#===------------------------------------------------------------------------===#


def softcap_mod(score, b, h, q_idx, kv_idx):
    return torch.tanh(score / 30.0) * 30.0


def prefix_lm_mod(b, h, q_idx, kv_idx):
    return (kv_idx < 100) | (kv_idx <= q_idx)


def mod_reference(q, k, v, causal, score_mod, mask_mod):
    """The same math as the traced modification, in float64 with torch's
    autograd: the scaled scores through score_mod on index tensors, then
    the causal (top-left) mask and mask_mod."""
    b, h, sq, sk = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    idx = [torch.arange(n, device=q.device).view(*shape) for n, shape in (
        (b, (b, 1, 1, 1)), (h, (1, h, 1, 1)), (sq, (1, 1, sq, 1)),
        (sk, (1, 1, 1, sk)))]
    if score_mod is not None:
        s = score_mod(s, *idx)
    visible = torch.ones((b, h, sq, sk), dtype=torch.bool, device=q.device)
    if causal:
        visible = visible & torch.ones(sq, sk, dtype=torch.bool,
                                       device=q.device).tril()
    if mask_mod is not None:
        visible = visible & mask_mod(*idx)
    s = s.masked_fill(~visible, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def check_mod(score_mod, mask_mod, name, causal, gen):
    """bf16, D 64, Sq = Sk = 300: forward and dq, dk, dv against float64
    autograd of mod_reference."""
    import attn
    q, k, v = (torch.randn(2, 4, 300, 64, generator=gen, device="cuda")
               .to(torch.bfloat16).requires_grad_() for _ in range(3))
    out = provided(lambda: attn.scaled_dot_product_attention(
        q, k, v, is_causal=causal, score_mod=score_mod, mask_mod=mask_mod,
        mod_name=name))
    dout = torch.randn(out.shape, generator=gen, device="cuda").to(out.dtype)
    grads = provided(lambda: torch.autograd.grad(out, (q, k, v), dout))
    ref_leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    ref = mod_reference(*ref_leaves, causal, score_mod, mask_mod)
    return compare_with_grads(out, grads, ref, ref_leaves, dout)


def compare_with_grads(out, grads, ref, ref_leaves, dout):
    """Backpropagates dout through the float64 reference `ref` (of
    `ref_leaves`) and checks out and grads against it at bf16's
    tolerance; the worst relative error, as a case's detail."""
    ref.backward(dout.double())
    tol = TOLERANCE[torch.bfloat16]
    worst = 0.0
    for label, got, want in zip(("out", "dq", "dk", "dv"),
                                (out.detach(),) + tuple(grads),
                                (ref,) + tuple(t.grad for t in ref_leaves)):
        rel = relative_error(got, want.detach(), label)
        assert rel <= tol, "%s rel err %.2e > %.0e" % (label, rel, tol)
        worst = max(worst, rel)
    return "worst rel err %.2e" % worst

#===------------------------------------------------------------------------===#
# modtensors
#===------------------------------------------------------------------------===#

# The tensors the modifications below read: set per case by make_tensors,
# read by the functions as module globals (as a model's code reads its
# buffers), so that check_mod_tensors' float64 reference applies the same
# functions. Python numbers they read are constants of the traced regions,
# fixed here: the kernels of a name are picked by the name.
DOC = None        # int64 [S]: document ids
DOC_B = None      # int64 [B, S]
REL_TABLE = None  # f32 [Hq, 2 * REL_MAX - 1]
REL_MAX = 1024    # relative positions i - j in (-REL_MAX, REL_MAX)
SLOPES = None     # f32 [Hq]


def doc_causal_mod(b, h, q_idx, kv_idx):
    return (DOC[q_idx] == DOC[kv_idx]) & (kv_idx <= q_idx)


def doc_batch_mod(b, h, q_idx, kv_idx):
    return DOC_B[b, q_idx] == DOC_B[b, kv_idx]


def rel_bias_mod(score, b, h, q_idx, kv_idx):
    return score + REL_TABLE[h, q_idx - kv_idx + REL_MAX - 1]


def alibi_slopes_mod(score, b, h, q_idx, kv_idx):
    return score - SLOPES[h] * torch.abs(q_idx - kv_idx)


def documents(b, s, gen):
    """int64 [b, s] document ids: a new document starts at 1 in 40 tokens
    (so some rows see a single key)."""
    starts = torch.rand((b, s), generator=gen, device="cuda") < 1 / 40
    return torch.cumsum(starts.to(torch.int64), dim=1)


def make_tensors(name, b, hq, sq, sk, gen):
    global DOC, DOC_B, REL_TABLE, SLOPES
    if name == "docmask":
        DOC = documents(1, sq, gen)[0]
    elif name == "docmask_batch":
        DOC_B = documents(b, sq, gen)
    elif name == "relbias":
        REL_TABLE = torch.randn((hq, 2 * REL_MAX - 1), generator=gen,
                                device="cuda")
    else:
        SLOPES = torch.rand((hq,), generator=gen, device="cuda") * 0.5 + 0.01


# name: (score_mod, mask_mod, is_causal, B, Hq, Hkv, Sq, Sk)
MOD_TENSOR_CASES = {
    "docmask": (None, doc_causal_mod, False, 2, 4, 4, 333, 333),
    "docmask_batch": (None, doc_batch_mod, True, 2, 4, 4, 333, 333),
    "relbias": (rel_bias_mod, None, False, 2, 4, 4, 300, 333),
    "alibi_slopes": (alibi_slopes_mod, None, True, 2, 8, 2, 333, 333),
}


def poison_allocator(*outputs):
    """Fills blocks of the caching allocator of the outputs' sizes ((shape,
    dtype) pairs) with NaN and frees them, so that the op's outputs,
    allocated next in the same sizes, start as NaN: an element the kernels
    do not write stays NaN and fails relative_error's finiteness check."""
    blocks = [torch.full(shape, float("nan"), dtype=dtype, device="cuda")
              for shape, dtype in outputs]
    del blocks


def grouped_reference(q, k, v, causal, score_mod, mask_mod):
    """mod_reference with K and V repeated per query head (GQA)."""
    group = q.shape[1] // k.shape[1]
    return mod_reference(q, k.repeat_interleave(group, dim=1),
                         v.repeat_interleave(group, dim=1), causal,
                         score_mod, mask_mod)


def check_mod_tensors(name, gen):
    """Forward and dq, dk, dv of a modification that reads tensors against
    float64 autograd of the same functions applied densely."""
    import attn
    score_mod, mask_mod, causal, b, hq, hkv, sq, sk = MOD_TENSOR_CASES[name]
    make_tensors(name, b, hq, sq, sk, gen)
    q = torch.randn(b, hq, sq, 64, generator=gen, device="cuda").to(
        torch.bfloat16).requires_grad_()
    k, v = (torch.randn(b, hkv, sk, 64, generator=gen, device="cuda")
            .to(torch.bfloat16).requires_grad_() for _ in range(2))
    poison_allocator(((b, sq, hq, 64), torch.bfloat16),
                     ((b, hq, sq), torch.float32))
    out = provided(lambda: attn.scaled_dot_product_attention(
        q, k, v, is_causal=causal, enable_gqa=hq != hkv, score_mod=score_mod,
        mask_mod=mask_mod, mod_name="torch_" + name))
    dout = torch.randn(out.shape, generator=gen, device="cuda").to(out.dtype)
    poison_allocator(*((t.shape, t.dtype) for t in (q, k, v)))
    grads = provided(lambda: torch.autograd.grad(out, (q, k, v), dout))
    ref_leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    ref = grouped_reference(*ref_leaves, causal, score_mod, mask_mod)
    return compare_with_grads(out, grads, ref, ref_leaves, dout)


def check_opcheck_mod_tensors(gen):
    """torch.library.opcheck of the forward op with a modification that
    reads a tensor (mod_operands [ids]): fake against real, the autograd
    registration with a tensor list, AOT dispatch."""
    import attn.ops  # noqa: F401 - registers the ops
    from attn import mods
    if not hasattr(torch.library, "opcheck"):
        raise Skip("no torch.library.opcheck")
    global DOC
    DOC = documents(1, 96, gen)[0]
    mod = mods.Modification(mask_mod=doc_causal_mod, name="torch_docmask")
    mods.register(mod)
    q, k, v = (torch.randn(2, 4, 96, 64, generator=gen, device="cuda")
               .to(torch.bfloat16).requires_grad_() for _ in range(3))
    provided(lambda: torch.library.opcheck(
        torch.ops.attn.sdpa_forward.default,
        (q, k, v, None, "none", None, mod.name, list(mod.operands))))
    return "opcheck passed"


def make_doc_mask(doc):
    """A closure over document ids: mask_mod doc[q] == doc[kv] & kv <= q."""
    def mask_mod(b, h, q_idx, kv_idx):
        return (doc[q_idx] == doc[kv_idx]) & (kv_idx <= q_idx)
    return mask_mod


def doc_attention(q, k, v, mask_mod):
    import attn
    return attn.scaled_dot_product_attention(q, k, v, mask_mod=mask_mod,
                                             mod_name="torch_docmask")


def run_doc(fn, q, k, v, mask_mod, dout):
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    out = fn(*leaves, mask_mod)
    return (out.detach(),) + torch.autograd.grad(out, leaves, dout)


def check_compile_mod_tensors(variant, gen):
    """torch.compile(fullgraph=True) of a document mask whose ids are a
    module global (doc_causal_mod) or a closure's: no graph break, results
    within the tolerance of eager, and new ids bound after compiling reach
    the kernels (the graph takes the tensor as an input)."""
    global DOC
    import torch._dynamo
    b, h, s = 2, 4, 333
    compiled = torch.compile(doc_attention, fullgraph=True)
    q, k, v = (torch.randn(b, h, s, 64, generator=gen, device="cuda")
               .to(torch.bfloat16) for _ in range(3))
    dout = torch.randn(b, h, s, 64, generator=gen, device="cuda").to(
        torch.bfloat16)
    details = []
    for step in range(2):
        ids = documents(1, s, gen)[0]  # new ids, and a new tensor, each step
        if variant == "global":
            DOC = ids
            mask_mod = doc_causal_mod
        else:
            mask_mod = make_doc_mask(ids)
        eager = provided(lambda: run_doc(doc_attention, q, k, v, mask_mod,
                                         dout))
        got = run_doc(compiled, q, k, v, mask_mod, dout)
        if step == 0:
            explain = torch._dynamo.explain(doc_attention)(q, k, v, mask_mod)
            assert explain.graph_break_count == 0, \
                "%d graph breaks: %s" % (explain.graph_break_count,
                                         explain.break_reasons)
        ref = grouped_reference(*(t.double() for t in (q, k, v)), False,
                                None, mask_mod)
        for name, g, e in zip(("out", "dq", "dk", "dv"), got, eager):
            rel = relative_error(g, e.double(), name)
            assert rel <= TOLERANCE[torch.bfloat16], \
                "step %d: compiled %s differs from eager by %.2e" % (
                    step, name, rel)
        rel = relative_error(got[0], ref, "out")
        assert rel <= TOLERANCE[torch.bfloat16], \
            "step %d: compiled out differs from the reference for these " \
            "ids by %.2e (stale ids?)" % (step, rel)
        details.append("step %d: rel err %.2e" % (step, rel))
    return "0 breaks; " + "; ".join(details)

#===------------------------------------------------------------------------===#
# train
#===------------------------------------------------------------------------===#


class Block(torch.nn.Module):
    def __init__(self, d, heads, attention):
        super().__init__()
        self.heads, self.attention = heads, attention
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.proj = torch.nn.Linear(d, d, bias=False)
        self.norm2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d),
                                       torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(
            b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        o = self.attention(q, k, v, is_causal=True)
        x = x + self.proj(o.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(self.norm2(x))


class TinyLM(torch.nn.Module):
    def __init__(self, vocab, d, heads, layers, length, attention):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Parameter(torch.randn(length, d) * 0.02)
        self.blocks = torch.nn.ModuleList(
            Block(d, heads, attention) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def periodic_task(step, batch, length, vocab, seed):
    """Sequences that repeat a random block of PERIOD tokens: a token after
    the first block is the one PERIOD places back, which attention learns
    to fetch; the first block is noise."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed * 1000003 + step)
    block = torch.randint(0, vocab, (batch, PERIOD), generator=gen,
                          device="cuda")
    return block.repeat(1, length // PERIOD)


def train(attention, seed):
    vocab, d, heads, layers, length, batch = 128, 256, 4, 2, 256, 16
    torch.manual_seed(seed)
    model = TinyLM(vocab, d, heads, layers, length, attention).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for step in range(TRAIN_STEPS):
        tokens = periodic_task(step, batch, length, vocab, seed)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, vocab),
                               tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def check_train(seed):
    import attn
    ours = provided(lambda: train(attn.scaled_dot_product_attention, seed))
    theirs = train(F.scaled_dot_product_attention, seed)
    print("     step    attn  torch SDPA")
    for step in list(range(0, TRAIN_STEPS, 25)) + [TRAIN_STEPS - 1]:
        print("     %4d  %.4f  %.4f" % (step, ours[step], theirs[step]))
    gap = max(abs(a - b) for a, b in zip(ours, theirs))
    final_ours = sum(ours[-25:]) / 25
    final_theirs = sum(theirs[-25:]) / 25
    print("     max |loss difference| over the run %.4f; final (mean of the "
          "last 25) %.4f vs %.4f" % (gap, final_ours, final_theirs))
    for name, losses, final in (("attn", ours, final_ours),
                                ("torch", theirs, final_theirs)):
        assert final < 0.8 * losses[0], \
            "%s did not learn: %.3f -> %.3f" % (name, losses[0], final)
    tol = TRAIN_ABS + TRAIN_REL * final_theirs
    assert abs(final_ours - final_theirs) <= tol, \
        "final losses %.4f and %.4f differ by more than %.3f" % (
            final_ours, final_theirs, tol)
    return "final %.4f vs %.4f (tolerance %.3f)" % (final_ours, final_theirs,
                                                    tol)

#===------------------------------------------------------------------------===#
# hf
#===------------------------------------------------------------------------===#


def check_hf(padded, seed):
    try:
        import transformers
    except ImportError as e:
        raise Skip("transformers is not installed") from e
    import attn
    name = attn.hf.register()
    models = []
    for implementation in (name, "sdpa"):
        config = transformers.LlamaConfig(
            vocab_size=512, hidden_size=256, intermediate_size=512,
            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            head_dim=64, max_position_embeddings=256,
            attn_implementation=implementation)
        torch.manual_seed(seed)
        models.append(transformers.LlamaForCausalLM(config).to(
            "cuda", torch.bfloat16))
    models[1].load_state_dict(models[0].state_dict())
    for model, implementation in zip(models, (name, "sdpa")):
        assert model.config._attn_implementation == implementation, \
            "the model runs %s" % model.config._attn_implementation
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    ids = torch.randint(0, 512, (2, 128), generator=gen, device="cuda")
    keep = torch.ones_like(ids)
    if padded:
        keep[0, :20] = 0  # left padding of the first sequence
    # No loss where the prediction comes from a padding position: a query
    # that sees no key gets zeros from attn and something else from torch,
    # and only such positions may differ.
    labels = ids.masked_fill(keep == 0, -100)
    labels[:, 1:].masked_fill_(keep[:, :-1] == 0, -100)
    calls = []
    original = attn.hf.scaled_dot_product_attention

    def counted(q, k, v, mask, **kwargs):
        calls.append("causal" if kwargs["is_causal"] else
                     "mask %s" % (mask.dtype if mask is not None else None))
        return original(q, k, v, mask, **kwargs)

    results = []
    attn.hf.scaled_dot_product_attention = counted
    try:
        for model in models:
            out = provided(lambda: model(input_ids=ids, attention_mask=keep,
                                         labels=labels))
            out.loss.backward()
            results.append(out)
    finally:
        attn.hf.scaled_dot_product_attention = original
    assert len(calls) == 2, "attn ran %d times, not once per layer" % len(
        calls)
    ours, theirs = results
    real = keep.bool()
    rel = relative_error(ours.logits[real].detach(),
                         theirs.logits[real].detach().double(), "logits")
    assert rel <= HF_TOLERANCE, "logits rel err %.2e > %.0e" % (
        rel, HF_TOLERANCE)
    worst = 0.0
    params = dict(models[1].named_parameters())
    for pname, p in models[0].named_parameters():
        if not any(s in pname for s in ("embed_tokens", "layers.0.self_attn",
                                        "layers.1.self_attn.k_proj")):
            continue
        g = relative_error(p.grad, params[pname].grad.double(), pname)
        assert g <= HF_TOLERANCE, "%s grad rel err %.2e > %.0e" % (
            pname, g, HF_TOLERANCE)
        worst = max(worst, g)
    return ("transformers %s, attn per layer: %s; logits rel err %.2e, "
            "grads worst %.2e" % (transformers.__version__, ", ".join(calls),
                                  rel, worst))

#===------------------------------------------------------------------------===#
# main
#===------------------------------------------------------------------------===#


def mod_specs():
    """The training specs (forward and backward kernels) of the mods and
    modtensors parts' modifications, by their names."""
    from attn import mods
    from attn.spec import KernelSpec
    global DOC, DOC_B, REL_TABLE, SLOPES
    # The regions name only the tensors' dtypes and ranks.
    DOC = torch.zeros(1, dtype=torch.int64)
    DOC_B = torch.zeros(1, 1, dtype=torch.int64)
    REL_TABLE = torch.zeros(1, 1)
    SLOPES = torch.zeros(1)
    wanted = [(softcap_mod, None, "softcap30", c) for c in (False, True)]
    wanted += [(None, prefix_lm_mod, "prefix_lm100", c) for c in (False, True)]
    wanted += [(score_mod, mask_mod, "torch_" + name, causal)
               for name, (score_mod, mask_mod, causal, *_) in
               MOD_TENSOR_CASES.items()]
    specs = {}
    for score_mod, mask_mod, name, causal in wanted:
        mod = mods.Modification(score_mod, mask_mod, name).signature()
        spec = KernelSpec("bf16", 64, 64, "top_left" if causal else "none",
                          backward=True, mod=mod)
        specs[spec.key] = spec
    return list(specs.values())


def write_mlir(path):
    """One module with every spec of mod_specs(), its functions renamed
    apart."""
    texts = []
    for n, spec in enumerate(mod_specs()):
        texts.append(spec.mlir().replace("@forward(", "@forward_%d(" % n)
                     .replace("@backward(", "@backward_%d(" % n))
    with open(path, "w") as f:
        f.write("\n".join(texts))
    print("wrote %d specs to %s" % (len(texts), path))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write-mlir", metavar="FILE",
                        help="write the MLIR of the mods and modtensors "
                             "parts' kernels and exit")
    parser.add_argument("--kernels",
                        help="folder(s) with attn.manifest, os.pathsep-"
                             "separated: set as ATTN_KERNELS")
    parser.add_argument("--lib", default=None, help="libattn_runtime.so")
    parser.add_argument("--only", default=",".join(PARTS),
                        help="comma-separated parts: " + ",".join(PARTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--atomic-dq", action="store_true",
                        help="attn.set_atomic_dq(True) for every backward")
    args = parser.parse_args()
    if args.write_mlir:
        write_mlir(args.write_mlir)
        return 0
    if not args.kernels:
        parser.error("--kernels is required")
    parts = [p for p in args.only.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error("unknown parts %s (known: %s)" % (", ".join(unknown),
                                                       ", ".join(PARTS)))
    os.environ["ATTN_KERNELS"] = os.pathsep.join(
        os.path.abspath(d) for d in args.kernels.split(os.pathsep))
    if args.lib:
        os.environ["ATTN_RUNTIME_LIB"] = os.path.abspath(args.lib)
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch")
        print("0 passed, 1 failed, 0 skipped")
        return 1
    import attn
    attn.set_atomic_dq(args.atomic_dq)
    props = torch.cuda.get_device_properties(0)
    print("device: %s (sm_%d%d), torch %s; ATTN_KERNELS=%s" % (
        props.name, props.major, props.minor, torch.__version__,
        os.environ["ATTN_KERNELS"]), flush=True)
    started = time.time()
    results = Results()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    if "forward" in parts:
        for c in cases():
            results.run("forward " + case_name(c),
                        lambda c=c: check_forward(c, gen))
    if "grad" in parts:
        for c in cases():
            if c["grad"]:
                results.run("grad " + case_name(c),
                            lambda c=c: check_grad(c, gen))
    if "f32" in parts:
        for c in f32_cases():
            results.run("forward " + case_name(c),
                        lambda c=c: run_f32(c, check_forward, gen))
            results.run("grad " + case_name(c),
                        lambda c=c: run_f32(c, check_grad, gen))
    if "compile" in parts:
        for variant in ("causal", "autocast", "dynamic"):
            results.run("compile " + variant,
                        lambda v=variant: check_compile(v, gen))
    if "fake" in parts:
        results.run("fake forward/backward", check_fake)
        results.run("fake opcheck with a mask", check_fake_mask)
    if "mods" in parts:
        for causal in (False, True):
            results.run("mods softcap bf16 d64%s" % (
                " causal" if causal else ""), lambda c=causal: check_mod(
                    softcap_mod, None, "softcap30", c, gen))
            results.run("mods prefix-LM mask_mod bf16 d64%s" % (
                " causal" if causal else ""), lambda c=causal: check_mod(
                    None, prefix_lm_mod, "prefix_lm100", c, gen))
    if "modtensors" in parts:
        for name in MOD_TENSOR_CASES:
            results.run("modtensors %s bf16 d64" % name,
                        lambda n=name: check_mod_tensors(n, gen))
        results.run("modtensors opcheck docmask",
                    lambda: check_opcheck_mod_tensors(gen))
        for variant in ("global", "closure"):
            results.run("modtensors compile docmask (%s)" % variant,
                        lambda v=variant: check_compile_mod_tensors(v, gen))
    if "train" in parts:
        results.run("train: attn vs torch SDPA, %d steps" % TRAIN_STEPS,
                    lambda: check_train(args.seed))
    if "hf" in parts:
        results.run("hf llama", lambda: check_hf(False, args.seed))
        results.run("hf llama, left padding",
                    lambda: check_hf(True, args.seed))
    info = attn.kernel_cache_info()
    for r in info["modules"]:
        print("kernels: %s on %s from %s (load %.2f s%s)" % (
            r["spec"], r["device"], r["source"], r["load_s"] or 0.0,
            ", compile %.2f s" % r["compile_s"] if r["compile_s"] else ""))
    print("time: %.0f s" % (time.time() - started))
    print(results.summary())
    return 1 if results.counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
