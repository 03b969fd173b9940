//! Prints one case of a generated kernel as the GPU runner builds it: `case SEED CONFIG L M N K`,
//! each tensor's first elements before and after the evaluator.
use tilelang_difftest::{device, eval, gen};
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let seed = u64::from_str_radix(&a[0], 16).unwrap();
    let c: usize = a[1].parse().unwrap();
    let sizes: [usize; 4] = std::array::from_fn(|i| a[2 + i].parse().unwrap());
    let p = gen::generate(seed);
    let k = device::ir_of(seed).unwrap();
    let args = device::case_args(&p.kernel, seed, &sizes);
    let mut out = args.clone();
    eval::run(&k, c, &mut out).unwrap();
    for (i, (x, y)) in args.iter().zip(&out).enumerate() {
        if let (eval::Arg::Tensor(x), eval::Arg::Tensor(y)) = (x, y) {
            let n = x.data.len().min(8);
            println!(
                "{}: before {:?}",
                k.params[i].name,
                (0..n).map(|j| x.data.get(j)).collect::<Vec<_>>()
            );
            println!(
                "{}: after  {:?}",
                k.params[i].name,
                (0..n).map(|j| y.data.get(j)).collect::<Vec<_>>()
            );
        }
    }
}
