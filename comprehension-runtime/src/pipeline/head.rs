//! The head of a comprehension (`map`) and the terminal that runs it (`collect`).

use super::{Body, Descend, Driver, Folder, Stage};
use crate::site::Site;
use crate::source::Source;
use std::ops::{ControlFlow, Range};

/// A comprehension with its head: ready to run.
#[must_use = "a comprehension does nothing until it is collected"]
pub struct Comprehension<P, H> {
    site: &'static Site,
    stage: P,
    head: H,
}

impl<P, H> Comprehension<P, H> {
    pub(super) fn new(site: &'static Site, stage: P, head: H) -> Self {
        Comprehension { site, stage, head }
    }
}

impl<P, H, T> Comprehension<P, H>
where
    P: Stage,
    H: Fn(P::Item) -> T + Sync,
    T: Send,
{
    /// Runs the comprehension on the current backend and returns its elements in nested-loop
    /// order.
    pub fn collect(self) -> Vec<T> {
        self.stage.drive(self.site, MapBody { head: self.head }, Collect)
    }
}

/// The body of the head: one output per context.
pub struct MapBody<H> {
    head: H,
}

impl<C, H, T> Body<C> for MapBody<H>
where
    H: Fn(C) -> T + Sync,
    T: Send,
{
    type Out = T;
    const DEPTH: usize = 0;
    const FILTERS: bool = false;
    const FILTERS_BELOW: bool = false;
    const CHILD_EXACT: bool = true;

    #[inline]
    fn feed<F: Folder<T>>(&self, ctx: C, out: &mut F) -> ControlFlow<()> {
        out.push((self.head)(ctx))
    }

    fn fanout(&self, _: &C) -> usize {
        unreachable!("parcomp: the head has no generator below it")
    }

    fn regular_fanout(&self) -> Option<usize> {
        unreachable!("parcomp: the head has no generator below it")
    }

    fn feed_children<F: Folder<T>>(&self, _: &C, _: Range<usize>, _: &mut F) -> ControlFlow<()> {
        unreachable!("parcomp: the head has no generator below it")
    }

    fn count(&self, _: C) -> Option<usize> {
        Some(1)
    }

    fn count_children(&self, _: &C, _: Range<usize>) -> Option<usize> {
        unreachable!("parcomp: the head has no generator below it")
    }

    fn descend<I: Iterator<Item = C>, V: Descend<T>>(&self, _: I, _: V) -> V::Output {
        unreachable!("parcomp: the head has no generator below it")
    }
}

/// The terminal that gathers the outputs into a `Vec`, in nested-loop order.
pub struct Collect;

impl<T: Send> Driver<T> for Collect {
    type Output = Vec<T>;

    fn run<S, B>(self, site: &'static Site, source: S, body: B) -> Vec<T>
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = T>,
    {
        crate::cpu::collect(site, &source, &body)
    }
}
