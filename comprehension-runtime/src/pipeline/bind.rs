//! `bind`: a `let` qualifier extends the context with a value computed from it.

use super::{Body, Descend, Driver, Folder, Stage};
use crate::site::Site;
use std::ops::{ControlFlow, Range};

/// The `bind` stage.
pub struct Bind<P, F> {
    prev: P,
    f: F,
}

impl<P, F> Bind<P, F> {
    pub(super) fn new(prev: P, f: F) -> Self {
        Bind { prev, f }
    }
}

impl<P, F, T> Stage for Bind<P, F>
where
    P: Stage,
    F: Fn(&P::Item) -> T + Sync,
    T: Clone + Send + Sync,
{
    type Item = (P::Item, T);
    type Root = P::Root;

    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<Self::Item, Out = O>,
        D: Driver<O, P::Root>,
    {
        self.prev.drive(site, BindBody { f: self.f, inner: body }, driver)
    }
}

/// The body of a `let`: extend the context, then run `inner`.
pub struct BindBody<F, B> {
    f: F,
    inner: B,
}

impl<F, B> BindBody<F, B> {
    #[inline]
    fn extend<C: Clone, T>(&self, ctx: &C) -> (C, T)
    where
        F: Fn(&C) -> T,
    {
        (ctx.clone(), (self.f)(ctx))
    }
}

impl<C, F, T, B> Body<C> for BindBody<F, B>
where
    C: Clone,
    F: Fn(&C) -> T + Sync,
    B: Body<(C, T)>,
{
    type Out = B::Out;
    const DEPTH: usize = B::DEPTH;
    const FILTERS: bool = B::FILTERS;
    const FILTERS_BELOW: bool = B::FILTERS_BELOW;
    const CHILD_EXACT: bool = B::CHILD_EXACT;
    const NESTED: bool = B::NESTED;

    #[inline]
    fn feed<O: Folder<B::Out>>(&self, ctx: C, out: &mut O) -> ControlFlow<()> {
        let value = (self.f)(&ctx);
        self.inner.feed((ctx, value), out)
    }

    #[inline]
    fn passes(&self, ctx: &C) -> bool {
        self.inner.passes(&self.extend(ctx))
    }

    #[inline]
    fn emit<O: Folder<B::Out>>(&self, ctx: C, out: &mut O) -> ControlFlow<()> {
        let value = (self.f)(&ctx);
        self.inner.emit((ctx, value), out)
    }

    #[inline]
    fn feed_bounded<O: Folder<B::Out>>(
        &self,
        ctx: &C,
        limit: usize,
        out: &mut O,
    ) -> Result<ControlFlow<()>, usize> {
        self.inner.feed_bounded(&self.extend(ctx), limit, out)
    }

    #[inline]
    fn fanout(&self, ctx: &C) -> usize {
        self.inner.fanout(&self.extend(ctx))
    }

    fn regular_fanout(&self) -> Option<usize> {
        self.inner.regular_fanout()
    }

    #[inline]
    fn feed_children<O: Folder<B::Out>>(
        &self,
        ctx: &C,
        children: Range<usize>,
        out: &mut O,
    ) -> ControlFlow<()> {
        self.inner.feed_children(&self.extend(ctx), children, out)
    }

    fn count(&self, ctx: C) -> Option<usize> {
        if B::DEPTH == 0 {
            // The last level yields at most one output; no need to compute the value.
            return Some(1);
        }
        let value = (self.f)(&ctx);
        self.inner.count((ctx, value))
    }

    fn count_children(&self, ctx: &C, children: Range<usize>) -> Option<usize> {
        self.inner.count_children(&self.extend(ctx), children)
    }

    fn descend<I: Iterator<Item = C>, V: Descend<B::Out>>(
        &self,
        parents: I,
        visit: V,
    ) -> V::Output {
        self.inner.descend(Bound { parents, f: &self.f }, visit)
    }
}

/// The contexts of `parents`, each extended with its `let` value: `parents.map(|c| (c, f(&c)))`
/// as a named type. A closure written inside the generic `descend` would carry the type of
/// `parents` in its own type, so the iterator's type would hold the one below it twice, and
/// its name (which debug info spells out) would double with every `let`.
pub struct Bound<'a, I, F> {
    parents: I,
    f: &'a F,
}

impl<I, F, T> Iterator for Bound<'_, I, F>
where
    I: Iterator,
    F: Fn(&I::Item) -> T,
{
    type Item = (I::Item, T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let ctx = self.parents.next()?;
        let value = (self.f)(&ctx);
        Some((ctx, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.parents.size_hint()
    }
}
