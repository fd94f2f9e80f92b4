//! The CPU backends: rayon ([`parallel`]) and the sequential reference ([`sequential`]).
//!
//! Both run the same [`Body`](crate::pipeline::Body) chains; they differ only in how the
//! iteration space is divided. The sequential backend is plain nested loops and defines the
//! semantics; the parallel backend must produce the same `Vec`, element for element.

mod output;
mod parallel;
mod partition;
mod sequential;

use crate::backend::Backend;
use crate::pipeline::Body;
use crate::site::Site;
use crate::source::Source;

/// Runs a comprehension on the current backend, gathering its outputs in nested-loop order.
pub(crate) fn collect<S, B>(site: &'static Site, source: &S, body: &B) -> Vec<B::Out>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
    B: Body<S::Item>,
{
    match Backend::current() {
        Backend::Sequential => sequential::collect(site, source, body),
        Backend::Rayon => parallel::collect(site, source, body),
    }
}
