//! Libraries opened at run time: the one place that calls `libloading`.
//!
//! The HIP backend (libamdhip64) and the benches' AMD baselines (rocBLAS, MIOpen) open their
//! libraries when first used instead of linking them (ARCHITECTURE.md, Decisions: "Toolchains and
//! runtimes"), so every crate builds without ROCm and a machine without the library gets an
//! error, never a panic. This module is what they share:
//!
//! * [`candidates`] lists where to look: each soname in the search directories (typically
//!   [`rocm_lib_dirs`]: `$ROCM_PATH/lib`, then `/opt/rocm/lib`) and as a bare name for the
//!   dynamic loader (`LD_LIBRARY_PATH`, the ld.so cache), in a [`SearchOrder`].
//! * [`open`] opens the first candidate that loads and **never closes it**: a [`Library`] is
//!   only ever handed out as `&'static`, so every function pointer resolved from it stays valid
//!   for the life of the process (closing rocBLAS or MIOpen would also run their static
//!   destructors while handles may live).
//! * [`dylib_api!`](crate::dylib_api) declares a struct of typed C function pointers and its
//!   `resolve`, which looks every function up front and fails on the first one missing.
//! * Failures are a [`LoadError`]: the candidates tried and the loader's own words, or the
//!   missing symbol and the file that lacks it, each with the fix ([`Spec`]).
//!
//! ```no_run
//! use std::ffi::c_double;
//! use tilelang_rt::dylib::{self, SearchOrder, Spec};
//!
//! tilelang_rt::dylib_api! {
//!     /// The functions of libm this example calls.
//!     struct LibM {
//!         /// `double cos(double x)`
//!         fn cos(x: c_double) -> c_double;
//!     }
//! }
//!
//! const LIBM: Spec = Spec {
//!     library: "libm",
//!     not_found: "install the C library",
//!     too_old: "this example needs a C99 libm",
//! };
//!
//! # fn main() -> Result<(), dylib::LoadError> {
//! let tried = dylib::candidates(&["libm.so.6"], &[], SearchOrder::LoaderFirst);
//! // SAFETY: libm's initialisers only set up libm.
//! let lib = unsafe { dylib::open(&LIBM, &tried) }?;
//! // SAFETY: libm's `cos` is `double cos(double)`.
//! let libm = unsafe { LibM::resolve(lib) }?;
//! // SAFETY: `cos` accepts every double.
//! assert_eq!(unsafe { (libm.cos)(0.0) }, 1.0);
//! # Ok(()) }
//! ```

use std::ffi::{c_void, OsStr};
use std::fmt;
use std::path::{Path, PathBuf};

/// How a library is named in messages, and the fixes to suggest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The library as messages name it: `libamdhip64`, `librocBLAS`.
    pub library: &'static str,
    /// What to do when no candidate loads: how to install the library, or point the search
    /// at it.
    pub not_found: &'static str,
    /// What to say when the library lacks a function: which version is needed.
    pub too_old: &'static str,
}

/// The order of [`candidates`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchOrder {
    /// The bare names first (the dynamic loader's own search, so that `LD_LIBRARY_PATH` wins and
    /// an already loaded library of that soname is found), then the directories.
    LoaderFirst,
    /// The directories first (an explicit installation wins), then the bare names.
    DirsFirst,
}

/// The paths to try for a library with sonames `names` (newest first): every name in every one
/// of `dirs`, and every bare name (which the dynamic loader searches for), in `order`.
pub fn candidates(names: &[&str], dirs: &[PathBuf], order: SearchOrder) -> Vec<PathBuf> {
    let bare = names.iter().map(PathBuf::from);
    let in_dirs = dirs
        .iter()
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)));
    match order {
        SearchOrder::LoaderFirst => bare.chain(in_dirs).collect(),
        SearchOrder::DirsFirst => in_dirs.chain(bare).collect(),
    }
}

