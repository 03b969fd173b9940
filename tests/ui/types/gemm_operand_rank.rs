use tilelang::prelude::*;

// "1 dimension", not "1 dimensions".
#[tile_kernel(grid = [1], threads = 128)]
pub fn k(x: &mut Tensor<f32, (M, M)>) {
    let s = alloc_shared::<f16>((64,));
    let t = alloc_shared::<f16>((64, 64));
    let mut acc = alloc_fragment::<f32>((64, 64));
    gemm(&s, &t, &mut acc);
    copy(&acc, x.at_mut((0, 0)));
}

fn main() {}
