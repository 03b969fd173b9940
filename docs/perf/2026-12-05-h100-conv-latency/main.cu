// Times hand variants of the generated conv1d multi kernel (l128f32w4) against each other:
// CUDA events around each launch, a 256 MiB L2 flush before every launch, medians of 30.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void fill(__half* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2half(((h & 0xffff) / 32768.0f) - 1.0f);
  }
}
int main(int argc, char** argv) {
  const int rounds = argc > 1 ? 1 : 3, reps = argc > 1 ? 1 : 33;
  const long N = 1024, L = 8192, F = 32, KW = 7;
  __half *x, *w, *o, *ref; char* flush;
  cudaMalloc(&x, N * L * 2); cudaMalloc(&w, KW * F * 2); cudaMalloc(&o, N * L * F * 2); cudaMalloc(&ref, N * L * F * 2);
  cudaMalloc(&flush, 256 << 20);
  fill<<<1024, 256>>>(x, N * L, 1); fill<<<1, 256>>>(w, KW * F, 2);
  CUmodule mod; CUresult rc = cuModuleLoad(&mod, "kernels.cubin");
  if (rc != CUDA_SUCCESS) { printf("cuModuleLoad: %d\n", (int)rc); return 1; }
  struct V { const char* name; CUfunction k; } vs[] = {{"gen"}, {"genp"}, {"simple8"}, {"simple8p"}, {"cons4v"}, {"cons4vp"}, {"tri"}, {"trip"}, {"pf8"}, {"pf16"}, {"pf32"}};
  for (auto& v : vs) { char n[64]; snprintf(n, 64, "v_%s", v.name); if (cuModuleGetFunction(&v.k, mod, n) != CUDA_SUCCESS) { printf("no %s\n", n); return 1; } }
  dim3 grid(F / 32, L / 128, N);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<unsigned short> h0(N * L * F), h1(N * L * F);
  for (int round = 0; round < rounds; ++round)
  for (auto& v : vs) {
    int regs = 0; cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, v.k);
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
      cudaMemsetAsync(flush, r, 256 << 20);
      cudaMemsetAsync(o, 0xff, N * L * F * 2);
      cudaEventRecord(a);
      { long n_ = N, l_ = L, kw_ = KW, f_ = F; void* args[] = {&x, &w, &o, &n_, &l_, &kw_, &f_};
        cuLaunchKernel(v.k, grid.x, grid.y, grid.z, 128, 1, 1, 1168, 0, args, nullptr); }
      cudaEventRecord(b); cudaEventSynchronize(b);
      float t; cudaEventElapsedTime(&t, a, b); if (r >= 3 || argc > 1) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    cudaError_t e = cudaGetLastError();
    if (&v == &vs[0]) cudaMemcpy(h0.data(), o, N * L * F * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(h1.data(), o, N * L * F * 2, cudaMemcpyDeviceToHost);
    long diff = 0; for (size_t i = 0; i < h0.size(); ++i) diff += h0[i] != h1[i];
    printf("round %d %-9s regs %3d  median %.4f ms  min %.4f  (%.2f TB/s)  differs-from-gen %ld  %s\n", round, v.name, regs, ms[ms.size() / 2], ms[0],
           (N * L * F * 2 + N * L * 2) / (ms[ms.size() / 2] * 1e9), diff, cudaGetErrorString(e));
  }
  return 0;
}
