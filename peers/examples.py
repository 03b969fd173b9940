"""PyTorch eager and torch.compile peers of the `examples` crate's kernels (examples/src/*.rs).

Imported by bench.py, which calls `run(b, ctx, name, size_set)` with itself as `b`: the
harness (measure, measure_compiled, the generator, torch) is bench.py's, so these records are
checked and timed exactly like the tutorials' (peers/README.md). Every record has chapter "ex"
and the variant names, sizes and byte counts of benches/src/examples.rs, so the report lines
them up with ours. Selected with bench.py's --only: `ex` for all of them, or their names.

The semantics are the Rust kernels': f16 in and out (f32 loss for cross-entropy), f32
arithmetic, the result rounded to f16 once. Attention's peers are PyTorch's SDPA kernels, each
backend forced and recorded under its own impl name (sdpa_flash, sdpa_cudnn: bench.py's
IMPL_FAMILY runs them with --impls pytorch, and the report shows them in its vendor column),
and torch.compile of the softmax math (upcast to f32: see its note). Where PyTorch's f16 ops would round an
intermediate (F.silu(a) * b rounds silu(a) to f16 first), the eager code upcasts to f32
explicitly, which is what computing that function costs in eager PyTorch (the record's note
says so); torch.compile compiles the same code and may fuse it into one kernel.
"""

import math
import struct

# Variant names, in the order of examples/README.md.
NAMES = ["rmsnorm", "layernorm", "silu_mul", "transpose", "cross_entropy", "batched_gemm",
         "gemm_bias_gelu", "attention_d128", "attention_d64"]
CHAPTER = "ex"

# (rows, columns) per size set: benches/src/examples.rs `sizes`.
SIZES = {
    "rmsnorm": {"tutorial": (2048, 4096), "large": (16384, 8192)},
    "layernorm": {"tutorial": (2048, 4096), "large": (16384, 8192)},
    "silu_mul": {"tutorial": (2048, 4096), "large": (16384, 14336)},
    "transpose": {"tutorial": (2048, 4096), "large": (8192, 8192)},
    "cross_entropy": {"tutorial": (1024, 32000), "large": (4096, 128256)},
    # (batch, size): batch GEMMs size^3, chapter 08's work at that size set.
    "batched_gemm": {"tutorial": (8, 2048), "large": (8, 4096)},
    # size: C = gelu(A B + bias) at size^3, chapter 08's size.
    "gemm_bias_gelu": {"tutorial": 4096, "large": 8192},
    # (BH, S): Q, K, V, O of shape [BH, S, D], D = 128 and 64.
    "attention_d128": {"tutorial": (32, 4096), "large": (32, 16384)},
    "attention_d64": {"tutorial": (32, 4096), "large": (32, 16384)},
}

# The chunk widths BN of the Rust kernels' configs: the tolerances are the Rust side's, the
# loosest over its configs (as benches/src/examples.rs checks ours), so the peers are checked
# exactly as strictly as our kernels.
RMS_BN = [1024, 2048, 512, 4096, 64]
LN_BN = [1024, 2048, 512, 64]
CE_BN = [2048, 4096, 1024, 64]

# Attention (examples/src/attention.rs): the head size of each variant, the configs' key block
# BN (64 in both; the tolerance depends on it), and the inputs' range (benches/src/examples.rs
# ATTENTION_QK): Q and K uniform in +-3, V in +-1.
ATTN_D = {"attention_d128": 128, "attention_d64": 64}
ATTN_BN = 64
ATTN_QK = 3.0

RMS_EPS = 1e-6   # examples/src/rms_norm.rs EPS
LN_EPS = 1e-5    # examples/src/layer_norm.rs EPS
IGNORE = -100    # examples/src/cross_entropy.rs IGNORE
U = 2.0 ** -24   # f32's unit roundoff


def _gamma(k, u=U):
    return k * u / (1.0 - k * u)


def _f32(x):
    """x rounded to f32 (as the Rust side's `as f32`)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _generator(b, ctx, name, ss):
    """A CUDA generator seeded from (seed, example, size set), apart from the chapters'."""
    g = b.torch.Generator(device="cuda")
    g.manual_seed(ctx.seed * 1000 + 500 + 10 * NAMES.index(name) + (0 if ss == "tutorial" else 1))
    return g


def _base(b, name, impl, ss, shape, dtype, nbytes):
    return b._base(CHAPTER, name, impl, ss, shape, dtype, bytes=nbytes)