/// The ROCm library directories, in search order: `$ROCM_PATH/lib` when `rocm_path` (the value
/// of `ROCM_PATH`) is set and not empty, then `/opt/rocm/lib` (once, when `ROCM_PATH` is
/// `/opt/rocm`).
pub fn rocm_lib_dirs(rocm_path: Option<&OsStr>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(root) = rocm_path.filter(|p| !p.is_empty()) {
        dirs.push(Path::new(root).join("lib"));
    }
    let default = PathBuf::from("/opt/rocm/lib");
    if !dirs.contains(&default) {
        dirs.push(default);
    }
    dirs
}

/// [`rocm_lib_dirs`] of the process's `ROCM_PATH`.
pub fn rocm_lib_dirs_from_env() -> Vec<PathBuf> {
    rocm_lib_dirs(std::env::var_os("ROCM_PATH").as_deref())
}

/// Why a library or one of its functions is not available.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate could be opened.
    NotFound {
        /// [`Spec::library`].
        library: &'static str,
        /// Every candidate, in the order tried.
        tried: Vec<PathBuf>,
        /// The most telling failure: the first candidate that is a file and still failed to
        /// load (a wrong architecture, a missing dependency), else the first candidate. `None`
        /// when there were no candidates.
        failure: Option<Failure>,
        /// [`Spec::not_found`].
        fix: &'static str,
    },
    /// The library was opened and lacks a function (or exports it as a null address).
    MissingSymbol {
        /// [`Spec::library`].
        library: &'static str,
        /// The file that was opened.
        path: PathBuf,
        /// The function looked for.
        symbol: String,
        /// The loader's message.
        reason: String,
        /// [`Spec::too_old`].
        fix: &'static str,
    },
}

/// One candidate that did not load ([`LoadError::NotFound`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The candidate.
    pub path: PathBuf,
    /// Whether it was a file when it was tried (so it exists and still would not load).
    pub exists: bool,
    /// The loader's message.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound {
                library,
                tried,
                failure,
                fix,
            } => {
                let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                match failure {
                    None => write!(f, "{library} not found (tried no candidates")?,
                    Some(Failure {
                        path,
                        exists: true,
                        message,
                    }) => write!(
                        f,
                        "{library} could not be loaded (tried {}; {} exists and failed with: \
                         {message}",
                        tried.join(", "),
                        path.display()
                    )?,
                    Some(Failure { message, .. }) => write!(
                        f,
                        "{library} not found (tried {}; the first failed with: {message}",
                        tried.join(", ")
                    )?,
                }
                write!(f, "); {fix}")
            }
            LoadError::MissingSymbol {
                library,
                path,
                symbol,
                reason,
                fix,
            } => write!(
                f,
                "{library}: {} lacks `{symbol}` ({reason}); {fix}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// `dlopen failed: libamdhip64.so.7: cannot open shared object file: ...`: libloading's message
/// and the loader's, which libloading keeps as the source.
fn with_source(e: &dyn std::error::Error) -> String {
    match e.source() {
        Some(source) => format!("{e}: {source}"),
        None => e.to_string(),
    }
}

/// An opened library, never closed (see the module docs): only ever a `&'static Library`.
pub struct Library {
    lib: libloading::Library,
    path: PathBuf,
    spec: Spec,
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Library({}, {})", self.spec.library, self.path.display())
    }
}

/// Opens the first of `candidates` that loads, for the life of the process. Each candidate is
/// passed to the dynamic loader as it is: a path with a `/` is opened directly, a bare name is
/// searched for.
///
/// # Safety
/// Opening a library runs its initialisers (and those of the libraries it pulls in): every
/// candidate must name a library whose initialisers are sound to run in this process, such as
/// the vendor runtime the candidates are the sonames of.
///
/// # Errors
/// [`LoadError::NotFound`] when none loads, listing every candidate and the loader's message.
pub unsafe fn open(spec: &Spec, candidates: &[PathBuf]) -> Result<&'static Library, LoadError> {
    let mut failures: Vec<Failure> = Vec::new();
    for path in candidates {
        // SAFETY: the caller's contract.
        match unsafe { libloading::Library::new(path) } {
            Ok(lib) => {
                // Leaked on purpose: never closed, so resolved functions stay valid.
                return Ok(Box::leak(Box::new(Library {
                    lib,
                    path: path.clone(),
                    spec: *spec,
                })));
            }
            Err(e) => failures.push(Failure {
                path: path.clone(),
                exists: path.is_file(),
                message: with_source(&e),
            }),
        }
    }
    let failure = match failures.iter().position(|f| f.exists) {
        Some(i) => Some(failures.swap_remove(i)),
        None => failures.into_iter().next(),
    };
    Err(LoadError::NotFound {
        library: spec.library,
        tried: candidates.to_vec(),
        failure,
        fix: spec.not_found,
    })
}

