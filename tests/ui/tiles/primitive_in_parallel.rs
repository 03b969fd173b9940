use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let mut s = alloc_shared::<f32>((64,));
    for i in parallel(64) {
        copy(a.at((block_idx(0) * 64,)), &mut s);
        c[i] = s[i];
    }
}

fn main() {}
