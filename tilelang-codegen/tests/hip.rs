//! HIP C++ generation through real compilers: pinned by snapshots for one NVIDIA, one RDNA and
//! one CDNA target, and deterministic; tl.h's pure sections (the swizzle, f64 and
//! transcendental math, wgmma descriptors, the raster; the matrix-unit layouts are
//! `layouts.rs`'s) checked on the host with a C++ compiler; and AMD sources (GEMMs, rank-dropping copies, odd names, float constants,
//! mixed-width vectors) compiled down to their instructions with clang++-19. The lowering's
//! decisions, read off the generated source, are in `hip_gemm.rs` (matrix units, pipelines,
//! sm_90a), `hip_registers.rs` (fragments, reductions, occupancy) and `hip_memory.rs`
//! (barriers, swizzle, copies, vectors).
//!
//! After an intended change to the generated code, regenerate the snapshots with
//! `UPDATE_SNAPSHOTS=1 cargo test -p tilelang-codegen --test hip` and review the diff.

mod common;

use common::host::{run_host_program, scratch_dir, tl_host_section, tl_section};
use common::{gemm_variant, hip, kernel, GEMM, ROWMAX, TRANSPOSE};
use std::path::{Path, PathBuf};
use std::process::Command;
use tilelang_codegen::lower::emit;
use tilelang_codegen::target::Target;

fn snapshot(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_SNAPSHOTS=1)", path.display()));
    if want != text {
        let line = want
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(text.lines().count()));
        panic!("{name} differs from its snapshot at line {}:\n--- snapshot: {:?}\n+++ now:      {:?}\n(UPDATE_SNAPSHOTS=1 to accept)", line + 1, want.lines().nth(line), text.lines().nth(line));
    }
}

#[test]
fn snapshots_for_nvidia_rdna_and_cdna() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        snapshot(&format!("gemm.{arch}.cu"), &hip(GEMM, 0, arch).source);
        snapshot(&format!("rowmax.{arch}.cu"), &hip(ROWMAX, 0, arch).source);
    }
    // RDNA4's WMMA differs from RDNA3's in its operand and accumulator layouts.
    snapshot("gemm.gfx1201.cu", &hip(GEMM, 0, "gfx1201").source);
}

#[test]
fn emission_is_deterministic() {
    for src in [GEMM, ROWMAX] {
        for arch in ["sm_90", "gfx1100", "gfx90a", "gfx1030"] {
            assert_eq!(hip(src, 0, arch), hip(src, 0, arch));
        }
    }
}

/// clang++-19 and llvm-objdump-19, which the AMD compile tests need (`cargo xtask test`
/// installs them; `apt-get install clang-19 lld-19 llvm-19`). Missing, the test fails.
fn clang19() -> (&'static Path, &'static Path) {
    let (clang, objdump) = (
        Path::new("/usr/bin/clang++-19"),
        Path::new("/usr/bin/llvm-objdump-19"),
    );
    assert!(
        clang.is_file() && objdump.is_file(),
        "this test needs {} and {} (apt-get install clang-19 lld-19 llvm-19, or `cargo xtask test`)",
        clang.display(),
        objdump.display()
    );
    (clang, objdump)
}

