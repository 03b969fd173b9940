//! The CPU backend: the reference semantics of the kernel language.
//!
//! A launch runs every block of the grid one after another (x fastest, then y, then z). Inside
//! a block, statements run in program order, exactly as written:
//!
//! * **`parallel` loops** run their iterations in lexicographic order. The language promises
//!   nothing about order on a GPU, so a kernel is correct only if its iterations are
//!   independent (no iteration reads what another writes, no two write the same element).
//!   The compiler rejects assignments to variables declared outside the loop.
//! * **`serial` / `pipelined` loops** run in order; `pipelined` overlaps copies on a GPU
//!   but has the same meaning.
//! * **Fresh buffers** (`alloc_shared` / `alloc_fragment` / `alloc_local`) hold poison (NaN for
//!   floats, a fixed pattern for integers): reading an element before writing it shows up.
//! * **`copy(src, dst)`** converts each element to the destination's dtype (round to nearest
//!   even for floats; saturating for float → integer). A region `t.at(offsets)` has the shape
//!   of the buffer on the other side. Reading outside the tensor gives zero; writing outside the
//!   tensor is skipped. That is how tails are handled: the kernel needs no masks.
//! * **Element accesses** `t[(i, j)]` must be in bounds; out of bounds is a kernel bug, reported
//!   here as [`Error::OutOfBounds`] (on a GPU it would be undefined).
//! * **`reduce_sum` / `reduce_max`** overwrite the destination; they fold the reduced dimension
//!   in increasing index order in the buffer's dtype, starting from the first element.
//!   A GPU folds in a tree: results agree up to reassociation.
//! * **`gemm(a, b, c)`** computes `c[i][j] += Σ_k a[i][k]·b[k][j]`, each product converted to
//!   `c`'s dtype and added in increasing `k`.
//! * **Arithmetic** follows the element type: f16/bf16 round after every operation; integer
//!   arithmetic wraps (as on a GPU); integer division by zero is [`Error::DivisionByZero`].
//!   Math functions on f16/bf16 are evaluated in f32 and rounded.

use crate::element::Element;
use crate::error::{Error, Result};
use half::{bf16, f16};

pub use crate::scalar::{round_f64, Arith, Scalar};

/// `x as T` in the kernel language.
#[inline(always)]
pub fn cast<A: Scalar, B: Scalar>(a: A) -> B {
    if std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>() {
        // SAFETY: `A` and `B` are the same type; the value moves bit for bit (NaN payloads too).
        return unsafe { std::mem::transmute_copy(&a) };
    }
    if A::NARROW_FLOAT && B::NARROW_FLOAT {
        return B::from_f32(a.to_f32());
    }
    if A::IS_FLOAT || B::IS_FLOAT {
        B::from_f64(a.to_f64())
    } else {
        B::from_i64(a.to_i64())
    }
}

/// A literal of type `T` (converted once, at the literal's site).
#[inline(always)]
pub fn lit<T: Scalar>(v: f64) -> T {
    T::from_f64(v)
}

#[inline(always)]
pub fn add<T: Arith>(a: T, b: T) -> T {
    a.add(b)
}
#[inline(always)]
pub fn sub<T: Arith>(a: T, b: T) -> T {
    a.sub(b)
}
#[inline(always)]
pub fn mul<T: Arith>(a: T, b: T) -> T {
    a.mul(b)
}
#[inline(always)]
pub fn neg<T: Arith>(a: T) -> T {
    a.neg()
}
#[inline(always)]
pub fn div<T: Arith>(a: T, b: T, kernel: &'static str) -> Result<T> {
    a.div(b).ok_or(Error::DivisionByZero { kernel })
}
#[inline(always)]
pub fn rem<T: Arith>(a: T, b: T, kernel: &'static str) -> Result<T> {
    a.rem(b).ok_or(Error::DivisionByZero { kernel })
}
/// `a.div_ceil(b)` on integers (rounding towards +∞ for positive `b`).
#[inline(always)]
pub fn div_ceil<T: Arith>(a: T, b: T, kernel: &'static str) -> Result<T> {
    let one = T::from_i64(1);
    let q = div(a, b, kernel)?;
    let r = rem(a, b, kernel)?;
    let zero = T::from_i64(0);
    Ok(if r != zero && ((r > zero) == (b > zero)) {
        q.add(one)
    } else {
        q
    })
}