def rmsnorm(b, ctx, ss):
    torch, F = b.torch, b.F
    m, n = SIZES["rmsnorm"][ss]
    g = _generator(b, ctx, "rmsnorm", ss)
    x = b._uniform(g, (m, n), -4.0, 4.0, torch.float16)
    w = b._uniform(g, (n,), -2.0, 2.0, torch.float16)
    x64, w64 = x.double(), w.double()
    ref = x64 * torch.rsqrt((x64 * x64).mean(dim=1, keepdim=True) + RMS_EPS) * w64
    del x64
    # rms_norm.rs tolerance(n, bn), loosest over the configs.
    e = max(_gamma(bn - 1 + math.ceil(n / bn)) / 2.0 + 6.0 * U for bn in RMS_BN)
    tol = dict(atol=2.0 ** -25, rtol=2.0 ** -11 + 1.001 * e)
    mk = lambda impl: _base(b, "rmsnorm", impl, ss, f"[{m},{n}]", "f16, f32 accumulate",
                            2 * (2 * m * n + n))

    def explicit(x, w):
        xf = x.float()
        r = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + RMS_EPS)
        return (xf * r * w.float()).to(torch.float16)

    b.measure(ctx, {**mk("pytorch"), "note": f"F.rms_norm(x, ({n},), w, eps={RMS_EPS})"},
              lambda: F.rms_norm(x, (n,), w, RMS_EPS), ref, tol)
    b.measure(ctx, {**mk("pytorch"),
                    "note": "explicit f32: (x.float() * rsqrt(mean(x.float()^2) + eps) * "
                            "w.float()).half(), one rounding"},
              lambda: explicit(x, w), ref, tol)
    b.measure_compiled(ctx, {**mk("torch_compile"),
                             "note": "torch.compile(the explicit f32 code)"},
                       explicit, (x, w), ref, tol)


def layernorm(b, ctx, ss):
    torch, F = b.torch, b.F
    m, n = SIZES["layernorm"][ss]
    g = _generator(b, ctx, "layernorm", ss)
    x = b._uniform(g, (m, n), -4.0, 4.0, torch.float16)
    w = b._uniform(g, (n,), -2.0, 2.0, torch.float16)
    bias = b._uniform(g, (n,), -1.0, 1.0, torch.float16)
    x64, w64, b64 = x.double(), w.double(), bias.double()
    mean = x64.mean(dim=1, keepdim=True)
    d = x64 - mean
    var = (d * d).mean(dim=1, keepdim=True)
    ref = d * torch.rsqrt(var + LN_EPS) * w64 + b64
    # layer_norm.rs tolerance(x, w, b, n, bn, eps), per row, loosest over the configs.
    mabs = x64.abs().mean(dim=1)
    dabs = d.abs().mean(dim=1)
    dmax = d.abs().amax(dim=1)
    mean, var = mean[:, 0], var[:, 0]
    s = torch.rsqrt(var + LN_EPS)
    wmax, bmax = float(w64.abs().max()), float(b64.abs().max())
    e = 0.0
    for bn in LN_BN:
        gam = _gamma(bn - 1 + math.ceil(n / bn))
        e_mu = gam * mabs + U * mean.abs()
        d_v = torch.where(var > 0, gam + 3 * U + 2 * e_mu * dabs / var.clamp_min(1e-300), 0.0)
        d_s = d_v / 2 + 4 * U
        a = dmax * s * wmax
        e = max(e, float((wmax * s * e_mu + a * (d_s + 3 * U) + U * (a + bmax)).max()))
    del x64, d, mabs, dabs, dmax
    tol = dict(atol=1.001 * e + 2.0 ** -25, rtol=2.0 ** -11)
    mk = lambda impl: _base(b, "layernorm", impl, ss, f"[{m},{n}]", "f16, f32 accumulate",
                            2 * (2 * m * n + 2 * n))
    b.measure(ctx, {**mk("pytorch"), "note": f"F.layer_norm(x, ({n},), w, b, eps={LN_EPS})"},
              lambda: F.layer_norm(x, (n,), w, bias, LN_EPS), ref, tol)
    b.measure_compiled(ctx, {**mk("torch_compile"), "note": "torch.compile(F.layer_norm(..))"},
                       lambda x, w, bias: F.layer_norm(x, (n,), w, bias, LN_EPS),
                       (x, w, bias), ref, tol)


