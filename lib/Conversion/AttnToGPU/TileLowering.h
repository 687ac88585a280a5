//===- TileLowering.h - state of the tile form's GPU lowering ---*- C++ -*-===//
//
// The mapping of attn-tile's tile form onto one CTA (docs/TileToGPU.md),
// shared by its two halves: TileToNVVM.cpp (the structure: loops, memory
// tiles, the kernel) and TileFragments.cpp (register tiles: layouts,
// lane-partial sums, products, maps, reductions, stores). Private to
// lib/Conversion/AttnToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_TILELOWERING_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_TILELOWERING_H

#include "Emitter.h"
#include "MmaLayout.h"
#include "TileToNVVM.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <vector>

namespace mlir {
namespace attn {
namespace tile_lowering {

using Mma = MmaM16N8K16;

/// Iterations of a loop without a copy ring that issue together.
constexpr int64_t kUnroll = 4;

/// Where the rows of a register tile live.
struct FragLayout {
  /// The leading dimension is the key slice, one per warp.
  bool sliced = false;
  /// The rows are split between the warps (else every warp's rows start at
  /// row 0: sliced tiles and tiles every warp holds whole).
  bool warpRows = false;
  /// 16-row MMA tiles per warp, and columns (0: a row tile, one value per
  /// row).
  int64_t mTiles = 0, cols = 0;

  /// Elements per 16-row MMA tile and per thread.
  int64_t perTile() const {
    return cols ? cols / Mma::kN * Mma::kAccElements : 2;
  }
  int64_t size() const { return mTiles * perTile(); }
  /// Whether every warp holds the same elements.
  bool replicated() const { return !sliced && !warpRows; }
  bool sameRows(const FragLayout &o) const {
    return warpRows == o.warpRows && mTiles == o.mTiles;
  }
};

/// A register tile: its layout and this thread's elements.
struct Fragment {
  FragLayout layout;
  SmallVector<Value> elems;
  /// A row tile held lane-partial: a row's value is the sum of its four
  /// lanes' elements.
  bool partial = false;
};

/// How a tile.map body depends on its lane-partial inputs.
enum class Linearity {
  /// Not at all.
  Full,
  /// Linearly: the body of the lanes' parts sums to the body of the sum.
  Partial,
  /// Otherwise: the inputs must be summed across the lanes first.
  Mixed
};

/// A memref kernel parameter.
struct Global {
  StringRef name;
  Value ptr;
  Type elementType;
  SmallVector<Value> sizes, strides;
  /// Its CUDA tensor map (a generic pointer to the by-value parameter), in
  /// kernels that copy by TMA.
  Value tensorMap;
  /// Whether the parameter's rows (its static last dim) are whole 16-byte
  /// chunks, which the runtime then aligns to 16 bytes: copied by 16 bytes
  /// and stored in pairs. Other rows have the element's alignment only. A
  /// view keeps its parameter's.
  bool chunkRows = false;
};

/// A memory tile in shared memory: byte offset (i32), static shape, row
/// pitch in elements. sm_80: rows padded by 16 bytes. sm_90a: the layout
/// that wgmma's descriptors read, `swizzle` bytes (128, 64 or 32) per row
/// of a column block, blocks one after another, the 16-byte chunks of row
/// r XORed with r's bits (the pattern repeats every 8 rows and every tile
/// is 1024-byte aligned); `pitch` is then the row's elements.
struct SharedTile {
  Value offset;
  SmallVector<int64_t> shape;
  int64_t pitch;
  Type elementType;
  int64_t swizzle = 0;
  /// Swizzled tiles: the rows of one column block, those of the tile the
  /// rows belong to (a view that splits the rows into key slices keeps
  /// them: slice s starts s x rows-per-slice rows into every block).
  int64_t blockRows = 0;
  int64_t elementBytes() const {
    return elementType.getIntOrFloatBitWidth() / 8;
  }
};

/// What the threads that run a lowered block do. Warp-specialised kernels
/// (sm_90a, TileTma.cpp) lower the loop nest twice: once for the producer
/// warpgroup (one of its threads where every copy is by TMA), which issues
/// the copies only, and once for the consumer warps, which do all the rest.
enum class Role { All, Producer, Consumer };

/// Threads of a warpgroup (wgmma's unit, and the producer's).
inline constexpr int64_t kWarpgroupThreads = 128;

/// One kernel's lowering: the value maps and the per-thread state.
class TileLowering {
public:
  TileLowering(OpBuilder &b, Location loc, TileTarget target, bool producer,
               bool persistent, bool tf32)
      : b(b), e{b, loc}, hopper(target == TileTarget::Sm90a),
        specialized(producer), persistent(persistent), tf32(tf32) {}