/// Shifts take the amount modulo the bit width, as GPU shift instructions do.
pub trait Shift: Copy {
    fn shl(self, n: Self) -> Self;
    fn shr(self, n: Self) -> Self;
}
macro_rules! shift {
    ($t:ty) => {
        impl Shift for $t {
            #[inline(always)]
            fn shl(self, n: Self) -> Self {
                self.wrapping_shl(n as u32)
            }
            #[inline(always)]
            fn shr(self, n: Self) -> Self {
                self.wrapping_shr(n as u32)
            }
        }
    };
}
shift!(i32);
shift!(u32);
shift!(u8);
shift!(i64);
#[inline(always)]
pub fn shl<T: Shift>(a: T, b: T) -> T {
    a.shl(b)
}
#[inline(always)]
pub fn shr<T: Shift>(a: T, b: T) -> T {
    a.shr(b)
}

/// The math functions. Half-precision types compute in f32 and round once; f32 and f64 use
/// their own precision, except `sigmoid` on f32, computed in f64 and rounded once. What each
/// guarantees is in `docs/language.md` ("Math functions"): `floor`, `ceil`, `sqrt`, `abs`
/// and `fma` on f32/f64 are correctly rounded; `tanh`, `erf`, `sin`, `cos`, `pow` are musl's
/// (through the `libm` crate: the same bits on every host), within 1 ulp.
pub trait Math: Scalar {
    fn exp(self) -> Self;
    fn exp2(self) -> Self;
    fn log(self) -> Self;
    fn sqrt(self) -> Self;
    fn rsqrt(self) -> Self;
    fn abs(self) -> Self;
    fn tanh(self) -> Self;
    fn erf(self) -> Self;
    fn sigmoid(self) -> Self;
    fn pow(self, y: Self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn fma(self, b: Self, c: Self) -> Self;
}

/// The functions of one working precision (`f32` or `f64`), by name.
trait Libm: Copy {
    fn tanh(self) -> Self;
    fn erf(self) -> Self;
    fn sigmoid(self) -> Self;
    fn pow(self, y: Self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn fma(self, b: Self, c: Self) -> Self;
}
macro_rules! libm_for {
    ($t:ty: $tanh:ident, $erf:ident, $pow:ident, $sin:ident, $cos:ident, $fma:ident) => {
        impl Libm for $t {
            fn tanh(self) -> $t {
                libm::$tanh(self)
            }
            fn erf(self) -> $t {
                libm::$erf(self)
            }
            fn sigmoid(self) -> $t {
                // In f64, rounded once (for f32: 1 / (1 + e^-x) in f32 would round three times),
                // as e^-|x| / (1 + e^-|x|) below 0: e^-x overflows there, e^x reaches the
                // subnormals.
                let x = self as f64;
                let e = libm::exp(-x.abs());
                (if x >= 0.0 {
                    1.0 / (1.0 + e)
                } else {
                    e / (1.0 + e)
                }) as $t
            }
            fn pow(self, y: $t) -> $t {
                libm::$pow(self, y)
            }
            fn sin(self) -> $t {
                libm::$sin(self)
            }
            fn cos(self) -> $t {
                libm::$cos(self)
            }
            fn fma(self, b: $t, c: $t) -> $t {
                libm::$fma(self, b, c)
            }
        }
    };
}
libm_for!(f32: tanhf, erff, powf, sinf, cosf, fmaf);
libm_for!(f64: tanh, erf, pow, sin, cos, fma);

macro_rules! math_via {
    ($t:ty, $w:ty, $to:expr, $from:expr) => {
        impl Math for $t {
            #[inline(always)]
            fn exp(self) -> Self {
                $from($to(self).exp())
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                $from($to(self).exp2())
            }
            #[inline(always)]
            fn log(self) -> Self {
                $from($to(self).ln())
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $from($to(self).sqrt())
            }
            #[inline(always)]
            fn rsqrt(self) -> Self {
                $from(1.0 / $to(self).sqrt())
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $from($to(self).abs())
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $from(Libm::tanh($to(self)))
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $from(Libm::erf($to(self)))
            }
            #[inline(always)]
            fn sigmoid(self) -> Self {
                $from(Libm::sigmoid($to(self)))
            }
            #[inline(always)]
            fn pow(self, y: Self) -> Self {
                $from(Libm::pow($to(self), $to(y)))
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $from(Libm::sin($to(self)))
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $from(Libm::cos($to(self)))
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $from($to(self).floor())
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $from($to(self).ceil())
            }
            #[inline(always)]
            fn fma(self, b: Self, c: Self) -> Self {
                // Halves: the product of two is exact in f32, so this rounds the sum twice
                // (f32, then the half type): within 1 ulp.
                $from(Libm::fma($to(self), $to(b), $to(c)))
            }
        }
    };
}
math_via!(f16, f32, |x: f16| x.to_f32(), f16::from_f32);
math_via!(bf16, f32, |x: bf16| x.to_f32(), bf16::from_f32);
math_via!(f32, f32, |x: f32| x, |x: f32| x);
math_via!(f64, f64, |x: f64| x, |x: f64| x);

macro_rules! math_fns {
    ($($name:ident($($arg:ident),*)),* $(,)?) => {
        $(
            #[inline(always)]
            pub fn $name<T: Math>(x: T $(, $arg: T)*) -> T {
                x.$name($($arg),*)
            }
        )*
    };
}
math_fns!(
    exp(),
    exp2(),
    log(),
    sqrt(),
    rsqrt(),
    tanh(),
    erf(),
    sigmoid(),
    pow(y),
    sin(),
    cos(),
    floor(),
    ceil(),
    fma(b, c),
);

/// `abs` on integers and floats.
#[inline(always)]
pub fn abs<T: Scalar + Arith>(x: T) -> T {
    if T::IS_FLOAT {
        T::from_f64(x.to_f64().abs())
    } else if x < T::from_i64(0) {
        x.neg()
    } else {
        x
    }
}

/// NaN is the one value unordered with itself.
#[inline(always)]
fn is_nan<T: PartialOrd>(x: T) -> bool {
    x.partial_cmp(&x).is_none()
}

/// `max(a, b)`; with one NaN operand the other is returned (IEEE maxNum, as `fmaxf`).
#[inline(always)]
pub fn max<T: Scalar>(a: T, b: T) -> T {
    if is_nan(a) || b > a {
        b
    } else {
        a
    }
}

/// `min(a, b)`; with one NaN operand the other is returned (IEEE minNum, as `fminf`).
#[inline(always)]
pub fn min<T: Scalar>(a: T, b: T) -> T {
    if is_nan(a) || b < a {
        b
    } else {
        a
    }
}

#[inline(always)]
fn linear<const R: usize>(idx: [i64; R], shape: &[i64; R]) -> Option<usize> {
    let mut lin: i64 = 0;
    for d in 0..R {
        if idx[d] < 0 || idx[d] >= shape[d] {
            return None;
        }
        lin = lin * shape[d] + idx[d];
    }
    Some(lin as usize)
}

fn oob<const R: usize>(
    kernel: &'static str,
    buffer: &'static str,
    idx: [i64; R],
    shape: &[i64; R],
) -> Error {
    Error::OutOfBounds {
        kernel,
        buffer,
        index: idx.to_vec(),
        shape: shape.to_vec(),
    }
}

fn shape_of<const R: usize>(dims: &[usize]) -> [i64; R] {
    let mut s = [0i64; R];
    for (d, v) in s.iter_mut().zip(dims) {
        *d = *v as i64;
    }
    s
}

/// An n-dimensional, row-major, bounds-checked view of elements inside a CPU kernel: a tensor
/// argument (`In`, `Out`) or a tile buffer (`Buf`), depending on what holds the data.
pub struct View<D, T, const R: usize> {
    kernel: &'static str,
    name: &'static str,
    data: D,
    shape: [i64; R],
    _elem: std::marker::PhantomData<T>,
}

/// A read-only tensor argument.
pub type In<'a, T, const R: usize> = View<&'a [T], T, R>;
/// A writable tensor argument.
pub type Out<'a, T, const R: usize> = View<&'a mut [T], T, R>;
/// A tile buffer (shared, fragment or local). Fresh buffers hold poison.
pub type Buf<T, const R: usize> = View<Vec<T>, T, R>;

impl<'a, T: Element, const R: usize> View<&'a [T], T, R> {
    pub fn new(kernel: &'static str, name: &'static str, data: &'a [T], dims: &[usize]) -> Self {
        View {
            kernel,
            name,
            data,
            shape: shape_of(dims),
            _elem: std::marker::PhantomData,
        }
    }
}

impl<'a, T: Element, const R: usize> View<&'a mut [T], T, R> {
    pub fn new(
        kernel: &'static str,
        name: &'static str,
        data: &'a mut [T],
        dims: &[usize],
    ) -> Self {
        View {
            kernel,
            name,
            data,
            shape: shape_of(dims),
            _elem: std::marker::PhantomData,
        }
    }
}

impl<T: Element, const R: usize> View<Vec<T>, T, R> {
    pub fn new(kernel: &'static str, name: &'static str, shape: [i64; R]) -> Self {
        let n: i64 = shape.iter().product();
        View {
            kernel,
            name,
            data: vec![T::POISON; n as usize],
            shape,
            _elem: std::marker::PhantomData,
        }
    }
    pub fn fill(&mut self, v: T) {
        self.data.fill(v);
    }
    pub fn data(&self) -> &[T] {
        &self.data
    }
}

impl<D: AsRef<[T]>, T: Element, const R: usize> View<D, T, R> {
    #[inline(always)]
    pub fn get(&self, idx: [i64; R]) -> Result<T> {
        match linear(idx, &self.shape) {
            Some(i) => Ok(self.data.as_ref()[i]),
            None => Err(oob(self.kernel, self.name, idx, &self.shape)),
        }
    }
    pub fn shape(&self) -> [i64; R] {
        self.shape
    }
}

impl<D: AsRef<[T]> + AsMut<[T]>, T: Element, const R: usize> View<D, T, R> {
    #[inline(always)]
    pub fn set(&mut self, idx: [i64; R], v: T) -> Result<()> {
        match linear(idx, &self.shape) {
            Some(i) => {
                self.data.as_mut()[i] = v;
                Ok(())
            }
            None => Err(oob(self.kernel, self.name, idx, &self.shape)),
        }
    }
    #[inline(always)]
    pub fn atomic_add(&mut self, idx: [i64; R], v: T) -> Result<()> {
        let old = self.get(idx)?;
        self.set(idx, old.add(v))
    }
}

/// `copy(t.at(offset), &mut buf)`: out-of-bounds elements read as zero. The buffer may drop
/// leading dimensions of the tensor (rank `S` ≤ `R`): it is the region's extent-1 dimensions.
pub fn copy_from_global<G: AsRef<[S]>, S: Element, D: Element, const R: usize, const B: usize>(
    src: &View<G, S, R>,
    offset: [i64; R],
    dst: &mut Buf<D, B>,
) -> Result<()> {
    tiles::copy_from_global(
        src.data.as_ref(),
        &src.shape,
        &offset,
        &mut dst.data,
        &dst.shape,
    );
    Ok(())
}

/// `copy(&buf, t.at_mut(offset))`: out-of-bounds elements are not written. The buffer may drop
/// leading dimensions of the tensor, as in [`copy_from_global`].
pub fn copy_to_global<S: Element, D: Element, const R: usize, const B: usize>(
    src: &Buf<S, B>,
    dst: &mut Out<'_, D, R>,
    offset: [i64; R],
) -> Result<()> {
    tiles::copy_to_global(&src.data, &src.shape, dst.data, &dst.shape, &offset);
    Ok(())
}

/// `copy(&a, &mut b)` between buffers of the same shape, converting the dtype.
pub fn copy_buf<S: Element, D: Element, const R: usize>(
    src: &Buf<S, R>,
    dst: &mut Buf<D, R>,
) -> Result<()> {
    tiles::copy_buf(&src.data, &mut dst.data);
    Ok(())
}

/// `gemm(&a, &b, &mut c)`: `c += a·b`, products converted to `c`'s dtype, `k` ascending.
pub fn gemm<A: Element, C: Element>(a: &Buf<A, 2>, b: &Buf<A, 2>, c: &mut Buf<C, 2>) -> Result<()> {
    gemm_t::<false, false, A, C>(a, b, c)
}

/// `gemm` with operands marked `.t()`: `TA` reads `a` stored (K, M) as A (M, K), `TB` reads
/// `b` stored (N, K) as B (K, N).
pub fn gemm_t<const TA: bool, const TB: bool, A: Element, C: Element>(
    a: &Buf<A, 2>,
    b: &Buf<A, 2>,
    c: &mut Buf<C, 2>,
) -> Result<()> {
    tiles::gemm(&a.data, a.shape, TA, &b.data, b.shape, TB, &mut c.data);
    Ok(())
}

pub fn reduce_sum<T: Element, const R: usize, const R2: usize>(
    src: &Buf<T, R>,
    dst: &mut Buf<T, R2>,
    dim: usize,
) -> Result<()> {
    tiles::reduce_sum(&src.data, &src.shape, &mut dst.data, dim);
    Ok(())
}

pub fn reduce_max<T: Element, const R: usize, const R2: usize>(
    src: &Buf<T, R>,
    dst: &mut Buf<T, R2>,
    dim: usize,
) -> Result<()> {
    tiles::reduce_max(&src.data, &src.shape, &mut dst.data, dim);
    Ok(())
}

/// The tile operations on slices with shapes known at run time: what the functions above do
/// for the macro's const-rank views, for a caller that learns ranks and dtypes only when it
/// runs (the differential tester's IR evaluator). One implementation serves both.
pub mod tiles {
    use super::{cast, max, Element};

