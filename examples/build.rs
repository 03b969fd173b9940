// Compiles every #[tile_kernel] of this crate ahead of time for the targets in TILELANG_TARGETS
// (or the GPUs present), like the kernels crate. Without a device compiler the kernels run on
// the CPU backend.
fn main() {
    tilelang_build::build();
}
