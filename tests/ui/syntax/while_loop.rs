use tilelang::prelude::*;

#[tile_kernel(grid = [1], threads = 1)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let mut i = 0;
    while i < N {
        c[i] = a[i];
        i += 1;
    }
}

fn main() {}
