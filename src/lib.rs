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
//! - a **generator** `PAT <- EXPR` (`PAT` is an identifier, `_`, or a nested tuple);
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
//! Elements of collections are yielded by value (`T: Copy`); captured variables are borrowed.
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
//! ## Seeing the plan
//!
//! [`par_explain!`] returns what a comprehension became, without running it:
//!
//! ```
//! let plan = parcomp::par_explain![(x, y) | x <- 0..n, y <- x..n, (x + y) % 3 == 0];
//! assert!(plan.contains("expand   y <- x..n"));
//! ```
//!
//! ## Backends
//!
//! Comprehensions run on rayon, in the caller's current thread pool. `PARCOMP_BACKEND=seq`
//! selects the sequential reference backend for a whole process, [`with_backend`] for a
//! closure on the current thread.
//!
//! ## The segmented primitives
//!
//! The primitives of flattening by expansion are also a public API on slices:
//! [`segmented`].

pub use comprehension_macros::{
    par, par_all, par_any, par_count, par_explain, par_max, par_min, par_product, par_reduce,
    par_sum,
};
pub use comprehension_runtime::segmented;
pub use comprehension_runtime::{with_backend, Backend, Jagged, JaggedError, Rows, Source};

#[doc(hidden)]
pub use comprehension_runtime::with_eager_splitting;

// Lets the macros' `::parcomp::...` paths resolve inside this crate's own doc tests.
extern crate self as parcomp;

/// The README's examples run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// What the code emitted by the macros calls. Not a public API.
#[doc(hidden)]
pub mod __rt {
    pub use comprehension_runtime::pipeline::{
        source, All, Any, CollectVec, Count, Fold, Max, Min, Product, Sum,
    };
    pub use comprehension_runtime::source::{map, rev, size, step_by, zip};
    pub use comprehension_runtime::Site;
}
