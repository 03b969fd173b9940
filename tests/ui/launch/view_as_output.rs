use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(64)], threads = 64)]
pub fn add(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    for i in parallel(64) {
        let g = block_idx(0) * 64 + i;
        if g < N {
            c[g] = a[g] + 1.0;
        }
    }
}

// A view borrows its tensor: it cannot be read while the tensor is written (in-place work
// goes through the kernel's own parameters, whose overlap the launcher checks at run time).
fn main() -> Result<(), Error> {
    let dev = Device::cpu();
    let mut c = dev.zeros::<f32>(&[2, 64])?;
    let row = c.slice(0..1)?;
    let row = row.view(&[64])?;
    add(&dev, &row, &mut c)
}
