//! Targets are values: an architecture name with its vendor, wave size and matrix unit. Code
//! generation asks the target; nothing tests `if nvidia`.

/// How a target executes `gemm` on tensor/matrix cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixUnit {
    /// NVIDIA `mma.sync.m16n8k16` (sm_80 and newer).
    MmaSync,
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

pub const TARGETS: &[Target] = &[
    Target {
        arch: "sm_90",
        vendor: Vendor::Nvidia,
        wave: 32,
        matrix: MatrixUnit::MmaSync,
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
}
