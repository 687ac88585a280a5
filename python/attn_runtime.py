"""PyTorch binding of attn's runtime (include/attn-runtime/attn_runtime.h).

A ctypes wrapper over libattn_runtime.so: it describes PyTorch CUDA tensors
to the runtime by pointer, logical shape and strides (a BSHD tensor is the
same memory with its middle strides swapped, never a copy), launches on the
current PyTorch stream, and raises AttnError with the runtime's message when
a call fails.

    import torch, attn_runtime
    module = attn_runtime.Module("out/attn.manifest")
    o = module.forward(q, k, v, causal=True)              # [B, H, S, D]
    o, lse = module.forward(q, k, v, layout="bshd", return_lse=True)
    o = module.forward(q, k, v, mask=mask)                 # [Sq, Sk], bool...
    o = module.decode(q, k_cache, v_cache)                # split-KV decode
    o = module.decode_paged(q, k_pages, v_pages, block_table, kv_lens,
                            kv_layout="bshd")             # vLLM's paged cache
    o = module.forward_varlen(q, k, v, cu_seqlens_q,      # [T, H, D] each
                              key_offsets=cu_seqlens_k, causal="bottom_right")
    o = module.forward_varlen(q, k_pages, v_pages, cu_seqlens_q,
                              kv_lens=lens, block_table=table)  # chunked
    dq, dk, dv = module.backward(q, k, v, o, do, lse)     # gradients
    dq, dk, dv = module.backward(q, k, v, o, do, lse,     # atomic dQ mode
                                 atomic_dq=True)          # where it has one
    o = module.forward(q, k, v, mod="softcap")            # kernels of mod=
    o = module.forward(q, k, v, mod="docmask",            # the tensors it
                       mod_operands=[doc_ids])            # reads
    o = module.forward(q, k, v, block_mask=bm)            # kernels of blocks=

The library is found through `lib=`, $ATTN_RUNTIME_LIB, build-rt/lib or
build/lib next to this file's repository, or the loader's search path.
"""

import ctypes
import math
import os

__all__ = ["AttnError", "Module", "load_library", "manifest_sections",
           "parse_manifest"]

ATTN_OK = 0
STATUS_NAMES = {
    0: "ATTN_OK",
    1: "ATTN_ERROR_INVALID_ARGUMENT",
    2: "ATTN_ERROR_SHAPE",
    3: "ATTN_ERROR_STRIDE",
    4: "ATTN_ERROR_ALIGNMENT",
    5: "ATTN_ERROR_DTYPE",
    6: "ATTN_ERROR_MANIFEST",
    7: "ATTN_ERROR_NO_KERNEL",
    8: "ATTN_ERROR_CUDA",
}
_DTYPE_CODES = {"f32": 0, "f16": 1, "bf16": 2}
ATTN_BOOL = 3  # boolean masks (and mod operands): 1 byte, nonzero = keep
ATTN_I32 = 4  # offsets, kv_lens, block_table and mod operands
ATTN_I64 = 5  # mod operands only
_CAUSAL_CODES = {"none": 0, "top_left": 1, "bottom_right": 2}


class AttnError(RuntimeError):
    """A runtime call failed; `status` is the attn_status, `message` the
    runtime's attn_last_error()."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = STATUS_NAMES.get(status, "ATTN_ERROR_%d" % status)
        self.message = message
        super().__init__("%s: %s" % (self.status_name, message))


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * 4),
        ("strides", ctypes.c_int64 * 4),
    ]


_TENSOR_P = ctypes.POINTER(_Tensor)


class _BlockMask(ctypes.Structure):
    _fields_ = [
        ("block_q", ctypes.c_int64),
        ("block_k", ctypes.c_int64),
        ("kv_counts", _Tensor),  # i32 [B, Hq, QB]
        ("kv_indices", _Tensor),  # i32 [B, Hq, QB, N]
        ("full_kv_counts", _Tensor),
        ("full_kv_indices", _Tensor),
        ("q_counts", _Tensor),  # attn_backward only: i32 [B, Hq, KB]
        ("q_indices", _Tensor),  # i32 [B, Hq, KB, M]
        ("full_q_counts", _Tensor),
        ("full_q_indices", _Tensor),
    ]


class _Options(ctypes.Structure):
    _fields_ = [
        ("scale", ctypes.c_float),
        ("causal", ctypes.c_int),
        ("window", ctypes.c_int64),
        ("mask", _TENSOR_P),  # NULL: none
        ("atomic_dq", ctypes.c_int32),  # attn_backward: dq=atomic kernels
        ("mod", ctypes.c_char_p),  # NULL or b"": no modification
        ("block_mask", ctypes.POINTER(_BlockMask)),  # NULL: none
        ("mod_operands", _TENSOR_P),  # NULL: none; else num_mod_operands
        ("num_mod_operands", ctypes.c_int64),  # 0 to 16
        ("allow_tf32", ctypes.c_int32),  # f32: f32=tf32 kernels allowed
    ]


_OPTIONS_P = ctypes.POINTER(_Options)

# Manifest keys whose values stay strings even when they are all digits: a
# modification's name and its hash, and the tensors it reads ("i64:1,f32:2").
_STRING_KEYS = ("mod", "mod_hash", "mod_operands")


def _set_mod(options, mod):
    """Sets options.mod from `mod`: None or "" (no modification) or the
    name of one (str, the manifest's mod=). The bytes object is kept by the
    options (ctypes keeps what a c_char_p field points to), so it lives as
    long as they do, through the call."""
    if mod is None or mod == "":
        options.mod = None
        return
    if not isinstance(mod, str):
        raise TypeError("mod must be a str (the manifest's mod= name) or "
                        "None, not %s" % type(mod).__name__)
    options.mod = mod.encode("utf-8")


def _mod_operand_codes():
    """The attn_dtype of each torch dtype a mod operand may have."""
    import torch
    return {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2,
            torch.bool: ATTN_BOOL, torch.int32: ATTN_I32,
            torch.int64: ATTN_I64}


def _describe_mod_operands(mod_operands, device):
    """The attn_tensor array of the tensors a modification reads (options
    .mod_operands): a sequence of torch tensors on `device` of rank 0 to 4,
    each described as it is (any strides; a dim of size 1 goes to the
    kernels with stride 0 whatever its stride). None for no tensors. What
    the kernels expect (the count, each dtype and rank) is the runtime's to
    check, against the manifest's mod_operands."""
    import torch
    if mod_operands is None:
        return None
    if isinstance(mod_operands, torch.Tensor) or \
            not isinstance(mod_operands, (list, tuple)):
        raise TypeError("mod_operands must be a list or tuple of torch "
                        "tensors (the tensors the modification reads, in "
                        "the order of the manifest's mod_operands=), not %s"
                        % type(mod_operands).__name__)
    if not mod_operands:
        return None
    codes = _mod_operand_codes()
    array = (_Tensor * len(mod_operands))()
    for i, t in enumerate(mod_operands):
        name = "mod_operands[%d]" % i
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s must be a torch tensor, not %s"
                            % (name, type(t).__name__))
        if t.device != device:
            raise ValueError("%s is on %s, the module on %s"
                             % (name, t.device, device))
        if t.dim() > 4:
            raise ValueError("%s has shape %s: a mod operand has at most 4 "
                             "dims" % (name, tuple(t.shape)))
        if t.dtype not in codes:
            raise TypeError("%s has dtype %s; a mod operand is float32, "
                            "float16, bfloat16, bool, int32 or int64"
                            % (name, t.dtype))
        d = array[i]
        d.data = t.data_ptr() or None
        d.dtype = codes[t.dtype]
        d.rank = t.dim()
        for j in range(t.dim()):
            d.shape[j] = t.shape[j]
            d.strides[j] = t.stride(j)
    return array


