//! GPU objects and raw launches, used by the launchers `#[tile_kernel]` generates.
//!
//! The build compiles each kernel once per (config, target arch) into an [`Object`]; the
//! launcher passes all of a kernel's objects to [`Device::launch_gpu`], which picks the one for
//! the device's arch and the chosen config ([`select_object`]), loads it once per device, and
//! queues it on the device's stream.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::gpu_device::GpuDevice;

pub use crate::arch::{compatible_cubin_arch, sm_version};
pub use crate::object::{KernelArg, Object};

/// Picks the object for `arch` and `config`.
///
/// On NVIDIA, an arch-specific object of the device's own compute capability comes first
/// (`sm_90a` on an `sm_90` device: the same kernel with Hopper's `wgmma`; such objects run on
/// that capability only). Then objects compiled for `arch` itself. Failing those, on NVIDIA, the objects of the
/// highest compiled `sm_XY` of the device's major version `X` whose minor `Y` is at most the
/// device's ([`compatible_cubin_arch`]): NVIDIA guarantees that a cubin runs there. Nothing else
/// falls back: `sm_90` does not take `sm_80` or `sm_90a` objects, nor `gfx1101` `gfx1100`'s.
///
/// No usable object at all is [`Error::ArchNotCompiled`], naming the archs that were compiled;
/// objects for the chosen arch but none for `config` is [`Error::ConfigNotCompiled`] when other
/// archs have it (the build left it out here: over this target's limits), else
/// [`Error::UnknownConfig`]; both list the configs compiled for that arch.
pub fn select_object<'a>(
    kernel: &'static str,
    objects: &'a [Object],
    arch: &str,
    config: &str,
) -> Result<&'a Object> {
    if sm_version(arch).is_some() {
        let specific = format!("{arch}a");
        if let Some(o) = objects
            .iter()
            .find(|o| o.arch == specific && o.config == config)
        {
            return Ok(o);
        }
    }
    let chosen = if objects.iter().any(|o| o.arch == arch) {
        arch
    } else if let Some(a) = compatible_cubin_arch(objects.iter().map(|o| o.arch), arch) {
        a
    } else {
        let mut compiled: Vec<&'static str> = Vec::new();
        for o in objects {
            if !compiled.contains(&o.arch) {
                compiled.push(o.arch);
            }
        }
        return Err(Error::ArchNotCompiled {
            kernel,
            arch: arch.to_string(),
            compiled,
        });
    };
    let available = || {
        objects
            .iter()
            .filter(|o| o.arch == chosen)
            .map(|o| o.config)
            .collect()
    };
    match objects
        .iter()
        .find(|o| o.arch == chosen && o.config == config)
    {
        Some(o) => Ok(o),
        // Compiled for other archs: the build left it out for this one (over its limits).
        None if objects.iter().any(|o| o.config == config) => Err(Error::ConfigNotCompiled {
            kernel,
            config: config.to_string(),
            arch: chosen.to_string(),
            compiled: available(),
        }),
        None => Err(Error::UnknownConfig {
            kernel,
            config: config.to_string(),
            available: available(),
        }),
    }
}

/// The launch grid as the driver takes it; `None` for an empty grid (nothing to launch).
///
/// CUDA allows `x < 2^31` and `y, z < 2^16` blocks. HIP allows as many (`y` and `z` even one
/// more: ROCm/clr `hipModuleLaunchKernel`), and also counts work-items in 32 bits: the grid's
/// `x * threads` must be below `2^32` (its documentation: no launch with `gridDim x blockDim`
/// of `2^32` or more in a dimension), which `hip_threads` (the block size) checks when given.
fn launch_grid(
    kernel: &'static str,
    grid: [i64; 3],
    hip_threads: Option<u32>,
) -> Result<Option<[u32; 3]>> {
    let limits = [i32::MAX as i64, u16::MAX as i64, u16::MAX as i64];
    let too_many_items =
        hip_threads.is_some_and(|t| grid[0].saturating_mul(i64::from(t)) > i64::from(u32::MAX));
    if too_many_items
        || grid
            .iter()
            .zip(limits)
            .any(|(&g, max)| !(0..=max).contains(&g))
    {
        return Err(Error::BadGrid {
            kernel,
            grid: grid.to_vec(),
        });
    }
    if grid.contains(&0) {
        return Ok(None);
    }
    Ok(Some(grid.map(|g| g as u32)))
}

