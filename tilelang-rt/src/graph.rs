//! Graphs: a sequence of kernel launches recorded once and replayed with one call, which costs
//! the host one driver call however many kernels it holds (CUDA graphs).
//!
//! ```no_run
//! # fn demo(dev: &tilelang_rt::Device, step: impl Fn() -> tilelang_rt::Result<()>) -> tilelang_rt::Result<()> {
//! let graph = dev.record_graph(|| {
//!     step()?; // launches of `#[tile_kernel]` launchers, recorded instead of run
//!     step()
//! })?;
//! for _ in 0..100 {
//!     graph.launch()?; // both launches, in order, on the device's stream
//! }
//! dev.synchronize()?;
//! # Ok(()) }
//! ```
//!
//! What a graph keeps: the launches' kernels, grids and argument *values*, so the same tensors
//! (the same memory) every replay, whatever they hold by then. The graph keeps that memory
//! allocated until it is dropped, so dropping a tensor it uses is safe. Only launches are
//! recorded: a copy, fill, synchronize or timing on the recording thread while it records is an
//! [`Error::Graph`], because it would run at once, out of order with the recorded launches.
//! Launch-time checks (shapes, aliasing, configs) run while recording, as for any launch.
//!
//! Graphs exist on CUDA devices. The HIP backend queues work on the null stream and has no graph
//! support here yet, and the CPU backend runs launches at once; both refuse to record.

use crate::cuda;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::gpu_device::GpuDevice;
use std::fmt;

/// Kernel launches recorded by [`Device::record_graph`], replayed by [`Graph::launch`].
pub struct Graph {
    device: Device,
    graph: cuda::CudaGraph,
    launches: usize,
    /// The device memory the launches use, kept allocated while the graph can run.
    _keep: Vec<cuda::Kept>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph({} launches on {:?})", self.launches, self.device)
    }
}

impl Device {
    /// Runs `f`, recording the kernel launches it makes on this device from this thread into a
    /// graph instead of running them; see [`crate::graph`]. Launches of other threads run as
    /// usual. When `f` fails, nothing is recorded and its error is returned.
    ///
    /// # Errors
    /// `f`'s error; [`Error::Graph`] on a device without graph support (the CPU, HIP), while
    /// this device already records, for a non-launch operation inside `f`, or for a tensor made
    /// with [`crate::Tensor::from_raw_parts`]; [`Error::Driver`] when the driver refuses to
    /// create, extend or instantiate the graph.
    pub fn record_graph(&self, f: impl FnOnce() -> Result<()>) -> Result<Graph> {
        let gpu = match self.gpu() {
            Some(GpuDevice::Cuda(gpu)) => gpu,
            _ => {
                return Err(Error::Graph(format!(
                    "{self:?} cannot record graphs: graphs exist on CUDA devices only (the CPU \
                     backend runs launches at once; the HIP backend has no graphs yet)"
                )))
            }
        };
        gpu.begin_graph()?;
        // A panic in `f` must not leave the device recording.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let ok = matches!(ran, Ok(Ok(())));
        let ended = gpu.end_graph(ok);
        match ran {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(Err(e)) => Err(e),
            Ok(Ok(())) => {
                let rec = ended?.expect("instantiated when `f` succeeded");
                Ok(Graph {
                    device: self.clone(),
                    graph: rec.graph,
                    launches: rec.launches,
                    _keep: rec.keep,
                })
            }
        }
    }
}

impl Graph {
    /// Queues every recorded launch, in the order recorded, on the device's stream; returns once
    /// queued, like a launch.
    ///
    /// # Errors
    /// [`Error::Graph`] while this thread records another graph on the device;
    /// [`Error::Driver`] when the driver refuses the launch. A failure of the launched kernels
    /// shows at the next synchronizing call.
    pub fn launch(&self) -> Result<()> {
        match self.device.gpu() {
            Some(GpuDevice::Cuda(gpu)) => gpu.launch_graph(&self.graph),
            _ => unreachable!("graphs are only recorded on CUDA devices"),
        }
    }

    /// How many kernel launches the graph holds (a launch with an empty grid records nothing).
    pub fn launches(&self) -> usize {
        self.launches
    }

    /// The device the graph was recorded on, and runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_cannot_record() {
        let dev = Device::cpu();
        let mut ran = false;
        let e = dev
            .record_graph(|| {
                ran = true;
                Ok(())
            })
            .unwrap_err();
        assert!(!ran, "f must not run when nothing can be recorded");
        assert!(
            matches!(&e, Error::Graph(m) if m.contains("CUDA devices only")),
            "{e}"
        );
    }
}
