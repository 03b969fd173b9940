use tilelang::prelude::*;

// A tile may drop a tensor's leading dimensions, not add dimensions.
#[tile_kernel(grid = [1], threads = 32)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let mut s = alloc_shared::<f32>((1, 32));
    copy(a.at((0,)), &mut s);
    let mut t = alloc_shared::<f32>((32,));
    copy(&s, &mut t);
    copy(&t, c.at_mut((0,)));
}

fn main() {}
