use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = 64, configs = [small(BLOCK = 64), large(BLOCK = 256)])]
pub fn scale<const BLOCK: usize>(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            c[g] = a[g] * 2.0;
        }
    }
}

// Configs are a type: a misspelt one is a compile error, not a run-time one.
fn main() {
    let dev = Device::cpu();
    let a = dev.zeros::<f32>(&[100]).unwrap();
    let mut c = dev.alloc::<f32>(&[100]).unwrap();
    scale::launch(&dev, scale::Config::Smal, &a, &mut c).unwrap();
}