def silu_mul(b, ctx, ss):
    torch, F = b.torch, b.F
    m, n = SIZES["silu_mul"][ss]
    g = _generator(b, ctx, "silu_mul", ss)
    a = b._uniform(g, (m, n), -4.0, 4.0, torch.float16)
    y = b._uniform(g, (m, n), -4.0, 4.0, torch.float16)
    a64 = a.double()
    ref = a64 / (1.0 + torch.exp(-a64)) * y.double()
    del a64
    # silu_mul.rs ATOL, RTOL.
    tol = dict(atol=2.0 ** -25, rtol=2.0 ** -11 + 1.001 * 7.0 * U)
    mk = lambda impl: _base(b, "silu_mul", impl, ss, f"[{m},{n}]", "f16, f32 math",
                            2 * 3 * m * n)

    def explicit(a, y):
        return (F.silu(a.float()) * y.float()).to(torch.float16)

    b.measure(ctx, {**mk("pytorch"),
                    "note": "explicit f32: (F.silu(a.float()) * b.float()).half(), one rounding "
                            "(F.silu(a) * b in f16 rounds twice)"},
              lambda: explicit(a, y), ref, tol)
    b.measure_compiled(ctx, {**mk("torch_compile"),
                             "note": "torch.compile(the explicit f32 code)"},
                       explicit, (a, y), ref, tol)


def transpose(b, ctx, ss):
    torch = b.torch
    m, n = SIZES["transpose"][ss]
    g = _generator(b, ctx, "transpose", ss)
    # Random f16 bit patterns, every exponent, subnormals and +-0; non-finite ones become 0.
    bits = torch.randint(-32768, 32768, (m, n), generator=g, device="cuda", dtype=torch.int32)
    x = bits.to(torch.int16).view(torch.float16)
    x = torch.where(torch.isfinite(x), x, torch.zeros_like(x))
    del bits
    ref = x.double().t().contiguous()
    out = torch.empty((n, m), device="cuda", dtype=torch.float16)
    mk = lambda impl: _base(b, "transpose", impl, ss, f"[{m},{n}] -> [{n},{m}]", "f16",
                            2 * 2 * m * n)
    b.measure(ctx, {**mk("pytorch"), "note": "out.copy_(x.t())"},
              lambda: out.copy_(x.t()), ref, b.TOL_EXACT, out=out)
    b.measure_compiled(ctx, {**mk("torch_compile"), "note": "torch.compile(x.t().contiguous())"},
                       lambda x: x.t().contiguous(), (x,), ref, b.TOL_EXACT)


def cross_entropy(b, ctx, ss):
    torch, F = b.torch, b.F
    m, v = SIZES["cross_entropy"][ss]
    g = _generator(b, ctx, "cross_entropy", ss)
    x = b._uniform(g, (m, v), -4.0, 4.0, torch.float16)
    t = torch.randint(0, v, (m,), generator=g, device="cuda", dtype=torch.int32)
    t[5::16] = IGNORE
    x64 = x.double()
    hi = x64.amax(dim=1)
    lo = x64.amin(dim=1)
    ssum = torch.exp(x64 - hi[:, None]).sum(dim=1)
    lse = hi + torch.log(ssum)
    valid = t >= 0
    tx = x64.gather(1, t.clamp_min(0).long()[:, None])[:, 0]
    loss64 = lse - tx
    ref = torch.where(valid, loss64, torch.zeros_like(loss64))
    # cross_entropy.rs tolerance(x, t, v, bn), per row, loosest over the configs.
    e = 0.0
    for bn in CE_BN:
        c = math.ceil(v / bn)
        gam = _gamma(bn - 1 + c)
        delta = gam + (c + 1) * (2.0 ** -22 + U * (hi - lo) + U)
        bound = delta + 2.0 ** -22 * torch.log(ssum).abs() + U * (lse.abs() + loss64.abs())
        e = max(e, float(bound.max()))
    del x64
    tol = dict(atol=1.001 * e, rtol=0.0)
    mk = lambda impl: _base(b, "cross_entropy", impl, ss, f"[{m},{v}]",
                            "f16 logits, i32 targets, f32 loss", 2 * m * v + 4 * m + 4 * m)
    b.measure(ctx, {**mk("pytorch"),
                    "note": "F.cross_entropy(x.float(), t.long(), reduction='none') (ignore_index "
                            "-100); the logits upcast as LLM code does"},
              lambda: F.cross_entropy(x.float(), t.long(), reduction="none"), ref, tol)
    b.measure_compiled(ctx, {**mk("torch_compile"),
                             "note": "torch.compile(F.cross_entropy(x.float(), t.long(), "
                                     "reduction='none'))"},
                       lambda x, t: F.cross_entropy(x.float(), t.long(), reduction="none"),
                       (x, t), ref, tol)


