"""Where attn's PyTorch ops get their kernels.

For a KernelSpec on a device, a KernelProvider returns a loaded
attn_runtime.Module that has the spec's kernels, looking in order at

1. the precompiled kernel folders of $ATTN_KERNELS (os.pathsep-separated,
   each with an attn.manifest): the first whose module, as the runtime loads
   it on the device, has every kernel of the spec;
2. the disk cache, $ATTN_CACHE_DIR (default ~/.cache/attn), at
   <compiler-and-options hash>/<spec key>/attn.manifest;
3. attn-compile ($ATTN_COMPILE, or attn-compile on PATH), which compiles the
   spec's MLIR (KernelSpec.mlir) into the cache on a miss.

The cache needs the compiler: its entries are the compiler's output, keyed
by what identifies it. Without a folder that has the kernels and without the
compiler, the lookup fails with NoKernelError, which says how to get them.
Modules are kept for the life of the process.

A spec with a modification (KernelSpec.mod) wants kernels of manifest
mod=<its name> and, where it reads tensors, mod_operands=<their element
types and ranks>; a spec without one never takes such a kernel. Its cache
entry's key has the name and a hash of the regions (whose text has the
tensors' types), so that two modifications of one name never share an
entry (in an ATTN_KERNELS folder, the name and the tensors' types pick the
kernels).

A spec of the atomic dQ mode (KernelSpec.atomic_dq) wants backward kernels
with manifest dq=atomic, which attn-compile --atomic-dq emits; its cache
entry is its own (the spec key ends in _atomicdq). Where nothing supplies
them (no folder has them, the compiler refuses, e.g. for sm_80, whose
lowering has no atomic dQ kernels), the provider serves the spec's
deterministic kernels instead and says so once on the `attn` logger. So
does a spec of TF32 products (KernelSpec.tf32, attn-compile --tf32,
manifest f32=tf32, its entry's key ending in _tf32): where nothing supplies
them, its 3xTF32 kernels serve it.

The runtime library is attn_runtime's: $ATTN_RUNTIME_LIB, or build-rt/lib
or build/lib of this repository.

Nothing here imports torch until a module is loaded onto a device.
"""

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time

import attn_runtime


__all__ = ["Compiler", "KernelProvider", "NoKernelError", "chip_for",
           "default_provider"]

log = logging.getLogger("attn")

_MANIFEST = "attn.manifest"
# Part of the cache key: bump it when KernelSpec.mlir writes other IR for
# the same spec, so that no entry compiled from the old text is reused.
_MLIR_REVISION = 1


class NoKernelError(RuntimeError):
    """No kernel folder, cache entry or compiler supplies a spec's kernels."""


def chip_for(capability):
    """attn-compile's --chip for a device of this compute capability: the
    sm_90a kernels (wgmma, TMA) run only on sm_90; the others are sm_80's
    mapping (mma.sync), each chip's fitting its shared memory per block:
    sm_80 and sm_87 163 KiB, sm_86 and sm_89 99 KiB. Later chips take the
    kernels of the last chip named here with as much: sm_90's (227 KiB)
    on 10.x and 11.x, sm_89's (99 KiB) on 12.x and later."""
    major, minor = capability
    if (major, minor) == (9, 0):
        return "sm_90a"
    if major == 8:
        return {0: "sm_80", 6: "sm_86", 7: "sm_87"}.get(minor, "sm_89")
    if major in (10, 11):
        return "sm_90"
    if major >= 12:
        return "sm_89"
    raise RuntimeError("attn's kernels need a GPU of compute capability 8.0 "
                       "or later (bf16 tensor cores); this one is %d.%d"
                       % (major, minor))