  FailureOr<int64_t> run(func::FuncOp source, gpu::GPUFuncOp kernel,
                         ArrayRef<KernelParam> params);

private:
  OpBuilder &b;
  Emitter e;
  /// The sm_90a mapping: swizzled memory tiles (copied by TMA where the
  /// kernel has a tensor map for the source).
  bool hopper;
  /// Products on wgmma, per warpgroup: sm_90a schedules whose rows fill
  /// warpgroups. One with key slices (decode: each warp multiplies its own
  /// slice) keeps mma.sync, reading the swizzled tiles with ldmatrix.
  bool wgmma = false;
  /// Warp-specialised (with TMA): a producer warpgroup after the `warps`
  /// consumer warps; the consumers release each stage on an mbarrier that
  /// the producer waits for before it refills the stage.
  bool specialized;
  /// Persistent (warp-specialised kernels only): each role walks the
  /// scf.forall's tiles in a grid-stride loop over a one-dimensional grid;
  /// the barriers' phases run on across tiles.
  bool persistent;
  /// Products of f32 tiles: one TF32 mma per step instead of 3xTF32's three.
  bool tf32;

  // The schedule of the loop nest being lowered.
  int64_t warps = 0, keySlices = 1, blockQ = 0, stages = 0;
  Value tid, warp, lane, smem;
  Block *entry = nullptr;
  std::optional<Mma> frag;

  IRMapping scalars;
  /// The scalar kernel parameters, by name.
  llvm::StringMap<Value> paramArgs;
  DenseMap<Value, Global *> globals;
  std::vector<std::unique_ptr<Global>> globalStorage;
  DenseMap<Value, SharedTile> shared;
  DenseMap<Value, Fragment> regs;
  /// Lane-partial tiles already summed across their lanes, per block: a
  /// later read in the same block reuses the sum (its shuffles queue
  /// behind the stores before it; the forward's LSE after O's stores).
  DenseMap<std::pair<Value, Block *>, Fragment> summedIn;
  /// Tiles read into A-operand registers before the loop that uses them:
  /// per m-tile and k-step, four registers.
  DenseMap<Value, SmallVector<Value>> hoistedA;

  /// The longest row any tile.load of the kernel reads (the head dim, or
  /// a value block's columns).
  int64_t widestSourceRow = 0;
  int64_t tileBytes = 0, scratchBytes = 0;
  /// The stage of accumulating stores by bulk reduction (sm_90a): its byte
  /// offset and size once laid out; whether a reduction was issued (the
  /// kernel then waits for them all before it exits).
  std::optional<int64_t> reduceStageOffset;
  int64_t reduceStageBytes = 0;
  bool bulkReduces = false;
  /// Whether a tile.await_turn was lowered: the accumulating stores, whose
  /// order the turns fix, must be issued by thread 0 alone.
  bool awaitsTurns = false;
  /// wgmma groups committed so far, and the results still in flight: their
  /// group, accumulator struct and layout.
  struct PendingWgmma {
    int64_t group;
    Value accumulators;
    FragLayout layout;
    Block *block;
  };
  int64_t wgmmaCommitted = 0;
  DenseMap<Value, PendingWgmma> wgmmaPending;
  /// The latest row statistics reduced while a wgmma of this block was in
  /// flight, and the groups committed then: a wait for one of those groups
  /// first stores them to the anchor slot (anchorWgmmaWait).
  struct WaitAnchor {
    SmallVector<Value> values;
    Block *block = nullptr;
    int64_t committed = 0;
  } waitAnchor;
  bool uncommittedLoads = false, tilesRetired = false;

