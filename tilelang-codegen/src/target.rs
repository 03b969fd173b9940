//! Targets are values: an architecture name with its vendor, wave size and matrix unit. Code
//! generation asks the target; nothing tests `if nvidia`.

/// How a target executes `gemm` on tensor/matrix cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixUnit {
    /// NVIDIA `mma.sync.m16n8k16` (sm_80 and newer).
    MmaSync,
    /// Hopper's warpgroup MMA, `wgmma.mma_async` from shared-memory descriptors (sm_90a only),
    /// where a gemm's tiles fit it; `mma.sync` for the others.
    Wgmma,
    /// RDNA3 WMMA 16×16×16 (gfx11).
    Wmma,
    /// RDNA4 WMMA 16×16×16, gfx12 operand form.
    Wmma12,
    /// CDNA MFMA (gfx90a, gfx942).
    Mfma,
    /// No matrix unit: `gemm` lowers to FMA loops.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub arch: &'static str,
    pub vendor: Vendor,
    /// Threads per warp (NVIDIA) or wavefront (AMD): 32 or 64.
    pub wave: u32,
    pub matrix: MatrixUnit,
    /// Shared memory (LDS) a block may use, in bytes.
    pub max_shared: usize,
}

/// The resources of one multiprocessor that bound how many blocks it keeps resident.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Multiprocessor {
    /// 32-bit registers.
    pub registers: usize,
    /// Resident threads.
    pub threads: usize,
    /// Resident blocks.
    pub blocks: usize,
    /// Shared memory, bytes (each block also costs the 1 KB the driver reserves).
    pub shared: usize,
}

/// Every target tilelang compiles for.
///
/// NVIDIA shared-memory limits are the "maximum amount of shared memory per thread block" of the
/// CUDA C++ Programming Guide's table "Technical Specifications per Compute Capability": 163 KB
/// on 8.0, 99 KB on 8.6 and 8.9, 227 KB on 9.0 (the SM's 164 / 100 / 228 KB less the 1 KB the
/// driver reserves per block). All four run the same `mma.sync` lowering: `mma.sync.m16n8k16`,
/// `ldmatrix` and `cp.async` exist from sm_80 on. `sm_90a` is sm_90 with its arch-specific
/// instructions (`wgmma`): its objects run only on compute capability 9.0, which prefers them
/// (`tilelang_rt::gpu::select_object`).
pub const TARGETS: &[Target] = &[
    Target {
        arch: "sm_80",
        vendor: Vendor::Nvidia,
        wave: 32,
        matrix: MatrixUnit::MmaSync,
        max_shared: 163 * 1024,
    },
    Target {
        arch: "sm_86",
        vendor: Vendor::Nvidia,
        wave: 32,
        matrix: MatrixUnit::MmaSync,
        max_shared: 99 * 1024,
    },
    Target {
        arch: "sm_89",
        vendor: Vendor::Nvidia,
        wave: 32,
        matrix: MatrixUnit::MmaSync,
        max_shared: 99 * 1024,
    },
    Target {
        arch: "sm_90",
        vendor: Vendor::Nvidia,
        wave: 32,
        matrix: MatrixUnit::MmaSync,
        max_shared: 227 * 1024,
    },
    Target {
        arch: "sm_90a",
        vendor: Vendor::Nvidia,
        wave: 32,
        matrix: MatrixUnit::Wgmma,
        max_shared: 227 * 1024,
    },
    Target {
        arch: "gfx1100",
        vendor: Vendor::Amd,
        wave: 32,
        matrix: MatrixUnit::Wmma,
        max_shared: 64 * 1024,
    },
    Target {
        arch: "gfx1151",
        vendor: Vendor::Amd,
        wave: 32,
        matrix: MatrixUnit::Wmma,
        max_shared: 64 * 1024,
    },
    Target {
        arch: "gfx1201",
        vendor: Vendor::Amd,
        wave: 32,
        matrix: MatrixUnit::Wmma12,
        max_shared: 64 * 1024,
    },
    Target {
        arch: "gfx90a",
        vendor: Vendor::Amd,
        wave: 64,
        matrix: MatrixUnit::Mfma,
        max_shared: 64 * 1024,
    },
    Target {
        arch: "gfx942",
        vendor: Vendor::Amd,
        wave: 64,
        matrix: MatrixUnit::Mfma,
        max_shared: 64 * 1024,
    },
    Target {
        arch: "gfx1030",
        vendor: Vendor::Amd,
        wave: 32,
        matrix: MatrixUnit::None,
        max_shared: 64 * 1024,
    },
];

impl Target {
    pub fn by_arch(arch: &str) -> Option<Target> {
        TARGETS.iter().copied().find(|t| t.arch == arch)
    }

    /// The arch names of every target, comma-separated, for messages.
    pub fn known() -> String {
        let archs: Vec<&str> = TARGETS.iter().map(|t| t.arch).collect();
        archs.join(", ")
    }
}

