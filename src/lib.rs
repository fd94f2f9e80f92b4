//! # parcomp — data-parallel array comprehensions for Rust
//!
//! ```
//! use parcomp::par;
//!
//! let n = 30;
//! let triples = par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z];
//! assert_eq!(triples[..3], [(3, 4, 5), (5, 12, 13), (6, 8, 10)]);
//! ```
//!
//! A comprehension is compiled at build time into calls to a segmented runtime that runs on
//! every core (rayon). Nested generators whose bounds depend on earlier variables — an
//! *irregular* iteration space — are flattened by *expansion*: the runtime knows the size of
//! every row before running it, so it divides the work evenly across threads even when one row
//! is a million times longer than the others.
//!
//! ## The language
//!
//! `par![HEAD | QUALIFIERS]` returns a `Vec` of `HEAD` in nested-loop order (the order of
//! Haskell and Python list comprehensions), the same on every backend and thread count.
//! Qualifiers are separated by `,`:
//!
//! - a **generator** `PAT <- EXPR` (`PAT` is an identifier, `_`, or a nested tuple; a pattern
//!   that may not match, such as `Some(v)`, skips the elements it does not match);
//! - a **filter**, any `bool` expression, after the first generator;
//! - a **`let PAT = EXPR`**, binding a value for each element.
//!
//! `<-` is written without a space (`x < -y` is a comparison). A `|` inside an expression
//! (bitwise or, a closure) must be parenthesised.
//!
//! What a generator may be:
//!
//! - anything that does not use the comprehension's variables and implements [`Source`]:
//!   ranges `a..b` / `a..=b` of any integer type, slices, `Vec`s, arrays, a `&Jagged` (its
//!   rows) — evaluated once;
//! - when it uses earlier variables, a form whose size is known without building it: a range
//!   `x..n`, `R.map(f)`, `R.step_by(k)`, `R.rev()` of such an `R`, a row `rows[x]` /
//!   `m.row(i)` of a collection that does not use them, or a variable bound earlier that holds
//!   a slice (`row <- &m, v <- row`).
//!
//! Anything else that uses an earlier variable is a compile error naming the generator.
//! Elements of collections are yielded by value when they are `Copy`, borrowed (`&T`) when they
//! are not; captured variables are borrowed. Ranges may also be of `char`.
//!
//! ## Sorting, grouping, taking
//!
//! `order by KEY [desc]` (stable), `take N`, `skip N` and `group by KEY` act on all the elements
//! produced so far; after `group by`, every variable that is not the key holds its group's
//! values as a slice:
//!
//! ```
//! use parcomp::{par, par_max_by_key, par_sum};
//!
//! let staff = [("Simon", "MS", 80), ("Erik", "MS", 100), ("Phil", "Ed", 40)];
//! let by_dept = par![(dept, par_sum![s | s <- salary]) |
//!                    (name, dept, salary) <- &staff, group by dept,
//!                    order by par_sum![s | s <- salary] desc];
//! assert_eq!(by_dept, [("MS", 180), ("Ed", 40)]);
//! assert_eq!(par![x * 2 | x <- 0..4_000_000_000i64, take 3], [0, 2, 4]); // lazily
//! let longest = par_max_by_key!(|p: &(&str, &str, i32)| p.0.len(); p | p <- staff);
//! assert_eq!(longest.map(|p| p.0), Some("Simon"));
//! ```
//!
//! ```
//! use parcomp::{par, Jagged};
//!
//! let m = Jagged::from(vec![vec![(0, 1), (1, 2), (3, 11)], vec![], vec![(1, 3)]]);
//! let x = [3, 1, 2, 6];
//! // Every product of a row with the vector, in row order.
//! let products = par![v * x[c] | i <- 0..m.len(), (c, v) <- m.row(i)];
//! assert_eq!(products, [3, 2, 66, 3]);
//! ```
//!
//! ## Reductions
//!
//! `par_sum!`, `par_product!`, `par_min!`, `par_max!` (`Option`: `None` when there is no
//! element), `par_count!`, `par_any!`, `par_all!` (both stop as soon as the answer is known) and
//! `par_reduce!(op, identity; ...)` reduce the elements without building the `Vec`, in
//! parallel. `op` must be associative (not necessarily commutative: the order of the elements is
//! kept) with `identity` as its neutral element. Integer results equal the sequential ones;
//! floating-point sums and products are added in a different grouping in parallel and may differ
//! in the last bits.
//!
//! ```
//! use parcomp::{par_count, par_max, par_reduce, par_sum};
//!
//! fn gcd(a: u32, b: u32) -> u32 { if b == 0 { a } else { gcd(b, a % b) } }
//!
//! // Euclid: the Pythagorean triples with c <= 10,000, counted from the primitive ones.
//! let triples = par_sum![10_000 / (m * m + n * n) | m <- 1u32..100, n <- 1..m, (m - n) % 2 == 1, gcd(m, n) == 1];
//! assert_eq!(triples, 12_471);
//! assert_eq!(par_count![x | x <- 1..1000, 1000 % x == 0], 15);
//! assert_eq!(par_max![x * (20 - x) | x <- 0..20], Some(100));
//! assert_eq!(par_reduce!(|a: u64, b| a * b, 1; x | x <- 1..=10u64), 3_628_800);
//! ```
//!
//! ## Nested comprehensions
//!
//! A comprehension in the head of another whose generators use the outer variables is
//! flattened into the enclosing comprehension's run (not one parallel run per outer element):
//! the outer elements are divided among the threads, each reduces the inner comprehensions of
//! its elements in a fused loop, and an inner space too large for one thread is itself divided
//! among them. Each outer element gets its result — the identity of the reduction when its
//! inner space is empty. Sparse matrix × vector:
//!
//! ```
//! use parcomp::{par, par_sum, Jagged};
//!
//! let m = Jagged::from(vec![vec![(0, 1), (1, 2), (3, 11)], vec![], vec![(1, 3), (2, 4)]]);
//! let x = [3, 1, 2, 6];
//! let y = par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..m.len()];
//! assert_eq!(y, [71, 0, 11]);
//! ```
//!
//! A nested `par!` gives a `Vec<Vec<T>>` (`Jagged::from` turns it into the flat form):
//!
//! ```
//! use parcomp::par;
//! let divisors = par![par![d | d <- 1..=n, n % d == 0] | n <- 1..7];
//! assert_eq!(divisors[5], [1, 2, 3, 6]);
//! ```
//!
//! Nesting goes to any depth. A comprehension nested inside a closure or loop of the head, or
//! one that uses a variable bound inside the head, is a compile error saying why.
//!
//! ## Parallel branches
//!
//! `par![e | q1 | q2]` zips the branches element by element, truncating to the shortest, like
//! `Iterator::zip`. A branch may have several qualifiers; it cannot use another branch's
//! variables.
//!
//! ```
//! use parcomp::par;
//! let names = ["ada", "alan", "grace"];
//! let ranked = par![(rank, name) | rank <- 1..10 | name <- names, name.len() > 3];
//! assert_eq!(ranked, [(1, "alan"), (2, "grace")]);
//! ```
//!
//! ## Seeing the plan
//!
//! [`par_explain!`] returns what a comprehension became, without running it:
//!
//! ```
//! let n = 30;
//! let plan = parcomp::par_explain![(x, y) | x <- 0..n, y <- x..n, (x + y) % 3 == 0];
//! assert!(plan.contains("expand   y <- x..n"));
//! ```
//!
//! ## Backends
//!
//! Comprehensions run on rayon, in the caller's current thread pool. `PARCOMP_BACKEND=seq`
//! selects the sequential reference backend for a whole process, [`with_backend`] for a
//! closure on the current thread. With the `opencl` or `cuda` feature, comprehensions the
//! device can run go to a GPU when one is present and the work is large enough (see the
//! guide's chapter on devices, `docs/src/devices.md`).
//!
//! ## Data that stays on the device
//!
//! A [`DeviceVec`] is uploaded once and read by any number of comprehensions without another
//! copy; [`par_device!`] leaves its result there for the next one; [`DeviceJagged`] keeps an
//! array of rows. Without a device they hold their values on the host, so the same program
//! runs everywhere:
//!
//! ```
//! use parcomp::{par_device, par_sum, DeviceVec};
//! let v = DeviceVec::from_slice(&[1u64, 2, 3, 4]);
//! let squares: DeviceVec<u64> = par_device![x * x | x <- &v];
//! assert_eq!(par_sum![s | s <- &squares], 30);
//! assert_eq!(squares.to_vec(), [1, 4, 9, 16]);
//! ```
//!
//! ## The segmented primitives
//!
//! The primitives of flattening by expansion are also a public API on slices:
//! [`segmented`].
//!
//! ## `ndarray` and Apache Arrow
//!
//! With the `ndarray` feature, a one-dimensional `ndarray` array or view is a generator
//! (`x <- &a`, `x <- a.view()`) and a capture read by index (`a[i]`), and the rows of a
//! two-dimensional one are rows (`v <- m.row(i)`, `row <- m.view(), v <- row`), on the host
//! and on a device. With the `arrow` feature, an Arrow `PrimitiveArray` is a generator and
//! its list arrays are rows (`parcomp::arrow`). Guide: `docs/src/interop.md`.

