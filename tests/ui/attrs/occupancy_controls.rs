use tilelang::prelude::*;

// `min_blocks` out of range in one config, a scalar parameter where a constant belongs, and
// both controls on one kernel: all reported in one round.
#[tile_kernel(grid = [N], threads = 64, configs = [a(B = 2), b(B = 40)], min_blocks = B)]
pub fn k<const B: usize>(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let g = block_idx(0);
    c[g] = a[g];
}

#[tile_kernel(grid = [N], threads = 64, max_registers = r)]
pub fn scalar(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>, r: usize) {
    let g = block_idx(0);
    c[g] = a[g] * (r as f32);
}

#[tile_kernel(grid = [N], threads = 64, min_blocks = 4, max_registers = 64)]
pub fn both(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let g = block_idx(0);
    c[g] = a[g];
}

fn main() {}
