//! cuDNN 9 baselines through cudarc's `cudnn::result` / `sys` functions with raw device
//! pointers, on the device's stream: row-wise softmax (chapter 06) and the 1-D convolutions of
//! chapter 09 as 2-D convolutions with `H = 1`.
//!
//! Descriptors, the convolution's algorithm (`cudnnFindConvolutionForwardAlgorithm`, which
//! measures every algorithm) and its workspace are made once per problem by
//! [`Softmax::new`] / [`Conv1d::new`], outside the timed region; the timed launches only queue
//! `cudnnSoftmaxForward` / `cudnnConvolutionForward`.
//!
//! The pure mapping from our shapes to cuDNN's 4-D descriptors ([`softmax_desc`],
//! [`conv1d_descs`]) is separate and tested: each descriptor's strides, as cuDNN derives them
//! from the dimensions and the format, must address exactly our row-major element.

use super::common::{bind, guarded, stream_of};
use cudarc::cudnn::{result as dnn, sys};
use cudarc::driver::CudaStream;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::Arc;
use tilelang::{f16, Device, Tensor};

/// Where the benches look for cuDNN, for error messages.
pub const CUDNN_HINT: &str = "cuDNN 9 (libcudnn.so.9) was not found: install it (the pip package \
     `nvidia-cudnn-cu13`, which PyTorch's CUDA 13 wheels bring) and put the directory holding \
     libcudnn.so* (and its libcudnn_*.so.9 sub-libraries) on LD_LIBRARY_PATH (the bundle's run.sh \
     does this for the pip wheel)";

/// A cuDNN status as text: `cudnnGetErrorString` and the number.
///
/// The enum is never formatted with `Debug`: a newer cuDNN 9 may return a code the bindings
/// (cuDNN 9.2.1) do not list, and only its numeric value and the library's own text are safe
/// to print.
fn status(e: dnn::CudnnError) -> String {
    let code = e.0 as u32;
    // SAFETY: returns a pointer to a static NUL-terminated string (or null) for any code.
    let text = unsafe { sys::cudnnGetErrorString(e.0) };
    if text.is_null() {
        format!("cuDNN status {code}")
    } else {
        // SAFETY: non-null, NUL-terminated, static (cuDNN's documentation).
        let s = unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy();
        format!("{s} ({code})")
    }
}

fn err(what: &'static str) -> impl Fn(dnn::CudnnError) -> String {
    move |e| format!("{what}: {}", status(e))
}

// ---------------------------------------------------------------------------------------------
// The pure mapping.

/// cuDNN's two fully packed 4-D formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `N, C, H, W` from slowest to fastest (for a filter: `K, C, R, S`).
    Nchw,
    /// `N, H, W, C` (for a filter: `K, R, S, C`).
    Nhwc,
}

impl Format {
    fn sys(self) -> sys::cudnnTensorFormat_t {
        match self {
            Format::Nchw => sys::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
            Format::Nhwc => sys::cudnnTensorFormat_t::CUDNN_TENSOR_NHWC,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Nchw => "NCHW",
            Format::Nhwc => "NHWC",
        }
    }
}

/// A fully packed 4-D descriptor: dimensions in cuDNN's `N, C, H, W` argument order (for a
/// filter `K, C, R, S`) and the memory format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Desc4 {
    pub dims: [usize; 4],
    pub format: Format,
}

impl Desc4 {
    /// The element strides (in `N, C, H, W` order) cuDNN derives from the dimensions and the
    /// format (`cudnnSetTensor4dDescriptor`, `cudnnSetFilter4dDescriptor`).
    pub fn strides(&self) -> [usize; 4] {
        let [_, c, h, w] = self.dims;
        match self.format {
            Format::Nchw => [c * h * w, h * w, w, 1],
            Format::Nhwc => [h * w * c, 1, w * c, c],
        }
    }

