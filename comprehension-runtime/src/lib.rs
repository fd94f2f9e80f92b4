//! The segmented runtime behind [parcomp](https://docs.rs/parcomp)'s `par!` comprehensions.
//!
//! - [`Source`]: what a generator reads by index (ranges, slices, `Vec`s, arrays, [`Jagged`]
//!   rows, and `map`/`step_by`/`rev` of those);
//! - [`Jagged`]: an array of arrays as offsets + values;
//! - `pipeline`: the chain of stages the macro emits (`source`, `expand`, `product`, `filter`,
//!   `bind`, `map`, `collect`), not a public API;
//! - [`segmented`]: `expand`, `expand_reduce`, `expand_outer_reduce`, `replicated_iota`,
//!   `segmented_iota`, `segmented_scan`, `segmented_reduce`, parallel scans and
//!   `sort_permutation`, on slices;
//! - the CPU backends (rayon, and a sequential reference), chosen by [`Backend`];
//! - with the `ndarray` feature, `ndarray`'s one-dimensional arrays as sources and the rows of
//!   its two-dimensional ones as rows; with `arrow`, Arrow's primitive arrays as sources and its
//!   list arrays as rows (`interop`).
//!
//! Users normally reach all of this through the `parcomp` crate.

#![warn(missing_docs)]

mod backend;
mod cpu;
mod device_vec;
mod dispatch;
#[doc(hidden)]
pub mod gpu;
#[cfg(any(feature = "arrow", feature = "ndarray", feature = "cuda-api"))]
pub mod interop;
mod jagged;
// The stages the emitted code chains: reached through `parcomp`'s macros, not named by users.
#[doc(hidden)]
pub mod pipeline;
pub mod segmented;
mod site;
pub mod source;
pub mod trace;
pub mod transform;

pub use backend::{
    set_device_threshold, with_backend, with_eager_splitting, Backend, DEFAULT_DEVICE_THRESHOLD,
};
pub use device_vec::{DeviceJagged, DeviceVec};
pub use dispatch::{backend, device_threshold, BackendReport};
pub use jagged::{Jagged, JaggedError, Rows};
pub use site::Site;

#[doc(hidden)]
pub use inventory;
pub use source::Source;