  // TMA copies (sm_90a kernels that take tensor maps; TileTma.cpp). Each
  // group of copies (an scf.if with loads, as cp.async's commit groups)
  // completes on one of `stages` mbarriers, slot g % stages for group g;
  // the loads outside any scf.if (Q) on one more. In a warp-specialised
  // kernel whose stages leave no iteration of slack otherwise, the loads
  // of each ring lag (kRingLagAttr) have a set of barriers of their own.
  bool tma = false;
  /// Warp-specialised kernels whose producer also copies by cp.async (a
  /// source without a tensor map: a paged cache's rows, gathered through
  /// its block table): every thread of the producer warpgroup runs its
  /// lowering, and after each such load arrives on the load's full barrier
  /// once its copies have landed (cp.async.mbarrier.arrive.noinc).
  bool producerCopies = false;
  /// The threads that copy by cp.async in this role (the producer
  /// warpgroup's, else all), and this thread's index among them.
  Value copyTid;
  int64_t copyThreads = 0;
  /// The arrivals that complete a group's full barrier, per set: one
  /// where the set has TMA copies (the thread that arms it with their
  /// bytes), and one per producer thread for each of its cp.async loads;
  /// the same for the barrier of the loads outside any scf.if. Whether a
  /// set's (or those loads') tiles come by cp.async: wgmma reads them
  /// after an async-proxy fence.
  SmallVector<int64_t> groupArrivals;
  SmallVector<bool> groupCopiesRows;
  int64_t topLevelArrivals = 0;
  bool topLevelCopiesRows = false;
  Role role = Role::All;
  /// Byte offset of the mbarriers, after the tiles: set once they are laid
  /// out.
  arith::ConstantOp barrierOffset;
  /// Loads by TMA outside any scf.if, and whether this role has waited for
  /// them.
  int64_t topLevelLoads = 0;
  bool topLevelWaited = false;
  /// Loads by cp.async in a kernel that copies by TMA (sources without a
  /// tensor map, outside any scf.if: decode's Q, whose rows span heads),
  /// and whether they are waited for.
  bool cpAsyncPending = false;
  /// Groups issued before the pipelined loop; its iteration index while it
  /// is lowered; the index of the group being lowered (null outside one),
  /// the bytes its loads of each barrier set bring and the full barrier of
  /// each set once armed.
  int64_t prologueGroups = 0;
  Value loopIter, groupIndex;
  SmallVector<int64_t> groupBytes;
  SmallVector<Value> groupFull;
  /// The largest lag of a ring's loads (kRingLagAttr), and the barrier
  /// sets: one per lag (set l for the loads of lag l) where a single set
  /// would leave a group no iteration between its copies and its first
  /// read (warp-specialised, stages <= lag + 1), else one for every load
  /// of a group, freed `ringLag` iterations late.
  int64_t ringLag = 0, loadSets = 1;
  /// Persistent kernels, per role: the phases of the barriers before this
  /// tile, as one i32 (bit s: how many times stage s was filled, mod 2;
  /// bit kQPhaseBit: the tiles so far, mod 2: Q's phase), and the same
  /// after this tile, set once the pipelined loop is lowered. A tile's
  /// group g fills stage g % stages, as the tile form indexes its rings.
  /// Null in other kernels (every phase starts at 0).
  Value ringPhases, nextRingPhases;
  /// Persistent kernels: the last op of the tile's body that reads a tile
  /// loaded outside any scf.if (Q), after which the consumers free Q; the
  /// last that reads a ring, after which they free the stages that the
  /// pipelined loop (`ringTrips` iterations) left to later reads: those of
  /// its last `lag` iterations, for each barrier set.
  Operation *lastTopLevelRead = nullptr, *lastRingRead = nullptr;
  bool topLevelEmptyWaited = false;
  Value ringTrips;

