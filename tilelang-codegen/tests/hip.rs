//! HIP C++ generation: deterministic, pinned by snapshots for one NVIDIA, one RDNA and one CDNA
//! target, and the decisions the emitter makes (storage, layouts, barriers) on small kernels;
//! the matrix-unit layouts of tl.h checked on the host, and the AMD GEMMs compiled down to their
//! matrix instructions with clang++-19.
//!
//! After an intended change to the generated code, regenerate the snapshots with
//! `UPDATE_SNAPSHOTS=1 cargo test -p tilelang-codegen --test hip` and review the diff.

mod common;

use common::kernel;
use std::path::{Path, PathBuf};
use std::process::Command;
use tilelang_codegen::lower::{emit, launch, HipKernel, TmaMap};
use tilelang_codegen::target::Target;

fn hip(src: &str, config: usize, arch: &str) -> HipKernel {
    emit(&kernel(src), config, &Target::by_arch(arch).unwrap(), None).unwrap()
}

const GEMM: &str = r#"
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = 128, configs = [t64(BM = 64, BN = 64, BK = 32)])]
pub fn gemm<const BM: usize, const BN: usize, const BK: usize>(a: &Tensor<f16, (M, K)>, b: &Tensor<f16, (K, N)>, c: &mut Tensor<f16, (M, N)>) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16, (BM, BK)>();
    let mut b_s = alloc_shared::<f16, (BK, BN)>();
    let mut acc = alloc_fragment::<f32, (BM, BN)>();
    clear(&mut acc);
    for k in pipelined(K.div_ceil(BK), 2) {
        copy(a.at((by * BM, k * BK)), &mut a_s);
        copy(b.at((k * BK, bx * BN)), &mut b_s);
        gemm(&a_s, &b_s, &mut acc);
    }
    for (i, j) in parallel(BM, BN) {
        acc[(i, j)] = max(acc[(i, j)], 0.0);
    }
    copy(&acc, c.at_mut((by * BM, bx * BN)));
}
"#;

const ROWMAX: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r4(BM = 4, BN = 256)])]
pub fn rowmax<const BM: usize, const BN: usize>(a: &Tensor<f32, (M, N)>, out: &mut Tensor<f32, (M,)>) {
    let row0 = block_idx(0) * BM;
    let mut t = alloc_fragment::<f32, (BM, BN)>();
    let mut m = alloc_fragment::<f32, (BM,)>();
    let mut best = alloc_fragment::<f32, (BM,)>();
    fill(&mut best, -1.0e30);
    for c in serial(N.div_ceil(BN)) {
        copy(a.at((row0, c * BN)), &mut t);
        reduce_max(&t, &mut m, 1);
        for i in parallel(BM) {
            best[i] = max(best[i], m[i]);
        }
    }
    copy(&best, out.at_mut((row0,)));
}
"#;

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

/// The GEMM kernel with another element type, block size and tile.
fn gemm_variant(dtype: &str, threads: u32, bm: u32, bn: u32, bk: u32) -> String {
    GEMM.replace("threads = 128", &format!("threads = {threads}"))
        .replace(
            "BM = 64, BN = 64, BK = 32",
            &format!("BM = {bm}, BN = {bn}, BK = {bk}"),
        )
        .replace("f16", dtype)
}

#[test]
fn gemm_uses_the_matrix_unit_of_each_target() {
    let nv = hip(GEMM, 0, "sm_90");
    // Both operand tiles are only written by copies from global memory and read by the mma
    // gemm: stored swizzled (for conflict-free ldmatrix), and the copies know it.
    assert!(
        nv.source
            .contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, true, true>"),
        "{}",
        nv.source
    );
    // Each copy appears twice (the pipeline's prologue and steady state), swizzled, async and
    // from read-only tensors.
    assert_eq!(nv.source.matches("tl::copy_g2s<").count(), 4);
    assert_eq!(
        nv.source.matches(", 128, true, true, true>(t_").count(),
        4,
        "{}",
        nv.source
    );
    // The ReLU epilogue iterates in the accumulator's mma layout, owner-only: no shared memory
    // beyond the two operand tiles.
    assert!(nv.source.contains("tl::mma_coord<64, 64, 2, 2>"));
    assert_eq!(nv.shared_bytes, 2 * (64 * 32 * 2 + 32 * 64 * 2)); // two pipeline stages
                                                                  // 128 threads: four waves of 32 in a 2×2 grid on RDNA, each wave a 32×32 sub-tile of 2×2
                                                                  // WMMA tiles; two waves of 64 side by side on CDNA, each a 64×32 sub-tile of two 32×32 MFMA
                                                                  // tiles. The epilogue and the store run in the same layout (32 registers a thread
                                                                  // everywhere: 64·64 / 128).
    for (arch, gemm, coord) in [
        (
            "gfx1100",
            "tl::gemm_wmma<tl::half, 64, 64, 32, 2, 2>",
            "tl::wmma_coord<64, 64, 2, 2>",
        ),
        (
            "gfx1151",
            "tl::gemm_wmma<tl::half, 64, 64, 32, 2, 2>",
            "tl::wmma_coord<64, 64, 2, 2>",
        ),
        (
            "gfx1201",
            "tl::gemm_wmma12<tl::half, 64, 64, 32, 2, 2>",
            "tl::wmma12_coord<64, 64, 2, 2>",
        ),
        (
            "gfx90a",
            "tl::gemm_mfma<tl::half, 64, 64, 32, 1, 2, 32>",
            "tl::mfma_coord<64, 64, 1, 2, 32>",
        ),
        (
            "gfx942",
            "tl::gemm_mfma<tl::half, 64, 64, 32, 1, 2, 32>",
            "tl::mfma_coord<64, 64, 1, 2, 32>",
        ),
    ] {
        let k = hip(GEMM, 0, arch);
        assert!(k.source.contains(gemm), "{arch}: {}", k.source);
        // The accumulator's mapping: its loop, and the store of the tile (wholly inside the
        // tensor with no test per element, across its edge with one).
        assert_eq!(k.source.matches(coord).count(), 3, "{arch}: {}", k.source);
        assert_eq!(
            k.source
                .matches("if (tl::tile_inside<1, 1, 64, 64>(__g)) {")
                .count(),
            1,
            "{arch}: {}",
            k.source
        );
        assert!(
            k.source.contains("float b2_acc[32];"),
            "{arch}: {}",
            k.source
        );
        assert!(!k.source.contains("gemm_fma"), "{arch}: {}", k.source);
        assert_eq!(k.shared_bytes, 64 * 32 * 2 + 32 * 64 * 2, "{arch}");
    }
    let amd = hip(GEMM, 0, "gfx1030");
    assert!(amd.source.contains("tl::gemm_fma<"), "{}", amd.source);
}

#[test]
fn gemm_falls_back_to_fma_where_no_instruction_fits() {
    let emit = |dtype: &str, threads: u32, bm: u32, bn: u32, bk: u32, arch: &str| {
        hip(&gemm_variant(dtype, threads, bm, bn, bk), 0, arch).source
    };
    let fma = "tl::gemm_fma<";
    // bf16 has WMMA and MFMA forms too.
    assert!(emit("bf16", 128, 64, 64, 32, "gfx1100")
        .contains("tl::gemm_wmma<tl::bfloat, 64, 64, 32, 2, 2>"));
    assert!(emit("bf16", 128, 64, 64, 32, "gfx1201")
        .contains("tl::gemm_wmma12<tl::bfloat, 64, 64, 32, 2, 2>"));
    assert!(emit("bf16", 128, 64, 64, 32, "gfx90a")
        .contains("tl::gemm_mfma<tl::bfloat, 64, 64, 32, 1, 2, 32>"));
    // f32 operands: no instruction.
    for arch in ["sm_90", "gfx1100", "gfx1201", "gfx942"] {
        assert!(emit("f32", 128, 64, 64, 32, arch).contains(fma), "{arch}");
    }
    // K = 8: too shallow for WMMA's (and mma.sync's) 16, enough for MFMA 32×32×8.
    assert!(emit("f16", 128, 64, 64, 8, "gfx1100").contains(fma));
    assert!(emit("f16", 128, 64, 64, 8, "gfx1201").contains(fma));
    assert!(emit("f16", 128, 64, 64, 8, "sm_90").contains(fma));
    assert!(emit("f16", 128, 64, 64, 8, "gfx942")
        .contains("tl::gemm_mfma<tl::half, 64, 64, 8, 1, 2, 32>"));
    // 96 threads: not whole waves of 64 on CDNA; on RDNA three waves cannot split 64×64 into
    // 16×16 tiles.
    assert!(emit("f16", 96, 64, 64, 32, "gfx942").contains(fma));
    assert!(emit("f16", 96, 64, 64, 32, "gfx1100").contains(fma));
    // A 32×32 tile over two waves of 64: no room for 32×32 MFMA tiles, 16×16×16 ones fit.
    let small = emit("f16", 128, 32, 32, 32, "gfx942");
    assert!(
        small.contains("tl::gemm_mfma<tl::half, 32, 32, 32, 1, 2, 16>"),
        "{small}"
    );
    assert!(
        small.contains("tl::mfma_coord<32, 32, 1, 2, 16>"),
        "{small}"
    );
    assert!(small.contains("float b2_acc[8];"), "{small}");
    // 16×16 over two waves of 64: nothing fits.
    assert!(emit("f16", 128, 16, 16, 16, "gfx942").contains(fma));
    // 16×16 over one wave: one instruction tile on each AMD unit.
    assert!(emit("f16", 64, 16, 16, 16, "gfx90a")
        .contains("tl::gemm_mfma<tl::half, 16, 16, 16, 1, 1, 16>"));
    assert!(emit("f16", 32, 16, 16, 16, "gfx1100")
        .contains("tl::gemm_wmma<tl::half, 16, 16, 16, 1, 1>"));
    assert!(emit("f16", 32, 16, 16, 16, "gfx1201")
        .contains("tl::gemm_wmma12<tl::half, 16, 16, 16, 1, 1>"));
}

