use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn copy_kernel(a: &Tensor<f16, (N,)>, c: &mut Tensor<f16, (N,)>) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = a[g];
        }
    }
}

fn main() -> Result<(), Error> {
    let dev = Device::cpu();
    let a = dev.zeros::<f16>(&[8])?;
    let c = dev.alloc::<f16>(&[8])?;
    copy_kernel(&dev, &a, &c)
}
