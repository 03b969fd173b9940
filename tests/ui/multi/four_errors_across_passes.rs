use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64, stages = 2)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        while g < N {
            c[g] = a[g];
        }
        c[g] = a[g].exp();
        c[(g, 0)] = a[g];
    }
}

fn main() {}