def _set_mod_operands(options, mod_operands, device):
    """Sets options.mod_operands and num_mod_operands from `mod_operands`
    (_describe_mod_operands). The options keep the array (ctypes keeps what
    a pointer field was set from), so it lives through the call."""
    array = _describe_mod_operands(mod_operands, device)
    if array is None:
        options.mod_operands = None
        options.num_mod_operands = 0
        return
    options.mod_operands = array
    options.num_mod_operands = len(array)


def _default_library_paths():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [
        os.path.join(root, "build-rt", "lib", "libattn_runtime.so"),
        os.path.join(root, "build", "lib", "libattn_runtime.so"),
    ]


_LIBRARIES = {}


def load_library(path=None):
    """Opens libattn_runtime.so (once per path) and declares its functions.
    A library this returned may be passed again (Module(lib=...))."""
    if any(path is lib for lib in _LIBRARIES.values()):
        return path
    if path is None:
        path = os.environ.get("ATTN_RUNTIME_LIB")
    if path is None:
        path = next((p for p in _default_library_paths() if os.path.exists(p)),
                    "libattn_runtime.so")
    if path in _LIBRARIES:
        return _LIBRARIES[path]
    lib = ctypes.CDLL(path)
    lib.attn_module_load.argtypes = [ctypes.c_char_p,
                                     ctypes.POINTER(ctypes.c_void_p)]
    lib.attn_module_load.restype = ctypes.c_int
    lib.attn_module_destroy.argtypes = [ctypes.c_void_p]
    lib.attn_module_destroy.restype = None
    lib.attn_module_target.argtypes = [ctypes.c_void_p]
    lib.attn_module_target.restype = ctypes.c_char_p
    lib.attn_last_error.argtypes = []
    lib.attn_last_error.restype = ctypes.c_char_p
    lib.attn_forward.argtypes = [ctypes.c_void_p, _TENSOR_P, _TENSOR_P,
                                 _TENSOR_P, _TENSOR_P, _TENSOR_P, _OPTIONS_P,
                                 ctypes.c_void_p]
    lib.attn_forward.restype = ctypes.c_int
    lib.attn_forward_varlen.argtypes = [ctypes.c_void_p] + [_TENSOR_P] * 9 + [
        ctypes.c_int64, _OPTIONS_P, ctypes.c_void_p]
    lib.attn_forward_varlen.restype = ctypes.c_int
    lib.attn_decode_workspace_size.argtypes = [_TENSOR_P, _TENSOR_P,
                                               ctypes.c_int64]
    lib.attn_decode_workspace_size.restype = ctypes.c_int64
    lib.attn_decode.argtypes = [ctypes.c_void_p, _TENSOR_P, _TENSOR_P,
                                _TENSOR_P, _TENSOR_P, _TENSOR_P, _OPTIONS_P,
                                ctypes.c_int64, ctypes.c_void_p,
                                ctypes.c_int64, ctypes.c_void_p]
    lib.attn_decode.restype = ctypes.c_int
    lib.attn_decode_splits.argtypes = [ctypes.c_void_p, _TENSOR_P, _TENSOR_P,
                                       _TENSOR_P, _OPTIONS_P, ctypes.c_int64,
                                       ctypes.POINTER(ctypes.c_int64)]
    lib.attn_decode_splits.restype = ctypes.c_int
    lib.attn_decode_paged.argtypes = [ctypes.c_void_p] + [_TENSOR_P] * 7 + [
        _OPTIONS_P, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
        ctypes.c_void_p]
    lib.attn_decode_paged.restype = ctypes.c_int
    lib.attn_decode_paged_splits.argtypes = [ctypes.c_void_p] + [
        _TENSOR_P] * 5 + [_OPTIONS_P, ctypes.c_int64,
                          ctypes.POINTER(ctypes.c_int64)]
    lib.attn_decode_paged_splits.restype = ctypes.c_int
    lib.attn_backward_workspace_size.argtypes = [_TENSOR_P]
    lib.attn_backward_workspace_size.restype = ctypes.c_int64
    lib.attn_backward_atomic_workspace_size.argtypes = [_TENSOR_P]
    lib.attn_backward_atomic_workspace_size.restype = ctypes.c_int64
    lib.attn_backward.argtypes = [ctypes.c_void_p] + [_TENSOR_P] * 9 + [
        _OPTIONS_P, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
    lib.attn_backward.restype = ctypes.c_int
    _LIBRARIES[path] = lib
    return lib


def manifest_sections(path):
    """The manifest's sections, in order, as dicts {'target', 'ptx',
    'kernels'}: one per chip, each kernel record a dict ({'name', 'kind',
    'dtype', 'head_dim', ...}, numbers as ints; 'mod' and 'mod_hash', a
    modification's name and hash, and 'mod_operands', the tensors it reads
    as written, 'i64:1,f32:2', always strings). The runtime's parser is
    the strict one; this only lets callers ask what a manifest has."""
    sections = []
    with open(path) as f:
        for line in f:
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            if tokens[0] == "target" and len(tokens) > 1:
                sections.append({"target": tokens[1], "ptx": None,
                                 "kernels": []})
            if not sections:
                continue
            if tokens[0] == "ptx" and len(tokens) > 1:
                sections[-1]["ptx"] = tokens[1]
            if tokens[0] != "kernel" or len(tokens) < 2:
                continue
            record = {"name": tokens[1]}
            for token in tokens[2:]:
                key, _, value = token.partition("=")
                record[key] = int(value) if value.isdigit() and \
                    key not in _STRING_KEYS else value
            sections[-1]["kernels"].append(record)
    return sections


def parse_manifest(path, target=None):
    """The kernel records of one section of the manifest (dicts, as in
    manifest_sections()) and its target: the section of `target` ('sm_80'),
    or with target=None the only one. A loaded Module knows which section
    the runtime chose for its device (Module.target, Module.kernels)."""
    sections = manifest_sections(path)
    targets = [s["target"] for s in sections]
    if target is None:
        if len(sections) != 1:
            raise ValueError(
                "%s has %s: pass target= (Module.target is the one the "
                "runtime loads on the device)"
                % (path, "sections for " + ", ".join(targets) if sections
                   else "no 'target' record"))
        target = targets[0]
    for s in sections:
        if s["target"] == target:
            return s["kernels"], target
    raise ValueError("%s has no section for target %s (it has: %s)"
                     % (path, target, ", ".join(targets) or "none"))


def _dtype_name(torch_dtype):
    import torch
    return {torch.float32: "f32", torch.float16: "f16",
            torch.bfloat16: "bf16"}.get(torch_dtype)


def _causal_name(causal):
    if causal is None or causal is False:
        return "none"
    if causal is True:
        return "top_left"  # PyTorch's is_causal
    if causal in _CAUSAL_CODES:
        return causal
    raise ValueError("causal must be False, True, 'none', 'top_left' or "
                     "'bottom_right', not %r" % (causal,))


def _logical(shape, layout):
    """Logical [B, H, S, D] from a tensor's own order."""
    if layout == "bshd":
        return [shape[0], shape[2], shape[1], shape[3]]
    return list(shape)


def _describe(t, name, layout, dims=None):
    """The attn_tensor of a 4-dim tensor in `layout` order; `dims` names
    that order in messages (default: the layout, 'BSHD')."""
    if not t.is_cuda:
        raise ValueError("%s must be a CUDA tensor" % name)
    if t.dim() != 4:
        raise ValueError("%s must have 4 dims (%s), not shape %s"
                         % (name, dims or layout.upper(), tuple(t.shape)))
    dtype = _dtype_name(t.dtype)
    if dtype is None:
        raise TypeError("%s has dtype %s; attn takes float32, float16, "
                        "bfloat16" % (name, t.dtype))
    d = _Tensor()
    d.data = t.data_ptr() or None
    d.dtype = _DTYPE_CODES[dtype]
    d.rank = 4
    shape = _logical(list(t.shape), layout)
    strides = _logical(list(t.stride()), layout)
    for i in range(4):
        d.shape[i] = shape[i]
        d.strides[i] = strides[i]
    return d


def _describe_mask(mask, q, k, layout):
    """The attn_tensor of a mask that broadcasts to the logical
    [B, Hq, Sq, Sk] (numpy rules, right-aligned: [Sq, Sk], [B, 1, 1, Sk]...):
    leading dims of size 1 are added by indexing (a view, never a copy), a
    dim of size 1 goes out with stride 0. Shapes that do not broadcast are
    left to the runtime, which says which dim is wrong."""
    import torch
    if not isinstance(mask, torch.Tensor):
        raise TypeError("mask must be a torch tensor (floating: added to the "
                        "scores; torch.bool: True keeps a key), not %s"
                        % type(mask).__name__)
    if mask.device != q.device:
        raise ValueError("mask is on %s, q on %s" % (mask.device, q.device))
    if mask.dtype == torch.bool:
        code = ATTN_BOOL  # torch.bool is one byte, 0 or 1
    elif mask.is_floating_point():
        if mask.dtype != q.dtype:
            raise TypeError(
                "an additive (floating) mask must have q's dtype %s, not %s: "
                "use mask.to(q.dtype), or a torch.bool mask (True = keep)"
                % (q.dtype, mask.dtype))
        code = _DTYPE_CODES[_dtype_name(q.dtype)]
    else:
        raise TypeError("mask has dtype %s; attn takes a floating mask of q's "
                        "dtype (added to the scores) or a torch.bool mask "
                        "(True = keep)" % mask.dtype)
    if mask.dim() > 4:
        raise ValueError("mask has shape %s: at most 4 dims, broadcasting to "
                         "[B, Hq, Sq, Sk] = %s" % (
                             tuple(mask.shape),
                             _full_mask_shape(q, k, layout)))
    view = mask[(None,) * (4 - mask.dim())]
    d = _Tensor()
    d.data = view.data_ptr() or None
    d.dtype = code
    d.rank = 4
    for i in range(4):
        d.shape[i] = view.shape[i]
        d.strides[i] = 0 if view.shape[i] == 1 else view.stride(i)
    return d


def _full_mask_shape(q, k, layout):
    b, hq, sq, _ = _logical(list(q.shape), layout)
    return [b, hq, sq, _logical(list(k.shape), layout)[2]]


# The storage order of decode_paged's page pools for each kv_layout: the
# logical [P, Hkv, page_size, D] is 'bhsd' with P in B's place.
_POOL_DIMS = {"bhsd": "[P, Hkv, page_size, D]",
              "bshd": "[P, page_size, Hkv, D]"}


def _describe_index(t, name, dims):
    """The attn_tensor of an index tensor: a block_table ([B, max_pages]),
    kv_lens ([B]) or offsets ([B + 1]), a torch.int32 CUDA tensor, described
    as it is (its strides included; the runtime wants the last dim
    contiguous)."""
    import torch
    if not t.is_cuda:
        raise ValueError("%s must be a CUDA tensor" % name)
    rank = len(dims)
    if t.dim() != rank:
        raise ValueError("%s must have %d dim%s [%s], not shape %s"
                         % (name, rank, "s" if rank > 1 else "",
                            ", ".join(dims), tuple(t.shape)))
    if t.dtype != torch.int32:
        raise TypeError("%s has dtype %s; attn takes torch.int32 (%s.int())"
                        % (name, t.dtype, name))
    d = _Tensor()
    d.data = t.data_ptr() or None
    d.dtype = ATTN_I32
    d.rank = rank
    for i in range(rank):
        d.shape[i] = t.shape[i]
        d.strides[i] = t.stride(i)
    return d


# A block mask's lists, as attn_block_mask has them (and in its order), and
# their logical dims: the forward takes the kv_* ones, the backward all.
_BLOCK_LISTS = (
    ("kv_counts", ("B", "Hq", "QB")),
    ("kv_indices", ("B", "Hq", "QB", "N")),
    ("full_kv_counts", ("B", "Hq", "QB")),
    ("full_kv_indices", ("B", "Hq", "QB", "N2")),
    ("q_counts", ("B", "Hq", "KB")),
    ("q_indices", ("B", "Hq", "KB", "M")),
    ("full_q_counts", ("B", "Hq", "KB")),
    ("full_q_indices", ("B", "Hq", "KB", "M2")),
)


def _block_sizes(block_mask):
    """(block_q, block_k) of a block mask object, as ints."""
    return int(block_mask.block_q), int(block_mask.block_k)


def _describe_block_mask(block_mask, device, backward):
    """The attn_block_mask of `block_mask`: an object with block_q, block_k
    and the lists kv_counts, kv_indices, full_kv_counts, full_kv_indices
    (and, for the backward, q_counts, q_indices, full_q_counts,
    full_q_indices), each a torch.int32 CUDA tensor in logical order
    ([B, Hq, QB], [B, Hq, QB, N]...; B and Hq may be 1), described as it
    is. The forward leaves the q_* lists out (null)."""
    d = _BlockMask()
    d.block_q, d.block_k = _block_sizes(block_mask)
    lists = _BLOCK_LISTS if backward else _BLOCK_LISTS[:4]
    for name, dims in lists:
        t = getattr(block_mask, name, None)
        if t is None:
            raise ValueError(
                "block_mask.%s is missing: %s takes %s" % (
                    name, "backward()" if backward else "forward()",
                    "all eight lists (kv_* and q_*)" if backward
                    else "kv_counts, kv_indices, full_kv_counts and "
                         "full_kv_indices"))
        if t.device != device:
            raise ValueError("block_mask.%s is on %s, the module on %s"
                             % (name, t.device, device))
        setattr(d, name, _describe_index(t, "block_mask." + name, dims))
    return d


def _describe_packed(t, name, layout, what):
    """The attn_tensor [1, H, T, D] of a packed batch's tensor: 3 dims in
    `layout` order without the leading 1 ([T, H, D], FlashAttention's
    varlen convention, or [H, T, D]), or 4 dims with it. `what` names the
    dims ('T, Hq, D') in messages."""
    if t.dim() == 4:
        return _describe(t, name, layout, "[1, %s]" % what)
    if not t.is_cuda:
        raise ValueError("%s must be a CUDA tensor" % name)
    if t.dim() != 3:
        raise ValueError("%s must have 3 dims [%s] or 4 [1, %s], not shape %s"
                         % (name, what, what, tuple(t.shape)))
    dtype = _dtype_name(t.dtype)
    if dtype is None:
        raise TypeError("%s has dtype %s; attn takes float32, float16, "
                        "bfloat16" % (name, t.dtype))
    shape, strides = list(t.shape), list(t.stride())
    # The leading 1 steps as unsqueeze(0) would make it: over everything.
    d = _Tensor()
    d.data = t.data_ptr() or None
    d.dtype = _DTYPE_CODES[dtype]
    d.rank = 4
    shape = [1] + _logical([1] + shape, layout)[1:]
    strides = [t.shape[0] * strides[0]] + _logical([0] + strides, layout)[1:]
    for i in range(4):
        d.shape[i] = shape[i]
        d.strides[i] = strides[i]
    return d


def _describe_lse(t, packed=False):
    """The attn_tensor of an LSE: [B, Hq, Sq], or for a packed batch
    [1, Hq, T] or [Hq, T] (FlashAttention's varlen softmax_lse; its leading
    1 steps as unsqueeze(0) would make it)."""
    shape, strides = list(t.shape), list(t.stride())
    if packed and t.dim() == 2:
        shape, strides = [1] + shape, [shape[0] * strides[0]] + strides
    if not t.is_cuda or len(shape) != 3:
        raise ValueError("lse must be a %s CUDA tensor"
                         % ("[Hq, T] or [1, Hq, T]" if packed
                            else "3-dim [B, Hq, Sq]"))
    dtype = _dtype_name(t.dtype)
    if dtype is None:
        raise TypeError("lse has dtype %s; it must be float32" % t.dtype)
    d = _Tensor()
    d.data = t.data_ptr() or None
    d.dtype = _DTYPE_CODES[dtype]  # the runtime rejects all but f32
    d.rank = 3
    for i in range(3):
        d.shape[i] = shape[i]
        d.strides[i] = strides[i]
    return d


class Module:
    """A manifest and its PTX, loaded into the context of a CUDA device.

    `target` is the section of the manifest that the runtime chose for the
    device ('sm_90a'), `kernels` that section's kernel records (what
    has_kernel() looks at), `targets` every section's target."""

    def __init__(self, manifest_path, lib=None, device=None):
        import torch
        self._lib = load_library(lib)
        self._handle = None
        self.manifest_path = os.path.abspath(manifest_path)
        if device is None:
            device = torch.cuda.current_device()
        device = torch.device("cuda", device) if isinstance(device, int) \
            else torch.device(device)
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self.device = device
        handle = ctypes.c_void_p()
        with torch.cuda.device(self.device):
            # Makes the device's primary context current on this thread:
            # the runtime loads into the current context.
            torch.empty(1, device=self.device)
            status = self._lib.attn_module_load(
                self.manifest_path.encode(), ctypes.byref(handle))
        self._check(status)
        self._handle = handle
        # The runtime chose the section (attn_module_load); read the same.
        self.target = self._lib.attn_module_target(handle).decode()
        self.targets = [s["target"] for s in
                        manifest_sections(self.manifest_path)]
        self.kernels, _ = parse_manifest(self.manifest_path, self.target)
        # f32 calls: whether f32=tf32 kernels (attn-compile --tf32, TF32
        # products) may serve them, as torch.backends.cuda.matmul.allow_tf32
        # says for matmuls; off: the 3xTF32 kernels only.
        self.allow_tf32 = False

    def close(self):
        if self._handle:
            self._lib.attn_module_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def last_error(self):
        return self._lib.attn_last_error().decode(errors="replace")

    def _check(self, status):
        if status != ATTN_OK:
            raise AttnError(status, self.last_error())

    def has_kernel(self, kind, dtype, head_dim=None, value_dim=None,
                   causal="none", mask="none", paged=False, packed=False,
                   atomic_dq=False, mod=None, blocks=None, tf32=None,
                   dq=None):
        """The kernel record of `kind` ('forward', 'decode_partial',
        'decode_combine', 'backward_dot', 'backward_kv', 'backward_q') for
        these parameters (dtype as 'bf16'/'f16'/'f32'
        or a torch dtype; mask 'none', 'add' or 'bool'; paged: a
        decode_partial kernel for decode_paged, manifest kv=paged, rather
        than for decode; packed: a forward kernel for forward_varlen,
        manifest q=packed, with packed keys, kv=packed, or with paged=True
        on a paged cache, kv=paged; dq: a backward kernel of that dQ
        mode, 'atomic' (manifest dq=atomic) or 'ordered' (dq=ordered),
        None one that recomputes dQ (no dq key); atomic_dq=True is
        dq='atomic'; mod: a kernel of that modification, manifest mod=, None or ""
        one without; blocks: (BQ, BK), a kernel with a block mask of those
        block sizes, manifest blocks=BQxBK, None one without; tf32: True an
        f32 kernel of TF32 products, manifest f32=tf32, False one of 3xTF32
        or of a 16-bit dtype, None either) in the section the module loaded, or None: the kernels of the manifest's
        other targets do not count.
        """
        if not isinstance(dtype, str):
            dtype = _dtype_name(dtype)
        causal = _causal_name(causal)
        wanted_blocks = "%dx%d" % tuple(blocks) if blocks else None
        if dq not in (None, "atomic", "ordered"):
            raise ValueError("dq=%r: 'atomic', 'ordered' or None" % (dq,))
        wanted_dq = "atomic" if atomic_dq else dq
        for k in self.kernels:
            if k.get("kind") != kind or k.get("dtype") != dtype:
                continue
            if k.get("mask", "none") != mask:
                continue
            if k.get("dq") != wanted_dq:
                continue
            if k.get("blocks") != wanted_blocks:
                continue
            if (tf32 is not None and kind != "decode_combine"
                    and k.get("f32") != ("tf32" if tf32 else None)):
                continue
            if kind != "decode_combine" and k.get("mod") != (mod or None):
                continue
            if value_dim is not None and k.get("value_dim") != value_dim:
                continue
            if kind != "decode_combine":
                if head_dim is not None and k.get("head_dim") != head_dim:
                    continue
                if k.get("causal") != causal:
                    continue
                if k.get("q") != ("packed" if packed else None):
                    continue
                keys = "paged" if paged else "packed" if packed else None
                if k.get("kv") != keys:
                    continue
            return k
        return None

    def _prepare(self, q, k, v, causal, window, scale, layout, mask=None,
                 mod=None, block_mask=None, backward=False,
                 mod_operands=None):
        """The descriptors of q, k, v and the options (with the mask's and
        the block mask's descriptors, the latter with the q_* lists for the
        `backward`, the modification's name and the descriptors of the
        tensors it reads, which the options keep alive through their
        pointers)."""
        if layout not in ("bhsd", "bshd"):
            raise ValueError("layout must be 'bhsd' or 'bshd', not %r"
                             % (layout,))
        for name, t in (("q", q), ("k", k), ("v", v)):
            if t.device != self.device:
                raise ValueError("%s is on %s, the module on %s"
                                 % (name, t.device, self.device))
        descs = [_describe(t, n, layout) for t, n in
                 ((q, "q"), (k, "k"), (v, "v"))]
        options = _Options()
        options.allow_tf32 = int(bool(self.allow_tf32))
        options.scale = 0.0 if scale is None else float(scale)
        options.causal = _CAUSAL_CODES[_causal_name(causal)]
        options.window = -1 if window is None else int(window)
        if mask is not None:
            options.mask = ctypes.pointer(_describe_mask(mask, q, k, layout))
        if block_mask is not None:
            options.block_mask = ctypes.pointer(
                _describe_block_mask(block_mask, self.device, backward))
        _set_mod(options, mod)
        _set_mod_operands(options, mod_operands, self.device)
        return descs, options

    def _outputs(self, q, v, layout, out, lse, return_lse):
        import torch
        b, hq, sq, _ = _logical(list(q.shape), layout)
        dv = v.shape[3]
        if out is None:
            shape = (b, sq, hq, dv) if layout == "bshd" else (b, hq, sq, dv)
            out = torch.empty(shape, dtype=q.dtype, device=q.device)
        if lse is None and return_lse:
            lse = torch.empty((b, hq, sq), dtype=torch.float32,
                              device=q.device)
        out_desc = _describe(out, "out", layout)
        lse_desc = _describe_lse(lse) if lse is not None else None
        return out, lse, out_desc, lse_desc

    def forward(self, q, k, v, *, causal=False, window=None, scale=None,
                layout="bhsd", return_lse=False, out=None, lse=None,
                mask=None, mod=None, block_mask=None, mod_operands=None):
        """O = softmax(scale Q K^T + mask) V on the current stream.

        q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv] (or
        [B, S, H, D] each with layout='bshd'); causal: False, True (=
        'top_left', PyTorch's is_causal) or 'bottom_right'; window: keys
        before the causal diagonal a query may see (needs causal); scale:
        None = 1/sqrt(D). mask: None, or a tensor that broadcasts to
        [B, Hq, Sq, Sk] whatever the layout ([Sq, Sk], [B, 1, 1, Sk]...;
        never copied): floating, of q's dtype, is added to the scaled
        scores (-inf hides a key); torch.bool hides the keys where it is
        False, like SDPA's attn_mask. It needs a forward kernel built for
        that mask kind (manifest mask=add / mask=bool). A row that sees no
        key gives O = 0 and LSE = -inf. mod: None, or the name (str) of a
        score/mask modification compiled into the module's kernels
        (manifest mod=, options.mod): the call takes only that
        modification's kernels, and without it only kernels without one
        (the other calls take mod= the same way). mod_operands: None, or
        the tensors the modification reads (options.mod_operands; a list of
        at most 16 torch tensors on q's device, float32, float16, bfloat16,
        bool, int32 or int64, 0 to 4 dims, any strides, never copied), in
        the order and with the dtypes and ranks of the kernels' manifest
        mod_operands= (the runtime checks them; the kernels clamp every
        index into each tensor); the other calls that take mod= take it
        too. block_mask: None, or a
        block mask (options.block_mask, FlexAttention's BlockMask): an
        object with block_q, block_k (the kernels' manifest blocks=BQxBK)
        and kv_counts, kv_indices, full_kv_counts, full_kv_indices,
        torch.int32 [B, Hq, QB] and [B, Hq, QB, N] (B and Hq may be 1),
        QB = ceil(Sq / block_q): query block qb visits the key blocks its
        lists name and skips the others; the call takes only kernels of
        those block sizes, and without it only kernels without one
        (has_kernel(..., blocks=(block_q, block_k))). Returns O in q's
        layout, and LSE [B, Hq, Sq] f32 when return_lse (or when `lse` is
        given)."""
        import torch
        (qd, kd, vd), options = self._prepare(q, k, v, causal, window, scale,
                                              layout, mask, mod, block_mask,
                                              mod_operands=mod_operands)
        out, lse, od, ld = self._outputs(q, v, layout, out, lse, return_lse)
        stream = torch.cuda.current_stream(q.device).cuda_stream
        status = self._lib.attn_forward(
            self._handle, ctypes.byref(qd), ctypes.byref(kd),
            ctypes.byref(vd), ctypes.byref(od),
            ctypes.byref(ld) if ld is not None else None,
            ctypes.byref(options), ctypes.c_void_p(stream))
        self._check(status)
        return (out, lse) if lse is not None else out

    def decode_splits(self, q, k, v, num_splits=None, *, causal=False,
                      window=None, scale=None, layout="bhsd", mod=None,
                      mod_operands=None):
        """The split count decode() uses: num_splits None/<= 0 picks it from
        the shape and SM count; more than the key tiles is clamped."""
        (qd, kd, vd), options = self._prepare(q, k, v, causal, window, scale,
                                              layout, mod=mod,
                                              mod_operands=mod_operands)
        return self._splits(qd, kd, vd, options, int(num_splits or 0))

    def _splits(self, qd, kd, vd, options, requested):
        n = ctypes.c_int64(0)
        self._check(self._lib.attn_decode_splits(
            self._handle, ctypes.byref(qd), ctypes.byref(kd),
            ctypes.byref(vd), ctypes.byref(options), requested,
            ctypes.byref(n)))
        return n.value

    def decode_workspace(self, q, k, v, num_splits=None, *, causal=False,
                         window=None, scale=None, layout="bhsd", mod=None,
                         mod_operands=None):
        """A workspace for decode() with these arguments (a uint8 tensor on
        the current stream), to allocate once and pass as `workspace=`."""
        import torch
        (qd, kd, vd), options = self._prepare(q, k, v, causal, window, scale,
                                              layout, mod=mod,
                                              mod_operands=mod_operands)
        n = self._splits(qd, kd, vd, options, int(num_splits or 0))
        size = self._lib.attn_decode_workspace_size(ctypes.byref(qd),
                                                    ctypes.byref(vd), n)
        if size < 0:
            raise AttnError(1, self.last_error())
        return torch.empty(max(size, 1), dtype=torch.uint8, device=q.device)

    def decode(self, q, k, v, *, num_splits=None, causal=False, window=None,
               scale=None, layout="bhsd", return_lse=False, out=None,
               lse=None, workspace=None, mod=None, mod_operands=None):
        """Split-KV decode (Flash-Decoding) of q [B, Hq, Sq, D] (Sq small;
        the (Hq / Hkv) * Sq rows of a KV head go in tiles of the kernel's
        rows) against a KV cache; the
        options are forward()'s. The workspace is allocated with torch on
        the current stream unless given (a uint8 CUDA tensor)."""
        (qd, kd, vd), options = self._prepare(q, k, v, causal, window, scale,
                                              layout, mod=mod,
                                              mod_operands=mod_operands)
        out, lse, od, ld = self._outputs(q, v, layout, out, lse, return_lse)
        requested = int(num_splits or 0)
        if workspace is None:
            workspace = self.decode_workspace(q, k, v, num_splits,
                                              causal=causal, window=window,
                                              scale=scale, layout=layout,
                                              mod=mod,
                                              mod_operands=mod_operands)
        return self._launch_decode(self._lib.attn_decode, (qd, kd, vd), q,
                                   out, lse, od, ld, options, requested,
                                   workspace)

    def _launch_decode(self, function, inputs, q, out, lse, od, ld, options,
                       requested, workspace):
        """Calls attn_decode or attn_decode_paged (`function`) with the
        descriptors of its inputs, on the current stream; returns O, and
        LSE when there is one."""
        import torch
        stream = torch.cuda.current_stream(q.device).cuda_stream
        status = function(
            self._handle, *[ctypes.byref(d) for d in inputs],
            ctypes.byref(od), ctypes.byref(ld) if ld is not None else None,
            ctypes.byref(options), requested,
            ctypes.c_void_p(workspace.data_ptr()),
            workspace.numel() * workspace.element_size(),
            ctypes.c_void_p(stream))
        self._check(status)
        return (out, lse) if lse is not None else out

    def _prepare_paged(self, q, k_cache, v_cache, block_table, kv_lens,
                       causal, window, scale, layout, kv_layout, mod=None,
                       mod_operands=None):
        """The descriptors of q, the page pools, the block table and the
        lengths, and the options, for decode_paged and its helpers."""
        kv_layout = layout if kv_layout is None else kv_layout
        for name, value in (("layout", layout), ("kv_layout", kv_layout)):
            if value not in ("bhsd", "bshd"):
                raise ValueError("%s must be 'bhsd' or 'bshd', not %r"
                                 % (name, value))
        tensors = (("q", q), ("k_cache", k_cache), ("v_cache", v_cache),
                   ("block_table", block_table), ("kv_lens", kv_lens))
        for name, t in tensors:
            if t.device != self.device:
                raise ValueError("%s is on %s, the module on %s"
                                 % (name, t.device, self.device))
        pool = _POOL_DIMS[kv_layout]
        descs = [_describe(q, "q", layout),
                 _describe(k_cache, "k_cache", kv_layout, pool),
                 _describe(v_cache, "v_cache", kv_layout,
                           pool.replace("D]", "Dv]")),
                 _describe_index(block_table, "block_table",
                                 ("B", "max_pages")),
                 _describe_index(kv_lens, "kv_lens", ("B",))]
        options = _Options()
        options.allow_tf32 = int(bool(self.allow_tf32))
        options.scale = 0.0 if scale is None else float(scale)
        options.causal = _CAUSAL_CODES[_causal_name(causal)]
        options.window = -1 if window is None else int(window)
        _set_mod(options, mod)
        _set_mod_operands(options, mod_operands, self.device)
        return descs, options

    def decode_paged_splits(self, q, k_cache, v_cache, block_table, kv_lens,
                            num_splits=0, *, causal=False, window=None,
                            scale=None, layout="bhsd", kv_layout=None,
                            mod=None, mod_operands=None):
        """The split count decode_paged() uses: the paged heuristic for
        Sk = max_pages * page_size, the capacity (the lengths stay on the
        device), or the balanced kernels' (manifest splits=balanced) where
        the module has them for the call; num_splits <= 0 picks it, more
        than the key tiles is clamped."""
        descs, options = self._prepare_paged(
            q, k_cache, v_cache, block_table, kv_lens, causal, window, scale,
            layout, kv_layout, mod, mod_operands)
        return self._paged_splits(descs, options, int(num_splits or 0))

    def _paged_splits(self, descs, options, requested):
        n = ctypes.c_int64(0)
        self._check(self._lib.attn_decode_paged_splits(
            self._handle, *[ctypes.byref(d) for d in descs],
            ctypes.byref(options), requested, ctypes.byref(n)))
        return n.value

    def decode_paged_workspace(self, q, k_cache, v_cache, block_table,
                               kv_lens, num_splits=0, *, causal=False,
                               window=None, scale=None, layout="bhsd",
                               kv_layout=None, mod=None, mod_operands=None):
        """A workspace for decode_paged() with these arguments (a uint8
        tensor on the current stream), to allocate once, outside a CUDA
        graph's capture, and pass as `workspace=`. Its size depends only on
        the shapes, never on the lengths."""
        import torch
        descs, options = self._prepare_paged(
            q, k_cache, v_cache, block_table, kv_lens, causal, window, scale,
            layout, kv_layout, mod, mod_operands)
        n = self._paged_splits(descs, options, int(num_splits or 0))
        size = self._lib.attn_decode_workspace_size(
            ctypes.byref(descs[0]), ctypes.byref(descs[2]), n)
        if size < 0:
            raise AttnError(1, self.last_error())
        return torch.empty(max(size, 1), dtype=torch.uint8, device=q.device)

    def decode_paged(self, q, k_cache, v_cache, block_table, kv_lens, *,
                     num_splits=0, causal=False, window=None, scale=None,
                     layout="bhsd", kv_layout=None, return_lse=False,
                     out=None, lse=None, workspace=None, mod=None,
                     mod_operands=None):
        """Split-KV decode over a paged KV cache (vLLM's PagedAttention),
        on the current stream.

        q [B, Hq, Sq, D] (or [B, Sq, Hq, D] with layout='bshd'), as
        decode()'s. k_cache and v_cache are page pools of P pages of
        page_size keys: with kv_layout='bhsd' [P, Hkv, page_size, D]
        (FlashInfer's HND), with kv_layout='bshd' [P, page_size, Hkv, D]
        (vLLM's key_cache / value_cache, FlashInfer's NHD); kv_layout=None
        takes `layout`. Either is read in place (strides, never a copy).
        block_table is torch.int32 [B, max_pages], kv_lens torch.int32 [B]:
        sequence b's key j < kv_lens[b] is slot j % page_size of page
        block_table[b][j // page_size]. The caller guarantees those entries
        are in [0, P); lengths are clamped to [0, max_pages * page_size] on
        the device, and a sequence of length 0 gives O = 0, LSE = -inf.
        causal='bottom_right' aligns each sequence's Sq queries at its own
        end. The options are decode()'s (no mask; mod= and mod_operands= as
        forward()'s). Where the module has balanced kernels for the call
        (manifest splits=balanced), the runtime takes those: they split the
        batch's keys into work items of one size, whatever the lengths.

        The host never reads block_table or kv_lens, so a call captured in
        a CUDA graph serves every step: update the tensors in place and
        replay (pass `out` and a `workspace` from decode_paged_workspace(),
        allocated before the capture). Returns O in q's layout, and LSE
        [B, Hq, Sq] f32 when return_lse (or when `lse` is given)."""
        descs, options = self._prepare_paged(
            q, k_cache, v_cache, block_table, kv_lens, causal, window, scale,
            layout, kv_layout, mod, mod_operands)
        out, lse, od, ld = self._outputs(q, v_cache, layout, out, lse,
                                         return_lse)
        requested = int(num_splits or 0)
        if workspace is None:
            workspace = self.decode_paged_workspace(
                q, k_cache, v_cache, block_table, kv_lens, requested,
                causal=causal, window=window, scale=scale, layout=layout,
                kv_layout=kv_layout, mod=mod, mod_operands=mod_operands)
        return self._launch_decode(self._lib.attn_decode_paged, descs, q,
                                   out, lse, od, ld, options, requested,
                                   workspace)

    def forward_varlen(self, q, k, v, query_offsets, *, key_offsets=None,
                       kv_lens=None, block_table=None, max_seqlen_q=0,
                       causal=False, window=None, scale=None, layout="bshd",
                       kv_layout=None, return_lse=False, out=None, lse=None,
                       mod=None, mod_operands=None):
        """forward() over a packed (variable-length) batch of B sequences,
        in one launch on the current stream: varlen prefill with packed
        keys, or chunked prefill against a paged KV cache.

        q holds the sequences' query rows back to back: with layout='bshd'
        (the default) [T, Hq, D], FlashAttention's varlen convention, or
        [1, T, Hq, D]; with layout='bhsd' [Hq, T, D] or [1, Hq, T, D].
        query_offsets is torch.int32 [B + 1] (FlashAttention's cu_seqlens_q):
        sequence b has rows [query_offsets[b], query_offsets[b + 1]). Its
        keys, with exactly one of:
          - key_offsets (torch.int32 [B + 1], cu_seqlens_k): k and v packed
            the same way, [Tk, Hkv, D] in `layout` ([1, Tk, Hkv, D]...);
          - kv_lens (torch.int32 [B]) and block_table (torch.int32
            [B, max_pages]): k and v are page pools as decode_paged()
            takes them (kv_layout 'bshd': vLLM's [P, page_size, Hkv, D],
            'bhsd': [P, Hkv, page_size, D]; None: `layout`).
        Nothing is copied. causal and window apply per sequence
        ('bottom_right': the queries sit at the end of their sequence's
        keys, as chunked prefill needs); scale, mod and mod_operands as
        forward(); no mask.

        The caller guarantees the offsets start at 0, never decrease and
        end at T (key_offsets at Tk), the table's entries for a sequence's
        keys are in [0, P), and max_seqlen_q >= every sequence's query
        count: the grid covers max_seqlen_q rows per sequence (<= 0: T,
        always enough, with more CTAs). The host never reads the offsets,
        lengths or table (a CUDA graph replays the call with new ones). A
        sequence without keys gets O = 0 and LSE = -inf; rows that no
        sequence covers are not written.

        Returns O in q's shape (Dv for D), and with return_lse (or a given
        `lse`) the LSE, f32 [Hq, T] for a 3-dim q (FlashAttention's
        softmax_lse) or [1, Hq, T] for a 4-dim one. Needs a forward kernel
        with q=packed and kv=packed or kv=paged (has_kernel(...,
        packed=True, paged=...))."""
        import torch
        if layout not in ("bhsd", "bshd"):
            raise ValueError("layout must be 'bhsd' or 'bshd', not %r"
                             % (layout,))
        kv_layout = layout if kv_layout is None else kv_layout
        if kv_layout not in ("bhsd", "bshd"):
            raise ValueError("kv_layout must be 'bhsd' or 'bshd', not %r"
                             % (kv_layout,))
        paged = kv_lens is not None or block_table is not None
        if paged and key_offsets is not None:
            # k and v would be a pool for one and packed rows for the other.
            raise ValueError("pass key_offsets (packed keys) or kv_lens and "
                             "block_table (a paged cache), not both")
        named = (("q", q), ("k", k), ("v", v),
                 ("query_offsets", query_offsets), ("key_offsets",
                                                    key_offsets),
                 ("kv_lens", kv_lens), ("block_table", block_table))
        for name, t in named:
            if t is not None and t.device != self.device:
                raise ValueError("%s is on %s, the module on %s"
                                 % (name, t.device, self.device))
        qd = _describe_packed(q, "q", layout, "T, Hq, D" if layout == "bshd"
                              else "Hq, T, D")
        if paged:
            pool = _POOL_DIMS[kv_layout]
            kd = _describe(k, "k", kv_layout, pool)
            vd = _describe(v, "v", kv_layout, pool.replace("D]", "Dv]"))
        else:
            rows = "Tk, Hkv, %s" if layout == "bshd" else "Hkv, Tk, %s"
            kd = _describe_packed(k, "k", layout, rows % "D")
            vd = _describe_packed(v, "v", layout, rows % "Dv")
        qo = _describe_index(query_offsets, "query_offsets", ("B + 1",))
        ko = _describe_index(key_offsets, "key_offsets", ("B + 1",)) \
            if key_offsets is not None else None
        lens = _describe_index(kv_lens, "kv_lens", ("B",)) \
            if kv_lens is not None else None
        table = _describe_index(block_table, "block_table",
                                ("B", "max_pages")) \
            if block_table is not None else None
        options = _Options()
        options.allow_tf32 = int(bool(self.allow_tf32))
        options.scale = 0.0 if scale is None else float(scale)
        options.causal = _CAUSAL_CODES[_causal_name(causal)]
        options.window = -1 if window is None else int(window)
        _set_mod(options, mod)
        _set_mod_operands(options, mod_operands, self.device)

        hq, rows = qd.shape[1], qd.shape[2]
        dv = vd.shape[3]
        if out is None:
            shape = [rows, hq, dv] if layout == "bshd" else [hq, rows, dv]
            if q.dim() == 4:
                shape = [1] + shape
            out = torch.empty(tuple(shape), dtype=q.dtype, device=q.device)
        if lse is None and return_lse:
            shape = (hq, rows) if q.dim() == 3 else (1, hq, rows)
            lse = torch.empty(shape, dtype=torch.float32, device=q.device)
        od = _describe_packed(out, "out", layout, "T, Hq, Dv"
                              if layout == "bshd" else "Hq, T, Dv")
        ld = _describe_lse(lse, packed=True) if lse is not None else None
        stream = torch.cuda.current_stream(q.device).cuda_stream
        status = self._lib.attn_forward_varlen(
            self._handle,
            *[ctypes.byref(d) if d is not None else None
              for d in (qd, kd, vd, qo, ko, lens, table, od, ld)],
            int(max_seqlen_q or 0), ctypes.byref(options),
            ctypes.c_void_p(stream))
        self._check(status)
        return (out, lse) if lse is not None else out

    def backward_workspace(self, q, *, layout="bhsd", atomic_dq=False,
                           records_only=False):
        """A workspace for backward() with this q (a uint8 tensor on the
        current stream), to allocate once and pass as `workspace=`: what
        every dQ mode needs (attn_backward_atomic_workspace_size): one
        16-byte record of f32 row statistics per query row, {LSE log2(e),
        D = rowsum(dO * O), 0, 0}, padded to 256 bytes, then the
        accumulating modes' (dq=atomic, dq=ordered) f32 dQ accumulator
        [B, Hq, Sq, D], padded to 256 bytes, and i32 turns [B, Hq, Sq].
        atomic_dq is accepted for older callers and changes nothing.
        records_only: the records alone, B * Hq * Sq * 16 bytes
        (attn_backward_workspace_size), which serves the kernels that
        recompute dQ only."""
        import torch
        qd = _describe(q, "q", layout)
        size_of = (self._lib.attn_backward_workspace_size if records_only
                   else self._lib.attn_backward_atomic_workspace_size)
        size = size_of(ctypes.byref(qd))
        if size < 0:
            raise AttnError(1, self.last_error())
        return torch.empty(max(size, 1), dtype=torch.uint8, device=q.device)

    def backward_dq_mode(self, dtype, head_dim=None, value_dim=None,
                         causal="none", mask="none", atomic_dq=False,
                         mod=None, blocks=None, tf32=None):
        """The dQ mode of the three backward kernels attn_backward launches
        for these parameters (has_kernel's): 'atomic' with atomic_dq where
        the module has all three dq=atomic ones, else 'ordered' where it
        has the dq=ordered ones, else 'recompute' where it has those
        without a dq key; None where it has no complete set."""
        for dq in (["atomic"] if atomic_dq else []) + ["ordered", None]:
            if all(self.has_kernel(kind, dtype, head_dim, value_dim, causal,
                                   mask, dq=dq, mod=mod, blocks=blocks,
                                   tf32=tf32) is not None
                   for kind in ("backward_dot", "backward_kv",
                                "backward_q")):
                return dq or "recompute"
        return None

    def has_backward_kernel(self, kind, dtype, head_dim=None,
                            value_dim=None, causal="none", mask="none",
                            atomic_dq=False, mod=None, blocks=None,
                            tf32=None):
        """has_kernel's record of backward kernel `kind` in the set that
        attn_backward would launch (backward_dq_mode's), or, where the
        module has no complete set, of the deterministic kinds it has (None
        for the others: what is missing)."""
        mode = self.backward_dq_mode(dtype, head_dim, value_dim, causal,
                                     mask, atomic_dq, mod, blocks, tf32)
        modes = ([mode] if mode else
                 (["atomic"] if atomic_dq else []) + ["ordered",
                                                      "recompute"])
        for m in modes:
            record = self.has_kernel(kind, dtype, head_dim, value_dim,
                                     causal, mask,
                                     dq=None if m == "recompute" else m,
                                     mod=mod, blocks=blocks, tf32=tf32)
            if record is not None:
                return record
        return None

    def _has_backward(self, q, v, dq, causal, mask, mod, block_mask):
        """Whether the module has the three backward kernels of dQ mode `dq`
        (has_kernel's) for a call with these q, v (any layout: D and Dv are
        their last dims), causal, mask, mod and block mask."""
        mask_kind = "none"
        if mask is not None:
            mask_kind = "add" if mask.is_floating_point() else "bool"
        blocks = _block_sizes(block_mask) if block_mask is not None else None
        return all(self.has_kernel(kind, q.dtype, q.shape[-1], v.shape[-1],
                                   causal, mask_kind, dq=dq, mod=mod,
                                   blocks=blocks)
                   for kind in ("backward_dot", "backward_kv", "backward_q"))

    def has_atomic_backward(self, q, v, *, causal=False, mask=None,
                            mod=None, block_mask=None):
        """Whether the module has the atomic dQ mode's three backward
        kernels (manifest dq=atomic) for a call with these q, v, causal,
        mask, mod and block mask: what backward(..., atomic_dq=True)
        launches where they exist."""
        return self._has_backward(q, v, "atomic", causal, mask, mod,
                                  block_mask)

    def has_ordered_backward(self, q, v, *, causal=False, mask=None,
                             mod=None, block_mask=None):
        """Whether the module has the ordered dQ mode's three backward
        kernels (manifest dq=ordered) for a call with these q, v, causal,
        mask, mod and block mask: what a deterministic backward() (and one
        with atomic_dq=True where the module lacks the atomic ones)
        launches where they exist."""
        return self._has_backward(q, v, "ordered", causal, mask, mod,
                                  block_mask)

    def backward(self, q, k, v, o, dout, lse, dq=None, dk=None, dv=None, *,
                 causal=False, window=None, scale=None, layout="bhsd",
                 mask=None, workspace=None, atomic_dq=False, mod=None,
                 block_mask=None, mod_operands=None):
        """The gradients of forward() by recomputation, on the current
        stream: from q, k, v, the forward's o and lse (forward(...,
        return_lse=True) with the same options) and dout = dL/dO (o's shape
        and dtype), returns (dq, dk, dv) with q's, k's and v's shapes, in
        the operands' layout. The options are forward()'s (mod=,
        mod_operands= and block_mask= included) and must be those the
        forward ran with; a block_mask here also needs its q_counts,
        q_indices, full_q_counts and full_q_indices, torch.int32
        [B, Hq, KB] and [B, Hq, KB, M] (KB = ceil(Sk / block_k): the query
        blocks that visit each key block, FlexAttention's transposed
        lists). dq, dk, dv are written in
        place when given, else allocated; the workspace
        (backward_workspace()) is allocated with torch unless given (a
        uint8 CUDA tensor). Deterministic (bitwise reproducible): the
        module's dq=ordered kernels where it has all three for the call,
        which accumulate dQ in a fixed order, else those that recompute it;
        with GQA, dk and dv sum over the query heads of a group. Needs the
        module's backward_dot, backward_kv and backward_q kernels for the
        call (ATTN_ERROR_NO_KERNEL otherwise).

        atomic_dq=True (options.atomic_dq) lets the runtime use the
        module's atomic dQ kernels (manifest dq=atomic) where it has all
        three for the call (the dK/dV kernel sums dQ with f32 atomic adds):
        dq is then not bitwise reproducible run to run; else the
        deterministic ones. The workspace allocated here is
        backward_workspace(q)'s where the call's kernels accumulate dQ
        (has_atomic_backward() with atomic_dq, has_ordered_backward()),
        else its records alone; a given one must be as large
        (ATTN_ERROR_INVALID_ARGUMENT otherwise)."""
        import torch
        (qd, kd, vd), options = self._prepare(q, k, v, causal, window, scale,
                                              layout, mask, mod, block_mask,
                                              backward=True,
                                              mod_operands=mod_operands)
        options.atomic_dq = 1 if atomic_dq else 0
        grads = []
        for given, like, name in ((dq, q, "dq"), (dk, k, "dk"), (dv, v, "dv")):
            if given is None:
                given = torch.empty(like.shape, dtype=like.dtype,
                                    device=like.device)
            grads.append(given)
        descs = [_describe(t, n, layout) for t, n in
                 ((o, "o"), (dout, "dout"))]
        # A null lse is the runtime's to refuse, with its reason.
        descs.append(_describe_lse(lse) if lse is not None else None)
        descs += [_describe(t, n, layout) for t, n in
                  zip(grads, ("dq", "dk", "dv"))]
        if workspace is None:
            # The accumulator only where kernels that accumulate dQ run:
            # the runtime's choice, atomic when asked for, else ordered.
            sets = dict(causal=causal, mask=mask, mod=mod,
                        block_mask=block_mask)
            accumulates = ((atomic_dq and self.has_atomic_backward(q, v,
                                                                   **sets))
                           or self.has_ordered_backward(q, v, **sets))
            workspace = self.backward_workspace(
                q, layout=layout, records_only=not accumulates)
        stream = torch.cuda.current_stream(q.device).cuda_stream
        status = self._lib.attn_backward(
            self._handle, ctypes.byref(qd), ctypes.byref(kd),
            ctypes.byref(vd),
            *[ctypes.byref(d) if d is not None else None for d in descs],
            ctypes.byref(options), ctypes.c_void_p(workspace.data_ptr()),
            workspace.numel() * workspace.element_size(),
            ctypes.c_void_p(stream))
        self._check(status)
        return tuple(grads)

def flops_forward(b, hq, sq, sk, d, dv=None, causal=False):
    """BENCHMARKS.md's count: 2 B Hq Sq Sk (D + Dv), halved for causal with
    Sq == Sk."""
    dv = d if dv is None else dv
    flops = 2.0 * b * hq * sq * sk * (d + dv)
    return flops / 2 if causal and sq == sk else flops


def decode_bytes(b, hkv, sk, d, element_size=2):
    """K and V read once: 2 B Hkv Sk D bytes_per_element."""
    return 2.0 * b * hkv * sk * d * element_size


def default_scale(d):
    return 1.0 / math.sqrt(d)
