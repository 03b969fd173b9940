//! The contracts between the build script (`tilelang-build`), which compiles the device objects,
//! and the macro (`launcher`), which embeds and launches them: where an object lies, how the
//! build tells the macro what it compiled, and the name of an object's second entry. Written
//! once, here; both sides use these. A leaf.

/// The environment variable through which the build script tells the macro which targets it
/// compiled (`cargo:rustc-env`), as [`built_value`] writes it.
pub const BUILT_ENV: &str = "TILELANG_BUILT";

/// The value of [`BUILT_ENV`]: the package, then the targets it compiled,
/// `<package>;<arch>,<arch>..`.
pub fn built_value(package: &str, archs: &[String]) -> String {
    format!("{package};{}", archs.join(","))
}

/// The targets in a [`built_value`], if it is `package`'s (a stray variable in the environment
/// names another package, or none).
pub fn built_archs<'v>(value: &'v str, package: &str) -> Option<Vec<&'v str>> {
    let (p, archs) = value.split_once(';')?;
    (p == package).then(|| archs.split(',').filter(|a| !a.is_empty()).collect())
}

/// The folder of `OUT_DIR` that holds a crate's objects.
pub const OBJECT_DIR: &str = "tilelang";

/// The file name of an object: `<entry>.<arch>.bin`.
pub fn object_name(entry: &str, arch: &str) -> String {
    format!("{entry}.{arch}.bin")
}

/// The suffix of an object's second entry, whose pipelined loads run on TMA: `<entry>__tma`.
pub const TMA_SUFFIX: &str = "__tma";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_value_reads_back_for_its_package_only() {
        let v = built_value("kernels", &["sm_90".into(), "gfx942".into()]);
        assert_eq!(v, "kernels;sm_90,gfx942");
        assert_eq!(built_archs(&v, "kernels"), Some(vec!["sm_90", "gfx942"]));
        assert_eq!(built_archs(&v, "examples"), None);
        assert_eq!(built_archs("kernels;", "kernels"), Some(vec![]));
        assert_eq!(built_archs("garbage", "kernels"), None);
    }
}
