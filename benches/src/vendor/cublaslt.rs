//! cuBLASLt f16 GEMM (`cublasLtMatmul`) on our tensors, through cudarc's `cublaslt::result` /
//! `sys` functions with raw device pointers, queued on the device's stream.
//!
//! The algorithm is chosen once per shape (and pointer alignment) by
//! `cublasLtMatmulAlgoGetHeuristic` and cached with its descriptors: [`BlasLt::plan`] (or the
//! first [`BlasLt::gemm_f16`], which the benches' untimed check launch is) does it, so the timed
//! launches only queue `cublasLtMatmul`.

use super::common::{bind, guarded, stream_of};
use cudarc::cublaslt::{result as lt, sys};
use cudarc::driver::CudaStream;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use tilelang::{f16, Device, Tensor};

/// The workspace cuBLASLt may use (the heuristic only returns algorithms that fit in it).
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// Where the benches look for cuBLASLt, for error messages.
pub const CUBLASLT_HINT: &str = "cuBLASLt (libcublasLt.so.13) was not found: install it (the pip \
     package `nvidia-cublas`, or a CUDA toolkit) and put the directory holding libcublasLt.so* on \
     LD_LIBRARY_PATH (the bundle's run.sh does this for the pip wheel)";

/// The three column-major operands of a row-major `C[m, n] = A[m, k]·B[k, n]`, as
/// `(rows, cols, ld)` of cuBLASLt's `A`, `B` and `C`/`D` layouts.
///
/// A row-major `r×c` buffer is the column-major `c×r` matrix with leading dimension `c`, so the
/// row-major product is `Cᵀ = Bᵀ·Aᵀ` in column-major terms: cuBLASLt's `A` operand is our `B`
/// buffer (`n×k`, ld `n`), its `B` operand our `A` buffer (`k×m`, ld `k`), and `C`/`D` our `C`
/// buffer (`n×m`, ld `n`), both operands untransposed (`CUBLAS_OP_N`, the descriptor's
/// default). The same trick as [`super::Blas::gemm_f16`].
pub fn row_major_layouts(m: usize, n: usize, k: usize) -> [(u64, u64, i64); 3] {
    let (m, n, k) = (m as u64, n as u64, k as u64);
    [(n, k, n as i64), (k, m, k as i64), (n, m, n as i64)]
}

/// The largest power of two up to 256 dividing `ptr`: the alignment cuBLASLt's heuristic is
/// told (`CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES`, default 256) so that it never picks an
/// algorithm needing a stricter alignment than the buffers have.
pub fn alignment(ptr: u64) -> u32 {
    1u32 << ptr.trailing_zeros().min(8)
}

/// A cuBLASLt status as text (`cublasLtGetStatusName`), for error messages.
fn status(e: lt::CublasError) -> String {
    // SAFETY: returns a pointer to a static NUL-terminated string (or null).
    let name = unsafe { sys::cublasLtGetStatusName(e.0) };
    if name.is_null() {
        format!("{:?}", e.0)
    } else {
        // SAFETY: non-null, NUL-terminated, static (cuBLASLt's documentation).
        unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    }
}

/// Descriptors and the chosen algorithm for one shape; destroyed on drop.
struct Plan {
    desc: sys::cublasLtMatmulDesc_t,
    /// cuBLASLt's `A` (our `B`), `B` (our `A`), `C` = `D` (our `C`).
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    algo: sys::cublasLtMatmulAlgo_t,
    /// The algorithm, for the record's config string.
    description: String,
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: each descriptor was created by this plan, is destroyed once, here, and no
        // queued work reads descriptors after `cublasLtMatmul` returned (they are host objects
        // consumed at enqueue time).
        unsafe {
            for l in self.layouts {
                if !l.is_null() {
                    let _ = lt::destroy_matrix_layout(l);
                }
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
        }
    }
}

/// `(m, n, k, alignment of A, B, C)`.
type PlanKey = (usize, usize, usize, u32, u32, u32);