/// The host half of the layout check: tl.h's pure index section, then these checks. Spot values
/// are entries of AMD Matrix Instruction Calculator 1.3.2's `--matrix-layout` tables (independent
/// of the formulas in tl.h); the rest checks that the formulas are consistent: each operand
/// element is held by the documented number of lanes, each accumulator element by exactly one
/// (thread, register), and the GEMM's operand addressing computes A·B under the layouts.
const LAYOUT_CHECK: &str = r#"
int failures = 0, checks = 0;
void check(bool ok, const char* what, const char* name, int a, int b, int c) {
  ++checks;
  if (!ok && failures++ < 20) std::printf("FAIL %s %s (%d, %d, %d)\n", what, name, a, b, c);
}
struct Spot { char m; int lane, e, row, col; };
template <class I> void spots(const char* name, std::initializer_list<Spot> s) {
  for (const Spot& p : s) {
    const bool ok = p.m == 'A' ? I::a_row(p.lane) == p.row && I::ab_k(p.lane, p.e) == p.col
                  : p.m == 'B' ? I::ab_k(p.lane, p.e) == p.row && I::b_col(p.lane) == p.col
                  : I::c(p.lane, p.e).row == p.row && I::c(p.lane, p.e).col == p.col;
    check(ok, "documented entry", name, p.m, p.lane, p.e);
  }
}
template <class I> void instruction(const char* name) {
  std::vector<int> a(I::IM * I::IK), b(I::IK * I::IN), c(I::IM * I::IN);
  for (int l = 0; l < I::WAVE; ++l)
    for (int e = 0; e < I::AE; ++e) {
      const int i = I::a_row(l), j = I::b_col(l), k = I::ab_k(l, e);
      const bool in = i >= 0 && i < I::IM && j >= 0 && j < I::IN && k >= 0 && k < I::IK;
      check(in, "operand in the tile", name, l, e, 0);
      if (in) ++a[i * I::IK + k], ++b[k * I::IN + j];
    }
  const int copies = I::WAVE * I::AE / (I::IM * I::IK);
  for (int x = 0; x < I::IM * I::IK; ++x) check(a[x] == copies, "A element held", name, x, a[x], copies);
  for (int x = 0; x < I::IK * I::IN; ++x) check(b[x] == copies, "B element held", name, x, b[x], copies);
  for (int l = 0; l < I::WAVE; ++l)
    for (int q = 0; q < I::CE; ++q) {
      const rc p = I::c(l, q);
      const bool in = p.row >= 0 && p.row < I::IM && p.col >= 0 && p.col < I::IN;
      check(in, "C element in the tile", name, l, q, 0);
      if (in) ++c[p.row * I::IN + p.col];
    }
  for (int x = 0; x < I::IM * I::IN; ++x) check(c[x] == 1, "C element held once", name, x, c[x], 0);
}
// The block GEMM as tl.h's mx::gemm runs it, each instruction executed by its documented
// semantics: the operand tiles are rebuilt from the lanes' registers through the layouts,
// multiplied, and the product scattered to the lanes' accumulators through the C layout.
template <class I, int M, int N, int K, int WM, int WN> void block(const char* name) {
  typedef tiling<I, M, N, WM, WN> L;
  std::vector<double> A(M * K), B(K * N), ref(M * N, 0.0), acc(L::THREADS * L::NREG, 0.0);
  for (int i = 0; i < M * K; ++i) A[i] = (i * 7 % 11) - 5;
  for (int i = 0; i < K * N; ++i) B[i] = (i * 5 % 13) - 6;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) ref[i * N + j] += A[i * K + k] * B[k * N + j];
  std::vector<int> seen(M * N, 0);
  for (int t = 0; t < L::THREADS; ++t)
    for (int r = 0; r < L::NREG; ++r) {
      const rc p = L::c(t, r);
      const bool in = p.row >= 0 && p.row < M && p.col >= 0 && p.col < N;
      check(in, "register in the block tile", name, t, r, 0);
      if (in) ++seen[p.row * N + p.col];
    }
  for (int x = 0; x < M * N; ++x) check(seen[x] == 1, "block element held once", name, x, seen[x], 0);
  for (int k0 = 0; k0 < K; k0 += I::IK)
    for (int w = 0; w < WM * WN; ++w)
      for (int mt = 0; mt < L::MT; ++mt)
        for (int nt = 0; nt < L::NT; ++nt) {
          std::vector<double> a(I::IM * I::IK, 1e300), b(I::IK * I::IN, 1e300);
          for (int l = 0; l < I::WAVE; ++l)
            for (int e = 0; e < I::AE; ++e) {
              const int t = w * I::WAVE + l, ia = L::a_index(t, K, mt, k0, e), ib = L::b_index(t, nt, k0, e);
              const bool in = ia >= 0 && ia < M * K && ib >= 0 && ib < K * N;
              check(in, "operand address in the tile", name, t, e, k0);
              if (!in) continue;
              double& x = a[I::a_row(l) * I::IK + I::ab_k(l, e)];
              double& y = b[I::ab_k(l, e) * I::IN + I::b_col(l)];
              check(x == 1e300 || x == A[ia], "A copies agree", name, t, e, k0);
              check(y == 1e300 || y == B[ib], "B copies agree", name, t, e, k0);
              x = A[ia];
              y = B[ib];
            }
          for (int l = 0; l < I::WAVE; ++l)
            for (int q = 0; q < I::CE; ++q) {
              const rc p = I::c(l, q);
              double d = 0;
              for (int k = 0; k < I::IK; ++k) d += a[p.row * I::IK + k] * b[k * I::IN + p.col];
              acc[(w * I::WAVE + l) * L::NREG + (mt * L::NT + nt) * I::CE + q] += d;
            }
        }
  for (int t = 0; t < L::THREADS; ++t)
    for (int r = 0; r < L::NREG; ++r) {
      const rc p = L::c(t, r);
      if (p.row >= 0 && p.row < M && p.col >= 0 && p.col < N)
        check(acc[t * L::NREG + r] == ref[p.row * N + p.col], "product", name, t, r, 0);
    }
}
int main() {
  spots<Wmma11>("Wmma11", {{'A', 0, 0, 0, 0}, {'A', 17, 5, 1, 5}, {'B', 3, 9, 9, 3}, {'B', 30, 15, 15, 14}, {'D', 0, 7, 14, 0}, {'D', 16, 0, 1, 0}, {'D', 31, 7, 15, 15}});  // RDNA3 v_wmma_f32_16x16x16_f16
  spots<Wmma12>("Wmma12", {{'A', 16, 0, 0, 4}, {'A', 5, 4, 5, 8}, {'A', 31, 7, 15, 15}, {'B', 16, 4, 12, 0}, {'B', 2, 3, 3, 2}, {'D', 16, 3, 11, 0}, {'D', 15, 7, 7, 15}, {'D', 31, 0, 8, 15}});  // RDNA4 v_wmma_f32_16x16x16_f16
  spots<Mfma32>("Mfma32", {{'A', 33, 1, 1, 5}, {'A', 31, 3, 31, 3}, {'B', 62, 2, 6, 30}, {'D', 0, 4, 8, 0}, {'D', 32, 0, 4, 0}, {'D', 33, 5, 13, 1}, {'D', 63, 15, 31, 31}});  // CDNA3 v_mfma_f32_32x32x8_f16
  spots<Mfma16>("Mfma16", {{'A', 16, 0, 0, 4}, {'A', 63, 3, 15, 15}, {'B', 47, 2, 10, 15}, {'D', 16, 0, 4, 0}, {'D', 33, 2, 10, 1}, {'D', 63, 3, 15, 15}});  // CDNA3 v_mfma_f32_16x16x16_f16
  instruction<Wmma11>("Wmma11");
  instruction<Wmma12>("Wmma12");
  instruction<Mfma32>("Mfma32");
  instruction<Mfma16>("Mfma16");
  block<Wmma11, 64, 64, 32, 2, 2>("Wmma11 64x64x32 2x2");
  block<Wmma11, 64, 64, 32, 4, 1>("Wmma11 64x64x32 4x1");
  block<Wmma11, 32, 64, 48, 1, 2>("Wmma11 32x64x48 1x2");
  block<Wmma11, 16, 16, 16, 1, 1>("Wmma11 16x16x16 1x1");
  block<Wmma12, 64, 64, 32, 2, 2>("Wmma12 64x64x32 2x2");
  block<Wmma12, 128, 32, 16, 2, 1>("Wmma12 128x32x16 2x1");
  block<Wmma12, 16, 16, 16, 1, 1>("Wmma12 16x16x16 1x1");
  block<Mfma32, 64, 64, 32, 2, 1>("Mfma32 64x64x32 2x1");
  block<Mfma32, 64, 64, 16, 1, 1>("Mfma32 64x64x16 1x1");
  block<Mfma32, 128, 128, 8, 2, 2>("Mfma32 128x128x8 2x2");
  block<Mfma32, 32, 64, 24, 1, 2>("Mfma32 32x64x24 1x2");
  block<Mfma16, 32, 32, 32, 1, 2>("Mfma16 32x32x32 1x2");
  block<Mfma16, 16, 16, 16, 1, 1>("Mfma16 16x16x16 1x1");
  block<Mfma16, 64, 48, 32, 2, 1>("Mfma16 64x48x32 2x1");
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
"#;

fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tl-hip-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A host C++ compiler: $CXX, else c++, g++ or clang++ on PATH.
fn host_cxx() -> Option<String> {
    let mut names: Vec<String> = std::env::var("CXX").into_iter().collect();
    names.extend(["c++", "g++", "clang++"].map(String::from));
    names.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn matrix_layouts_hold_each_element_once_and_compute_the_product() {
    let section = tl_section("matrix layouts");
    let text = format!("#include <cstdio>\n#include <initializer_list>\n#include <vector>\n#define TL_LAYOUT constexpr\nnamespace tl {{\n{section}}}\nusing namespace tl::mx;\n{LAYOUT_CHECK}");
    let report = run_host_program("layouts", &text);
    assert!(report.contains(", 0 failures"), "{report}");
}

/// The text between `// BEGIN <name>` and `// END <name>` in whichever of tl.h's headers marks
/// it: the sections written to compile on the host too, which these tests run there.
fn tl_section(name: &str) -> &'static str {
    let begin = format!("// BEGIN {name}\n");
    let (_, header) = tilelang_codegen::lower::HEADERS
        .iter()
        .find(|(_, text)| text.contains(&begin))
        .unwrap_or_else(|| panic!("no header of tl.h marks a section `{name}`"));
    section_of(header, name)
}

/// The same for `tl_host.h`, the host emulation's platform layer.
fn tl_host_section(name: &str) -> &'static str {
    section_of(include_str!("../include/tl_host.h"), name)
}