class Compiler:
    """attn-compile, and what identifies its output for the cache."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self._identity = None

    @classmethod
    def find(cls):
        """$ATTN_COMPILE, else attn-compile on PATH, else None."""
        path = os.environ.get("ATTN_COMPILE")
        if path:
            if not os.access(path, os.X_OK):
                raise RuntimeError("ATTN_COMPILE=%s is not an executable: "
                                   "point it at attn's attn-compile (in "
                                   "build/bin) or unset it" % path)
            return cls(path)
        path = shutil.which("attn-compile")
        return cls(path) if path else None

    def identity(self):
        """A digest of the binary and its --version. attn-compile's
        --version is LLVM's and names no attn revision, so the binary's own
        bytes tell one build from another."""
        if self._identity is None:
            digest = hashlib.sha256()
            with open(self.path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            version = subprocess.run([self.path, "--version"],
                                     capture_output=True, text=True).stdout
            digest.update(version.encode())
            self._identity = digest.hexdigest()
        return self._identity

    def cache_key(self, chip):
        """The cache folder of this compiler's output with these options."""
        text = "%s\n--chip=%s\nmlir-revision=%d" % (self.identity(), chip,
                                                    _MLIR_REVISION)
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def compile(self, spec, chip, out_dir):
        """Writes the spec's MLIR into out_dir and compiles it there."""
        with open(os.path.join(out_dir, "kernels.mlir"), "w") as f:
            f.write(spec.mlir())
        # Run in out_dir, so that diagnostics name kernels.mlir and not a
        # temporary folder that is gone by the time they are read.
        result = subprocess.run(
            [self.path, "kernels.mlir", "-o", ".", "--chip=" + chip]
            + spec.compile_flags(),
            capture_output=True, text=True, cwd=out_dir)
        if result.returncode != 0:
            raise NoKernelError(
                "attn-compile (%s) could not compile the kernels for %s "
                "(exit status %d):\n%s"
                % (self.path, spec.describe(), result.returncode,
                   result.stderr.strip()))