    /// The element offset of index `(n, c, h, w)`.
    pub fn offset(&self, idx: [usize; 4]) -> usize {
        self.strides().iter().zip(idx).map(|(s, i)| s * i).sum()
    }

    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The dimensions as cuDNN's `int`s; the legacy API also limits a tensor to 2³¹ − 1
    /// elements.
    fn dims_i32(&self) -> Result<[i32; 4], String> {
        if self.len() > i32::MAX as usize || self.is_empty() {
            return Err(format!(
                "cuDNN: a {:?} tensor has {} elements, outside 1..2^31",
                self.dims,
                self.len()
            ));
        }
        Ok(self.dims.map(|d| d as i32))
    }
}

/// Row-wise softmax of a row-major `[m, n]` matrix: `N = m`, `C = n`, `H = W = 1`, NCHW, so
/// element `(r, j)` is at `r·n + j`, our layout.
///
/// The mode is `CUDNN_SOFTMAX_MODE_INSTANCE`: one softmax per `N` over all of its `C·H·W`
/// values, i.e. per row over its `n` values. `CUDNN_SOFTMAX_MODE_CHANNEL` (one softmax per
/// `(N, H, W)` over `C`) gives the same result only because `H = W = 1`; INSTANCE states the
/// intent and would stay a row softmax for any split of a row into `C·H·W`.
pub fn softmax_desc(m: usize, n: usize) -> Desc4 {
    Desc4 {
        dims: [m, n, 1, 1],
        format: Format::Nchw,
    }
}

/// The descriptors of chapter 09's convolutions as 2-D convolutions with `H = 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv1dDescs {
    pub x: Desc4,
    /// `K, C, R, S` (out channels, in channels, height, width).
    pub w: Desc4,
    pub y: Desc4,
    /// `(pad_h, pad_w)`: zero padding `kw / 2` along the row ('same' for odd `kw`).
    pub pad: (usize, usize),
    /// Whether cuDNN's filter is our weights transposed ([`transpose_weights`]).
    pub transposed_weights: bool,
}

/// `single` (`f = None`): `X[n, l]`, `W[kw]` → `O[n, l]`; `multi` (`f = Some(f)`): `X[n, l]`,
/// `W[kw, f]` → `O[n, l, f]`. Both are cross-correlations (`CUDNN_CROSS_CORRELATION`: the
/// filter is not flipped), `O[r, p(, j)] = Σ_t X[r, p + t − kw/2]·W[t(, j)]` with zeros
/// outside the row, like `kernels::ch09_conv1d::reference_*`.
///
/// * single: all NCHW; `X = [N=n, C=1, H=1, W=l]`, filter `[K=1, C=1, R=1, S=kw]` (our `W` as
///   it is), `O = [n, 1, 1, l]`.
/// * multi: all NHWC (the format whose `C` is innermost): `X = [n, C=1, 1, l]` (with one
///   channel the same bytes as NCHW), `O = [n, C=f, 1, l]` at `(r·l + p)·f + j`, our
///   `[n][l][f]`; the filter `[K=f, C=1, R=1, S=kw]` is `K R S C`, i.e. `[f][kw]`: our
///   `[kw][f]` transposed (cuDNN's filter descriptor takes no strides).
///
/// `kw` must be odd, so that the output keeps the length `l` (`l + 2·(kw/2) − kw + 1`).
pub fn conv1d_descs(
    n: usize,
    l: usize,
    kw: usize,
    f: Option<usize>,
) -> Result<Conv1dDescs, String> {
    if kw % 2 == 0 {
        return Err(format!(
            "conv1d: kw = {kw} is even; 'same' padding kw/2 keeps the length only for odd kw"
        ));
    }
    Ok(match f {
        None => Conv1dDescs {
            x: Desc4 {
                dims: [n, 1, 1, l],
                format: Format::Nchw,
            },
            w: Desc4 {
                dims: [1, 1, 1, kw],
                format: Format::Nchw,
            },
            y: Desc4 {
                dims: [n, 1, 1, l],
                format: Format::Nchw,
            },
            pad: (0, kw / 2),
            transposed_weights: false,
        },
        Some(f) => Conv1dDescs {
            x: Desc4 {
                dims: [n, 1, 1, l],
                format: Format::Nhwc,
            },
            w: Desc4 {
                dims: [f, 1, 1, kw],
                format: Format::Nhwc,
            },
            y: Desc4 {
                dims: [n, f, 1, l],
                format: Format::Nhwc,
            },
            pad: (0, kw / 2),
            transposed_weights: true,
        },
    })
}