def batched_gemm(b, ctx, ss):
    torch = b.torch
    bt, n = SIZES["batched_gemm"][ss]
    g = _generator(b, ctx, "batched_gemm", ss)
    x = b._uniform(g, (bt, n, n), -1.0, 1.0, torch.float16)
    y = b._uniform(g, (bt, n, n), -1.0, 1.0, torch.float16)
    x64, y64 = x.double(), y.double()
    ref = torch.bmm(x64, y64)
    # batched_gemm.rs tolerance: chapter 08's, the loosest over the batch.
    tols = [b.gemm_tolerance(x64[i], y64[i], n) for i in range(bt)]
    del x64, y64
    tol = dict(atol=max(t[0] for t in tols), rtol=max(t[1] for t in tols), cap=b.GEMM_CAP)
    out = torch.empty((bt, n, n), device="cuda", dtype=torch.float16)
    mk = lambda impl: b._base(CHAPTER, "batched_gemm", impl, ss, f"[{bt},{n},{n},{n}]",
                              "f16, f32 accumulate", flops=2 * bt * n * n * n)
    b.measure(ctx, {**mk("pytorch"), "note": "torch.bmm(a, b, out=c) (cuBLAS batched)"},
              lambda: torch.bmm(x, y, out=out), ref, tol, out=out)
    b.measure_compiled(ctx, {**mk("torch_compile"), "note": "torch.compile(torch.bmm(a, b))"},
                       lambda x, y: torch.bmm(x, y), (x, y), ref, tol)


def gemm_bias_gelu(b, ctx, ss):
    torch = b.torch
    F = torch.nn.functional
    n = SIZES["gemm_bias_gelu"][ss]
    g = _generator(b, ctx, "gemm_bias_gelu", ss)
    x = b._uniform(g, (n, n), -1.0, 1.0, torch.float16)
    y = b._uniform(g, (n, n), -1.0, 1.0, torch.float16)
    bias = b._uniform(g, (n,), -2.0, 2.0, torch.float16)
    x64, y64 = x.double(), y.double()
    pre = x64 @ y64 + bias.double()
    ref = 0.5 * pre * (1.0 + torch.tanh(0.7978845608 * (pre + 0.044715 * pre * pre * pre)))
    # gemm_bias_gelu.rs tolerance: chapter 08's bound through the bias and GELU's slope,
    # tanh.approx's 2^-10.9, then the f16 rounding.
    atol, _ = b.gemm_tolerance(x64, y64, n)
    largest = float(pre.abs().max())
    del x64, y64, pre
    e = 1.13 * (atol + 2.0 * 2.0 ** -52) + 0.5 * largest * 2.0 ** -10.9
    tol = dict(atol=e + 16.0 * largest * 2.0 ** -24 + 2.0 ** -25, rtol=2.0 ** -11,
               cap=b.GEMM_CAP)
    mk = lambda impl: b._base(CHAPTER, "gemm_bias_gelu", impl, ss, f"[{n},{n},{n}]",
                              "f16, f32 accumulate", flops=2 * n * n * n)
    b.measure(ctx, {**mk("pytorch"),
                    "note": "F.gelu(torch.addmm(bias, a, b), approximate='tanh') (cuBLAS, "
                            "then an element-wise kernel)"},
              lambda: F.gelu(torch.addmm(bias, x, y), approximate="tanh"), ref, tol)
    b.measure_compiled(ctx, {**mk("torch_compile"),
                             "note": "torch.compile(F.gelu(torch.addmm(bias, a, b), "
                                     "approximate='tanh'))"},
                       lambda x, y, bias: F.gelu(torch.addmm(bias, x, y), approximate="tanh"),
                       (x, y, bias), ref, tol)


