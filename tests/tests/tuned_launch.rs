//! `launch_auto` and the tuning cache: the config recorded for the kernel, the device's arch and
//! the bucket of the shape symbols comes first, when its conditions hold. A file of its own: it
//! sets `TILELANG_TUNE_CACHE` for its process.

use tilelang::prelude::*;
use tilelang::tuning::{write_entry, Key};

#[tile_kernel(
    grid = [N.div_ceil(BLOCK)],
    threads = 32,
    configs = [small(BLOCK = 32), large(BLOCK = 128), exact(BLOCK = 64)],
    requires = [BLOCK != 64 || N % 64 == 0],
)]
pub fn twice<const BLOCK: usize>(a: &Tensor<f32, (N,)>, c: &mut Tensor<f32, (N,)>) {
    let base = block_idx(0) * BLOCK;
    for i in parallel(BLOCK) {
        let g = base + i;
        if g < N {
            c[g] = a[g] * 2.0;
        }
    }
}

#[test]
fn the_tuned_config_comes_first_when_it_holds() {
    let dir = std::env::temp_dir().join(format!("tl-tuned-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cache = dir.join("tune.tsv");
    std::env::set_var("TILELANG_TUNE_CACHE", &cache);
    let dev = Device::cpu();
    let run = |n: usize| {
        let a = dev.upload(&vec![1.0f32; n], &[n]).unwrap();
        let mut c = dev.alloc::<f32>(&[n]).unwrap();
        let used = twice::launch_auto(&dev, &a, &mut c).unwrap();
        assert_eq!(c.to_vec().unwrap(), vec![2.0; n]);
        used
    };
    // No cache: the arch's default (the first config).
    assert_eq!(run(100), twice::Config::Small);
    // The tuner recorded `large` for N in (64, 128]: taken for 100, not for 300.
    write_entry(&cache, &Key::new("twice", "cpu", &[100]), "large", 0.1).unwrap();
    assert_eq!(run(100), twice::Config::Large);
    assert_eq!(run(128), twice::Config::Large);
    assert_eq!(run(300), twice::Config::Small);
    // A recorded config whose `requires` fails is passed over; one the kernel no longer has is
    // ignored.
    write_entry(&cache, &Key::new("twice", "cpu", &[300]), "exact", 0.1).unwrap();
    assert_eq!(run(300), twice::Config::Small);
    assert_eq!(run(320), twice::Config::Exact);
    write_entry(&cache, &Key::new("twice", "cpu", &[100]), "gone", 0.1).unwrap();
    assert_eq!(run(100), twice::Config::Small);
    let _ = std::fs::remove_dir_all(&dir);
}