fn section_of(header: &'static str, name: &str) -> &'static str {
    let (begin, end) = (format!("// BEGIN {name}\n"), format!("// END {name}\n"));
    let start = header
        .find(&begin)
        .unwrap_or_else(|| panic!("tl.h marks no section `{name}`"))
        + begin.len();
    &header[start..header.find(&end).expect("the section ends")]
}

/// Compiles a C++17 program with the host compiler, runs it, asserts that it exits with 0 and
/// returns what it printed.
fn run_host_program(name: &str, text: &str) -> String {
    let cxx = host_cxx().expect("this test needs a host C++ compiler ($CXX, c++, g++ or clang++)");
    let dir = scratch_dir(name);
    let (src, exe) = (dir.join(format!("{name}.cpp")), dir.join(name));
    std::fs::write(&src, text).unwrap();
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cxx} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    let report = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
    report
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
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn barriers_separate_writers_from_readers_and_nothing_else() {
    // A plain (serial) K loop; the pipelined one has its own test below.
    let serial = GEMM.replace("pipelined(K.div_ceil(BK), 2)", "serial(K.div_ceil(BK))");
    assert_ne!(serial, GEMM);
    let src = hip(&serial, 0, "sm_90").source;
    let body: Vec<&str> = src
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    // In the K loop: a barrier before the copies (the previous iteration's gemm read the tiles)
    // and one between the copies and the gemm; none between the two copies.
    let loop_start = body
        .iter()
        .position(|l| l.starts_with("for (tl::index"))
        .unwrap();
    let seq: Vec<&str> = body[loop_start + 1..loop_start + 6]
        .iter()
        .map(|l| {
            if l.starts_with("tl::sync") {
                "sync"
            } else if l.contains("copy_g2s") {
                "copy"
            } else if l.contains("gemm_mma") {
                "gemm"
            } else {
                "?"
            }
        })
        .collect();
    assert_eq!(seq, ["sync", "copy", "copy", "sync", "gemm"], "{src}");
    // The epilogue and the store touch only registers: no barrier after the loop.
    let after: Vec<&&str> = body[loop_start + 6..]
        .iter()
        .filter(|l| l.starts_with("tl::sync"))
        .collect();
    assert!(after.is_empty(), "{src}");
}

/// [`ROWMAX`] with a combine the reduction cannot be deferred into (a sum of per-tile
/// maxima): the reduction runs in every iteration.
fn per_tile() -> String {
    let s = ROWMAX.replace("best[i] = max(best[i], m[i]);", "best[i] += m[i];");
    assert_ne!(s, ROWMAX);
    s
}

#[test]
fn reductions_run_in_registers_with_whole_waves() {
    // 4 rows of 128 over 128 threads, in chunks of 4 floats (16 bytes): 32 consecutive
    // threads share a row, 4 source registers per row register, each thread holding one row
    // of `m` and `best` (a row layout), on wave 32 and wave 64 alike; no shared memory, and
    // the final copy is made by one thread per group.
    let rows = per_tile().replace("BN = 256", "BN = 128");
    for (arch, wave) in [("sm_90", 32), ("gfx1100", 32), ("gfx942", 64)] {
        let k = hip(&rows, 0, arch);
        let src = &k.source;
        assert!(
            src.contains(&format!(
                "tl::reduce_rows<tl::Max, float, 1, 4, 32, {wave}, 128>(b0_t, b1_m, nullptr);"
            )),
            "{arch}: {src}"
        );
        assert_eq!(k.shared_bytes, 0, "{arch}: {src}");
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);
        assert!(
            src.contains("float b1_m[1];") && src.contains("float b2_best[1];"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("const unsigned __L = __r * 4 + TL_TID / 32;"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("if (TL_TID % 32 == 0) { if (("),
            "{arch}: {src}"
        );
        assert!(!src.contains("tl::sync"), "{arch}: {src}");
    }
}

#[test]
fn rows_across_waves_exchange_through_shared_memory_once() {
    // One row of 1024 over 128 threads: every thread meets the row, the four waves' partials
    // meet in 16 bytes of shared memory. In the loop, the exchange area the previous
    // iteration read is written again: one barrier before the reduction, none elsewhere.
    let one_row = per_tile().replace("r4(BM = 4, BN = 256)", "r1(BM = 1, BN = 1024)");
    let k = hip(&one_row, 0, "sm_90");
    let src = &k.source;
    assert!(
        src.contains("tl::reduce_rows<tl::Max, float, 1, 8, 128, 32, 128>(b0_t, b1_m, (float*)(tl_smem + 0));"),
        "{src}"
    );
    assert_eq!(k.shared_bytes, 16, "{src}");
    let body: Vec<&str> = src
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    // The loop is printed twice, for its interior iterations and the rest (lower/interior.rs):
    // each copy of the reduction has its barrier, and there is no other.
    let at: Vec<usize> = (0..body.len())
        .filter(|&i| body[i].starts_with("tl::reduce_rows"))
        .collect();
    assert_eq!(at.len(), 2, "{src}");
    assert!(at.iter().all(|&i| body[i - 1] == "tl::sync();"), "{src}");
    assert_eq!(
        body.iter().filter(|l| l.starts_with("tl::sync")).count(),
        2,
        "{src}"
    );
    // The broadcast form: a row read inside a loop over the tile is register `__r / 8` of
    // the row fragment (8 registers per chunk, one chunk of the row per thread).
    let bcast = one_row.replace(
        "        reduce_max(&t, &mut m, 1);",
        "        reduce_max(&t, &mut m, 1);\n        for (i, j) in parallel(BM, BN) {\n            t[(i, j)] = t[(i, j)] - m[i];\n        }",
    );
    assert_ne!(bcast, one_row);
    let src = hip(&bcast, 0, "sm_90").source;
    assert!(src.contains("b1_m[__r / 8]"), "{src}");
}

/// A tail guard `c·BN + j < N` on a tile coordinate `j` is printed as a 32-bit comparison
/// with a bound that does not change across the loop (ptxas kept a 64-bit threshold per
/// unrolled element: online softmax went from 78 to 57 registers); `j < N` alone, or a bound
/// that changes per element, keeps the 64-bit form.
#[test]
fn tail_guards_on_tile_coordinates_compare_in_32_bits() {
    let masked = ROWMAX.replace(
        "        reduce_max(&t, &mut m, 1);",
        "        for (i, j) in parallel(BM, BN) {\n            t[(i, j)] = if_then_else(c * BN + j < N, t[(i, j)], -1.0e30);\n        }\n        reduce_max(&t, &mut m, 1);",
    );
    assert_ne!(masked, ROWMAX);
    let src = hip(&masked, 0, "sm_90").source;
    assert!(
        src.contains("(((int)v")
            && src.contains("< tl::clamp32(tl::sub<tl::index>(n_N, tl::mul<tl::index>(v"),
        "{src}"
    );
    for other in ["j < N", "c * BN + j < N + i"] {
        let k = masked.replace("c * BN + j < N", other);
        let src = hip(&k, 0, "sm_90").source;
        assert!(!src.contains("clamp32"), "{other}: {src}");
    }
}

#[test]
fn row_fragments_without_a_register_parent_fall_back_to_shared_memory() {
    // `m` is read in a loop over global tensors only: no register tile decides where its rows
    // are, so it (and the tile it reduces) are demoted, and the reduction reads shared memory.
    let free = ROWMAX.replace(
        "        for i in parallel(BM) {\n            best[i] = max(best[i], m[i]);\n        }",
        "        for (i, j) in parallel(BM, BN) {\n            out[row0 + i] = m[i] + a[(row0 + i, c * BN + j)];\n        }",
    );
    assert_ne!(free, ROWMAX);
    let k = hip(&free, 0, "sm_90");
    // The build reports the demotion (a warning and the manifest), naming the fragments.
    assert_eq!(k.demoted, ["t", "m"], "{}", k.source);
    let src = k.source;
    assert!(
        src.contains("tl::reduce<tl::Max, float, 4, 256, 1, 128, 32>"),
        "{src}"
    );
    assert!(!src.contains("reduce_rows"), "{src}");
}

#[test]
fn only_tiles_that_copies_write_and_mma_reads_are_swizzled() {
    // A loop reads `a_s` directly: it keeps the plain layout, `b_s` is still swizzled.
    let touched = GEMM.replace(
        "        gemm(&a_s, &b_s, &mut acc);",
        "        gemm(&a_s, &b_s, &mut acc);\n        for (i, j) in parallel(BM, BK) {\n            a_s[(i, j)] = a_s[(i, j)] * 2.0;\n        }",
    );
    assert_ne!(touched, GEMM);
    let nv = hip(&touched, 0, "sm_90");
    assert!(
        nv.source
            .contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, false, true>"),
        "{}",
        nv.source
    );
    assert!(
        nv.source.contains("64, 32, 128, false, true, true>(t_a"),
        "{}",
        nv.source
    );
    assert!(
        nv.source.contains("32, 64, 128, true, true, true>(t_b"),
        "{}",
        nv.source
    );
    // AMD matrix units read operands element-wise: nothing is swizzled there.
    for arch in ["gfx1100", "gfx942", "gfx1030"] {
        let k = hip(GEMM, 0, arch);
        // (The flag after the thread count is the swizzle; the last one, read-only, is set.)
        assert!(!k.source.contains(", 128, true"), "{arch}: {}", k.source);
    }
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

const TRANSPOSE: &str = r#"
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = T, configs = [a(BM = 64, BN = 64, T = 256), b(BM = 32, BN = 32, T = 128), c(BM = 64, BN = 128, T = 256), d(BM = 128, BN = 64, T = 256), e(BM = 24, BN = 40, T = 64)])]
pub fn transpose<const BM: usize, const BN: usize, const T: usize>(x: &Tensor<f16, (M, N)>, y: &mut Tensor<f16, (N, M)>) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut s = alloc_shared::<f16, (BM, BN)>();
    let mut t = alloc_fragment::<f16, (BN, BM)>();
    copy(x.at((r0, c0)), &mut s);
    for (j, i) in parallel(BN, BM) {
        t[(j, i)] = s[(i, j)];
    }
    copy(&t, y.at_mut((c0, r0)));
}
"#;

/// A shared tile padded past the columns its loads reach (`BN + 2`, the CUDA habit against
/// bank conflicts) is narrowed to those columns (lower/trim.rs): its copy moves `BN` columns
/// as whole vectors, and the swizzle pass lays it out as it does the unpadded tile, so both
/// print the same code. Reads past `BN`, a tile that is also stored to or copied out, and a
/// read the intervals cannot bound keep the declared width.
#[test]
fn unread_padding_of_shared_tiles_is_trimmed() {
    let padded = TRANSPOSE.replace(
        "alloc_shared::<f16, (BM, BN)>()",
        "alloc_shared::<f16>((BM, BN + 2))",
    );
    assert_ne!(padded, TRANSPOSE);
    for config in 0..5 {
        let (plain, pad) = (
            hip(TRANSPOSE, config, "sm_90"),
            hip(&padded, config, "sm_90"),
        );
        assert_eq!(plain.source, pad.source, "config {config}");
        assert_eq!(plain.shared_bytes, pad.shared_bytes, "config {config}");
    }
    let sm90 = Target::by_arch("sm_90").unwrap();
    let shared = |text: &str| launch(&kernel(text), 0, &sm90).unwrap().shared_bytes;
    assert_eq!(shared(&padded), 64 * 64 * 2);
    let kept = [
        // A read of the padding (column BN + 1 for j = BN - 1).
        padded.replace("t[(j, i)] = s[(i, j)];", "t[(j, i)] = s[(i, j + 2)];"),
        // A store into the tile, a copy out of it.
        padded.replace(
            "t[(j, i)] = s[(i, j)];",
            "t[(j, i)] = s[(i, j)];\n        s[(i, j)] = 0.0;",
        ),
        padded
            .replace(
                "copy(&t, y.at_mut((c0, r0)));",
                "copy(&t, y.at_mut((c0, r0)));\n    copy(&s, x.at_mut((r0, c0)));",
            )
            .replace("x: &Tensor<f16, (M, N)>", "x: &mut Tensor<f16, (M, N)>"),
        // An index through a `let`: no interval.
        padded.replace(
            "t[(j, i)] = s[(i, j)];",
            "let jj = j;\n        t[(j, i)] = s[(i, jj)];",
        ),
    ];
    for case in kept {
        assert_ne!(case, padded);
        assert_eq!(shared(&case), 64 * 66 * 2, "{case}");
    }
    // Reads that reach one column short of the padding: 65 columns are kept.
    let one = padded.replace("t[(j, i)] = s[(i, j)];", "t[(j, i)] = s[(i, j + 1)];");
    assert_eq!(shared(&one), 64 * 65 * 2);
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

/// A `pipelined` loop on NVIDIA: its loads become `cp.async` copies into `stages` copies of the
/// tiles, issued `stages - 1` iterations ahead; each iteration waits for its own copies, then
/// one barrier. On AMD (no asynchronous copies here) the loop stays a plain loop.
#[test]
fn pipelined_loops_issue_their_loads_ahead_on_nvidia() {
    let nv = hip(GEMM, 0, "sm_90");
    let body: Vec<&str> = nv
        .source
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    let seq: Vec<&str> = body
        .iter()
        .filter_map(|l| {
            Some(if l.starts_with("tl::cp_async_wait<0>") {
                "wait0"
            } else if l.starts_with("tl::cp_async_commit") {
                "commit"
            } else if l.starts_with("tl::sync") {
                "sync"
            } else if l.contains("copy_g2s") {
                "copy"
            } else if l.contains("gemm_mma") {
                "gemm"
            } else if l.starts_with("for (tl::index") {
                "for"
            } else {
                return None;
            })
        })
        .collect();
    assert_eq!(
        seq,
        [
            "for", "copy", "copy", "commit", // prologue: stage 0
            "for", "wait0", "sync", "copy", "copy", "commit", "gemm",  // steady state
            "wait0", // drain
        ],
        "{}",
        nv.source
    );
    // Two stages of each 64×32 / 32×64 f16 tile.
    assert_eq!(nv.shared_bytes, 2 * (64 * 32 * 2 + 32 * 64 * 2));
    assert!(nv.source.contains("(__i1 % 2) * 4096"), "{}", nv.source);
    // Three stages: waits leave one group in flight.
    let three = hip(
        &GEMM.replace("K.div_ceil(BK), 2)", "K.div_ceil(BK), 3)"),
        0,
        "sm_90",
    );
    assert!(
        three.source.contains("tl::cp_async_wait<1>();"),
        "{}",
        three.source
    );
    assert_eq!(three.shared_bytes, 3 * (64 * 32 * 2 + 32 * 64 * 2));
    // A tile also used after the loop cannot be staged: the loop stays plain.
    let used_after = GEMM.replace(
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));\n    copy(&a_s, c.at_mut((0, 0)));",
    );
    assert_ne!(used_after, GEMM);
    let plain = hip(&used_after, 0, "sm_90");
    assert!(!plain.source.contains("cp_async"), "{}", plain.source);
    for arch in ["gfx1100", "gfx942", "gfx1030"] {
        let k = hip(GEMM, 0, arch);
        assert!(!k.source.contains("cp_async"), "{arch}: {}", k.source);
        assert_eq!(k.shared_bytes, 64 * 32 * 2 + 32 * 64 * 2, "{arch}");
    }
}

const SCALE: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [t(BM = 4, BN = 256)])]
pub fn scale<const BM: usize, const BN: usize>(a: &Tensor<f16, (M, N)>, b: &mut Tensor<f32, (M, N)>) {
    let row0 = block_idx(0) * BM;
    let mut t = alloc_fragment::<f16, (BM, BN)>();
    let mut u = alloc_fragment::<f32, (BM, BN)>();
    copy(a.at((row0, 0)), &mut t);
    for (i, j) in parallel(BM, BN) {
        u[(i, j)] = (t[(i, j)] as f32) * 2.0;
    }
    copy(&u, b.at_mut((row0, 0)));
}
"#;

