use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn k(a: &Tensor<f16, (N,)>, b: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = a[g] * b[g];
            b[g] = 0.0;
        }
    }
}

fn main() {}
