//! The GPU backend: comprehensions flattened by expansion and run on a device.
//!
//! Three layers (see `README.md` in this folder):
//!
//! - **the contract** with the macro: the static device plan (`plan.rs`), the values the emitted
//!   code observes (`offload.rs`, `host_data.rs`, `output_codec.rs`), the device types
//!   (`types.rs`), the `#[par_fn]` registry (`par_fn.rs`);
//! - **the engine**: preparation (`run.rs`: type inference in `infer.rs`, program assembly in
//!   `program.rs`, found in the kernel bundles of `bundle.rs` or the disk cache of `cache.rs`, and
//!   recorded for bundling by `record.rs`), the executor (`executor.rs`) and its sinks
//!   (`sinks.rs`), the segmented primitives and the sort (`segmented.rs`, `sort.rs`), all drawing
//!   device memory from one metered session per run (`arena.rs`), faults (`fault.rs`), values
//!   kept on the device (`resident.rs`), the automatic threshold (`calibrate.rs`,
//!   `threshold.rs`);
//! - **the hardware**: the `Device` and `Queue` traits (`device.rs`) and their implementations
//!   (`opencl/`, `cuda/`, sharing the pinned staging of their copies, `staging.rs`), behind one
//!   table (`devices.rs`).

mod arena;
pub mod bundle;
mod cache;
pub mod calibrate;
#[cfg(feature = "cuda-api")]
pub mod cuda;
pub mod device;
mod devices;
mod executor;
mod failure;
mod fault;
pub mod host_data;
mod infer;
pub mod offload;
#[cfg(feature = "opencl")]
pub(crate) mod opencl;
pub mod output_codec;
pub mod par_fn;
pub mod plan;
mod program;
pub mod resident;
mod run;
pub(crate) mod segmented;
mod sinks;
pub(crate) mod sort;
// Its users are the device backends, which a build without a device feature lacks.
pub mod record;
#[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
mod staging;
pub(crate) mod threshold;
pub mod types;

pub use cache::entries as cache_entries;
pub(crate) use devices::{automatic_device, device_names, say_once_why_not};
pub use devices::{device, device_for};
pub use executor::{last_run_stats, KernelCost, RunStats};
pub(crate) use failure::{warn_once, DeviceFailure};
pub use offload::{Offload, OutputProbe};
pub use output_codec::OutputCodec;
pub(crate) use program::PrimitivePrograms;
#[cfg(any(feature = "opencl", feature = "cuda-api"))]
pub(crate) use run::record_for_gpu;
#[cfg(any(feature = "opencl", feature = "cuda-api"))]
pub(crate) use run::reduce;
pub(crate) use run::{collect, collect_resident};

/// The dialect prelude every kernel starts with, after the fault codes' `#define`s (generated
/// from the contract's table).
pub fn prelude() -> String {
    parcomp_contract::fault_defines() + include_str!("kernels/prelude.h")
}
/// Rust's arithmetic, comparisons, casts and numeric methods for every primitive type.
pub const SCALAR: &str = include_str!("kernels/scalar.h");
