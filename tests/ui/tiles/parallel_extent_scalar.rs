use tilelang::prelude::*;

#[tile_kernel(grid = [1], threads = 128)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>, n: usize) {
    for i in parallel(n / 2) {
        c[i] = a[i];
    }
}

fn main() {}
