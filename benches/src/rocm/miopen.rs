//! The MIOpen softmax and 1-D convolution baselines.

use super::hip::{bind, check_device, hip_api, hip_ordinal, to_i32, HipApi, HipStream};
use super::load::{c_str, library_candidates, load_api, rocm_path, MIOPEN, MIOPEN_NAMES};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;
use std::sync::OnceLock;
use tilelang::__private::dylib_api;
use tilelang::{f16, Device, Tensor};

/// MIOpen values, from `include/miopen/miopen.h` (ROCm/MIOpen at 2d1fd99, MIOpen 3.3 / ROCm 6.3;
/// identical in ROCm/rocm-libraries `projects/miopen`, ROCm 7). C enums are passed as `int`.
mod mi {
    use std::ffi::c_int;
    /// `miopenStatusSuccess = 0` (`miopenStatus_t`).
    pub const STATUS_SUCCESS: c_int = 0;
    /// `miopenHalf = 0` (`miopenDataType_t`).
    pub const HALF: c_int = 0;
    /// `miopenFloat = 1` (`miopenDataType_t`).
    pub const FLOAT: c_int = 1;
    /// `miopenTensorNCHW = 0` (`miopenTensorLayout_t`).
    pub const TENSOR_NCHW: c_int = 0;
    /// `miopenTensorNHWC = 1` (`miopenTensorLayout_t`).
    pub const TENSOR_NHWC: c_int = 1;
    /// `miopenConvolution = 0`, "Cross-Correlation convolution" (`miopenConvolutionMode_t`).
    pub const CONVOLUTION: c_int = 0;
    /// `MIOPEN_SOFTMAX_ACCURATE = 1`, "scaled softmax by maximum value in input domain"
    /// (`miopenSoftmaxAlgorithm_t`).
    pub const SOFTMAX_ACCURATE: c_int = 1;
    /// `MIOPEN_SOFTMAX_MODE_INSTANCE = 0`, "compute per image (N) across C, H, W"
    /// (`miopenSoftmaxMode_t`).
    pub const SOFTMAX_MODE_INSTANCE: c_int = 0;
}

/// `miopenConvAlgoPerf_t` (miopen.h): a union of three C enums (`fwd_algo`, `bwd_weights_algo`,
/// `bwd_data_algo`, each `int`-sized), `float time`, `size_t memory`; 16 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ConvAlgoPerf {
    /// `miopenConvFwdAlgorithm_t fwd_algo` (the union's forward member).
    pub(super) fwd_algo: c_int,
    pub(super) time: f32,
    pub(super) memory: usize,
}
const _: () =
    assert!(std::mem::size_of::<ConvAlgoPerf>() == 16 || cfg!(not(target_pointer_width = "64")));

/// `miopenConvFwdAlgorithm_t` names (miopen.h), for the record's config string.
pub(super) fn fwd_algo_name(algo: c_int) -> &'static str {
    match algo {
        0 => "GEMM",
        1 => "Direct",
        2 => "FFT",
        3 => "Winograd",
        5 => "ImplicitGEMM",
        _ => "unknown",
    }
}

/// `miopenHandle_t`, `miopenTensorDescriptor_t`, `miopenConvolutionDescriptor_t`: pointers to
/// opaque structs (`MIOPEN_DECLARE_OBJECT`).
type MiHandle = *mut c_void;
type MiTensorDesc = *mut c_void;
type MiConvDesc = *mut c_void;