impl Library {
    /// The candidate that loaded, as it was given to [`open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How messages name the library ([`Spec::library`]).
    pub fn name(&self) -> &'static str {
        self.spec.library
    }

    /// The function `symbol` (without a trailing NUL) as a typed function pointer, valid for the
    /// life of the process (the library is never closed).
    ///
    /// `F` must be a function pointer type; any other size fails to compile.
    ///
    /// # Safety
    /// `F` is the exact type of the C function the library exports as `symbol`: an
    /// `unsafe extern "C" fn` with its parameter and return types, as its header declares them.
    ///
    /// # Errors
    /// [`LoadError::MissingSymbol`] when the library has no such symbol, or exports it as a null
    /// address.
    pub unsafe fn function<F: Copy>(&'static self, symbol: &str) -> Result<F, LoadError> {
        const {
            assert!(
                std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>(),
                "Library::function: F must be a function pointer type"
            )
        };
        let missing = |reason: String| LoadError::MissingSymbol {
            library: self.spec.library,
            path: self.path.clone(),
            symbol: symbol.to_string(),
            reason,
            fix: self.spec.too_old,
        };
        // SAFETY: read as an untyped address, which is valid for any symbol; typed below.
        let address: *mut c_void = match unsafe { self.lib.get::<*mut c_void>(symbol) } {
            Ok(sym) => *sym,
            Err(e) => return Err(missing(with_source(&e))),
        };
        if address.is_null() {
            return Err(missing("the symbol's address is null".to_string()));
        }
        // SAFETY: `F` is a function pointer type of this function (the caller's contract) and
        // has the size of an address (checked above); `address` is not null, and the library
        // is never unloaded.
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&address) })
    }
}

