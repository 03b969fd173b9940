//! Launch-time checks, called by the launchers `#[tile_kernel]` generates. They run before any
//! work is queued, so a failed check leaves every tensor untouched.

use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_info::KernelConfig;
use crate::tensor::Tensor;

pub use crate::kernel_info::default_config;
pub use crate::tensor::{check_aliasing, ArgRange};

/// How one dimension of a kernel parameter is constrained.
#[derive(Debug, Clone, Copy)]
pub enum DimSpec {
    /// A shape symbol, by index into the kernel's symbol list.
    Sym(usize),
    /// A const generic with its value in the chosen config.
    Const(&'static str, usize),
}

/// Binds shape symbols from the tensors passed to a launch, checking that every use agrees.
pub struct Binder {
    kernel: &'static str,
    names: &'static [&'static str],
    values: Vec<Option<(usize, String)>>,
}

impl Binder {
    pub fn new(kernel: &'static str, names: &'static [&'static str]) -> Binder {
        Binder {
            kernel,
            names,
            values: vec![None; names.len()],
        }
    }

    /// Checks the device, rank and dimensions of one tensor argument.
    pub fn tensor<T: Element>(
        &mut self,
        device: &Device,
        name: &'static str,
        t: &Tensor<T>,
        dims: &[DimSpec],
    ) -> Result<()> {
        if t.device() != device {
            return Err(Error::DeviceMismatch {
                kernel: self.kernel,
                tensor: name,
            });
        }
        // While this thread records a graph, the graph keeps the tensor's memory.
        t.keep_for_graph()?;
        if t.shape().len() != dims.len() {
            return Err(Error::RankMismatch {
                kernel: self.kernel,
                tensor: name,
                expected: dims.len(),
                found: t.shape().len(),
            });
        }
        for (d, (&found, spec)) in t.shape().iter().zip(dims).enumerate() {
            match *spec {
                DimSpec::Const(cname, v) => {
                    if found != v {
                        return Err(Error::ShapeMismatch {
                            kernel: self.kernel,
                            tensor: name,
                            dim: d,
                            symbol: cname,
                            expected: v,
                            found,
                            bound_by: crate::error::BOUND_BY_CONFIG.to_string(),
                        });
                    }
                }
                DimSpec::Sym(i) => match &self.values[i] {
                    Some((v, by)) if *v != found => {
                        return Err(Error::ShapeMismatch {
                            kernel: self.kernel,
                            tensor: name,
                            dim: d,
                            symbol: self.names[i],
                            expected: *v,
                            found,
                            bound_by: by.clone(),
                        })
                    }
                    Some(_) => {}
                    None => self.values[i] = Some((found, format!("dimension {d} of `{name}`"))),
                },
            }
        }
        Ok(())
    }

    /// The value of symbol `i`. Every symbol appears in some tensor type, so all are bound once
    /// every tensor has been checked.
    pub fn value(&self, i: usize) -> i64 {
        self.values[i].as_ref().map_or(0, |(v, _)| *v as i64)
    }

    /// `M = 64, N = 100` for error messages.
    pub fn describe(&self) -> String {
        self.names
            .iter()
            .zip(&self.values)
            .map(|(n, v)| {
                format!(
                    "{n} = {}",
                    v.as_ref().map_or("?".to_string(), |(v, _)| v.to_string())
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Validates the launch grid: each dimension in `0..=2^31-1`.
pub fn check_grid(kernel: &'static str, grid: [i64; 3]) -> Result<[i64; 3]> {
    if grid.iter().any(|&g| !(0..=i32::MAX as i64).contains(&g)) {
        return Err(Error::BadGrid {
            kernel,
            grid: grid.to_vec(),
        });
    }
    Ok(grid)
}

/// The generated `launch_auto`: tries `launch` with the config the tuning cache records for the
/// kernel, `arch` and `shape` (the shape symbols' values), then `arch`'s default, then every
/// config in the attribute's order, each once, and returns the first that launches. Errors
/// another config could avoid ([`Error::is_config_specific`]) move on to the next; any other
/// is returned at once; when none holds, [`Error::NoConfigFits`] with each config's reason.
pub fn launch_auto<C: KernelConfig>(
    arch: &str,
    shape: &[usize],
    mut launch: impl FnMut(C) -> Result<()>,
) -> Result<C> {
    let tuned =
        crate::tuning::tuned(C::KERNEL.name, arch, shape).and_then(|n| C::from_name(&n).ok());
    let mut order: Vec<C> = Vec::with_capacity(C::ALL.len() + 2);
    for c in tuned
        .into_iter()
        .chain([C::default_for(arch)])
        .chain(C::ALL.iter().copied())
    {
        if !order.contains(&c) {
            order.push(c);
        }
    }
    let mut reasons = Vec::new();
    for c in order {
        match launch(c) {
            Ok(()) => return Ok(c),
            Err(e) if e.is_config_specific() => reasons.push((c.name(), e.to_string())),
            Err(e) => return Err(e),
        }
    }
    Err(Error::NoConfigFits {
        kernel: C::KERNEL.name,
        reasons,
    })
}
