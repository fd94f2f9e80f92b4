//! The head of a comprehension (`map`): the last stage, which makes a [`Comprehension`]. The
//! terminals that run one (`collect`, `reduce`) are not here but in `crate::dispatch`, above
//! the engines: the pipeline names neither the CPU's nor the device's.

use super::{Body, Descend, Folder};
use crate::site::Site;
use std::ops::{ControlFlow, Range};

/// A comprehension with its head: ready to run.
#[must_use = "a comprehension does nothing until it is collected"]
pub struct Comprehension<P, H> {
    pub(crate) site: &'static Site,
    pub(crate) stage: P,
    pub(crate) head: H,
}

impl<P, H> Comprehension<P, H> {
    pub(super) fn new(site: &'static Site, stage: P, head: H) -> Self {
        Comprehension { site, stage, head }
    }
}

/// The body of the head: one output per context.
pub struct MapBody<H> {
    head: H,
}

impl<H> MapBody<H> {
    pub(crate) fn new(head: H) -> Self {
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