dylib_api! {
    /// MIOpen functions, `include/miopen/miopen.h` (HIP backend: `miopenAcceleratorQueue_t` is
    /// `hipStream_t`).
    pub(super) struct MiOpenApi {
        /// `const char* miopenGetErrorString(miopenStatus_t error)`
        fn miopenGetErrorString(status: c_int) -> *const c_char;
        /// `miopenStatus_t miopenGetVersion(size_t* major, size_t* minor, size_t* patch)`
        fn miopenGetVersion(major: *mut usize, minor: *mut usize, patch: *mut usize) -> c_int;
        /// `miopenStatus_t miopenCreateWithStream(miopenHandle_t* handle,
        /// miopenAcceleratorQueue_t stream)`
        fn miopenCreateWithStream(handle: *mut MiHandle, stream: HipStream) -> c_int;
        /// `miopenStatus_t miopenDestroy(miopenHandle_t handle)`
        fn miopenDestroy(handle: MiHandle) -> c_int;
        /// `miopenStatus_t miopenCreateTensorDescriptor(miopenTensorDescriptor_t* tensorDesc)`
        fn miopenCreateTensorDescriptor(desc: *mut MiTensorDesc) -> c_int;
        /// `miopenStatus_t miopenDestroyTensorDescriptor(miopenTensorDescriptor_t tensorDesc)`
        fn miopenDestroyTensorDescriptor(desc: MiTensorDesc) -> c_int;
        /// `miopenStatus_t miopenSetNdTensorDescriptorWithLayout(miopenTensorDescriptor_t
        /// tensorDesc, miopenDataType_t dataType, miopenTensorLayout_t tensorLayout,
        /// const int* lens, int num_lens)`; `lens` in NCHW order whatever the layout (MIOpen
        /// `src/tensor.cpp`: strides are derived from the layout).
        fn miopenSetNdTensorDescriptorWithLayout(
            desc: MiTensorDesc,
            data_type: c_int,
            layout: c_int,
            lens: *const c_int,
            num_lens: c_int,
        ) -> c_int;
        /// `miopenStatus_t miopenCreateConvolutionDescriptor(miopenConvolutionDescriptor_t*
        /// convDesc)`
        fn miopenCreateConvolutionDescriptor(desc: *mut MiConvDesc) -> c_int;
        /// `miopenStatus_t miopenDestroyConvolutionDescriptor(miopenConvolutionDescriptor_t
        /// convDesc)`
        fn miopenDestroyConvolutionDescriptor(desc: MiConvDesc) -> c_int;
        /// `miopenStatus_t miopenInitConvolutionDescriptor(miopenConvolutionDescriptor_t
        /// convDesc, miopenConvolutionMode_t c_mode, int pad_h, int pad_w, int stride_h,
        /// int stride_w, int dilation_h, int dilation_w)`
        fn miopenInitConvolutionDescriptor(
            desc: MiConvDesc,
            mode: c_int,
            pad_h: c_int,
            pad_w: c_int,
            stride_h: c_int,
            stride_w: c_int,
            dilation_h: c_int,
            dilation_w: c_int,
        ) -> c_int;
        /// `miopenStatus_t miopenGetConvolutionForwardOutputDim(miopenConvolutionDescriptor_t
        /// convDesc, const miopenTensorDescriptor_t inputTensorDesc,
        /// const miopenTensorDescriptor_t filterDesc, int* n, int* c, int* h, int* w)`
        fn miopenGetConvolutionForwardOutputDim(
            conv: MiConvDesc,
            x_desc: MiTensorDesc,
            w_desc: MiTensorDesc,
            n: *mut c_int,
            c: *mut c_int,
            h: *mut c_int,
            w: *mut c_int,
        ) -> c_int;
        /// `miopenStatus_t miopenConvolutionForwardGetWorkSpaceSize(miopenHandle_t handle,
        /// const miopenTensorDescriptor_t wDesc, const miopenTensorDescriptor_t xDesc,
        /// const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
        /// size_t* workSpaceSize)` (note: weights before input).
        fn miopenConvolutionForwardGetWorkSpaceSize(
            handle: MiHandle,
            w_desc: MiTensorDesc,
            x_desc: MiTensorDesc,
            conv: MiConvDesc,
            y_desc: MiTensorDesc,
            size: *mut usize,
        ) -> c_int;
        /// `miopenStatus_t miopenFindConvolutionForwardAlgorithm(miopenHandle_t handle,
        /// const miopenTensorDescriptor_t xDesc, const void* x,
        /// const miopenTensorDescriptor_t wDesc, const void* w,
        /// const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
        /// void* y, const int requestAlgoCount, int* returnedAlgoCount,
        /// miopenConvAlgoPerf_t* perfResults, void* workSpace, size_t workSpaceSize,
        /// bool exhaustiveSearch)`
        fn miopenFindConvolutionForwardAlgorithm(
            handle: MiHandle,
            x_desc: MiTensorDesc,
            x: *const c_void,
            w_desc: MiTensorDesc,
            w: *const c_void,
            conv: MiConvDesc,
            y_desc: MiTensorDesc,
            y: *mut c_void,
            request: c_int,
            returned: *mut c_int,
            perf: *mut ConvAlgoPerf,
            workspace: *mut c_void,
            workspace_size: usize,
            exhaustive: bool,
        ) -> c_int;
        /// `miopenStatus_t miopenConvolutionForward(miopenHandle_t handle, const void* alpha,
        /// const miopenTensorDescriptor_t xDesc, const void* x,
        /// const miopenTensorDescriptor_t wDesc, const void* w,
        /// const miopenConvolutionDescriptor_t convDesc, miopenConvFwdAlgorithm_t algo,
        /// const void* beta, const miopenTensorDescriptor_t yDesc, void* y, void* workSpace,
        /// size_t workSpaceSize)`
        fn miopenConvolutionForward(
            handle: MiHandle,
            alpha: *const c_void,
            x_desc: MiTensorDesc,
            x: *const c_void,
            w_desc: MiTensorDesc,
            w: *const c_void,
            conv: MiConvDesc,
            algo: c_int,
            beta: *const c_void,
            y_desc: MiTensorDesc,
            y: *mut c_void,
            workspace: *mut c_void,
            workspace_size: usize,
        ) -> c_int;
        /// `miopenStatus_t miopenSoftmaxForward_V2(miopenHandle_t handle, const void* alpha,
        /// const miopenTensorDescriptor_t xDesc, const void* x, const void* beta,
        /// const miopenTensorDescriptor_t yDesc, void* y, miopenSoftmaxAlgorithm_t algorithm,
        /// miopenSoftmaxMode_t mode)`; `alpha` and `beta` are read as `float` (MIOpen
        /// `src/include/miopen/softmax/problem_description.hpp`).
        fn miopenSoftmaxForward_V2(
            handle: MiHandle,
            alpha: *const c_void,
            x_desc: MiTensorDesc,
            x: *const c_void,
            beta: *const c_void,
            y_desc: MiTensorDesc,
            y: *mut c_void,
            algorithm: c_int,
            mode: c_int,
        ) -> c_int;
    }
}