pub use comprehension_macros::{
    par, par_all, par_any, par_count, par_device, par_explain, par_fn, par_kernel, par_max,
    par_max_by_key, par_min, par_min_by_key, par_product, par_reduce, par_sum, DeviceValue,
};
pub use comprehension_runtime::gpu::device::{DeviceError, DeviceErrorKind, DeviceInfo};
pub use comprehension_runtime::gpu::{
    device_for as gpu_device, last_run_stats as gpu_stats, KernelCost, RunStats,
};
/// Apache Arrow arrays in comprehensions (the `arrow` feature): a `PrimitiveArray` (and its
/// values' buffer) is a generator, [`options`](arrow::options) reads one with null slots as
/// `Option`s, [`ListRows`](arrow::ListRows) reads a list array's rows in place, and
/// [`list_array`](arrow::list_array) turns a [`Jagged`] into a `LargeListArray`.
#[cfg(feature = "arrow")]
pub mod arrow {
    pub use comprehension_runtime::interop::arrow::{
        list_array, options, ArrowReadError, ListRows, Options,
    };
}
/// Data already on an NVIDIA GPU through cudarc (the `cuda` feature): a [`DeviceVec`] from and
/// into a `CudaSlice` ([`DeviceVec::from_cuda_slice`], [`DeviceVec::to_cuda_slice`]), one copy
/// on the GPU each way, none through the host. The slices' streams must be made from
/// [`context`](cuda::context), the context parcomp's device runs in; `cudarc`
/// is the version parcomp uses.
#[cfg(any(feature = "cuda", feature = "cuda-12"))]
pub mod cuda {
    pub use comprehension_runtime::gpu::cuda::interop::context;
    pub use cudarc;
}
pub use comprehension_runtime::segmented;
pub use comprehension_runtime::transform::{ByOrd, OrderKey};
pub use comprehension_runtime::{
    backend, device_threshold, set_device_threshold, trace, with_backend, Backend, BackendReport,
    DeviceJagged, DeviceVec, Jagged, JaggedError, Rows, Source,
};

