//! The tuner (`tilelang::tune`) on a real kernel: chapter 02's `vector_add`, on the test device.

use crate::ch02_vector_add::vector_add;
use crate::check::Rng;
use std::path::PathBuf;
use tilelang::f16;
use tilelang::tune::Tuner;

/// A cache file of this test's own, removed first.
fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!(
        "tilelang-tune-test-{}-{name}-{}.tsv",
        std::process::id(),
        Rng::fresh_seed()
    ));
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn tunes_a_real_kernel_on_the_cpu_backend() {
    let dev = crate::check::test_device();
    let path = scratch("vector_add");
    let tuner = Tuner::new()
        .cache(Some(path.clone()))
        .force(false)
        .reps(3)
        .flush_bytes(1 << 16);
    let n = 10_001;
    let a = dev.upload(&vec![f16::ONE; n], &[n]).unwrap();
    let b = dev.upload(&vec![f16::ONE; n], &[n]).unwrap();
    let mut c = dev.alloc::<f16>(&[n]).unwrap();
    let mut launches = 0;
    let t = tuner
        .tune_kernel(&dev, &[n], |cfg| {
            launches += 1;
            vector_add::launch(&dev, cfg, &a, &b, &mut c)
        })
        .unwrap();
    assert!(vector_add::CONFIGS.contains(&t.config));
    assert!(!t.from_cache);
    assert_eq!(t.timings.len(), vector_add::CONFIGS.len());
    assert!(t.timings.iter().all(|(_, ms)| *ms > 0.0));
    // A warm-up launch and at least three timed ones per config.
    assert!(launches >= 4 * vector_add::CONFIGS.len(), "{launches}");
    assert!(c.to_vec().unwrap().iter().all(|x| x.to_f32() == 2.0));

    let again = tuner
        .tune(&dev, "vector_add", &[n], vector_add::CONFIGS, |_| {
            panic!("the winner must be read back")
        })
        .unwrap();
    assert_eq!((again.config, again.from_cache), (t.config, true));
    let _ = std::fs::remove_file(&path);
}
