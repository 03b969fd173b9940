// Generated kernel 91b23bd8098b6288 (docs/design/difftest.md §7), as the generator drew it: clang 19
// folded (__bf16)(double)u32 into an integer-to-bf16 conversion that its AMDGPU backend cannot
// select ("Cannot select: bf16 = uint_to_fp"). Smaller forms of it (the cast alone, a converting
// copy) did not crash.
#[tile_kernel(grid = [N.div_ceil(BN), M.div_ceil(BM)], threads = THREADS, configs = [f0(BM = 32, BN = 32, THREADS = 128), o1(BM = 3, BN = 24, THREADS = 33)])]
pub fn g91b23bd8098b6288<const BM: usize, const BN: usize, const THREADS: usize>(x0: &Tensor<u32, (M, N)>, x1: &Tensor<bf16, (M, N)>, y0: &mut Tensor<bf16, (M, N)>) {
    let (r0, c0) = (block_idx(1) * BM, block_idx(0) * BN);
    let mut a0 = alloc_shared::<u32, (BM, BN)>();
    copy(x0.at((r0, c0)), &mut a0);
    let mut b0 = alloc_shared::<u32, (BM, BN)>();
    copy(&a0, &mut b0);
    let mut a1 = alloc_fragment::<u8, (BM, BN)>();
    copy(x1.at((r0, c0)), &mut a1);
    let mut o = alloc_fragment::<u32, (BM, BN)>();
    fill(&mut o, 1u32);
    for (i, j) in parallel(BM, BN) {
        let v0 = min(a1[(i, j)], a1[(i, j)]);
        if (!((a0[(i, j)] as bf16) >= (-2.5))) {
            o[(i, j)] = a0[(i, j)];
        }
    }
    for (i, j) in parallel(BM, BN) {
        o[(i, j)] = min((a1[(i, j)] as u32) * o[(i, j)], o[(i, j)]);
    }
    copy(&o, y0.at_mut((r0, c0)));
}

