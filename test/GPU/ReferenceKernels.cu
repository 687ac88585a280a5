//===- ReferenceKernels.cu - plain CUDA kernels with attn's kernel ABI ----===//
//
// Simple, obviously correct kernels with the parameters, grids and semantics
// of docs/KernelABI.md (memref descriptors expanded, scale_log2, window,
// the mask operand), for every dtype, head dim 64 and 128, causal kind and
// mask kind (none, add, bool): forward, decode (over each sequence's own
// K/V, and paged: kv=paged), and for f16 and bf16 the
// backward's three kinds (deterministic: each output element summed by
// one warp in a fixed order). nvcc turns
// them into PTX and CMake writes their manifest (test/GPU/CMakeLists.txt,
// target attn-reference-kernels), so the runtime, its Python binding, the
// GPU tests and the benchmark can run end to end on a GPU without the
// compiler, and a failure in the compiler's kernels is not mistaken for one
// in the runtime. They are not fast: one warp per query row (backward_kv:
// per key), each lane holding D / 32 elements of q and of the accumulator.
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdint.h>

namespace {

constexpr int kMaxPerLane = 8; // head dims up to 256
constexpr float kLn2 = 0.693147180559945309f;
constexpr float kLog2e = 1.442695040888963407f;

__device__ float toFloat(float x) { return x; }
__device__ float toFloat(__half x) { return __half2float(x); }
__device__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ T fromFloat(float x);
template <> __device__ float fromFloat<float>(float x) { return x; }
template <> __device__ __half fromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// A strided view of a memref descriptor's aligned pointer.
template <typename T, int Rank> struct View {
  T *data;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

__device__ float warpSum(float x) {
  for (int offset = 16; offset > 0; offset /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

/// x . y for x held by the warp (x[t] is element lane + 32 t) and y a row
/// of n elements in memory.
template <typename T>
__device__ float dotLanes(const float (&x)[kMaxPerLane], const T *y,
                          int64_t n) {
  int lane = threadIdx.x % 32;
  float partial = 0;
#pragma unroll
  for (int t = 0; t < kMaxPerLane; ++t) {
    int64_t e = lane + 32 * t;
    if (e < n)
      partial += x[t] * toFloat(y[e]);
  }
  return warpSum(partial);
}

enum Causal { None = 0, TopLeft = 1, BottomRight = 2 };

/// A paged cache's block table (kv=paged, i32 [B, max_pages]): key j of
/// sequence b is slot j % page_size of page table[b][j / page_size] of the
/// pools k and v [P, Hkv, page_size, D]. A null table: the keys are rows
/// of the sequence's own K/V [B, Hkv, Sk, D].
using BlockTable = View<const int32_t, 2>;

/// The row of key j of sequence b, KV head kh, in k or v.
template <typename T>
__device__ const T *keyRow(const View<T, 4> &k, int64_t b, int64_t kh,
                           int64_t j, const BlockTable &table) {
  if (!table.data)
    return k.data + b * k.strides[0] + kh * k.strides[1] + j * k.strides[2];
  int64_t pageSize = k.sizes[2];
  int64_t page =
      table.data[b * table.strides[0] + j / pageSize * table.strides[1]];
  return k.data + page * k.strides[0] + kh * k.strides[1] +
         j % pageSize * k.strides[2];
}

/// The forward mask operand (docs/KernelABI.md, "Masks given as tensors"):
/// AddMask elements (the kernel's dtype) are added to the scaled scores,
/// BoolMask bytes hide the key where they are zero.
enum Mask { NoMask = 0, AddMask = 1, BoolMask = 2 };

/// Online softmax over keys [lo, hi) of one (batch, KV head) for one query
/// row held by a warp: m and l in base 2, acc unnormalised. `maskRow` is the
/// row's mask (M != NoMask), element j at maskRow[j * maskStride]; a key
/// whose score is -inf is skipped. With a block table, K and V are page
/// pools (keyRow).
template <typename T, int M = NoMask, typename TM = uint8_t>
__device__ void attendRow(const View<T, 4> &k, const View<T, 4> &v, int64_t b,
                          int64_t kh, const float (&q)[kMaxPerLane], int64_t d,
                          int64_t dv, float scaleLog2, int64_t lo, int64_t hi,
                          float &m, float &l, float (&acc)[kMaxPerLane],
                          const TM *maskRow = nullptr, int64_t maskStride = 0,
                          const BlockTable &table = {}) {
  int lane = threadIdx.x % 32;
  for (int64_t j = lo; j < hi; ++j) {
    float bias = 0;
    if constexpr (M == BoolMask) {
      if (!maskRow[j * maskStride])
        continue; // the same j on every lane: the warp stays converged
    } else if constexpr (M == AddMask) {
      bias = toFloat(maskRow[j * maskStride]) * kLog2e;
    }
    const T *kj = keyRow(k, b, kh, j, table);
    float s = dotLanes(q, kj, d) * scaleLog2 + bias;
    if (M != NoMask && s == -INFINITY)
      continue; // hidden; keeps m = -inf - -inf out of the update
    float mNew = fmaxf(m, s);
    float correction = exp2f(m - mNew); // m = -inf at first: 0
    float p = exp2f(s - mNew);
    l = l * correction + p;
    const T *vj = keyRow(v, b, kh, j, table);
#pragma unroll
    for (int t = 0; t < kMaxPerLane; ++t) {
      int64_t i = lane + 32 * t;
      if (i < dv)
        acc[t] = acc[t] * correction + p * toFloat(vj[i]);
    }
    m = mNew;
  }
}

/// The keys query row `i` may see: [lo, hi).
template <int C>
__device__ void visibleKeys(int64_t i, int64_t sq, int64_t sk, int64_t window,
                            int64_t &lo, int64_t &hi) {
  lo = 0;
  hi = sk;
  if (C == None)
    return;
  int64_t diag = C == TopLeft ? i : i + sk - sq;
  hi = diag + 1 < sk ? diag + 1 : sk;
  if (window >= 0 && diag - window > 0)
    lo = diag - window;
  if (hi < lo)
    hi = lo;
}

template <typename T>
__device__ void loadQuery(const View<T, 4> &q, int64_t b, int64_t h, int64_t i,
                          float (&out)[kMaxPerLane]) {
  int lane = threadIdx.x % 32;
  const T *qi = q.data + b * q.strides[0] + h * q.strides[1] + i * q.strides[2];
#pragma unroll
  for (int t = 0; t < kMaxPerLane; ++t) {
    int64_t e = lane + 32 * t;
    out[t] = e < q.sizes[3] ? toFloat(qi[e]) : 0.0f;
  }
}

/// Writes a lane's elements of a row held as in loadQuery, times `scale`,
/// to the first `n` elements at `out`.
template <typename T>
__device__ void storeRow(T *out, const float (&x)[kMaxPerLane], int64_t n,
                         float scale) {
  int lane = threadIdx.x % 32;
#pragma unroll
  for (int t = 0; t < kMaxPerLane; ++t) {
    int64_t e = lane + 32 * t;
    if (e < n)
      out[e] = fromFloat<T>(x[t] * scale);
  }
}

template <typename T, int C, int M = NoMask, typename TM = uint8_t>
__device__ void forward(View<T, 4> q, View<T, 4> k, View<T, 4> v,
                        View<T, 4> o, View<float, 3> lse, float scaleLog2,
                        int64_t window, View<TM, 4> mask = {}) {
  int warps = blockDim.x / 32;
  int64_t i = int64_t(blockIdx.x) * warps + threadIdx.x / 32;
  int64_t h = blockIdx.y, b = blockIdx.z;
  int64_t sq = q.sizes[2], sk = k.sizes[2], d = q.sizes[3], dv = v.sizes[3];
  if (i >= sq)
    return;
  int64_t kh = h / (q.sizes[1] / k.sizes[1]);
  float qi[kMaxPerLane], acc[kMaxPerLane] = {};
  loadQuery(q, b, h, i, qi);
  int64_t lo, hi;
  visibleKeys<C>(i, sq, sk, window, lo, hi);
  float m = -INFINITY, l = 0;
  // The mask descriptor has the full sizes [B, Hq, Sq, Sk] and stride 0
  // over the dims it broadcasts.
  const TM *maskRow = M == NoMask
                          ? nullptr
                          : mask.data + b * mask.strides[0] +
                                h * mask.strides[1] + i * mask.strides[2];
  attendRow<T, M, TM>(k, v, b, kh, qi, d, dv, scaleLog2, lo, hi, m, l, acc,
                      maskRow, mask.strides[3]);
  int lane = threadIdx.x % 32;
  T *oi = o.data + b * o.strides[0] + h * o.strides[1] + i * o.strides[2];
#pragma unroll
  for (int t = 0; t < kMaxPerLane; ++t) {
    int64_t e = lane + 32 * t;
    if (e < dv)
      oi[e] = fromFloat<T>(l > 0 ? acc[t] / l : 0.0f);
  }
  if (lse.data && lane == 0)
    lse.data[b * lse.strides[0] + h * lse.strides[1] + i * lse.strides[2]] =
        l > 0 ? (m + log2f(l)) * kLn2 : -INFINITY;
}

/// A split of the decode partial kernel. Paged (a block table and
/// lengths): sequence b has kv_lens[b] keys, clamped to [0, max_pages *
/// page_size], and the splits divide that length.
template <typename T, int C>
__device__ void
decodePartial(View<T, 4> q, View<T, 4> k, View<T, 4> v, View<float, 5> po,
              View<float, 4> plse, float scaleLog2, int64_t window,
              View<const int32_t, 1> kvLens = {}, BlockTable table = {}) {
  int64_t b = blockIdx.z;
  int64_t sq = q.sizes[2], sk = k.sizes[2], d = q.sizes[3], dv = v.sizes[3];
  if (table.data) {
    int64_t capacity = table.sizes[1] * k.sizes[2];
    int64_t n = kvLens.data[b * kvLens.strides[0]];
    sk = n < 0 ? 0 : n < capacity ? n : capacity;
  }
  int64_t group = q.sizes[1] / k.sizes[1];
  // Grid y walks the KV heads and the row tiles of each: this CTA takes
  // its share of the group * sq rows of KV head kh.
  int64_t tiles = gridDim.y / k.sizes[1];
  int64_t s = blockIdx.x, kh = blockIdx.y / tiles;
  int64_t perTile = (group * sq + tiles - 1) / tiles;
  int64_t r0 = (blockIdx.y % tiles) * perTile;
  int64_t r1 = r0 + perTile < group * sq ? r0 + perTile : group * sq;
  int lane = threadIdx.x % 32;
  int warps = blockDim.x / 32;
  // Split s of N = partial_o's first size covers keys [s chunk, +chunk).
  int64_t chunk = (sk + po.sizes[0] - 1) / po.sizes[0];
  int64_t first = s * chunk, last = first + chunk < sk ? first + chunk : sk;
  for (int64_t r = r0 + threadIdx.x / 32; r < r1; r += warps) {
    int64_t h = kh * group + r / sq, i = r % sq;
    float qi[kMaxPerLane], acc[kMaxPerLane] = {};
    loadQuery(q, b, h, i, qi);
    int64_t lo, hi;
    visibleKeys<C>(i, sq, sk, window, lo, hi);
    lo = lo > first ? lo : first;
    hi = hi < last ? hi : last;
    float m = -INFINITY, l = 0;
    attendRow(k, v, b, kh, qi, d, dv, scaleLog2, lo, hi, m, l, acc,
              static_cast<const uint8_t *>(nullptr), 0, table);
    float *out = po.data + s * po.strides[0] + b * po.strides[1] +
                 h * po.strides[2] + i * po.strides[3];
#pragma unroll
    for (int t = 0; t < kMaxPerLane; ++t) {
      int64_t e = lane + 32 * t;
      if (e < dv)
        out[e] = l > 0 ? acc[t] / l : 0.0f;
    }
    if (lane == 0)
      plse.data[s * plse.strides[0] + b * plse.strides[1] +
                h * plse.strides[2] + i * plse.strides[3]] =
          l > 0 ? (m + log2f(l)) * kLn2 : -INFINITY;
  }
}

template <typename T>
__device__ void decodeCombine(View<float, 5> po, View<float, 4> plse,
                              View<T, 4> o, View<float, 3> lse, int64_t rows) {
  int64_t n = po.sizes[0], hq = o.sizes[1], sq = o.sizes[2], dv = o.sizes[3];
  int64_t total = o.sizes[0] * hq * sq;
  int lane = threadIdx.x % 32;
  int warps = blockDim.x / 32;
  for (int64_t r = threadIdx.x / 32; r < rows; r += warps) {
    int64_t row = int64_t(blockIdx.x) * rows + r;
    if (row >= total)
      return;
    int64_t b = row / (hq * sq), h = row / sq % hq, i = row % sq;
    float big = -INFINITY;
    for (int64_t s = 0; s < n; ++s)
      big = fmaxf(big, plse.data[s * plse.strides[0] + b * plse.strides[1] +
                                 h * plse.strides[2] + i * plse.strides[3]]);
    float sum = 0, acc[kMaxPerLane] = {};
    for (int64_t s = 0; big > -INFINITY && s < n; ++s) {
      float w = expf(plse.data[s * plse.strides[0] + b * plse.strides[1] +
                               h * plse.strides[2] + i * plse.strides[3]] -
                     big);
      sum += w;
      const float *part = po.data + s * po.strides[0] + b * po.strides[1] +
                          h * po.strides[2] + i * po.strides[3];
#pragma unroll
      for (int t = 0; t < kMaxPerLane; ++t) {
        int64_t e = lane + 32 * t;
        if (e < dv)
          acc[t] += w * part[e];
      }
    }
    T *out = o.data + b * o.strides[0] + h * o.strides[1] + i * o.strides[2];
#pragma unroll
    for (int t = 0; t < kMaxPerLane; ++t) {
      int64_t e = lane + 32 * t;
      if (e < dv)
        out[e] = fromFloat<T>(sum > 0 ? acc[t] / sum : 0.0f);
    }
    if (lse.data && lane == 0)
      lse.data[b * lse.strides[0] + h * lse.strides[1] + i * lse.strides[2]] =
          sum > 0 ? big + logf(sum) : -INFINITY;
  }
}

/// A row of a rank-4 view: element e of row i of head h, batch b, at
/// rowOf(t, b, h, i)[e].
template <typename T>
__device__ T *rowOf(const View<T, 4> &t, int64_t b, int64_t h, int64_t i) {
  return t.data + b * t.strides[0] + h * t.strides[1] + i * t.strides[2];
}

template <typename T>
__device__ float &at(const View<T, 3> &t, int64_t b, int64_t h, int64_t i) {
  return t.data[b * t.strides[0] + h * t.strides[1] + i * t.strides[2]];
}

/// The fields of the backward's row statistics records (row_stats, f32
/// [B, Hq, Sq, 4], docs/KernelABI.md): {LSE log2(e) (+inf where LSE =
/// -inf), D = rowsum(dO * O), 0, 0}.
enum RowStat { StatLse2 = 0, StatDot = 1, StatFields = 4 };

/// Field `f` of query row i's record.
__device__ float &stat(const View<float, 4> &t, int64_t b, int64_t h, int64_t i,
                       int f) {
  return t.data[b * t.strides[0] + h * t.strides[1] + i * t.strides[2] +
                f * t.strides[3]];
}

/// The arguments of the backward kernels (docs/KernelABI.md), as views.
template <typename T, typename TM> struct Grads {
  View<T, 4> q, k, v, o, dout;
  View<float, 3> lse;
  View<T, 4> dq, dk, dv;
  View<float, 4> rowStats;
  View<TM, 4> mask;
  float scaleLog2;
  int64_t window;
};

/// The base-2 score of query row i of head h (q_i held by the warp) and key
/// j of KV head kh, with the mask's bias; -inf where the mask hides the
/// key.
template <typename T, int M, typename TM>
__device__ float score2(const Grads<T, TM> &g, const float (&qi)[kMaxPerLane],
                        int64_t b, int64_t h, int64_t kh, int64_t i,
                        int64_t j) {
  float bias = 0;
  if constexpr (M != NoMask) {
    TM x = g.mask.data[b * g.mask.strides[0] + h * g.mask.strides[1] +
                       i * g.mask.strides[2] + j * g.mask.strides[3]];
    if constexpr (M == BoolMask) {
      if (!x)
        return -INFINITY; // the same on every lane
    } else {
      bias = toFloat(x) * kLog2e;
    }
  }
  return dotLanes(qi, rowOf(g.k, b, kh, j), g.q.sizes[3]) * g.scaleLog2 + bias;
}

/// backward_dot: query row i's record, {LSE_i log2(e) (+inf where LSE_i =
/// -inf), D_i = rowsum(dO_i * O_i), 0, 0}, one query row per warp.
template <typename T, int C, int M, typename TM>
__device__ void backwardDot(const Grads<T, TM> &g) {
  int warps = blockDim.x / 32;
  int64_t i = int64_t(blockIdx.x) * warps + threadIdx.x / 32;
  int64_t h = blockIdx.y, b = blockIdx.z;
  if (i >= g.o.sizes[2])
    return;
  float oi[kMaxPerLane];
  loadQuery(g.o, b, h, i, oi);
  float sum = dotLanes(oi, rowOf(g.dout, b, h, i), g.o.sizes[3]);
  if (threadIdx.x % 32 == 0) {
    // +inf for a row that sees no key: exp2(s - +inf) = 0 for every score.
    float lse = at(g.lse, b, h, i);
    float lse2 = lse == -INFINITY ? INFINITY : lse * kLog2e;
    float record[StatFields] = {lse2, sum, 0, 0};
    for (int f = 0; f < StatFields; ++f)
      stat(g.rowStats, b, h, i, f) = record[f];
  }
}

/// backward_q: dQ_i = scale sum_j dS_ij K_j, dS_ij = P_ij (dO_i . V_j - D_i),
/// P_ij = exp(s_ij - LSE_i) (exp2 of the base-2 score minus the record's
/// LSE_i log2(e)), D_i from the record, one query row per warp, keys in
/// order.
template <typename T, int C, int M, typename TM>
__device__ void backwardQuery(const Grads<T, TM> &g) {
  int warps = blockDim.x / 32, lane = threadIdx.x % 32;
  int64_t i = int64_t(blockIdx.x) * warps + threadIdx.x / 32;
  int64_t h = blockIdx.y, b = blockIdx.z;
  int64_t sq = g.q.sizes[2], sk = g.k.sizes[2], d = g.q.sizes[3];
  int64_t dv = g.v.sizes[3];
  if (i >= sq)
    return;
  int64_t kh = h / (g.q.sizes[1] / g.k.sizes[1]);
  float qi[kMaxPerLane], doi[kMaxPerLane], acc[kMaxPerLane] = {};
  loadQuery(g.q, b, h, i, qi);
  loadQuery(g.dout, b, h, i, doi);
  float lse2 = stat(g.rowStats, b, h, i, StatLse2);
  float di = stat(g.rowStats, b, h, i, StatDot);
  int64_t lo, hi;
  visibleKeys<C>(i, sq, sk, g.window, lo, hi);
  // A row that sees no key (LSE = -inf, its record +inf) has no gradient.
  for (int64_t j = lo; lse2 < INFINITY && j < hi; ++j) {
    float s = score2<T, M, TM>(g, qi, b, h, kh, i, j);
    if (s == -INFINITY)
      continue;
    float p = exp2f(s - lse2);
    float ds = p * (dotLanes(doi, rowOf(g.v, b, kh, j), dv) - di);
    const T *kj = rowOf(g.k, b, kh, j);
#pragma unroll
    for (int t = 0; t < kMaxPerLane; ++t) {
      int64_t e = lane + 32 * t;
      if (e < d)
        acc[t] += ds * toFloat(kj[e]);
    }
  }
  storeRow(rowOf(g.dq, b, h, i), acc, d, g.scaleLog2 * kLn2);
}

/// backward_kv: dV_j = sum P_ij dO_i and dK_j = scale sum dS_ij Q_i over
/// the rows i of every query head of KV head kh's group that see key j, P_ij
/// and D_i as backward_q has them, one key per warp, rows in order.
template <typename T, int C, int M, typename TM>
__device__ void backwardKeyValue(const Grads<T, TM> &g) {
  int warps = blockDim.x / 32;
  int64_t j = int64_t(blockIdx.x) * warps + threadIdx.x / 32;
  int64_t kh = blockIdx.y, b = blockIdx.z;
  int64_t sq = g.q.sizes[2], sk = g.k.sizes[2], d = g.q.sizes[3];
  int64_t dv = g.v.sizes[3];
  if (j >= sk)
    return;
  int64_t group = g.q.sizes[1] / g.k.sizes[1];
  float dkj[kMaxPerLane] = {}, dvj[kMaxPerLane] = {};
  for (int64_t h = kh * group; h < (kh + 1) * group; ++h) {
    for (int64_t i = 0; i < sq; ++i) {
      int64_t lo, hi;
      visibleKeys<C>(i, sq, sk, g.window, lo, hi);
      float lse2 = stat(g.rowStats, b, h, i, StatLse2);
      if (j < lo || j >= hi || lse2 == INFINITY)
        continue;
      float qi[kMaxPerLane], doi[kMaxPerLane];
      loadQuery(g.q, b, h, i, qi);
      float s = score2<T, M, TM>(g, qi, b, h, kh, i, j);
      if (s == -INFINITY)
        continue;
      float p = exp2f(s - lse2);
      loadQuery(g.dout, b, h, i, doi);
      float ds = p * (dotLanes(doi, rowOf(g.v, b, kh, j), dv) -
                      stat(g.rowStats, b, h, i, StatDot));
#pragma unroll
      for (int t = 0; t < kMaxPerLane; ++t) {
        dvj[t] += p * doi[t];
        dkj[t] += ds * qi[t];
      }
    }
  }
  storeRow(rowOf(g.dk, b, kh, j), dkj, d, g.scaleLog2 * kLn2);
  storeRow(rowOf(g.dv, b, kh, j), dvj, dv, 1.0f);
}

} // namespace

// The expanded memref descriptor of docs/KernelABI.md: allocated pointer,
// aligned pointer, offset, sizes, strides.
#define ATTN_MEMREF1(T, n)                                                     \
  T *n##Alloc, T *n##Data, int64_t n##Offset, int64_t n##N0, int64_t n##S0
#define ATTN_MEMREF2(T, n)                                                     \
  T *n##Alloc, T *n##Data, int64_t n##Offset, int64_t n##N0, int64_t n##N1,    \
      int64_t n##S0, int64_t n##S1
#define ATTN_MEMREF3(T, n)                                                     \
  T *n##Alloc, T *n##Data, int64_t n##Offset, int64_t n##N0, int64_t n##N1,    \
      int64_t n##N2, int64_t n##S0, int64_t n##S1, int64_t n##S2
#define ATTN_MEMREF4(T, n)                                                     \
  T *n##Alloc, T *n##Data, int64_t n##Offset, int64_t n##N0, int64_t n##N1,    \
      int64_t n##N2, int64_t n##N3, int64_t n##S0, int64_t n##S1,              \
      int64_t n##S2, int64_t n##S3
#define ATTN_MEMREF5(T, n)                                                     \
  T *n##Alloc, T *n##Data, int64_t n##Offset, int64_t n##N0, int64_t n##N1,    \
      int64_t n##N2, int64_t n##N3, int64_t n##N4, int64_t n##S0,              \
      int64_t n##S1, int64_t n##S2, int64_t n##S3, int64_t n##S4
#define ATTN_VIEW1(T, n)                                                       \
  View<T, 1> {                                                                 \
    n##Data + n##Offset, {n##N0}, { n##S0 }                                    \
  }
#define ATTN_VIEW2(T, n)                                                       \
  View<T, 2> {                                                                 \
    n##Data + n##Offset, {n##N0, n##N1}, { n##S0, n##S1 }                      \
  }
#define ATTN_VIEW3(T, n)                                                       \
  View<T, 3> {                                                                 \
    n##Data ? n##Data + n##Offset : nullptr, {n##N0, n##N1, n##N2}, {          \
      n##S0, n##S1, n##S2                                                      \
    }                                                                          \
  }
#define ATTN_VIEW4(T, n)                                                       \
  View<T, 4> {                                                                 \
    n##Data + n##Offset, {n##N0, n##N1, n##N2, n##N3}, {                       \
      n##S0, n##S1, n##S2, n##S3                                               \
    }                                                                          \
  }
#define ATTN_VIEW5(T, n)                                                       \
  View<T, 5> {                                                                 \
    n##Data + n##Offset, {n##N0, n##N1, n##N2, n##N3, n##N4}, {                \
      n##S0, n##S1, n##S2, n##S3, n##S4                                        \
    }                                                                          \
  }