/// The process-wide library, loaded once, never unloaded.
pub(super) fn miopen_api() -> Result<&'static MiOpenApi, String> {
    static API: OnceLock<Result<MiOpenApi, String>> = OnceLock::new();
    API.get_or_init(|| {
        let c = library_candidates(rocm_path().as_deref(), MIOPEN_NAMES);
        // SAFETY: MIOpen's names and its API.
        unsafe { load_api(&MIOPEN, &c, MiOpenApi::resolve) }
    })
    .as_ref()
    .map_err(Clone::clone)
}

// ---------------------------------------------------------------------------------------------
// MIOpen: pure helpers.

/// `miopenTensorNCHW` or `miopenTensorNHWC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Nchw,
    Nhwc,
}

impl Layout {
    fn raw(self) -> c_int {
        match self {
            Layout::Nchw => mi::TENSOR_NCHW,
            Layout::Nhwc => mi::TENSOR_NHWC,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Layout::Nchw => "NCHW",
            Layout::Nhwc => "NHWC",
        }
    }
}

/// The softmax descriptor's lengths for a row-wise softmax of `[m, n]`: `N = m, C = n,
/// H = W = 1` (NCHW, packed: row `r` is image `r`).
pub fn softmax_lens(m: usize, n: usize) -> Result<[c_int; 4], String> {
    Ok([to_i32(m, "m")?, to_i32(n, "n")?, 1, 1])
}

