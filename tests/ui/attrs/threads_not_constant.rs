use tilelang::prelude::*;

#[tile_kernel(grid = [1], threads = N)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(64) {
        if i < N {
            c[i] = a[i];
        }
    }
}

fn main() {}
