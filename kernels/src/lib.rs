use tilelang::prelude::*;

#[tile_kernel(grid = [N.div_ceil(BLOCK)], threads = THREADS, configs = [small(BLOCK = 64, THREADS = 64), large(BLOCK = 1024, THREADS = 256)], defaults = [cpu = small])]
pub fn vector_add<const BLOCK: usize, const THREADS: usize>(
    a: &Tensor<f16, (N,)>,
    b: &Tensor<f16, (N,)>,
    c: &mut Tensor<f16, (N,)>,
) {
    let mut s = alloc_fragment::<f16, (BLOCK,)>();
    copy(a.at((block_idx(0) * BLOCK,)), &mut s);
    for i in parallel(BLOCK) {
        let g = block_idx(0) * BLOCK + i;
        if g < N {
            c[g] = s[i] + b[g];
        }
    }
}

#[cfg(test)]
mod t {
    use super::*;
    #[test]
    fn va() {
        let dev = Device::cpu();
        let n = 1000;
        let av: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32)).collect();
        let a = dev.upload(&av, &[n]).unwrap();
        let b = dev.upload(&av, &[n]).unwrap();
        let mut c = dev.alloc::<f16>(&[n]).unwrap();
        vector_add(&dev, &a, &b, &mut c).unwrap();
        let cv = c.to_vec().unwrap();
        for i in 0..n {
            assert_eq!(cv[i].to_f32(), 2.0 * i as f32, "{i}");
        }
        vector_add::launch(&dev, "large", &a, &b, &mut c).unwrap();
        assert!(vector_add::launch(&dev, "nope", &a, &b, &mut c).is_err());
        let mut d = dev.alloc::<f16>(&[n + 1]).unwrap();
        println!("{}", vector_add(&dev, &a, &b, &mut d).unwrap_err());
    }
}
