"""FlexAttention-style score and mask modifications, traced into MLIR.

    from attn.mods import Modification
    softcap = Modification(lambda s, b, h, i, j: torch.tanh(s / 30) * 30,
                           name="softcap")
    prefix = Modification(mask_mod=lambda b, h, i, j: (j < 256) | (j <= i))
    docs = Modification(mask_mod=lambda b, h, i, j: doc_ids[i] == doc_ids[j])
    softcap.name, softcap.score_region(), prefix.mask_region(), docs.operands

Modification calls score_mod(score, b, h, q_idx, kv_idx) and
mask_mod(b, h, q_idx, kv_idx) once each, with symbolic values (ModValue),
and records what they compute as the regions of attn's ops (arith and math
in an attn.yield-terminated block; include/attn/Dialect/Attn/IR/AttnOps.td).
The indices b, h, q_idx, kv_idx are `index` values, the score an f32.

What is traced:
- + - * on indices (index arithmetic) and on floats; / is true division
  (indices are converted to f32 first); // and % on indices with Python's
  floor semantics (the sign of %'s result is the divisor's); unary -,
  abs();
- comparisons < <= > >= == != (an i1; signed on indices, ordered on floats,
  != unordered as Python's), and & | ~ on those booleans;
- Python int, float and bool constants; an index mixed with a float is
  converted (arith.index_cast to i64, then arith.sitofp to f32);
- torch.tanh, exp, exp2, log, sqrt, abs, where, minimum, maximum on
  symbolic values, through __torch_function__ (torch dispatches a call with
  a ModValue argument to it), or the same names in this module
  (attn.mods.tanh(x)...) without torch;
- captured torch.Tensors (the op's mod_operands): t[i, j] with one index
  per dim, each a symbolic index or a Python int >= 0, reads an element
  (tensor.extract; torch dispatches t[ModValue] to __torch_function__ as
  Tensor.__getitem__ with the index as a tuple); a 0-dim tensor is read as
  a value where it is used (score * t). Elements of int32 and int64
  tensors are indices, of float32, float16 and bfloat16 tensors f32, of
  bool tensors booleans. Up to 16 tensors of at most 4 dims; every tensor
  once, by identity, in order of first use (score_mod first).

Anything else is a TypeError (a ValueError for a wrong number of indices,
too many tensors or dims) that names it: another torch function or operator, a
tensor used whole (score + bias), slices, Ellipsis, None, tensor or list
indices, tensors of other dtypes, a Python `if`/`and`/`or`/`not` on a
symbolic value (bool() of it: write torch.where, &, |, ~), int() of one.

The text is deterministic: the same functions give the same regions, whose
block arguments give each tensor's element type and rank, all dims dynamic
(tensor<?x?xf32>): the tensors' sizes and values are not part of it, so one
kernel serves every size and content. The name is the user's (1 to 64 of
[A-Za-z0-9_]: it names GPU kernels), else "py" and the first 16 hex digits
of the sha256 of the region text.

The registry (register, lookup) maps names to modifications for the
custom ops, which take a name rather than a function (and the tensors as
operands of their own: the registry keeps none). No torch needed here.
"""

import hashlib
import math
import operator
import re
import sys
import threading
import types

__all__ = ["MAX_OPERANDS", "MAX_RANK", "Modification", "ModValue", "abs",
           "exp", "exp2", "follow", "log", "lookup", "maximum", "minimum",
           "operand_type", "register", "sqrt", "tanh", "where"]

_NAME = re.compile(r"[A-Za-z0-9_]{1,64}\Z")
_INDEX_ARGS = ("b", "h", "i", "j")
_SUPPORTED = ("+ - * / on scores and indices, // % on indices, unary -, "
              "abs(), < <= > >= == !=, & | ~ on booleans, torch.tanh, "
              "exp, exp2, log, sqrt, abs, where, minimum, maximum, and "
              "t[i, j] on captured tensors")

# The tensors a modification may read (the runtime's limits): how many, and
# how many dims each.
MAX_OPERANDS = 16
MAX_RANK = 4
# A tensor's dtype (as str() names it) and the MLIR element type its
# operand has; the manifest's mod_operands= writes i1 as bool.
_ELEMENTS = {"torch.float32": "f32", "torch.float16": "f16",
             "torch.bfloat16": "bf16", "torch.bool": "i1",
             "torch.int32": "i32", "torch.int64": "i64"}
# Classes other than torch.Tensor that the tracer takes for tensors: a test
# hook, so that the tracer's tensor reads are tested without torch. An
# instance needs .dtype (whose str() is a torch dtype's, "torch.int64") and
# .dim(), and dispatches t[ModValue] to ModValue.__torch_function__ as torch
# does.
_STAND_INS = []


def _unsupported(what):
    return TypeError("attn.mods: %s is not supported in a score_mod or "
                     "mask_mod (supported: %s)" % (what, _SUPPORTED))


