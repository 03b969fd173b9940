use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64, threads = 128)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = a[g];
        }
    }
}

fn main() {}
