#!/usr/bin/env python3
"""GPU tests of attn's generated kernels, run through the runtime's binding.

Runs the forward, split-KV decode and backward kernels of a manifest on
fresh random inputs and compares them with a float64 reference computed by
torch on the GPU; then checks that bad arguments fail cleanly, with the
right status, before anything is launched. Kinds the manifest lacks (a
dtype, a head dim, a causal kind, a mask kind, decode, one of the backward's
three kernels) are reported as skipped, never as passed.

Masked forward cases (mask=add / mask=bool kernels) draw a mask of one of
the shapes [B, Hq, Sq, Sk], [1, 1, Sq, Sk], [Sq, Sk], [B, 1, 1, Sk] (and a
[Sq, Sk] slice of a wider tensor): additive masks are N(0, 1) with about a
tenth -inf, boolean masks keep about 80% of the keys, and where the mask has
an Sq dim some rows hide every key (O = 0, LSE = -inf there). One backward
case per dtype and head dim adds 100 to an additive mask (scores whose exp
overflows f32 unless the LSE cancels them) with a ragged Sq.

    python3 test/GPU/gpu_tests.py --manifest DIR/attn.manifest \\
        --lib build-rt/lib/libattn_runtime.so --out OUT/gpu_tests.json

Tolerances, on O: the relative Frobenius error ||O - ref|| / ||ref|| at most
1e-2 for bf16, 2e-3 for f16, 1e-4 for f32 (3xTF32 products; with --tf32
2e-3, f16's). On LSE (f32 in every
case): max |LSE - ref| <= 1e-3 where the reference row sees a key, and -inf
exactly where it sees none (O = 0 there). Outputs are filled with NaN
before each run, so an element a kernel never writes fails the case.

Paged decode cases (names start with "paged"; --filter paged runs them):
decode_paged on ragged batches (lengths 0, 1, a page and one key, lengths
that are no multiple of the page, up to 16384) whose block tables map each
sequence's pages, in random order, onto a pool of more pages than they
need, for page sizes 1 to 256, GQA groups 1, 4 and 8, Sq 1 and 4 with
bottom_right (query rows that see no key when a sequence is shorter than
Sq), windows, both pool layouts (vLLM's [P, page_size, Hkv, D] and
[P, Hkv, page_size, D]) and split counts 1, the default and more than the
key tiles. Every pool slot that holds no key of a sequence (pages no
sequence owns, the slots past a sequence's length in its last page, and
the page that the table's unused entries point at) is NaN: a kernel that
reads a key it should not fails the case. The reference gathers each
sequence's keys through the block table and runs the float64 reference on
them; an empty sequence has O = 0 and LSE = -inf. "relen" cases then
shorten the lengths in place and run again with the same tensors (what a
CUDA graph replay does).

Packed forward cases (names start with "varlen"; --filter varlen runs
them and forward_varlen's error cases alone): forward_varlen on ragged
batches of query lengths 0, 1, 77, 128, 129 and 1000 (block_q's edges) in
FlashAttention's [T, H, D] (and [H, T, D], and with a leading 1): varlen
prefill (keys packed with the queries' lengths) with causal none,
top_left and bottom_right, and chunked prefill, the new queries of each
sequence against a cached prefix and themselves (keys longer than
queries), packed or in a paged cache (pages of 1 to 256 keys in random
order, NaN in every pool slot no key owns, both pool layouts); GQA groups
1, 4 and 8, D 64 and 128, f16 and bf16, windows, LSE, sequences with
queries but no keys (O = 0, LSE = -inf). The reference is the float64 one
on each sequence's own rows and keys. Outputs are NaN first: every row of
the packed output must be written when the offsets tile T (and none past
the last offset when they do not); a second call with max_seqlen_q = 0
must give bitwise the output of max_seqlen_q = the longest sequence.

Backward cases (names start with "backward"; --filter backward runs them
and the backward's error cases alone): O and LSE from the float64
reference (O rounded to the dtype), dO random, then dQ, dK, dV against
float64 autograd through a plain softmax attention, each within
max |grad - ref| <= 2e-2 max |ref| for bf16, 5e-3 max |ref| for f16,
1e-4 max |ref| for f32 (3xTF32 products); every
element finite (the gradients are filled with NaN first), and exactly 0 in
the rows of dQ whose query sees no key and the rows of dK, dV whose key no
query sees. Cases marked "twice" run again into fresh NaN buffers and must
give bitwise the same gradients (the backward is deterministic). With
--atomic-dq every backward call asks for the atomic dQ kernels
(options.atomic_dq; a manifest from attn-compile --atomic-dq): the same
tolerances, and "twice" only reports whether the bits repeated. With
--tf32 f32 calls may take f32=tf32 kernels (module.allow_tf32; a
manifest from attn-compile --tf32), held to f16's tolerances (TF32 keeps
f16's 10-bit mantissa).

Prints one line per case, then "N passed, N failed, N skipped"; writes the
results as JSON after every case (a crash or a timeout keeps what ran).
Exit status 0 when nothing failed.
"""

import argparse
import json
import math
import os
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import attn_runtime  # noqa: E402

TOLERANCE = {"bf16": 1e-2, "f16": 2e-3, "f32": 1e-4}
# Of each gradient, relative to its largest reference element: the kernels
# round P and dS to the dtype before their MMAs, and O before D = rowsum.
GRAD_TOLERANCE = {"bf16": 2e-2, "f16": 5e-3, "f32": 1e-4}
# With --tf32 (f32=tf32 kernels: products on TF32, whose 10-bit mantissa is
# f16's), f32 is held to f16's tolerances on O and the gradients; the LSE
# to 5e-3, since TF32 rounds Q and K (an f16 case's reference takes the
# rounded inputs): scores off by about 2^-11 of their size.
TF32_TOLERANCE, TF32_GRAD_TOLERANCE, TF32_LSE_TOLERANCE = 2e-3, 5e-3, 5e-3
BACKWARD_KINDS = ("backward_dot", "backward_kv", "backward_q")
LSE_TOLERANCE = 1e-3
TORCH_DTYPE = {"bf16": torch.bfloat16, "f16": torch.float16,
               "f32": torch.float32}

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"

#===------------------------------------------------------------------------===#
# Reference
#===------------------------------------------------------------------------===#


