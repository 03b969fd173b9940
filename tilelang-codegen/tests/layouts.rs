//! tl.h's matrix-unit layouts checked on the host with a C++ compiler: every AMD
//! instruction's operand and accumulator layouts against AMD's documented tables and the block
//! GEMM they compute, and the rows of every instruction's accumulator (`tl_acc_rows.h`, the
//! row fragments of issue 39) against those layouts.

mod common;

use common::host::{run_host_program, tl_section};

#[test]
fn matrix_layouts_hold_each_element_once_and_compute_the_product() {
    let section = tl_section("matrix layouts");
    let text = format!("#include <cstdio>\n#include <initializer_list>\n#include <vector>\n#define TL_LAYOUT constexpr\nnamespace tl {{\n{section}}}\nusing namespace tl::mx;\n{LAYOUT_CHECK}");
    let report = run_host_program("layouts", &text);
    assert!(report.contains(", 0 failures"), "{report}");
}

/// The rows of every matrix instruction's accumulator (`tl_acc_rows.h`, `Layout::AccRows`),
/// checked against the instructions' `c` through the block tiling the gemms use: each
/// accumulator register's row register holds its row; each row register's elements are
/// exactly the thread's registers in that row; the lanes a reduction's butterfly pairs (xor
/// below `LANES`) hold the same row in the same register, and with the `WN` waves of a row
/// of waves they are all its holders; `lead` picks one of them.
#[test]
fn accumulator_rows_are_the_rows_each_thread_holds() {
    let text = format!(
        "#include <cstdio>\n#include <initializer_list>\n#include <vector>\n#define TL_LAYOUT constexpr\nnamespace tl {{\n{}{}}}\nusing namespace tl::mx;\n{ACC_ROWS_CHECK}",
        tl_section("matrix layouts"),
        tl_section("accumulator rows")
    );
    let report = run_host_program("acc_rows", &text);
    assert!(report.contains(", 0 failures"), "{report}");
    // Every instruction and wave grid the test names ran (a typo'd list would pass empty).
    assert!(report.starts_with("14 configs"), "{report}");
}

