//===- KernelSpec.cpp - what a GPU kernel is specialised for --------------===//
//
// The facts about one generated kernel that its name, its signature and the
// runtime's manifest carry (docs/KernelABI.md). The kernel bodies come from
// attn-tile's tile form (TileToNVVM.cpp).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/KernelSpec.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <sstream>

using namespace mlir;
using namespace mlir::attn;

static std::string typeName(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  // The other element types of the tensors a modification reads.
  if (t.isInteger(1))
    return "bool";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(64))
    return "i64";
  return "?";
}

/// The memref parameter names of the tensors a modification reads.
static constexpr StringLiteral kModParamNames[] = {
    "mod0", "mod1", "mod2",  "mod3",  "mod4",  "mod5",  "mod6",  "mod7",
    "mod8", "mod9", "mod10", "mod11", "mod12", "mod13", "mod14", "mod15"};
static_assert(std::size(kModParamNames) == kMaxModOperands);

namespace {
/// One thing a kernel is specialised for: its manifest key and value, and
/// its part of the kernel's name.
struct Facet {
  const char *key;
  std::string value, namePart;
};
} // namespace

/// What `spec`'s kernel is specialised for, in the order of its name and
/// of its manifest line (the combine has no head dim and no causal kind).
static SmallVector<Facet> facets(const KernelSpec &spec) {
  std::string dtype = typeName(spec.elementType);
  bool combine = spec.kind == KernelKind::DecodeCombine;
  SmallVector<Facet> out = {{"dtype", dtype, "_" + dtype}};
  if (!combine)
    out.push_back({"head_dim", std::to_string(spec.headDim),
                   "_d" + std::to_string(spec.headDim)});
  out.push_back({"value_dim", std::to_string(spec.valueDim),
                 "_dv" + std::to_string(spec.valueDim)});
  if (!combine) {
    std::string causal = stringifyCausalKind(spec.causal).str();
    out.push_back({"causal", causal, "_" + causal});
  }
  if (spec.packedQueries)
    out.push_back({"q", "packed", "_varlen"});
  if (spec.paged)
    out.push_back({"kv", "paged", "_paged"});
  if (spec.balanced)
    out.push_back({"splits", "balanced", "_balanced"});
  if (spec.packedKeys)
    out.push_back({"kv", "packed", "_packed"});
  if (spec.mask != MaskOperand::None) {
    bool additive = spec.mask == MaskOperand::Additive;
    out.push_back({"mask", additive ? "add" : "bool",
                   additive ? "_addmask" : "_boolmask"});
  }
  if (spec.blockMaskQ) {
    std::string blocks =
        std::to_string(spec.blockMaskQ) + "x" + std::to_string(spec.blockMaskK);
    out.push_back({"blocks", blocks, "_blocks" + blocks});
  }
  if (spec.dq == DqMode::Atomic)
    out.push_back({"dq", "atomic", "_atomicdq"});
  if (spec.dq == DqMode::Ordered)
    out.push_back({"dq", "ordered", "_ordereddq"});
  if (spec.tf32)
    out.push_back({"f32", "tf32", "_tf32"});
  if (!spec.modName.empty()) {
    out.push_back({"mod", spec.modName, "_mod_" + spec.modName});
    out.push_back({"mod_hash", spec.modHash, ""});
  }
  if (!spec.modOperands.empty()) {
    std::string list;
    for (auto [type, rank] : spec.modOperands)
      list += (list.empty() ? "" : ",") + typeName(type) + ":" +
              std::to_string(rank);
    out.push_back({"mod_operands", list, ""});
  }
  return out;
}

std::string KernelSpec::name() const {
  std::string name;
  switch (kind) {
#define ATTN_KERNEL_KIND(ENUM, KIND, PREFIX)                                   \
  case KernelKind::ENUM:                                                       \
    name = #PREFIX;                                                            \
    break;
#include "attn-runtime/attn_kernel_abi.def"
  }
  for (const Facet &f : facets(*this))
    name += f.namePart;
  return name;
}

StringRef KernelSpec::kindName() const {
  switch (kind) {
#define ATTN_KERNEL_KIND(ENUM, KIND, PREFIX)                                   \
  case KernelKind::ENUM:                                                       \
    return #KIND;
#include "attn-runtime/attn_kernel_abi.def"
  }
  return "";
}