/// Our multi-filter weights `[kw][f]` as cuDNN's `K R S C` filter `[f][kw]`.
pub fn transpose_weights<T: Copy>(w: &[T], kw: usize, f: usize) -> Vec<T> {
    assert_eq!(w.len(), kw * f, "transpose_weights: length");
    (0..f)
        .flat_map(|j| (0..kw).map(move |t| w[t * f + j]))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The handle and descriptors.

/// A cuDNN handle on a device's stream.
pub struct Dnn {
    handle: sys::cudnnHandle_t,
    stream: Arc<CudaStream>,
    /// `cudnnGetVersion`, e.g. 91300 for 9.13.0.
    pub version: usize,
}

impl Dnn {
    /// Loads cuDNN and creates a handle on `dev`'s stream. A clear error (never a panic) when
    /// the device is not a CUDA device, the library is missing or is not cuDNN 9 (the major
    /// version cudarc's `cudnn` feature binds).
    pub fn new(dev: &Device) -> Result<Dnn, String> {
        let stream = stream_of(dev)?;
        // SAFETY: only tries to open the library under cudarc's candidate names.
        if !unsafe { sys::is_culib_present() } {
            return Err(CUDNN_HINT.to_string());
        }
        bind(&stream)?;
        guarded("creating a cuDNN handle", || {
            let version = dnn::get_version();
            // cuDNN 9 numbers versions major·10000 + minor·100 + patch (8 used major·1000).
            if !(90_000..100_000).contains(&version) {
                return Err(format!(
                    "cuDNN version {version} found; these baselines are bound to cuDNN 9 \
                     (cudarc's cudnn feature)"
                ));
            }
            let handle = dnn::create_handle().map_err(err("cudnnCreate"))?;
            let d = Dnn {
                handle,
                stream,
                version,
            };
            // SAFETY: a live handle; the stream is the device's own (its CUstream is the
            // runtime's cudaStream_t: the same pointer type in the CUDA ABI), alive as long as
            // `d` holds the Arc.
            unsafe { dnn::set_stream(d.handle, d.stream.cu_stream() as sys::cudaStream_t) }
                .map_err(err("cudnnSetStream"))?;
            Ok(d)
        })
    }
}

impl Drop for Dnn {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once, here; plans hold an `Rc<Dnn>`, so none
        // outlives the handle.
        let _ = unsafe { dnn::destroy_handle(self.handle) };
    }
}

struct TensorDesc(sys::cudnnTensorDescriptor_t);

impl TensorDesc {
    fn new(d: &Desc4, dtype: sys::cudnnDataType_t) -> Result<TensorDesc, String> {
        let dims = d.dims_i32()?;
        let t = TensorDesc(
            dnn::create_tensor_descriptor().map_err(err("cudnnCreateTensorDescriptor"))?,
        );
        // SAFETY: a live descriptor, set once.
        unsafe { dnn::set_tensor4d_descriptor(t.0, d.format.sys(), dtype, dims) }
            .map_err(err("cudnnSetTensor4dDescriptor"))?;
        Ok(t)
    }
}

impl Drop for TensorDesc {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once, here.
        let _ = unsafe { dnn::destroy_tensor_descriptor(self.0) };
    }
}

struct FilterDesc(sys::cudnnFilterDescriptor_t);

