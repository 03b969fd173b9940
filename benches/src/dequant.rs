//! The dequantizer of the "dequantize, then cuBLAS" baseline of chapter 10: unpacks the packed
//! int4 weights `Bp [K, N/2]` into an f16 matrix `B [K, N]` in global memory, with chapter 10's
//! format (`B[k, 2j] = (p & 0xF) − 8`, `B[k, 2j+1] = ((p >> 4) & 0xF) − 8`). A plain
//! element-wise kernel: each iteration reads one byte and writes two halves.

use tilelang::prelude::*;

/// `b[k, 2j] = lo(bp[k, j]) − 8`, `b[k, 2j + 1] = hi(bp[k, j]) − 8`.
#[tile_kernel(
    grid = [NP.div_ceil(BJ), K.div_ceil(BK)],
    threads = THREADS,
    configs = [d8x256(BK = 8, BJ = 256, THREADS = 256)],
    defaults = [sm_90 = d8x256, cpu = d8x256],
    requires = [N == 2 * NP],
)]
pub fn dequant_w4<const BK: usize, const BJ: usize, const THREADS: usize>(
    bp: &Tensor<u8, (K, NP)>,
    b: &mut Tensor<f16, (K, N)>,
) {
    let (bx, by) = (block_idx(0), block_idx(1));
    for (i, j) in parallel(BK, BJ) {
        let k = by * BK + i;
        let jj = bx * BJ + j;
        if k < K && jj < NP {
            let p = bp[(k, jj)];
            b[(k, 2 * jj)] = (((p & 15) as i32) - 8) as f16;
            b[(k, 2 * jj + 1)] = ((((p >> 4) & 15) as i32) - 8) as f16;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::ch10_w4a16::unpack;
    use kernels::check::Rng;

    #[test]
    fn unpacks_like_chapter_10_with_tails() {
        let dev = Device::cpu();
        for (k, n) in [(1, 2), (9, 514), (17, 30)] {
            let bpv = Rng::new(k as u64 * 31 + n as u64).bytes(k * n / 2);
            let bp = dev.upload(&bpv, &[k, n / 2]).unwrap();
            let mut b = dev.alloc::<f16>(&[k, n]).unwrap();
            dequant_w4(&dev, &bp, &mut b).unwrap();
            let got: Vec<f64> = b.to_vec().unwrap().iter().map(|x| x.to_f64()).collect();
            assert_eq!(got, unpack(&bpv, k, n), "{k}x{n}");
        }
    }
}