/// Declares a struct of C functions resolved from a [`dylib::Library`](crate::dylib::Library): one
/// field per function, named as in C and typed `unsafe extern "C" fn(..) -> ..`, and
///
/// * `unsafe fn resolve(library: &'static Library) -> Result<Self, LoadError>`, which looks every
///   function up (in declaration order) and fails with [`LoadError::MissingSymbol`] on the first
///   one missing; its safety contract is that each function has exactly the declared signature;
/// * `fn library(&self) -> &'static Library`, the library it came from (for messages).
///
/// The struct is `Send + Sync` and its pointers stay valid for the life of the process. See the
/// [module docs](crate::dylib) for an example.
#[macro_export]
macro_rules! dylib_api {
    (
        $(#[$struct_meta:meta])*
        $vis:vis struct $api:ident {
            $(
                $(#[$fn_meta:meta])*
                fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;
            )*
        }
    ) => {
        $(#[$struct_meta])*
        #[allow(non_snake_case)]
        $vis struct $api {
            $(
                $(#[$fn_meta])*
                $name: unsafe extern "C" fn($($arg: $ty),*) $(-> $ret)?,
            )*
            /// The library the functions come from (never closed).
            library: &'static $crate::dylib::Library,
        }

        #[allow(dead_code)]
        impl $api {
            /// Resolves every function from `library`, in declaration order.
            ///
            /// # Safety
            /// Each symbol of `library` named like a field is a C function with exactly that
            /// field's signature.
            ///
            /// # Errors
            /// [`LoadError::MissingSymbol`]($crate::dylib::LoadError::MissingSymbol) for the first
            /// function the library lacks.
            #[allow(non_snake_case)]
            $vis unsafe fn resolve(
                library: &'static $crate::dylib::Library,
            ) -> ::core::result::Result<Self, $crate::dylib::LoadError> {
                $(
                    // SAFETY: the caller's contract: the symbol is this C function.
                    let $name = unsafe {
                        library.function::<unsafe extern "C" fn($($ty),*) $(-> $ret)?>(
                            stringify!($name),
                        )
                    }?;
                )*
                ::core::result::Result::Ok($api { $($name,)* library })
            }

            /// The library the functions come from.
            $vis fn library(&self) -> &'static $crate::dylib::Library {
                self.library
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{c_char, c_double, c_int};

    const LIBM: Spec = Spec {
        library: "libm",
        not_found: "install the C library",
        too_old: "the test needs a C99 libm",
    };

    fn names(c: &[PathBuf]) -> Vec<String> {
        c.iter().map(|p| p.display().to_string()).collect()
    }

    #[test]
    fn candidates_in_both_orders() {
        let dirs = rocm_lib_dirs(Some(OsStr::new("/opt/rocm-7.1.0")));
        assert_eq!(names(&dirs), ["/opt/rocm-7.1.0/lib", "/opt/rocm/lib"]);
        let n = ["liba.so.2", "liba.so"];
        assert_eq!(
            names(&candidates(&n, &dirs, SearchOrder::LoaderFirst)),
            [
                "liba.so.2",
                "liba.so",
                "/opt/rocm-7.1.0/lib/liba.so.2",
                "/opt/rocm-7.1.0/lib/liba.so",
                "/opt/rocm/lib/liba.so.2",
                "/opt/rocm/lib/liba.so",
            ]
        );
        assert_eq!(
            names(&candidates(&n, &dirs, SearchOrder::DirsFirst)),
            [
                "/opt/rocm-7.1.0/lib/liba.so.2",
                "/opt/rocm-7.1.0/lib/liba.so",
                "/opt/rocm/lib/liba.so.2",
                "/opt/rocm/lib/liba.so",
                "liba.so.2",
                "liba.so",
            ]
        );
        // No ROCM_PATH, an empty one, or /opt/rocm itself: /opt/rocm/lib once.
        for root in [None, Some(""), Some("/opt/rocm"), Some("/opt/rocm/")] {
            assert_eq!(
                names(&rocm_lib_dirs(root.map(OsStr::new))),
                ["/opt/rocm/lib"],
                "{root:?}"
            );
        }
        assert!(candidates(&[], &dirs, SearchOrder::DirsFirst).is_empty());
    }

    #[test]
    fn a_missing_library_lists_every_candidate() {
        let tried = [
            PathBuf::from("/nonexistent/lib/libnothing.so.3"),
            PathBuf::from("libnothing-tilelang-test.so.3"),
        ];
        // SAFETY: nothing of these names exists, so nothing is loaded.
        let e = unsafe { open(&LIBM, &tried) }.unwrap_err();
        match &e {
            LoadError::NotFound {
                library,
                tried: t,
                failure: Some(first),
                fix,
            } => {
                assert_eq!(*library, "libm");
                assert_eq!(t, &tried);
                assert_eq!(first.path, tried[0]);
                assert!(!first.exists);
                assert!(first.message.contains("No such file"), "{first:?}");
                assert_eq!(*fix, LIBM.not_found);
            }
            _ => panic!("{e:?}"),
        }
        let msg = e.to_string();
        assert!(
            msg.starts_with(
                "libm not found (tried /nonexistent/lib/libnothing.so.3, \
                 libnothing-tilelang-test.so.3; the first failed with: "
            ),
            "{msg}"
        );
        assert!(msg.ends_with("); install the C library"), "{msg}");
        // SAFETY: no candidates, nothing is loaded.
        let e = unsafe { open(&LIBM, &[]) }.unwrap_err();
        assert_eq!(
            e.to_string(),
            "libm not found (tried no candidates); install the C library"
        );
    }

    #[test]
    fn a_file_that_is_not_a_library_is_the_reported_failure() {
        // A file that exists and is no shared object: its failure is the telling one, even
        // though a missing candidate came first.
        let here =
            std::env::temp_dir().join(format!("tilelang-dylib-test-{}.so", std::process::id()));
        std::fs::write(&here, b"not an ELF object").unwrap();
        let tried = [PathBuf::from("/nonexistent/libx.so"), here.clone()];
        // SAFETY: the loader refuses both (one is missing, the other is not an ELF object).
        let e = unsafe { open(&LIBM, &tried) }.unwrap_err();
        std::fs::remove_file(&here).unwrap();
        assert!(
            matches!(&e, LoadError::NotFound { failure: Some(f), .. } if f.path == here && f.exists),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.starts_with("libm could not be loaded"), "{msg}");
        assert!(
            msg.contains(&format!("{} exists and failed with", here.display())),
            "{msg}"
        );
    }

    // A library every Linux machine with glibc has, and what it exports.
    #[cfg(target_os = "linux")]
    dylib_api! {
        /// Two functions of libm.
        struct LibM {
            /// `double cos(double x)`
            fn cos(x: c_double) -> c_double;
            /// `double ldexp(double x, int exp)`
            fn ldexp(x: c_double, exp: c_int) -> c_double;
        }
    }

    #[cfg(target_os = "linux")]
    dylib_api! {
        /// libm's `cos`, and a function no libm has (never resolved, so never called).
        #[allow(dead_code)]
        struct NotLibM {
            fn cos(x: c_double) -> c_double;
            fn tilelang_no_such_function(name: *const c_char);
        }
    }

    #[cfg(target_os = "linux")]
    fn libm() -> &'static Library {
        let tried = candidates(&["libm.so.6"], &[], SearchOrder::LoaderFirst);
        // SAFETY: libm's initialisers only set up libm (and it is loaded already, by std).
        unsafe { open(&LIBM, &tried) }.unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_real_library_resolves_and_its_functions_run() {
        let lib = libm();
        assert_eq!(lib.path(), Path::new("libm.so.6"));
        assert_eq!(lib.name(), "libm");
        assert!(format!("{lib:?}").contains("libm.so.6"));
        // SAFETY: both are libm's functions with these C signatures.
        let m = unsafe { LibM::resolve(lib) }.unwrap();
        // SAFETY: both accept every argument.
        unsafe {
            assert_eq!((m.cos)(0.0), 1.0);
            assert_eq!((m.ldexp)(3.0, 4), 48.0);
        }
        assert!(std::ptr::eq(m.library(), lib));
        // One function by hand, as `resolve` does it.
        // SAFETY: libm's `ldexp` is `double ldexp(double, int)`.
        let ldexp: unsafe extern "C" fn(c_double, c_int) -> c_double =
            unsafe { lib.function("ldexp") }.unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { ldexp(1.0, -1) }, 0.5);
        // The API structs are shareable across threads.
        fn send_sync<T: Send + Sync>(_: &T) {}
        send_sync(&m);
        send_sync(&lib);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_missing_symbol_is_named_with_the_file_and_the_fix() {
        let lib = libm();
        // SAFETY: `cos` has its signature; the other function does not exist, so it is never
        // typed or called.
        let e = unsafe { NotLibM::resolve(lib) }.err().unwrap();
        match &e {
            LoadError::MissingSymbol {
                library,
                path,
                symbol,
                reason,
                fix,
            } => {
                assert_eq!(*library, "libm");
                assert_eq!(path, Path::new("libm.so.6"));
                assert_eq!(symbol, "tilelang_no_such_function");
                assert!(reason.contains("tilelang_no_such_function"), "{reason}");
                assert_eq!(*fix, LIBM.too_old);
            }
            _ => panic!("{e:?}"),
        }
        let msg = e.to_string();
        assert!(
            msg.starts_with("libm: libm.so.6 lacks `tilelang_no_such_function` ("),
            "{msg}"
        );
        assert!(msg.ends_with("); the test needs a C99 libm"), "{msg}");
    }
}