/// Compiles `src` for `arch` with clang++-19 (no ROCm: the header's own prelude) and returns the
/// disassembly and the compiler's resource-usage remarks.
fn clang_amd(clang: &Path, objdump: &Path, src: &str, arch: &str, dir: &Path) -> (String, String) {
    let (cu, obj) = (
        dir.join(format!("{arch}.cu")),
        dir.join(format!("{arch}.o")),
    );
    std::fs::write(&cu, src).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let out = Command::new(clang)
        .args([
            "-x",
            "hip",
            "-std=c++17",
            "-nogpulib",
            "-nogpuinc",
            "--offload-device-only",
            "--no-gpu-bundle-output",
        ])
        .arg(format!("--offload-arch={arch}"))
        .args(["-O3", "-Rpass-analysis=kernel-resource-usage", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&obj)
        .arg(&cu)
        .output()
        .unwrap();
    let remarks = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{arch}:\n{remarks}");
    let dis = Command::new(objdump).arg("-d").arg(&obj).output().unwrap();
    assert!(dis.status.success(), "{arch}: llvm-objdump failed");
    (String::from_utf8_lossy(&dis.stdout).into_owned(), remarks)
}

/// Tiles copied out of 3-D tensors (the batch in the grid): every region is printed 4-D with
/// the batch index as its second offset and the tile's own extents behind leading 1s, on
/// NVIDIA (cp.async into shared memory, mma.sync) and on AMD, where clang compiles it to the
/// matrix instructions.
#[test]
fn rank_dropping_copies_feed_the_matrix_units() {
    const BMM: &str = r#"
#[tile_kernel(grid = [N.div_ceil(64), M.div_ceil(64), BATCH], threads = 128)]
pub fn bmm(a: &Tensor<f16, (BATCH, M, K)>, b: &Tensor<f16, (BATCH, K, N)>, c: &mut Tensor<f16, (BATCH, M, N)>) {
    let (bx, by, bi) = (block_idx(0), block_idx(1), block_idx(2));
    let mut a_s = alloc_shared::<f16>((64, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    let mut acc = alloc_fragment::<f32>((64, 64));
    clear(&mut acc);
    for k in pipelined(K.div_ceil(32), 2) {
        copy(a.at((bi, by * 64, k * 32)), &mut a_s);
        copy(b.at((bi, k * 32, bx * 64)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((bi, by * 64, bx * 64)));
}
"#;
    let k = hip(BMM, 0, "sm_90");
    assert!(
        k.source
            .contains("tl::Region __g = {{1, n_BATCH, n_M, n_K}, {0, v2_bi, ")
            && k.source
                .contains("tl::copy_g2s<tl::half, tl::half, 1, 1, 64, 32, 128"),
        "{}",
        k.source
    );
    let (clang, objdump) = clang19();
    let dir = scratch_dir("bmm");
    for (arch, inst) in [
        ("gfx1100", "v_wmma_f32_16x16x16_f16"),
        ("gfx942", "v_mfma_f32_32x32x8_f16"),
    ] {
        let k = hip(BMM, 0, arch);
        let (dis, _) = clang_amd(clang, objdump, &k.source, arch, &dir);
        assert!(dis.contains(inst), "{arch}: no {inst}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Needs clang++-19 and llvm-objdump-19 (`apt-get install clang-19 lld-19 llvm-19`; CI installs
/// them). There is no AMD GPU here, so this checks compilation, not results.
#[test]
fn amd_gemms_compile_to_the_matrix_instructions() {
    let (clang, objdump) = clang19();
    let dir = scratch_dir("amd");
    let gemm = |dtype, threads, bm, bn, bk| gemm_variant(dtype, threads, bm, bn, bk);
    let cases: Vec<(String, &str, &str)> = vec![
        (
            gemm("f16", 128, 64, 64, 32),
            "gfx1100",
            "v_wmma_f32_16x16x16_f16",
        ),
        (
            gemm("f16", 128, 64, 64, 32),
            "gfx1151",
            "v_wmma_f32_16x16x16_f16",
        ),
        (
            gemm("bf16", 128, 64, 64, 32),
            "gfx1100",
            "v_wmma_f32_16x16x16_bf16",
        ),
        (
            gemm("f16", 128, 64, 64, 32),
            "gfx1201",
            "v_wmma_f32_16x16x16_f16",
        ),
        (
            gemm("bf16", 128, 64, 64, 32),
            "gfx1201",
            "v_wmma_f32_16x16x16_bf16",
        ),
        (
            gemm("f16", 128, 64, 64, 32),
            "gfx90a",
            "v_mfma_f32_32x32x8f16",
        ),
        (
            gemm("bf16", 128, 64, 64, 32),
            "gfx90a",
            "v_mfma_f32_32x32x8bf16_1k",
        ),
        (
            gemm("f16", 128, 64, 64, 32),
            "gfx942",
            "v_mfma_f32_32x32x8_f16",
        ),
        (
            gemm("bf16", 128, 64, 64, 32),
            "gfx942",
            "v_mfma_f32_32x32x8_bf16",
        ),
        (
            gemm("f16", 128, 32, 32, 32),
            "gfx942",
            "v_mfma_f32_16x16x16_f16",
        ),
        (gemm("f16", 128, 64, 64, 32), "gfx1030", ""),
    ];
    for (src, arch, inst) in &cases {
        let k = hip(src, 0, arch);
        let (dis, remarks) = clang_amd(clang, objdump, &k.source, arch, &dir);
        if inst.is_empty() {
            assert!(
                !dis.contains("v_wmma") && !dis.contains("v_mfma"),
                "{arch}: a matrix instruction without a matrix unit"
            );
        } else {
            assert!(
                dis.contains(&format!("{inst} ")),
                "{arch}: no {inst}:\n{dis}"
            );
        }
        if !inst.is_empty() {
            // The accumulators and operands stay in registers: no scratch memory.
            assert!(
                remarks.contains("ScratchSize [bytes/lane]: 0"),
                "{arch} {inst}: {remarks}"
            );
        }
    }
    // The natural attention kernel (issue 39) at D 64 (its D 128 config needs more LDS than an
    // AMD block has): both gemms on the matrix unit, the scores' rows reduced in registers
    // across the lanes that share them, nothing in scratch memory.
    for (arch, inst) in [
        ("gfx1100", "v_wmma_f32_16x16x16_f16"),
        ("gfx1201", "v_wmma_f32_16x16x16_f16"),
        ("gfx90a", "v_mfma_f32_32x32x8f16"),
        ("gfx942", "v_mfma_f32_32x32x8_f16"),
    ] {
        let k = hip(common::ATTENTION, 1, arch);
        assert!(k.source.contains("tl::reduce_acc_rows<tl::Max"), "{arch}");
        let (dis, remarks) = clang_amd(clang, objdump, &k.source, arch, &dir);
        assert!(
            dis.contains(&format!("{inst} ")),
            "{arch}: no {inst}:\n{dis}"
        );
        assert!(
            remarks.contains("ScratchSize [bytes/lane]: 0"),
            "{arch} attention: {remarks}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The swizzle of shared tiles (tl.h `swz`): within each row a permutation of the chunks, and
/// conflict-free for the two access patterns it serves: the 8 rows at one logical chunk that a
/// phase of `ldmatrix` reads, and the 8 consecutive chunks (row-major) that a phase of 16-byte
/// stores writes. A bank line is 128 bytes = 8 chunks.
#[test]
fn the_swizzle_permutes_rows_and_spreads_banks() {
    let section = tl_section("swizzle");
    let check = r#"
#include <cstdio>
template <int CHUNKS> int check() {
  int bad = 0;
  for (int row = 0; row < 64; ++row) {
    unsigned seen = 0;
    for (int c = 0; c < CHUNKS; ++c) {
      const int p = tl::swz<CHUNKS>(row, c);
      if (p < 0 || p >= CHUNKS || (seen >> p & 1)) ++bad;
      seen |= 1u << p;
      // sidx agrees with swz, element by element.
      for (int e = 0; e < 8; ++e)
        if (tl::sidx<1, CHUNKS * 8>(row, c * 8 + e) != row * CHUNKS * 8 + p * 8 + e) ++bad;
    }
  }
  for (int r0 = 0; r0 < 64; r0 += 8)
    for (int c = 0; c < CHUNKS; ++c) {
      unsigned lines = 0;  // ldmatrix phase: rows r0..r0+7 at chunk c
      for (int r = r0; r < r0 + 8; ++r) lines |= 1u << ((r * CHUNKS + tl::swz<CHUNKS>(r, c)) % 8);
      if (lines != 0xff) ++bad;
    }
  for (int e0 = 0; e0 < 64 * CHUNKS; e0 += 8) {
    unsigned lines = 0;  // store phase: chunks e0..e0+7 in row-major order
    for (int e = e0; e < e0 + 8; ++e) {
      const int r = e / CHUNKS, c = e % CHUNKS;
      lines |= 1u << ((r * CHUNKS + tl::swz<CHUNKS>(r, c)) % 8);
    }
    if (lines != 0xff) ++bad;
  }
  std::printf("chunks %d: %d failures\n", CHUNKS, bad);
  return bad;
}
int main() {
  const int bad = check<2>() + check<4>() + check<8>() + check<16>() + check<32>();
  std::printf("swizzle: %d failures\n", bad);
  return bad != 0;
}
"#;
    let text = format!("#define TL_SWIZZLE constexpr\nnamespace tl {{\n{section}}}\n{check}");
    let report = run_host_program("swizzle", &text);
    assert!(report.contains("swizzle: 0 failures"), "{report}");
}

/// A tile written along its rows and read down its columns (a transpose) is swizzled with the
/// row step the bank model picks, and that layout, tl.h's own `sidx` run on the host, is
/// conflict-free for both: every read of the first wave (the fragment's chunked order, lanes 8
/// rows apart) takes one pass through the banks (two for 128 × 64, the best any XOR of a row's
/// chunks can do there), and every phase of 8 of the copy's 16-byte
/// stores covers the 8 chunks of a bank line. The plain layout conflicts on the reads (what the
/// test would see if the swizzle were lost). A tile whose rows are not a power-of-two number of
/// chunks (24 × 40) stays plain.
#[test]
fn tiles_read_across_their_rows_are_swizzled_conflict_free() {
    let section = tl_section("swizzle");
    let mut calls = String::new();
    // (BM, BN, threads, the fewest passes a read can take): 128 × 64 over 256 threads has a
    // wave read 16 rows at one column pair, one word each, and a row's 8 chunks give the XOR
    // only 8 places for them, so 2 passes is its best.
    for (config, (bm, bn, t, best)) in [
        (64, 64, 256, 1),
        (32, 32, 128, 1),
        (64, 128, 256, 1),
        (128, 64, 256, 2),
    ]
    .into_iter()
    .enumerate()
    {
        let k = hip(TRANSPOSE, config, "sm_90");
        let src = &k.source;
        let at = src
            .find("tl::sidx<")
            .expect("the read indexes the tile through sidx")
            + 9;
        let div: usize = src[at..at + src[at..].find(',').unwrap()].parse().unwrap();
        assert!(
            src.contains(&format!(
                "{bm}, {bn}, {t}, {div}, false, true>(t_x, __g, b0_s)"
            )),
            "the copy stores with the same swizzle: {src}"
        );
        calls += &format!(
            "  bad += check<{bm}, {bn}, {t}, {div}>(false, {best});\n  bad += check<{bm}, {bn}, {t}, 0>(true, {best});\n"
        );
    }
    let k = hip(TRANSPOSE, 4, "sm_90");
    assert!(!k.source.contains("sidx"), "{}", k.source);
    let check = format!(
        r#"
#include <cstdio>
#include <set>
// Passes through the 32 banks of the first wave's read of register r.
template <int BM, int BN, int T, int DIV> int passes(int r) {{
  std::set<int> words[32];
  for (int t = 0; t < 32; ++t) {{
    const int L = ((r / 8) * T + t) * 8 + r % 8;  // the chunked fragment (BN, BM)
    const int j = L / BM, i = L % BM;              // t[(j, i)] = s[(i, j)]
    const int word = tl::sidx<DIV, BN>(i, j) / 2;
    words[word % 32].insert(word);
  }}
  int most = 0;
  for (auto& w : words) most = w.size() > most ? (int)w.size() : most;
  return most;
}}
template <int BM, int BN, int T, int DIV> int check(bool plain, int best) {{
  int worst = 0;
  for (int r = 0; r < BM * BN / T; ++r) {{
    const int p = passes<BM, BN, T, DIV>(r);
    worst = p > worst ? p : worst;
  }}
  int bad = plain ? (worst >= 4 * best ? 0 : 1) : (worst == best ? 0 : 1);
  // The copy: 16-byte vector e = (row, chunk) row-major, 8 per phase, one bank line each.
  for (int e0 = 0; e0 < BM * BN / 8; e0 += 8) {{
    unsigned lines = 0;
    for (int e = e0; e < e0 + 8; ++e)
      lines |= 1u << (tl::sidx<DIV, BN>(e / (BN / 8), e % (BN / 8) * 8) / 8 % 8);
    if (lines != 0xff) ++bad;
  }}
  std::printf("%dx%d over %d, DIV %d: worst read %d passes\n", BM, BN, T, DIV, worst);
  return bad;
}}
int main() {{
  int bad = 0;
{calls}  std::printf("transpose: %d failures\n", bad);
  return bad != 0;
}}
"#
    );
    let text = format!("#define TL_SWIZZLE constexpr\nnamespace tl {{\n{section}}}\n{check}");
    let report = run_host_program("transpose_banks", &text);
    assert!(report.contains("transpose: 0 failures"), "{report}");
}

/// A free chunk-wise loop takes 16 bytes of its widest vector element as its lanes, so a loop
/// that also moves f64 runs 2 lanes and its u8 accesses are 2-byte vectors (found by the device
/// fuzzer: tl.h's vectors stopped at 4 bytes). Compiled for gfx942 with clang++-19.
#[test]
fn mixed_width_vectors_compile() {
    const MIXED: &str = r#"
#[tile_kernel(grid = [N.div_ceil(32)], threads = 32)]
pub fn mixed(a: &Tensor<i32, (N,)>, f: &mut Tensor<f64, (N,)>, bytes: &mut Tensor<u8, (N,)>) {
    for i in parallel(32) {
        let g = block_idx(0) * 32 + i;
        if g < N {
            let x = a[g];
            f[g] = x as f64;
            bytes[g] = (x & 255) as u8;
        }
    }
}
"#;
    let src = hip(MIXED, 0, "gfx942").source;
    assert!(
        src.contains("tl::vstore<true, false, 2>(&t_bytes["),
        "{src}"
    );
    assert!(src.contains("tl::vstore<true, false, 2>(&t_f["), "{src}");
    let (clang, objdump) = clang19();
    let dir = scratch_dir("mixed");
    clang_amd(clang, objdump, &src, "gfx942", &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// tl.h's f64 `exp`, `exp2` and `log` for AMD without device libraries (pure + and *), on the
/// host against the C library: special values exactly, 2 million random inputs within 2 ulp.
#[test]
fn f64_math_without_device_libraries_is_within_two_ulp() {
    let section = tl_section("f64 math");
    let text = format!(
        r#"#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#define TL_MATH64 inline
{section}
static long long ord(double x) {{ long long i; std::memcpy(&i, &x, 8); return i < 0 ? (long long)0x8000000000000000ULL - i : i; }}
static int failures = 0;
static double worst[3] = {{0, 0, 0}};
static void one(double x) {{
  const double got[3] = {{tl_m64_exp(x), tl_m64_exp2(x), tl_m64_log(x)}};
  const double want[3] = {{std::exp(x), std::exp2(x), std::log(x)}};
  for (int f = 0; f < 3; ++f) {{
    if (std::isnan(want[f]) || std::isinf(want[f]) || want[f] == 0.0) {{
      const bool same = std::isnan(want[f]) ? std::isnan(got[f]) : got[f] == want[f];
      if (!same && failures++ < 20) std::printf("FAIL f%d(%a) = %a, want %a\n", f, x, got[f], want[f]);
      continue;
    }}
    const double d = std::fabs((double)(ord(got[f]) - ord(want[f])));
    if (d > worst[f]) worst[f] = d;
    if (d > 2 && failures++ < 20) std::printf("FAIL f%d(%a) = %a, want %a (%g ulp)\n", f, x, got[f], want[f], d);
  }}
}}
int main() {{
  const double special[] = {{0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-310, -1e-310, 4.9e-324, 2.2250738585072014e-308,
    709.78, 709.79, -745.13, -745.14, -708.4, 1023.999, 1024.0, -1074.0, -1075.0, -1076.0, 1e300, -1e300,
    1.7976931348623157e308, std::nan(""), INFINITY, -INFINITY, 1.0000000000000002, 0.9999999999999999}};
  for (double x : special) one(x);
  std::mt19937_64 g(7);
  for (int i = 0; i < 2000000; ++i) {{
    double x;
    switch (i % 4) {{
      case 0: x = std::uniform_real_distribution<double>(-746, 710)(g); break;
      case 1: x = std::uniform_real_distribution<double>(-2, 2)(g); break;
      case 2: x = std::uniform_real_distribution<double>(-1080, 1025)(g); break;
      default: {{ unsigned long long b = g(); std::memcpy(&x, &b, 8); x = std::fabs(x); }}
    }}
    one(x);
  }}
  std::printf("worst ulp: exp %g, exp2 %g, log %g; %d failures\n", worst[0], worst[1], worst[2], failures);
  return failures != 0;
}}
"#
    );
    let report = run_host_program("math64", &text);
    assert!(report.contains("; 0 failures"), "{report}");
}

/// tl.h's `tanh`, `erf`, `sin`, `cos` and `pow` for AMD without device libraries (the f64 forms,
/// which the f32 ones round), on the host against the C library: special values exactly
/// (C99 Annex F for `pow`), 3 million random inputs, huge arguments of `sin` and `cos` included
/// (exact reduction), within the bounds `docs/language.md` states for that path: 2 ulp in
/// f64 (`pow`: its argument's error, `|y·ln x|·2^-52` relative, at most 1024 ulp here), 1 ulp
/// in f32.
#[test]
fn transcendental_math_without_device_libraries_is_within_its_documented_ulps() {
    let section = tl_section("f64 math");
    let text = format!(
        r#"#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#define TL_MATH64 inline
{section}
static long long ord(double x) {{ long long i; std::memcpy(&i, &x, 8); return i < 0 ? (long long)0x8000000000000000ULL - i : i; }}
static long long ordf(float x) {{ int i; std::memcpy(&i, &x, 4); return i < 0 ? (long long)(int)0x80000000u - i : i; }}
static const char* names[9] = {{"tanh", "erf", "sin", "cos", "pow", "tanhf", "erff", "sinf", "powf"}};
static const double bound[9] = {{2, 2, 2, 2, 1024, 1, 1, 1, 1}};
static double worst[9];
static int failures = 0;
static void check(int f, double x, double y, double got, double want) {{
  if (std::isnan(want) || std::isinf(want) || want == 0.0) {{
    const bool same = std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want);
    if (!same && failures++ < 20) std::printf("FAIL %s(%a, %a) = %a, want %a\n", names[f], x, y, got, want);
    return;
  }}
  const double d = std::fabs(f >= 5 ? (double)(ordf((float)got) - ordf((float)want)) : (double)(ord(got) - ord(want)));
  if (d > worst[f]) worst[f] = d;
  if (d > bound[f] && failures++ < 20) std::printf("FAIL %s(%a, %a) = %a, want %a (%g ulp)\n", names[f], x, y, got, want, d);
}}
static void one(double x, double y) {{
  check(0, x, 0, tl_m64_tanh(x), std::tanh(x));
  check(1, x, 0, tl_m64_erf(x), std::erf(x));
  check(2, x, 0, tl_m64_sin(x), std::sin(x));
  check(3, x, 0, tl_m64_cos(x), std::cos(x));
  check(4, x, y, tl_m64_pow(x, y), std::pow(x, y));
  const float xf = (float)x, yf = (float)y;
  if (std::isnan(x) || std::isinf(x) || !std::isinf(xf)) {{
    // The f32 reference is the host's f64 function rounded to f32 (its f32 functions are
    // up to 2 ulp off in places).
    check(5, xf, 0, (float)tl_m64_tanh(xf), (float)std::tanh((double)xf));
    check(6, xf, 0, (float)tl_m64_erf(xf), (float)std::erf((double)xf));
    check(7, xf, 0, (float)tl_m64_sin(xf), (float)std::sin((double)xf));
    check(8, xf, yf, (float)tl_m64_pow(xf, yf), (float)std::pow((double)xf, (double)yf));
  }}
}}
int main() {{
  const double special[] = {{0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 0.55, 0.5499999999999999, 1e-310,
    -1e-310, 4.9e-324, 1e-20, 5.999999999999999, 6.0, 20.0, 1e300, -1e300, 1.7976931348623157e308,
    -1.7976931348623157e308, 0.7853981633974483, 0.7853981633974484, 1.5707963267948966, 3.141592653589793,
    6.283185307179586, 1e22, std::nan(""), INFINITY, -INFINITY}};
  for (double x : special)
    for (double y : special) one(x, y);
  // The double closest to a multiple of pi/2 (x mod pi/2 is 2^-61): the exact cosine, from
  // 3000-bit arithmetic (mpmath); some C libraries are 8 ulp off here.
  if (tl_m64_cos(0x1.6ac5b262ca1ffp+849) != -0x1.14ae72e6ba22fp-61 && failures++ < 20)
    std::printf("FAIL cos(0x1.6ac5b262ca1ffp+849) = %a\n", tl_m64_cos(0x1.6ac5b262ca1ffp+849));
  std::mt19937_64 g(11);
  for (int i = 0; i < 3000000; ++i) {{
    double x;
    switch (i % 5) {{
      case 0: x = std::uniform_real_distribution<double>(-1, 1)(g); break;
      case 1: x = std::uniform_real_distribution<double>(-8, 8)(g); break;
      case 2: x = std::uniform_real_distribution<double>(-1e6, 1e6)(g); break;
      case 3: x = std::uniform_real_distribution<double>(-30, 30)(g); break;
      default: {{ unsigned long long b = g(); std::memcpy(&x, &b, 8); }}
    }}
    // pow: a base of either sign within 2^+-20 and an exponent within 40, so that the result
    // stays finite and |y·ln x| (what the bound scales with) at most 560; integers among them.
    double b = std::exp2(std::uniform_real_distribution<double>(-20, 20)(g));
    double y = std::uniform_real_distribution<double>(-40, 40)(g);
    if (i % 7 == 0) y = std::round(y);
    // (Random bits make signalling NaNs too, for which the C library's pow(x, 0) is NaN.)
    one(x, std::isnan(x) ? 1.0 : 0.0);
    check(4, i % 2 ? b : -b, y, tl_m64_pow(i % 2 ? b : -b, y), std::pow(i % 2 ? b : -b, y));
    check(8, (float)b, (float)y, (float)tl_m64_pow((float)b, (float)y), (float)std::pow((double)(float)b, (double)(float)y));
  }}
  for (int f = 0; f < 9; ++f) std::printf("%s %g ulp; ", names[f], worst[f]);
  std::printf("%d failures\n", failures);
  return failures != 0;
}}
"#
    );
    let report = run_host_program("libm64", &text);
    assert!(report.contains("; 0 failures"), "{report}");
}

/// What the fuzzer found accepted by the frontend and rejected by the device compilers, now
/// compiled for AMD with clang (no ROCm) for wave 32 and 64: f64 `exp` / `exp2` / `log`, and
/// `tanh`, `erf`, `sin`, `cos`, `pow` in f64 and f32 (no libcall without device libraries), raw identifiers, Unicode names and names that are
/// C++ keywords or tl.h macros.
#[test]
fn odd_names_and_f64_math_compile_for_amd() {
    let (clang, objdump) = clang19();
    let src = r#"
#[tile_kernel(grid = [N.div_ceil(int)], threads = 64, configs = [r#type(int = 256)])]
pub fn odd<const int: usize>(src: &Tensor<f64, (N,)>, größe: &mut Tensor<f64, (N,)>, TL_TID: f64) {
    let mut r#struct = alloc_fragment::<f64>((int,));
    copy(src.at((block_idx(0) * int,)), &mut r#struct);
    for i in parallel(int) {
        let r#type = r#struct[i];
        let delete = exp(r#type) + exp2(r#type) - log(abs(r#type) + 1.0);
        let r#fn = tanh(delete) + erf(delete) + sin(delete) * cos(delete) + pow(delete, r#type);
        let r#f32 = r#fn as f32;
        let narrow = tanh(r#f32) + erf(r#f32) + sin(r#f32) * cos(r#f32) + pow(r#f32, 0.5);
        r#struct[i] = (r#fn + narrow as f64) * TL_TID;
    }
    copy(&r#struct, größe.at_mut((block_idx(0) * int,)));
}
"#;
    let k = kernel(src);
    let dir = scratch_dir("odd-names");
    for arch in ["gfx1100", "gfx942"] {
        let hip = emit(&k, 0, &Target::by_arch(arch).unwrap(), None).unwrap();
        assert!(
            hip.entry == "tl_odd__type"
                && !hip
                    .source
                    .lines()
                    .any(|l| !l.starts_with("//") && l.contains("r#")),
            "{}",
            hip.source
        );
        let (dis, _) = clang_amd(clang, objdump, &hip.source, arch, &dir);
        assert!(
            dis.contains("tl_odd__type"),
            "{arch}: no entry in the object"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `T::INFINITY`, `T::NEG_INFINITY` and `T::NAN` of every float type.
const FLOAT_CONSTANTS: &str = r#"
#[tile_kernel(grid = [1], threads = 32)]
pub fn constants(a: &mut Tensor<f32, (N,)>, b: &mut Tensor<f16, (N,)>, c: &mut Tensor<bf16, (N,)>, d: &mut Tensor<f64, (N,)>) {
    for i in parallel(1) {
        a[(3 * i,)] = f32::INFINITY;
        a[(3 * i + 1,)] = f32::NEG_INFINITY;
        a[(3 * i + 2,)] = f32::NAN;
        b[(3 * i,)] = f16::INFINITY;
        b[(3 * i + 1,)] = f16::NEG_INFINITY;
        b[(3 * i + 2,)] = f16::NAN;
        c[(3 * i,)] = bf16::INFINITY;
        c[(3 * i + 1,)] = bf16::NEG_INFINITY;
        c[(3 * i + 2,)] = bf16::NAN;
        d[(3 * i,)] = f64::INFINITY;
        d[(3 * i + 1,)] = f64::NEG_INFINITY;
        d[(3 * i + 2,)] = f64::NAN;
    }
}
"#;

#[test]
fn float_constants_are_gcc_builtins_that_clang_compiles() {
    // GCC's builtins, which nvcc, hipcc and clang (with or without HIP headers) all accept in
    // device code; each constant once per float type.
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let src = hip(FLOAT_CONSTANTS, 0, arch).source;
        for (lit, count) in [
            ("(__builtin_huge_val())", 4),
            ("(-__builtin_huge_val())", 4),
            ("(__builtin_nan(\"\"))", 4),
        ] {
            assert_eq!(src.matches(lit).count(), count, "{arch}: {lit} in\n{src}");
        }
    }
    let (clang, objdump) = clang19();
    let dir = scratch_dir("constants");
    for arch in ["gfx1100", "gfx942"] {
        clang_amd(
            clang,
            objdump,
            &hip(FLOAT_CONSTANTS, 0, arch).source,
            arch,
            &dir,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// tl.h's wgmma descriptors against a model of how the tensor cores read shared memory (the
/// PTX ISA's matrix descriptor and canonical layouts; the 128-byte case as measured on an
/// H200, shared/LOWERING.md §4): for every tile shape the lowering admits, every warpgroup and
/// k-step, the element the model reads through the descriptor at each (row, k) of A and
/// (k, column) of B, B as stored (K, N) or marked `.t()` (stored (N, K), read K-major), is the
/// one `sidx<ATOMS>` stored there (what the copies write). The model
/// is `tl_host_hopper.h`'s, the one the sm_90a emulation (kernels/tests/emulation.rs) reads with.
#[test]
fn wgmma_descriptors_read_what_the_atom_layout_stores() {
    let section = format!("{}{}", tl_section("swizzle"), tl_section("wgmma layout"));
    let model = tl_host_section("hopper reads");
    let check = r#"
#include <cstdio>
#include <vector>
using namespace tl_host;
template <int M, int N, int K, int WG>
int check() {
  static_assert(tl::wg::fits<M, N, K, WG>(), "a shape the lowering admits");
  // A at byte 0, B after it on a 1024-byte boundary (as the arena places them), each element
  // holding its own (row, col) number.
  // Then B stored (N, K) (a B marked `.t()`, read K-major) after B.
  const uint32_t a0 = 0, b0 = (M * K * 2 + 1023) / 1024 * 1024;
  const uint32_t bt0 = b0 + (K * N * 2 + 1023) / 1024 * 1024;
  std::vector<uint16_t> smem((bt0 + K * N * 2) / 2, 0xFFFF);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) smem[bt0 / 2 + tl::sidx<tl::ATOMS, K, N>(n, k)] = (uint16_t)(n * K + k);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) smem[a0 / 2 + tl::sidx<tl::ATOMS, K, M>(i, k)] = (uint16_t)(i * K + k);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) smem[b0 / 2 + tl::sidx<tl::ATOMS, N, K>(k, n)] = (uint16_t)(k * N + n);
  int bad = 0;
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int g = 0; g < WG; ++g) {
      const Desc d = decode(tl::wg::desc_a<M, K>(a0, g, k0));
      for (int r = 0; r < 64; ++r)
        for (int k = 0; k < 16; ++k) bad += smem[a_addr(d, r, k) / 2] != (uint16_t)((64 * g + r) * K + k0 + k);
    }
    const Desc d = decode(tl::wg::desc_b<K, N>(b0, k0));
    if (d.mode != 1) ++bad;  // B's atoms are 64 columns: 128-byte rows
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < N; ++n) bad += smem[b_addr(d, k, n) / 2] != (uint16_t)((k0 + k) * N + n);
    const Desc t = decode(tl::wg::desc_b<K, N, true>(bt0, k0));
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < 16; ++k) bad += smem[a_addr(t, n, k) / 2] != (uint16_t)(n * K + k0 + k);
  }
  std::printf("wgmma %dx%dx%d (%d warpgroups): %d failures\n", M, N, K, WG, bad);
  return bad;
}
int main() {
  const int bad = check<64, 64, 32, 1>() + check<128, 128, 32, 2>() + check<128, 256, 32, 2>() +
                  check<64, 128, 64, 1>() + check<128, 256, 64, 2>() + check<192, 128, 128, 3>() +
                  check<256, 64, 192, 4>();
  std::printf("wgmma: %d failures\n", bad);
  return bad != 0;
}
"#;
    let text = format!(
        "#include <stdint.h>\n#define TL_SWIZZLE constexpr\n#define TL_WGMMA_LAYOUT constexpr\nnamespace tl {{\n{section}}}\nnamespace tl_host {{\n{model}}}\n{check}"
    );
    let report = run_host_program("wgmma_layout", &text);
    assert!(report.contains("wgmma: 0 failures"), "{report}");
}

/// `tl::raster` (the tiles of persistent blocks) is a bijection onto the grid for grids that
/// are and are not multiples of the group, and consecutive tiles of a group share their rows.
#[test]
fn raster_visits_every_tile_of_the_grid_once() {
    let text = format!(
        "#include <cstdio>\n#include <vector>\nnamespace tl {{\ntypedef long long index;\n#define TL_RASTER inline\n{}}}\n{}",
        tl_section("raster"),
        r#"
template <int G>
int check(long long gx, long long gy, long long gz) {
  std::vector<int> seen(gx * gy * gz, 0);
  int bad = 0;
  for (long long t = 0; t < gx * gy * gz; ++t) {
    long long bx, by, bz;
    tl::raster<G>(t, gx, gy, bx, by, bz);
    if (bx < 0 || bx >= gx || by < 0 || by >= gy || bz < 0 || bz >= gz) { ++bad; continue; }
    ++seen[(bz * gy + by) * gx + bx];
    // The first G tiles of a whole group are one column of G consecutive rows.
    const long long r = t % (gx * gy);
    if (gy % G == 0 && r % (G * gx) < G && (bx != 0 || by != r / (G * gx) * G + r % G)) ++bad;
  }
  for (int s : seen) bad += s != 1;
  return bad;
}
int main() {
  int bad = check<8>(1, 1, 1) + check<8>(5, 3, 1) + check<8>(7, 16, 2) + check<8>(32, 19, 1) +
            check<1>(4, 6, 3) + check<4>(3, 13, 2);
  std::printf("raster: %d failures\n", bad);
  return bad != 0;
}
"#
    );
    let report = run_host_program("raster", &text);
    assert!(report.contains("raster: 0 failures"), "{report}");
}
