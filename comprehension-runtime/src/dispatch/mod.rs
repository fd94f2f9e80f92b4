//! The top of the runtime: where each run goes, and the terminals that send it there.
//!
//! The layers, each naming only those below it:
//!
//! ```text
//! dispatch     terminals (collect, reduce), placement, the record of runs     (this module)
//! cpu/, gpu/   the engines: the host executor, the device's plan executor
//! pipeline/    the stages and the traits the engines implement (Body, Driver, Executor)
//! backend      the choice of an engine (Backend, PARCOMP_BACKEND, thresholds)
//! ```
//!
//! `place` decides and runs, `terminal` holds `Comprehension::collect` and `::reduce` (the
//! calls the macro emits end there), `report` answers [`backend()`].

mod place;
mod report;
mod terminal;

pub use crate::gpu::threshold::device_threshold;
pub(crate) use place::{primitive, ran_on_host};
pub use report::{backend, BackendReport};