def _whole(tensor, what):
    """The error for a tensor of 1 or more dims used as a value."""
    return TypeError(
        "attn.mods: the modification uses a captured tensor of %s %s; a "
        "modification reads one element of it: index it with one index "
        "per dim (bias[h, q_idx - kv_idx]); only a 0-dim tensor is read as "
        "a value" % (_count(tensor.dim(), "dim", "dims"), what))


class _Region:
    """The ops of one region being traced."""

    def __init__(self, operands):
        self.lines = []
        self.count = 0
        self.constants = {}
        self.operands = operands

    def emit(self, fmt, type_, *operands):
        return self.add(fmt % tuple(o.name for o in operands), type_)

    def add(self, text, type_):
        """Appends `%xN = text`: an op of result type type_."""
        name = "%%x%d" % self.count
        self.count += 1
        self.lines.append("%s = %s" % (name, text))
        return ModValue(self, name, type_)

    def constant(self, value, type_):
        key = (type_, repr(value))
        if key not in self.constants:
            text = _literal(value, type_)
            self.constants[key] = self.emit(
                "arith.constant " + text + ("" if type_ == "i1"
                                            else " : " + type_), type_)
        return self.constants[key]


def _literal(value, type_):
    if type_ == "i1":
        return "true" if value else "false"
    if type_ == "index":
        if not -(1 << 63) <= value < (1 << 63):
            raise ValueError("attn.mods: the integer %d does not fit in 64 "
                             "bits" % value)
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "0x7FC00000"
    if math.isinf(value):
        return "0x7F800000" if value > 0 else "0xFF800000"
    text = repr(value)
    if "." not in text:  # 1e-05: MLIR's float literals need the dot
        mantissa, _, exponent = text.partition("e")
        text = mantissa + ".0" + ("e" + exponent if exponent else "")
    return text


def _is_tensor(value):
    """Whether value is a torch.Tensor (or a test's stand-in for one).
    torch is looked up, never imported: without it there are no tensors."""
    if _STAND_INS and isinstance(value, tuple(_STAND_INS)):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def operand_type(tensor):
    """(element, rank) of a tensor a modification may read: element the
    MLIR type of its operand's elements (i64, i32, f32, f16, bf16, i1),
    rank its number of dims; a TypeError for other dtypes, a ValueError for
    more than MAX_RANK dims."""
    element = _ELEMENTS.get(str(tensor.dtype))
    if element is None:
        raise TypeError(
            "attn.mods: the modification reads a tensor of dtype %s; attn's "
            "kernels read float32, float16, bfloat16, bool, int32 and int64 "
            "tensors: convert it first (.to(torch.float32), .to(torch.int32))"
            % tensor.dtype)
    rank = tensor.dim()
    if rank > MAX_RANK:
        raise ValueError("attn.mods: the modification reads a tensor of %d "
                         "dims; attn's kernels read tensors of at most %d"
                         % (rank, MAX_RANK))
    return element, rank


def _mlir_type(element, rank):
    """tensor<?x?xf32>: every dim dynamic, so one kernel serves every
    size."""
    return "tensor<%s%s>" % ("?x" * rank, element)


class _Operands:
    """The tensors a modification reads, each once (by identity), in order
    of first use, shared by its two regions."""

    def __init__(self):
        self.tensors = []
        self.types = []
        self._index = {}

    def add(self, tensor, element, rank):
        """The number of `tensor` among the operands (%t<number>)."""
        number = self._index.get(id(tensor))
        if number is None:
            if len(self.tensors) == MAX_OPERANDS:
                raise ValueError("attn.mods: the modification reads more "
                                 "than %d tensors, the most attn's kernels "
                                 "take" % MAX_OPERANDS)
            number = len(self.tensors)
            self._index[id(tensor)] = number
            self.tensors.append(tensor)  # keeps id(tensor) unique
            self.types.append((element, rank))
        return number

    def arguments(self):
        """The regions' tensor block arguments, after the scalars."""
        return "".join(", %%t%d: %s" % (n, _mlir_type(*t))
                       for n, t in enumerate(self.types))


def _index_kind(value):
    """What is wrong with `value` as an index of a captured tensor, or None:
    a symbolic index or a Python int >= 0 is one."""
    if isinstance(value, ModValue):
        if value.type == "index":
            return None
        return ("a symbolic %s (indices are integers: b, h, q_idx, kv_idx, "
                "arithmetic on them, or elements of integer tensors)"
                % ("boolean" if value.type == "i1" else value.type))
    if isinstance(value, bool):
        return "a bool (torch's boolean masking)"
    if isinstance(value, int):
        return None if value >= 0 else (
            "the negative int %d (the kernels do not count from the end: "
            "write the index itself)" % value)
    if value is Ellipsis:
        return "Ellipsis (...)"
    if value is None:
        return "None (a new axis)"
    if isinstance(value, slice):
        return "a slice"
    if _is_tensor(value):
        return "a tensor (indexing with tensors)"
    return "a %s" % type(value).__name__


