use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn k(a: &Tensor<f16, (N,)>, c: &mut Tensor<f32, (N,)>, s: f32) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = a[g] * s;
        }
    }
}

fn main() -> Result<(), Error> {
    let dev = Device::cpu();
    let a = dev.zeros::<f16>(&[8])?;
    let mut c = dev.alloc::<f32>(&[8])?;
    k(&dev, &a, &mut c, 2.0)?;
    println!("{:?} {:?}", k::CONFIGS, k::default_config(dev.arch()));
    k::launch(&dev, k::CONFIGS[0], &a, &mut c, 2.0)
}
