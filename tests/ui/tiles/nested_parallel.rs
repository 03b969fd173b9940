use tilelang::prelude::*;

#[tile_kernel(grid = [M.div_ceil(16), N.div_ceil(16)], threads = 256)]
pub fn k(a: &Tensor<f32, (M, N)>, c: &mut Tensor<f32, (M, N)>) {
    let (row, col) = (block_idx(0) * 16, block_idx(1) * 16);
    for i in parallel(16) {
        for j in parallel(16) {
            if row + i < M && col + j < N {
                c[(row + i, col + j)] = a[(row + i, col + j)];
            }
        }
    }
}

fn main() {}
