use tilelang::prelude::*;

#[tile_kernel(grid = [1], threads = 64)]
pub fn k(a: &Tensor<f16, (M, N)>, c: &mut Tensor<f16, (N, M)>) {
    let mut s = alloc_shared::<f16>((64, 64));
    let mut t = alloc_shared::<f16>((64, 64));
    copy(a.at((0, 0)), &mut s);
    transpose(&s, &mut t);
    copy(&t, c.at_mut((0, 0)));
}

fn main() {}
