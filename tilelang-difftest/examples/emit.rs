//! Prints the device source of a generated kernel: `emit SEED ARCH CONFIG_INDEX`.
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let seed = u64::from_str_radix(&a[0], 16).unwrap();
    let k = tilelang_difftest::device::ir_of(seed).unwrap();
    let t = tilelang_codegen::target::Target::by_arch(&a[1]).unwrap();
    let c: usize = a.get(2).map_or(0, |c| c.parse().unwrap());
    let h = tilelang_codegen::lower::emit(&k, c, &t, None).unwrap();
    println!("{}", h.source);
}
