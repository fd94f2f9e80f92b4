//! `filter`: a filter qualifier keeps the contexts for which its predicate holds.

use super::{Body, Descend, Driver, Folder, Stage};
use crate::site::Site;
use std::ops::{ControlFlow, Range};

/// The `filter` stage.
pub struct Filter<P, F> {
    prev: P,
    pred: F,
}

impl<P, F> Filter<P, F> {
    pub(super) fn new(prev: P, pred: F) -> Self {
        Filter { prev, pred }
    }
}

impl<P, F> Stage for Filter<P, F>
where
    P: Stage,
    F: Fn(&P::Item) -> bool + Sync,
{
    type Item = P::Item;
    type Root = P::Root;

    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<P::Item, Out = O>,
        D: Driver<O, P::Root>,
    {
        self.prev.drive(site, FilterBody { pred: self.pred, inner: body }, driver)
    }
}

/// The body of a filter: run `inner` only on contexts the predicate accepts.
pub struct FilterBody<F, B> {
    pred: F,
    inner: B,
}

impl<C, F, B> Body<C> for FilterBody<F, B>
where
    F: Fn(&C) -> bool + Sync,
    B: Body<C>,
{
    type Out = B::Out;
    const DEPTH: usize = B::DEPTH;
    const FILTERS: bool = true;
    const FILTERS_BELOW: bool = B::FILTERS_BELOW;
    const CHILD_EXACT: bool = B::CHILD_EXACT;
    const NESTED: bool = B::NESTED;

    #[inline]
    fn feed<O: Folder<B::Out>>(&self, ctx: C, out: &mut O) -> ControlFlow<()> {
        if (self.pred)(&ctx) {
            self.inner.feed(ctx, out)
        } else {
            ControlFlow::Continue(())
        }
    }

    #[inline]
    fn passes(&self, ctx: &C) -> bool {
        (self.pred)(ctx) && self.inner.passes(ctx)
    }

    #[inline]
    fn emit<O: Folder<B::Out>>(&self, ctx: C, out: &mut O) -> ControlFlow<()> {
        self.inner.emit(ctx, out)
    }

    #[inline]
    fn feed_bounded<O: Folder<B::Out>>(
        &self,
        ctx: &C,
        limit: usize,
        out: &mut O,
    ) -> Result<ControlFlow<()>, usize> {
        if (self.pred)(ctx) {
            self.inner.feed_bounded(ctx, limit, out)
        } else {
            Ok(ControlFlow::Continue(()))
        }
    }

    #[inline]
    fn fanout(&self, ctx: &C) -> usize {
        if (self.pred)(ctx) {
            self.inner.fanout(ctx)
        } else {
            0
        }
    }

    fn regular_fanout(&self) -> Option<usize> {
        // A rejected context has no children, so sizes are no longer uniform.
        None
    }

    #[inline]
    fn feed_children<O: Folder<B::Out>>(
        &self,
        ctx: &C,
        children: Range<usize>,
        out: &mut O,
    ) -> ControlFlow<()> {
        // Only called for contexts with children, which the predicate accepted when they were
        // sized; a predicate that changes its mind is caught as a size change below.
        if (self.pred)(ctx) {
            self.inner.feed_children(ctx, children, out)
        } else {
            ControlFlow::Continue(())
        }
    }

    fn count(&self, ctx: C) -> Option<usize> {
        if B::DEPTH == 0 {
            // The last level: an upper bound without evaluating the predicate.
            return Some(1);
        }
        if (self.pred)(&ctx) {
            self.inner.count(ctx)
        } else {
            Some(0)
        }
    }

    fn count_children(&self, ctx: &C, children: Range<usize>) -> Option<usize> {
        if (self.pred)(ctx) {
            self.inner.count_children(ctx, children)
        } else {
            Some(0)
        }
    }

    fn descend<I: Iterator<Item = C>, V: Descend<B::Out>>(
        &self,
        parents: I,
        visit: V,
    ) -> V::Output {
        self.inner.descend(Kept { parents, pred: &self.pred }, visit)
    }
}

/// The contexts of `parents` that pass `pred`: `parents.filter(..)` as a named type, for the
/// reason given at `bind::Bound`.
pub struct Kept<'a, I, F> {
    parents: I,
    pred: &'a F,
}

impl<I, F> Iterator for Kept<'_, I, F>
where
    I: Iterator,
    F: Fn(&I::Item) -> bool,
{
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        let pred = self.pred;
        self.parents.find(|ctx| pred(ctx))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.parents.size_hint().1)
    }
}
