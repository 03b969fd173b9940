// Compiles this crate's own #[tile_kernel]s (the W4 dequantizer of the "dequantize then cuBLAS"
// baseline) ahead of time, like the kernels crate's build script.
fn main() {
    tilelang_build::build();
}
