"""What a kernel is specialised for, and the MLIR that asks attn-compile
for it.

attn's GPU kernels read batch, head counts and sequence lengths at run
time; what they are compiled for is the element type, the head dims D and
Dv, the causal kind and the mask kind (and, for f32, the products:
3xTF32, f32's accuracy, or one TF32 product, f16's). A KernelSpec names one such
specialisation, for inference (the forward kernel) or for training (the
forward and the backward's three kernels, deterministic or of the atomic dQ
mode), with or without a score/mask modification (attn.mods.Modification:
its regions and mod_name go on the ops, and the tensors it reads are the
ops' mod_operands, arguments of the functions, typed by element type and
rank only). No torch here: the kernel provider and the tests use it without
a GPU.
"""

import dataclasses

__all__ = ["BACKWARD_KINDS", "CAUSAL_KINDS", "DTYPES", "KernelSpec",
           "MASK_KINDS"]

DTYPES = ("bf16", "f16", "f32")
CAUSAL_KINDS = ("none", "top_left", "bottom_right")
MASK_KINDS = ("none", "add", "bool")
BACKWARD_KINDS = ("backward_dot", "backward_kv", "backward_q")

# The ops need a static head count; the kernels read the real ones at run
# time, so any count serves. 16 is examples/gpu's, which the GPU tests run.
_HEADS = 16