#define ATTN_FORWARD(T, NAME, C)                                               \
  extern "C" __global__ void NAME(                                             \
      ATTN_MEMREF4(T, q), ATTN_MEMREF4(T, k), ATTN_MEMREF4(T, v),              \
      ATTN_MEMREF4(T, o), ATTN_MEMREF3(float, lse), float scaleLog2,           \
      int64_t window) {                                                        \
    forward<T, C>(ATTN_VIEW4(T, q), ATTN_VIEW4(T, k), ATTN_VIEW4(T, v),        \
                  ATTN_VIEW4(T, o), ATTN_VIEW3(float, lse), scaleLog2,         \
                  window);                                                     \
  }
// A forward kernel with a mask: its descriptor follows lse (mask=add: the
// kernel's dtype; mask=bool: one byte per element).
#define ATTN_FORWARD_MASKED(T, TM, NAME, C, M)                                 \
  extern "C" __global__ void NAME(                                             \
      ATTN_MEMREF4(T, q), ATTN_MEMREF4(T, k), ATTN_MEMREF4(T, v),              \
      ATTN_MEMREF4(T, o), ATTN_MEMREF3(float, lse), ATTN_MEMREF4(TM, mask),    \
      float scaleLog2, int64_t window) {                                       \
    forward<T, C, M, TM>(ATTN_VIEW4(T, q), ATTN_VIEW4(T, k), ATTN_VIEW4(T, v), \
                         ATTN_VIEW4(T, o), ATTN_VIEW3(float, lse), scaleLog2,  \
                         window, ATTN_VIEW4(TM, mask));                        \
  }
