// cp.async and the shared-memory row pitch: L2 sectors per byte copied.
//
//   nvcc -arch=sm_90a -O3 -o /tmp/cp_async_pitch bench/cp_async_pitch.cu
//   ncu --metrics lts__t_sectors_srcunit_tex.sum,lts__t_requests_srcunit_tex.sum,\
//       lts__t_sectors_srcunit_tex_lookup_hit.sum,dram__bytes_read.sum /tmp/cp_async_pitch
//
// Each CTA of 128 threads copies 64 rows of 256 bytes a step (16 threads a
// row, 16 bytes each), the rows 2048 bytes apart as the K rows of one head
// in a [pages, page, 8 heads, 128] bf16 pool, into shared rows of PITCH
// bytes: 272 (padded by 16, the sm_80 mapping's tiles) or 256. Modes: 0
// cp.async with a source size (the zero-fill form the kernels use), 1
// without, 2 with an L2::128B prefetch hint, 3 ld.global + st.shared. Each
// kernel runs twice; the second is timed. docs/GPU.md, "L2 promotion of
// the tensor maps", has the H200's counts.
#include <cstdio>
#include <cuda_runtime.h>
template <int MODE, int PITCH>
__global__ void copyk(const char *src, long rowsPerCta, long stride, int *sink) {
  extern __shared__ __align__(128) char sm[];
  int t = threadIdx.x;
  const char *base = src + (long)blockIdx.x * rowsPerCta * stride;
  float acc = 0;
  for (long r0 = 0; r0 < rowsPerCta; r0 += 64) {
    for (int i = 0; i < 8; ++i) {
      int row = (t >> 4) + 8 * i, chunk = t & 15;
      const char *g = base + (r0 + row) * stride + chunk * 16;
      unsigned s = (unsigned)__cvta_generic_to_shared(sm + row * PITCH + chunk * 16);
      if (MODE == 0) { int n = 16; asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(s), "l"(g), "r"(n)); }
      if (MODE == 1) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(g));
      if (MODE == 2) asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" :: "r"(s), "l"(g));
      if (MODE == 3) { int4 v = *(const int4 *)g; *(int4 *)(sm + row * PITCH + chunk * 16) = v; }
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    acc += sm[t * 4];
    __syncthreads();
  }
  if (acc == 12345.f) *sink = 1;
}
int main() {
  long rows = 1 << 14, ctas = 264, stride = 2048;
  char *src; int *sink;
  cudaMalloc(&src, ctas * rows * stride); cudaMalloc(&sink, 4);
  cudaMemset(src, 1, ctas * rows * stride);
  auto run = [&](auto k, int pitch, const char *name) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * pitch);
    k<<<ctas, 128, 64 * pitch>>>(src, rows, stride, sink);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a); k<<<ctas, 128, 64 * pitch>>>(src, rows, stride, sink); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    printf("%-28s %.3f ms, %.0f GB/s useful\n", name, ms, ctas * rows * 256.0 / ms / 1e6);
  };
  run(copyk<0, 272>, 272, "zfill pitch272");
  run(copyk<1, 272>, 272, "plain pitch272");
  run(copyk<2, 272>, 272, "plain L2::128B pitch272");
  run(copyk<0, 256>, 256, "zfill pitch256");
  run(copyk<3, 272>, 272, "ldg+sts pitch272");
  printf("ideal sectors per kernel: %ld\n", ctas * rows * 256 / 32);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  cudaFree(src);
  cudaFree(sink);
  return 0;
}