impl FilterDesc {
    fn new(d: &Desc4, dtype: sys::cudnnDataType_t) -> Result<FilterDesc, String> {
        let dims = d.dims_i32()?;
        let t = FilterDesc(
            dnn::create_filter_descriptor().map_err(err("cudnnCreateFilterDescriptor"))?,
        );
        // SAFETY: a live descriptor, set once.
        unsafe { dnn::set_filter4d_descriptor(t.0, dtype, d.format.sys(), dims) }
            .map_err(err("cudnnSetFilter4dDescriptor"))?;
        Ok(t)
    }
}

impl Drop for FilterDesc {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once, here.
        let _ = unsafe { dnn::destroy_filter_descriptor(self.0) };
    }
}

struct ConvDesc(sys::cudnnConvolutionDescriptor_t);

impl Drop for ConvDesc {
    fn drop(&mut self) {
        // SAFETY: created in `Conv1d::new`, destroyed once, here.
        let _ = unsafe { dnn::destroy_convolution_descriptor(self.0) };
    }
}

fn check_len<T: tilelang::Element>(what: &str, t: &Tensor<T>, d: &Desc4) -> Result<(), String> {
    if t.len() != d.len() {
        return Err(format!(
            "cuDNN {what}: the tensor has {} elements, the descriptor {:?} {}",
            t.len(),
            d.dims,
            d.len()
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Softmax.

/// `cudnnSoftmaxForward` of a row-major `[m, n]` f32 matrix, one softmax per row
/// (`CUDNN_SOFTMAX_ACCURATE`: the row maximum is subtracted first; mode: see
/// [`softmax_desc`]).
pub struct Softmax {
    dnn: Rc<Dnn>,
    shape: Desc4,
    desc: TensorDesc,
}

impl Softmax {
    pub fn new(dnn: &Rc<Dnn>, m: usize, n: usize) -> Result<Softmax, String> {
        let shape = softmax_desc(m, n);
        guarded("describing a cuDNN softmax", || {
            Ok(Softmax {
                dnn: dnn.clone(),
                shape,
                desc: TensorDesc::new(&shape, sys::cudnnDataType_t::CUDNN_DATA_FLOAT)?,
            })
        })
    }

    /// The record's config string.
    pub fn description(&self) -> String {
        format!(
            "cudnnSoftmaxForward ACCURATE, MODE_INSTANCE, f32 NCHW [{}, {}, 1, 1]",
            self.shape.dims[0], self.shape.dims[1]
        )
    }

    pub fn forward(&self, x: &Tensor<f32>, y: &mut Tensor<f32>) -> Result<(), String> {
        check_len("softmax x", x, &self.shape)?;
        check_len("softmax y", y, &self.shape)?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        guarded("cudnnSoftmaxForward", || {
            bind(&self.dnn.stream)?;
            // SAFETY: the handle and descriptor are live; both buffers are device allocations
            // of this device holding exactly the descriptor's packed elements (checked above);
            // `y` is borrowed mutably, so it does not overlap `x`; alpha and beta are host
            // floats (cuDNN's scaling type for f32 data) read before the call returns.
            unsafe {
                dnn::softmax_forward(
                    self.dnn.handle,
                    sys::cudnnSoftmaxAlgorithm_t::CUDNN_SOFTMAX_ACCURATE,
                    sys::cudnnSoftmaxMode_t::CUDNN_SOFTMAX_MODE_INSTANCE,
                    (&alpha as *const f32).cast(),
                    self.desc.0,
                    x.device_ptr() as *const c_void,
                    (&beta as *const f32).cast(),
                    self.desc.0,
                    y.device_ptr() as *mut c_void,
                )
            }
            .map_err(err("cudnnSoftmaxForward"))
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Convolution.

/// `cudnnConvolutionFwdAlgoPerf_t` with its enums as plain integers: what the library writes
/// is read without assuming it is one of the enum values the bindings list.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct RawFwdPerf {
    algo: u32,
    status: u32,
    time: f32,
    memory: usize,
    determinism: u32,
    math_type: u32,
    reserved: [i32; 3],
}

const _: () = {
    assert!(
        std::mem::size_of::<RawFwdPerf>()
            == std::mem::size_of::<sys::cudnnConvolutionFwdAlgoPerf_t>()
    );
    assert!(
        std::mem::align_of::<RawFwdPerf>()
            == std::mem::align_of::<sys::cudnnConvolutionFwdAlgoPerf_t>()
    );
};

fn fwd_algo(v: u32) -> Option<sys::cudnnConvolutionFwdAlgo_t> {
    use sys::cudnnConvolutionFwdAlgo_t as A;
    Some(match v {
        0 => A::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
        1 => A::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
        2 => A::CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
        3 => A::CUDNN_CONVOLUTION_FWD_ALGO_DIRECT,
        4 => A::CUDNN_CONVOLUTION_FWD_ALGO_FFT,
        5 => A::CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING,
        6 => A::CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
        7 => A::CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
        _ => return None,
    })
}

fn math_type(v: u32) -> Option<sys::cudnnMathType_t> {
    use sys::cudnnMathType_t as M;
    Some(match v {
        0 => M::CUDNN_DEFAULT_MATH,
        1 => M::CUDNN_TENSOR_OP_MATH,
        2 => M::CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
        3 => M::CUDNN_FMA_MATH,
        _ => return None,
    })
}

/// Whether an algorithm sums the `kw` products directly (implicit / explicit GEMM, direct), as
/// the check's tolerance assumes (an f32 accumulation of exact f16 products, one rounding to
/// f16). FFT and Winograd round in a transformed space; they are left out of the choice.
pub fn is_direct_sum(algo: u32) -> bool {
    matches!(algo, 0..=3)
}

/// `cudnnConvolutionForward` of chapter 09's 1-D convolutions (see [`conv1d_descs`]): f16
/// tensors, f32 compute (cuDNN's PSEUDO_HALF configuration), the fastest directly-summing
/// algorithm `cudnnFindConvolutionForwardAlgorithm` measured, its workspace on the device.
pub struct Conv1d {
    dnn: Rc<Dnn>,
    descs: Conv1dDescs,
    x: TensorDesc,
    w: FilterDesc,
    y: TensorDesc,
    conv: ConvDesc,
    algo: sys::cudnnConvolutionFwdAlgo_t,
    workspace: Tensor<u8>,
    workspace_bytes: usize,
    description: String,
}

const ALGO_NAMES: [&str; 8] = [
    "IMPLICIT_GEMM",
    "IMPLICIT_PRECOMP_GEMM",
    "GEMM",
    "DIRECT",
    "FFT",
    "FFT_TILING",
    "WINOGRAD",
    "WINOGRAD_NONFUSED",
];
const MATH_NAMES: [&str; 4] = [
    "DEFAULT_MATH",
    "TENSOR_OP_MATH",
    "TENSOR_OP_MATH_ALLOW_CONVERSION",
    "FMA_MATH",
];

fn algo_name(a: u32) -> String {
    ALGO_NAMES
        .get(a as usize)
        .map_or_else(|| format!("algo {a}"), |s| s.to_string())
}

fn math_name(m: u32) -> String {
    MATH_NAMES
        .get(m as usize)
        .map_or_else(|| format!("math {m}"), |s| s.to_string())
}

impl Conv1d {
    /// Describes the problem, runs `cudnnFindConvolutionForwardAlgorithm` (it times every
    /// algorithm on buffers it allocates itself, so it runs kernels and synchronizes: call it
    /// outside the timed region), keeps the fastest directly-summing one and allocates its
    /// workspace.
    pub fn new(
        dnn: &Rc<Dnn>,
        dev: &Device,
        n: usize,
        l: usize,
        kw: usize,
        f: Option<usize>,
    ) -> Result<Conv1d, String> {
        let descs = conv1d_descs(n, l, kw, f)?;
        bind(&dnn.stream)?;
        guarded("planning a cuDNN convolution", || {
            let half = sys::cudnnDataType_t::CUDNN_DATA_HALF;
            let x = TensorDesc::new(&descs.x, half)?;
            let w = FilterDesc::new(&descs.w, half)?;
            let y = TensorDesc::new(&descs.y, half)?;
            let conv = ConvDesc(
                dnn::create_convolution_descriptor()
                    .map_err(err("cudnnCreateConvolutionDescriptor"))?,
            );
            // SAFETY: a live descriptor; plain values.
            unsafe {
                dnn::set_convolution2d_descriptor(
                    conv.0,
                    descs.pad.0 as i32,
                    descs.pad.1 as i32,
                    1,
                    1,
                    1,
                    1,
                    sys::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
                    sys::cudnnDataType_t::CUDNN_DATA_FLOAT,
                )
            }
            .map_err(err("cudnnSetConvolution2dDescriptor"))?;
            // Tensor cores allowed: the data are f16 already, so no down-conversion is
            // involved (ALLOW_CONVERSION would only add converting f32 data to f16, and
            // DEFAULT_MATH leaves the choice to cuDNN's defaults); products of f16 values are
            // exact and accumulate in f32 (the compute type) either way.
            // SAFETY: a live descriptor.
            unsafe {
                dnn::set_convolution_math_type(conv.0, sys::cudnnMathType_t::CUDNN_TENSOR_OP_MATH)
            }
            .map_err(err("cudnnSetConvolutionMathType"))?;

            // cuDNN's own idea of the output shape must be ours.
            let mut out = [0i32; 4];
            // SAFETY: live descriptors; four ints written.
            unsafe {
                sys::cudnnGetConvolution2dForwardOutputDim(
                    conv.0,
                    x.0,
                    w.0,
                    &mut out[0],
                    &mut out[1],
                    &mut out[2],
                    &mut out[3],
                )
            }
            .result()
            .map_err(err("cudnnGetConvolution2dForwardOutputDim"))?;
            let want = descs.y.dims_i32()?;
            if out != want {
                return Err(format!(
                    "cuDNN's output dims {out:?} are not the expected {want:?}"
                ));
            }

            let mut max = 0i32;
            // SAFETY: a live handle; one int written.
            unsafe { sys::cudnnGetConvolutionForwardAlgorithmMaxCount(dnn.handle, &mut max) }
                .result()
                .map_err(err("cudnnGetConvolutionForwardAlgorithmMaxCount"))?;
            let max = max.clamp(1, 64);
            let mut perf = vec![
                RawFwdPerf {
                    algo: u32::MAX,
                    status: u32::MAX,
                    time: f32::NAN,
                    memory: 0,
                    determinism: 0,
                    math_type: 0,
                    reserved: [0; 3],
                };
                max as usize
            ];
            let mut returned = 0i32;
            // SAFETY: live handle and descriptors; `perf` holds `max` elements laid out as
            // `cudnnConvolutionFwdAlgoPerf_t` (same size and alignment, checked at compile
            // time; the enums are 32-bit integers in the C ABI), and cuDNN writes at most
            // `max` of them and their count. Find allocates and frees its own buffers.
            unsafe {
                sys::cudnnFindConvolutionForwardAlgorithm(
                    dnn.handle,
                    x.0,
                    w.0,
                    conv.0,
                    y.0,
                    max,
                    &mut returned,
                    perf.as_mut_ptr().cast(),
                )
            }
            .result()
            .map_err(err("cudnnFindConvolutionForwardAlgorithm"))?;
            let results = &perf[..(returned.clamp(0, max) as usize)];
            let ok: Vec<&RawFwdPerf> = results.iter().filter(|p| p.status == 0).collect();
            // Sorted by time, fastest first (cuDNN's documentation); take the first that sums
            // directly and whose enums we know.
            let chosen = ok
                .iter()
                .find(|p| {
                    is_direct_sum(p.algo)
                        && fwd_algo(p.algo).is_some()
                        && math_type(p.math_type).is_some()
                })
                .copied()
                .ok_or_else(|| {
                    let tried: Vec<String> = results
                        .iter()
                        .map(|p| format!("{} status {}", algo_name(p.algo), p.status))
                        .collect();
                    format!(
                        "cudnnFindConvolutionForwardAlgorithm: no directly-summing algorithm \
                         succeeded ({})",
                        tried.join(", ")
                    )
                })?;
            let algo = fwd_algo(chosen.algo).expect("checked");
            // The math type the measured run used (it may differ from the descriptor's).
            // SAFETY: a live descriptor.
            unsafe {
                dnn::set_convolution_math_type(
                    conv.0,
                    math_type(chosen.math_type).expect("checked"),
                )
            }
            .map_err(err("cudnnSetConvolutionMathType"))?;
            // SAFETY: live handle and descriptors.
            let needed = unsafe {
                dnn::get_convolution_forward_workspace_size(dnn.handle, x.0, w.0, conv.0, y.0, algo)
            }
            .map_err(err("cudnnGetConvolutionForwardWorkspaceSize"))?;
            let workspace_bytes = needed.max(chosen.memory);
            let workspace = dev.alloc::<u8>(&[workspace_bytes.max(1)]).map_err(|e| {
                format!("allocating the cuDNN workspace ({workspace_bytes} B): {e}")
            })?;
            let fastest =
                ok.first()
                    .filter(|p| !is_direct_sum(p.algo))
                    .map_or(String::new(), |p| {
                        format!(
                            "; fastest overall {} {:.4} ms, left out (not a direct sum)",
                            algo_name(p.algo),
                            p.time
                        )
                    });
            let layout = match f {
                None => format!("{} x[{n},1,1,{l}] w[1,1,1,{kw}]", descs.x.format.name()),
                Some(f) => format!(
                    "{} x[{n},1,1,{l}] y[{n},{f},1,{l}], weights transposed once to [f][kw] \
                     (KRSC)",
                    descs.x.format.name()
                ),
            };
            let description = format!(
                "cudnnConvolutionForward f16, f32 compute, cross-correlation pad (0,{}), {layout}; \
                 Find: {} {} {:.4} ms, workspace {workspace_bytes} B{fastest}",
                descs.pad.1,
                algo_name(chosen.algo),
                math_name(chosen.math_type),
                chosen.time,
            );
            Ok(Conv1d {
                dnn: dnn.clone(),
                descs,
                x,
                w,
                y,
                conv,
                algo,
                workspace,
                workspace_bytes,
                description,
            })
        })
    }

    /// The record's config string: layouts, algorithm, math type, Find's time, workspace.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// `y = conv(x, w)`; `w` is cuDNN's filter layout: for the multi-filter problem the
    /// transposed weights ([`transpose_weights`]).
    pub fn forward(
        &self,
        x: &Tensor<f16>,
        w: &Tensor<f16>,
        y: &mut Tensor<f16>,
    ) -> Result<(), String> {
        check_len("conv x", x, &self.descs.x)?;
        check_len("conv w", w, &self.descs.w)?;
        check_len("conv y", y, &self.descs.y)?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        guarded("cudnnConvolutionForward", || {
            bind(&self.dnn.stream)?;
            // SAFETY: handle and descriptors are live; x, w and y are device allocations of
            // this device with exactly the descriptors' packed elements (checked above), y is
            // borrowed mutably so it overlaps neither input; the workspace is a live device
            // allocation of at least `workspace_bytes` used only by this plan's launches, all
            // on the one stream, so never by two at once; alpha and beta are host floats
            // (cuDNN's scaling type for half data) read before the call returns.
            unsafe {
                dnn::convolution_forward(
                    self.dnn.handle,
                    (&alpha as *const f32).cast(),
                    self.x.0,
                    x.device_ptr() as *const c_void,
                    self.w.0,
                    w.device_ptr() as *const c_void,
                    self.conv.0,
                    self.algo,
                    self.workspace.device_ptr() as *mut c_void,
                    self.workspace_bytes,
                    (&beta as *const f32).cast(),
                    self.y.0,
                    y.device_ptr() as *mut c_void,
                )
            }
            .map_err(err("cudnnConvolutionForward"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_are_instances() {
        let (m, n) = (9, 5000);
        let d = softmax_desc(m, n);
        assert_eq!(d.dims, [m, n, 1, 1]);
        assert_eq!(d.len(), m * n);
        for (r, j) in [(0, 0), (3, 17), (m - 1, n - 1)] {
            assert_eq!(d.offset([r, j, 0, 0]), r * n + j);
        }
    }

    #[test]
    fn conv_single_maps_to_our_layout() {
        let (n, l, kw) = (5, 300, 7);
        let d = conv1d_descs(n, l, kw, None).unwrap();
        assert_eq!(d.pad, (0, 3));
        assert!(!d.transposed_weights);
        assert_eq!(d.x.dims, [n, 1, 1, l]);
        assert_eq!(d.y.dims, [n, 1, 1, l]);
        assert_eq!(d.w.dims, [1, 1, 1, kw]);
        for (r, p) in [(0, 0), (2, 123), (n - 1, l - 1)] {
            assert_eq!(d.x.offset([r, 0, 0, p]), r * l + p);
            assert_eq!(d.y.offset([r, 0, 0, p]), r * l + p);
        }
        for t in 0..kw {
            assert_eq!(d.w.offset([0, 0, 0, t]), t);
        }
        // Output width of a stride-1 convolution: l + 2·pad − kw + 1 = l.
        assert_eq!(l + 2 * d.pad.1 + 1 - kw, l);
    }

    #[test]
    fn conv_multi_maps_to_our_layout() {
        let (n, l, kw, f) = (3, 100, 7, 32);
        let d = conv1d_descs(n, l, kw, Some(f)).unwrap();
        assert_eq!(d.pad, (0, 3));
        assert!(d.transposed_weights);
        assert_eq!(d.y.dims, [n, f, 1, l]);
        assert_eq!(d.w.dims, [f, 1, 1, kw]);
        // O[r][p][j] at (r·l + p)·f + j.
        for (r, p, j) in [(0, 0, 0), (1, 57, 9), (n - 1, l - 1, f - 1)] {
            assert_eq!(d.y.offset([r, j, 0, p]), (r * l + p) * f + j);
            assert_eq!(d.x.offset([r, 0, 0, p]), r * l + p);
        }
        // cuDNN's filter element (K=j, S=t) is at j·kw + t: where transpose_weights puts our
        // W[t][j].
        let w: Vec<usize> = (0..kw * f).collect();
        let wt = transpose_weights(&w, kw, f);
        for (t, j) in [(0, 0), (3, 5), (kw - 1, f - 1)] {
            assert_eq!(wt[d.w.offset([j, 0, 0, t])], w[t * f + j]);
        }
    }

    #[test]
    fn even_taps_and_huge_tensors_are_refused() {
        assert!(conv1d_descs(4, 100, 6, None).is_err());
        let d = softmax_desc(1 << 16, 1 << 16);
        assert!(d.dims_i32().is_err());
        assert_eq!(softmax_desc(16_384, 16_384).dims_i32().unwrap()[1], 16_384);
    }

    #[test]
    fn only_direct_sums_are_chosen() {
        assert!((0..4).all(is_direct_sum));
        assert!(!(4..8).any(is_direct_sum));
        assert_eq!(algo_name(1), "IMPLICIT_PRECOMP_GEMM");
        assert_eq!(algo_name(99), "algo 99");
    }

    #[test]
    fn not_on_the_cpu() {
        let e = Dnn::new(&Device::cpu()).err().expect("no cuDNN on the CPU");
        assert!(e.contains("not a CUDA device"), "{e}");
    }
}