    /// The most dimensions a tensor has.
    const MAX_RANK: usize = 8;

    /// Calls `f(buffer_row, tensor_row, first, last)` for every row of a region. The buffer's
    /// row starts at element `buffer_row`; its in-bounds columns are `first..last`; buffer
    /// column `c` is tensor element `tensor_row + c`. `tensor_row` is `None` when the row has
    /// no element inside the tensor. The three slices have the tensor's rank.
    fn for_each_row(
        buf_shape: &[i64],
        tensor_shape: &[i64],
        offset: &[i64],
        mut f: impl FnMut(usize, Option<usize>, usize, usize),
    ) {
        let r = buf_shape.len();
        let cols = buf_shape[r - 1];
        let rows: i64 = buf_shape[..r - 1].iter().product();
        let lo = (-offset[r - 1]).clamp(0, cols);
        let hi = (tensor_shape[r - 1] - offset[r - 1]).clamp(lo, cols);
        let mut idx = [0i64; MAX_RANK];
        for row in 0..rows {
            // Decompose the row number into the leading indices.
            let mut n = row;
            for d in (0..r - 1).rev() {
                idx[d] = n % buf_shape[d];
                n /= buf_shape[d];
            }
            let mut inside = true;
            let mut lin: i64 = 0;
            for d in 0..r - 1 {
                let g = offset[d] + idx[d];
                inside &= g >= 0 && g < tensor_shape[d];
                lin = lin * tensor_shape[d] + g;
            }
            // `tensor_row + lo` is in bounds whenever the row is inside; shift by `lo` so the
            // value handed out is never negative.
            let tstart = if inside && hi > lo {
                Some((lin * tensor_shape[r - 1] + offset[r - 1] + lo) as usize)
            } else {
                None
            };
            f((row * cols) as usize, tstart, lo as usize, hi as usize);
        }
    }