#define ATTN_DECODE(T, NAME, C)                                                \
  extern "C" __global__ void NAME(                                             \
      ATTN_MEMREF4(T, q), ATTN_MEMREF4(T, k), ATTN_MEMREF4(T, v),              \
      ATTN_MEMREF5(float, po), ATTN_MEMREF4(float, plse), float scaleLog2,     \
      int64_t window) {                                                        \
    decodePartial<T, C>(ATTN_VIEW4(T, q), ATTN_VIEW4(T, k), ATTN_VIEW4(T, v),  \
                        ATTN_VIEW5(float, po), ATTN_VIEW4(float, plse),        \
                        scaleLog2, window);                                    \
  }
// kv=paged: k and v are page pools, kv_lens and block_table follow v.
#define ATTN_DECODE_PAGED(T, NAME, C)                                          \
  extern "C" __global__ void NAME(                                             \
      ATTN_MEMREF4(T, q), ATTN_MEMREF4(T, k), ATTN_MEMREF4(T, v),              \
      ATTN_MEMREF1(const int32_t, lens), ATTN_MEMREF2(const int32_t, table),   \
      ATTN_MEMREF5(float, po), ATTN_MEMREF4(float, plse), float scaleLog2,     \
      int64_t window) {                                                        \
    decodePartial<T, C>(ATTN_VIEW4(T, q), ATTN_VIEW4(T, k), ATTN_VIEW4(T, v),  \
                        ATTN_VIEW5(float, po), ATTN_VIEW4(float, plse),        \
                        scaleLog2, window, ATTN_VIEW1(const int32_t, lens),    \
                        ATTN_VIEW2(const int32_t, table));                     \
  }