SmallVector<KernelParam> KernelSpec::params() const {
  static constexpr struct {
    StringLiteral kind, name, type;
    int64_t rank;
    StringLiteral when;
  } abi[] = {
#define ATTN_KERNEL_PARAM(KIND, NAME, TYPE, RANK, WHEN)                        \
  {#KIND, #NAME, #TYPE, RANK, #WHEN},
#include "attn-runtime/attn_kernel_abi.def"
  };
  SmallVector<KernelParam> params;
  for (const auto &p : abi) {
    bool taken =
        p.when == "always" || (p.when == "mask" && mask != MaskOperand::None) ||
        (p.when == "tma" && usesTma()) || (p.when == "paged" && paged) ||
        (p.when == "packed" && packedQueries) ||
        (p.when == "packed_kv" && packedKeys) ||
        (p.when == "dq_accum" && accumulatesDq()) ||
        (p.when == "dq_ordered" && dq == DqMode::Ordered) ||
        (p.when == "tma_dq_accum" && usesTma() && accumulatesDq()) ||
        (p.when == "blocks" && blockMaskQ) ||
        (p.when == "balanced" && balanced);
    if (p.kind == kindName() && taken)
      params.push_back({p.name, p.type, p.rank});
  }
  // The tensors the modifications read come last.
  for (auto [i, operand] : llvm::enumerate(modOperands))
    params.push_back({kModParamNames[i], "memref", operand.second});
  return params;
}

std::string KernelSpec::manifestLine() const {
  std::ostringstream os;
  os << "kernel " << name() << " kind=" << kindName().str();
  for (const Facet &f : facets(*this))
    os << " " << f.key << "=" << f.value;
  if (kind == KernelKind::Forward || isBackward())
    os << " block_q=" << rows();
  else
    os << " rows=" << rows();
  os << " block_kv=" << blockKV;
  if (valueBlocks > 1)
    os << " value_blocks=" << valueBlocks;
  os << " threads=" << threads() << " smem=" << sharedBytes;
  if (persistent)
    os << " grid=persistent";
  if (usesTma()) {
    // Box rows x columns and swizzle of each tensor map: column blocks of
    // the swizzled tiles (TileWgmma.cpp), a tile of query rows (Q, dO) or
    // of keys (K, V); the backward's row records whole, unswizzled f32.
    const char *separator = " tma=";
    int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
    for (const KernelParam &p : params()) {
      StringRef name = p.name;
      if (p.type != "tmap" || !name.consume_back("_tmap"))
        continue;
      bool queryRows =
          llvm::is_contained({"q", "dout", "row_stats", "dq_accum"}, name);
      int64_t rows = queryRows ? blockQ : blockKV;
      os << separator << name.str() << ":" << rows << "x";
      separator = ",";
      if (name == "row_stats") {
        os << kRowStatsFields << ":0";
        continue;
      }
      if (name == "dq_accum") {
        // f32 column blocks of the 128-byte swizzle
        // (TileLowering::lowerAccumulateBulk).
        os << kDqAccumBoxCols << ":" << kDqAccumBoxCols * 4;
        continue;
      }
      // The tile's columns: the head dim padded as attn-tile pads it.
      bool valueCols = name == "v" || name == "dout";
      int64_t cols = tileColumns(valueCols ? valueDim : headDim, target, bytes);
      int64_t swizzle = swizzleBytes(cols * bytes);
      os << swizzle / bytes << ":" << swizzle;
    }
  }
  os << " params=";
  const char *separator = "";
  for (const KernelParam &p : params()) {
    os << separator << p.name.str() << ":" << p.type.str();
    if (p.type == "memref" || p.type == "tmap")
      os << p.rank;
    separator = ",";
  }
  return os.str();
}

std::string KernelSpec::unsupportedReason() const {
  if (std::string why = operandsReason(); !why.empty())
    return why;
  if (valueBlocks > 1 && target == TileTarget::Sm90a && !isBackward())
    return "value blocks of the forward and decode (Dv > 256) have kernels "
           "on sm_80's mapping only";
  return scheduleReason();
}

std::string KernelSpec::operandsReason() const {
  if (!elementType ||
      !(elementType.isF16() || elementType.isBF16() || elementType.isF32()))
    return "the GPU kernels take f16, bf16 or f32 operands (tensor cores); "
           "got " +
           (elementType ? typeName(elementType) : std::string("none"));
  if (elementType.isF32() && target == TileTarget::Sm90a)
    return "f32 operands have kernels on sm_80's mapping only (mma.sync on "
           "TF32 parts)";
  // The tiles pad the head dims to whole 16-column tensor-core steps.
  bool atomic = isBackward() && accumulatesDq();
  int64_t widest = atomic ? kMaxAtomicBackwardHeadDim : kMaxKernelHeadDim;
  std::string which =
      atomic ? "of the kernels that accumulate dQ (atomic, ordered) " : "";
  if (kind != KernelKind::DecodeCombine && (headDim < 1 || headDim > widest))
    return "head dim D " + which + "must be in [1, " + std::to_string(widest) +
           "], got " + std::to_string(headDim);
  if (valueDim < 1 || valueDim > widest)
    return "value head dim Dv " + which + "must be in [1, " +
           std::to_string(widest) + "], got " + std::to_string(valueDim);
  if (!wholeChunkRows() && target == TileTarget::Sm90a)
    return "rows that are not whole 16-byte chunks (D = " +
           std::to_string(headDim) + ", Dv = " + std::to_string(valueDim) +
           ") are copied element by element, which the sm_90a kernels do "
           "not do (TMA); the sm_80 mapping does";
  return "";
}

std::string KernelSpec::scheduleReason() const {
  if (target == TileTarget::Sm90a && kind == KernelKind::Forward &&
      (warps % 4 || blockQ != 16 * warps || blockKV > 256 || blockKV % 16))
    return "the sm_90a kernels run warpgroups of 4 warps with 16 query rows "
           "per warp (m-tiles = 1) and tiles of a multiple of 16 keys, at most "
           "256; got " +
           std::to_string(warps) +
           " warps, block-q = " + std::to_string(blockQ) +
           ", block-kv = " + std::to_string(blockKV);
  if (isBackward()) {
    // Each nest's register tiles give every warp one or two 16-row MMA
    // tiles of its rows (sm_90a: one): keys in the dK/dV kernel, queries
    // in the others. The other tile's rows are a product's n and k: any
    // multiple of 16 up to 256 on sm_90a, up to 32 x warps on sm_80.
    bool keyRows = kind == KernelKind::BackwardKeyValue;
    int64_t rows = keyRows ? blockKV : blockQ,
            other = keyRows ? blockQ : blockKV;
    bool hopper = target == TileTarget::Sm90a;
    bool rowsFit = rows % (16 * warps) == 0 &&
                   rows / (16 * warps) <= (hopper ? 1 : 2);
    int64_t otherMax = hopper ? 256 : 32 * warps;
    bool otherFits = other % 16 == 0 && other >= 16 && other <= otherMax;
    if ((hopper && warps % 4) || !rowsFit || !otherFits) {
      std::string one = std::to_string(16 * warps),
                  two = std::to_string(32 * warps);
      std::string rowSizes = hopper ? one : one + " or " + two;
      return std::string("the ") + (hopper ? "sm_90a " : "") +
             "backward kernels give every warp " +
             (hopper ? "one 16-row tile (warpgroups of 4 warps)"
                     : "one or two 16-row tiles") +
             " of their rows, " + (keyRows ? "keys" : "queries") +
             " in this kernel: block-" + (keyRows ? "kv" : "q") + " must be " +
             rowSizes + " and block-" + (keyRows ? "q" : "kv") +
             " a multiple of 16 up to " + std::to_string(otherMax) +
             "; got " + std::to_string(warps) +
             " warps, block-q = " + std::to_string(blockQ) +
             ", block-kv = " + std::to_string(blockKV);
    }
  }
  if (accumulatesDq() && (!isBackward() || target != TileTarget::Sm90a))
    return "the dQ modes that accumulate (atomic, ordered) have GPU kernels "
           "for attn.attention_grad on sm_90a only: their dQ product reads "
           "dS transposed through wgmma's shared-memory descriptor";
  if (dq == DqMode::Ordered && (blockMaskQ || headDim % kDqAccumBoxCols))
    return "the ordered dQ mode needs no block mask (each key tile's query "
           "tiles one range) and a head dim that is a multiple of " +
           std::to_string(kDqAccumBoxCols) +
           " (one thread's tensor-map reductions)";
  if (paged && ((kind != KernelKind::DecodePartial && !packedQueries) ||
                mask != MaskOperand::None))
    return "a paged KV cache has GPU kernels for split-KV decode "
           "(attn.attention_partial) and packed batches (query_offsets), "
           "without a mask operand";
  if (packedQueries && !paged && !packedKeys)
    return "a packed batch's GPU kernels take packed keys (key_offsets) or "
           "a paged cache (kv_lens with block_table)";
  if (kind == KernelKind::DecodePartial && keySlices > 1 &&
      blockKV % (16 * warps))
    return "decode kernels split each K/V tile between the warps: block-kv "
           "must be a multiple of 16 x warps (" +
           std::to_string(16 * warps) + "), got " + std::to_string(blockKV);
  if (kind == KernelKind::DecodePartial && keySlices == 1 &&
      blockQ != 16 * warps)
    return "decode kernels without key slices give every warp one 16-row "
           "tile of the rows: rows must be 16 x warps (" +
           std::to_string(16 * warps) + "), got " + std::to_string(blockQ);
  return "";
}

//===----------------------------------------------------------------------===//
// The kernel signature
//===----------------------------------------------------------------------===//

namespace {

Type memrefType(MLIRContext *ctx, int64_t rank, Type elementType,
                int64_t lastDim) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  if (rank)
    shape.back() = lastDim;
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  return MemRefType::get(
      shape, elementType,
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
}

/// The element type of memref parameter `name`: the statistics (LSE, the
/// backward's row statistics), the dQ accumulator and the split-KV partial
/// results are f32, a boolean mask is i1 (a byte per element in memory),
/// the key counts and the block table of a paged cache, the offsets of
/// packed sequences and of balanced split-KV's work items, a block mask's
/// lists and the ordered dQ mode's turn counters i32, a tensor a
/// modification reads its own type, the rest the operands' type.
Type paramElementType(Builder &b, const KernelSpec &spec, StringRef name) {
  for (auto [i, operand] : llvm::enumerate(spec.modOperands))
    if (name == kModParamNames[i])
      return operand.first;
  if (llvm::is_contained(
          {"lse", "row_stats", "dq_accum", "partial_o", "partial_lse"}, name))
    return b.getF32Type();
  if (name == "mask" && spec.mask == MaskOperand::Boolean)
    return b.getI1Type();
  if (llvm::is_contained({"kv_lens", "block_table", "query_offsets",
                          "key_offsets", "split_offsets", "dq_turns"},
                         name) ||
      name.contains("_block_"))
    return b.getI32Type();
  return spec.elementType;
}

/// The static innermost size of memref parameter `name`: the head dim it
/// holds, a row statistics record's 4 fields (dynamic for the other
/// statistics and the mask).
int64_t paramLastDim(const KernelSpec &spec, StringRef name) {
  if (llvm::is_contained({"q", "k", "dq", "dk", "dq_accum"}, name))
    return spec.headDim;
  if (llvm::is_contained({"v", "o", "dout", "dv", "partial_o"}, name))
    return spec.valueDim;
  if (name == "row_stats")
    return kRowStatsFields;
  return ShapedType::kDynamic;
}

} // namespace

gpu::GPUFuncOp attn::createKernelFunc(OpBuilder &b, Location loc,
                                      const KernelSpec &spec) {
  SmallVector<Type> args;
  // The positions of the tensor maps among the arguments of the llvm.func
  // the kernel becomes, where a memref is its descriptor's 3 + 2 x rank
  // fields, as the ABI has it.
  SmallVector<int64_t> tensorMaps;
  int64_t position = 0;
  for (const KernelParam &p : spec.params()) {
    position += p.type == "memref" ? 3 + 2 * p.rank : 1;
    if (p.type == "tmap") {
      // The CUtensorMap's address in the param space; attn-grid-constants
      // makes it a by-value __grid_constant__ after the NVVM conversion,
      // which drops such argument attributes.
      tensorMaps.push_back(position - 1);
      args.push_back(LLVM::LLVMPointerType::get(b.getContext()));
    } else if (p.type == "memref")
      args.push_back(memrefType(b.getContext(), p.rank,
                                paramElementType(b, spec, p.name),
                                paramLastDim(spec, p.name)));
    else if (p.type == "f32")
      args.push_back(b.getF32Type());
    else
      args.push_back(b.getI64Type());
  }
  auto func = gpu::GPUFuncOp::create(b, loc, spec.name(),
                                     b.getFunctionType(args, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr("nvvm.maxntid",
                b.getDenseI32ArrayAttr({static_cast<int32_t>(spec.threads()), 1, 1}));
  func->setAttr("attn.manifest", b.getStringAttr(spec.manifestLine()));
  if (!tensorMaps.empty())
    func->setAttr(kGridConstantsAttr, b.getDenseI64ArrayAttr(tensorMaps));
  // setmaxnreg (warp-specialised kernels) needs a register cap at entry:
  // __launch_bounds__(threads, 1).
  if (spec.producer)
    func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  return func;
}