def _read(tensor, index):
    """tensor[index]: one element of a captured tensor (tensor.extract),
    converted (integers to index, f16 and bf16 to f32)."""
    items = index if isinstance(index, tuple) else (index,)
    symbolic = [i for i in items if isinstance(i, ModValue)]
    if not symbolic:
        raise _unsupported("indexing a captured tensor with no symbolic "
                           "index")
    region = _region_of(*symbolic)
    for item in items:
        problem = _index_kind(item)
        if problem is not None:
            raise TypeError("attn.mods: a captured tensor is indexed with "
                            "%s; index it with one symbolic index or Python "
                            "int >= 0 per dim (bias[h, q_idx - kv_idx])"
                            % problem)
    element, rank = operand_type(tensor)
    if rank == 0:
        raise ValueError("attn.mods: a 0-dim tensor is indexed with %s; "
                         "use it as a value (score * t), without an index"
                         % _count(len(items), "index", "indices"))
    if len(items) != rank:
        raise ValueError("attn.mods: a captured tensor of %s is indexed "
                         "with %s; index every dim at once, with one index "
                         "per dim (t[i, j], not t[i][j] or t[i])"
                         % (_count(rank, "dim", "dims"),
                            _count(len(items), "index", "indices")))
    indices = [_operand(region, i) for i in items]
    return _extract(region, tensor, element, rank, indices)


def _count(n, one, many):
    return "%d %s" % (n, one if n == 1 else many)


def _extract(region, tensor, element, rank, indices):
    number = region.operands.add(tensor, element, rank)
    value = region.add("tensor.extract %%t%d[%s] : %s" % (
        number, ", ".join(i.name for i in indices),
        _mlir_type(element, rank)), element)
    if element in ("i32", "i64"):
        return region.emit("arith.index_cast %%s : %s to index" % element,
                           "index", value)
    if element in ("f16", "bf16"):
        return region.emit("arith.extf %%s : %s to f32" % element, "f32",
                           value)
    return value


def _tensor_value(region, tensor, what):
    """A 0-dim captured tensor as a value; a TypeError for others."""
    if tensor.dim() != 0:
        raise _whole(tensor, what)
    element, rank = operand_type(tensor)
    return _extract(region, tensor, element, rank, [])


def _binary(op):
    """The method of a binary operator, op(self, other), and its reflected
    twin, op(other, self). `op` resolves the helpers below when called."""
    return (lambda self, other: op(self, other),
            lambda self, other: op(other, self))


class ModValue:
    """A symbolic value of a traced modification: an index, an f32 or an i1
    (a boolean). Arithmetic on it records MLIR ops."""

    __slots__ = ("region", "name", "type")

    def __init__(self, region, name, type_):
        self.region = region
        self.name = name
        self.type = type_

    def __repr__(self):
        return "ModValue(%s : %s)" % (self.name, self.type)

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        raise _unsupported("the method or attribute .%s of a symbolic "
                           "value (write torch.%s(x), if it is one of the "
                           "torch functions below)" % (attr, attr))

    # Conversions that would let Python branch on a traced value.
    def __bool__(self):
        raise TypeError("attn.mods: a symbolic value has no truth value: "
                        "a Python if/and/or/not on %s cannot be traced; use "
                        "torch.where(cond, a, b) and & | ~" % self.type)

    def __index__(self):
        raise _unsupported("using a symbolic %s as a Python int (indexing a "
                           "list, range(), int(); a captured tensor is read "
                           "as t[i, j])" % self.type)

    __int__ = __index__

    def __float__(self):
        raise _unsupported("float() of a symbolic value")

    def __iter__(self):
        raise _unsupported("iterating over a symbolic value")

    def __pow__(self, other):
        raise _unsupported("** (use torch.exp / torch.exp2 / *)")

    __rpow__ = __pow__

    # Arithmetic: each operator and its reflected twin (2 + x).
    __add__, __radd__ = _binary(lambda a, b: _arith("add", a, b))
    __sub__, __rsub__ = _binary(lambda a, b: _arith("sub", a, b))
    __mul__, __rmul__ = _binary(lambda a, b: _arith("mul", a, b))
    __truediv__, __rtruediv__ = _binary(lambda a, b: _divide(a, b))
    __floordiv__, __rfloordiv__ = _binary(
        lambda a, b: _floor_div_mod(a, b, False))
    __mod__, __rmod__ = _binary(lambda a, b: _floor_div_mod(a, b, True))

    def __neg__(self):
        if self.type == "f32":
            return self.region.emit("arith.negf %s : f32", "f32", self)
        if self.type == "index":
            return _arith("sub", 0, self)
        raise _unsupported("unary - on a boolean (use ~)")

    def __pos__(self):
        return self

    def __abs__(self):
        return _abs(self)

    # Comparisons (Python reflects them itself: 2 < x is x > 2).
    __lt__ = _binary(lambda a, b: _compare("lt", a, b))[0]
    __le__ = _binary(lambda a, b: _compare("le", a, b))[0]
    __gt__ = _binary(lambda a, b: _compare("gt", a, b))[0]
    __ge__ = _binary(lambda a, b: _compare("ge", a, b))[0]
    __eq__ = _binary(lambda a, b: _compare("eq", a, b))[0]
    __ne__ = _binary(lambda a, b: _compare("ne", a, b))[0]

    __hash__ = None

    # Booleans (symmetric: the reflected method is the same).
    __and__ = __rand__ = _binary(lambda a, b: _logic("andi", a, b))[0]
    __or__ = __ror__ = _binary(lambda a, b: _logic("ori", a, b))[0]
    __xor__ = __rxor__ = _binary(lambda a, b: _logic("xori", a, b))[0]

    def __invert__(self):
        if self.type != "i1":
            raise _unsupported("~ on a symbolic %s (~ takes booleans)"
                               % self.type)
        return _logic("xori", self, True)

    # torch functions: torch.tanh(x) etc. with a ModValue argument, t[i]
    # (Tensor.__getitem__) and a 0-dim tensor's operators (t * score).
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", None) == "__getitem__":
            if len(args) == 2 and not kwargs and _is_tensor(args[0]):
                return _read(args[0], args[1])
            raise _unsupported(_func_name(func))
        impl = _torch_impl(func) or _operator_impl(func)
        if impl is None:
            raise _unsupported(_func_name(func))
        return impl(*args, **kwargs)