/// Chapter 09's convolution as MIOpen descriptors: lengths in NCHW order (as
/// `miopenSetNdTensorDescriptorWithLayout` takes them), the layout of all three tensors, and the
/// padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvShape {
    pub layout: Layout,
    /// `[n, 1, 1, l]`.
    pub x: [c_int; 4],
    /// `[f, 1, 1, kw]` (K, C, Y, X).
    pub w: [c_int; 4],
    /// `[n, f, 1, l]`.
    pub y: [c_int; 4],
    /// `(pad_h, pad_w)` = `(0, kw / 2)`.
    pub pad: (c_int, c_int),
}

/// The descriptors of `x [n, l]` correlated with `kw` taps into `f` outputs per position
/// (`f = 1`: chapter 09's single variant, NCHW; `f > 1`: the multi variant, NHWC so that the
/// output is `[n][l][f]`). `Err` for an even or zero `kw` (MIOpen's symmetric padding gives
/// `l + 1` outputs then), zero sizes, or sizes beyond `int`.
pub fn conv_shape(n: usize, l: usize, kw: usize, f: usize) -> Result<ConvShape, String> {
    if kw % 2 == 0 {
        return Err(format!(
            "conv1d: kw = {kw}; the MIOpen baseline needs an odd filter width (padding kw/2 on \
             both sides keeps the length only then)"
        ));
    }
    if n == 0 || l == 0 || f == 0 {
        return Err(format!("conv1d: empty problem (n={n}, l={l}, f={f})"));
    }
    let (ni, li, kwi, fi) = (
        to_i32(n, "n")?,
        to_i32(l, "l")?,
        to_i32(kw, "kw")?,
        to_i32(f, "f")?,
    );
    to_i32(n * l * f, "n·l·f")?;
    Ok(ConvShape {
        layout: if f == 1 { Layout::Nchw } else { Layout::Nhwc },
        x: [ni, 1, 1, li],
        w: [fi, 1, 1, kwi],
        y: [ni, fi, 1, li],
        pad: (0, kwi / 2),
    })
}

/// Our weight `[kw][f]` as MIOpen's NHWC filter `[K = f][Y = 1][X = kw][C = 1]`, i.e. `[f][kw]`:
/// `out[j * kw + t] = w[t * f + j]`.
pub fn transpose_taps<T: Copy>(w: &[T], kw: usize, f: usize) -> Vec<T> {
    assert_eq!(w.len(), kw * f, "transpose_taps: {} != {kw}·{f}", w.len());
    (0..f)
        .flat_map(|j| (0..kw).map(move |t| w[t * f + j]))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// MIOpen: the library.

/// A tensor descriptor, destroyed on drop.
struct TensorDesc {
    api: &'static MiOpenApi,
    raw: MiTensorDesc,
}

impl TensorDesc {
    fn new(
        api: &'static MiOpenApi,
        dtype: c_int,
        layout: Layout,
        lens: &[c_int; 4],
    ) -> Result<Self, String> {
        let mut raw = null_mut();
        // SAFETY: writes one descriptor handle.
        let status = unsafe { (api.miopenCreateTensorDescriptor)(&mut raw) };
        check_mi(api, status, "miopenCreateTensorDescriptor")?;
        let desc = TensorDesc { api, raw };
        // SAFETY: a live descriptor; `lens` holds `num_lens` = 4 ints and outlives the call.
        let status = unsafe {
            (api.miopenSetNdTensorDescriptorWithLayout)(raw, dtype, layout.raw(), lens.as_ptr(), 4)
        };
        check_mi(
            api,
            status,
            format_args!(
                "miopenSetNdTensorDescriptorWithLayout({}, {lens:?})",
                layout.name()
            ),
        )?;
        Ok(desc)
    }
}

impl Drop for TensorDesc {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed only here.
        let _ = unsafe { (self.api.miopenDestroyTensorDescriptor)(self.raw) };
    }
}