/// A cuBLASLt handle, a workspace on the device and the plans made so far.
pub struct BlasLt {
    handle: sys::cublasLtHandle_t,
    stream: Arc<CudaStream>,
    workspace: Tensor<u8>,
    plans: RefCell<HashMap<PlanKey, Plan>>,
    /// `cublasLtGetVersion`, e.g. 130100 for 13.1.0.
    pub version: usize,
}

impl BlasLt {
    /// Loads cuBLASLt, creates a handle and a [`WORKSPACE_BYTES`] workspace on `dev`. A clear
    /// error (never a panic) when the device is not a CUDA device or the library is missing.
    pub fn new(dev: &Device) -> Result<BlasLt, String> {
        let stream = stream_of(dev)?;
        // SAFETY: only tries to open the library under cudarc's candidate names.
        if !unsafe { sys::is_culib_present() } {
            return Err(CUBLASLT_HINT.to_string());
        }
        bind(&stream)?;
        let workspace = dev
            .alloc::<u8>(&[WORKSPACE_BYTES])
            .map_err(|e| format!("allocating the cuBLASLt workspace: {e}"))?;
        guarded("creating a cuBLASLt handle", || {
            // SAFETY: no arguments; returns a number.
            let version = unsafe { sys::cublasLtGetVersion() };
            let handle =
                lt::create_handle().map_err(|e| format!("cublasLtCreate: {}", status(e)))?;
            Ok(BlasLt {
                handle,
                stream,
                workspace,
                plans: RefCell::new(HashMap::new()),
                version,
            })
        })
    }