def _attention_reference(torch, q, k, v, scale, chunk=1024):
    """The float64 reference of every row of attention (on the GPU, in chunks of query rows) and
    attention.rs's tolerance (`check_rows`: the same bound, its maximum over every row; the Rust
    side checks sampled rows, whose maximum can only be smaller): (ref, atol); rtol is 2^-11."""
    bh, s, d = q.shape
    c = _f32(scale * math.log2(math.e))
    nb = math.ceil(s / ATTN_BN)
    gn, gl, gd = _gamma(s + nb, 2 * U), _gamma(ATTN_BN - 1 + 2 * nb), _gamma(d, 2 * U)
    ref = torch.empty((bh, s, d), device="cuda", dtype=torch.float64)
    e = 0.0
    for i in range(bh):
        k64, v64 = k[i].double(), v[i].double()
        va = v64.abs()
        kmax = float(k64.norm(dim=1).max())
        for r0 in range(0, s, chunk):
            q64 = q[i, r0:r0 + chunk].double()
            sc = (q64 @ k64.T) * scale
            w = torch.exp(sc - sc.amax(dim=1, keepdim=True))
            wsum = w.sum(dim=1, keepdim=True)
            o = (w @ v64) / wsum
            a = (w @ va) / wsum
            h = ((w < 2.0 ** -13).double() @ va) / wsum
            del sc, w
            x = c * q64.norm(dim=1, keepdim=True) * kmax
            phi = torch.exp2(x * (gd + 7 * U)) * (1.0 + 2.0 ** -20) ** nb - 1.0
            if float(phi.max()) >= 0.01:
                raise ValueError(f"attention tolerance: phi = {float(phi.max())} is not small")
            bound = phi * (a + o.abs()) + (2.0 ** -11 + gn) * a + 2.0 ** -24 * h + (gl + U) * a
            e = max(e, float(bound.max()))
            ref[i, r0:r0 + chunk] = o
    return ref, 1.01 * e + 2.0 ** -25


def attention(b, ctx, ss, name):
    """O = softmax(Q K^T / sqrt(D)) V per (batch * head): PyTorch's SDPA on its flash and cuDNN
    backends (each forced with sdpa_kernel; impls sdpa_flash, sdpa_cudnn, selected with
    --impls pytorch) and torch.compile of the math (upcast to f32, see the note)."""
    torch, F = b.torch, b.F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    bh, s = SIZES[name][ss]
    d = ATTN_D[name]
    g = _generator(b, ctx, name, ss)
    q = b._uniform(g, (bh, s, d), -ATTN_QK, ATTN_QK, torch.float16)
    k = b._uniform(g, (bh, s, d), -ATTN_QK, ATTN_QK, torch.float16)
    v = b._uniform(g, (bh, s, d), -1.0, 1.0, torch.float16)
    scale = 1.0 / math.sqrt(d)
    ref, atol = _attention_reference(torch, q, k, v, scale)
    tol = dict(atol=atol, rtol=2.0 ** -11)
    mk = lambda impl: b._base(CHAPTER, name, impl, ss, f"[{bh},{s},{d}]",
                              "f16, f32 accumulate and softmax", flops=4 * bh * s * s * d)
    # SDPA takes [batch, heads, S, D]: one batch of BH heads, the same memory.
    q4, k4, v4 = (x.view(1, bh, s, d) for x in (q, k, v))
    for impl, backend, label in (("sdpa_flash", SDPBackend.FLASH_ATTENTION, "FLASH_ATTENTION"),
                                 ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION, "CUDNN_ATTENTION")):
        with sdpa_kernel(backend):
            b.measure(ctx, {**mk(impl),
                            "note": f"F.scaled_dot_product_attention(q, k, v, scale=1/sqrt({d})) "
                                    f"under sdpa_kernel(SDPBackend.{label}), q, k, v viewed as "
                                    f"[1, {bh}, {s}, {d}]"},
                      lambda: F.scaled_dot_product_attention(q4, k4, v4, scale=scale)
                      .view(bh, s, d), ref, tol)

    def math_f32(q, k, v):
        qf, kf, vf = q.float(), k.float(), v.float()
        return (torch.softmax(qf @ kf.transpose(-1, -2) * scale, dim=-1) @ vf).half()

    b.measure_compiled(ctx, {**mk("torch_compile"),
                             "note": "torch.compile((softmax(q.float() @ k.float().transpose(-1, "
                                     "-2) * scale, -1) @ v.float()).half()): upcast, because "
                                     "the f16 spelling (as eager runs it) rounds the raw scores "
                                     "(up to ~150 here) to f16 and fails the tolerance at D 128 "
                                     "(simulated at S 4096: errors up to 3.2e-3 beyond the "
                                     "output's rounding, against an atol of 2.4e-3)"},
                       math_f32, (q, k, v), ref, tol)


FNS = {"rmsnorm": rmsnorm, "layernorm": layernorm, "silu_mul": silu_mul,
       "transpose": transpose, "cross_entropy": cross_entropy, "batched_gemm": batched_gemm,
       "gemm_bias_gelu": gemm_bias_gelu,
       "attention_d128": lambda b, ctx, ss: attention(b, ctx, ss, "attention_d128"),
       "attention_d64": lambda b, ctx, ss: attention(b, ctx, ss, "attention_d64")}


def run(b, ctx, name, ss):
    FNS[name](b, ctx, ss)