def _func_name(func):
    name = getattr(func, "__name__", repr(func))
    qualified = getattr(func, "__qualname__", name)
    if (qualified.startswith(("TensorBase.", "Tensor."))
            or name.startswith("__")):
        return "torch.Tensor." + name
    return "torch." + name


def _torch_impl(func):
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    table = {torch.tanh: tanh, torch.exp: exp, torch.exp2: exp2,
             torch.log: log, torch.sqrt: sqrt, torch.abs: abs,
             torch.where: where, torch.minimum: minimum,
             torch.maximum: maximum}
    return table.get(func)


# Python's operators by the names torch dispatches a tensor's operators
# under (Tensor.add for t + x, Tensor.__rsub__ for x - t, ...).
_OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "div": operator.truediv, "truediv": operator.truediv,
    "true_divide": operator.truediv, "floordiv": operator.floordiv,
    "floor_divide": operator.floordiv, "mod": operator.mod,
    "remainder": operator.mod, "eq": operator.eq, "ne": operator.ne,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt,
    "ge": operator.ge, "and": operator.and_, "or": operator.or_,
    "xor": operator.xor, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
}


def _operator_impl(func):
    """An operator of a 0-dim tensor and a symbolic value (t * score,
    score < t: torch dispatches the tensor's method), or None."""
    name = getattr(func, "__name__", "")
    dunder = name.startswith("__") and name.endswith("__")
    core = name[2:-2] if dunder else name
    reflected = (dunder and core not in _OPERATORS and core.startswith("r")
                 and core[1:] in _OPERATORS)
    op = _OPERATORS.get(core[1:] if reflected else core)
    if op is None:
        return None

    def impl(self, other, *rest, **kwargs):
        if rest or kwargs:
            raise _unsupported("%s with more arguments"
                               % _func_name(func))
        region = _region_of(self, other)
        self, other = (_operand(region, v) if _is_tensor(v) else v
                       for v in (self, other))
        return op(other, self) if reflected else op(self, other)
    return impl


def _region_of(*values):
    regions = {v.region for v in values if isinstance(v, ModValue)}
    if len(regions) != 1:
        raise _unsupported("a value of another modification's trace")
    return regions.pop()


def _operand(region, value, want=None):
    """value (a ModValue or a Python constant) as a ModValue; `want` 'f32'
    converts an index to f32."""
    if isinstance(value, ModValue):
        if value.type == "index" and want == "f32":
            wide = region.emit("arith.index_cast %s : index to i64", "i64",
                               value)
            return region.emit("arith.sitofp %s : i64 to f32", "f32", wide)
        return value
    if isinstance(value, bool):
        return region.constant(value, "i1")
    if isinstance(value, int):
        if want == "f32":
            return region.constant(float(value), "f32")
        return region.constant(value, "index")
    if isinstance(value, float):
        return region.constant(value, "f32")
    if _is_tensor(value):
        return _operand(region, _tensor_value(region, value, "as a value"),
                        want)
    raise _unsupported("a value of type %s" % type(value).__name__)