  Type ptr3() { return LLVM::LLVMPointerType::get(b.getContext(), 3); }
  /// The dynamic shared memory (made at the kernel's entry on first use).
  Value sharedBase();
  Value sharedAt(Value byteOffset) {
    return e.gep(sharedBase(), b.getI8Type(), byteOffset);
  }
  Type convert(Type t) { return t.isIndex() ? e.i32() : t; }

  // Ops.
  /// Lowers the ops of `block`; the operands of its terminator go to
  /// `yielded`, lane-partial where `partial` says so.
  LogicalResult lowerBlock(Block &block, SmallVectorImpl<Value> *yielded,
                           ArrayRef<bool> partial = {});
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerScalar(Operation *op);
  LogicalResult lowerView(Operation *op);
  LogicalResult lowerForall(scf::ForallOp op);
  LogicalResult lowerFor(scf::ForOp op);
  /// The registers a thread holds for the register tiles `op` carries.
  int64_t carriedRegisters(scf::ForOp op) const;
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerAlloc(memref::AllocOp op);
  /// One 16-byte cp.async into column `col` of row `r` of tile `t` from the
  /// source row at `idx`: zero-filled where `valid` is false or past the
  /// source's `length` columns (read from column 0 there).
  void cpAsyncChunk(const Global &g, const SharedTile &t, ArrayRef<Value> idx,
                    Value r, Value col, Value valid, int64_t length);
  /// cp.async of a tile whose rows' 16-byte chunks neither divide the
  /// threads nor are a multiple of them, a round of rows at a time.
  LogicalResult lowerLoadByRows(TileLoadOp op, const Global &g,
                                const SharedTile &t, Value rows, Value last,
                                int64_t length);
  LogicalResult lowerSubView(memref::SubViewOp op);
  /// memref.load or tensor.extract of a kernel parameter.
  LogicalResult lowerGlobalLoad(Operation *op);
  /// A scalar memref.store into a kernel parameter (balanced split-KV's
  /// offsets): every thread stores the same value.
  LogicalResult lowerGlobalStore(memref::StoreOp op);
  /// The address of element `indices` of global buffer `g`: every index
  /// scaled by its stride.
  Value globalAddress(const Global &g, ArrayRef<Value> indices);
  LogicalResult lowerLoad(TileLoadOp op);
  /// tile.await_turn and tile.pass_turn, by thread 0 (TileTurns.cpp).
  LogicalResult lowerAwaitTurn(TileAwaitTurnOp op);
  LogicalResult lowerPassTurn(TilePassTurnOp op);
  /// The global address of a turn op's i32 counter, or null after an error
  /// on `op`.
  Value turnCounter(Operation *op, Value turns, ValueRange indices);
  /// The cp.async copies of `op` by this role's copying threads (an error
  /// for rows that are not whole 16-byte chunks in a kernel that copies by
  /// TMA).
  LogicalResult copyRows(TileLoadOp op, const Global &g, const SharedTile &t);
  /// The producer warpgroup's cp.async copies of `op` (a source without a
  /// tensor map), which complete on the load's full barrier.
  LogicalResult lowerLoadByProducer(TileLoadOp op, const Global &g,
                                    const SharedTile &t);
  /// The kernel parameter that `load` copies from (through its views), if
  /// mapped.
  Global *sourceOf(TileLoadOp load) const;
  LogicalResult lowerStore(TileStoreOp op);
  /// A register tile stored into the memory tile `t`, then a barrier of the
  /// CTA's threads (and on sm_90a a proxy fence: wgmma reads it next).
  LogicalResult lowerStoreShared(TileStoreOp op, const Fragment &f,
                                 const SharedTile &t);
  /// sm_90a: an accumulating store of the f32 tile `f` into `g` through a
  /// stage in shared memory and one bulk reduction per row.
  LogicalResult lowerAccumulateBulk(TileStoreOp op, const Fragment &f,
                                    const Global &g);
  LogicalResult lowerMatmul(TileMatmulOp op);
  /// The lhs of `op` for either mapping: a memory tile, or a register tile
  /// with the rows of the accumulator layout `acc` and `k` columns.
  LogicalResult matmulLhs(TileMatmulOp op, const FragLayout &acc, int64_t k,
                          std::optional<SharedTile> &tile,
                          std::optional<Fragment> &fragment);
  /// What a warp's mma.sync product reads of its rhs memory tile: the
  /// first row (with key slices, its slice's), whether the rows are N
  /// (transposed: K for S = Q K^T) or K (V for O = P V), and the product's
  /// N and K.
  struct MmaRhs {
    Value firstRow;
    bool transpose;
    int64_t n, k;
  };
  FailureOr<MmaRhs> mmaRhs(TileMatmulOp op, const FragLayout &l,
                           const SharedTile &r);
  /// The sm_90a form (TileWgmma.cpp): one wgmma per k-step per warpgroup.
  LogicalResult lowerMatmulWgmma(TileMatmulOp op, const Fragment &acc,
                                 const SharedTile &rhs);
  /// f32 operands (TileTf32.cpp): mma.sync m16n8k8 on TF32 parts.
  LogicalResult lowerMatmulTf32(TileMatmulOp op, const Fragment &acc,
                                const SharedTile &rhs);
  /// The A operand of m-tile `mt`, k-step `kk` (8 columns) of an f32 memory
  /// tile whose warp rows start at `rowBase`: TF32 parts, as
  /// lowerMatmulTf32 takes them (TileTf32.cpp).
  SmallVector<Value> sharedATf32(const SharedTile &tile, Value rowBase,
                                 int64_t mt, int64_t kk);
  /// The shared-memory address of element (row + dRow, col + dCol) of the
  /// rank-2 tile `t`, for this lane's (row, col) and constant (dRow, dCol):
  /// a base that depends on the lane, and the constant part as a constant
  /// offset from it, which the load takes as its immediate. (Each distinct
  /// offset computed in full is loop-invariant apart from the stage, and
  /// LLVM kept one register per offset across the loop: f32 products at
  /// D = 128 and 16-bit ones past D = 256 spilled.) Swizzled tiles fold
  /// whole 8-row periods and column blocks; the rest enters the base.
  Value tileAddress(const SharedTile &t, Value row, Value col, int64_t dRow,
                    int64_t dCol);
  /// The TF32 parts of f32 values: their rounding, then with 3xTF32 the
  /// rounding of each remainder, as i32 registers.
  SmallVector<Value> tf32Parts(ArrayRef<Value> values);
  LogicalResult lowerMap(TileMapOp op);
  LogicalResult lowerReduce(TileReduceOp op);
  /// tile.work_item: the lanes of each warp take a sequence each
  /// (TileWorkItem.cpp).
  LogicalResult lowerWorkItem(TileWorkItemOp op);

