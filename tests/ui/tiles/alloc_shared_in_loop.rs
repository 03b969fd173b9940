use tilelang::prelude::*;

#[tile_kernel(grid = [M.div_ceil(64)], threads = 64)]
pub fn k(a: &Tensor<f16, (M, K)>, c: &mut Tensor<f16, (M, K)>) {
    let row = block_idx(0) * 64;
    for ko in serial(K.div_ceil(32)) {
        let mut s = alloc_shared::<f16>((64, 32));
        copy(a.at((row, ko * 32)), &mut s);
        copy(&s, c.at_mut((row, ko * 32)));
    }
}

fn main() {}