def _kind(value):
    if isinstance(value, ModValue):
        return value.type
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "index"
    if isinstance(value, float):
        return "f32"
    if _is_tensor(value):
        if value.dim() != 0:
            raise _whole(value, "as a value")
        element = operand_type(value)[0]
        return {"i32": "index", "i64": "index", "i1": "i1"}.get(element,
                                                               "f32")
    raise _unsupported("a value of type %s" % type(value).__name__)


def _numeric(a, b, what):
    """The common type of two numbers: index when both are, else f32."""
    kinds = (_kind(a), _kind(b))
    if "i1" in kinds:
        raise _unsupported("%s on a boolean (compare first, or use "
                           "torch.where)" % what)
    return "index" if kinds == ("index", "index") else "f32"


def _arith(op, a, b):
    region = _region_of(a, b)
    type_ = _numeric(a, b, op)
    a, b = _operand(region, a, type_), _operand(region, b, type_)
    suffix = "i" if type_ == "index" else "f"
    return region.emit("arith.%s%s %%s, %%s : %s" % (op, suffix, type_),
                       type_, a, b)


def _divide(a, b):
    region = _region_of(a, b)
    _numeric(a, b, "/")
    a, b = _operand(region, a, "f32"), _operand(region, b, "f32")
    return region.emit("arith.divf %s, %s : f32", "f32", a, b)


def _floor_div_mod(a, b, modulo):
    """Python's // (modulo False) or % (True) on indices: arith.divsi and
    arith.remsi truncate, so where the remainder is not 0 and its sign
    differs from the divisor's, the quotient is one less and the remainder
    gains the divisor."""
    region = _region_of(a, b)
    if _numeric(a, b, "// and %") != "index":
        raise _unsupported("// and % on floats (they take indices)")
    if isinstance(b, int) and b == 0:
        raise ZeroDivisionError("attn.mods: // or % by 0")
    positive = isinstance(b, int) and b > 0
    a, b = _operand(region, a), _operand(region, b)
    if not modulo:
        quotient = region.emit("arith.divsi %s, %s : index", "index", a, b)
    remainder = region.emit("arith.remsi %s, %s : index", "index", a, b)
    zero = region.constant(0, "index")
    if positive:  # the common case: fix up only a negative remainder
        fix = region.emit("arith.cmpi slt, %s, %s : index", "i1", remainder,
                          zero)
    else:
        nonzero = region.emit("arith.cmpi ne, %s, %s : index", "i1",
                              remainder, zero)
        r_negative = region.emit("arith.cmpi slt, %s, %s : index", "i1",
                                 remainder, zero)
        b_negative = region.emit("arith.cmpi slt, %s, %s : index", "i1", b,
                                 zero)
        signs = region.emit("arith.xori %s, %s : i1", "i1", r_negative,
                            b_negative)
        fix = region.emit("arith.andi %s, %s : i1", "i1", nonzero, signs)
    if modulo:
        fixed = region.emit("arith.addi %s, %s : index", "index", remainder,
                            b)
        plain = remainder
    else:
        one = region.constant(1, "index")
        fixed = region.emit("arith.subi %s, %s : index", "index", quotient,
                            one)
        plain = quotient
    return region.emit("arith.select %s, %s, %s : index", "index", fix,
                       fixed, plain)


_PREDICATES = {
    "index": {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge",
              "eq": "eq", "ne": "ne"},
    "f32": {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge",
            "eq": "oeq", "ne": "une"},
}


def _compare(op, a, b):
    region = _region_of(a, b)
    kinds = (_kind(a), _kind(b))
    if "i1" in kinds:
        if kinds != ("i1", "i1") or op not in ("eq", "ne"):
            raise _unsupported("%s between a boolean and %s" % (
                op, "a boolean" if kinds == ("i1", "i1") else "a number"))
        a, b = _operand(region, a), _operand(region, b)
        return region.emit("arith.cmpi %s, %%s, %%s : i1" % op, "i1", a, b)
    type_ = _numeric(a, b, op)
    a, b = _operand(region, a, type_), _operand(region, b, type_)
    return region.emit("arith.cmp%s %s, %%s, %%s : %s" % (
        "i" if type_ == "index" else "f", _PREDICATES[type_][op], type_),
        "i1", a, b)


def _logic(op, a, b):
    region = _region_of(a, b)
    if (_kind(a), _kind(b)) != ("i1", "i1"):
        raise _unsupported("%s on %s and %s (& | ^ ~ take booleans: the "
                           "results of comparisons)" % (
                               {"andi": "&", "ori": "|", "xori": "^"}[op],
                               _kind(a), _kind(b)))
    a, b = _operand(region, a), _operand(region, b)
    return region.emit("arith.%s %%s, %%s : i1" % op, "i1", a, b)


