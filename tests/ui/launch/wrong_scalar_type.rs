use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn scale(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>, s: f32) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = a[g] * s;
        }
    }
}

fn main() -> Result<(), Error> {
    let dev = Device::cpu();
    let a = dev.zeros::<f32>(&[8])?;
    let mut c = dev.alloc::<f32>(&[8])?;
    scale::launch(&dev, scale::Config::Default, &a, &mut c, 2.0f64)
}
