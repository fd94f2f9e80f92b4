//! The head of a comprehension (`map`) and the terminal that runs it (`collect`).

use super::{Body, Descend, Driver, Folder, Reducer, Rooted, Stage};
use crate::site::Site;
use crate::source::Source;
use std::ops::{ControlFlow, Range};

/// A comprehension with its head: ready to run.
#[must_use = "a comprehension does nothing until it is collected"]
pub struct Comprehension<P, H> {
    pub(super) site: &'static Site,
    pub(super) stage: P,
    pub(super) head: H,
}

impl<P, H> Comprehension<P, H> {
    pub(super) fn new(site: &'static Site, stage: P, head: H) -> Self {
        Comprehension { site, stage, head }
    }
}

impl<P, H, T> Comprehension<P, H>
where
    P: Stage<Root = Rooted>,
    H: Fn(P::Item) -> T + Sync,
    T: Send,
{
    /// Runs the comprehension on the current backend and returns its elements in nested-loop
    /// order.
    pub fn collect(self) -> Vec<T> {
        self.stage.drive(self.site, MapBody { head: self.head }, Collect)
    }

    /// Runs the comprehension on the current backend, combining its elements with `reducer`.
    pub fn reduce_with<R: Reducer<T>>(self, reducer: R) -> R::Result {
        let acc = self.stage.drive(self.site, MapBody { head: self.head }, Reduce(&reducer));
        reducer.finish(acc)
    }
}

/// The body of the head: one output per context.
pub struct MapBody<H> {
    head: H,
}

impl<H> MapBody<H> {
    pub(super) fn new(head: H) -> Self {
        MapBody { head }
    }
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

    #[inline(always)]
    fn feed<F: Folder<T>>(&self, ctx: C, out: &mut F) -> ControlFlow<()> {
        out.push((self.head)(ctx))
    }

    #[inline]
    fn passes(&self, _: &C) -> bool {
        true
    }

    #[inline]
    fn emit<F: Folder<T>>(&self, ctx: C, out: &mut F) -> ControlFlow<()> {
        out.push((self.head)(ctx))
    }

    fn feed_bounded<F: Folder<T>>(
        &self,
        _: &C,
        _: usize,
        _: &mut F,
    ) -> Result<ControlFlow<()>, usize> {
        unreachable!("parcomp: the head has no generator below it")
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

impl<T: Send> Driver<T, Rooted> for Collect {
    type Output = Vec<T>;

    fn run<S, B>(self, site: &'static Site, source: S, body: B) -> Vec<T>
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = T>,
    {
        crate::cpu::collect(site, &source, &body)
    }

    fn run_nested<B: Body<Rooted, Out = T>>(self, _: &'static Site, _: B) -> Vec<T> {
        unreachable!("parcomp: a comprehension rooted at a source has no enclosing context")
    }
}

/// The terminal that reduces the outputs (returns the accumulator; the caller finishes it).
pub struct Reduce<'a, R>(pub &'a R);

impl<T: Send, R: Reducer<T>> Driver<T, Rooted> for Reduce<'_, R> {
    type Output = R::Acc;

    fn run<S, B>(self, site: &'static Site, source: S, body: B) -> R::Acc
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = T>,
    {
        crate::cpu::reduce(site, &source, &body, self.0)
    }

    fn run_nested<B: Body<Rooted, Out = T>>(self, _: &'static Site, _: B) -> R::Acc {
        unreachable!("parcomp: a comprehension rooted at a source has no enclosing context")
    }
}