    /// A buffer's shape as a region of a rank-`rank` tensor: leading extents of 1 for the
    /// dimensions the buffer drops (a `(BM, BK)` tile of a `(B, M, K)` tensor is its
    /// `(1, BM, BK)` region).
    fn region_shape(shape: &[i64], rank: usize) -> [i64; MAX_RANK] {
        assert!(
            shape.len() <= rank && rank <= MAX_RANK,
            "a tile of higher rank than its tensor: validation refuses this"
        );
        let mut out = [1i64; MAX_RANK];
        out[rank - shape.len()..rank].copy_from_slice(shape);
        out
    }

    /// `copy(t.at(offset), &mut buf)` on a tensor's elements `src` of shape `src_shape` and a
    /// buffer's `dst` of shape `dst_shape` (rank at most the tensor's): out-of-bounds elements
    /// read as zero.
    pub fn copy_from_global<S: Element, D: Element>(
        src: &[S],
        src_shape: &[i64],
        offset: &[i64],
        dst: &mut [D],
        dst_shape: &[i64],
    ) {
        let rank = src_shape.len();
        let zero = D::from_f64(0.0);
        let bshape = region_shape(dst_shape, rank);
        let cols = bshape[rank - 1] as usize;
        for_each_row(&bshape[..rank], src_shape, offset, |b, t, lo, hi| {
            let row = &mut dst[b..b + cols];
            match t {
                Some(t) => {
                    row[..lo].fill(zero);
                    for (o, s) in row[lo..hi].iter_mut().zip(&src[t..t + (hi - lo)]) {
                        *o = cast(*s);
                    }
                    row[hi..].fill(zero);
                }
                None => row.fill(zero),
            }
        });
    }