/// Register fragments whose rows are whole 8-element chunks are chunked: a thread owns 8
/// consecutive elements, copies to and from global memory move them as vectors when the region
/// allows (else element by element), and loops over the fragment iterate in the same order.
#[test]
fn fragments_of_whole_chunks_move_as_vectors() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let k = hip(SCALE, 0, arch);
        let src = &k.source;
        // Both fragments (f16 and f32, same shape) are chunked: 4·256 / 128 = 8 registers, in
        // chunks of 4 (16 bytes of the widest copied element, f32), so the f32 stores are one
        // 16-byte vector a lane and the f16 loads 8 bytes.
        assert!(
            src.contains("tl::half b0_t[8];") && src.contains("float b1_u[8];"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::load_chunk<4, tl::half, tl::half, true>(t_a + "),
            "{arch}: {src}"
        );
        assert!(
            // `b` is only written: its stores stream (evict-first).
            src.contains("tl::store_chunk<4, float, float, true>(b1_u + __k * 4, t_b + "),
            "{arch}: {src}"
        );
        // Where the tile lies inside, a thread's two chunks are 2 rows apart (2 · 128 threads
        // · 4 elements a step, rows of 256): a store computes chunk 0's address once and the
        // other as an offset; loads keep an address each.
        assert_eq!(
            src.matches("const tl::index __dp = (tl::index)2 * __g.dims[3];")
                .count(),
            1,
            "{arch}: {src}"
        );
        assert!(
            src.contains("float* const __p = t_b + (")
                && src.contains(
                    "tl::store_chunk<4, float, float, true>(b1_u + __k * 4, __p + __k * __dp);"
                ),
            "{arch}: {src}"
        );
        // Per copy, one block-uniform choice of three paths: a tile wholly inside the tensor
        // moves its chunks with no test each, one across the edge tests each chunk, and a
        // misaligned tensor goes element-wise.
        let starting = |head: &str| {
            src.lines()
                .filter(|l| l.trim_start().starts_with(head))
                .count()
        };
        assert_eq!(starting("if (tl::chunk_aligned<4>("), 2, "{arch}: {src}");
        assert_eq!(
            src.matches("&& tl::tile_inside<1, 1, 4, 256>(__g)) {")
                .count(),
            2,
            "{arch}: {src}"
        );
        assert_eq!(
            starting("} else if (tl::chunk_aligned<4>("),
            2,
            "{arch}: {src}"
        );
        assert!(
            starting("tl::load_chunk<4, tl::half, tl::half, true>(t_a + ") == 1
                && starting("tl::store_chunk<4, float, float, true>(b1_u + __k * 4, __p + ") == 1
                && starting("if (") > 0,
            "{arch}: {src}"
        );
        // The loop uses the chunked order; the fallbacks for regions `chunk_aligned` refuses
        // go chunk by chunk too, element-wise within two small bounds per chunk. A chunk lies
        // in one row, so the column is the chunk's first plus a per-register constant (the
        // compiler folds it into the accesses, where `__L % 256` per register would not be).
        assert_eq!(
            src.matches(
                "const unsigned __L0 = ((__r / 4) * 128 + TL_TID) * 4, __L = __L0 + __r % 4;"
            )
            .count(),
            1,
            "{arch}: {src}"
        );
        assert!(
            src.contains("(tl::index)((__L0 / 256) % 4);")
                && src.contains("(tl::index)((__L0 % 256) + __r % 4);"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::load_chunk_tail<4, tl::half, tl::half>(t_a + (")
                && src.contains("tl::store_chunk_tail<4, float, float>(b1_u + __k * 4, t_b + ("),
            "{arch}: {src}"
        );
        assert_eq!(k.shared_bytes, 0, "{arch}");
    }
    // Rows that are not whole chunks keep the strided layout and the element copies.
    let odd = hip(&SCALE.replace("BN = 256", "BN = 100"), 0, "sm_90");
    assert!(!odd.source.contains("chunk"), "{}", odd.source);
    assert!(
        odd.source
            .contains("const unsigned __L = __r * 128 + TL_TID;"),
        "{}",
        odd.source
    );
    // A gemm accumulator on FMA loops keeps the layout tl::gemm_fma computes in.
    let fma = hip(GEMM, 0, "gfx1030");
    assert!(fma.source.contains("tl::gemm_fma<"), "{}", fma.source);
    assert!(!fma.source.contains("chunk"), "{}", fma.source);
}

const ELEMENTWISE: &str = r#"
#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 128, configs = [b(BLOCK = 1024)])]
pub fn axpy<const BLOCK: usize>(x: &Tensor<f16, (N,)>, y: &Tensor<f16, (N,)>, t: &Tensor<f16, (N, N)>, m: &Tensor<f16, (N,)>, out: &mut Tensor<f16, (N,)>, acc: &mut Tensor<f32, (N,)>) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            let strided = t[(g, 0)];
            let picked = if_then_else(g > 4, m[g], 0.0);
            out[g] = x[g] + y[g] + strided + picked;
            acc[g] = acc[g] + 1.0;
        }
    }
}
"#;

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

/// A `parallel` loop over global tensors runs chunk-wise: unit-stride accesses move as one
/// vector per chunk (tested for alignment at run time, else lane by lane), strided ones and
/// those only some lanes perform (a select's arms) stay per lane, the tail guard is checked for
/// uniformity per chunk (at the chunk's two ends when it is monotone over the lanes) with a
/// lane-by-lane fallback, and a write-once output streams.
#[test]
fn parallel_loops_over_global_tensors_move_vectors() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let src = hip(ELEMENTWISE, 0, arch).source;
        // Chunks of 4 lanes (16 bytes of the widest vector, `acc`'s f32): 1024 / 4 chunks over
        // 128 threads, two each.
        assert!(
            src.contains("for (int __k = 0; __k < 2; ++__k) {")
                && src.contains("const unsigned __L = (__k * 128 + TL_TID) * 4;"),
            "{arch}: {src}"
        );
        // Read-only inputs take the non-coherent path; `acc`, which the kernel writes, not.
        for grouped in ["true>(&t_x[", "true>(&t_y[", "false>(&t_acc["] {
            assert!(
                src.contains(&format!("tl::vload<false, 4, {grouped}")),
                "{arch}: {grouped}: {src}"
            );
        }
        for per_lane in ["t_t[", "t_m["] {
            assert!(
                !src.contains(&format!("4, true>(&{per_lane}")),
                "{arch}: {per_lane}: {src}"
            );
        }
        // `out` is never read: streaming; `acc` is read: plain.
        assert!(
            src.contains("tl::vstore<true, false, 4>(&t_out["),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::vstore<false, false, 4>(&t_acc["),
            "{arch}: {src}"
        );
        // `g < N` changes at most once over a chunk: its first and last lanes decide.
        assert!(
            src.contains("const bool __u = ")
                && src.contains("(__b + 3)")
                && src.contains("if (__u) {")
                && !src.contains("bool __u = true;"),
            "{arch}: {src}"
        );
    }
    // Conditions that may change more than once across the lanes (or monotone ones combined
    // against each other's direction) are compared lane by lane; monotone ones in one
    // direction, combined, still at the two ends.
    for (cond, lane_by_lane) in [
        ("if g < N && g % 3 != 1 {", true),
        ("if g < N && g > 5 {", true),
        ("if g == 9 {", true),
        ("if g < N && g + 2 < N {", false),
        ("if !(g >= N) {", false),
        ("if g < N || 2 * g <= N {", false),
    ] {
        let src = hip(&ELEMENTWISE.replace("if g < N {", cond), 0, "sm_90").source;
        let loop_check = src.contains("bool __u = true;")
            && src.contains("for (int __l = 1; __l < 4; ++__l) __u = __u && ");
        let ends = src.contains("const bool __u = ");
        assert!(
            loop_check == lane_by_lane && ends != lane_by_lane,
            "{cond}: {src}"
        );
    }
    // A condition that reads memory cannot be checked up front: the loop stays element-wise.
    let data = hip(
        &ELEMENTWISE.replace("if g < N {", "if g < N && m[g] > 0.0 {"),
        0,
        "sm_90",
    )
    .source;
    assert!(!data.contains("tl::vload("), "{data}");
    assert!(
        data.contains("const unsigned __L = __r * 128 + TL_TID;"),
        "{data}"
    );
    // An extent that is not a whole number of chunks: element-wise too.
    let odd = hip(
        &ELEMENTWISE.replace("BLOCK = 1024", "BLOCK = 1020"),
        0,
        "sm_90",
    )
    .source;
    assert!(!odd.contains("tl::vload("), "{odd}");
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

/// A reduction whose result only feeds `acc[i] op= part[i]` in a loop is carried across the
/// loop: each iteration folds the thread's registers into a running value, one exchange
/// finishes the rows after the loop (no barrier in the loop), and the combine runs once.
/// Where anything else could see `part`, or the loop touches `acc` elsewhere, or the combine
/// is another operation, the reduction runs in every iteration as before.
#[test]
fn reductions_feeding_an_accumulator_are_carried_across_the_loop() {
    let one_row = ROWMAX.replace("r4(BM = 4, BN = 256)", "r1(BM = 1, BN = 1024)");
    let src = hip(&one_row, 0, "sm_90").source;
    let lines: Vec<&str> = src
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("#line"))
        .collect();
    let at = |p: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no `{p}` in {src}"))
    };
    let (open, fold, finish, combine) = (
        at("for (int __r = 0; __r < 1; ++__r) b1_m_carry[__r] = tl::Max::unit<float>();"),
        at("tl::fold_rows<tl::Max, float, 1, 8>(b0_t, b1_m_carry);"),
        at("tl::reduce_rows<tl::Max, float, 1, 1, 128, 32, 128>(b1_m_carry, b1_m, (float*)(tl_smem + 0));"),
        at("b2_best[__r] = tl::max<float>(b2_best[__r], b1_m[__r]);"),
    );
    assert!(open < fold && fold < finish && finish < combine, "{src}");
    assert_eq!(
        lines[finish - 1],
        "if (((tl::index)0) < tl::div_ceil<tl::index>(n_N, k_BN)) {",
        "{src}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("b2_best[__r] = tl::max"))
            .count(),
        1,
        "{src}"
    );
    assert!(!src.contains("tl::sync"), "{src}");
    // A sum, on a wave of 64, and over a pipelined loop through shared memory.
    let sum = one_row
        .replace("reduce_max", "reduce_sum")
        .replace("best[i] = max(best[i], m[i]);", "best[i] += m[i];");
    let src = hip(&sum, 0, "gfx942").source;
    assert!(
        src.contains("tl::fold_rows<tl::Sum, float, 1, 8>(b0_t, b1_m_carry);"),
        "{src}"
    );
    assert!(
        src.contains("b1_m_carry[__r] = tl::Sum::unit<float>();"),
        "{src}"
    );
    assert!(
        src.contains("tl::reduce_rows<tl::Sum, float, 1, 1, 128, 64, 128>(b1_m_carry"),
        "{src}"
    );
    // Not carried: the partial is read after the loop, the loop reads the accumulator, the
    // combine is not the reduction's operation.
    let kept = [
        one_row.replace(
            "    copy(&best, out.at_mut((row0,)));",
            "    copy(&m, out.at_mut((row0,)));",
        ),
        one_row.replace(
            "        reduce_max(&t, &mut m, 1);",
            "        for (i, j) in parallel(BM, BN) {\n            t[(i, j)] = t[(i, j)] - best[i];\n        }\n        reduce_max(&t, &mut m, 1);",
        ),
        one_row.replace("best[i] = max(best[i], m[i]);", "best[i] += m[i];"),
    ];
    for k in &kept {
        assert_ne!(k, &one_row);
        let src = hip(k, 0, "sm_90").source;
        assert!(
            !src.contains("fold_rows") && !src.contains("_carry"),
            "{src}"
        );
        assert!(
            src.contains("tl::reduce_rows<tl::Max, float, 1, 8, 128, 32, 128>(b0_t, b1_m"),
            "{src}"
        );
    }
}