/// mma.sync's accumulator as the A operand of the next product (`tl_mma.h`'s `mma_a_reg`,
/// which `gemm_mma_rs` packs from): for every lane, m-tile, k-step and operand register, the
/// two accumulator registers it packs hold, by the accumulator layout (`mx::MmaSync::c`), the
/// row and the two columns the PTX ISA's m16n8k16 A fragment puts there.
#[test]
fn a_register_operand_packs_the_accumulator_pairs_the_fragment_needs() {
    let text = format!(
        "#include <cstdio>\n#include <initializer_list>\n#define TL_LAYOUT constexpr\n#define TL_DEVICE inline\nnamespace tl {{\n{}{}{}}}\nusing namespace tl;\nusing namespace tl::mx;\n{}",
        tl_section("matrix layouts"),
        tl_section("accumulator rows"),
        tl_section("register operand"),
        r#"
int main() {
  int checks = 0, failures = 0;
  for (int KT : {2, 4, 8})
    for (int lane = 0; lane < 32; ++lane)
      for (int mt = 0; mt < 2; ++mt)
        for (int kk = 0; kk < KT / 2; ++kk)
          for (int i = 0; i < 4; ++i)
            for (int e = 0; e < 2; ++e) {
              const int r = mma_a_reg(KT, mt, kk, i) + e, q = r % 4, tile = r / 4;
              const rc p = MmaSync::c(lane, q);
              const int g = lane / 4, t = lane % 4;
              const bool ok = tile / KT == mt && p.row == g + 8 * (i % 2) &&
                              (tile % KT) * 8 + p.col == 16 * kk + 2 * t + 8 * (i / 2) + e;
              ++checks;
              if (!ok && failures++ < 10) std::printf("FAIL KT %d lane %d mt %d kk %d i %d e %d\n", KT, lane, mt, kk, i, e);
            }
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
"#
    );
    let report = run_host_program("register_a", &text);
    assert!(report.contains("3584 checks, 0 failures"), "{report}");
}

const ACC_ROWS_CHECK: &str = r#"
int failures = 0, checks = 0, configs = 0;
void check(bool ok, const char* what, const char* name, int a, int b, int c) {
  ++checks;
  if (!ok && failures++ < 20) std::printf("FAIL %s %s (%d, %d, %d)\n", what, name, a, b, c);
}
template <class I, int M, int N, int WM, int WN>
void rows_of(const char* name) {
  ++configs;
  typedef tiling<I, M, N, WM, WN> L;
  typedef rows<I, M, WM, WN> R;
  constexpr int PER = R::template per<N>();
  check(R::NREG * PER == L::NREG, "row registers times their elements are the registers", name, R::NREG, PER, L::NREG);
  std::vector<int> holders(M, 0), leads(M, 0);
  for (int t = 0; t < L::THREADS; ++t) {
    std::vector<int> seen(L::NREG, 0);
    for (int j = 0; j < R::NREG; ++j) {
      const int row = R::row(t, j);
      check(row >= 0 && row < M, "row in the tile", name, t, j, row);
      if (row < 0 || row >= M) continue;
      ++holders[row];
      leads[row] += R::lead(t);
      for (int e = 0; e < PER; ++e) {
        const int r = R::template reg<N>(j, e);
        check(r >= 0 && r < L::NREG, "element register in range", name, t, j, e);
        if (r < 0 || r >= L::NREG) continue;
        ++seen[r];
        check(L::c(t, r).row == row, "element in the row", name, t, j, e);
        check(R::template of<N>(r) == j, "register's row register", name, t, r, j);
      }
      // The butterfly's partners hold the same row in the same register.
      for (int x = 1; x < R::LANES; x <<= 1) check(R::row(t ^ x, j) == row, "partner holds the row", name, t, j, x);
      // So do the other waves of the row of waves.
      for (int w = 0; w < WN; ++w) {
        const int u = (t / I::WAVE / WN * WN + w) * I::WAVE + t % I::WAVE;
        check(R::row(u, j) == row, "wave of the row holds the row", name, t, j, w);
      }
    }
    for (int r = 0; r < L::NREG; ++r) check(seen[r] == 1, "register in one row register", name, t, r, seen[r]);
  }
  for (int i = 0; i < M; ++i) {
    check(holders[i] == R::LANES * WN, "row held by its lanes and waves only", name, i, holders[i], R::LANES * WN);
    check(leads[i] == 1, "one lead a row", name, i, leads[i], 0);
  }
}
int main() {
  // mma.sync's documented entries (PTX ISA, m16n8k16 C fragment): (lane, q) -> (row, col).
  check(MmaSync::c(0, 0).row == 0 && MmaSync::c(0, 0).col == 0, "documented entry", "MmaSync", 0, 0, 0);
  check(MmaSync::c(5, 3).row == 9 && MmaSync::c(5, 3).col == 3, "documented entry", "MmaSync", 5, 3, 0);
  check(MmaSync::c(31, 2).row == 15 && MmaSync::c(31, 2).col == 6, "documented entry", "MmaSync", 31, 2, 0);
  rows_of<MmaSync, 64, 64, 4, 1>("MmaSync 64x64 4x1");
  rows_of<MmaSync, 128, 64, 8, 1>("MmaSync 128x64 8x1");
  rows_of<MmaSync, 128, 128, 2, 4>("MmaSync 128x128 2x4");
  rows_of<MmaSync, 64, 128, 1, 4>("MmaSync 64x128 1x4");
  rows_of<MmaSync, 16, 8, 1, 1>("MmaSync 16x8 1x1");
  rows_of<Wmma11, 64, 64, 2, 2>("Wmma11 64x64 2x2");
  rows_of<Wmma11, 64, 32, 4, 1>("Wmma11 64x32 4x1");
  rows_of<Wmma12, 64, 64, 2, 2>("Wmma12 64x64 2x2");
  rows_of<Wmma12, 128, 32, 4, 1>("Wmma12 128x32 4x1");
  rows_of<Mfma32, 64, 64, 2, 1>("Mfma32 64x64 2x1");
  rows_of<Mfma32, 128, 128, 2, 2>("Mfma32 128x128 2x2");
  rows_of<Mfma16, 32, 32, 1, 2>("Mfma16 32x32 1x2");
  rows_of<Mfma16, 64, 48, 4, 1>("Mfma16 64x48 4x1");
  rows_of<Mfma16, 16, 16, 1, 1>("Mfma16 16x16 1x1");
  std::printf("%d configs, %d checks, %d failures\n", configs, checks, failures);
  return failures != 0;
}
"#;

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
// TA, TB: the operand tiles stored transposed (`.t()`: A as K × M, B as N × K).
template <class I, int M, int N, int K, int WM, int WN, bool TA = false, bool TB = false>
void block(const char* name) {
  typedef tiling<I, M, N, WM, WN> L;
  std::vector<double> A(M * K), B(K * N), ref(M * N, 0.0), acc(L::THREADS * L::NREG, 0.0);
  for (int i = 0; i < M * K; ++i) A[i] = (i * 7 % 11) - 5;
  for (int i = 0; i < K * N; ++i) B[i] = (i * 5 % 13) - 6;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k)
        ref[i * N + j] += A[TA ? k * M + i : i * K + k] * B[TB ? j * K + k : k * N + j];
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
              const int t = w * I::WAVE + l, ia = L::template a_index<TA>(t, K, mt, k0, e), ib = L::template b_index<TB>(t, nt, k0, e, K);
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
  // Operands stored transposed (`.t()`), every instruction, both and each.
  block<Wmma11, 32, 64, 48, 1, 2, true, false>("Wmma11 32x64x48 1x2 A.t()");
  block<Wmma11, 64, 32, 32, 2, 1, false, true>("Wmma11 64x32x32 2x1 B.t()");
  block<Wmma12, 64, 64, 32, 2, 2, true, true>("Wmma12 64x64x32 2x2 A.t() B.t()");
  block<Wmma12, 128, 32, 16, 2, 1, false, true>("Wmma12 128x32x16 2x1 B.t()");
  block<Mfma32, 32, 64, 24, 1, 2, true, false>("Mfma32 32x64x24 1x2 A.t()");
  block<Mfma32, 64, 64, 32, 2, 1, false, true>("Mfma32 64x64x32 2x1 B.t()");
  block<Mfma16, 32, 32, 32, 1, 2, true, true>("Mfma16 32x32x32 1x2 A.t() B.t()");
  block<Mfma16, 64, 48, 32, 2, 1>("Mfma16 64x48x32 2x1");
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
"#;
