"""FlexAttention-style score and mask modifications, traced into MLIR.

    from attn.mods import Modification
    softcap = Modification(lambda s, b, h, i, j: torch.tanh(s / 30) * 30,
                           name="softcap")
    prefix = Modification(mask_mod=lambda b, h, i, j: (j < 256) | (j <= i))
    softcap.name, softcap.score_region(), prefix.mask_region()

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
  (attn.mods.tanh(x)...) without torch.

Anything else is a TypeError that names it: a captured torch.Tensor (the
GPU kernels take no tensor operands yet), another torch function or
operator, a Python `if`/`and`/`or`/`not` on a symbolic value (bool() of it:
write torch.where, &, |, ~), int() or indexing with one.

The text is deterministic: the same functions give the same regions. The
name is the user's (1 to 64 of [A-Za-z0-9_]: it names GPU kernels), else
"py" and the first 16 hex digits of the sha256 of the region text.

The registry (register, lookup) maps names to modifications for the
custom ops, which take a name rather than a function. No torch needed here.
"""

import hashlib
import math
import re
import threading

__all__ = ["Modification", "ModValue", "abs", "exp", "exp2", "log",
           "lookup", "maximum", "minimum", "register", "sqrt", "tanh",
           "where"]

_NAME = re.compile(r"[A-Za-z0-9_]{1,64}\Z")
_INDEX_ARGS = ("b", "h", "i", "j")
_SUPPORTED = ("+ - * / on scores and indices, // % on indices, unary -, "
              "abs(), < <= > >= == !=, & | ~ on booleans, and torch.tanh, "
              "exp, exp2, log, sqrt, abs, where, minimum, maximum")


def _unsupported(what):
    return TypeError("attn.mods: %s is not supported in a score_mod or "
                     "mask_mod (supported: %s)" % (what, _SUPPORTED))


def _captured(what):
    return TypeError("attn.mods: the modification uses a captured "
                     "torch.Tensor (%s); attn's GPU kernels take no tensor "
                     "operands (mod_operands) yet: compute the value from "
                     "b, h, q_idx, kv_idx and constants" % what)


class _Region:
    """The ops of one region being traced."""

    def __init__(self):
        self.lines = []
        self.count = 0
        self.constants = {}

    def emit(self, fmt, type_, *operands):
        name = "%%x%d" % self.count
        self.count += 1
        self.lines.append("%s = %s" % (name, fmt % tuple(
            o.name for o in operands)))
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


def _tensor_type():
    import sys
    torch = sys.modules.get("torch")
    return torch.Tensor if torch is not None else None


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
                           "captured tensor or list, range(), int())"
                           % self.type)

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

    # torch functions: torch.tanh(x) etc. with a ModValue argument.
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensor = _tensor_type()
        if tensor is not None:
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, tensor):
                    raise _captured("an argument of %s" % _func_name(func))
        impl = _torch_impl(func)
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
    import torch
    table = {torch.tanh: tanh, torch.exp: exp, torch.exp2: exp2,
             torch.log: log, torch.sqrt: sqrt, torch.abs: abs,
             torch.where: where, torch.minimum: minimum,
             torch.maximum: maximum}
    return table.get(func)


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
    tensor = _tensor_type()
    if tensor is not None and isinstance(value, tensor):
        raise _captured("in an arithmetic operation")
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
    tensor = _tensor_type()
    if tensor is not None and isinstance(value, tensor):
        raise _captured("in an arithmetic operation")
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
        tensor = _tensor_type()
        if tensor is not None and isinstance(x, tensor):
            raise _captured("an argument of %s" % op)
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


def _trace(fn, score, keyword):
    region = _Region()
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
    head = "^bb0(%b: index, %h: index, %i: index, %j: index" + (
        ", %s: f32):" if score else "):")
    body = ["  " + line for line in region.lines]
    return "\n".join(["%s {" % keyword, head] + body
                     + ["  attn.yield %s : %s" % (result.name, want), "}"])


class Modification:
    """A traced score_mod(score, b, h, q_idx, kv_idx) -> score and/or
    mask_mod(b, h, q_idx, kv_idx) -> bool, FlexAttention's argument order,
    and its name (name=None: "py" + 16 hex digits of the regions' sha256).
    Equal when name and regions are."""

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
        self._score = (None if score_mod is None
                       else _trace(score_mod, True, "score_mod"))
        self._mask = (None if mask_mod is None
                      else _trace(mask_mod, False, "mask_mod"))
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

    def __eq__(self, other):
        return (isinstance(other, Modification) and self.name == other.name
                and self.hash == other.hash)

    def __hash__(self):
        return hash((self.name, self.hash))

    def __repr__(self):
        return "Modification(name=%r, hash=%s)" % (self.name, self.hash[:16])


_REGISTRY = {}
_LOCK = threading.Lock()


def register(mod):
    """Makes `mod` (a Modification) known by its name to the custom ops;
    returns the name. A name registered before with other regions is a
    ValueError."""
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
            _REGISTRY[mod.name] = mod
    return mod.name


def lookup(name):
    """The registered Modification of `name`; "" or None: None."""
    if not name:
        return None
    with _LOCK:
        mod = _REGISTRY.get(name)
    if mod is None:
        raise KeyError("attn.mods: no modification named %r is registered "
                       "(attn.scaled_dot_product_attention registers those "
                       "it is given; attn.mods.register others)" % name)
    return mod
