use tilelang::prelude::*;

// An error in the body and a `gemm` whose shapes disagree under one config only: both are
// reported in the same round.
#[tile_kernel(grid = [1], threads = 128, configs = [a(BM = 64, BK = 32), b(BM = 64, BK = 16)])]
pub fn k<const BM: usize, const BK: usize>(x: &mut Tensor<f32, (M, M)>) {
    let s = alloc_shared::<f16>((BM, 32));
    let t = alloc_shared::<f16>((BK, BM));
    let mut acc = alloc_fragment::<f32>((BM, BM));
    gemm(&s, &t, &mut acc);
    let q = undefined_name + 1;
    copy(&acc, x.at_mut((0, 0)));
}

fn main() {}