// The combine kernel's rows per CTA is its manifest `rows` (4).
#define ATTN_COMBINE(T, NAME)                                                  \
  extern "C" __global__ void NAME(ATTN_MEMREF5(float, po),                     \
                                  ATTN_MEMREF4(float, plse),                   \
                                  ATTN_MEMREF4(T, o),                          \
                                  ATTN_MEMREF3(float, lse)) {                  \
    decodeCombine<T>(ATTN_VIEW5(float, po), ATTN_VIEW4(float, plse),           \
                     ATTN_VIEW4(T, o), ATTN_VIEW3(float, lse), 4);             \
  }

// The backward kernels: the same parameters for the three kinds, the mask
// after row_stats in masked ones. FN is backwardDot, backwardKeyValue or
// backwardQuery.
#define ATTN_BACKWARD_MEMREFS(T)                                               \
  ATTN_MEMREF4(T, q), ATTN_MEMREF4(T, k), ATTN_MEMREF4(T, v),                  \
      ATTN_MEMREF4(T, o), ATTN_MEMREF4(T, dout), ATTN_MEMREF3(float, lse),     \
      ATTN_MEMREF4(T, dq), ATTN_MEMREF4(T, dk), ATTN_MEMREF4(T, dv),           \
      ATTN_MEMREF4(float, rowStats)
