use tilelang::prelude::*;

#[tile_kernel(grid = [1], threads = 64)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let mut acc = 0.0f32;
    for i in parallel(64) {
        if i < N {
            acc += a[i];
        }
    }
    c[0] = acc;
}

fn main() {}