impl Target {
    /// 32-bit registers one thread can hold: 255 on NVIDIA (the ISA's limit), 256 VGPRs on
    /// RDNA, 512 on CDNA (256 VGPRs and 256 AGPRs). Fragments and local buffers of a config
    /// that need more than this cannot live in registers at all, so the lowering refuses them.
    pub fn registers_per_thread(&self) -> usize {
        match (self.vendor, self.wave) {
            (Vendor::Nvidia, _) => 255,
            (Vendor::Amd, 64) => 512,
            (Vendor::Amd, _) => 256,
        }
    }

    /// What one multiprocessor holds, for the occupancy a block size allows, where the lowering
    /// asks the device compiler for one: NVIDIA only (`__launch_bounds__`'s second argument).
    /// The CUDA C++ Programming Guide's "Technical Specifications per Compute Capability":
    /// 64 K registers on every target here; 2048 resident threads on 8.0 and 9.0, 1536 on 8.6
    /// and 8.9; 32 resident blocks on 8.0 and 9.0, 16 on 8.6, 24 on 8.9; shared memory per SM
    /// 164, 100, 100 and 228 KB. AMD targets answer `None`: nothing there has been measured.
    pub fn multiprocessor(&self) -> Option<Multiprocessor> {
        let (threads, blocks, shared_kb) = match self.arch {
            "sm_80" => (2048, 32, 164),
            "sm_86" => (1536, 16, 100),
            "sm_89" => (1536, 24, 100),
            "sm_90" | "sm_90a" => (2048, 32, 228),
            _ => return None,
        };
        Some(Multiprocessor {
            registers: 64 * 1024,
            threads,
            blocks,
            shared: shared_kb * 1024,
        })
    }

    /// Whether a `pipelined` loop's loads can run ahead as asynchronous copies into shared
    /// memory (`cp.async`, PTX from sm_80 on): every NVIDIA target here, none of the AMD ones.
    pub fn async_copies(&self) -> bool {
        self.vendor == Vendor::Nvidia
    }

    /// Whether loads can carry L2 eviction hints (`createpolicy` and `.L2::cache_hint`, PTX
    /// from sm_80 on): every NVIDIA target here; the AMD ones are printed without.
    pub fn l2_hints(&self) -> bool {
        self.vendor == Vendor::Nvidia
    }

    /// nvcc's arguments selecting this target: `-arch=sm_XY` for a plain target; for an
    /// arch-specific one (`sm_90a`) the `-gencode` form, since nvcc 13.0's `-arch=sm_90a`
    /// shorthand also runs a plain sm_90 pass, which rejects `wgmma`. `None` for AMD.
    pub fn nvcc_arch(&self) -> Option<String> {
        match self.vendor {
            Vendor::Amd => None,
            Vendor::Nvidia => Some(match self.arch.strip_suffix('a') {
                Some(base) => {
                    let cc = base.trim_start_matches("sm_");
                    format!("-gencode=arch=compute_{cc}a,code={}", self.arch)
                }
                None => format!("-arch={}", self.arch),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_targets_and_their_shared_memory() {
        // Bytes per block, from NVIDIA's table (163 KB, 99 KB, 99 KB, 227 KB).
        let nvidia: Vec<(&str, usize)> = TARGETS
            .iter()
            .filter(|t| t.vendor == Vendor::Nvidia)
            .map(|t| (t.arch, t.max_shared))
            .collect();
        assert_eq!(
            nvidia,
            [
                ("sm_80", 166_912),
                ("sm_86", 101_376),
                ("sm_89", 101_376),
                ("sm_90", 232_448),
                ("sm_90a", 232_448)
            ]
        );
        for t in TARGETS.iter().filter(|t| t.vendor == Vendor::Nvidia) {
            let unit = if t.arch == "sm_90a" {
                MatrixUnit::Wgmma
            } else {
                MatrixUnit::MmaSync
            };
            assert_eq!((t.wave, t.matrix), (32, unit), "{}", t.arch);
        }
    }

    #[test]
    fn nvcc_selects_arch_specific_targets_with_gencode() {
        let arch = |a: &str| Target::by_arch(a).unwrap().nvcc_arch();
        assert_eq!(arch("sm_90").as_deref(), Some("-arch=sm_90"));
        assert_eq!(
            arch("sm_90a").as_deref(),
            Some("-gencode=arch=compute_90a,code=sm_90a")
        );
        assert_eq!(arch("gfx942"), None);
    }

    #[test]
    fn every_target_can_be_named_in_defaults() {
        for t in TARGETS {
            assert!(
                crate::attr::ARCHS.contains(&t.arch),
                "`defaults = [{} = ..]` would be rejected",
                t.arch
            );
            assert_eq!(Target::by_arch(t.arch), Some(*t));
        }
        assert!(Target::known().starts_with("sm_80, sm_86, sm_89, sm_90, sm_90a, gfx1100"));
    }
}