/// A convolution descriptor, destroyed on drop.
struct ConvDesc {
    api: &'static MiOpenApi,
    raw: MiConvDesc,
}

impl Drop for ConvDesc {
    fn drop(&mut self) {
        // SAFETY: created in `ConvPlan::new`, destroyed only here.
        let _ = unsafe { (self.api.miopenDestroyConvolutionDescriptor)(self.raw) };
    }
}

/// Everything a convolution call needs, made once (see the module docs).
struct ConvPlan {
    /// `(n, l, kw, f)` and the address of the weight tensor it was made for.
    key: ((usize, usize, usize, usize), u64),
    x: TensorDesc,
    w: TensorDesc,
    y: TensorDesc,
    conv: ConvDesc,
    /// The weight in MIOpen's filter layout (multi); `None` when ours is already it (single).
    weight: Option<Tensor<f16>>,
    workspace: Option<Tensor<u8>>,
    algo: c_int,
    layout: Layout,
}

/// A MIOpen handle on a HIP device's null stream.
pub struct MiOpen {
    api: &'static MiOpenApi,
    hip: &'static HipApi,
    handle: MiHandle,
    ordinal: c_int,
    dev: Device,
    /// `miopenGetVersion`, e.g. `3.3.0`.
    pub version: String,
    softmax: RefCell<Vec<((usize, usize), TensorDesc)>>,
    convs: RefCell<Vec<ConvPlan>>,
}

impl MiOpen {
    /// Loads MIOpen (and resolves `hipSetDevice` from our HIP runtime), makes `dev` current and creates a handle on the null
    /// stream (`miopenCreateWithStream(.., NULL)`). `Err`, never a panic, when `dev` is not a HIP
    /// device or a library or symbol is missing.
    pub fn new(dev: &Device) -> Result<MiOpen, String> {
        let ordinal = hip_ordinal(dev, "MIOpen")?;
        let api = miopen_api()?;
        let hip = hip_api(dev, "MIOpen")?;
        let (mut major, mut minor, mut patch) = (0usize, 0usize, 0usize);
        // SAFETY: writes three size_t.
        let status = unsafe { (api.miopenGetVersion)(&mut major, &mut minor, &mut patch) };
        check_mi(api, status, "miopenGetVersion")?;
        bind(hip, ordinal)?;
        let mut handle = null_mut();
        // SAFETY: writes one handle; a null stream is the device's null stream; the current
        // device is `dev`.
        let status = unsafe { (api.miopenCreateWithStream)(&mut handle, null_mut()) };
        check_mi(api, status, "miopenCreateWithStream(NULL stream)")?;
        Ok(MiOpen {
            api,
            hip,
            handle,
            ordinal,
            dev: dev.clone(),
            version: format!("{major}.{minor}.{patch}"),
            softmax: RefCell::new(Vec::new()),
            convs: RefCell::new(Vec::new()),
        })
    }

