#include <cuda.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cstdlib>
#include <cmath>
#define CK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* m; cuGetErrorString(e, &m); printf("%s: %s\n", #x, m); exit(1); } } while (0)
int main() {
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  CUmodule mod; CK(cuModuleLoad(&mod, "conv.cubin"));
  long long N = 1024, L = 8192, F = 32, KW = 7;
  std::vector<__half> hx(N * L), hw(KW * F);
  srand(1);
  for (auto& v : hx) v = __float2half((rand() / (float)RAND_MAX) * 2 - 1);
  for (auto& v : hw) v = __float2half((rand() / (float)RAND_MAX) * 2 - 1);
  CUdeviceptr x, w, o, flush;
  CK(cuMemAlloc(&x, N * L * 2)); CK(cuMemAlloc(&w, KW * F * 2)); CK(cuMemAlloc(&o, N * L * F * 2)); CK(cuMemAlloc(&flush, 256 << 20));
  CK(cuMemcpyHtoD(x, hx.data(), N * L * 2)); CK(cuMemcpyHtoD(w, hw.data(), KW * F * 2));
  CUevent a, b; cuEventCreate(&a, 0); cuEventCreate(&b, 0);
  std::vector<__half> ho(N * L * F), hr(N * L * F);
  bool first = true;
  auto run = [&](const char* name, int gx, int bl, int threads, int shared, bool gen) {
    CUfunction f; char full[128]; snprintf(full, sizeof full, gen ? "tl_conv1d_multi__%s" : "%s", name);
    CK(cuModuleGetFunction(&f, mod, full));
    if (shared > 48 * 1024) CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared));
    int regs; cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    void* genargs[] = {&x, &w, &o, &N, &L, &KW, &F};
    void* dirargs[] = {&x, &w, &o, &N, &L};
    auto launch = [&] { CK(cuLaunchKernel(f, gx, (L + bl - 1) / bl, N, threads, 1, 1, shared, 0, gen ? genargs : dirargs, nullptr)); };
    CK(cuMemsetD8(o, 0xff, N * L * F * 2));
    launch(); CK(cuCtxSynchronize());
    std::vector<float> ts;
    for (int i = 0; i < 40; ++i) {
      cuMemsetD8Async(flush, i, 256 << 20, 0);
      cuEventRecord(a, 0); launch(); cuEventRecord(b, 0); cuEventSynchronize(b);
      float ms; cuEventElapsedTime(&ms, a, b); ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    CK(cuMemcpyDtoH(ho.data(), o, N * L * F * 2));
    double md = 0;
    if (first) { hr = ho; first = false; } else for (size_t i = 0; i < ho.size(); ++i) { double d = fabs(__half2float(ho[i]) - __half2float(hr[i])); if (!(d <= md)) md = d; }
    printf("%-14s regs %3d  median %.4f ms  min %.4f  maxdiff %.3g  %.2f TB/s\n", name, regs, ts[20], ts[0], md, (N * L * 2 + N * L * F * 2) / (ts[20] * 1e9));
  };
  run("l64f32", 1, 64, 256, 1040, true);
  run("l128f32", 1, 128, 256, 1168, true);
  run("l256f32b6", 1, 256, 256, 1424, true);
  run("direct128t128b8", 1, 128, 128, 0, false);
  run("l256f32", 1, 256, 256, 1424, true);
  run("l512f32", 1, 512, 256, 1936, true);
  run("l128f32t128", 1, 128, 128, 1168, true);
  run("l256f32t128", 1, 256, 128, 1424, true);
  run("direct128t128", 1, 128, 128, 0, false);
  run("direct256t256", 1, 256, 256, 0, false);
  run("direct256t128", 1, 256, 128, 0, false);
  run("direct512t256", 1, 512, 256, 0, false);
  run("l256f32b6", 1, 256, 256, 1424, true);
  run("direct128t128b8", 1, 128, 128, 0, false);
  run("l256f32", 1, 256, 256, 1424, true);
  return 0;
}