#define ATTN_BACKWARD_VIEWS(T)                                                 \
  ATTN_VIEW4(T, q), ATTN_VIEW4(T, k), ATTN_VIEW4(T, v), ATTN_VIEW4(T, o),      \
      ATTN_VIEW4(T, dout), ATTN_VIEW3(float, lse), ATTN_VIEW4(T, dq),          \
      ATTN_VIEW4(T, dk), ATTN_VIEW4(T, dv), ATTN_VIEW4(float, rowStats)
#define ATTN_BACKWARD(T, NAME, FN, C)                                          \
  extern "C" __global__ void NAME(ATTN_BACKWARD_MEMREFS(T), float scaleLog2,   \
                                  int64_t window) {                            \
    FN<T, C, NoMask, uint8_t>(                                                 \
        Grads<T, uint8_t>{ATTN_BACKWARD_VIEWS(T), {}, scaleLog2, window});     \
  }
#define ATTN_BACKWARD_MASKED(T, TM, NAME, FN, C, M)                            \
  extern "C" __global__ void NAME(ATTN_BACKWARD_MEMREFS(T),                    \
                                  ATTN_MEMREF4(TM, mask), float scaleLog2,     \
                                  int64_t window) {                            \
    FN<T, C, M, TM>(Grads<T, TM>{ATTN_BACKWARD_VIEWS(T), ATTN_VIEW4(TM, mask), \
                                 scaleLog2, window});                          \
  }