    /// Row-wise softmax of `x [m, n]` f32 into `y` (`miopenSoftmaxForward_V2`,
    /// `MIOPEN_SOFTMAX_ACCURATE`, `MIOPEN_SOFTMAX_MODE_INSTANCE` on `N = m, C = n, H = W = 1`;
    /// see the module docs), queued on the device's null stream. The descriptor is made on the
    /// first call for `(m, n)` and cached.
    pub fn softmax_f32(
        &self,
        x: &Tensor<f32>,
        y: &mut Tensor<f32>,
        (m, n): (usize, usize),
    ) -> Result<(), String> {
        if x.len() != m * n || y.len() != m * n {
            return Err(format!(
                "softmax_f32: lengths {} and {} do not match m={m}, n={n}",
                x.len(),
                y.len()
            ));
        }
        check_device(&self.dev, x, "x")?;
        check_device(&self.dev, y, "y")?;
        let mut cache = self.softmax.borrow_mut();
        let at = match cache.iter().position(|(k, _)| *k == (m, n)) {
            Some(i) => i,
            None => {
                let desc =
                    TensorDesc::new(self.api, mi::FLOAT, Layout::Nchw, &softmax_lens(m, n)?)?;
                cache.push(((m, n), desc));
                cache.len() - 1
            }
        };
        let desc = cache[at].1.raw;
        let (alpha, beta) = (1.0f32, 0.0f32);
        bind(self.hip, self.ordinal)?;
        // SAFETY: `x` and `y` are live allocations of this device holding `m·n` f32 each, as
        // `desc` (packed NCHW [m, n, 1, 1]) describes; `y` is borrowed mutably, so they do not
        // overlap; `alpha`, `beta` are host floats read during the call; handle and
        // descriptor are live; the device is current.
        let status = unsafe {
            (self.api.miopenSoftmaxForward_V2)(
                self.handle,
                (&alpha as *const f32).cast(),
                desc,
                x.device_ptr() as *const c_void,
                (&beta as *const f32).cast(),
                desc,
                y.device_ptr() as *mut c_void,
                mi::SOFTMAX_ACCURATE,
                mi::SOFTMAX_MODE_INSTANCE,
            )
        };
        check_mi(
            self.api,
            status,
            format_args!("miopenSoftmaxForward_V2({m}x{n})"),
        )
    }