  // Values.
  FailureOr<FragLayout> layoutOf(Operation *where, RankedTensorType type);
  /// The fragments of `tensor`, summed across lanes if they are partial.
  FailureOr<Fragment> fragmentOf(Operation *where, Value tensor);
  /// The fragments of `tensor` as they are held.
  FailureOr<Fragment> heldFragmentOf(Operation *where, Value tensor);
  Fragment summed(const Fragment &f);
  /// `f`, the fragments of `tensor`, summed across lanes once per block.
  Fragment summedOf(Value tensor, const Fragment &f);
  Fragment lanePartial(const Fragment &f);
  /// Whether `v`, a row tile, can be held lane-partial, given that the
  /// loop-carried values in `assumed` are.
  bool staysPartial(Value v, const DenseSet<Value> &assumed);
  FailureOr<SmallVector<Value>> flatten(Operation *where, Value old,
                                        bool partial = false);
  FailureOr<int64_t> flatSize(Operation *where, Value old);
  LogicalResult bind(Operation *where, Value old, ValueRange flat,
                     bool partial = false);
  /// The i32 row and column of element `i` of a tile of `layout`.
  Value rowOf(const FragLayout &layout, int64_t i);
  Value colOf(const FragLayout &layout, int64_t i);
  /// Evaluates a tile.load / tile.store row region at row `row`.
  FailureOr<SmallVector<Value>> rowIndices(Region &region, Value row);
  Value globalOffset(const Global &g, ArrayRef<Value> leading, Value column);