def _math(op, x):
    if not isinstance(x, ModValue):
        if _is_tensor(x):
            raise _unsupported("%s of a captured tensor alone (torch "
                               "computes it when traced)" % op)
        raise _unsupported("%s of a constant %r (compute it in Python)"
                           % (op, x))
    if x.type == "i1":
        raise _unsupported("%s of a boolean" % op)
    x = _operand(x.region, x, "f32")
    return x.region.emit("math.%s %%s : f32" % op, "f32", x)


def tanh(x):
    """tanh(x), as torch.tanh on a symbolic value."""
    return _math("tanh", x)


def exp(x):
    """e ** x."""
    return _math("exp", x)


def exp2(x):
    """2 ** x."""
    return _math("exp2", x)


def log(x):
    """The natural logarithm."""
    return _math("log", x)


def sqrt(x):
    """The square root."""
    return _math("sqrt", x)


def _abs(x):
    if isinstance(x, ModValue) and x.type == "index":
        zero = x.region.constant(0, "index")
        negative = x.region.emit("arith.cmpi slt, %s, %s : index", "i1", x,
                                 zero)
        return where(negative, -x, x)
    return _math("absf", x)


def abs(x):  # noqa: A001 (torch.abs's name)
    """|x|: an index stays an index."""
    return _abs(x)


def where(cond, a, b):
    """a where cond else b (arith.select), as torch.where(cond, a, b)."""
    region = _region_of(cond, a, b)
    if _kind(cond) != "i1":
        raise _unsupported("where() with a condition of type %s (it takes "
                           "a boolean)" % _kind(cond))
    kinds = (_kind(a), _kind(b))
    if kinds == ("i1", "i1"):
        type_ = "i1"
    else:
        type_ = _numeric(a, b, "where()")
    cond = _operand(region, cond)
    a, b = _operand(region, a, type_), _operand(region, b, type_)
    return region.emit("arith.select %%s, %%s, %%s : %s" % type_, type_,
                       cond, a, b)


def _extremum(op, a, b):
    region = _region_of(a, b)
    type_ = _numeric(a, b, op)
    a, b = _operand(region, a, type_), _operand(region, b, type_)
    name = ("arith.%ssi" if type_ == "index" else "arith.%simumf") % op
    return region.emit("%s %%s, %%s : %s" % (name, type_), type_, a, b)


def minimum(a, b):
    """The smaller (NaN if either is, as torch.minimum)."""
    return _extremum("min", a, b)


def maximum(a, b):
    """The larger (NaN if either is, as torch.maximum)."""
    return _extremum("max", a, b)


def _trace(fn, score, operands):
    """Calls fn on symbolic values: the region's ops (lines) and the name
    of the value it yields. The tensors it reads join `operands`."""
    region = _Region(operands)
    indices = [ModValue(region, "%" + n, "index") for n in _INDEX_ARGS]
    if score:
        args = [ModValue(region, "%s", "f32")] + indices
    else:
        args = indices
    result = fn(*args)
    want = "f32" if score else "i1"
    if isinstance(result, ModValue) and result.region is not region:
        raise _unsupported("a value of another modification's trace")
    kind = _kind(result)
    if score:
        if kind == "i1":
            raise TypeError("attn.mods: score_mod must return a number (the "
                            "new score), not a boolean; a mask is mask_mod's")
    elif kind != "i1":
        raise TypeError("attn.mods: mask_mod must return a boolean (True "
                        "keeps the key), such as a comparison, not %s"
                        % ("a Python %s" % type(result).__name__
                           if not isinstance(result, ModValue)
                           else "an %s" % kind))
    result = _operand(region, result, want)
    return region.lines, result.name


def _text(keyword, score, traced, operands):
    """A region's text: its block takes the scalars, then every tensor the
    modification reads (both regions take all of them)."""
    lines, result = traced
    head = "^bb0(%b: index, %h: index, %i: index, %j: index" + (
        ", %s: f32" if score else "") + operands.arguments() + "):"
    return "\n".join(["%s {" % keyword, head]
                     + ["  " + line for line in lines]
                     + ["  attn.yield %s : %s" % (result,
                                                  "f32" if score else "i1"),
                        "}"])