const STAGED_ROWS: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r2(BM = 2, BN = 256)])]
pub fn staged<const BM: usize, const BN: usize>(x: &Tensor<f16, (M, N)>, w: &Tensor<f16, (N,)>, b: &Tensor<f16, (N,)>, y: &mut Tensor<f16, (M, N)>, s: &mut Tensor<f32, (M,)>) {
    let row0 = block_idx(0) * BM;
    let mut x_s = alloc_shared::<f32, (BM, BN)>();
    let mut p_s = alloc_shared::<f16, (BM, BN)>();
    let mut w_s = alloc_shared::<f32, (BN,)>();
    let mut b_s = alloc_shared::<f32, (BN,)>();
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut part = alloc_fragment::<f32, (BM,)>();
    let mut acc = alloc_fragment::<f32, (BM,)>();
    clear(&mut acc);
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut x_s);
        reduce_sum(&x_s, &mut part, 1);
        for i in parallel(BM) {
            acc[i] += part[i];
        }
    }
    for t in pipelined(N.div_ceil(BN), 2) {
        copy(x.at((row0, t * BN)), &mut p_s);
        copy(&p_s, &mut tile);
        reduce_sum(&tile, &mut part, 1);
        for i in parallel(BM) {
            acc[i] += part[i];
        }
    }
    copy(&acc, s.at_mut((row0,)));
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(w.at((t * BN,)), &mut w_s);
        copy(b.at((t * BN,)), &mut b_s);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = tile[(i, j)] * w_s[j] + b_s[j];
        }
        copy(&tile, y.at_mut((row0, t * BN)));
    }
}
"#;

/// A shared tile that only a copy from global memory writes and that is read only the way a
/// register fragment could be (a reduction along its rows) is held in registers like one, with
/// no barrier or shared bytes for it; so is the only load of a pipelined loop (which then has
/// no stages to keep: it runs as a sequential loop over register tiles). The
/// rows read by every row (`w_s[j]`, `b_s[j]`) become column fragments: each thread loads the
/// 4 columns its chunks of the tile cover (chunks of 4 floats, BN = 256 over 128 threads: 64
/// threads a row, so two groups of 64 hold a copy each) and reads register `__r % 4`.
#[test]
fn shared_tiles_that_registers_serve_are_held_in_registers() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let k = hip(STAGED_ROWS, 0, arch);
        let src = &k.source;
        assert!(src.contains("float b0_x_s[4];"), "{arch}: {src}");
        assert!(
            src.contains("tl::load_chunk<4, tl::half, float, true")
                && src.contains("b0_x_s + __k * 4);"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::fold_rows<tl::Sum, float, 1, 4>(b0_x_s, "),
            "{arch}: {src}"
        );
        // The pipelined loop's only load is owner-only too: registers, no stages.
        assert!(src.contains("tl::half b1_p_s[4];"), "{arch}: {src}");
        assert!(!src.contains("cp_async"), "{arch}: {src}");
        // The broadcast rows: registers, loaded per group of 64 threads as vectors.
        assert!(
            src.contains("float b2_w_s[4];") && src.contains("float b3_b_s[4];"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("const int __L = (__k * 64 + (TL_TID % 64)) * 4;")
                && src.contains("b2_w_s + __k * 4);")
                && src.contains("b3_b_s + __k * 4);"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("b2_w_s[__r % 4]") && src.contains("b3_b_s[__r % 4]"),
            "{arch}: {src}"
        );
        // No tile takes shared memory: the reductions' few exchange bytes do.
        assert!(k.shared_bytes < 128, "{arch}: {} bytes", k.shared_bytes);
        assert!(
            src.contains("tl::load_chunk<4, tl::half, float, true")
                && src.contains("b4_tile + __k * 4);"),
            "{arch}: {src}"
        );
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);
    }
    // Read across rows (a transpose), the tile stays shared.
    let across = STAGED_ROWS.replace(
        "reduce_sum(&x_s, &mut part, 1);",
        "for (i, j) in parallel(BM, BN) { tile[(i, j)] = x_s[(BM - 1 - i, j)]; }\n        reduce_sum(&tile, &mut part, 1);",
    );
    let k = hip(&across, 0, "sm_90");
    assert!(
        k.source.contains("float* b0_x_s = (float*)(tl_smem"),
        "{}",
        k.source
    );
}

const BIAS: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = T, configs = [c(BM = 2, BN = 256, T = 128), s(BM = 2, BN = 64, T = 128), odd(BM = 2, BN = 24, T = 32)])]
pub fn bias<const BM: usize, const BN: usize, const T: usize>(x: &Tensor<f32, (M, N)>, b: &Tensor<f32, (N,)>, y: &mut Tensor<f32, (M, N)>) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    let mut b_f = alloc_fragment::<f32, (BN,)>();
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(b.at((t * BN,)), &mut b_f);
        for (i, j) in parallel(BM, BN) {
            tile[(i, j)] = tile[(i, j)] + b_f[j];
        }
        copy(&tile, y.at_mut((row0, t * BN)));
    }
}
"#;

/// A row read by every row of a tile (`b_f[j]`) is a column fragment in the tile's order:
/// chunked (BN = 256 in chunks of 4 floats: 64 threads a row, vectors, `TL_TID % 64`), strided (BN = 64 over 128
/// threads: one register, `TL_TID % 64`), and where the row falls on no whole thread groups
/// (24 columns over 32 threads) it stays in shared memory and the build says so. Touched any
/// other way (a loop over its own shape), it is not one either.
#[test]
fn rows_read_by_every_row_are_column_fragments() {
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let k = hip(BIAS, 0, arch);
        let src = &k.source;
        assert!(src.contains("float b1_b_f[4];"), "{arch}: {src}");
        assert!(
            src.contains("const int __L = (__k * 64 + (TL_TID % 64)) * 4;")
                && src.contains("tl::load_chunk<4, float, float, true>(t_b + "),
            "{arch}: {src}"
        );
        assert!(src.contains("b1_b_f[__r % 4]"), "{arch}: {src}");
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);
        assert!(!src.contains("tl::sync()"), "{arch}: {src}");

        let k = hip(BIAS, 1, arch);
        let src = &k.source;
        assert!(src.contains("float b1_b_f[1];"), "{arch}: {src}");
        assert!(
            src.contains("const unsigned __L = __r * 64 + (TL_TID % 64);"),
            "{arch}: {src}"
        );
        assert!(src.contains("b1_b_f[__r % 1]"), "{arch}: {src}");
        assert!(k.demoted.is_empty(), "{arch}: {:?}", k.demoted);

        let k = hip(BIAS, 2, arch);
        assert_eq!(k.demoted, ["b_f"], "{arch}: {}", k.source);
    }
    let own = BIAS.replace(
        "        for (i, j) in parallel(BM, BN) {",
        "        for j in parallel(BN) { b_f[j] = b_f[j] * 2.0; }\n        for (i, j) in parallel(BM, BN) {",
    );
    let k = hip(&own, 0, "sm_90");
    assert_eq!(k.demoted, ["b_f"], "{}", k.source);
}

/// An output written by one copy whose region moves a whole tile with each iteration needs no
/// barrier across the loop's back edge (no two iterations write one element); one written at
/// the same place every iteration does (the last write must win), and so does one the kernel
/// also reads.
#[test]
fn output_copies_that_move_apart_need_no_barrier() {
    let k = hip(BIAS, 0, "sm_90");
    assert!(!k.source.contains("tl::sync()"), "{}", k.source);
    let same = BIAS.replace("y.at_mut((row0, t * BN))", "y.at_mut((row0, 0))");
    let k = hip(&same, 0, "sm_90");
    assert!(k.source.contains("tl::sync()"), "{}", k.source);
    // A step smaller than the tile overlaps the previous iteration's region.
    let overlap = BIAS.replace("y.at_mut((row0, t * BN))", "y.at_mut((row0, t * 8))");
    let k = hip(&overlap, 0, "sm_90");
    assert!(k.source.contains("tl::sync()"), "{}", k.source);
    let read = BIAS.replace(
        "copy(x.at((row0, t * BN)), &mut tile);",
        "copy(x.at((row0, t * BN)), &mut tile);\n        copy(y.at((row0, t * BN)), &mut tile);",
    );
    let k = hip(&read, 0, "sm_90");
    assert!(k.source.contains("tl::sync()"), "{}", k.source);
}

/// A tensor the block reads in several copies into registers is read evict-last by all but the
/// last copy, which reads evict-first (NVIDIA only); tensors read once carry no hint.
#[test]
fn rows_read_again_are_kept_in_l2() {
    let src = hip(STAGED_ROWS, 0, "sm_90").source;
    let hinted = |pol: u8| {
        src.matches(&format!(
            "tl::load_chunk<4, tl::half, float, true, {pol}>(t_x + "
        ))
        .count()
    };
    // Each copy has three vector paths: the interior iterations of its loop
    // (lower/interior.rs), and the tile inside the tensor or across its edge in the rest.
    assert_eq!((hinted(1), hinted(2)), (3, 3), "{src}");
    let keep = src.find("true, 1>(t_x + ").unwrap();
    let last = src.find("true, 2>(t_x + ").unwrap();
    assert!(keep < last, "{src}");
    assert!(
        !src.contains("true, 1>(t_w") && !src.contains("true, 2>(t_w"),
        "{src}"
    );
    for arch in ["gfx1100", "gfx942"] {
        let src = hip(STAGED_ROWS, 0, arch).source;
        assert!(
            src.contains("tl::load_chunk<4, tl::half, float"),
            "{arch}: {src}"
        );
        assert!(
            !src.contains("true, 1>") && !src.contains("true, 2>"),
            "{arch}: {src}"
        );
    }
}

/// A thread's chunks of a `(L, F)` loop reading a `(7, F)` shared tile of weights at row `t`:
/// the weights' column is the same in every chunk (printed from the thread index alone, so the
/// compiler loads it once for all of them), and the tile's vectors are provably aligned (moved
/// with no run-time test, which would keep the 7-tap loop rolled). A window read at `j + t` is
/// not grouped; a weight read one column off keeps its test.
#[test]
fn chunks_share_invariant_coordinates_and_aligned_shared_vectors() {
    const TAPS: &str = r#"
#[tile_kernel(grid = [L.div_ceil(BL)], threads = 128, configs = [l64(BL = 64, BF = 32)])]
pub fn taps<const BL: usize, const BF: usize>(x: &Tensor<f16, (L,)>, w: &Tensor<f16, (KW, F)>, o: &mut Tensor<f16, (L, F)>) {
    let l0 = block_idx(0) * BL;
    let mut x_s = alloc_shared::<f16>((BL + 8,));
    let mut w_s = alloc_shared::<f32>((8, BF));
    let mut o_f = alloc_fragment::<f32>((BL, BF));
    copy(x.at((l0,)), &mut x_s);
    copy(w.at((0, 0)), &mut w_s);
    for (j, f) in parallel(BL, BF) {
        let mut acc = 0.0f32;
        for t in serial(7) {
            acc += (x_s[j + t] as f32) * w_s[(t, f + OFF)];
        }
        o_f[(j, f)] = acc;
    }
    copy(&o_f, o.at_mut((l0, 0)));
}
"#;
    for arch in ["sm_90", "gfx942"] {
        let src = hip(&TAPS.replace("OFF", "0"), 0, arch).source;
        // 64 x 32 outputs in chunks of 8 (16 bytes of f16) over 128 threads: two a thread,
        // 1024 elements apart, so the column (extent 32) does not change between them.
        assert!(
            src.contains("const unsigned __L = (__k * 128 + TL_TID) * 8;")
                && src.contains("const tl::index __b = (tl::index)(((TL_TID * 8u) / 1) % 32);")
                && src.contains("(tl::index)((__L / 32) % 64)"),
            "{arch}: {src}"
        );
        assert!(
            src.contains("tl::vload<true, 8, false>(&b1_w_s[")
                && !src.contains("tl::vec_aligned<8>(&b1_w_s["),
            "{arch}: {src}"
        );
        // Column f + 1 starts chunks off a vector boundary: tested per chunk.
        let off = hip(&TAPS.replace("OFF", "1"), 0, arch).source;
        assert!(off.contains("tl::vec_aligned<8>(&b1_w_s["), "{arch}: {off}");
    }
}

