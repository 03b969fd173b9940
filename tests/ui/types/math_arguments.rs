use tilelang::prelude::*;

// The math library: `fma` takes three arguments, `pow` is defined on floats only, and Rust's
// method forms name the built-in function to call instead.
#[tile_kernel(grid = [N], threads = 1)]
pub fn k(a: &Tensor<f32, (N,)>, n: &Tensor<i32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let g = block_idx(0);
    c[g] = fma(a[g], a[g]);
    c[g] = pow(n[g], 2) as f32;
    c[g] = a[g].mul_add(a[g], 1.0);
    c[g] = a[g].tanh();
}

fn main() {}
