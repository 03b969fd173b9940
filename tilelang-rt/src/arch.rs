//! NVIDIA arch names as values: the compute capability an `sm_XY` name stands for, and which
//! compiled cubins a device of another minor runs (NVIDIA's binary compatibility). A leaf: the
//! object selection ([`crate::gpu`]) and the errors that name the fix ([`crate::Error`]) read it.

/// The compute capability `(major, minor)` of an NVIDIA arch name as the CUDA backend reports
/// it (`sm_{major}{minor}`: `sm_86` is 8.6, `sm_120` is 12.0). `None` for anything else,
/// including arch-specific names such as `sm_90a`.
pub fn sm_version(arch: &str) -> Option<(u32, u32)> {
    let digits = arch.strip_prefix("sm_")?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Compute capabilities of NVIDIA's Tegra (Jetson, DRIVE) GPUs: 5.3, 6.2, 7.2, 8.7, 10.1, 11.0.
const TEGRA: &[&str] = &["sm_53", "sm_62", "sm_72", "sm_87", "sm_101", "sm_110"];

/// Whether `arch` is a Tegra GPU's, where cubins of other minors do not run.
pub(crate) fn is_tegra(arch: &str) -> bool {
    TEGRA.contains(&arch)
}

/// Among `compiled` archs, the one whose cubins run on a device of arch `device` that has no
/// objects of its own: the highest `sm_XY` with the device's major `X` and `Y` at most the
/// device's minor. `None` when there is none, for non-NVIDIA archs and for Tegra devices.
///
/// NVIDIA's rule, CUDA C++ Programming Guide, "Binary Compatibility"
/// (<https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility>):
/// "Binary compatibility is guaranteed from one minor revision to the next one, but not from one
/// minor revision to the previous one or across major revisions. In other words, a cubin object
/// generated for compute capability X.y will only execute on devices of compute capability X.z
/// where z≥y." The same section: binary compatibility "is supported only for the desktop. It is
/// not supported for Tegra", hence no fallback on a Tegra device (such as 8.7, Jetson Orin).
/// Arch-specific `sm_XYa` cubins (the `-gencode=arch=compute_XYa,code=sm_XYa` form) run on
/// capability X.Y alone; the rule does not cover them and [`sm_version`] does not parse them,
/// so they are never a fallback here ([`select_object`](crate::gpu::select_object) takes them
/// on their own capability).
///
/// A fallback object may ask for more shared memory than the device has (sm_80 allows 163 KB
/// per block, sm_86 99 KB): loading it then fails with the driver's error naming the kernel,
/// config and the object's arch, never silently.
pub fn compatible_cubin_arch<'a>(
    compiled: impl IntoIterator<Item = &'a str>,
    device: &str,
) -> Option<&'a str> {
    let (major, minor) = sm_version(device)?;
    if is_tegra(device) {
        return None;
    }
    compiled
        .into_iter()
        .filter(|a| !is_tegra(a))
        .filter_map(|a| Some((sm_version(a)?, a)))
        .filter(|&((ma, mi), _)| ma == major && mi <= minor)
        .max_by_key(|&(v, _)| v)
        .map(|(_, a)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nvidia_arch_names() {
        assert_eq!(sm_version("sm_80"), Some((8, 0)));
        assert_eq!(sm_version("sm_86"), Some((8, 6)));
        assert_eq!(sm_version("sm_120"), Some((12, 0)));
        for not in ["sm_90a", "sm_9", "sm_", "gfx1100", "cpu", "sm_8x"] {
            assert_eq!(sm_version(not), None, "{not}");
        }
    }

    #[test]
    fn cubins_run_on_later_minors_of_their_major() {
        let all = ["sm_80", "sm_86", "sm_89", "sm_90"];
        let pick = |compiled: &[&'static str], device| {
            compatible_cubin_arch(compiled.iter().copied(), device)
        };
        // The highest minor not above the device's.
        assert_eq!(
            pick(&all, "sm_87"),
            None,
            "Tegra (Jetson Orin): no binary compatibility"
        );
        assert_eq!(pick(&["sm_80"], "sm_86"), Some("sm_80"));
        assert_eq!(pick(&["sm_80", "sm_86"], "sm_89"), Some("sm_86"));
        assert_eq!(
            pick(&["sm_86", "sm_80"], "sm_89"),
            Some("sm_86"),
            "order does not matter"
        );
        assert_eq!(pick(&all, "sm_88"), Some("sm_86"));
        // Never a later minor, never another major, never for other vendors.
        assert_eq!(pick(&["sm_86", "sm_89"], "sm_80"), None);
        assert_eq!(pick(&["sm_80", "sm_86", "sm_89"], "sm_90"), None);
        assert_eq!(pick(&["sm_90"], "sm_100"), None);
        assert_eq!(pick(&["sm_90"], "sm_120"), None);
        assert_eq!(pick(&["gfx1100"], "gfx1101"), None);
        assert_eq!(pick(&["sm_90a"], "sm_90"), None);
    }
}