    /// Chapter 09's 1-D correlation in f16 (f32 accumulation inside MIOpen's kernels): `x [n, l]`,
    /// `w [kw]` (f = 1) or `[kw, f]`, `out [n, l]` or `[n, l, f]`, zero padding `kw/2`, queued on
    /// the device's null stream. The first call for a given `(n, l, kw, f)` and weight tensor
    /// builds the plan (algorithm search, weight copy, workspace; see the module docs); later
    /// calls only queue `miopenConvolutionForward`.
    pub fn conv1d_f16(
        &self,
        x: &Tensor<f16>,
        w: &Tensor<f16>,
        out: &mut Tensor<f16>,
        (n, l, kw, f): (usize, usize, usize, usize),
    ) -> Result<(), String> {
        if x.len() != n * l || w.len() != kw * f || out.len() != n * l * f {
            return Err(format!(
                "conv1d_f16: lengths {}, {}, {} do not match n={n}, l={l}, kw={kw}, f={f}",
                x.len(),
                w.len(),
                out.len()
            ));
        }
        for (t, name) in [(x, "x"), (w, "w"), (&*out, "out")] {
            check_device(&self.dev, t, name)?;
        }
        let key = ((n, l, kw, f), w.device_ptr());
        let mut plans = self.convs.borrow_mut();
        let at = match plans.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                let plan = self.plan_conv(x, w, out, key)?;
                plans.push(plan);
                plans.len() - 1
            }
        };
        let p = &plans[at];
        let weight = p.weight.as_ref().map_or(w.device_ptr(), |t| t.device_ptr());
        let (ws, ws_bytes) = workspace(&p.workspace);
        let (alpha, beta) = (1.0f32, 0.0f32);
        bind(self.hip, self.ordinal)?;
        // SAFETY: `x`, the weight (ours or the plan's copy) and `out` are live allocations of
        // this device with exactly the elements their descriptors describe (lengths checked
        // above, descriptors made for these sizes); `out` is borrowed mutably and the plan's
        // copy is private, so the output overlaps no input; the workspace is the plan's live
        // buffer of `ws_bytes` bytes (at least what the chosen algorithm needs); `alpha`, `beta`
        // are host floats (alpha 1, beta 0, the only values 2-D convolution supports); the
        // device is current.
        let status = unsafe {
            (self.api.miopenConvolutionForward)(
                self.handle,
                (&alpha as *const f32).cast(),
                p.x.raw,
                x.device_ptr() as *const c_void,
                p.w.raw,
                weight as *const c_void,
                p.conv.raw,
                p.algo,
                (&beta as *const f32).cast(),
                p.y.raw,
                out.device_ptr() as *mut c_void,
                ws,
                ws_bytes,
            )
        };
        check_mi(
            self.api,
            status,
            format_args!("miopenConvolutionForward(n={n}, l={l}, kw={kw}, f={f})"),
        )
    }

    /// The record's config string for a convolution planned for these sizes, e.g.
    /// `"miopenConvolutionForward f16, NHWC, algo ImplicitGEMM (Find)"`; `None` before the first
    /// call.
    pub fn conv1d_config(&self, (n, l, kw, f): (usize, usize, usize, usize)) -> Option<String> {
        self.convs
            .borrow()
            .iter()
            .find(|p| p.key.0 == (n, l, kw, f))
            .map(|p| {
                format!(
                    "miopenConvolutionForward f16, {}, algo {} (Find)",
                    p.layout.name(),
                    fwd_algo_name(p.algo)
                )
            })
    }

    /// Drops every cached convolution plan (and weight copy): the next call plans again.
    pub fn forget_conv_plans(&self) {
        self.convs.borrow_mut().clear();
    }

    fn plan_conv(
        &self,
        x: &Tensor<f16>,
        w: &Tensor<f16>,
        out: &mut Tensor<f16>,
        key: ((usize, usize, usize, usize), u64),
    ) -> Result<ConvPlan, String> {
        let api = self.api;
        let (n, l, kw, f) = key.0;
        let shape = conv_shape(n, l, kw, f)?;
        let xd = TensorDesc::new(api, mi::HALF, shape.layout, &shape.x)?;
        let wd = TensorDesc::new(api, mi::HALF, shape.layout, &shape.w)?;
        let yd = TensorDesc::new(api, mi::HALF, shape.layout, &shape.y)?;
        let mut raw = null_mut();
        // SAFETY: writes one descriptor handle.
        let status = unsafe { (api.miopenCreateConvolutionDescriptor)(&mut raw) };
        check_mi(api, status, "miopenCreateConvolutionDescriptor")?;
        let conv = ConvDesc { api, raw };
        // SAFETY: a live descriptor; cross-correlation, non-negative padding, unit strides and
        // dilations.
        let status = unsafe {
            (api.miopenInitConvolutionDescriptor)(
                raw,
                mi::CONVOLUTION,
                shape.pad.0,
                shape.pad.1,
                1,
                1,
                1,
                1,
            )
        };
        check_mi(api, status, "miopenInitConvolutionDescriptor")?;
        let mut dims = [0 as c_int; 4];
        let [d0, d1, d2, d3] = &mut dims;
        // SAFETY: live descriptors; writes four ints.
        let status = unsafe {
            (api.miopenGetConvolutionForwardOutputDim)(raw, xd.raw, wd.raw, d0, d1, d2, d3)
        };
        check_mi(api, status, "miopenGetConvolutionForwardOutputDim")?;
        if dims != shape.y {
            return Err(format!(
                "conv1d: MIOpen computes an output of {dims:?} (NCHW order), expected {:?}",
                shape.y
            ));
        }

        // The filter in MIOpen's layout: ours as it is for f = 1, transposed for f > 1.
        let weight = if f == 1 {
            None
        } else {
            let host = w.to_vec().map_err(|e| format!("conv1d: reading w: {e}"))?;
            let t = self
                .dev
                .upload(&transpose_taps(&host, kw, f), &[f, kw])
                .map_err(|e| format!("conv1d: uploading the transposed weight: {e}"))?;
            Some(t)
        };
        let w_ptr = weight.as_ref().map_or(w.device_ptr(), |t| t.device_ptr());

        bind(self.hip, self.ordinal)?;
        let mut ws_bytes = 0usize;
        // SAFETY: live handle and descriptors; writes one size_t.
        let status = unsafe {
            (api.miopenConvolutionForwardGetWorkSpaceSize)(
                self.handle,
                wd.raw,
                xd.raw,
                raw,
                yd.raw,
                &mut ws_bytes,
            )
        };
        check_mi(api, status, "miopenConvolutionForwardGetWorkSpaceSize")?;
        let workspace_t = if ws_bytes > 0 {
            Some(
                self.dev
                    .zeros::<u8>(&[ws_bytes])
                    .map_err(|e| format!("conv1d: a {ws_bytes}-byte workspace: {e}"))?,
            )
        } else {
            None
        };
        let (ws, ws_len) = workspace(&workspace_t);
        let mut perf = [ConvAlgoPerf::default(); 8];
        let mut returned: c_int = 0;
        bind(self.hip, self.ordinal)?;
        // SAFETY: as in `conv1d_f16` for the buffers (`out` is written: the real convolution
        // overwrites it afterwards); `perf` has room for the `request` = 8 results asked for;
        // writes one int; the workspace is live with `ws_len` bytes.
        let status = unsafe {
            (api.miopenFindConvolutionForwardAlgorithm)(
                self.handle,
                xd.raw,
                x.device_ptr() as *const c_void,
                wd.raw,
                w_ptr as *const c_void,
                raw,
                yd.raw,
                out.device_ptr() as *mut c_void,
                perf.len() as c_int,
                &mut returned,
                perf.as_mut_ptr(),
                ws,
                ws_len,
                false,
            )
        };
        check_mi(api, status, "miopenFindConvolutionForwardAlgorithm")?;
        let best = pick_algo(&perf, returned, ws_len)?;
        Ok(ConvPlan {
            key,
            x: xd,
            w: wd,
            y: yd,
            conv,
            weight,
            workspace: workspace_t,
            algo: best.fwd_algo,
            layout: shape.layout,
        })
    }
}

