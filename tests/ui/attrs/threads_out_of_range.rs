use tilelang::prelude::*;

#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = BLOCK,
    configs = [small(BLOCK = 256), large(BLOCK = 2048)],
)]
pub fn k<const BLOCK: usize>(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            c[g] = a[g];
        }
    }
}

fn main() {}