#[doc(hidden)]
pub use comprehension_runtime::with_eager_splitting;

/// Precompiled device programs: kernel bundles, and the recordings they are made from.
///
/// A run with `PARCOMP_KERNEL_RECORD=kernels.rec` records every device program it builds;
/// `cargo parcomp bundle kernels.rec -o kernels.pcb --cuda` compiles them ahead of time (a
/// CUBIN per architecture and a PTX for newer GPUs, with NVRTC and no GPU), and
/// [`kernel_bundle!`](crate::kernel_bundle) embeds the bundle in the binary. A device then takes
/// each program from the bundle before the disk cache and the compiler: a CUDA GPU runs with no
/// NVRTC on the machine. `PARCOMP_KERNEL_BUNDLE` names bundles at run time too, and
/// `PARCOMP_KERNEL_MISS` (`compile`, `host` or `error`) says what a program no bundle holds does.
pub mod kernels {
    pub use comprehension_runtime::gpu::bundle::{
        device_target, loaded, miss_policy, missing, program_key, Bundle, BundleError,
        BundleWriter, Entry, MissPolicy,
    };
    pub use comprehension_runtime::gpu::record::{parse as parse_recording, Recorded, Recording};
}

/// Embeds a kernel bundle (made by `cargo parcomp bundle`) in the binary, where the device
/// backends find it with no other call: write it once, at the top level of any module of the
/// crate. The path is relative to the file that holds the call, as `include_bytes!`'s is.
///
/// ```ignore
/// parcomp::kernel_bundle!("../kernels.pcb");
/// ```
///
/// The bundle is read and checked at the first device program the process looks up: a bundle
/// that is truncated, corrupt, or made by another version of parcomp is an error naming it.
#[macro_export]
macro_rules! kernel_bundle {
    ($path:literal) => {
        $crate::__rt::inventory::submit! {
            $crate::__rt::EmbeddedBundle::new($path, ::core::include_bytes!($path))
        }
    };
}