/// The workspace pointer and size for a call: null and 0 without one.
fn workspace(t: &Option<Tensor<u8>>) -> (*mut c_void, usize) {
    match t {
        Some(t) => (t.device_ptr() as *mut c_void, t.len()),
        None => (null_mut(), 0),
    }
}

/// The first (fastest) of the `returned` results of a Find, which must fit the workspace.
pub(super) fn pick_algo(
    perf: &[ConvAlgoPerf],
    returned: c_int,
    ws_bytes: usize,
) -> Result<ConvAlgoPerf, String> {
    let count = usize::try_from(returned).unwrap_or(0).min(perf.len());
    let best = *perf[..count].first().ok_or_else(|| {
        "miopenFindConvolutionForwardAlgorithm returned no algorithm for this convolution"
            .to_string()
    })?;
    if best.memory > ws_bytes {
        return Err(format!(
            "MIOpen's best algorithm ({}) needs {} workspace bytes, more than the {ws_bytes} it \
             was offered",
            fwd_algo_name(best.fwd_algo),
            best.memory
        ));
    }
    Ok(best)
}

impl Drop for MiOpen {
    fn drop(&mut self) {
        // Descriptors and buffers first, then the handle. Nothing can report an error here.
        self.softmax.get_mut().clear();
        self.convs.get_mut().clear();
        if bind(self.hip, self.ordinal).is_ok() {
            // SAFETY: created in `new`, destroyed only here.
            let _ = unsafe { (self.api.miopenDestroy)(self.handle) };
        }
    }
}

fn check_mi(api: &MiOpenApi, status: c_int, what: impl std::fmt::Display) -> Result<(), String> {
    if status == mi::STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: returns a static string (or null).
    let text = unsafe { c_str((api.miopenGetErrorString)(status)) };
    Err(format!(
        "{what}: {} ({})",
        text.unwrap_or_else(|| format!("miopenStatus_t {status}")),
        api.library().path().display()
    ))
}