/// A sequential loop whose copies move by a constant step runs its interior iterations with
/// the copies' unconditional vector path and the rest with the tested paths; the bound comes
/// from the copies' regions at the first iteration (lower/interior.rs). A loop whose copy's
/// offset is computed in the loop, or that holds another sequential loop, is not split.
#[test]
fn sequential_loops_run_their_interior_iterations_untested() {
    const SRC: &str = r#"
#[tile_kernel(grid = [M.div_ceil(BM)], threads = 128, configs = [r2(BM = 2, BN = 1024)])]
pub fn walk<const BM: usize, const BN: usize>(x: &Tensor<f16, (M, N)>, y: &mut Tensor<f16, (M, N)>, z: &mut Tensor<f16, (M, N)>) {
    let row0 = block_idx(0) * BM;
    let mut tile = alloc_fragment::<f32, (BM, BN)>();
    for t in serial(N.div_ceil(BN)) {
        copy(x.at((row0, t * BN)), &mut tile);
        copy(&tile, y.at_mut((row0, t * BN + 0)));
    }
    for t in serial(N.div_ceil(BN)) {
        let c = t * BN;
        copy(x.at((row0, c)), &mut tile);
        copy(&tile, z.at_mut((row0, c)));
    }
    for u in serial(2) {
        for t in serial(N.div_ceil(BN)) {
            copy(x.at((row0 + u, t * BN)), &mut tile);
            copy(&tile, z.at_mut((row0, t * BN)));
        }
    }
}
"#;
    for arch in ["sm_90", "gfx942"] {
        let src = hip(SRC, 0, arch).source;
        // The first loop and the innermost of the nest; the second is not split.
        assert_eq!(src.matches("tl::index __mid").count(), 2, "{arch}: {src}");
        assert_eq!(
            src.matches("__n = tl::chunk_aligned<8>(t_x, __g) ? tl::iterations_inside<1, 1, 2, 1024, 0, 0, 0, 1024>(__g, __n) : 0;").count(),
            2,
            "{arch}: {src}"
        );
        assert!(
            src.contains("__n = tl::chunk_aligned<8>(t_y, __g) ? tl::iterations_inside<1, 1, 2, 1024, 0, 0, 0, 1024>(__g, __n) : 0;"),
            "{arch}: {src}"
        );
        // The interior loop of the first: two copies, no test of either.
        let at = src.find("< __mid").unwrap();
        let interior = &src[at..src[at..].find("\n  }\n").unwrap() + at];
        assert!(
            !interior.contains("chunk_aligned") && !interior.contains("tile_inside"),
            "{arch}: {interior}"
        );
        assert_eq!(
            interior
                .matches("tl::load_chunk<8, tl::half, float")
                .count(),
            1,
            "{arch}: {interior}"
        );
        assert_eq!(
            interior
                .matches("tl::store_chunk<8, float, tl::half")
                .count(),
            1,
            "{arch}: {interior}"
        );
    }
}