// Lets the macros' `::parcomp::...` paths resolve inside this crate's own doc tests.
extern crate self as parcomp;

/// The README's examples run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The guide's examples (`docs/src/`) run as doc tests: one item per chapter with Rust code.
#[doc = include_str!("../docs/src/reductions.md")]
#[cfg(doctest)]
pub struct GuideReductions;

/// The guide's chapter on comprehensive comprehensions.
#[doc = include_str!("../docs/src/comprehensive.md")]
#[cfg(doctest)]
pub struct GuideComprehensive;

/// The guide's chapter on devices.
#[doc = include_str!("../docs/src/devices.md")]
#[cfg(doctest)]
pub struct GuideDevices;

/// The guide's chapter on the data users already have (`ndarray`).
#[doc = include_str!("../docs/src/interop.md")]
#[cfg(doctest)]
pub struct GuideInterop;

/// The guide's chapter on deploying to a GPU machine.
#[doc = include_str!("../docs/src/deploying.md")]
#[cfg(doctest)]
pub struct GuideDeploying;

/// What the code emitted by the macros calls. Not a public API.
#[doc(hidden)]
pub mod __rt {
    pub use comprehension_macros::par;
    pub use comprehension_runtime::gpu::bundle::{DeviceSite, Embedded as EmbeddedBundle};
    pub use comprehension_runtime::gpu::offload::probe::Probe;
    pub use comprehension_runtime::gpu::offload::{par_fn_name, Offload};
    pub use comprehension_runtime::gpu::offload::{
        require_elements, require_jagged, require_output, require_range, require_rows_output,
        require_scalar, require_slice,
    };
    pub use comprehension_runtime::gpu::par_fn::{
        par_fn_item_name, ByTwin, NoTwin, NotAParFn, ParFn, ParFnEntry, ParFnItem, ParFnPath,
        PathProbe, SigSlot,
    };
    pub use comprehension_runtime::gpu::types::{
        ColumnReader, ColumnWriter, DeviceType, Prim, RecordLayout, TypeDesc,
    };
    pub use comprehension_runtime::inventory;
    pub use comprehension_runtime::pipeline::{
        source, All, Any, CollectVec, Count, Fold, MaxReducer, MinReducer, ProductReducer,
        SumReducer,
    };
    pub use comprehension_runtime::source::{
        apply, map, rev, step_by, zip, Borrowed, Elements, ElementsByRef, ElementsByValue,
        IndexView, IndexViewItself, IndexViewSlice, Owned,
    };
    pub use comprehension_runtime::transform::{
        group_by, order_by, order_by_take, order_by_take_part, skip_vec, take_first, take_vec,
        Filtered, GroupReduce, Grouped, GroupedByRef, GroupedByValue, Keyed, Take, Window,
    };
    pub use comprehension_runtime::DeviceVec;
    pub use comprehension_runtime::{Site, Source};

    /// The static device plans the macro emits.
    pub mod gpu {
        pub use comprehension_runtime::gpu::plan::*;
    }

    /// The probes of the emitted code (imported with a glob: their methods answer by autoref
    /// dispatch).
    pub mod probe {
        pub use comprehension_runtime::gpu::offload::probe::{
            ElementsOnDevice, ElementsOnHost, JaggedOnDevice, JaggedOnHost, OutputOnDevice,
            OutputOnHost, OutputRowsOnDevice, RangeOnDevice, RangeOnHost, RowsOnDevice, RowsOnHost,
            ScalarOnDevice, ScalarOnHost, ScalarRefOnDevice, SliceOnDevice, SliceOnHost,
        };
    }
}