def reference(q, k, v, causal, window, scale, mask=None):
    """O [B, Hq, Sq, Dv] and LSE [B, Hq, Sq] in float64 from logical BHSD
    views. Chunks of query rows keep S within a few hundred MB, so a 128k
    KV cache fits; GQA groups the query heads of a KV head (head h reads KV
    head h // (Hq / Hkv)) instead of repeating K and V.

    `mask` broadcasts to [B, Hq, Sq, Sk]: a floating one is added to the
    scaled scores, a boolean one hides the keys where it is False. A row
    that sees no key (mask, causal or window) gets O = 0 and LSE = -inf."""
    b, hq, sq, d = q.shape
    hkv, sk, dv = k.shape[1], k.shape[2], v.shape[3]
    group = hq // hkv
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    if mask is not None:
        mask = mask.expand(b, hq, sq, sk)  # a view: broadcast dims stride 0
    o = torch.empty((b, hq, sq, dv), dtype=torch.float64, device=q.device)
    lse = torch.empty((b, hq, sq), dtype=torch.float64, device=q.device)
    rows = max(1, (256 << 20) // (8 * hq * sk))
    keys = torch.arange(sk, device=q.device)
    for bi in range(b):
        kb = k[bi].double()
        vb = v[bi].double()
        for i0 in range(0, sq, rows):
            i1 = min(sq, i0 + rows)
            qb = q[bi, :, i0:i1].double().reshape(hkv, group, i1 - i0, d)
            s = torch.einsum("hgqd,hkd->hgqk", qb, kb) * scale
            if mask is not None:
                mb = mask[bi, :, i0:i1].reshape(hkv, group, i1 - i0, sk)
                if mb.dtype == torch.bool:
                    s.masked_fill_(~mb, float("-inf"))
                else:
                    s += mb.double()
                del mb
            if causal != "none":
                diag = torch.arange(i0, i1, device=q.device)
                if causal == "bottom_right":
                    diag = diag + (sk - sq)
                visible = keys[None, :] <= diag[:, None]
                if window is not None and window >= 0:
                    visible &= keys[None, :] >= diag[:, None] - window
                s.masked_fill_(~visible, float("-inf"))
            m = torch.logsumexp(s, dim=-1)
            p = torch.nan_to_num(torch.exp(s - m[..., None]), nan=0.0)
            ob = torch.einsum("hgqk,hkd->hgqd", p, vb)
            o[bi, :, i0:i1] = ob.reshape(hq, i1 - i0, dv)
            lse[bi, :, i0:i1] = m.reshape(hq, i1 - i0)
            del s, p, ob
        del kb, vb
    return o, lse


def compare(o, lse, ref_o, ref_lse, dtype):
    """The metrics of one case and whether they pass."""
    o64 = o.double()
    finite = torch.isfinite(o64)
    nonfinite = int((~finite).sum())
    diff = torch.where(finite, o64 - ref_o, torch.zeros_like(o64))
    ref_norm = float(ref_o.norm())
    err_norm = float(diff.norm())
    rel = err_norm / ref_norm if ref_norm > 0 else err_norm
    result = {"rel_err": rel, "max_abs_err": float(diff.abs().max()),
              "nonfinite": nonfinite}
    problems = []
    if nonfinite:
        problems.append("%d non-finite elements in O" % nonfinite)
    if rel > TOLERANCE[dtype]:
        problems.append("rel err %.2e > %.0e" % (rel, TOLERANCE[dtype]))
    if lse is not None:
        ref_masked = torch.isneginf(ref_lse)
        got_masked = torch.isneginf(lse)
        wrong_inf = int((ref_masked != got_masked).sum())
        seen = ~ref_masked
        lse_err = 0.0
        lse_nonfinite = 0
        if bool(seen.any()):
            got = lse[seen].double()
            lse_nonfinite = int((~torch.isfinite(got)).sum())
            good = torch.isfinite(got)
            if bool(good.any()):
                lse_err = float((got[good] - ref_lse[seen][good]).abs().max())
        result.update(lse_err=lse_err, lse_wrong_inf=wrong_inf,
                      lse_nonfinite=lse_nonfinite)
        if wrong_inf:
            problems.append("%d LSE rows -inf where the reference is not, "
                            "or the other way" % wrong_inf)
        if lse_nonfinite:
            problems.append("%d non-finite LSE values" % lse_nonfinite)
        if lse_err > LSE_TOLERANCE:
            problems.append("LSE err %.2e > %.0e" % (lse_err, LSE_TOLERANCE))
    result["status"] = FAIL if problems else PASS
    if problems:
        result["detail"] = "; ".join(problems)
    return result

def visibility(b, hq, sq, sk, causal, window, mask, device):
    """Which keys each query row sees, [B, Hq, Sq, Sk] (broadcast views
    where it can): the mask (False or -inf hides), causal and window."""
    visible = torch.ones((1, 1, sq, sk), dtype=torch.bool, device=device)
    if causal != "none":
        keys = torch.arange(sk, device=device)
        diag = torch.arange(sq, device=device)
        if causal == "bottom_right":
            diag = diag + (sk - sq)
        visible = keys[None, :] <= diag[:, None]
        if window is not None and window >= 0:
            visible &= keys[None, :] >= diag[:, None] - window
        visible = visible[None, None]
    if mask is not None:
        keep = mask if mask.dtype == torch.bool else ~torch.isneginf(mask)
        visible = visible & keep
    return visible.expand(b, hq, sq, sk)


def reference_grads(q, k, v, dout, causal, window, scale, mask=None):
    """dQ, dK, dV in float64 by autograd through a plain softmax attention
    of logical BHSD views (K and V repeated per query head, so that dK and
    dV sum over a group), and the visibility [B, Hq, Sq, Sk]. A row that
    sees no key has P = 0 (no NaN: its max is taken as 0)."""
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    group = hq // hkv
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    visible = visibility(b, hq, sq, sk, causal, window, mask, q.device)
    q64 = q.double().requires_grad_()
    k64 = k.double().requires_grad_()
    v64 = v.double().requires_grad_()
    s = torch.einsum("bhqd,bhkd->bhqk", q64,
                     k64.repeat_interleave(group, dim=1)) * scale
    if mask is not None and mask.dtype != torch.bool:
        s = s + torch.nan_to_num(mask.double(), neginf=0.0)
    s = s.masked_fill(~visible, float("-inf"))
    top = s.detach().amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(s - top)
    total = e.sum(dim=-1, keepdim=True)
    p = e / torch.where(total > 0, total, torch.ones_like(total))
    o = torch.einsum("bhqk,bhkd->bhqd", p, v64.repeat_interleave(group, dim=1))
    o.backward(dout.double())
    return q64.grad, k64.grad, v64.grad, visible


def compare_grads(grads, refs, visible, hkv, dtype):
    """The metrics of a backward case and whether they pass: per gradient,
    max |g - ref| / max |ref|, the non-finite elements, and the nonzero ones
    where no score reaches them (dQ rows that see no key, dK and dV rows of
    keys no query of the group sees)."""
    b, hq, sq, sk = visible.shape
    row_seen = visible.any(dim=-1)                         # [B, Hq, Sq]
    key_seen = visible.reshape(b, hkv, hq // hkv, sq, sk).any(dim=3).any(
        dim=2)                                             # [B, Hkv, Sk]
    result = {"rows_unseen": int((~row_seen).sum()),
              "keys_unseen": int((~key_seen).sum())}
    problems = []
    worst_rel = worst_abs = 0.0
    for name, got, ref, seen in zip(("dq", "dk", "dv"), grads, refs,
                                    (row_seen, key_seen, key_seen)):
        g = got.double()
        finite = torch.isfinite(g)
        nonfinite = int((~finite).sum())
        err = float(torch.where(finite, g - ref, torch.zeros_like(g))
                    .abs().max())
        top = float(ref.abs().max())
        rel = err / top if top > 0 else err
        stray = int((g[~seen] != 0).sum()) if bool((~seen).any()) else 0
        result.update({name + "_rel_err": rel, name + "_nonfinite": nonfinite,
                       name + "_nonzero_unseen": stray})
        worst_rel, worst_abs = max(worst_rel, rel), max(worst_abs, err)
        if nonfinite:
            problems.append("%d non-finite elements in %s" % (nonfinite, name))
        if rel > GRAD_TOLERANCE[dtype]:
            problems.append("%s rel err %.2e > %.0e" % (
                name, rel, GRAD_TOLERANCE[dtype]))
        if stray:
            problems.append("%d nonzero elements of %s where no score "
                            "reaches them" % (stray, name))
    result.update(rel_err=worst_rel, max_abs_err=worst_abs)
    result["status"] = FAIL if problems else PASS
    if problems:
        result["detail"] = "; ".join(problems)
    return result

#===------------------------------------------------------------------------===#
# Cases
#===------------------------------------------------------------------------===#


def case(kind, dtype, b, hq, hkv, sq, sk, d, causal="none", window=None,
         layout="bhsd", lse=True, scale=None, splits=None, dv=None,
         mask="none", mask_shape=None, twice=False, mask_bias=None):
    return dict(kind=kind, dtype=dtype, b=b, hq=hq, hkv=hkv, sq=sq, sk=sk,
                d=d, dv=d if dv is None else dv, causal=causal, window=window,
                layout=layout, lse=lse, scale=scale, splits=splits, mask=mask,
                mask_shape=mask_shape, twice=twice, mask_bias=mask_bias)


def case_name(c):
    if c["kind"] == "error":
        return "error " + c["name"]
    if c["kind"] == "varlen":
        return varlen_name(c)
    prefix = {"forward": "fwd", "decode": "dec", "backward": "backward",
              "paged": "paged"}
    dims = "d%d" % c["d"]
    if c["dv"] != c["d"]:
        dims += "/%d" % c["dv"]
    name = "%s %s %s B=%d H=%d/%d Sq=%d Sk=%d %s" % (
        prefix[c["kind"]], c["dtype"], dims, c["b"], c["hq"], c["hkv"],
        c["sq"], c["sk"], c["causal"])
    if c["window"] is not None:
        name += " w=%d" % c["window"]
    if c.get("mask", "none") != "none":
        name += " mask=%s%s" % (c["mask"], c["mask_shape"])
    if c.get("mask_bias"):
        name += " bias=%+g" % c["mask_bias"]
    if c["kind"] == "paged":
        name += " page=%d lens=%s kv=%s" % (
            c["page"], ",".join(str(n) for n in c["lens"]), c["kv_layout"])
    name += " " + c["layout"]
    if c["scale"] is not None:
        name += " scale=%g" % c["scale"]
    if c["kind"] in ("decode", "paged"):
        name += " splits=%s" % ("auto" if c["splits"] is None else c["splits"])
    if not c["lse"]:
        name += " no-lse"
    if c.get("twice"):
        name += " twice"
    if c.get("relen"):
        name += " relen"
    return name


def varlen_name(c):
    def lengths(n):
        return ",".join(str(x) for x in n)

    name = "varlen %s d%d H=%d/%d q=%s k=%s %s" % (
        c["dtype"], c["d"], c["hq"], c["hkv"], lengths(c["q_lens"]),
        lengths(c["k_lens"]), c["causal"])
    if c["window"] is not None:
        name += " w=%d" % c["window"]
    name += " page=%d kv=%s" % (c["page"], c["kv_layout"]) if c["page"] \
        else " packed"
    name += " " + c["layout"] + (" 4d" if c["four_dim"] else "")
    if c["tail"]:
        name += " tail=%d" % c["tail"]
    if c["scale"] is not None:
        name += " scale=%g" % c["scale"]
    if not c["lse"]:
        name += " no-lse"
    return name


SEQ_PAIRS = [(1, 1), (1, 77), (77, 77), (77, 1000), (1000, 77), (1000, 1000),
             (1, 4097), (4097, 1), (513, 2049), (4097, 4097)]
CAUSAL_PAIRS = [(77, 77), (1000, 1000), (77, 1000), (1000, 77), (1, 4097),
                (4097, 1), (4097, 4097)]


def forward_cases(quick):
    cases = []
    for dtype in ("bf16", "f16", "f32"):
        for d in (64, 128):
            main = dtype == "bf16" and d == 128
            mine = []
            for i, (sq, sk) in enumerate(SEQ_PAIRS):
                b, h = (1, 2) if sq * sk > 4000000 else (2, 4)
                mine.append(case("forward", dtype, b, h, h, sq, sk, d,
                                 layout="bshd" if i % 2 else "bhsd",
                                 lse=i % 4 != 3))
            for causal in ("top_left", "bottom_right"):
                for i, (sq, sk) in enumerate(CAUSAL_PAIRS):
                    b, h = (1, 2) if sq * sk > 4000000 else (2, 4)
                    mine.append(case("forward", dtype, b, h, h, sq, sk, d,
                                     causal,
                                     layout="bshd" if i % 2 else "bhsd"))
            mine += [
                case("forward", dtype, 2, 4, 4, 1000, 1000, d, "bottom_right",
                     window=128),
                case("forward", dtype, 2, 4, 4, 77, 77, d, "top_left",
                     window=0, layout="bshd"),
                case("forward", dtype, 1, 2, 2, 4097, 4097, d, "top_left",
                     window=255, layout="bshd"),
                case("forward", dtype, 2, 4, 4, 77, 1000, d, "bottom_right",
                     window=100),
                case("forward", dtype, 2, 4, 4, 1000, 77, d, "bottom_right",
                     window=10),  # rows that see no key
                case("forward", dtype, 2, 8, 2, 1000, 1000, d),  # GQA
                case("forward", dtype, 2, 8, 2, 77, 1000, d, "bottom_right",
                     layout="bshd"),
                case("forward", dtype, 2, 4, 1, 1000, 1000, d, "top_left",
                     layout="bshd"),  # MQA
                case("forward", dtype, 1, 8, 2, 513, 2049, d, layout="bshd",
                     lse=False),
                case("forward", dtype, 2, 4, 4, 300, 300, d, scale=0.3),
                # Several query tiles per CTA of a persistent grid (33 x 8
                # tiles on ~132 CTAs), each with key tiles that are not a
                # multiple of the stages: the rings' phases across tiles.
                case("forward", dtype, 2, 4, 4, 4097, 200, d, layout="bshd"),
            ]
            if quick and not main:
                mine = mine[::3]
            cases += mine
    return cases


# Mask shapes: how each broadcasts to [B, Hq, Sq, Sk]. "[Sq,Sk]/pad" is a
# [Sq, Sk] slice of a [Sq, Sk + 5] tensor: rows that are not contiguous.
MASK_SHAPES = ("[B,Hq,Sq,Sk]", "[1,1,Sq,Sk]", "[Sq,Sk]", "[B,1,1,Sk]",
               "[Sq,Sk]/pad")

# (mask shape, Sq, Sk, causal, window, layout, Hq, Hkv) per mask kind,
# dtype and head dim; B = 2.
MASK_CASES = [
    ("[B,Hq,Sq,Sk]", 77, 1000, "none", None, "bhsd", 4, 4),
    ("[1,1,Sq,Sk]", 1000, 77, "none", None, "bshd", 4, 4),
    ("[Sq,Sk]", 1000, 1000, "none", None, "bhsd", 4, 4),
    ("[B,1,1,Sk]", 77, 77, "none", None, "bshd", 4, 4),
    ("[Sq,Sk]/pad", 77, 1000, "none", None, "bhsd", 4, 4),
    ("[Sq,Sk]", 1000, 1000, "top_left", None, "bhsd", 4, 4),
    ("[B,Hq,Sq,Sk]", 77, 1000, "bottom_right", None, "bshd", 4, 4),
    ("[B,1,1,Sk]", 1000, 77, "bottom_right", None, "bhsd", 4, 4),
    ("[1,1,Sq,Sk]", 77, 77, "top_left", None, "bshd", 4, 4),
    ("[Sq,Sk]", 1000, 1000, "bottom_right", 128, "bhsd", 4, 4),
    ("[B,Hq,Sq,Sk]", 77, 1000, "none", None, "bhsd", 8, 2),  # GQA
]


def mask_cases(quick):
    cases = []
    for dtype in ("bf16", "f16"):
        for d in (64, 128):
            for kind in ("add", "bool"):
                mine = [case("forward", dtype, 2, hq, hkv, sq, sk, d, causal,
                             window=window, layout=layout, mask=kind,
                             mask_shape=shape)
                        for shape, sq, sk, causal, window, layout, hq, hkv
                        in MASK_CASES]
                if quick and not (dtype == "bf16" and d == 128):
                    mine = mine[::3]
                cases += mine
    return cases


def make_mask(c, gen):
    """The mask of a case as the caller passes it, and its logical rank-4
    view for the reference."""
    b, hq, sq, sk = c["b"], c["hq"], c["sq"], c["sk"]
    shape = {"[B,Hq,Sq,Sk]": (b, hq, sq, sk), "[1,1,Sq,Sk]": (1, 1, sq, sk),
             "[Sq,Sk]": (sq, sk), "[B,1,1,Sk]": (b, 1, 1, sk),
             "[Sq,Sk]/pad": (sq, sk + 5)}[c["mask_shape"]]
    device = gen.device
    u = torch.rand(shape, generator=gen, device=device)
    # Rows that hide every key, where the mask has a query dim.
    hide = None
    if c["mask_shape"] != "[B,1,1,Sk]":
        rows = torch.rand(shape[:-1], generator=gen, device=device)
        hide = (rows < 0.05)[..., None]
    if c["mask"] == "bool":
        m = u < 0.8
        if hide is not None:
            m &= ~hide
    else:
        m = torch.randn(shape, generator=gen, device=device)
        if c.get("mask_bias"):
            # Large positive entries: exp overflows unless LSE cancels it.
            m = m + c["mask_bias"]
        m = m.masked_fill(u < 0.1, float("-inf"))
        if hide is not None:
            m = m.masked_fill(hide, float("-inf"))
        m = m.to(TORCH_DTYPE[c["dtype"]])
    if c["mask_shape"] == "[Sq,Sk]/pad":
        m = m[:, :sk]
    return m, m[(None,) * (4 - m.dim())]


# (B, Hkv, Sk, split counts) with Hq = 32, D = 128, Sq = 1.
DECODE_SHAPES = [
    (1, 8, 1, [None]),
    (1, 8, 77, [None, 1]),
    (1, 32, 1000, [None, 1, 7, 10 ** 6]),
    (8, 8, 4097, [None, 10 ** 6]),
    (8, 32, 4097, [None]),
    (64, 8, 1000, [None, 3]),
    (64, 32, 4097, [None]),
    (1, 8, 16384, [None, 1]),
    (64, 8, 16384, [None]),
    (1, 8, 131072, [None, 1, 10 ** 6]),
    (8, 8, 131072, [None]),
    (1, 32, 131072, [None]),
]


def decode_cases(quick):
    cases = []
    for dtype in ("bf16", "f16", "f32"):
        main = dtype == "bf16"
        mine = []
        for b, hkv, sk, splits in DECODE_SHAPES:
            if not main and sk > 16384 and b * hkv > 8:
                continue
            for n in splits:
                mine.append(case("decode", dtype, b, 32, hkv, 1, sk, 128,
                                 splits=n))
        mine += [
            case("decode", dtype, 2, 32, 8, 1, 4097, 128, "bottom_right",
                 window=1000),
            case("decode", dtype, 2, 32, 8, 1, 4097, 128, "top_left"),
            case("decode", dtype, 2, 32, 8, 4, 1000, 128, "bottom_right"),
            case("decode", dtype, 2, 32, 8, 4, 1000, 128, "bottom_right",
                 window=64, splits=5),
            case("decode", dtype, 8, 32, 8, 1, 4097, 128, layout="bshd"),
            case("decode", dtype, 4, 32, 32, 1, 1000, 128, lse=False,
                 scale=0.5),
            # More packed rows per KV head than one CTA holds: row tiles.
            case("decode", dtype, 2, 32, 1, 1, 3000, 128),
            case("decode", dtype, 2, 32, 8, 5, 1000, 128, "bottom_right"),
            case("decode", dtype, 1, 64, 2, 3, 2000, 128, "top_left",
                 window=100, splits=3),
        ]
        if quick and not main:
            mine = mine[::3]
        cases += mine
    return cases


PAGE_SIZES = (1, 16, 32, 64, 128, 256)


def paged_lengths(page):
    """Ragged lengths for pages of `page` keys: an empty sequence, one key,
    a page and one key, lengths that are no multiple of the page, a long
    one."""
    return [0, 1, 77, page + 1, 1000, 3 * page + page // 2 + 1, 4097]


def paged_case(dtype, page, hkv, sq=1, causal="none", window=None,
               splits=None, kv_layout="bshd", layout="bhsd", lse=True,
               lens=None, relen=False, hq=32, d=128, dv=None):
    """A decode_paged case (Hq = 32, D = Dv = 128 unless given), one
    sequence per length (B = len(lens))."""
    lens = paged_lengths(page) if lens is None else lens
    c = case("paged", dtype, len(lens), hq, hkv, sq, max(lens), d, causal,
             window=window, layout=layout, lse=lse, splits=splits, dv=dv)
    c.update(page=page, lens=list(lens), kv_layout=kv_layout, relen=relen)
    return c


def paged_cases(quick):
    """decode_paged for every dtype (others than the manifest's skipped):
    every page size with GQA group 4 (Hkv = 8), groups 1 and 8, Sq = 4
    with bottom_right, windows, both pool layouts, forced split counts,
    and the lengths changed between two calls."""
    cases = []
    for dtype in ("bf16", "f16", "f32"):
        main = dtype == "bf16"
        mine = [paged_case(dtype, page, 8) for page in PAGE_SIZES]
        mine += [
            paged_case(dtype, 16, 32),                  # group 1 (MHA)
            paged_case(dtype, 16, 4),                   # group 8
            paged_case(dtype, 128, 4, kv_layout="bhsd"),
            paged_case(dtype, 16, 8, sq=4, causal="bottom_right"),
            paged_case(dtype, 128, 32, sq=4, causal="bottom_right",
                       layout="bshd"),
            paged_case(dtype, 1, 8, sq=4, causal="bottom_right", splits=3),
            paged_case(dtype, 32, 8, causal="bottom_right", window=300),
            paged_case(dtype, 64, 4, sq=4, causal="bottom_right", window=64,
                       kv_layout="bhsd"),
            paged_case(dtype, 16, 8, sq=4, causal="top_left"),
            paged_case(dtype, 16, 8, splits=1),
            paged_case(dtype, 16, 8, splits=10 ** 6),
            paged_case(dtype, 256, 8, splits=10 ** 6, lse=False),
            # One long sequence beside short ones: many splits per sequence.
            paged_case(dtype, 16, 8, lens=[16384, 3, 0, 555]),
            paged_case(dtype, 64, 8, sq=4, causal="bottom_right",
                       lens=[5000, 2, 0, 64, 129], relen=True),
        ]
        if quick and not main:
            mine = mine[::3]
        if main:
            # Lengths from 0 to 128k in one batch.
            mine += [paged_case(dtype, 256, 8, lens=[131072, 0, 1, 4097]),
                     paged_case(dtype, 16, 8, sq=4, causal="bottom_right",
                                lens=[3, 131072, 0, 1000])]
        cases += mine
    return cases


# The query lengths of the packed cases: an empty sequence, one row, a
# ragged tile, exactly one tile of 128 rows and one row past it, many
# tiles; and the cached prefixes of chunked prefill (keys = prefix + the
# sequence's own queries).
VARLEN_Q = [77, 0, 1000, 1, 129, 128]
VARLEN_PREFIX = [300, 5, 0, 2000, 17, 64]


def varlen_case(dtype, d, q_lens, k_lens=None, hq=8, hkv=2, causal="none",
                window=None, page=None, kv_layout="bshd", layout="bshd",
                lse=True, scale=None, four_dim=False, tail=0):
    """A forward_varlen case: one sequence per entry of q_lens, with
    k_lens[b] keys (q_lens by default: prefill), packed or (`page`) in a
    paged cache of pages of that many keys; `tail` extra rows of q past the
    last offset."""
    k_lens = list(q_lens) if k_lens is None else list(k_lens)
    c = case("varlen", dtype, len(q_lens), hq, hkv, max(q_lens), max(k_lens),
             d, causal, window=window, layout=layout, lse=lse, scale=scale)
    c.update(q_lens=list(q_lens), k_lens=k_lens, page=page,
             kv_layout=kv_layout, four_dim=four_dim, tail=tail)
    return c


def varlen_cases(quick):
    """forward_varlen for f16 and bf16, D = 64 and 128: prefill with each
    causal kind, GQA 1, 4 and 8, windows, chunked prefill against packed
    and paged keys, both layouts, sequences without keys, rows past the
    last offset."""
    chunked = [q + p for q, p in zip(VARLEN_Q, VARLEN_PREFIX)]
    cases = []
    for dtype in ("bf16", "f16"):
        for d in (64, 128):
            mine = [varlen_case(dtype, d, VARLEN_Q, causal=causal)
                    for causal in ("none", "top_left", "bottom_right")]
            mine += [
                varlen_case(dtype, d, VARLEN_Q, hq=4, hkv=4,
                            causal="bottom_right", layout="bhsd"),
                varlen_case(dtype, d, VARLEN_Q, hq=8, hkv=1,
                            causal="top_left"),
                varlen_case(dtype, d, VARLEN_Q, causal="bottom_right",
                            window=64),
                # Chunked prefill with the prefix packed beside the new keys.
                varlen_case(dtype, d, VARLEN_Q, chunked,
                            causal="bottom_right"),
                varlen_case(dtype, d, VARLEN_Q, chunked, lse=False,
                            scale=0.3),
                varlen_case(dtype, d, VARLEN_Q, chunked, causal="top_left",
                            four_dim=True),
                # Chunked prefill against a paged cache.
                varlen_case(dtype, d, VARLEN_Q, chunked, page=16,
                            causal="bottom_right"),
                varlen_case(dtype, d, VARLEN_Q, chunked, page=128,
                            causal="bottom_right", window=100,
                            kv_layout="bhsd", layout="bhsd"),
                varlen_case(dtype, d, VARLEN_Q, chunked, page=16, hq=8,
                            hkv=1, causal="none"),
                varlen_case(dtype, d, VARLEN_Q, chunked, page=128, hq=4,
                            hkv=4, causal="top_left", four_dim=True),
                # Pages of one key, and pages wider than a key tile.
                varlen_case(dtype, d, VARLEN_Q, chunked, page=1,
                            causal="bottom_right"),
                varlen_case(dtype, d, VARLEN_Q, chunked, page=256, hq=8,
                            hkv=8, causal="none", kv_layout="bhsd"),
                # Sequences with queries and no keys: O = 0, LSE = -inf.
                varlen_case(dtype, d, [5, 77, 10, 129], [0, 77, 300, 0]),
                varlen_case(dtype, d, [5, 77, 10, 129], [0, 77, 300, 0],
                            page=16, causal="bottom_right"),
                # Rows past the last offset: never written.
                varlen_case(dtype, d, [77, 1, 300], causal="bottom_right",
                            tail=7),
            ]
            if quick and not (dtype == "bf16" and d == 128):
                mine = mine[::3]
            if dtype == "bf16" and d == 128:
                # Chunked prefill of a few tokens after a 128k prefix, beside
                # an empty and a one-key sequence, packed and paged.
                long_q, long_k = [4, 0, 1, 77], [131076, 5, 1, 300]
                mine += [varlen_case(dtype, d, long_q, long_k,
                                     causal="bottom_right"),
                         varlen_case(dtype, d, long_q, long_k, page=128,
                                     causal="bottom_right")]
                # Every other page size of the serving issue.
                mine += [varlen_case(dtype, d, VARLEN_Q, chunked, page=page,
                                     causal="bottom_right")
                         for page in (32, 64)]
            cases += mine
    # Chunked prefill against pages at other head dims (skipped unless the
    # manifest has those kernels: the sm_90a producer's copy rounds differ
    # where a row is not 16 chunks).
    for dtype, d, causal, window in (("bf16", 96, "bottom_right", None),
                                     ("f16", 112, "top_left", None),
                                     ("f16", 160, "bottom_right", None),
                                     ("bf16", 256, "top_left", None)):
        cases.append(varlen_case(dtype, d, VARLEN_Q, chunked, page=16,
                                 causal=causal, window=window))
    return cases


# (Sq, Sk) of the backward cases without a causal kind; B, H = 1, 2 past
# four million scores, else 2, 4.
BACKWARD_PAIRS = [(1, 1), (1, 77), (77, 77), (77, 1000), (1000, 77),
                  (1000, 1000), (1, 4097), (4097, 1), (513, 2049),
                  (4097, 4097)]
BACKWARD_CAUSAL_PAIRS = [(77, 77), (77, 1000), (1000, 77), (1000, 1000),
                         (1, 4097), (4097, 1)]
# (mask shape, Sq, Sk, causal, window, layout, Hq, Hkv) per mask kind; B = 2.
BACKWARD_MASK_CASES = [
    ("[B,Hq,Sq,Sk]", 77, 1000, "none", None, "bhsd", 4, 4),
    ("[Sq,Sk]", 1000, 1000, "top_left", None, "bhsd", 4, 4),
    ("[B,1,1,Sk]", 77, 77, "none", None, "bshd", 4, 4),
    ("[1,1,Sq,Sk]", 1000, 77, "bottom_right", None, "bshd", 4, 4),
    ("[Sq,Sk]/pad", 77, 1000, "bottom_right", 100, "bhsd", 4, 4),
    ("[B,Hq,Sq,Sk]", 77, 1000, "none", None, "bhsd", 8, 2),  # GQA
]


def backward_cases(quick):
    """attn_backward for bf16, f16 and f32, D = 64 and 128: ragged
    sequences, both causal kinds, windows (with rows that see no
    key), GQA and MQA, both layouts, both mask kinds; "twice" cases check
    that a second run gives bitwise the same gradients."""
    cases = []
    for dtype in ("bf16", "f16", "f32"):
        for d in (64, 128):
            mine = []
            for i, (sq, sk) in enumerate(BACKWARD_PAIRS):
                b, h = (1, 2) if sq * sk > 4000000 else (2, 4)
                mine.append(case("backward", dtype, b, h, h, sq, sk, d,
                                 layout="bshd" if i % 2 else "bhsd"))
            for causal in ("top_left", "bottom_right"):
                for i, (sq, sk) in enumerate(BACKWARD_CAUSAL_PAIRS):
                    mine.append(case("backward", dtype, 2, 4, 4, sq, sk, d,
                                     causal,
                                     layout="bshd" if i % 2 else "bhsd"))
            mine += [
                case("backward", dtype, 2, 4, 4, 1000, 1000, d, "bottom_right",
                     window=128),
                case("backward", dtype, 2, 4, 4, 77, 77, d, "top_left",
                     window=0, layout="bshd"),
                case("backward", dtype, 2, 4, 4, 1000, 77, d, "bottom_right",
                     window=10),  # rows that see no key
                case("backward", dtype, 2, 8, 2, 1000, 1000, d, twice=True),
                case("backward", dtype, 2, 8, 2, 77, 1000, d, "bottom_right",
                     layout="bshd"),
                case("backward", dtype, 2, 4, 1, 1000, 1000, d, "top_left",
                     layout="bshd", twice=True),  # MQA
                case("backward", dtype, 1, 8, 1, 513, 2049, d, window=300,
                     causal="bottom_right"),
                case("backward", dtype, 2, 4, 4, 300, 300, d, scale=0.3),
            ]
            for kind in ("add", "bool"):
                for j, (shape, sq, sk, causal, window, layout, hq, hkv) in \
                        enumerate(BACKWARD_MASK_CASES):
                    mine.append(case("backward", dtype, 2, hq, hkv, sq, sk, d,
                                     causal, window=window, layout=layout,
                                     mask=kind, mask_shape=shape,
                                     twice=j == len(BACKWARD_MASK_CASES) - 1))
            # Padding query rows of a tile (77 = 64 + 13) beside scores that
            # exp would overflow without the LSE.
            mine.append(case("backward", dtype, 2, 4, 4, 77, 1000, d,
                             mask="add", mask_shape="[B,Hq,Sq,Sk]",
                             mask_bias=100.0))
            if quick and not (dtype == "bf16" and d == 128):
                mine = mine[::3]
            cases += mine
    return cases


# Head dims of the standard grid (forward_cases, decode_cases,
# backward_cases); head_dim_cases covers every other one a manifest has.
STANDARD_HEAD_DIMS = ((64, 64), (128, 128))


def head_dim_cases(module, quick):
    """For every (dtype, D, Dv) outside the standard grid that the
    manifest has kernels for (the tiles pad D and Dv to whole 16-column
    steps inside the kernel): the forward on ragged and causal shapes, GQA
    and both layouts; decode; the backward where its kernels are there.
    The rest of the grid is skipped for a manifest without them anyway."""
    found = {}
    for k in module.kernels:
        dims = (k.get("dtype"), k.get("head_dim"), k.get("value_dim"))
        if None in dims or dims[1:] in STANDARD_HEAD_DIMS:
            continue
        paged = k["kind"] == "decode_partial" and k.get("kv") == "paged"
        found.setdefault(dims, set()).add("decode_paged" if paged
                                          else k["kind"])
    cases = []
    for (dtype, d, dv), kinds in sorted(found.items()):
        mine = []
        if "forward" in kinds:
            for i, (sq, sk) in enumerate([(1, 1), (77, 1000), (1000, 77),
                                          (513, 2049), (4097, 4097)]):
                mine.append(case("forward", dtype, 1 if sq * sk > 4000000
                                 else 2, 4, 4, sq, sk, d, dv=dv,
                                 layout="bshd" if i % 2 else "bhsd",
                                 lse=i != 2))
            for causal in ("top_left", "bottom_right"):
                mine.append(case("forward", dtype, 2, 4, 4, 77, 1000, d,
                                 causal, dv=dv))
                mine.append(case("forward", dtype, 2, 4, 4, 1000, 1000, d,
                                 causal, dv=dv, layout="bshd"))
            mine += [
                case("forward", dtype, 2, 8, 2, 1000, 1000, d, dv=dv),  # GQA
                case("forward", dtype, 2, 4, 4, 1000, 77, d, "bottom_right",
                     window=10, dv=dv),  # rows that see no key
            ]
        if "decode_partial" in kinds:
            mine += [
                case("decode", dtype, 1, 32, 8, 1, 77, d, dv=dv),
                case("decode", dtype, 8, 32, 8, 1, 4097, d, dv=dv),
                case("decode", dtype, 2, 32, 8, 1, 16384, d, dv=dv,
                     layout="bshd"),
                case("decode", dtype, 2, 32, 8, 4, 1000, d, "bottom_right",
                     dv=dv, splits=5),
            ]
            if max(d, dv) > 256:
                # Value blocks; MLA's shape: every query head on one KV
                # head, a few queries a sequence (speculative decoding).
                mine += [
                    case("decode", dtype, 4, 128, 1, 1, 8192, d, dv=dv),
                    case("decode", dtype, 2, 16, 1, 3, 3000, d,
                         "bottom_right", dv=dv),
                ]
        if "decode_paged" in kinds:
            # MLA's serving shape: 128 query heads on one KV head of a
            # paged cache (FlashMLA's pages of 64 keys), ragged lengths
            # with an empty sequence; a few queries a sequence, aligned at
            # each sequence's end; pages of 1 and 16.
            mine += [
                paged_case(dtype, 64, 1, hq=128, d=d, dv=dv),
                paged_case(dtype, 16, 1, sq=3, causal="bottom_right",
                           hq=128, d=d, dv=dv, lens=[0, 1, 700, 2049]),
                paged_case(dtype, 1, 1, hq=16, d=d, dv=dv,
                           lens=[77, 300, 5]),
            ]
        if "backward_kv" in kinds:
            mine += [
                case("backward", dtype, 2, 4, 4, 77, 1000, d, dv=dv),
                case("backward", dtype, 2, 4, 4, 1000, 77, d, dv=dv,
                     layout="bshd"),
                case("backward", dtype, 1, 8, 2, 513, 2049, d, dv=dv,
                     twice=True),
            ]
            for causal in ("top_left", "bottom_right"):
                mine.append(case("backward", dtype, 2, 4, 4, 1000, 1000, d,
                                 causal, dv=dv))
        if quick:
            mine = mine[::2]
        cases += mine
    return cases


def skip_reason(module, c):
    """Why the manifest cannot run this case, or None."""
    mask = c.get("mask", "none")
    if c["kind"] == "varlen":
        paged = c["page"] is not None
        if module.has_kernel("forward", c["dtype"], c["d"], c["dv"],
                             c["causal"], packed=True, paged=paged) is None:
            return "no forward kernel for %s d%d/%d causal=%s q=packed " \
                "kv=%s" % (c["dtype"], c["d"], c["dv"], c["causal"],
                           "paged" if paged else "packed")
        return None
    if c["kind"] == "backward":
        missing = [kind for kind in BACKWARD_KINDS
                   if module.has_backward_kernel(kind, c["dtype"], c["d"],
                                                 c["dv"], c["causal"], mask,
                                                 atomic_dq=ATOMIC_DQ) is None]
        if missing:
            kinds = " or ".join(
                x for x in (", ".join(missing[:-1]), missing[-1]) if x)
            return "no %s kernel for %s d%d/%d causal=%s%s" % (
                kinds, c["dtype"], c["d"], c["dv"], c["causal"],
                "" if mask == "none" else " mask=" + mask)
        return None
    kind = "forward" if c["kind"] == "forward" else "decode_partial"
    paged = c["kind"] == "paged"
    kernel = module.has_kernel(kind, c["dtype"], c["d"], c["dv"], c["causal"],
                               mask, paged=paged)
    if kernel is None:
        return "no %s kernel for %s d%d/%d causal=%s%s%s" % (
            kind, c["dtype"], c["d"], c["dv"], c["causal"],
            "" if mask == "none" else " mask=" + mask,
            " kv=paged" if paged else "")
    if c["kind"] in ("decode", "paged"):
        if module.has_kernel("decode_combine", c["dtype"], None, c["dv"]) \
                is None:
            return "no decode_combine kernel for %s dv%d" % (c["dtype"],
                                                             c["dv"])
    return None

#===------------------------------------------------------------------------===#
# Running a case
#===------------------------------------------------------------------------===#


def random_tensor(b, h, s, d, dtype, layout, gen):
    """A tensor in `layout` order and its logical [B, H, S, D] view."""
    shape = (b, s, h, d) if layout == "bshd" else (b, h, s, d)
    t = torch.randn(shape, generator=gen, device="cuda",
                    dtype=torch.float32).to(TORCH_DTYPE[dtype])
    return t, (t.transpose(1, 2) if layout == "bshd" else t)


def run_numeric(module, c, gen):
    dtype = TORCH_DTYPE[c["dtype"]]
    qu, ql = random_tensor(c["b"], c["hq"], c["sq"], c["d"], c["dtype"],
                           c["layout"], gen)
    ku, kl = random_tensor(c["b"], c["hkv"], c["sk"], c["d"], c["dtype"],
                           c["layout"], gen)
    vu, vl = random_tensor(c["b"], c["hkv"], c["sk"], c["dv"], c["dtype"],
                           c["layout"], gen)
    out_shape = (c["b"], c["sq"], c["hq"], c["dv"]) if c["layout"] == "bshd" \
        else (c["b"], c["hq"], c["sq"], c["dv"])
    out = torch.full(out_shape, float("nan"), dtype=dtype, device="cuda")
    lse = torch.full((c["b"], c["hq"], c["sq"]), float("nan"),
                     dtype=torch.float32, device="cuda") if c["lse"] else None
    kwargs = dict(causal=c["causal"], window=c["window"], scale=c["scale"],
                  layout=c["layout"], out=out, lse=lse)
    extra = {}
    mask = mask4 = None
    if c.get("mask", "none") != "none":
        mask, mask4 = make_mask(c, gen)
        hidden = torch.isneginf(mask4) if mask4.dtype != torch.bool \
            else ~mask4
        extra["mask_rows_hidden"] = int(hidden.all(dim=-1).sum())
    if c["kind"] == "forward":
        call = lambda: module.forward(qu, ku, vu, mask=mask,  # noqa: E731
                                      **kwargs)
    else:
        used = module.decode_splits(qu, ku, vu, c["splits"],
                                    causal=c["causal"], window=c["window"],
                                    layout=c["layout"])
        extra["splits_used"] = used
        kernel = module.has_kernel("decode_partial", c["dtype"], c["d"],
                                   c["dv"], c["causal"])
        tiles = -(-c["sk"] // kernel["block_kv"])
        if c["splits"] is not None and c["splits"] > tiles and used != tiles:
            extra["detail"] = "requested %d splits > %d key tiles, used %d" \
                % (c["splits"], tiles, used)
        call = lambda: module.decode(qu, ku, vu,  # noqa: E731
                                     num_splits=c["splits"], **kwargs)
    call()
    torch.cuda.synchronize()
    out_logical = out.transpose(1, 2) if c["layout"] == "bshd" else out
    ref_o, ref_lse = reference(ql, kl, vl, c["causal"], c["window"],
                               c["scale"], mask4)
    result = compare(out_logical, lse, ref_o, ref_lse, c["dtype"])
    if "detail" in extra:
        result["status"] = FAIL
        result["detail"] = "; ".join(
            x for x in (result.get("detail"), extra.pop("detail")) if x)
    result.update(extra)
    result["kernel_ms"] = time_call(call)
    return result


def make_pools(c, lens, gen):
    """The page pools of a paged cache for sequences of `lens` keys (in
    c's kv_layout, pages of c["page"] keys) with random keys in the slots
    the block table gives each sequence and NaN everywhere else, and the
    block table: each sequence's pages in random order out of a pool
    larger than needed; its unused entries point at an unowned page, all
    NaN."""
    dtype = TORCH_DTYPE[c["dtype"]]
    page = c["page"]
    device = gen.device
    owned = [-(-n // page) for n in lens]
    needed = sum(owned)
    pool = needed + max(8, needed // 4)
    max_pages = max(owned) + 2
    order = torch.randperm(pool, generator=gen, device=device)
    table = torch.empty((len(lens), max_pages), dtype=torch.int32,
                        device=device)
    table[:] = order[needed].to(torch.int32)  # an unowned page: NaN
    start = 0
    for b, n in enumerate(owned):
        table[b, :n] = order[start:start + n].to(torch.int32)
        start += n
    shape = (pool, page, c["hkv"], c["d"]) if c["kv_layout"] == "bshd" \
        else (pool, c["hkv"], page, c["d"])
    k = torch.full(shape, float("nan"), dtype=dtype, device=device)
    v = torch.full(shape[:3] + (c["dv"],), float("nan"), dtype=dtype,
                   device=device)
    for pages, dim in ((k, c["d"]), (v, c["dv"])):
        logical = pages.transpose(1, 2) if c["kv_layout"] == "bshd" \
            else pages
        for b, n in enumerate(lens):
            if n == 0:
                continue
            keys = torch.arange(n, device=device)
            slots = table[b, keys // page].long()
            logical[slots, :, keys % page] = torch.randn(
                (n, c["hkv"], dim), generator=gen, device=device).to(dtype)
    return k, v, table


def make_paged(c, gen):
    """The tensors of a paged case: q (in its layout), the pools and the
    block table (make_pools) and the lengths, int32."""
    k, v, table = make_pools(c, c["lens"], gen)
    q, _ = random_tensor(c["b"], c["hq"], c["sq"], c["d"], c["dtype"],
                         c["layout"], gen)
    kv_lens = torch.tensor(c["lens"], dtype=torch.int32, device=gen.device)
    return q, k, v, table, kv_lens


def sequence_keys(c, k, v, table, i, n):
    """Sequence i's n keys and values of the pools, gathered through the
    block table (key j at slot j % page of page table[i][j // page]), as
    logical [1, Hkv, n, D] and [1, Hkv, n, Dv]."""
    kl = k.transpose(1, 2) if c["kv_layout"] == "bshd" else k
    vl = v.transpose(1, 2) if c["kv_layout"] == "bshd" else v
    keys = torch.arange(n, device=k.device)
    pages = table[i, keys // c["page"]].long()
    ks = kl[pages, :, keys % c["page"]].permute(1, 0, 2)[None]
    vs = vl[pages, :, keys % c["page"]].permute(1, 0, 2)[None]
    return ks, vs


def paged_reference(c, q, k, v, table, lens):
    """O and LSE in float64 from each sequence's keys, gathered through the
    block table: reference() on each; an empty sequence has O = 0 and
    LSE = -inf."""
    ql = q.transpose(1, 2) if c["layout"] == "bshd" else q
    b, hq, sq = c["b"], c["hq"], c["sq"]
    o = torch.zeros((b, hq, sq, c["dv"]), dtype=torch.float64,
                    device=q.device)
    lse = torch.full((b, hq, sq), float("-inf"), dtype=torch.float64,
                     device=q.device)
    for i, n in enumerate(lens):
        if n == 0:
            continue
        ks, vs = sequence_keys(c, k, v, table, i, n)
        o[i:i + 1], lse[i:i + 1] = reference(ql[i:i + 1], ks, vs, c["causal"],
                                             c["window"], c["scale"])
    return o, lse


def run_paged(module, c, gen):
    """One paged case: decode_paged into NaN outputs against the gathered
    float64 reference; with "relen", again with every length shortened in
    place (same tensors, same workspace)."""
    dtype = TORCH_DTYPE[c["dtype"]]
    q, k, v, table, kv_lens = make_paged(c, gen)
    out = torch.empty(q.shape[:3] + (c["dv"],), dtype=dtype, device="cuda")
    lse = torch.empty((c["b"], c["hq"], c["sq"]), dtype=torch.float32,
                      device="cuda") if c["lse"] else None
    options = dict(causal=c["causal"], window=c["window"], scale=c["scale"],
                   layout=c["layout"], kv_layout=c["kv_layout"])
    used = module.decode_paged_splits(q, k, v, table, kv_lens, c["splits"],
                                      **options)
    kernel = module.has_kernel("decode_partial", c["dtype"], c["d"], c["dv"],
                               c["causal"], paged=True)
    tiles = -(-table.shape[1] * c["page"] // kernel["block_kv"])
    workspace = module.decode_paged_workspace(q, k, v, table, kv_lens,
                                              c["splits"], **options)

    def call():
        module.decode_paged(q, k, v, table, kv_lens, num_splits=c["splits"],
                            out=out, lse=lse, workspace=workspace, **options)

    def check(lens):
        out.fill_(float("nan"))
        if lse is not None:
            lse.fill_(float("nan"))
        call()
        torch.cuda.synchronize()
        ref_o, ref_lse = paged_reference(c, q, k, v, table, lens)
        got = out.transpose(1, 2) if c["layout"] == "bshd" else out
        return compare(got, lse, ref_o, ref_lse, c["dtype"])

    result = check(c["lens"])
    result["splits_used"] = used
    problems = [result["detail"]] if "detail" in result else []
    if c["splits"] is not None and c["splits"] > tiles and used != tiles:
        problems.append("requested %d splits > %d key tiles, used %d"
                        % (c["splits"], tiles, used))
    if c.get("relen"):
        shorter = [n // 3 for n in c["lens"]]
        kv_lens.copy_(torch.tensor(shorter, dtype=torch.int32,
                                   device="cuda"))
        again = check(shorter)
        result["relen_rel_err"] = again["rel_err"]
        if again["status"] != PASS:
            problems.append("after shortening the lengths in place: "
                            + again["detail"])
    if problems:
        result["status"] = FAIL
        result["detail"] = "; ".join(problems)
    result["kernel_ms"] = time_call(call)
    return result


def packed_logical(x, layout):
    """The logical [1, H, T, D] view of a packed batch's tensor: [T, H, D]
    ('bshd') or [H, T, D] ('bhsd'), with or without its leading 1."""
    if x.dim() == 4:
        x = x[0]
    return (x.transpose(0, 1) if layout == "bshd" else x)[None]


def offsets_of(lens, device):
    """The offsets [B + 1] of sequences of `lens` rows back to back."""
    starts = [0]
    for n in lens:
        starts.append(starts[-1] + n)
    return torch.tensor(starts, dtype=torch.int32, device=device)


def make_varlen(c, gen):
    """The tensors of a packed case: q (T rows in c's layout, and
    c["tail"] rows past the last offset), its offsets, and the keys: packed
    k and v with key_offsets, or the pools and block table of a paged cache
    (make_pools) with the lengths, as forward_varlen's keyword arguments."""
    dtype = TORCH_DTYPE[c["dtype"]]
    device = gen.device

    def packed(h, rows, dim):
        shape = (rows, h, dim) if c["layout"] == "bshd" else (h, rows, dim)
        x = torch.randn(shape, generator=gen, device=device,
                        dtype=torch.float32).to(dtype)
        return x[None] if c["four_dim"] else x

    q = packed(c["hq"], sum(c["q_lens"]) + c["tail"], c["d"])
    query_offsets = offsets_of(c["q_lens"], device)
    if c["page"] is None:
        tk = sum(c["k_lens"])
        k, v = packed(c["hkv"], tk, c["d"]), packed(c["hkv"], tk, c["dv"])
        keys = dict(key_offsets=offsets_of(c["k_lens"], device))
    else:
        k, v, table = make_pools(c, c["k_lens"], gen)
        keys = dict(kv_lens=torch.tensor(c["k_lens"], dtype=torch.int32,
                                         device=device),
                    block_table=table)
    return q, k, v, query_offsets, keys


def varlen_reference(c, q, k, v, keys):
    """O [1, Hq, T, Dv] and LSE [1, Hq, T] in float64: reference() on each
    sequence's own query rows and keys (packed rows, or gathered through
    the block table); a sequence without keys has O = 0 and LSE = -inf, and
    so do the rows past the last offset (not compared)."""
    ql = packed_logical(q, c["layout"])
    t = ql.shape[2]
    o = torch.zeros((1, c["hq"], t, c["dv"]), dtype=torch.float64,
                    device=q.device)
    lse = torch.full((1, c["hq"], t), float("-inf"), dtype=torch.float64,
                     device=q.device)
    if c["page"] is None:
        kl, vl = packed_logical(k, c["layout"]), packed_logical(v, c["layout"])
    row = key = 0
    for i, (nq, nk) in enumerate(zip(c["q_lens"], c["k_lens"])):
        if nq and nk:
            if c["page"] is None:
                ks, vs = kl[:, :, key:key + nk], vl[:, :, key:key + nk]
            else:
                ks, vs = sequence_keys(c, k, v, keys["block_table"], i, nk)
            o[:, :, row:row + nq], lse[:, :, row:row + nq] = reference(
                ql[:, :, row:row + nq], ks, vs, c["causal"], c["window"],
                c["scale"])
        row, key = row + nq, key + nk
    return o, lse


def run_varlen(module, c, gen):
    """One packed case: forward_varlen with max_seqlen_q = the longest
    sequence into NaN outputs against the per-sequence float64 reference;
    every row the offsets cover written, none past them; then again with
    max_seqlen_q = 0 into fresh NaN outputs, bitwise the same."""
    dtype = TORCH_DTYPE[c["dtype"]]
    q, k, v, query_offsets, keys = make_varlen(c, gen)
    hq, covered = c["hq"], sum(c["q_lens"])
    t = covered + c["tail"]
    out_shape = q.shape[:-1] + (c["dv"],)
    lse_shape = (hq, t) if q.dim() == 3 else (1, hq, t)

    def outputs():
        out = torch.full(out_shape, float("nan"), dtype=dtype, device="cuda")
        lse = torch.full(lse_shape, float("nan"), dtype=torch.float32,
                         device="cuda") if c["lse"] else None
        return out, lse

    def call(out, lse, max_seqlen_q):
        module.forward_varlen(q, k, v, query_offsets,
                              max_seqlen_q=max_seqlen_q, causal=c["causal"],
                              window=c["window"], scale=c["scale"],
                              layout=c["layout"], kv_layout=c["kv_layout"],
                              out=out, lse=lse, **keys)

    out, lse = outputs()
    call(out, lse, max(c["q_lens"]))
    torch.cuda.synchronize()
    ref_o, ref_lse = varlen_reference(c, q, k, v, keys)
    got_o = packed_logical(out, c["layout"])
    got_lse = None if lse is None else lse if lse.dim() == 3 else lse[None]
    result = compare(got_o[:, :, :covered],
                     got_lse[:, :, :covered] if lse is not None else None,
                     ref_o[:, :, :covered], ref_lse[:, :, :covered],
                     c["dtype"])
    problems = [result["detail"]] if "detail" in result else []
    # Offsets that tile the rows leave none unwritten; the rows past the
    # last offset are nobody's and stay as they were.
    unwritten = int(torch.isnan(got_o[:, :, :covered]).any(dim=-1).sum())
    if lse is not None:
        unwritten += int(torch.isnan(got_lse[:, :, :covered]).sum())
    result["rows_unwritten"] = unwritten
    if unwritten:
        problems.append("%d rows of O or LSE that the offsets cover were not "
                        "written (NaN)" % unwritten)
    if c["tail"]:
        stray = int((~torch.isnan(got_o[:, :, covered:])).any(dim=-1).sum())
        if lse is not None:
            stray += int((~torch.isnan(got_lse[:, :, covered:])).sum())
        if stray:
            problems.append("%d rows past the last offset were written"
                            % stray)
    out0, lse0 = outputs()
    call(out0, lse0, 0)
    torch.cuda.synchronize()
    same = torch.equal(out.view(torch.int16), out0.view(torch.int16))
    if lse is not None:
        same = same and torch.equal(lse.view(torch.int32),
                                    lse0.view(torch.int32))
    result["max_seqlen_0_bitwise"] = same
    if not same:
        problems.append("max_seqlen_q = 0 gave other bits than max_seqlen_q "
                        "= %d" % max(c["q_lens"]))
    if problems:
        result["status"] = FAIL
        result["detail"] = "; ".join(problems)
    result["kernel_ms"] = time_call(lambda: call(out, lse, max(c["q_lens"])))
    return result


def time_call(call):
    """One timed call (not a benchmark: a guard against pathological
    kernels), in milliseconds."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def nan_like(t):
    return torch.full_like(t, float("nan"))


# Whether backward calls ask for the atomic dQ kernels (--atomic-dq).
ATOMIC_DQ = False


def run_backward(module, c, gen):
    """One backward case: O and LSE from the float64 reference, dO random,
    the gradients (NaN-filled first) against float64 autograd."""
    dtype = TORCH_DTYPE[c["dtype"]]
    layout = c["layout"]
    qu, ql = random_tensor(c["b"], c["hq"], c["sq"], c["d"], c["dtype"],
                           layout, gen)
    ku, kl = random_tensor(c["b"], c["hkv"], c["sk"], c["d"], c["dtype"],
                           layout, gen)
    vu, vl = random_tensor(c["b"], c["hkv"], c["sk"], c["dv"], c["dtype"],
                           layout, gen)
    dou, dol = random_tensor(c["b"], c["hq"], c["sq"], c["dv"], c["dtype"],
                             layout, gen)
    mask = mask4 = None
    if c["mask"] != "none":
        mask, mask4 = make_mask(c, gen)
    ref_o, ref_lse = reference(ql, kl, vl, c["causal"], c["window"],
                               c["scale"], mask4)
    # The forward's outputs as the caller has them: O in the dtype and
    # layout, LSE f32 (-inf where a row sees no key).
    ou = ref_o.to(dtype)
    if layout == "bshd":
        ou = ou.transpose(1, 2).contiguous()
    lse = ref_lse.float()
    del ref_o

    def run():
        grads = [nan_like(t) for t in (qu, ku, vu)]
        module.backward(qu, ku, vu, ou, dou, lse, *grads, causal=c["causal"],
                        window=c["window"], scale=c["scale"], layout=layout,
                        mask=mask, atomic_dq=ATOMIC_DQ)
        torch.cuda.synchronize()
        return grads

    grads = run()
    logical = [g.transpose(1, 2) if layout == "bshd" else g for g in grads]
    refs = reference_grads(ql, kl, vl, dol, c["causal"], c["window"],
                           c["scale"], mask4)
    result = compare_grads(logical, refs[:3], refs[3], c["hkv"], c["dtype"])
    del refs
    if c["twice"]:
        again = run()
        same = all(torch.equal(a.view(torch.int16), b.view(torch.int16))
                   for a, b in zip(grads, again))
        result["deterministic"] = same
        if not same and not ATOMIC_DQ:
            result["status"] = FAIL
            result["detail"] = "; ".join(
                x for x in (result.get("detail"),
                            "a second run gave different gradient bits") if x)
    result["kernel_ms"] = time_call(run)
    return result

#===------------------------------------------------------------------------===#
# Error paths: each must raise before anything is launched
#===------------------------------------------------------------------------===#


def error_base(kernels):
    """The kernel a call's error cases run on: bf16 d128 when `kernels` has
    one, else its first. Returns it (None when there is none) and its dtype
    name, head dims and causal kind (bf16, 128, 128, none without one)."""
    base = next((k for k in kernels if k.get("dtype") == "bf16"
                 and k.get("head_dim") == 128),
                kernels[0] if kernels else None)
    if base is None:
        return None, "bf16", 128, 128, "none"
    return (base, base["dtype"], base["head_dim"], base["value_dim"],
            base["causal"])


def error_adder(cases, prefix=""):
    """add(name, expect, make): appends an error case named prefix + name
    to `cases`."""
    def add(name, expect, make):
        cases.append(dict(kind="error", name=prefix + name, expect=expect,
                          make=make))
    return add


def no_kernel_error(module, kind, dtype):
    """What a call without a kernel of its specialisation raises: no kernel,
    or a dtype error when the module has no `kind` kernel of `dtype`."""
    kinds = [k for k in module.kernels
             if k.get("kind") == kind and k["dtype"] == dtype]
    return "ATTN_ERROR_NO_KERNEL" if kinds else "ATTN_ERROR_DTYPE"


def error_cases(module):
    """Checks on the first forward kernel of the manifest (bf16 d128 when
    there is one): each raises the expected error and leaves the output as
    it was (NaN)."""
    forward = [k for k in module.kernels if k.get("kind") == "forward"
               and k.get("q") is None]  # forward()'s, not forward_varlen()'s
    if not forward:
        return [dict(kind="error", name="(all)",
                     skip="the manifest has no forward kernel")] + \
            paged_error_cases(module) + varlen_error_cases(module) + \
            backward_error_cases(module)
    # The calls below pass no mask (but the mask cases): an unmasked kernel.
    unmasked = [k for k in forward if k.get("mask", "none") == "none"] \
        or forward
    _, dt, d, dv, causal = error_base(unmasked)
    tdt = TORCH_DTYPE[dt]
    b, h, s = 2, 4, 128

    def t(*shape, dtype=tdt):
        return torch.randn(shape, device="cuda",
                           dtype=torch.float32).to(dtype)

    def nan_out(*shape, dtype=tdt):
        return torch.full(shape, float("nan"), device="cuda", dtype=dtype)

    def fwd(q, k, v, out, **kw):
        kw.setdefault("causal", causal)
        return lambda: module.forward(q, k, v, out=out, **kw)

    cases = []
    add = error_adder(cases)

    def misaligned():
        n = b * h * s * d
        q = t(n + 8)[1:n + 1].view(b, h, s, d)
        out = nan_out(b, h, s, dv)
        return fwd(q, t(b, h, s, d), t(b, h, s, dv), out), out
    add("misaligned q pointer", "ATTN_ERROR_ALIGNMENT", misaligned)

    def misaligned_rows():
        pad = 2 if dt == "f32" else 4
        q = t(b, s, h, d + pad)[..., :d]
        out = nan_out(b, s, h, dv)
        return fwd(q, t(b, s, h, d), t(b, s, h, dv), out,
                   layout="bshd"), out
    add("misaligned head stride (bshd)", "ATTN_ERROR_ALIGNMENT",
        misaligned_rows)

    def strided_last():
        q = t(b, h, d, s).transpose(2, 3)
        out = nan_out(b, h, s, dv)
        return fwd(q, t(b, h, s, d), t(b, h, s, dv), out), out
    add("last dim not contiguous", "ATTN_ERROR_STRIDE", strided_last)

    def mixed_dtype():
        other = torch.float16 if tdt != torch.float16 else torch.bfloat16
        out = nan_out(b, h, s, dv)
        return fwd(t(b, h, s, d), t(b, h, s, d, dtype=other),
                   t(b, h, s, dv), out), out
    add("k dtype differs from q", "ATTN_ERROR_DTYPE", mixed_dtype)

    missing = [x for x in ("f32", "f16", "bf16")
               if not any(k.get("dtype") == x for k in forward)]
    if missing:
        def no_dtype_kernel():
            other = TORCH_DTYPE[missing[0]]
            out = nan_out(b, h, s, dv, dtype=other)
            return fwd(t(b, h, s, d, dtype=other), t(b, h, s, d, dtype=other),
                       t(b, h, s, dv, dtype=other), out), out
        add("dtype %s without a kernel" % missing[0], "ATTN_ERROR_DTYPE",
            no_dtype_kernel)

    def lse_dtype():
        out = nan_out(b, h, s, dv)
        lse = torch.full((b, h, s), float("nan"), device="cuda",
                         dtype=torch.bfloat16)
        return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out,
                   lse=lse), out
    add("lse not f32", "ATTN_ERROR_DTYPE", lse_dtype)

    def gqa_ratio():
        out = nan_out(b, 3, s, dv)
        return fwd(t(b, 3, s, d), t(b, 2, s, d), t(b, 2, s, dv), out), out
    add("Hq not a multiple of Hkv", "ATTN_ERROR_SHAPE", gqa_ratio)

    def out_shape():
        out = nan_out(b, h, s + 1, dv)
        return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out), out
    add("output shape", "ATTN_ERROR_SHAPE", out_shape)

    if not any(k.get("head_dim") == 96 for k in forward):
        def no_head_dim():
            out = nan_out(b, h, s, 96)
            return fwd(t(b, h, s, 96), t(b, h, s, 96), t(b, h, s, 96),
                       out), out
        add("head dim 96 without a kernel", "ATTN_ERROR_NO_KERNEL",
            no_head_dim)

    def window_no_causal():
        out = nan_out(b, h, s, dv)
        return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out,
                   causal=False, window=16), out
    add("window without causal", "ATTN_ERROR_INVALID_ARGUMENT",
        window_no_causal)

    def cpu_tensor():
        out = nan_out(b, h, s, dv)
        return fwd(t(b, h, s, d).cpu(), t(b, h, s, d), t(b, h, s, dv),
                   out), out
    add("CPU tensor", "ValueError", cpu_tensor)

    def mask_shape():
        out = nan_out(b, h, s, dv)
        mask = torch.zeros((s, s + 1), device="cuda", dtype=tdt)
        return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out,
                   mask=mask), out
    add("mask of shape [Sq, Sk + 1]", "ATTN_ERROR_SHAPE", mask_shape)

    def mask_heads():
        out = nan_out(b, h, s, dv)
        mask = torch.ones((b, 2, s, s), device="cuda", dtype=torch.bool)
        return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out,
                   mask=mask), out
    add("bool mask of shape [B, 2, Sq, Sk] with Hq = 4", "ATTN_ERROR_SHAPE",
        mask_heads)

    def mask_dtype():
        out = nan_out(b, h, s, dv)
        other = torch.float32 if tdt != torch.float32 else torch.float16
        mask = torch.zeros((s, s), device="cuda", dtype=other)
        return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out,
                   mask=mask), out
    add("additive mask dtype differs from q", "TypeError", mask_dtype)

    def mask_int():
        out = nan_out(b, h, s, dv)
        mask = torch.zeros((s, s), device="cuda", dtype=torch.int32)
        return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out,
                   mask=mask), out
    add("integer mask", "TypeError", mask_int)

    for kind, make_dtype in (("add", tdt), ("bool", torch.bool)):
        if module.has_kernel("forward", dt, d, dv, causal, kind) is None:
            def no_mask_kernel(kind=kind, make_dtype=make_dtype):
                out = nan_out(b, h, s, dv)
                mask = torch.zeros((s, s), device="cuda", dtype=make_dtype)
                return fwd(t(b, h, s, d), t(b, h, s, d), t(b, h, s, dv), out,
                           mask=mask), out
            add("mask=%s without a kernel" % kind, "ATTN_ERROR_NO_KERNEL",
                no_mask_kernel)

    dec = module.has_kernel("decode_partial", dt, 128, 128, "none")
    if dec is not None and module.has_kernel("decode_combine", dt, None, 128):
        def small_workspace():
            out = nan_out(1, 32, 1, 128)
            ws = torch.empty(256, dtype=torch.uint8, device="cuda")
            return (lambda: module.decode(
                t(1, 32, 1, 128), t(1, 8, 4096, 128), t(1, 8, 4096, 128),
                out=out, workspace=ws)), out
        add("decode workspace too small", "ATTN_ERROR_INVALID_ARGUMENT",
            small_workspace)

        def misaligned_workspace():
            out = nan_out(1, 32, 1, 128)
            ws = torch.empty(1 << 24, dtype=torch.uint8, device="cuda")[16:]
            return (lambda: module.decode(
                t(1, 32, 1, 128), t(1, 8, 4096, 128), t(1, 8, 4096, 128),
                out=out, workspace=ws)), out
        add("decode workspace misaligned", "ATTN_ERROR_ALIGNMENT",
            misaligned_workspace)
    return cases + paged_error_cases(module) + varlen_error_cases(module) + \
        backward_error_cases(module)


def paged_error_cases(module):
    """decode_paged's checks on a paged kernel of the manifest (bf16 d128
    when there is one): each raises the expected error and leaves the output
    as it was (NaN). A module without paged kernels must say so."""
    paged = [k for k in module.kernels if k.get("kind") == "decode_partial"
             and k.get("kv") == "paged"
             and module.has_kernel("decode_combine", k["dtype"], None,
                                   k["value_dim"])]
    base, dt, d, dv, causal = error_base(paged)
    tdt = TORCH_DTYPE[dt]
    b, hq, hkv, page, pool, max_pages = 3, 32, 8, 16, 40, 8
    cases = []
    add = error_adder(cases, "paged ")

    def call(pool_dtype=tdt, v_heads=hkv, table_dtype=torch.int32, lens_b=b,
             offset=0, **kw):
        """A decode_paged call on vLLM-layout pools and its NaN output."""
        def t(*shape, dtype=tdt):
            return torch.randn(shape, device="cuda").to(dtype)
        q = t(b, hq, 1, d)
        n = pool * page * hkv * d
        k = t(n + 8, dtype=pool_dtype)[offset:offset + n].view(
            pool, page, hkv, d)
        v = t(pool, page, v_heads, dv, dtype=pool_dtype)
        table = torch.randint(0, pool, (b, max_pages), device="cuda").to(
            table_dtype)
        lens = torch.full((lens_b,), page * max_pages, dtype=torch.int32,
                          device="cuda")
        out = torch.full((b, hq, 1, dv), float("nan"), device="cuda",
                         dtype=tdt)
        kw.setdefault("causal", causal)
        return (lambda: module.decode_paged(q, k, v, table, lens, out=out,
                                            kv_layout="bshd", **kw)), out

    if base is None:
        add("without a paged kernel",
            no_kernel_error(module, "decode_partial", dt), call)
        return cases
    add("block_table int64", "TypeError",
        lambda: call(table_dtype=torch.int64))
    add("kv_lens of B + 1 sequences", "ATTN_ERROR_SHAPE",
        lambda: call(lens_b=b + 1))
    other = torch.float16 if tdt != torch.float16 else torch.bfloat16
    add("pools of another dtype", "ATTN_ERROR_DTYPE",
        lambda: call(pool_dtype=other))
    add("pools that differ on Hkv", "ATTN_ERROR_SHAPE",
        lambda: call(v_heads=hkv // 2))
    add("k_cache misaligned", "ATTN_ERROR_ALIGNMENT",
        lambda: call(offset=1))
    add("workspace too small", "ATTN_ERROR_INVALID_ARGUMENT",
        lambda: call(workspace=torch.empty(256, dtype=torch.uint8,
                                           device="cuda")))
    add("window without causal", "ATTN_ERROR_INVALID_ARGUMENT",
        lambda: call(causal=False, window=16))
    return cases


def varlen_error_cases(module):
    """forward_varlen's checks on a packed kernel of the manifest (with
    packed keys, bf16 d128 when there is one): each raises the expected
    error and leaves the output as it was (NaN). A module without packed
    kernels must say so."""
    packed = [k for k in module.kernels if k.get("kind") == "forward"
              and k.get("q") == "packed" and k.get("kv") == "packed"]
    base, dt, d, dv, causal = error_base(packed)
    tdt = TORCH_DTYPE[dt]
    lens, hq, hkv = [77, 0, 200], 8, 2
    t = sum(lens)
    cases = []
    add = error_adder(cases, "varlen ")

    def call(offsets_dtype=torch.int32, key_entries=len(lens) + 1,
             q_batch=None, offset=0, **kw):
        """A forward_varlen call on [T, H, D] tensors and its NaN output."""
        def x(*shape, dtype=tdt):
            return torch.randn(shape, device="cuda").to(dtype)
        n = t * hq * d
        q = x(n + 8)[offset:offset + n].view(t, hq, d)
        if q_batch:
            q = x(q_batch, t, hq, d)
        k, v = x(t, hkv, d), x(t, hkv, dv)
        qo = offsets_of(lens, "cuda").to(offsets_dtype)
        ko = offsets_of(lens + [0] * (key_entries - len(lens) - 1),
                        "cuda")[:key_entries]
        out = torch.full((q_batch, t, hq, dv) if q_batch else (t, hq, dv),
                         float("nan"), device="cuda", dtype=tdt)
        kw.setdefault("causal", causal)
        kw.setdefault("key_offsets", ko)
        return (lambda: module.forward_varlen(q, k, v, qo, out=out, **kw)), \
            out

    if base is None:
        add("without a packed kernel", no_kernel_error(module, "forward", dt),
            call)
        return cases
    add("query_offsets int64", "TypeError",
        lambda: call(offsets_dtype=torch.int64))
    add("key_offsets of B + 2 entries", "ATTN_ERROR_SHAPE",
        lambda: call(key_entries=len(lens) + 2))
    add("q of batch 2", "ATTN_ERROR_SHAPE", lambda: call(q_batch=2))
    add("q misaligned", "ATTN_ERROR_ALIGNMENT", lambda: call(offset=1))
    add("both key kinds", "ValueError",
        lambda: call(kv_lens=torch.zeros(len(lens), dtype=torch.int32,
                                         device="cuda")))
    add("no keys", "ATTN_ERROR_INVALID_ARGUMENT",
        lambda: call(key_offsets=None))
    add("window without causal", "ATTN_ERROR_INVALID_ARGUMENT",
        lambda: call(causal=False, window=16))
    return cases


def backward_error_cases(module):
    """attn_backward's checks, on a specialisation that has all three
    backward kernels (bf16 d128 without a mask when there is one): each
    raises the expected error and leaves dq, dk and dv as they were (NaN).
    A module without backward kernels must say so (ATTN_ERROR_NO_KERNEL)."""
    full = [k for k in module.kernels if k.get("kind") == "backward_dot"
            and all(module.has_backward_kernel(kind, k["dtype"],
                                               k["head_dim"],
                                               k["value_dim"], k["causal"],
                                               k.get("mask", "none"),
                                               atomic_dq=ATOMIC_DQ)
                    for kind in BACKWARD_KINDS)]
    unmasked = [k for k in full if k.get("mask", "none") == "none"] or full
    base, dt, d, dv, causal = error_base(unmasked)
    tdt = TORCH_DTYPE[dt]
    b, s = 2, 128
    cases = []
    add = error_adder(cases, "backward ")

    def call(hq=4, hkv=4, d=d, dv=dv, dtype=tdt, grad_shapes=None, lse=True,
             lse_dtype=torch.float32, dq_dtype=None, **kw):
        """A backward call on random inputs and its NaN gradients."""
        def t(*shape):
            return torch.randn(shape, device="cuda").to(dtype)
        q, k, v = t(b, hq, s, d), t(b, hkv, s, d), t(b, hkv, s, dv)
        o, dout = t(b, hq, s, dv), t(b, hq, s, dv)
        lse_t = torch.randn((b, hq, s), device="cuda").to(lse_dtype) \
            if lse else None
        shapes = grad_shapes or ((b, hq, s, d), (b, hkv, s, d),
                                 (b, hkv, s, dv))
        grads = [torch.full(x, float("nan"), device="cuda", dtype=y)
                 for x, y in zip(shapes, (dq_dtype or dtype, dtype, dtype))]
        kw.setdefault("causal", causal)
        kw.setdefault("atomic_dq", ATOMIC_DQ)
        return (lambda: module.backward(q, k, v, o, dout, lse_t, *grads,
                                        **kw)), grads

    if base is None:
        add("without backward kernels", "ATTN_ERROR_NO_KERNEL", call)
        return cases
    if ATOMIC_DQ and all(k.get("dq") == "atomic" for k in module.kernels
                         if k.get("kind") in BACKWARD_KINDS):
        # Only atomic kernels: a deterministic call has none.
        add("deterministic call, atomic kernels only", "ATTN_ERROR_NO_KERNEL",
            lambda: call(atomic_dq=False))
    add("workspace too small", "ATTN_ERROR_INVALID_ARGUMENT",
        lambda: call(workspace=torch.empty(256, dtype=torch.uint8,
                                           device="cuda")))
    add("workspace misaligned", "ATTN_ERROR_ALIGNMENT",
        lambda: call(workspace=torch.empty(1 << 20, dtype=torch.uint8,
                                           device="cuda")[16:]))
    add("lse missing", "ATTN_ERROR_INVALID_ARGUMENT",
        lambda: call(lse=False))
    add("lse not f32", "ATTN_ERROR_DTYPE",
        lambda: call(lse_dtype=torch.bfloat16))
    add("dk with the query heads (GQA)", "ATTN_ERROR_SHAPE",
        lambda: call(hq=8, hkv=2, grad_shapes=((b, 8, s, d), (b, 8, s, d),
                                                (b, 2, s, dv))))
    add("dq of another dtype", "ATTN_ERROR_DTYPE",
        lambda: call(dq_dtype=torch.float32))
    add("window without causal", "ATTN_ERROR_INVALID_ARGUMENT",
        lambda: call(causal=False, window=16))
    if not any(k.get("head_dim") == 96 for k in full):
        add("head dim 96 without kernels", "ATTN_ERROR_NO_KERNEL",
            lambda: call(d=96, dv=96))
    for kind, make_dtype in (("add", tdt), ("bool", torch.bool)):
        if any(module.has_backward_kernel(x, dt, d, dv, causal, kind,
                                          atomic_dq=ATOMIC_DQ) is None
               for x in BACKWARD_KINDS):
            def no_mask_kernel(make_dtype=make_dtype):
                mask = torch.zeros((s, s), device="cuda", dtype=make_dtype)
                return call(mask=mask)
            add("mask=%s without kernels" % kind, "ATTN_ERROR_NO_KERNEL",
                no_mask_kernel)
    return cases


def run_error(c):
    call, out = c["make"]()
    raised = None
    try:
        call()
    except attn_runtime.AttnError as e:
        raised = (e.status_name, e.message)
    except (ValueError, TypeError) as e:
        raised = (type(e).__name__, str(e))
    torch.cuda.synchronize()
    outs = out if isinstance(out, (list, tuple)) else [out]
    untouched = all(bool(torch.isnan(x.float()).all()) for x in outs)
    result = {"expected": c["expect"]}
    if raised is None:
        result.update(status=FAIL, detail="no error raised")
    else:
        result["raised"], result["message"] = raised
        ok = raised[0] == c["expect"] and untouched
        result["status"] = PASS if ok else FAIL
        result["detail"] = raised[1] if ok else \
            "raised %s (%s)%s" % (raised[0], raised[1],
                                  "" if untouched else "; output was written")
    return result

#===------------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------------===#


def context_alive():
    try:
        torch.cuda.synchronize()
        return float(torch.ones(1, device="cuda").sum()) == 1.0
    except Exception:  # noqa: BLE001 - any failure means the context is gone
        return False


def format_row(r):
    metrics = ""
    if "rel_err" in r:
        metrics = "rel=%.2e max=%.2e" % (r["rel_err"], r["max_abs_err"])
        if "lse_err" in r:
            metrics += " lse=%.1e" % r["lse_err"]
        if "splits_used" in r:
            metrics += " n=%d" % r["splits_used"]
        if "kernel_ms" in r:
            metrics += " %.3fms" % r["kernel_ms"]
    line = "%-4s  %-72s %s" % (r["status"], r["name"], metrics)
    if r.get("detail") and r["status"] != PASS:
        line += "\n      " + r["detail"].replace("\n", "\n      ")
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--lib", default=None,
                        help="libattn_runtime.so (default: see "
                             "python/attn_runtime.py)")
    parser.add_argument("--out", default=None, help="JSON results")
    parser.add_argument("--quick", action="store_true",
                        help="a third of the cases outside bf16 d128")
    parser.add_argument("--filter", default=None,
                        help="only cases whose name contains this "
                             "('backward': the backward's cases, 'paged': "
                             "decode_paged's, 'varlen': forward_varlen's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--atomic-dq", action="store_true",
                        help="backward calls ask for the atomic dQ kernels")
    parser.add_argument("--tf32", action="store_true",
                        help="f32 calls may take f32=tf32 kernels "
                             "(module.allow_tf32), held to f16's tolerances")
    parser.add_argument("--max-scores", type=int, default=None,
                        help="only cases with at most this many scores "
                             "(B * Hq * Sq * Sk): the small, representative "
                             "subset that compute-sanitizer runs")
    args = parser.parse_args()
    global ATOMIC_DQ, LSE_TOLERANCE
    ATOMIC_DQ = args.atomic_dq
    if args.tf32:
        TOLERANCE["f32"] = TF32_TOLERANCE
        GRAD_TOLERANCE["f32"] = TF32_GRAD_TOLERANCE
        LSE_TOLERANCE = TF32_LSE_TOLERANCE

    if not torch.cuda.is_available():
        print("no CUDA device visible to torch")
        print("0 passed, 1 failed, 0 skipped")
        return 1
    props = torch.cuda.get_device_properties(0)
    info = {
        "device": props.name,
        "capability": "sm_%d%d" % (props.major, props.minor),
        "sms": props.multi_processor_count,
        "torch": torch.__version__,
        "manifest": os.path.abspath(args.manifest),
        "tolerance_rel": TOLERANCE,
        "tolerance_lse": LSE_TOLERANCE,
        "seed": args.seed,
        "atomic_dq": args.atomic_dq,
        "tf32": args.tf32,
    }
    print("device: %s (%s, %d SMs), torch %s" % (
        props.name, info["capability"], props.multi_processor_count,
        torch.__version__))
    results = []

    def save():
        if not args.out:
            return
        summary = {s: sum(r["status"] == s for r in results)
                   for s in (PASS, FAIL, SKIP)}
        with open(args.out + ".tmp", "w") as f:
            json.dump(dict(info, cases=results, summary=summary), f,
                      indent=1, default=str)
        os.replace(args.out + ".tmp", args.out)

    try:
        module = attn_runtime.Module(args.manifest, lib=args.lib)
    except Exception as e:  # noqa: BLE001 - report any load failure
        results.append({"name": "module load", "status": FAIL,
                        "detail": str(e)})
        print(format_row(results[-1]))
        save()
        print("0 passed, 1 failed, 0 skipped")
        return 1
    module.allow_tf32 = args.tf32
    info["target"] = module.target
    info["kernels"] = module.kernels
    print("manifest: %s (%s, %d kernels)" % (args.manifest, module.target,
                                            len(module.kernels)))

    cases = forward_cases(args.quick) + mask_cases(args.quick) + \
        decode_cases(args.quick) + paged_cases(args.quick) + \
        varlen_cases(args.quick) + backward_cases(args.quick) + \
        head_dim_cases(module, args.quick)
    if args.max_scores is not None:
        small = [c for c in cases
                 if c["b"] * c["hq"] * c["sq"] * c["sk"] <= args.max_scores]
        print("--max-scores %d: %d of %d numeric cases" % (
            args.max_scores, len(small), len(cases)))
        cases = small
    cases += error_cases(module)
    gen = torch.Generator(device="cuda")
    lost = None
    started = time.time()
    for index, c in enumerate(cases):
        name = case_name(c)
        if args.filter and args.filter not in name:
            continue
        r = {k: v for k, v in c.items() if k != "make"}
        r["name"] = name
        t0 = time.time()
        reason = c.get("skip") or (None if c["kind"] == "error"
                                   else skip_reason(module, c))
        if lost:
            r.update(status=SKIP, detail="not run: " + lost)
        elif reason:
            r.update(status=SKIP, detail=reason)
        else:
            gen.manual_seed(args.seed * 100003 + index)
            try:
                if c["kind"] == "error":
                    r.update(run_error(c))
                elif c["kind"] == "backward":
                    r.update(run_backward(module, c, gen))
                elif c["kind"] == "paged":
                    r.update(run_paged(module, c, gen))
                elif c["kind"] == "varlen":
                    r.update(run_varlen(module, c, gen))
                else:
                    r.update(run_numeric(module, c, gen))
            except Exception as e:  # noqa: BLE001 - a failing case, reported
                r.update(status=FAIL, detail="%s: %s" % (
                    type(e).__name__, str(e).strip()[:2000]))
                if not context_alive():
                    lost = "the CUDA context died in '%s'" % name
                    r["detail"] += "\n" + traceback.format_exc(limit=3)
            torch.cuda.empty_cache()
        r["seconds"] = round(time.time() - t0, 3)
        results.append(r)
        print(format_row(r), flush=True)
        save()

    passed = sum(r["status"] == PASS for r in results)
    failed = sum(r["status"] == FAIL for r in results)
    skipped = sum(r["status"] == SKIP for r in results)
    print("time: %.1fs" % (time.time() - started))
    if lost:
        print("stopped early: " + lost)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    save()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
