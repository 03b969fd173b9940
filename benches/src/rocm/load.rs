//! The libraries' names, where they are searched, and loading them.

use std::ffi::{c_char, CStr, OsStr};
use std::path::PathBuf;
use tilelang::__private::dylib::{self, Library, LoadError, SearchOrder, Spec};

/// rocBLAS sonames, newest first: `.so.5` is rocBLAS 5.x (ROCm 7), `.so.4` rocBLAS 4.x (ROCm 6);
/// rocm-cmake's `rocm_set_soversion` makes the major of `rocblas_SOVERSION` (4.4 in ROCm 6.4's
/// `library/CMakeLists.txt`, 5.x in rocm-libraries) the soname. `librocblas.so` is the
/// development symlink.
pub const ROCBLAS_NAMES: &[&str] = &["librocblas.so.5", "librocblas.so.4", "librocblas.so"];
/// MIOpen sonames: `MIOpen_SOVERSION 1.0` (MIOpen `src/CMakeLists.txt`) gives `.so.1` in every
/// ROCm 6 and 7 release.
pub const MIOPEN_NAMES: &[&str] = &["libMIOpen.so.1", "libMIOpen.so"];
/// The search paths of a ROCm library with sonames `names`: in `$ROCM_PATH/lib` (when set and
/// not `/opt/rocm`), in `/opt/rocm/lib`, then as bare names for the dynamic loader: an explicit
/// ROCm installation wins.
pub fn library_candidates(rocm_path: Option<&OsStr>, names: &[&str]) -> Vec<PathBuf> {
    dylib::candidates(
        names,
        &dylib::rocm_lib_dirs(rocm_path),
        SearchOrder::DirsFirst,
    )
}

/// How messages name rocBLAS, and the fixes.
pub const ROCBLAS: Spec = Spec {
    library: "librocblas",
    not_found: "install ROCm's rocBLAS (package `rocblas` from the ROCm repository) and set \
                ROCM_PATH to the ROCm root holding lib/librocblas.so.*, or put that directory \
                on LD_LIBRARY_PATH",
    too_old: "the baselines need the rocBLAS of ROCm 6.0 or newer",
};
/// How messages name MIOpen, and the fixes.
pub const MIOPEN: Spec = Spec {
    library: "libMIOpen",
    not_found: "install ROCm's MIOpen (package `miopen-hip` from the ROCm repository) and set \
                ROCM_PATH to the ROCm root holding lib/libMIOpen.so.1, or put that directory \
                on LD_LIBRARY_PATH",
    too_old: "the baselines need the MIOpen of ROCm 6.0 or newer",
};

/// Opens the library of `spec` from `candidates` and resolves `A` from it.
///
/// # Safety
/// `resolve` is the resolver of the API struct describing the library of `spec`, and the
/// candidates are that library's names (whose initialisers only set up the library).
pub(super) unsafe fn load_api<A>(
    spec: &Spec,
    candidates: &[PathBuf],
    resolve: unsafe fn(&'static Library) -> Result<A, LoadError>,
) -> Result<A, String> {
    // SAFETY: the caller's contract.
    let lib = unsafe { dylib::open(spec, candidates) }.map_err(|e| e.to_string())?;
    // SAFETY: the caller's contract.
    unsafe { resolve(lib) }.map_err(|e| e.to_string())
}

pub(super) fn rocm_path() -> Option<std::ffi::OsString> {
    std::env::var_os("ROCM_PATH")
}

/// # Safety
/// `p` is null or a NUL-terminated string that outlives the call.
pub(super) unsafe fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}
