fn main() {
    for a in std::env::args().skip(1) {
        let seed = u64::from_str_radix(&a, 16).unwrap();
        println!("{}", tilelang_difftest::gen::generate(seed).source());
    }
}
