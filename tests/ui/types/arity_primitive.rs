use tilelang::prelude::*;

#[tile_kernel(grid = [1], threads = 64)]
pub fn k(a: &Tensor<f16, (M, N)>, c: &mut Tensor<f16, (M, N)>) {
    let mut s = alloc_shared::<f16>((64, 64));
    copy(a.at((0, 0)), &mut s, 1);
    copy(&s, c.at_mut((0, 0)));
}

fn main() {}
