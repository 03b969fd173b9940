use tilelang::prelude::*;

#[tile_kernel(threads = 64)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = a[g];
        }
    }
}

fn main() {}