class KernelProvider:
    """Finds, compiles and loads the modules of KernelSpecs (module()):
    kernel_dirs are looked at first, then the cache in cache_dir, which
    `compiler` (a Compiler; None: none) fills; lib is the runtime library
    (None: attn_runtime's default). from_env() reads them from the
    environment."""

    def __init__(self, kernel_dirs=(), cache_dir=None, compiler=None,
                 lib=None):
        self.kernel_dirs = [os.path.abspath(d) for d in kernel_dirs]
        self.cache_dir = os.path.abspath(cache_dir or _default_cache_dir())
        self.compiler = compiler
        self.lib = lib
        self._lock = threading.Lock()
        self._modules = {}  # (spec, device): the module that serves it
        self._loaded = {}   # (manifest, device): every module loaded
        self._load_s = {}   # (manifest, device): seconds its load took
        self._records = []

    @classmethod
    def from_env(cls):
        """$ATTN_KERNELS, $ATTN_CACHE_DIR, $ATTN_COMPILE (or attn-compile on
        PATH) and $ATTN_RUNTIME_LIB."""
        dirs = [d for d in os.environ.get("ATTN_KERNELS", "").split(
            os.pathsep) if d]
        return cls(dirs, os.environ.get("ATTN_CACHE_DIR"), Compiler.find(),
                   os.environ.get("ATTN_RUNTIME_LIB"))

    def module(self, spec, device):
        """The loaded module with every kernel of `spec` (KernelSpec.kinds)
        on `device` (a torch.device); NoKernelError when nothing supplies
        them. For a spec of the atomic dQ mode, the module of its
        deterministic kernels when nothing supplies the atomic ones (the
        runtime then runs those: Module.backward(..., atomic_dq=True) takes
        the atomic kernels only where the module has them), and for one of
        TF32 products the module of its 3xTF32 kernels (KernelSpec.fallback;
        with Module.allow_tf32 set the runtime takes f32=tf32 kernels where
        the module has them, 3xTF32 ones elsewhere)."""
        with self._lock:
            module = self._modules.get((spec, str(device)))
            if module is None:
                module = self._find_or_fall_back(spec, device)
                self._modules[(spec, str(device))] = module
            return module

    def info(self):
        """Where the kernels come from and what each spec used: its source
        ('ATTN_KERNELS', 'cache' or 'compiled'), manifest, and the seconds
        of a cold compile (None when there was none) and of loading the
        manifest onto the device (JIT of its PTX included; shared by the
        specs one manifest serves)."""
        return {
            "kernel_dirs": list(self.kernel_dirs),
            "cache_dir": self.cache_dir,
            "compiler": self.compiler.path if self.compiler else None,
            "modules": [dict(r) for r in self._records],
        }

    def _find_or_fall_back(self, spec, device):
        try:
            return self._find(spec, device)
        except NoKernelError as e:
            fallback, missing = spec.fallback()
            if fallback is None:
                raise
            reason = e
        module = self._modules.get((fallback, str(device)))
        if module is None:
            module = self._find_or_fall_back(fallback, device)
            self._modules[(fallback, str(device))] = module
        if missing == "atomic-dQ":
            log.warning("attn: no atomic-dQ kernels for %s on %s; using the "
                        "deterministic backward (attn.set_atomic_dq has no "
                        "effect for it)", spec.describe(), device)
            source = "deterministic fallback"
        else:
            log.warning("attn: no f32=tf32 kernels for %s on %s; using the "
                        "3xTF32 ones (f32's accuracy: torch's TF32 setting "
                        "has no effect for them)", spec.describe(), device)
            source = "3xTF32 fallback"
        log.debug("attn: why: %s", reason)
        self._record(spec, device, source,
                     getattr(module, "manifest_path", None))
        return module

    def _find(self, spec, device):
        tried = [] if self.kernel_dirs else ["ATTN_KERNELS: not set"]
        for directory in self.kernel_dirs:
            module = self._from_dir(spec, device, directory, tried)
            if module is not None:
                return module
        if self.compiler is None:
            tried.append("attn-compile: not found ($ATTN_COMPILE unset, "
                         "none on PATH), so no cache and no compilation")
            raise NoKernelError(_no_kernel_message(spec, device, tried))
        return self._from_cache(spec, device)

    def _from_dir(self, spec, device, directory, tried):
        manifest = os.path.join(directory, _MANIFEST)
        if not os.path.isfile(manifest):
            tried.append("%s: no %s" % (directory, _MANIFEST))
            return None
        # The manifest's text first: a folder without the kernels in any
        # section is never loaded onto the device.
        if not any(_has_kinds(s["kernels"], spec)
                   for s in attn_runtime.manifest_sections(manifest)):
            tried.append("%s: no section has them" % directory)
            return None
        try:
            module = self._module_at(manifest, device)
        except attn_runtime.AttnError as e:
            tried.append("%s: %s" % (directory, e))
            return None
        # Only the section that the runtime chose for the device counts.
        if not all(_has_kernel(module, kind, spec) for kind in spec.kinds):
            tried.append("%s: the section for %s (%s) lacks some"
                         % (directory, device, module.target))
            return None
        self._record(spec, device, "ATTN_KERNELS", manifest)
        return module

    def _from_cache(self, spec, device):
        chip = self._chip(device)
        entry = os.path.join(self.cache_dir, self.compiler.cache_key(chip),
                             spec.key)
        manifest = os.path.join(entry, _MANIFEST)
        compile_s = None
        if not os.path.isfile(manifest):
            compile_s = self._compile(spec, chip, entry)
        module = self._module_at(manifest, device)
        self._record(spec, device,
                     "cache" if compile_s is None else "compiled",
                     manifest, compile_s)
        return module

    def _compile(self, spec, chip, entry):
        """Compiles into a temporary folder beside the entry and renames it
        into place, so that a reader never sees half an entry; when another
        process got there first, its entry stays."""
        parent = os.path.dirname(entry)
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-" + spec.key + "-", dir=parent)
        started = time.perf_counter()
        try:
            self.compiler.compile(spec, chip, tmp)
            seconds = time.perf_counter() - started
            try:
                os.rename(tmp, entry)
            except OSError:
                if not os.path.isfile(os.path.join(entry, _MANIFEST)):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log.debug("attn: compiled %s for %s in %.2f s into %s",
                  spec.describe(), chip, seconds, entry)
        return seconds

    def _module_at(self, manifest, device):
        key = (manifest, str(device))
        if key not in self._loaded:
            started = time.perf_counter()
            self._loaded[key] = self._load(manifest, device)
            self._load_s[key] = time.perf_counter() - started
        return self._loaded[key]

    def _load(self, manifest, device):
        try:
            attn_runtime.load_library(self.lib)
        except OSError as e:
            raise RuntimeError(
                "cannot load attn's runtime library (%s): build it "
                "(cmake -S . -B build-rt -DATTN_BUILD_COMPILER=OFF && ninja "
                "-C build-rt) and set ATTN_RUNTIME_LIB to its "
                "libattn_runtime.so" % e) from e
        return attn_runtime.Module(manifest, lib=self.lib, device=device)

    def _chip(self, device):
        import torch
        return chip_for(torch.cuda.get_device_capability(device))

    def _record(self, spec, device, source, manifest, compile_s=None):
        self._records.append({
            "spec": spec.key, "device": str(device), "source": source,
            "manifest": manifest, "compile_s": compile_s,
            "load_s": self._load_s.get((manifest, str(device)))})
        log.debug("attn: %s on %s from %s (%s)", spec.describe(), device,
                  source, manifest)