  /// The i32 byte offset in shared memory of element (row, col) of a rank-2
  /// memory tile.
  Value tileOffset(const SharedTile &tile, Value row, Value col);
  /// The wgmma descriptor of the 8-row groups of `tile` at `byteOffset`:
  /// K-major (rows are M or N, the reduction runs along them) or MN-major.
  Value wgmmaDescriptor(const SharedTile &tile, Value byteOffset, bool kMajor);
  /// Waits for the wgmma that makes `result`, if it is still in flight.
  void awaitWgmma(Value result);
  /// Binds the fragments of the wgmmas of groups up to `lastGroup`, which
  /// have completed, that this block issued.
  void completeWgmma(int64_t lastGroup);
  /// Waits, before `op`, for the wgmmas whose results its regions read.
  void awaitWgmmaIn(Operation *op);
  /// Waits for every wgmma in flight if one was committed at or after
  /// group `since` (the end of a block: none may cross it).
  void awaitAllWgmma(int64_t since);
  /// Before a wait for group `group`: pins the work since it to the wait.
  void anchorWgmmaWait(int64_t group);

  // Instructions.
  SmallVector<Value> ldmatrix4(Value address, bool transpose);
  SmallVector<Value> mma(Type elementType, ArrayRef<Value> a,
                         ArrayRef<Value> bFrag, ArrayRef<Value> c);
  Value packPair(Type elementType, Value lo, Value hi);
  /// The A operand of m-tile `mt`, k-step `kk` from a register tile in the
  /// accumulator layout (P for O = P V): four packed pairs.
  SmallVector<Value> packA(const Fragment &f, int64_t mt, int64_t kk,
                           Type elementType);
  SmallVector<Value> sharedA(const SharedTile &tile, Value rowBase, int64_t mt,
                             int64_t kk);
  /// Makes this thread's generic-proxy writes to shared memory visible to
  /// the async proxy (wgmma's descriptors, bulk copies) that reads them
  /// next; a barrier then orders every thread's.
  void fenceAsyncProxy();
  void waitForStages(int64_t pending);
  void retireTiles();

