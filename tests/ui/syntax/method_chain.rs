use tilelang::prelude::*;

// Every unsupported method of a chain is reported, inner first.
#[tile_kernel(grid = [N.div_ceil(4)], threads = 4)]
pub fn k(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(4) {
        let g = block_idx(0) * 4 + i;
        if g < N {
            c[g] = a[g].tanh().max(0.0);
        }
    }
}

fn main() {}