def _default_cache_dir():
    return os.path.join(os.path.expanduser("~"), ".cache", "attn")


def _has_kinds(records, spec):
    # One dQ mode for all of a backward's kinds, as the runtime launches.
    return any(all(any(_matches(r, kind, spec, dq) for r in records)
                   for kind in spec.kinds)
               for dq in _dq_modes(spec))


def _dq_modes(spec):
    """The manifest dq= values of the backward sets that serve the spec,
    in the runtime's order of preference: dq=atomic for the atomic dQ mode;
    dq=ordered, else no key (dQ recomputed), for the deterministic one."""
    return ("atomic",) if spec.atomic_dq else ("ordered", None)


def _matches(record, kind, spec, dq=None):
    return (record.get("kind") == kind and record.get("dtype") == spec.dtype
            and record.get("head_dim") == spec.head_dim
            and record.get("value_dim") == spec.value_dim
            and record.get("causal") == spec.causal
            and record.get("mask", "none") == spec.mask
            and record.get("q") is None  # not a packed batch's kernel
            and record.get("dq") == (None if kind == "forward" else dq)
            and record.get("f32") == _f32(kind, spec)
            and record.get("mod") == _mod_name(spec)
            and record.get("mod_operands") == spec.mod_operands())


def _f32(kind, spec):
    """The manifest's f32= of the spec's `kind` kernel: 'tf32' for TF32
    products (the combine multiplies nothing), None for 3xTF32 or a 16-bit
    dtype."""
    return "tf32" if spec.tf32 and kind != "decode_combine" else None


def _mod_name(spec):
    """The manifest's mod= of the spec's kernels; None: none (a kernel
    without a modification)."""
    return None if spec.mod is None else spec.mod.name


def _has_kernel(module, kind, spec):
    dq = None
    if kind != "forward":
        # The backward set the runtime launches; with atomic_dq only the
        # atomic one (the provider falls back to the deterministic spec).
        mode = module.backward_dq_mode(
            spec.dtype, spec.head_dim, spec.value_dim, spec.causal,
            spec.mask, atomic_dq=spec.atomic_dq, mod=_mod_name(spec),
            tf32=spec.tf32)
        if mode is None or (spec.atomic_dq and mode != "atomic"):
            return False
        dq = None if mode == "recompute" else mode
    record = module.has_kernel(kind, spec.dtype, spec.head_dim,
                               spec.value_dim, spec.causal, spec.mask,
                               dq=dq, mod=_mod_name(spec), tf32=spec.tf32)
    return (record is not None
            and record.get("mod_operands") == spec.mod_operands())


def _no_kernel_message(spec, device, tried):
    return (
        "attn has no kernels for %s on %s.\n  %s\n"
        "Set ATTN_KERNELS to a folder that has them (attn-compile FILE.mlir "
        "-o DIR%s on a machine with attn's compiler; "
        "attn.spec.KernelSpec(...).mlir() writes the MLIR for this spec), or "
        "install attn-compile (on PATH, or ATTN_COMPILE=/path/to/"
        "attn-compile) to compile them on first use into the cache."
        % (spec.describe(), device, "\n  ".join(tried),
           "".join(" " + f for f in spec.compile_flags())))


_DEFAULT = None
_DEFAULT_LOCK = threading.Lock()


def default_provider():
    """The process's provider, made from the environment on first use."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = KernelProvider.from_env()
        return _DEFAULT