/// Occupancy requests (`lower/occupancy.rs`): a single-pass kernel on NVIDIA gets the ladder
/// of register caps (three quarters of an sm_90's threads first, the 8-register allocation
/// unit, sm_86's smaller thread count), and the source the build compiles first asks for
/// none. No ladder on AMD, for a `gemm`, for a sequential loop over global memory (a row
/// reduction), or where shared memory already bounds the resident blocks.
/// The attribute's `min_blocks` and `max_registers`: printed per vendor in place of any
/// request (the user decided), per config; refused, on the config, where the target cannot
/// hold them.
#[test]
fn occupancy_controls_of_the_attribute_are_printed_per_vendor_or_refused() {
    let with = |key: &str| {
        TRANSPOSE.replace(
            "e(BM = 24, BN = 40, T = 64)])]",
            &format!("e(BM = 24, BN = 40, T = 64)], {key})]"),
        )
    };
    let blocks = with("min_blocks = 2048 / T / 2");
    // a: 256 threads, 4 blocks; e: 64 threads, 16 blocks.
    let k = hip(&blocks, 0, "sm_90");
    assert!(k.requests.is_empty() && k.min_blocks == 4, "{}", k.source);
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256, 4) tl_transpose__a("));
    let k = hip(&blocks, 4, "sm_90");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(64, 16) tl_transpose__e("));
    // AMD: waves per SIMD, four SIMDs a CU or WGP: 4 blocks of 8 waves (wave 32) are 8; of 4
    // waves (wave 64) 4.
    let k = hip(&blocks, 0, "gfx1100");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256) TL_WAVES_PER_EU(8) tl_transpose__a("));
    let k = hip(&blocks, 0, "gfx942");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256) TL_WAVES_PER_EU(4) tl_transpose__a("));
    let capped = with("max_registers = 48");
    let k = hip(&capped, 0, "sm_90");
    // nvcc takes `__maxnreg__` only without `__launch_bounds__`.
    assert!(k.requests.is_empty() && k.min_blocks == 1);
    assert!(k
        .source
        .contains("TL_GLOBAL void TL_MAX_REGISTERS(48) tl_transpose__a("));
    let k = hip(&capped, 0, "gfx1201");
    assert!(k
        .source
        .contains("TL_GLOBAL void __launch_bounds__(256) TL_MAX_REGISTERS(48) tl_transpose__a("));
    // What the target cannot hold is an error on the config.
    let refused = |src: &str, config: usize, arch: &str| {
        emit(&kernel(src), config, &Target::by_arch(arch).unwrap(), None)
            .unwrap_err()
            .message
    };
    let m = refused(&with("min_blocks = 12"), 0, "sm_90");
    assert!(m.contains("12 blocks of 256 threads cannot reside on one sm_90 multiprocessor (2048 threads, 32 blocks)"), "{m}");
    // sm_86 holds 1536 threads: 8 blocks of 256 do not fit there, and do on sm_90.
    let eight = with("min_blocks = 8");
    let m = refused(&eight, 0, "sm_86");
    assert!(
        m.contains("config `a`") && m.contains("(1536 threads, 16 blocks)"),
        "{m}"
    );
    assert_eq!(hip(&eight, 0, "sm_90").min_blocks, 8);
    let wide = with("max_registers = 200").replace("threads = T", "threads = 512");
    let m = refused(&wide, 0, "sm_90");
    assert!(m.contains("a block of 512 threads would need 102400 registers, and a sm_90 multiprocessor has 65536"), "{m}");
    // Config d's fragment `t` (128 × 64 f16) over 32 threads takes 128 registers a thread: a
    // cap below that is refused.
    let big = TRANSPOSE.replace("threads = T", "threads = 32").replace(
        "e(BM = 24, BN = 40, T = 64)])]",
        "e(BM = 24, BN = 40, T = 64)], max_registers = 16)]",
    );
    let m = refused(&big, 3, "sm_90");
    assert!(m.contains("`max_registers = 16` is below the"), "{m}");
}

#[test]
fn occupancy_requests_only_for_single_pass_kernels_on_nvidia() {
    let ladder = |src: &str, config: usize, arch: &str| -> Vec<(usize, usize)> {
        hip(src, config, arch)
            .requests
            .iter()
            .map(|r| (r.min_blocks, r.registers))
            .collect()
    };
    // TRANSPOSE `a`: 256 threads, 8 KB of shared memory.
    assert_eq!(
        ladder(TRANSPOSE, 0, "sm_90"),
        [(6, 40), (5, 48), (4, 64), (3, 80), (2, 128)]
    );
    assert_eq!(ladder(TRANSPOSE, 0, "sm_86"), [(4, 64), (3, 80), (2, 128)]);
    let k = hip(TRANSPOSE, 0, "sm_90");
    assert!(k.source.contains("__launch_bounds__(256) tl_transpose__a("));
    for r in &k.requests {
        let bounds = format!("__launch_bounds__(256, {}) tl_transpose__a(", r.min_blocks);
        assert!(r.source.contains(&bounds), "{bounds}");
        assert_eq!(
            r.source
                .replace(&bounds, "__launch_bounds__(256) tl_transpose__a("),
            k.source
        );
    }
    assert!(ladder(TRANSPOSE, 0, "gfx942").is_empty());
    assert!(ladder(GEMM, 0, "sm_90").is_empty());
    assert!(ladder(ROWMAX, 0, "sm_90").is_empty());
    // 96 KB of shared memory a block: two fit in an sm_90's 228 KB, so the ladder is one rung.
    const BIG_SHARED: &str = r#"
#[tile_kernel(grid = [N.div_ceil(1024)], threads = 256)]
pub fn stage(x: &Tensor<f32, (N,)>, y: &mut Tensor<f32, (N,)>) {
    let mut s = alloc_shared::<f32>((24576,));
    copy(x.at((block_idx(0) * 1024,)), &mut s);
    for i in parallel(1024) {
        let g = block_idx(0) * 1024 + i;
        if g < N {
            y[g] = s[i * 24];
        }
    }
}
"#;
    assert_eq!(ladder(BIG_SHARED, 0, "sm_90"), [(2, 128)]);
}

/// A `pipelined` loop stages all its loads or none: a tile that registers could serve (the
/// packed `B` that only its owner unpacks) keeps its shared stages beside a `gemm` operand,
/// so every load of the loop still runs ahead; alone in a loop, the same tile is promoted.
#[test]
fn pipelined_loops_stage_all_their_loads_or_none() {
    const W4: &str = r#"
#[tile_kernel(grid = [N.div_ceil(64), M.div_ceil(64)], threads = 128)]
pub fn w4(a: &Tensor<f16, (M, K)>, bp: &Tensor<u8, (K, NP)>, c: &mut Tensor<f16, (M, N)>) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16>((64, 32));
    let mut bp_s = alloc_shared::<u8>((32, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    let mut acc = alloc_fragment::<f32>((64, 64));
    clear(&mut acc);
    for k in pipelined(K.div_ceil(32), 2) {
        copy(a.at((by * 64, k * 32)), &mut a_s);
        copy(bp.at((k * 32, bx * 32)), &mut bp_s);
        for (kk, j) in parallel(32, 32) {
            let p = bp_s[(kk, j)];
            b_s[(kk, 2 * j)] = (((p & 15) as i32) - 8) as f16;
            b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
        }
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((by * 64, bx * 64)));
}
"#;
    let k = hip(W4, 0, "sm_90");
    assert!(
        k.source
            .contains("unsigned char* b1_bp_s = (unsigned char*)(tl_smem"),
        "{}",
        k.source
    );
    assert!(k.source.contains("cp_async"), "{}", k.source);
    let alone = W4
        .replace("        copy(a.at((by * 64, k * 32)), &mut a_s);\n", "")
        .replace("        gemm(&a_s, &b_s, &mut acc);\n", "");
    let k = hip(&alone, 0, "sm_90");
    assert!(k.source.contains("unsigned char b1_bp_s["), "{}", k.source);
    assert!(!k.source.contains("cp_async"), "{}", k.source);
}

#[test]
fn gemms_whose_tiles_fit_run_on_wgmma_on_sm_90a_and_on_mma_sync_otherwise() {
    // 128 threads = one warpgroup over the 64 rows: wgmma, both operands in the atom layout,
    // 1024-byte aligned shared memory, barriers that fence for the async proxy; the fused
    // ReLU reads the accumulator in mma.sync's layout with one warp per 16 rows.
    let k = hip(GEMM, 0, "sm_90a");
    let src = &k.source;
    for want in [
        "tl::gemm_wgmma<tl::half, 64, 64, 32, 1>(",
        "64, 32, 128, tl::ATOMS, true, true>(t_a",
        "32, 64, 128, tl::ATOMS, true, true>(t_b",
        "aligned(1024)",
        "tl::sync_async_proxy();",
        "tl::mma_coord<64, 64, 4, 1>",
    ] {
        assert!(src.contains(want), "{want}: {src}");
    }
    assert!(!src.contains("tl::sync();"), "{src}");
    // The same kernel on plain sm_90 is unchanged: mma.sync, ldmatrix's swizzle.
    let plain = hip(GEMM, 0, "sm_90").source;
    assert!(
        plain.contains("tl::gemm_mma<tl::half, 64, 64, 32, 2, 2, true, true>"),
        "{plain}"
    );
    assert!(
        !plain.contains("wgmma") && !plain.contains("ATOMS"),
        "{plain}"
    );
    // Tiles wgmma does not take fall back to mma.sync on sm_90a: 64 threads (no warpgroup),
    // 48 columns, and an operand filled as a whole (its layout could not be the atoms').
    let cases = [
        GEMM.replace("threads = 128", "threads = 64"),
        GEMM.replace("BN = 64", "BN = 48"),
        GEMM.replace(
            "        gemm(&a_s, &b_s, &mut acc);",
            "        gemm(&a_s, &b_s, &mut acc);\n        fill(&mut b_s, 0.0);",
        ),
    ];
    for case in cases {
        assert_ne!(case, GEMM);
        let src = hip(&case, 0, "sm_90a").source;
        assert!(src.contains("tl::gemm_mma<"), "{src}");
        assert!(!src.contains("wgmma") && !src.contains("ATOMS"), "{src}");
    }
}

/// tl.h's wgmma descriptors against a model of how the tensor cores read shared memory (the
/// PTX ISA's matrix descriptor and canonical layouts; the 128-byte case as measured on an
/// H200, shared/LOWERING.md §4): for every tile shape the lowering admits, every warpgroup and
/// k-step, the element the model reads through the descriptor at each (row, k) of A and
/// (k, column) of B is the one `sidx<ATOMS>` stored there (what the copies write). The model
/// is `tl_host.h`'s, the one the sm_90a emulation (kernels/tests/emulation.rs) reads with.
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
  const uint32_t a0 = 0, b0 = (M * K * 2 + 1023) / 1024 * 1024;
  std::vector<uint16_t> smem((b0 + K * N * 2) / 2, 0xFFFF);
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

/// A plain (unswizzled) tile of whole 16-byte rows loads through TMA too, one box per tile:
/// the packed weights of a W4A16 loop, beside its atom-layout A tile.
#[test]
fn plain_tiles_of_a_wgmma_pipeline_load_through_one_tma_box() {
    let w4 = r#"
#[tile_kernel(grid = [N.div_ceil(64), M.div_ceil(64)], threads = 128)]
pub fn w4(a: &Tensor<f16, (M, K)>, bp: &Tensor<u8, (K, NP)>, c: &mut Tensor<f16, (M, N)>) {
    let (bx, by) = (block_idx(0), block_idx(1));
    let mut a_s = alloc_shared::<f16>((64, 32));
    let mut bp_s = alloc_shared::<u8>((32, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    let mut acc = alloc_fragment::<f32>((64, 64));
    clear(&mut acc);
    for k in pipelined(K.div_ceil(32), 2) {
        copy(a.at((by * 64, k * 32)), &mut a_s);
        copy(bp.at((k * 32, bx * (64 / 2))), &mut bp_s);
        for (kk, j) in parallel(32, 32) {
            let p = bp_s[(kk, j)];
            b_s[(kk, 2 * j)] = (((p & 15) as i32) - 8) as f16;
            b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
        }
        gemm(&a_s, &b_s, &mut acc);
    }
    copy(&acc, c.at_mut((by * 64, bx * 64)));
}
"#;
    let sm90a = Target::by_arch("sm_90a").unwrap();
    let tma = launch(&kernel(w4), 0, &sm90a)
        .unwrap()
        .tma
        .expect("a TMA entry");
    assert_eq!(
        tma.maps,
        [
            TmaMap {
                param: 0,
                boxes: vec![32, 64],
                swizzle: 64
            },
            TmaMap {
                param: 1,
                boxes: vec![32, 32],
                swizzle: 0
            },
            // The epilogue's TMA stores (`wgmma_accumulators_leave_through_tma_stores`).
            TmaMap {
                param: 2,
                boxes: vec![64, 64],
                swizzle: 128
            },
        ]
    );
    let src = hip(w4, 0, "sm_90a").source;
    assert!(src.contains("tl::tma_box<2>(b1_bp_s, &__tm1, "), "{src}");
    // Warp-specialised: the consumers unpack each stage into `b_s` between two barriers of
    // their own, the first because an earlier iteration's gemm read `b_s` (the back edge).
    // `b_s` is written whole every iteration, so it rotates between two copies (the second
    // after the mbarriers) and the gemm stays in flight while the next stage is unpacked.
    assert_eq!(tma.threads, 256);
    let entry = &src[src.find("__tma(").unwrap()..];
    assert!(
        entry.contains("tl::mbar_wait(&__full[__st], (int)((__it / 2) & 1));\n        tl::half* b0_a_s = (tl::half*)(tl_smem + 0 + (__st) * 4096);\n        unsigned char* b1_bp_s = (unsigned char*)(tl_smem + 8192 + (__st) * 1024);\n        tl::half* b2_b_s = (tl::half*)(tl_smem + ((__it & 1) ? 15360 : 10240));\n        tl::consumer_sync_async_proxy<128>();"),
        "{entry}"
    );
    assert!(
        entry.contains("tl::gemm_wgmma_async<tl::half, 64, 64, 32, 1>(b0_a_s, b2_b_s, b3_acc);\n        tl::wgmma_wait<1>();"),
        "{entry}"
    );
    // The unpacking moves 4 bytes in and 8 halves out per chunk: one vector each, the halves
    // into one 16-byte chunk of the swizzled tile.
    for want in [
        "tl::vload<true, 4, false>(&b1_bp_s[",
        "tl::vstore<false, true, 8>(&b2_b_s[tl::sidx<tl::ATOMS, 64, 32>(",
    ] {
        assert!(entry.contains(want), "{want}: {entry}");
    }
    // The rotated copy of `b_s`, then the TMA store's two 8 KiB buffers.
    assert_eq!(tma.shared_bytes, 15360 + 4096 + 16384);
    // Half of `b_s` written per iteration: the other half must keep the last iteration's
    // values, so no second copy, and the gemm completes in its iteration.
    let half = w4.replace("parallel(32, 32)", "parallel(16, 32)");
    assert_ne!(half, w4);
    let src = hip(&half, 0, "sm_90a").source;
    let entry = &src[src.find("__tma(").unwrap()..];
    assert!(
        entry.contains("tl::gemm_wgmma<tl::half, 64, 64, 32, 1>(b0_a_s, b2_b_s, b3_acc);"),
        "{entry}"
    );
    assert!(!entry.contains("(__it & 1)"), "{entry}");
    assert_eq!(
        entry
            .matches("tl::consumer_sync_async_proxy<128>();")
            .count(),
        2,
        "{entry}"
    );
    // Rows of 24 bytes are not whole 16-byte vectors: the loop stays on cp.async (the gemm
    // still runs on wgmma).
    let odd = w4.replace("(32, 32)", "(32, 24)");
    assert_ne!(odd, w4);
    assert!(launch(&kernel(&odd), 0, &sm90a).unwrap().tma.is_none());
    let src = hip(&odd, 0, "sm_90a").source;
    assert!(
        src.contains("tl::gemm_wgmma<") && src.contains("cp_async"),
        "{src}"
    );
}

/// Stores that together fill consecutive elements (unpacking a byte into two halves at `2j`
/// and `2j + 1`) gather into one 16-byte vector per chunk of 4 `j`s, after a 4-byte load of
/// the bytes; a set of stores that leaves gaps, or a buffer the loop also reads, does not.
#[test]
fn unpacking_stores_gather_into_one_vector_per_chunk() {
    const UNPACK: &str = r#"
#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn unpack(bp: &Tensor<u8, (K, NP)>, out: &mut Tensor<f16, (K, N)>) {
    let bx = block_idx(0);
    let mut p_s = alloc_shared::<u8>((32, 32));
    let mut b_s = alloc_shared::<f16>((32, 64));
    copy(bp.at((0, bx * 32)), &mut p_s);
    for (kk, j) in parallel(32, 32) {
        let p = p_s[(kk, j)];
        b_s[(kk, 2 * j)] = (((p & 15) as i32) - 8) as f16;
        b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
    }
    copy(&b_s, out.at_mut((0, bx * 64)));
}
"#;
    for arch in ["sm_90", "gfx1100", "gfx942"] {
        let src = hip(UNPACK, 0, arch).source;
        // The bytes sit in registers here (a chunked fragment: 8 `j`s a thread), so a chunk
        // gathers 16 halves, two adjacent vectors of the unswizzled tile. The two stores are a
        // nibble pair: the chunk's 8 bytes become its 16 halves in one helper.
        for want in [
            "tl::nibbles_to_half<-8, false, 8>(",
            "tl::vstore<false, true, 16>(&b1_b_s[(v1_kk) * 64 + tl::mul<tl::index>(((tl::index)2), (__b + 0))], ",
        ] {
            assert!(src.contains(want), "{arch}: {want}: {src}");
        }
        assert!(!src.contains("[2 * __l + 0] = "), "{arch}: {src}");
    }
    // Nibble pairs in other spellings: the high nibble first, no offset, no conversion.
    let high = UNPACK
        .replace("(((p & 15) as i32) - 8) as f16", "((p >> 4) & 15) as f16")
        .replace("((((p >> 4) & 15) as i32) - 8) as f16", "(15 & p) as f16");
    let plus = UNPACK
        .replace("(((p & 15) as i32) - 8)", "(3 + ((p & 15) as i32))")
        .replace(
            "((((p >> 4) & 15) as i32) - 8)",
            "(((p >> 4) & 15) as i32 + 3)",
        );
    for (case, want) in [(high, "<0, true, 8>"), (plus, "<3, false, 8>")] {
        assert_ne!(case, UNPACK);
        let src = hip(&case, 0, "sm_90").source;
        assert!(
            src.contains(&format!("tl::nibbles_to_half{want}(")),
            "{want}: {src}"
        );
    }
    // Not nibble pairs: a byte subtraction (it wraps), offsets that differ, the same nibble
    // twice, a mask of other bits; each still gathers its stores into one vector.
    let wraps = UNPACK
        .replace("(((p & 15) as i32) - 8)", "((p & 15) - 8)")
        .replace("((((p >> 4) & 15) as i32) - 8)", "(((p >> 4) & 15) - 8)");
    let offsets = UNPACK.replace(
        "((((p >> 4) & 15) as i32) - 8)",
        "((((p >> 4) & 15) as i32) - 7)",
    );
    let twice = UNPACK.replace("((((p >> 4) & 15) as i32) - 8)", "(((p & 15) as i32) - 8)");
    let mask = UNPACK.replace(
        "((((p >> 4) & 15) as i32) - 8)",
        "((((p >> 4) & 7) as i32) - 8)",
    );
    for case in [wraps, offsets, twice, mask] {
        assert_ne!(case, UNPACK);
        let src = hip(&case, 0, "sm_90").source;
        assert!(!src.contains("nibbles_to_half"), "{src}");
        assert!(src.contains("[2 * __l + 1] = "), "{src}");
    }
    // Only the even elements: gaps, so each store stays element by element.
    let gaps = UNPACK.replace(
        "        b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;\n",
        "",
    );
    // The buffer read in the same loop: its elements must be in place statement by statement.
    let read = UNPACK.replace(
        "        b_s[(kk, 2 * j + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;",
        "        b_s[(kk, 2 * j + 1)] = b_s[(kk, 2 * j)];",
    );
    for case in [gaps, read] {
        assert_ne!(case, UNPACK);
        let src = hip(&case, 0, "sm_90").source;
        assert!(!src.contains("* __l + "), "{src}");
    }
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

/// A wgmma gemm's pipelined loads also get a TMA entry on sm_90a: one map per (tensor, box),
/// the box one 64-column (or narrower) atom of the tile with the swizzle of its width; the
/// plain entry stays in the same source for tensors TMA cannot take. The GEMM is
/// warp-specialised there: a producer warpgroup after the user's 128 threads fills the stages
/// behind full/empty mbarriers. A copy whose innermost offset is not provably a multiple of 16
/// bytes keeps the loop on cp.async (TMA faults there), and so do other targets.
#[test]
fn wgmma_pipelines_load_through_tma_in_a_second_entry() {
    let gemm = kernel(GEMM);
    let sm90a = Target::by_arch("sm_90a").unwrap();
    let l = launch(&gemm, 0, &sm90a).unwrap();
    let tma = l.tma.expect("a TMA entry");
    assert_eq!(
        (tma.entry.as_str(), tma.threads, tma.persistent),
        ("tl_gemm__t64__tma", 256, true)
    );
    // Two stages of A (64 × 32) and B (32 × 64), then two full and two empty mbarriers, then
    // (at the next 1024 bytes) the TMA store's two 8 KiB buffers for the one warpgroup.
    assert_eq!((l.shared_bytes, tma.shared_bytes), (16384, 17408 + 16384));
    assert_eq!(
        tma.maps,
        [
            TmaMap {
                param: 0,
                boxes: vec![32, 64],
                swizzle: 64
            },
            TmaMap {
                param: 1,
                boxes: vec![64, 32],
                swizzle: 128
            },
            TmaMap {
                param: 2,
                boxes: vec![64, 64],
                swizzle: 128
            },
        ]
    );
    let src = hip(GEMM, 0, "sm_90a").source;
    for want in [
        "tl_gemm__t64(const tl::half* __restrict__ t_a",
        "__launch_bounds__(256) tl_gemm__t64__tma(const tl::half* __restrict__ t_a, const tl::half* __restrict__ t_b, tl::half* __restrict__ t_c, tl::index n_M, tl::index n_K, tl::index n_N, const __grid_constant__ tl::TensorMap __tm0, const __grid_constant__ tl::TensorMap __tm1, const __grid_constant__ tl::TensorMap __tm2)",
        "tl::mbar_init(&__empty[__b], 128);",
        "if (TL_TID >= 128) {",
        // Persistent: both roles walk the grid's tiles, counting iterations across them.
        "const tl::index __gx = tl::div_ceil<tl::index>(n_N, k_BN), __gy = tl::div_ceil<tl::index>(n_M, k_BM), __gz = 1;",
        "for (tl::index __t = TL_BLOCK_LINEAR; __t < __gx * __gy * __gz; __t += TL_BLOCKS) {",
        "tl::raster<8>(__t, __gx, __gy, __bx, __by, __bz);\n        tl::index v0_bx = __bx;",
        "for (tl::index v2_k = 0; v2_k < __n; ++v2_k, ++__it) {",
        "if (__it >= 2) tl::mbar_wait(&__empty[__st], (int)((__it / 2 - 1) & 1));",
        "tl::mbar_expect_tx(&__full[__st], 8192);",
        "tl::tma_tile<2, 64, 32>(b0_a_s, &__tm0, &__full[__st], __o);",
        "tl::tma_tile<2, 32, 64>(b1_b_s, &__tm1, &__full[__st], __o);",
        "tl::mbar_wait(&__full[__st], (int)((__it / 2) & 1));",
        // One wgmma group in flight: a stage is released once the next one's group is issued,
        // the tile's last once its group is done.
        "tl::gemm_wgmma_async<tl::half, 64, 64, 32, 1>(b0_a_s, b1_b_s, b2_acc);\n        tl::wgmma_wait<1>();\n        if (v2_k > 0) tl::mbar_arrive(&__empty[(int)((__it - 1) % 2)]);\n      }\n      tl::wgmma_wait<0>();\n      if (__n > 0) tl::mbar_arrive(&__empty[(int)((__it - 1) % 2)]);",
        "tl::cp_async_commit();",
    ] {
        assert!(src.contains(want), "{want}: {src}");
    }
    // The consumers compute on registers only: no barrier of theirs in the loop.
    assert!(!src.contains("consumer_sync"), "{src}");
    // One consumer warpgroup: no register rebalancing. Two, each with a 64 × 256
    // accumulator (128 registers a thread): the producer gives its registers to them.
    assert!(!src.contains("setmaxnreg"), "{src}");
    let big = GEMM.replace("threads = 128", "threads = 256").replace(
        "t64(BM = 64, BN = 64, BK = 32)",
        "t64(BM = 128, BN = 256, BK = 64)",
    );
    assert_ne!(big, GEMM);
    let src = hip(&big, 0, "sm_90a").source;
    for want in [
        "__launch_bounds__(384, 1) tl_gemm__t64__tma(",
        "tl::setmaxnreg_dec<40>();",
        "tl::setmaxnreg_inc<232>();",
        "tl::gemm_wgmma<tl::half, 128, 256, 64, 2>(",
    ] {
        assert!(src.contains(want), "{want}: {src}");
    }
    // A tile of more than 256 rows (wgmma on 5 warpgroups) is more than one TMA box can
    // hold: no TMA entry.
    let tall = GEMM.replace("threads = 128", "threads = 640").replace(
        "t64(BM = 64, BN = 64, BK = 32)",
        "t64(BM = 320, BN = 64, BK = 32)",
    );
    let src = hip(&tall, 0, "sm_90a").source;
    assert!(
        src.contains("tl::gemm_wgmma<tl::half, 320, 64, 32, 5>"),
        "{src}"
    );
    assert!(launch(&kernel(&tall), 0, &sm90a).unwrap().tma.is_none());
    // An epilogue through shared memory needs barriers after the loop, where the producer has
    // left: they are the consumers' own (a named barrier of the user's 128 threads).
    let staged = GEMM.replace(
        "    copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "    let mut c_s = alloc_shared::<f32, (BM, BN)>();\n    copy(&acc, &mut c_s);\n    copy(&c_s, c.at_mut((by * BM, bx * BN)));",
    );
    assert_ne!(staged, GEMM);
    let l = launch(&kernel(&staged), 0, &sm90a).unwrap();
    assert_eq!(l.tma.as_ref().map(|t| t.threads), Some(256));
    let src = hip(&staged, 0, "sm_90a").source;
    let entry = &src[src.find("__tma(").unwrap()..];
    assert!(
        entry.contains("tl::consumer_sync_async_proxy<128>();"),
        "{entry}"
    );
    assert!(!entry.contains("tl::sync"), "{entry}");
    // A prelude that writes shared memory needs a barrier both roles would have to meet: the
    // TMA entry is not specialised, its loop waits on full mbarriers behind block barriers.
    let prelude = staged.replace(
        "    clear(&mut acc);",
        "    clear(&mut acc);\n    let mut z = alloc_shared::<f32, (BM, BN)>();\n    fill(&mut z, 1.0);\n    copy(&z, &mut c_s);",
    ).replace("    let mut c_s = alloc_shared::<f32, (BM, BN)>();\n    copy(&acc, &mut c_s);", "    copy(&acc, &mut c_s);").replace("    let mut acc", "    let mut c_s = alloc_shared::<f32, (BM, BN)>();\n    let mut acc");
    assert_ne!(prelude, staged);
    let l = launch(&kernel(&prelude), 0, &sm90a).unwrap();
    assert_eq!(l.tma.as_ref().map(|t| t.threads), Some(128));
    let src = hip(&prelude, 0, "sm_90a").source;
    assert!(
        src.contains("tl::mbar_wait(&__full1[v2_k % 2], (int)((v2_k / 2) & 1));"),
        "{src}"
    );
    assert!(!src.contains("__empty"), "{src}");
    // An offset three elements off a 16-byte boundary; a rank-3 tensor copied rank-dropping.
    let odd = GEMM.replace(
        "copy(a.at((by * BM, k * BK)), &mut a_s);",
        "copy(a.at((by * BM, k * BK + 3)), &mut a_s);",
    );
    assert_ne!(odd, GEMM);
    assert!(launch(&kernel(&odd), 0, &sm90a).unwrap().tma.is_none());
    // The same for the loop's second load: the first one's map does not stay behind (an
    // entry with a map and no TMA loop).
    let odd_b = GEMM.replace(
        "copy(b.at((k * BK, bx * BN)), &mut b_s);",
        "copy(b.at((k * BK, bx * BN + 3)), &mut b_s);",
    );
    assert_ne!(odd_b, GEMM);
    assert!(launch(&kernel(&odd_b), 0, &sm90a).unwrap().tma.is_none());
    assert!(!hip(&odd_b, 0, "sm_90a").source.contains("__tma"));
    let batched = GEMM
        .replace(
            "grid = [N.div_ceil(BN), M.div_ceil(BM)]",
            "grid = [N.div_ceil(BN), M.div_ceil(BM), B]",
        )
        .replace("a: &Tensor<f16, (M, K)>", "a: &Tensor<f16, (B, M, K)>")
        .replace(
            "copy(a.at((by * BM, k * BK)), &mut a_s);",
            "copy(a.at((block_idx(2), by * BM, k * BK)), &mut a_s);",
        );
    let l = launch(&kernel(&batched), 0, &sm90a).unwrap();
    assert_eq!(l.tma.unwrap().maps[0].boxes, [32, 64, 1]);
    for arch in ["sm_90", "gfx942"] {
        let t = Target::by_arch(arch).unwrap();
        assert!(launch(&gemm, 0, &t).unwrap().tma.is_none(), "{arch}");
    }
}

/// The warp-specialised entry's epilogue: a wgmma accumulator copied to a 16-bit tensor as the
/// kernel's last statement leaves through shared memory (stmatrix) and TMA stores of 64 × 64
/// boxes (`tl::store_acc_tma`), the consumers waiting for their last stores before the block
/// ends; the plain entry keeps its register stores. The same copy to an f32 tensor, at an
/// offset not provably on 16 bytes, or followed by another statement keeps the register
/// stores, and a rank-dropping copy takes a box of extent 1 in the dropped dimension.
#[test]
fn wgmma_accumulators_leave_through_tma_stores() {
    let sm90a = Target::by_arch("sm_90a").unwrap();
    let src = hip(GEMM, 0, "sm_90a").source;
    let (plain, entry) = src.split_at(src.find("__tma(").unwrap());
    for want in [
        "{ const tl::index __o[2] = {tl::mul<tl::index>(v1_by, k_BM), tl::mul<tl::index>(v0_bx, k_BN)}; tl::store_acc_tma<tl::half, 64, 2>(b2_acc, tl_smem + 17408, &__tm2, __o); }",
        "    }\n    if (TL_TID % 128 == 0) tl::bulk_wait<0>();\n  }\n}",
    ] {
        assert!(entry.contains(want), "{want}: {entry}");
    }
    assert!(!entry.contains("store_chunk"), "{entry}");
    assert!(!plain.contains("store_acc_tma"), "{plain}");
    assert!(
        plain.contains("tl::store_chunk<2, float, tl::half"),
        "{plain}"
    );
    let stores = |text: &str| {
        let l = launch(&kernel(text), 0, &sm90a).unwrap();
        let src = hip(text, 0, "sm_90a").source;
        let t = l.tma.expect("a TMA entry");
        (t.maps.len(), src.contains("store_acc_tma"))
    };
    assert_eq!(stores(GEMM), (3, true));
    let f32_out = GEMM.replace("c: &mut Tensor<f16, (M, N)>", "c: &mut Tensor<f32, (M, N)>");
    assert_ne!(f32_out, GEMM);
    assert_eq!(stores(&f32_out), (2, false));
    let odd = GEMM.replace(
        "copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "copy(&acc, c.at_mut((by * BM, bx * BN + 3)));",
    );
    assert_ne!(odd, GEMM);
    assert_eq!(stores(&odd), (2, false));
    let then = GEMM.replace(
        "copy(&acc, c.at_mut((by * BM, bx * BN)));",
        "copy(&acc, c.at_mut((by * BM, bx * BN)));\n    clear(&mut acc);",
    );
    assert_ne!(then, GEMM);
    assert_eq!(stores(&then), (2, false));
    let batched = GEMM
        .replace(
            "grid = [N.div_ceil(BN), M.div_ceil(BM)]",
            "grid = [N.div_ceil(BN), M.div_ceil(BM), B]",
        )
        .replace(
            "c: &mut Tensor<f16, (M, N)>",
            "c: &mut Tensor<f16, (B, M, N)>",
        )
        .replace(
            "copy(&acc, c.at_mut((by * BM, bx * BN)));",
            "copy(&acc, c.at_mut((block_idx(2), by * BM, bx * BN)));",
        );
    assert_ne!(batched, GEMM);
    let l = launch(&kernel(&batched), 0, &sm90a).unwrap();
    assert_eq!(
        l.tma.unwrap().maps[2],
        TmaMap {
            param: 2,
            boxes: vec![64, 64, 1],
            swizzle: 128
        }
    );
    assert!(hip(&batched, 0, "sm_90a")
        .source
        .contains("tl::store_acc_tma<tl::half, 64, 3>(b2_acc"));
}