impl Device {
    /// Queues one kernel on the device's stream: the object of `objects` for this device's arch
    /// and `config` ([`select_object`]), `grid` blocks of `threads x 1 x 1` threads, the
    /// object's dynamic shared memory, and `args` in order. Returns once the launch is queued;
    /// a grid with a zero dimension launches nothing. The object's image is loaded on first use
    /// and kept for the life of the device.
    ///
    /// # Errors
    /// [`Error::NotAGpu`] on the CPU; [`Error::ArchNotCompiled`] or [`Error::UnknownConfig`]
    /// when `objects` has none for the arch or config; [`Error::BadGrid`] for a grid out of
    /// range; when the object is first loaded, [`Error::BadObject`] for a malformed one and
    /// [`Error::ResourceLimit`] when it needs more threads or shared memory per block than the
    /// device and kernel allow; [`Error::Driver`] (naming the kernel) when the driver refuses to
    /// load, launch or record it. A failure *inside* the kernel shows at the next synchronizing
    /// call.
    ///
    /// # Safety
    /// The kernel runs with whatever `args` say. They must match the entry's parameter list in
    /// number, order and type; every `Ptr` must be an address of this device's memory, valid
    /// (allocated, not freed before the kernel finishes) for every access the kernel makes with
    /// these arguments and this grid, and memory a kernel writes must not be accessed by anything
    /// else until it finishes. `objects` must hold images built for these kernels. The safe
    /// launchers `#[tile_kernel]` generates check shapes, devices and aliasing before calling this.
    pub unsafe fn launch_gpu(
        &self,
        kernel: &'static str,
        config: &str,
        objects: &'static [Object],
        grid: [i64; 3],
        args: &[KernelArg],
    ) -> Result<()> {
        let Some(gpu) = self.gpu() else {
            return Err(Error::NotAGpu {
                what: format!("{kernel}: `Device::launch_gpu`"),
            });
        };
        let object = select_object(kernel, objects, self.arch(), config)?;
        // The TMA entry when every map's tensor qualifies: its maps follow the arguments.
        let tma = match (object.tma, gpu) {
            (Some(tma), GpuDevice::Cuda(cuda)) if crate::tma::enabled() => cuda
                .tma_args(kernel, tma.maps, args)?
                .map(|with_maps| (tma, with_maps)),
            _ => None,
        };
        let (object, args, persistent) = match &tma {
            Some((tma, with_maps)) => (&tma.object, with_maps.as_slice(), tma.persistent),
            None => (object, args, false),
        };
        let hip_threads = matches!(gpu, GpuDevice::Hip(_)).then_some(object.threads);
        let Some(mut grid) = launch_grid(kernel, grid, hip_threads)? else {
            return Ok(());
        };
        if persistent {
            let resident = match crate::tma::persistent_blocks() {
                Some(n) => n,
                None => gpu.resident(kernel, object)?,
            };
            grid = crate::tma::persistent_grid(grid, resident);
        }
        // SAFETY: the caller's contract.
        unsafe { gpu.launch(kernel, object, grid, args) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn obj(arch: &'static str, config: &'static str) -> Object {
        Object {
            arch,
            config,
            entry: "k",
            threads: 128,
            shared_bytes: 0,
            image: b"\x7fELF",
            tma: None,
        }
    }

    static OBJECTS: [Object; 4] = [
        obj("sm_80", "small"),
        obj("sm_90", "small"),
        obj("sm_90", "big"),
        obj("sm_80", "big"),
    ];

    #[test]
    fn selects_by_arch_and_config() {
        let o = select_object("k", &OBJECTS, "sm_90", "big").unwrap();
        assert_eq!((o.arch, o.config), ("sm_90", "big"));
        let o = select_object("k", &OBJECTS, "sm_80", "small").unwrap();
        assert_eq!((o.arch, o.config), ("sm_80", "small"));
    }

    #[test]
    fn an_sm_90_device_prefers_the_arch_specific_sm_90a_objects() {
        static NV: [Object; 4] = [
            obj("sm_90", "small"),
            obj("sm_90", "big"),
            obj("sm_90a", "big"),
            obj("sm_80", "big"),
        ];
        let o = select_object("k", &NV, "sm_90", "big").unwrap();
        assert_eq!((o.arch, o.config), ("sm_90a", "big"));
        // A config only the plain target has runs from there.
        let o = select_object("k", &NV, "sm_90", "small").unwrap();
        assert_eq!((o.arch, o.config), ("sm_90", "small"));
        // sm_90a objects run on compute capability 9.0 only: not on sm_80, nor as a fallback.
        let o = select_object("k", &NV, "sm_80", "big").unwrap();
        assert_eq!(o.arch, "sm_80");
        let e = select_object("k", &NV[2..3], "sm_89", "big").unwrap_err();
        assert!(matches!(&e, Error::ArchNotCompiled { .. }), "{e}");
        // Only sm_90a compiled: an sm_90 device runs it.
        let o = select_object("k", &NV[2..3], "sm_90", "big").unwrap();
        assert_eq!(o.arch, "sm_90a");
    }

    #[test]
    fn exact_arch_first_then_a_compatible_cubin() {
        static NV: [Object; 5] = [
            obj("sm_80", "small"),
            obj("sm_80", "big"),
            obj("sm_86", "small"),
            obj("sm_86", "big"),
            obj("sm_90", "small"),
        ];
        // Exact matches win even where an older minor is compiled.
        let o = select_object("k", &NV, "sm_86", "big").unwrap();
        assert_eq!((o.arch, o.config), ("sm_86", "big"));
        // An sm_89 device (none compiled) runs the sm_86 cubins, not the sm_80 ones.
        let o = select_object("k", &NV, "sm_89", "big").unwrap();
        assert_eq!((o.arch, o.config), ("sm_86", "big"));
        // The config must exist for the arch chosen.
        let e = select_object("k", &NV[..4], "sm_89", "huge").unwrap_err();
        assert!(
            matches!(&e, Error::UnknownConfig { available, .. } if available == &["small", "big"]),
            "{e}"
        );
        // No compatible cubin: ArchNotCompiled, as before.
        let e = select_object("k", &NV, "sm_87", "small").unwrap_err();
        assert!(
            matches!(&e, Error::ArchNotCompiled { arch, compiled, .. } if arch == "sm_87" && compiled == &["sm_80", "sm_86", "sm_90"]),
            "{e}"
        );
        let e = select_object("k", &NV[..4], "sm_90", "small").unwrap_err();
        assert!(matches!(&e, Error::ArchNotCompiled { .. }), "{e}");
    }

    #[test]
    fn arch_not_compiled_names_the_compiled_archs() {
        let e = select_object("gemm", &OBJECTS, "sm_90a", "big").unwrap_err();
        assert_eq!(
            e,
            Error::ArchNotCompiled {
                kernel: "gemm",
                arch: "sm_90a".into(),
                compiled: vec!["sm_80", "sm_90"],
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("`sm_90a`"), "{msg}");
        assert!(msg.contains("compiled: sm_80, sm_90"), "{msg}");
        assert!(msg.contains("TILELANG_TARGETS"), "{msg}");
        assert!(msg.contains("nvcc"), "{msg}");
        assert!(!msg.contains("also runs"), "{msg}");
        // A desktop GPU of a later minor: earlier minors of its major would serve.
        let e = select_object("gemm", &OBJECTS[1..3], "sm_86", "big").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("compiled: sm_90"), "{msg}");
        assert!(
            msg.contains("a target sm_8y with y < 6 also runs on this GPU"),
            "{msg}"
        );
        // Not on Tegra (sm_87), nor where the minor is 0.
        for arch in ["sm_87", "sm_80"] {
            let msg = select_object("gemm", &OBJECTS[1..3], arch, "big")
                .unwrap_err()
                .to_string();
            assert!(!msg.contains("also runs"), "{msg}");
        }
    }

    #[test]
    fn no_objects_at_all() {
        let e = select_object("gemm", &[], "sm_90", "big").unwrap_err();
        assert!(matches!(&e, Error::ArchNotCompiled { compiled, .. } if compiled.is_empty()));
        let msg = e.to_string();
        assert!(msg.contains("compiled no GPU objects"), "{msg}");
        assert!(
            msg.contains("TILELANG_TARGETS") && msg.contains("nvcc"),
            "{msg}"
        );
    }

    #[test]
    fn config_missing_for_the_arch() {
        let objects = [obj("sm_90", "small"), obj("sm_80", "big")];
        let e = select_object("gemm", &objects, "sm_90", "big").unwrap_err();
        assert_eq!(
            e,
            Error::ConfigNotCompiled {
                kernel: "gemm",
                config: "big".into(),
                arch: "sm_90".into(),
                compiled: vec!["small"],
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("not compiled for `sm_90`"), "{msg}");
        assert!(msg.contains("limits") && msg.contains("`small`"), "{msg}");
        // A name no arch has is unknown.
        let e = select_object("gemm", &objects, "sm_90", "huge").unwrap_err();
        assert!(matches!(&e, Error::UnknownConfig { .. }), "{e}");
    }

    #[test]
    fn the_default_is_the_first_config_compiled_for_the_arch() {
        // `big` is over gfx1100's limits: the build left it out there.
        static OBJ: [Object; 3] = [
            obj("sm_90", "big"),
            obj("sm_90", "small"),
            obj("gfx1100", "small"),
        ];
        fn no_launch(_: &Device, _: &str, _: Vec<crate::dynamic::Arg<'_>>) -> Result<()> {
            unreachable!()
        }
        let mut k = crate::kernel_info::KernelInfo {
            name: "k",
            configs: &[],
            config_names: &["big", "small"],
            defaults: &[],
            symbols: &[],
            objects: &OBJ,
            launch_dyn: no_launch,
        };
        assert_eq!(k.default_config("sm_90"), "big");
        assert_eq!(k.default_config("gfx1100"), "small");
        // No object serves the CPU, nor an arch not compiled: the first config.
        assert_eq!(k.default_config("cpu"), "big");
        assert_eq!(k.default_config("gfx942"), "big");
        assert!(k.compiled_for("sm_90", "big") && !k.compiled_for("gfx1100", "big"));
        assert!(k.compiled_for("gfx1100", "small") && k.compiled_for("cpu", "big"));
        // `defaults` wins (the macro refuses an entry naming a config left out there).
        k.defaults = &[("sm_90", "small")];
        assert_eq!(k.default_config("sm_90"), "small");
    }

    #[test]
    fn grid_limits() {
        let cuda_grid = |grid| launch_grid("k", grid, None);
        assert_eq!(cuda_grid([4, 2, 1]).unwrap(), Some([4, 2, 1]));
        assert_eq!(cuda_grid([0, 2, 1]).unwrap(), None);
        assert_eq!(
            cuda_grid([i32::MAX as i64, 65535, 65535]).unwrap(),
            Some([i32::MAX as u32, 65535, 65535])
        );
        assert!(matches!(cuda_grid([-1, 1, 1]), Err(Error::BadGrid { .. })));
        assert!(matches!(
            cuda_grid([1, 65536, 1]),
            Err(Error::BadGrid { .. })
        ));
        assert!(matches!(
            cuda_grid([1, 1, 1 << 40]),
            Err(Error::BadGrid { .. })
        ));
    }

    #[test]
    fn hip_grids_count_work_items_in_32_bits() {
        let most = i64::from(u32::MAX) / 256;
        assert_eq!(
            launch_grid("k", [most, 65535, 1], Some(256)).unwrap(),
            Some([most as u32, 65535, 1])
        );
        assert!(matches!(
            launch_grid("k", [most + 1, 1, 1], Some(256)),
            Err(Error::BadGrid { .. })
        ));
        // The CUDA limits still hold, and an empty grid is still nothing to launch.
        assert!(launch_grid("k", [i32::MAX as i64, 1, 1], Some(1)).is_ok());
        assert!(launch_grid("k", [1, 65536, 1], Some(1)).is_err());
        assert!(launch_grid("k", [-1, 1, 1], Some(1)).is_err());
        assert_eq!(launch_grid("k", [0, 1, 1], Some(1 << 20)).unwrap(), None);
    }

    static AMD: [Object; 5] = [
        obj("gfx90a", "small"),
        obj("gfx942", "small"),
        obj("gfx1100", "small"),
        obj("gfx1100", "big"),
        obj("sm_90", "small"),
    ];

    #[test]
    fn selects_gfx_objects_by_bare_arch() {
        // The device's arch is the bare target of what the runtime reports.
        for (reported, arch) in [
            ("gfx90a:sramecc+:xnack-", "gfx90a"),
            ("gfx942:sramecc+:xnack-", "gfx942"),
            ("gfx1100", "gfx1100"),
        ] {
            let bare = crate::hip::bare_arch(reported).unwrap();
            assert_eq!(bare, arch);
            let o = select_object("k", &AMD, bare, "small").unwrap();
            assert_eq!((o.arch, o.config), (arch, "small"));
        }
        let o = select_object("k", &AMD, "gfx1100", "big").unwrap();
        assert_eq!((o.arch, o.config), ("gfx1100", "big"));
        // Only exact archs match: gfx1101 does not run gfx1100 objects here, nor gfx90a
        // gfx942's.
        let e = select_object("gemm", &AMD, "gfx1101", "small").unwrap_err();
        assert_eq!(
            e,
            Error::ArchNotCompiled {
                kernel: "gemm",
                arch: "gfx1101".into(),
                compiled: vec!["gfx90a", "gfx942", "gfx1100", "sm_90"],
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("`gfx1101` in TILELANG_TARGETS"), "{msg}");
        assert!(msg.contains("hipcc") && !msg.contains("nvcc"), "{msg}");
        let e = select_object("gemm", &AMD, "gfx90a", "big").unwrap_err();
        assert!(
            matches!(&e, Error::ConfigNotCompiled { compiled, .. } if compiled == &["small"]),
            "{e}"
        );
    }

    #[test]
    fn launch_gpu_on_the_cpu_is_an_error() {
        static ONE: [Object; 1] = [obj("cpu", "small")];
        // SAFETY: refused before anything runs.
        let e = unsafe {
            Device::cpu().launch_gpu("k", "small", &ONE, [1, 1, 1], &[KernelArg::I32(1)])
        }
        .unwrap_err();
        assert_eq!(
            e,
            Error::NotAGpu {
                what: "k: `Device::launch_gpu`".into()
            }
        );
        assert!(e.to_string().contains("is the CPU"), "{e}");
    }
}