    /// Chooses (once per shape and alignment) and caches the algorithm for
    /// [`BlasLt::gemm_f16`] on these buffers; returns its description for the record. Host
    /// work only (descriptors and the heuristic), so call it outside the timed region.
    pub fn plan(
        &self,
        a: &Tensor<f16>,
        b: &Tensor<f16>,
        c: &Tensor<f16>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<String, String> {
        super::common::gemm_lengths("cuBLASLt gemm", a, b, c, (m, n, k))?;
        let key = (
            m,
            n,
            k,
            alignment(a.device_ptr()),
            alignment(b.device_ptr()),
            alignment(c.device_ptr()),
        );
        if let Some(p) = self.plans.borrow().get(&key) {
            return Ok(p.description.clone());
        }
        let plan = guarded("planning a cuBLASLt matmul", || self.make_plan(key))?;
        let description = plan.description.clone();
        self.plans.borrow_mut().insert(key, plan);
        Ok(description)
    }

    fn make_plan(&self, (m, n, k, align_a, align_b, align_c): PlanKey) -> Result<Plan, String> {
        for x in [m, n, k] {
            if x == 0 || i64::try_from(x).is_err() {
                return Err(format!("cuBLASLt gemm: dimension {x} out of range"));
            }
        }
        let err = |what: &str| {
            let what = what.to_string();
            move |e: lt::CublasError| format!("{what}({m}x{n}x{k}): {}", status(e))
        };
        // f32 accumulation, f32 alpha/beta (the scale type), like `cublasGemmEx` with
        // `CUBLAS_COMPUTE_32F`; transposes stay at the default `CUBLAS_OP_N`.
        let mut plan = Plan {
            desc: lt::create_matmul_desc(
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                sys::cudaDataType::CUDA_R_32F,
            )
            .map_err(err("cublasLtMatmulDescCreate"))?,
            layouts: [std::ptr::null_mut(); 3],
            algo: sys::cublasLtMatmulAlgo_t { data: [0; 8] },
            description: String::new(),
        };
        for (slot, (rows, cols, ld)) in plan.layouts.iter_mut().zip(row_major_layouts(m, n, k)) {
            *slot = lt::create_matrix_layout(sys::cudaDataType::CUDA_R_16F, rows, cols, ld)
                .map_err(err("cublasLtMatrixLayoutCreate"))?;
        }
        let pref = Pref(lt::create_matmul_pref().map_err(err("cublasLtMatmulPreferenceCreate"))?);
        let max_ws = WORKSPACE_BYTES as u64;
        use sys::cublasLtMatmulPreferenceAttributes_t as P;
        // cuBLASLt's A is our B, its B our A, C and D our C.
        let u32_attrs = [
            (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_b),
            (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_a),
            (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c),
            (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c),
        ];
        // SAFETY: `pref` is live; each buffer is a host value of the attribute's documented
        // type (uint64_t for the workspace limit, uint32_t for the alignments) and size.
        unsafe {
            lt::set_matmul_pref_attribute(
                pref.0,
                P::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&max_ws as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
            .map_err(err("cublasLtMatmulPreferenceSetAttribute"))?;
            for (attr, v) in u32_attrs {
                lt::set_matmul_pref_attribute(
                    pref.0,
                    attr,
                    (&v as *const u32).cast(),
                    std::mem::size_of::<u32>(),
                )
                .map_err(err("cublasLtMatmulPreferenceSetAttribute"))?;
            }
        }
        let [la, lb, lc] = plan.layouts;
        // SAFETY: the handle, descriptors and preference are live; the result is written by
        // the library into cudarc's local and returned by value (it checks the count and the
        // result's state).
        let heuristic = unsafe {
            lt::get_matmul_algo_heuristic(self.handle, plan.desc, la, lb, lc, lc, pref.0)
        }
        .map_err(err("cublasLtMatmulAlgoGetHeuristic"))?;
        if heuristic.workspaceSize > WORKSPACE_BYTES {
            return Err(format!(
                "cublasLtMatmulAlgoGetHeuristic({m}x{n}x{k}) chose an algorithm needing {} bytes \
                 of workspace, above the {WORKSPACE_BYTES} allowed",
                heuristic.workspaceSize
            ));
        }
        plan.algo = heuristic.algo;
        plan.description = format!(
            "cublasLtMatmul f16, f32 compute, heuristic algo {}, {} MiB workspace (uses {} B)",
            describe_algo(&plan.algo),
            WORKSPACE_BYTES >> 20,
            heuristic.workspaceSize
        );
        Ok(plan)
    }

    /// Row-major `C[m, n] = A[m, k]·B[k, n]` in f16 with f32 accumulation (`cublasLtMatmul`,
    /// `CUBLAS_COMPUTE_32F`, the heuristic's first algorithm), queued on the device's stream.
    /// Plans on first use for a shape (see [`BlasLt::plan`]).
    pub fn gemm_f16(
        &self,
        a: &Tensor<f16>,
        b: &Tensor<f16>,
        c: &mut Tensor<f16>,
        mnk: (usize, usize, usize),
    ) -> Result<(), String> {
        self.plan(a, b, c, mnk)?;
        let (m, n, k) = mnk;
        let key = (
            m,
            n,
            k,
            alignment(a.device_ptr()),
            alignment(b.device_ptr()),
            alignment(c.device_ptr()),
        );
        let plans = self.plans.borrow();
        let p = plans
            .get(&key)
            .ok_or("cuBLASLt plan missing after planning")?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let [la, lb, lc] = p.layouts;
        let d = c.device_ptr() as *mut c_void;
        guarded("cublasLtMatmul", || {
            bind(&self.stream)?;
            // SAFETY: the handle and the plan's descriptors are live; the layouts describe
            // exactly the buffers' elements (lengths checked by `plan`, pointer alignments
            // are part of the plan's key), A and B are only read, C (beta = 0, also D) is
            // borrowed mutably; alpha and beta are host f32 values (the scale type, default
            // host pointer mode) read before the call returns; the workspace is a live
            // device allocation of WORKSPACE_BYTES that only cuBLASLt work on this one
            // stream uses, so no two launches touch it at once.
            unsafe {
                lt::matmul(
                    self.handle,
                    p.desc,
                    (&alpha as *const f32).cast(),
                    (&beta as *const f32).cast(),
                    b.device_ptr() as *const c_void,
                    la,
                    a.device_ptr() as *const c_void,
                    lb,
                    d as *const c_void,
                    lc,
                    d,
                    lc,
                    &p.algo,
                    self.workspace.device_ptr() as *mut c_void,
                    WORKSPACE_BYTES,
                    self.stream.cu_stream() as sys::cudaStream_t,
                )
            }
            .map_err(|e| format!("cublasLtMatmul({m}x{n}x{k}): {}", status(e)))
        })
    }
}

impl Drop for BlasLt {
    fn drop(&mut self) {
        // The plans' descriptors first, then the handle. Work already queued keeps the
        // workspace in use: wait for it before the workspace (a field) is freed.
        self.plans.borrow_mut().clear();
        let _ = self.stream.synchronize();
        // SAFETY: the handle was created in `new` and is destroyed once, here.
        let _ = unsafe { lt::destroy_handle(self.handle) };
    }
}

/// A matmul preference, destroyed on drop.
struct Pref(sys::cublasLtMatmulPreference_t);

impl Drop for Pref {
    fn drop(&mut self) {
        // SAFETY: created by `create_matmul_pref`, destroyed once, here.
        let _ = unsafe { lt::destroy_matmul_pref(self.0) };
    }
}

/// `id 21 tile 18 stages 12 splitK 1`, from `cublasLtMatmulAlgoConfigGetAttribute` (the
/// numbers are cuBLASLt's enum values); `?` for an attribute it does not answer.
fn describe_algo(algo: &sys::cublasLtMatmulAlgo_t) -> String {
    use sys::cublasLtMatmulAlgoConfigAttributes_t as A;
    let get = |attr: A, size: usize| -> String {
        let mut v: u64 = 0;
        let mut written = 0usize;
        // SAFETY: `algo` is an initialised algorithm from the heuristic; the buffer is 8
        // bytes and we pass `size` ≤ 8 (the attribute's documented width: int32 or uint32
        // for these); `written` receives the size.
        let st = unsafe {
            sys::cublasLtMatmulAlgoConfigGetAttribute(
                algo,
                attr,
                (&mut v as *mut u64).cast(),
                size,
                &mut written,
            )
        };
        if st == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS && written == size {
            // Little-endian: the low `size` bytes hold the value.
            (v & ((1u64 << (8 * size)) - 1)).to_string()
        } else {
            "?".into()
        }
    };
    format!(
        "id {} tile {} stages {} splitK {}",
        get(A::CUBLASLT_ALGO_CONFIG_ID, 4),
        get(A::CUBLASLT_ALGO_CONFIG_TILE_ID, 4),
        get(A::CUBLASLT_ALGO_CONFIG_STAGES_ID, 4),
        get(A::CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_the_transposed_product() {
        let (m, n, k) = (3, 5, 7);
        let [a, b, c] = row_major_layouts(m, n, k);
        // Column-major C (n×m) = A (n×k) · B (k×m), all untransposed.
        assert_eq!((a.0, c.0), (n as u64, n as u64));
        assert_eq!((a.1, b.0), (k as u64, k as u64));
        assert_eq!((b.1, c.1), (m as u64, m as u64));
        // Packed row-major buffers: ld = the row length of our matrices.
        assert_eq!((a.2, b.2, c.2), (n as i64, k as i64, n as i64));
        // Element (i, j) of our row-major C is element (j, i) of the column-major n×m one,
        // at j + i·ld = i·n + j.
        let (i, j) = (2u64, 4u64);
        assert_eq!(j + i * c.2 as u64, i * n as u64 + j);
    }

    #[test]
    fn alignments() {
        assert_eq!(alignment(0), 256);
        assert_eq!(alignment(0x7f00_0000_0200), 256);
        assert_eq!(alignment(0x7f00_0000_0080), 128);
        assert_eq!(alignment(0x7f00_0000_0002), 2);
        assert_eq!(alignment(1), 1);
    }

    #[test]
    fn not_on_the_cpu() {
        let e = BlasLt::new(&Device::cpu())
            .err()
            .expect("no cuBLASLt on the CPU");
        assert!(e.contains("not a CUDA device"), "{e}");
    }
}