  // TMA (TileTma.cpp).
  Value barrierAt(Value slot);
  /// 8 bytes after the mbarriers that nothing reads: the stores that keep
  /// ptxas from hoisting a wgmma wait (anchorWgmmaWait).
  Value anchorSlot() { return barrierAt(e.c32(barrierCount())); }
  /// Runs the ops `body` builds in one thread of the role (the producer
  /// warpgroup's first, or thread 0).
  void inOneThread(function_ref<void()> body);
  /// Waits until `barrier` completes the phase of `parity`.
  void waitParity(Value barrier, Value parity);
  /// Slots: `stages` full barriers, Q's, then with a producer `stages`
  /// empty ones, persistent, Q's empty one, and for each barrier set past
  /// the first `stages` full and `stages` empty ones.
  int64_t barrierCount() const {
    if (!specialized)
      return stages + 1;
    return laterSetsBase() + (loadSets - 1) * 2 * stages;
  }
  int64_t topLevelEmptySlot() const { return 2 * stages + 1; }
  int64_t laterSetsBase() const {
    return 2 * stages + 1 + (persistent ? 1 : 0);
  }
  /// The full and the empty barrier of set `set` in stage `stage`.
  Value fullSlot(int64_t set, Value stage);
  Value emptySlot(int64_t set, Value stage);
  /// The barrier set of `load`.
  int64_t setOf(TileLoadOp load) const;
  /// The iterations after a group's own in which the consumers wait for
  /// set `set`'s copies, and in which they free them.
  int64_t waitLag(int64_t set) const { return loadSets > 1 ? set : 0; }
  int64_t releaseLag(int64_t set) const { return loadSets > 1 ? set : ringLag; }
  /// Reads the lags of the loads in `body` (ringLag, loadSets): an error
  /// on a lag that is negative or not below the stages.
  LogicalResult countLoadLags(Block &body);
  /// Counts the arrivals on each set's full barrier per group of `body`'s
  /// copies (groupArrivals): an error where two groups differ.
  LogicalResult countGroupArrivals(Block &body);
  static constexpr int64_t kQPhaseBit = 16;
  /// The parity of the fill of group `g` (i32) of this tile in its stage.
  Value fillParity(Value g);
  /// The parity of this tile's phase of the Q barrier.
  Value qParity();
  /// The persistent grid-stride loop around one role's lowering of `body`.
  LogicalResult lowerPersistent(scf::ForallOp op, Block &body);
  /// One arrival per consumer warpgroup on barrier `slot`.
  void arriveFromWarpgroups(Value slot);
  /// Persistent kernels, after the pipelined loop (lowered as `loop`):
  /// records its trips and the barriers' phases after the tile.
  void endRing(scf::ForOp loop);
  void releaseLaggedStages();
  /// For each barrier set, `body` on each of the last `lag(set)` groups of
  /// a loop of `trips` iterations that exists (an scf.if each).
  void forLastGroups(Value trips, function_ref<int64_t(int64_t)> lag,
                     function_ref<void(Value group, int64_t set)> body);
  /// The iterations of a lowered loop (i32 bounds).
  Value tripCount(scf::ForOp loop);
  /// The producer's and the consumers' lowering of the body of `op`.
  LogicalResult lowerRoles(scf::ForallOp op);
  /// The consumers are done with the stage of set `set`'s loads of group
  /// `iter`.
  void releaseStage(Value iter, int64_t set = 0);
  /// A barrier of the threads that run this role (the consumers' own once
  /// the roles split).
  void ctaBarrier();
  /// Whether the loads outside any scf.if are still to be waited for.
  bool topLevelPending() const {
    return tma && role != Role::Producer && topLevelLoads && !topLevelWaited;
  }
  /// In a kernel that copies by TMA: waits for the loads outside any scf.if,
  /// by TMA and by cp.async, if they are still to be waited for.
  void awaitTopLevelLoads();
  /// Initialises the mbarriers (thread 0) and publishes them to the CTA.
  void initBarriers();
  /// Inside the then-block of `op`, an scf.if with loads: starts its group
  /// (the barrier of each set is armed with the bytes of its copies at the
  /// first of them: armGroup). An error if the group lacks a set's loads.
  LogicalResult openGroup(scf::IfOp op);
  /// The full barrier of set `set` in the group being lowered, armed (by
  /// the producer after it waited for the stage to be free).
  Value armGroup(int64_t set);
  /// Waits for set `set`'s loads of group `iter` of the pipelined loop
  /// (or, with a null `iter`, for the loads outside any scf.if).
  void waitForGroup(Value iter, int64_t set = 0);
  LogicalResult lowerLoadTma(TileLoadOp op, const Global &g,
                             const SharedTile &t);
};

/// The linearity of `body` (a tile.map's, `rank` index arguments first) in
/// the element arguments whose `partial` flag is set.
Linearity linearity(Block &body, int64_t rank, ArrayRef<bool> partial);

/// Element of a row tile with the rows of element `i` of `l`.
int64_t rowElement(const FragLayout &l, int64_t i);

} // namespace tile_lowering
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_TILELOWERING_H