class Modification:
    """A traced score_mod(score, b, h, q_idx, kv_idx) -> score and/or
    mask_mod(b, h, q_idx, kv_idx) -> bool, FlexAttention's argument order,
    and its name (name=None: "py" + 16 hex digits of the regions' sha256).
    Equal when name and regions are, whatever the tensors they read hold.

    operands: the captured tensors the regions read (the op's mod_operands),
    in order; operand_types: (element, rank) of each (operand_type()), which
    the regions' text and so the hash and the name carry; paths: where each
    tensor is found from the functions, for torch.compile (follow())."""

    def __init__(self, score_mod=None, mask_mod=None, name=None):
        if score_mod is None and mask_mod is None:
            raise ValueError("attn.mods: a Modification needs a score_mod, a "
                             "mask_mod or both")
        for label, fn in (("score_mod", score_mod), ("mask_mod", mask_mod)):
            if fn is not None and not callable(fn):
                raise TypeError("attn.mods: %s must be callable, not %s"
                                % (label, type(fn).__name__))
        if name is not None and (not isinstance(name, str)
                                 or not _NAME.match(name)):
            raise ValueError("attn.mods: a modification's name must be 1 to "
                             "64 letters, digits or '_' (it names GPU "
                             "kernels), not %r" % (name,))
        operands = _Operands()
        score = (None if score_mod is None
                 else _trace(score_mod, True, operands))
        mask = None if mask_mod is None else _trace(mask_mod, False, operands)
        self._score = (None if score is None
                       else _text("score_mod", True, score, operands))
        self._mask = (None if mask is None
                      else _text("mask_mod", False, mask, operands))
        self.operands = tuple(operands.tensors)
        self.operand_types = tuple(operands.types)
        self.paths = _paths((("score", score_mod), ("mask", mask_mod)),
                            self.operands)
        self.hash = hashlib.sha256(self.text().encode()).hexdigest()
        self.name = name if name is not None else "py" + self.hash[:16]

    def score_region(self):
        """The score_mod region's text (`score_mod { ... }`), or None."""
        return self._score

    def mask_region(self):
        """The mask_mod region's text (`mask_mod { ... }`), or None."""
        return self._mask

    def text(self):
        """Both regions as they follow an op's result types."""
        return "\n".join(r for r in (self._score, self._mask) if r)

    def operand_mlir_types(self):
        """The types of the op's mod_operands: tensor<?xi64>, ..."""
        return [_mlir_type(*t) for t in self.operand_types]

    def manifest_operands(self):
        """The manifest's mod_operands= of its kernels (i64:1,f32:2; bool
        for i1), None when it reads no tensor."""
        if not self.operand_types:
            return None
        return ",".join("%s:%d" % ("bool" if e == "i1" else e, r)
                        for e, r in self.operand_types)

    def signature(self):
        """This modification without its tensors (operands ()), as the
        registry and the kernel specs keep it: they must not keep a
        caller's tensors alive."""
        if not self.operands:
            return self
        copy = object.__new__(Modification)
        copy.__dict__.update(self.__dict__)
        copy.operands = ()
        return copy

    def __eq__(self, other):
        return (isinstance(other, Modification) and self.name == other.name
                and self.hash == other.hash)

    def __hash__(self):
        return hash((self.name, self.hash))

    def __repr__(self):
        return "Modification(name=%r, hash=%s)" % (self.name, self.hash[:16])


# Where torch.compile finds the tensors (Modification.paths, follow()).
# torch.compile takes the modification's name and these paths as constants
# while it traces, and then traces follow(), so that each tensor is an input
# of the compiled graph, read from where the functions read it at every
# call (a tensor found by the tracer alone would be baked into the graph).
# A path is steps from score_mod or mask_mod separated by "/": self and
# func (of a bound method), closure:N (a free variable's cell), module:M:X
# (the global X of module M), global:X (of a function's own globals),
# default:N, kwdefault:X, attr:X (an attribute, an nn.Module's parameters,
# buffers and submodules included), key:X and index:N (an item of a dict,
# list or tuple). The search follows only names and constants that the
# functions' code uses, at most _DEPTH steps past a function, and reads no
# property. A tensor not found gets "!" and a description instead.
_DEPTH = 3
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _code_words(code):
    """The names (globals, attributes) and the str and int constants that
    code and the code nested in it use."""
    names, constants = set(code.co_names), set()
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            more_names, more_constants = _code_words(c)
            names |= more_names
            constants |= more_constants
        elif isinstance(c, (str, int)) and not isinstance(c, bool):
            constants.add(c)
    return names, constants


def _roots(label, fn):
    """(steps, value) of what a function can reach by name, and the names
    and constants its code uses."""
    steps = [label]
    roots = []
    if isinstance(fn, types.MethodType):
        roots.append((steps + ["self"], fn.__self__))
        fn = fn.__func__
        steps = steps + ["func"]
    if not isinstance(fn, types.FunctionType):
        return roots, set(), set()
    names, constants = _code_words(fn.__code__)
    for n, cell in enumerate(fn.__closure__ or ()):
        try:
            roots.append((steps + ["closure:%d" % n], cell.cell_contents))
        except ValueError:  # an empty cell
            pass
    scope = fn.__globals__
    module = sys.modules.get(scope.get("__name__"))
    for name in sorted(names):
        if name not in scope:
            continue
        if module is not None and vars(module) is scope:
            step = "module:%s:%s" % (module.__name__, name)
        else:
            step = "global:" + name
        roots.append((steps + [step], scope[name]))
    for n, value in enumerate(fn.__defaults__ or ()):
        roots.append((steps + ["default:%d" % n], value))
    for name, value in sorted((fn.__kwdefaults__ or {}).items()):
        roots.append((steps + ["kwdefault:" + name], value))
    return roots, names, constants