    /// `copy(&buf, t.at_mut(offset))`: out-of-bounds elements are not written.
    pub fn copy_to_global<S: Element, D: Element>(
        src: &[S],
        src_shape: &[i64],
        dst: &mut [D],
        dst_shape: &[i64],
        offset: &[i64],
    ) {
        let rank = dst_shape.len();
        let bshape = region_shape(src_shape, rank);
        for_each_row(&bshape[..rank], dst_shape, offset, |b, t, lo, hi| {
            if let Some(t) = t {
                for (o, s) in dst[t..t + (hi - lo)].iter_mut().zip(&src[b + lo..b + hi]) {
                    *o = cast(*s);
                }
            }
        });
    }

    /// `copy(&a, &mut b)` between buffers of the same shape, converting the dtype.
    pub fn copy_buf<S: Element, D: Element>(src: &[S], dst: &mut [D]) {
        for (o, s) in dst.iter_mut().zip(src) {
            *o = cast(*s);
        }
    }

    /// `c += A·B`: A (m, k) is `a` of shape `a_shape`, (m, k), or (k, m) when `ta`; B (k, n)
    /// is `b` of `b_shape`, (k, n), or (n, k) when `tb`; `c` is (m, n). Each product is
    /// converted to `C` and added in increasing `k`.
    pub fn gemm<A: Element, C: Element>(
        a: &[A],
        a_shape: [i64; 2],
        ta: bool,
        b: &[A],
        b_shape: [i64; 2],
        tb: bool,
        c: &mut [C],
    ) {
        let [a0, a1] = a_shape.map(|x| x as usize);
        let (m, k) = if ta { (a1, a0) } else { (a0, a1) };
        let n = b_shape[usize::from(!tb)] as usize;
        // B as (k, n), row-major.
        let bc: Vec<C> = (0..k * n)
            .map(|e| {
                let (kk, j) = (e / n, e % n);
                cast(b[if tb { j * k + kk } else { e }])
            })
            .collect();
        for i in 0..m {
            let crow = &mut c[i * n..(i + 1) * n];
            for kk in 0..k {
                let av: C = cast(a[if ta { kk * m + i } else { i * k + kk }]);
                let brow = &bc[kk * n..(kk + 1) * n];
                for (cv, &bv) in crow.iter_mut().zip(brow) {
                    *cv = cv.add(av.mul(bv));
                }
            }
        }
    }

