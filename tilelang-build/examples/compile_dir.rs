//! Compiles the kernels of a source folder outside cargo, for inspecting generated code:
//! `TILELANG_TARGETS=sm_90 cargo run -p tilelang-build --example compile_dir -- kernels/src /tmp/out`
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: compile_dir SRC_DIR OUT_DIR");
        std::process::exit(2);
    }
    let src = std::path::Path::new(&args[1]);
    let out = std::path::Path::new(&args[2]);
    match tilelang_build::run(src, out, &std::env::current_dir().unwrap()) {
        Ok(archs) => println!("compiled for: {}", archs.join(", ")),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