def _children(value, names, constants):
    """(step, child) of value by the names and constants a function uses;
    no property is evaluated."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.nn.Module):
        tables = [value._parameters, value._buffers, value._modules,
                  vars(value)]
    elif isinstance(value, dict):
        return [("key:" + k, value[k]) for k in sorted(
            c for c in constants if isinstance(c, str) and _KEY.match(c)
            and c in value)] + [("index:%d" % k, value[k]) for k in sorted(
                c for c in constants if isinstance(c, int) and c in value)]
    elif isinstance(value, (list, tuple)):
        return [("index:%d" % k, value[k]) for k in sorted(
            c for c in constants if isinstance(c, int)
            and 0 <= c < len(value))]
    elif _is_tensor(value):
        return []
    else:
        try:  # the instance's own attributes; no __getattr__, no property
            tables = [object.__getattribute__(value, "__dict__")]
        except (AttributeError, TypeError):
            return []
    found = []
    for name in sorted(names):
        for table in tables:
            if name in table and table[name] is not None:
                found.append(("attr:" + name, table[name]))
                break
    return found


def _paths(functions, tensors):
    if not tensors:
        return ()
    wanted = {id(t): n for n, t in enumerate(tensors)}
    found = {}
    for label, fn in functions:
        if fn is None:
            continue
        roots, names, constants = _roots(label, fn)
        seen = set()
        level = roots
        for depth in range(_DEPTH + 1):  # breadth first: shortest paths
            following = []
            for steps, value in level:
                number = wanted.get(id(value))
                if number is not None:
                    found.setdefault(number, "/".join(steps))
                    continue
                if depth == _DEPTH or id(value) in seen:
                    continue
                seen.add(id(value))
                following += [(steps + [step], child) for step, child in
                              _children(value, names, constants)]
            level = following
    return tuple(found.get(n, "!tensor %d (%s, %d dims)" % (
        n, tensors[n].dtype, tensors[n].dim())) for n in range(len(tensors)))


def follow(score_mod, mask_mod, path):
    """The tensor at `path` (a Modification's paths) from score_mod or
    mask_mod, read as the functions read it. torch.compile traces this."""
    if path.startswith("!"):
        raise ValueError(
            "attn.mods: under torch.compile, attn passes the tensors a "
            "modification reads to its kernels from where the score_mod or "
            "mask_mod finds them by name (a global, a closure variable, a "
            "default argument, or attributes and items of those), and %s is "
            "not found so: give it a name of its own that the function "
            "uses" % path[1:])
    steps = path.split("/")
    value = score_mod if steps[0] == "score" else mask_mod
    for step in steps[1:]:
        kind, _, arg = step.partition(":")
        if kind == "self":
            value = value.__self__
        elif kind == "func":
            value = value.__func__
        elif kind == "closure":
            value = value.__closure__[int(arg)].cell_contents
        elif kind == "module":
            module, _, name = arg.partition(":")
            value = getattr(sys.modules[module], name)
        elif kind == "global":
            value = value.__globals__[arg]
        elif kind == "default":
            value = value.__defaults__[int(arg)]
        elif kind == "kwdefault":
            value = value.__kwdefaults__[arg]
        elif kind == "attr":
            value = getattr(value, arg)
        elif kind == "key":
            value = value[arg]
        elif kind == "index":
            value = value[int(arg)]
        else:
            raise ValueError("attn.mods: %r is not a modification's path"
                             % path)
    return value


_REGISTRY = {}
_LOCK = threading.Lock()


def register(mod):
    """Makes `mod` (a Modification) known by its name to the custom ops;
    returns the name. A name registered before with other regions is a
    ValueError. The registry keeps the modification without its tensors
    (Modification.signature()): the ops take them as operands."""
    if not isinstance(mod, Modification):
        raise TypeError("attn.mods.register takes a Modification, not %s"
                        % type(mod).__name__)
    with _LOCK:
        known = _REGISTRY.get(mod.name)
        if known is not None and known.hash != mod.hash:
            raise ValueError(
                "attn.mods: the modification name %r is already registered "
                "with other regions; give this one another name (or none, "
                "to be named by its hash)" % mod.name)
        if known is None:
            _REGISTRY[mod.name] = mod.signature()
    return mod.name


def lookup(name):
    """The registered Modification of `name` (without tensors: its
    operands are ()); "" or None: None."""
    if not name:
        return None
    with _LOCK:
        mod = _REGISTRY.get(name)
    if mod is None:
        raise KeyError("attn.mods: no modification named %r is registered "
                       "(attn.scaled_dot_product_attention registers those "
                       "it is given; attn.mods.register others)" % name)
    return mod