    /// Folds `src` of shape `src_shape` along `dim` with `f` into `dst`, in increasing index
    /// order from the first element.
    pub fn reduce<T: Element>(
        src: &[T],
        src_shape: &[i64],
        dst: &mut [T],
        dim: usize,
        f: impl Fn(T, T) -> T,
    ) {
        let outer: i64 = src_shape[..dim].iter().product();
        let len = src_shape[dim];
        let inner: i64 = src_shape[dim + 1..].iter().product();
        for o in 0..outer {
            for i in 0..inner {
                let base = (o * len * inner + i) as usize;
                let mut acc = src[base];
                for r in 1..len {
                    acc = f(acc, src[base + (r * inner) as usize]);
                }
                dst[(o * inner + i) as usize] = acc;
            }
        }
    }

    /// `reduce_max`'s fold: [`max`].
    pub fn reduce_max<T: Element>(src: &[T], src_shape: &[i64], dst: &mut [T], dim: usize) {
        reduce(src, src_shape, dst, dim, max)
    }

    /// `reduce_sum`'s fold: `add`.
    pub fn reduce_sum<T: Element>(src: &[T], src_shape: &[i64], dst: &mut [T], dim: usize) {
        reduce(src, src_shape, dst, dim, |a, b| a.add(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_t_is_gemm_of_the_transposed_copies() {
        // A (3, 5), B (5, 4); A stored (5, 3) and B stored (4, 5) read with `.t()`.
        let (m, k, n) = (3usize, 5usize, 4usize);
        let a: Vec<f32> = (0..m * k).map(|x| (x * 7 % 11) as f32 - 5.0).collect();
        let b: Vec<f32> = (0..k * n).map(|x| (x * 5 % 13) as f32 - 6.0).collect();
        let at: Vec<f32> = (0..m * k).map(|e| a[(e % m) * k + e / m]).collect();
        let bt: Vec<f32> = (0..k * n).map(|e| b[(e % k) * n + e / k]).collect();
        let mut want = vec![0.5f32; m * n];
        tiles::gemm(&a, [3, 5], false, &b, [5, 4], false, &mut want);
        for (ta, tb) in [(true, false), (false, true), (true, true)] {
            let (sa, sb) = (
                if ta { [5, 3] } else { [3, 5] },
                if tb { [4, 5] } else { [5, 4] },
            );
            let mut c = vec![0.5f32; m * n];
            let (x, y) = (if ta { &at } else { &a }, if tb { &bt } else { &b });
            tiles::gemm(x, sa, ta, y, sb, tb, &mut c);
            assert_eq!(c, want, "ta {ta}, tb {tb}");
        }
        // And the product itself, one element.
        let c01: f32 = 0.5 + (0..k).map(|kk| a[kk] * b[kk * n + 1]).sum::<f32>();
        assert_eq!(want[1], c01);
    }

    #[test]
    fn copy_tails_read_zero_and_skip_writes() {
        let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
        let src = In::<f32, 2>::new("k", "a", &data[..], &[3, 4]);
        let mut buf = Buf::<f32, 2>::new("k", "s", [2, 3]);
        copy_from_global(&src, [2, 2], &mut buf).unwrap();
        assert_eq!(buf.data(), &[10.0, 11.0, 0.0, 0.0, 0.0, 0.0]);
        copy_from_global(&src, [-1, -1], &mut buf).unwrap();
        assert_eq!(buf.data(), &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);

        let mut out = vec![-1.0f32; 12];
        let mut dst = Out::<f32, 2>::new("k", "c", &mut out[..], &[3, 4]);
        let mut b = Buf::<f32, 2>::new("k", "s", [2, 3]);
        b.fill(7.0);
        copy_to_global(&b, &mut dst, [2, 2]).unwrap();
        assert_eq!(
            out,
            vec![-1., -1., -1., -1., -1., -1., -1., -1., -1., -1., 7., 7.]
        );
    }

    #[test]
    fn reductions_fold_in_order() {
        let mut s = Buf::<f32, 2>::new("k", "s", [2, 3]);
        for (i, v) in [1.0, 5.0, 2.0, -1.0, -3.0, -2.0].into_iter().enumerate() {
            s.set([i as i64 / 3, i as i64 % 3], v).unwrap();
        }
        let mut d = Buf::<f32, 1>::new("k", "d", [2]);
        reduce_sum(&s, &mut d, 1).unwrap();
        assert_eq!(d.data(), &[8.0, -6.0]);
        reduce_max(&s, &mut d, 1).unwrap();
        assert_eq!(d.data(), &[5.0, -1.0]);
        let mut e = Buf::<f32, 1>::new("k", "e", [3]);
        reduce_sum(&s, &mut e, 0).unwrap();
        assert_eq!(e.data(), &[0.0, 2.0, 0.0]);
    }

    #[test]
    fn out_of_bounds_is_an_error() {
        let b = Buf::<f32, 1>::new("k", "s", [4]);
        assert!(matches!(b.get([4]), Err(Error::OutOfBounds { .. })));
        assert!(matches!(b.get([-1]), Err(Error::OutOfBounds { .. })));
    }

    #[test]
    fn integer_semantics() {
        assert_eq!(div_ceil(7i64, 2, "k").unwrap(), 4);
        assert_eq!(div_ceil(-7i64, 2, "k").unwrap(), -3);
        assert_eq!(div_ceil(8i64, 2, "k").unwrap(), 4);
        assert!(div(1i32, 0, "k").is_err());
        assert_eq!(add(250u8, 10), 4);
        assert_eq!(cast::<f32, u8>(300.0), 255);
        assert_eq!(cast::<i32, u8>(300), 44);
        assert_eq!(cast::<f32, f16>(1.0 / 3.0), f16::from_f32(1.0 / 3.0));
        // One rounding from f64 (not f64 → f32 → f16).
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(cast::<f64, f16>(x).to_bits(), 0x3c01);
        assert_eq!(lit::<f16>(x).to_bits(), 0x3c01);
        // Same-type copies keep NaN payloads.
        let snan = f16::from_bits(0x7c01);
        assert_eq!(cast::<f16, f16>(snan).to_bits(), 0x7c01);
        // The f64 rounding agrees with half's f32 conversions wherever f32 is exact.
        let mut r = 0x1234_5678_9abc_def1u64;
        for _ in 0..200_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let v = f32::from_bits(r as u32);
            if v.is_nan() {
                continue;
            }
            assert_eq!(
                cast::<f64, f16>(v as f64).to_bits(),
                f16::from_f32(v).to_bits(),
                "{v:e}"
            );
            assert_eq!(
                cast::<f64, bf16>(v as f64).to_bits(),
                bf16::from_f32(v).to_bits(),
                "{v:e}"
            );
        }
        assert_eq!(cast::<f64, f16>(65520.0).to_bits(), 0x7c00);
        assert_eq!(cast::<f64, f16>(65519.0).to_bits(), 0x7bff);
        assert_eq!(cast::<f64, f16>(2f64.powi(-25)).to_bits(), 0x0000);
        assert_eq!(cast::<f64, f16>(2f64.powi(-25) * 1.5).to_bits(), 0x0001);
        assert_eq!(cast::<f64, f16>(-2f64.powi(-24)).to_bits(), 0x8001);
        assert_eq!(max(f32::NAN, 1.0), 1.0);
        assert_eq!(max(1.0, f32::NAN), 1.0);
    }

    #[test]
    fn gemm_accumulates() {
        let mut a = Buf::<f16, 2>::new("k", "a", [2, 2]);
        let mut b = Buf::<f16, 2>::new("k", "b", [2, 2]);
        let mut c = Buf::<f32, 2>::new("k", "c", [2, 2]);
        for (i, v) in [1.0, 2.0, 3.0, 4.0].into_iter().enumerate() {
            a.set([i as i64 / 2, i as i64 % 2], f16::from_f32(v))
                .unwrap();
            b.set([i as i64 / 2, i as i64 % 2], f16::from_f32(v))
                .unwrap();
        }
        c.fill(1.0);
        gemm(&a, &b, &mut c).unwrap();
        assert_eq!(c.data(), &[8.0, 11.0, 16.0, 23.0]);
    }
}
