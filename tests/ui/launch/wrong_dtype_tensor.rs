use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn scale(a: &Tensor<f16, (N,)>, c: &mut Tensor<f16, (N,)>, s: f32) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = ((a[g] as f32) * s) as f16;
        }
    }
}

fn main() -> Result<(), Error> {
    let dev = Device::cpu();
    let a = dev.zeros::<f32>(&[8])?;
    let mut c = dev.alloc::<f16>(&[8])?;
    scale(&dev, &a, &mut c, 2.0)
}
