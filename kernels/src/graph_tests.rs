//! Graphs of tutorial kernels ([`tilelang::Device::record_graph`]): on a CUDA device, a recorded
//! sequence replays in order with the results of running it directly, keeps its tensors'
//! memory alive, and refuses what cannot be recorded. On other devices recording is refused.
//! Runs on the GPU with `TILELANG_TEST_DEVICE=gpu` (the kernels' suite on the device).

use crate::ch02_vector_add::{mul_relu, reference_add, reference_mul_relu, vector_add};
use crate::check::{compare, test_device, Rng};
use tilelang::{f16, Backend, Error, Tensor};

/// f16 results of f16 inputs: each output is one rounding of the exact value.
const ATOL: f64 = 1e-3;
const RTOL: f64 = 1e-3;

#[test]
fn a_recorded_graph_replays_in_order_and_keeps_its_memory() {
    let dev = test_device();
    let seed = Rng::fresh_seed();
    let mut rng = Rng::new(seed);
    let n = 3 * 1024 + 17; // a tail block
    let av: Vec<f16> = rng.vec::<f16>(n, -2.0, 2.0);
    let bv: Vec<f16> = rng.vec::<f16>(n, -2.0, 2.0);
    let a = dev.upload(&av, &[n]).unwrap();
    let b = dev.upload(&bv, &[n]).unwrap();
    let mut c = dev.alloc::<f16>(&[n]).unwrap();
    let mut d = dev.alloc::<f16>(&[n]).unwrap();

    let recorded = dev.record_graph(|| {
        // c = a + b, then d = relu(c · b): the second reads what the first writes.
        vector_add(&dev, &a, &b, &mut c)?;
        mul_relu(&dev, &c, &b, &mut d)
    });
    if dev.backend() != Backend::Cuda {
        let e = recorded.unwrap_err();
        assert!(matches!(&e, Error::Graph(m) if m.contains("CUDA")), "{e}");
        return;
    }
    let graph = recorded.unwrap();
    assert_eq!(graph.launches(), 2);
    // Recording ran nothing: the outputs are still poison.
    assert!(
        c.to_vec().unwrap().iter().all(|x| x.is_nan()),
        "seed {seed}"
    );
    assert!(
        d.to_vec().unwrap().iter().all(|x| x.is_nan()),
        "seed {seed}"
    );

    let (a64, b64) = (
        av.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
        bv.iter().map(|x| x.to_f64()).collect::<Vec<_>>(),
    );
    // The reference rounds the sum to f16 before the product, as the kernels do.
    let c_want: Vec<f64> = reference_add(&a64, &b64)
        .iter()
        .map(|&x| f16::from_f64(x).to_f64())
        .collect();
    let d_want = reference_mul_relu(&c_want, &b64);
    for replay in 0..3 {
        c.poison().unwrap();
        d.poison().unwrap();
        graph.launch().unwrap();
        let cmp = compare(&c.to_vec().unwrap(), &c_want, ATOL, RTOL);
        assert!(cmp.passed(), "replay {replay}, c, seed {seed}: {cmp}");
        let cmp = compare(&d.to_vec().unwrap(), &d_want, ATOL, RTOL);
        assert!(cmp.passed(), "replay {replay}, d, seed {seed}: {cmp}");
    }

    // New inputs in the same tensors: a replay reads what they hold now.
    let a2: Vec<f16> = rng.vec::<f16>(n, -2.0, 2.0);
    let mut a = a;
    a.copy_from_slice(&a2).unwrap();
    let a2_64: Vec<f64> = a2.iter().map(|x| x.to_f64()).collect();
    let c_want: Vec<f64> = reference_add(&a2_64, &b64)
        .iter()
        .map(|&x| f16::from_f64(x).to_f64())
        .collect();
    // Dropping every tensor the graph uses but `c` is safe: the graph keeps their memory.
    drop((a, b, d));
    c.poison().unwrap();
    graph.launch().unwrap();
    let cmp = compare(&c.to_vec().unwrap(), &c_want, ATOL, RTOL);
    assert!(cmp.passed(), "after new inputs, seed {seed}: {cmp}");
}

#[test]
fn recording_refuses_what_it_cannot_record() {
    let dev = test_device();
    if dev.backend() != Backend::Cuda {
        return; // covered by the test above: the device cannot record at all
    }
    let n = 100;
    let a = dev.upload(&vec![f16::ONE; n], &[n]).unwrap();
    let mut c = dev.alloc::<f16>(&[n]).unwrap();
    // A copy inside the recording would run before the recorded launches.
    let e = dev
        .record_graph(|| {
            vector_add(&dev, &a, &a, &mut c)?;
            c.to_vec().map(drop)
        })
        .unwrap_err();
    assert!(
        matches!(&e, Error::Graph(m) if m.contains("copying from the device")),
        "{e}"
    );
    // Nothing ran, and the device records again afterwards.
    assert!(c.to_vec().unwrap().iter().all(|x| x.is_nan()));
    let e = dev.record_graph(|| dev.synchronize()).unwrap_err();
    assert!(
        matches!(&e, Error::Graph(m) if m.contains("synchronizing")),
        "{e}"
    );
    // Recordings do not nest.
    let e = dev
        .record_graph(|| dev.record_graph(|| Ok(())).map(drop))
        .unwrap_err();
    assert!(
        matches!(&e, Error::Graph(m) if m.contains("already recording")),
        "{e}"
    );
    // A launch-time check fails inside the recording as it would outside.
    let short = dev.alloc::<f16>(&[n - 1]).unwrap();
    let e = dev
        .record_graph(|| vector_add(&dev, &a, &short, &mut c))
        .unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // Borrowed memory could be freed under the graph.
    // SAFETY: `c`'s memory holds `n` f16 values and outlives `raw`, which is only used to
    // attempt a recording that is refused before anything is queued.
    let raw =
        unsafe { Tensor::<f16>::from_raw_parts(&dev, c.device_ptr() as *mut f16, &[n]).unwrap() };
    let mut out = dev.alloc::<f16>(&[n]).unwrap();
    let e = dev
        .record_graph(|| vector_add(&dev, &raw, &a, &mut out))
        .unwrap_err();
    assert!(
        matches!(&e, Error::Graph(m) if m.contains("from_raw_parts")),
        "{e}"
    );
    // And a good recording still works after all those failures.
    let g = dev
        .record_graph(|| vector_add(&dev, &a, &a, &mut out))
        .unwrap();
    g.launch().unwrap();
    assert!(out.to_vec().unwrap().iter().all(|x| x.to_f32() == 2.0));
}