_FORWARD = """\
// attn kernels for {spec}
func.func @forward(%q: {qk}, %k: {qk}, %v: {vo}{mask_arg}{mod_args}) -> ({vo}, {lse}) {{
  %o, %lse = attn.attention %q, %k, %v{mask_use}{mod_use}{attrs} : {qk}, {qk}, {vo} -> {vo}, {lse}{regions}
  return %o, %lse : {vo}, {lse}
}}
"""
_BACKWARD = """\
func.func @backward(%q: {qk}, %k: {qk}, %v: {vo}, %o: {vo}, %do: {vo}, %lse: {lse}{mask_arg}{mod_args}) -> ({qk}, {qk}, {vo}) {{
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse{mask_use}{mod_use}{attrs} : {qk}, {qk}, {vo}, {vo}, {vo}, {lse} -> {qk}, {qk}, {vo}{regions}
  return %dq, %dk, %dv : {qk}, {qk}, {vo}
}}
"""


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    """dtype 'bf16', 'f16' or 'f32'; head_dim D of q and k, value_dim Dv of v;
    causal 'none', 'top_left' (PyTorch's is_causal) or 'bottom_right';
    mask 'none', 'add' (a floating mask of the dtype) or 'bool'; backward:
    the backward's kernels too (training); atomic_dq (with backward): those
    of the atomic dQ mode (attn-compile --atomic-dq, manifest dq=atomic:
    dq not bitwise reproducible) instead of the deterministic ones; tf32
    (with dtype 'f32'): kernels of one TF32 product a step (attn-compile
    --tf32, manifest f32=tf32) instead of 3xTF32's three; mod:
    None or an attn.mods.Modification, whose kernels (manifest
    mod=<its name>, and mod_operands= for the tensors it reads) are the
    spec's; the spec needs only its regions (Modification.signature()),
    not its tensors."""

    dtype: str
    head_dim: int
    value_dim: int
    causal: str = "none"
    mask: str = "none"
    backward: bool = False
    atomic_dq: bool = False
    mod: object = None
    tf32: bool = False

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError("the front door's kernels take %s and %s, not %r"
                             % (", ".join(DTYPES[:-1]), DTYPES[-1],
                                self.dtype))
        for name in ("head_dim", "value_dim"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError("%s must be a positive int, not %r"
                                 % (name, value))
        if self.causal not in CAUSAL_KINDS:
            raise ValueError("causal must be one of %s, not %r"
                             % (", ".join(CAUSAL_KINDS), self.causal))
        if self.mask not in MASK_KINDS:
            raise ValueError("mask must be one of %s, not %r"
                             % (", ".join(MASK_KINDS), self.mask))
        if self.mod is not None and not all(
                hasattr(self.mod, a) for a in (
                    "name", "hash", "text", "operand_mlir_types",
                    "manifest_operands")):
            raise ValueError("mod must be None or an attn.mods.Modification,"
                             " not %r" % (self.mod,))
        if self.tf32 and self.dtype != "f32":
            raise ValueError("tf32 is a mode of the f32 kernels' products: "
                             "it needs dtype 'f32', not %r" % (self.dtype,))
        if self.atomic_dq and not self.backward:
            raise ValueError("atomic_dq is a mode of the backward's kernels: "
                             "it needs backward=True")

    @property
    def kinds(self):
        """The manifest kinds a module must have for this spec."""
        return ("forward",) + (BACKWARD_KINDS if self.backward else ())

    @property
    def key(self):
        """A file name: bf16_d64_dv64_top_left_mask-bool_train, with
        _atomicdq after it for the atomic dQ mode's kernels and _tf32 for
        TF32 products, so that two sets never share a cache entry, and
        _mod-<name>-<12 hex digits of
        the regions' sha256> for a modification's (names may be the user's:
        two modifications of one name never share an entry either)."""
        return "%s_d%d_dv%d_%s_mask-%s_%s%s%s%s" % (
            self.dtype, self.head_dim, self.value_dim, self.causal, self.mask,
            "train" if self.backward else "fwd",
            "_atomicdq" if self.atomic_dq else "",
            "_tf32" if self.tf32 else "",
            "" if self.mod is None else "_mod-%s-%s" % (self.mod.name,
                                                        self.mod.hash[:12]))

    def describe(self):
        """As the runtime's messages name a kernel: bf16 d64/64
        causal=top_left mask=bool (dq=atomic for the atomic dQ mode,
        f32=tf32 for TF32 products, mod=NAME
        for a modification's, mod_operands=i64:1,... for the tensors it
        reads), and which kinds."""
        operands = self.mod_operands()
        return "%s d%d/%d causal=%s mask=%s%s%s%s%s (%s)" % (
            self.dtype, self.head_dim, self.value_dim, self.causal, self.mask,
            " dq=atomic" if self.atomic_dq else "",
            " f32=tf32" if self.tf32 else "",
            "" if self.mod is None else " mod=" + self.mod.name,
            "" if operands is None else " mod_operands=" + operands,
            ", ".join(self.kinds))

    def mod_operands(self):
        """The manifest's mod_operands= of the spec's kernels (i64:1,f32:2:
        element type and rank of each tensor the modification reads), None
        when they read none."""
        if self.mod is None:
            return None
        return self.mod.manifest_operands()

    def deterministic(self):
        """This spec with the deterministic backward (itself when it has
        it)."""
        return dataclasses.replace(self, atomic_dq=False)

    def fallback(self):
        """The spec whose kernels serve this one's calls where nothing
        supplies its own, and what that gives up, or (None, None): the
        atomic dQ mode and TF32 products are permissions, whose calls the
        deterministic backward and 3xTF32 products serve too."""
        if self.atomic_dq:
            return self.deterministic(), "atomic-dQ"
        if self.tf32:
            return dataclasses.replace(self, tf32=False), "f32=tf32"
        return None, None

    def compile_flags(self):
        """attn-compile's options beyond --chip for this spec's kernels:
        --atomic-dq emits the backward's atomic dQ kernels instead of the
        deterministic ones, --tf32 one TF32 product a step (the MLIR is the
        same)."""
        return (["--atomic-dq"] if self.atomic_dq else []) + (
            ["--tf32"] if self.tf32 else [])

    def mlir(self):
        """A module with the attn ops whose kernels this spec needs:
        attn.attention (@forward) and, for training, attn.attention_grad
        (@backward), in examples/gpu's form; with a modification, both
        carry its regions and mod_name, and the tensors it reads are
        arguments %m0, %m1... of both functions and the ops'
        mod_operands."""
        qk = "tensor<?x%dx?x%dx%s>" % (_HEADS, self.head_dim, self.dtype)
        vo = "tensor<?x%dx?x%dx%s>" % (_HEADS, self.value_dim, self.dtype)
        lse = "tensor<?x%dx?xf32>" % _HEADS
        mask_arg = mask_use = ""
        if self.mask != "none":
            element = self.dtype if self.mask == "add" else "i1"
            mask_type = "tensor<?x%dx?x?x%s>" % (_HEADS, element)
            mask_arg = ", %m: " + mask_type
            mask_use = " mask(%m : " + mask_type + ")"
        attrs = [] if self.causal == "none" else [
            "causal = #attn.causal<%s>" % self.causal]
        regions = mod_args = mod_use = ""
        types = [] if self.mod is None else self.mod.operand_mlir_types()
        if types:
            names = ["%%m%d" % n for n in range(len(types))]
            mod_args = "".join(", %s: %s" % a for a in zip(names, types))
            mod_use = " mod_operands(%s : %s)" % (", ".join(names),
                                                  ", ".join(types))
        if self.mod is not None:
            attrs.append('mod_name = "%s"' % self.mod.name)
            regions = "".join("\n" + "\n".join("    " + line for line in
                                               self.mod.text().splitlines()))
        attrs = " {%s}" % ", ".join(attrs) if attrs else ""
        text = _FORWARD + (_BACKWARD if self.backward else "")
        return text.format(spec=self.describe(), qk=qk, vo=vo, lse=lse,
                           mask_arg=mask_arg, mask_use=mask_use,
                           mod_args=mod_args, mod_use=mod_use, attrs=attrs,
                           regions=regions)