#define ATTN_BACKWARD_MASKS(T, NAME, FN, C)                                    \
  ATTN_BACKWARD(T, NAME, FN, C)                                                \
  ATTN_BACKWARD_MASKED(T, T, NAME##_add, FN, C, AddMask)                       \
  ATTN_BACKWARD_MASKED(T, uint8_t, NAME##_bool, FN, C, BoolMask)
#define ATTN_BACKWARD_KINDS(T, TY, D, CN, C)                                   \
  ATTN_BACKWARD_MASKS(T, ref_bwd_dot_##TY##_d##D##_##CN, backwardDot, C)       \
  ATTN_BACKWARD_MASKS(T, ref_bwd_kv_##TY##_d##D##_##CN, backwardKeyValue, C)   \
  ATTN_BACKWARD_MASKS(T, ref_bwd_q_##TY##_d##D##_##CN, backwardQuery, C)
// f16 and bf16, as the compiler's backward kernels.
#define ATTN_BACKWARD_ALL(T, TY, D)                                            \
  ATTN_BACKWARD_KINDS(T, TY, D, none, None)                                    \
  ATTN_BACKWARD_KINDS(T, TY, D, top_left, TopLeft)                             \
  ATTN_BACKWARD_KINDS(T, TY, D, bottom_right, BottomRight)

// The code reads D from the descriptors; each head dim has entries of its
// own because the manifest names one entry per (kind, dtype, D, causal,
// mask).
#define ATTN_MASKED(T, TY, D, CN, C)                                           \
  ATTN_FORWARD_MASKED(T, T, ref_fwd_##TY##_d##D##_##CN##_add, C, AddMask)      \
  ATTN_FORWARD_MASKED(T, uint8_t, ref_fwd_##TY##_d##D##_##CN##_bool, C,        \
                      BoolMask)
#define ATTN_ALL(T, TY, D)                                                     \
  ATTN_FORWARD(T, ref_fwd_##TY##_d##D##_none, None)                            \
  ATTN_FORWARD(T, ref_fwd_##TY##_d##D##_top_left, TopLeft)                     \
  ATTN_FORWARD(T, ref_fwd_##TY##_d##D##_bottom_right, BottomRight)             \
  ATTN_MASKED(T, TY, D, none, None)                                            \
  ATTN_MASKED(T, TY, D, top_left, TopLeft)                                     \
  ATTN_MASKED(T, TY, D, bottom_right, BottomRight)                             \
  ATTN_DECODE(T, ref_dec_##TY##_d##D##_none, None)                             \
  ATTN_DECODE(T, ref_dec_##TY##_d##D##_top_left, TopLeft)                      \
  ATTN_DECODE(T, ref_dec_##TY##_d##D##_bottom_right, BottomRight)              \
  ATTN_DECODE_PAGED(T, ref_dec_##TY##_d##D##_none_paged, None)                 \
  ATTN_DECODE_PAGED(T, ref_dec_##TY##_d##D##_top_left_paged, TopLeft)          \
  ATTN_DECODE_PAGED(T, ref_dec_##TY##_d##D##_bottom_right_paged, BottomRight)  \
  ATTN_COMBINE(T, ref_comb_##TY##_dv##D)

ATTN_ALL(float, f32, 64)
ATTN_ALL(float, f32, 128)
ATTN_ALL(__half, f16, 64)
ATTN_ALL(__half, f16, 128)
ATTN_ALL(__nv_bfloat16, bf16, 64)
ATTN_ALL(__nv_bfloat16, bf16, 128)
ATTN_BACKWARD_ALL(__half, f16, 64)
ATTN_BACKWARD_ALL(__half, f16, 128)
ATTN_BACKWARD_ALL(__nv_bfloat16, bf16, 64)
ATTN_BACKWARD_ALL(__nv_bfloat16, bf16, 128)
