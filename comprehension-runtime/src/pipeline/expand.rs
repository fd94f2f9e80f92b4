//! `expand`: a generator. Each context of the level above has `size` children; child `i` is
//! `(context, element i)`. A *product* is an expand whose source is the same for every context
//! (the regular case), which lets the executor use index arithmetic instead of prefix sums.
//!
//! A generator is split in two: the *source*, which gives the size and is read by index, and an
//! optional *element map* applied to each element read. `y <- (0..k).map(|i| x + i)` becomes the
//! source `0..k` — the same for every context, so a product — and the element map
//! `|&x, i| x + i`, which may use the context. Keeping the map out of the source means the
//! source never has to capture the context.

use super::{feed_each, Body, Descend, Driver, Folder, Stage};
use crate::site::Site;
use crate::source::Source;
use std::ops::{ControlFlow, Range};

/// Produces, for one context, the source its children are read from (the generator's
/// expression with the context's variables filled in).
pub trait Generator<C>: Sync {
    /// What the generator's expression evaluates to.
    type Source: Source;
    /// The children of `ctx`.
    fn source(&self, ctx: &C) -> Self::Source;
}

impl<C, S, F> Generator<C> for F
where
    F: Fn(&C) -> S + Sync,
    S: Source,
{
    type Source = S;
    #[inline]
    fn source(&self, ctx: &C) -> S {
        self(ctx)
    }
}

/// A generator that does not depend on the context: the same source for every context.
#[derive(Clone, Copy, Debug)]
pub struct Invariant<S>(pub S);

impl<C, S: Source + Copy + Sync> Generator<C> for Invariant<S> {
    type Source = S;
    #[inline]
    fn source(&self, _: &C) -> S {
        self.0
    }
}

/// Turns an element read from a generator's source into the value bound by the generator.
pub trait ElementMap<C, I>: Sync {
    /// The bound value.
    type Out;
    /// The value bound for `item`, read for context `ctx`.
    fn apply(&self, ctx: &C, item: I) -> Self::Out;
}

impl<C, I, T, F> ElementMap<C, I> for F
where
    F: Fn(&C, I) -> T + Sync,
{
    type Out = T;
    #[inline]
    fn apply(&self, ctx: &C, item: I) -> T {
        self(ctx, item)
    }
}

/// The element map of a generator without `.map(..)`: binds the element itself.
#[derive(Clone, Copy, Debug)]
pub struct Identity;

impl<C, I> ElementMap<C, I> for Identity {
    type Out = I;
    #[inline]
    fn apply(&self, _: &C, item: I) -> I {
        item
    }
}

/// The `expand` (or `product`) stage.
pub struct Expand<P, G, M> {
    prev: P,
    gen: G,
    map: M,
    regular: Option<usize>,
}

impl<P, G, M> Expand<P, G, M> {
    pub(super) fn new(prev: P, gen: G, map: M, regular: Option<usize>) -> Self {
        Expand { prev, gen, map, regular }
    }
}

type Read<G, C> = <<G as Generator<C>>::Source as Source>::Item;
type Element<G, M, C> = <M as ElementMap<C, Read<G, C>>>::Out;

impl<P, G, M> Stage for Expand<P, G, M>
where
    P: Stage,
    G: Generator<P::Item>,
    M: ElementMap<P::Item, Read<G, P::Item>>,
    Element<G, M, P::Item>: Clone + Send + Sync,
{
    type Item = (P::Item, Element<G, M, P::Item>);
    type Root = P::Root;

    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<Self::Item, Out = O>,
        D: Driver<O, P::Root>,
    {
        let body =
            ExpandBody { site, gen: self.gen, map: self.map, regular: self.regular, inner: body };
        self.prev.drive(site, body, driver)
    }
}

/// The body of a generator: for one context, loop over its children and run `inner` on each.
pub struct ExpandBody<G, M, B> {
    site: &'static Site,
    gen: G,
    map: M,
    regular: Option<usize>,
    inner: B,
}

impl<G, M, B> ExpandBody<G, M, B> {
    /// The children of `ctx`, checking the promise of a product that every context has the same
    /// number of them.
    #[inline]
    fn children<C>(&self, ctx: &C) -> G::Source
    where
        G: Generator<C>,
    {
        let source = self.gen.source(ctx);
        if let Some(len) = self.regular {
            let got = source.size();
            if got != len {
                self.site.size_changed(len, got);
            }
        }
        source
    }

    /// Child `i` of `ctx`, read from `source`.
    #[inline]
    fn child<C>(&self, ctx: &C, source: &G::Source, i: usize) -> (C, M::Out)
    where
        C: Clone,
        G: Generator<C>,
        M: ElementMap<C, Read<G, C>>,
    {
        (ctx.clone(), self.map.apply(ctx, source.fetch(i)))
    }
}

impl<C, G, M, B> Body<C> for ExpandBody<G, M, B>
where
    C: Clone + Send + Sync,
    G: Generator<C>,
    M: ElementMap<C, Read<G, C>>,
    Element<G, M, C>: Clone + Send + Sync,
    B: Body<(C, Element<G, M, C>)>,
{
    type Out = B::Out;
    const DEPTH: usize = 1 + B::DEPTH;
    const FILTERS: bool = B::FILTERS;
    const FILTERS_BELOW: bool = B::FILTERS;
    const CHILD_EXACT: bool = B::DEPTH == 0 && !B::FILTERS;
    const NESTED: bool = B::NESTED;

    #[inline]
    fn feed<F: Folder<B::Out>>(&self, ctx: C, out: &mut F) -> ControlFlow<()> {
        let source = self.children(&ctx);
        feed_each(&self.inner, 0..source.size(), |i| self.child(&ctx, &source, i), out)
    }

    fn passes(&self, _: &C) -> bool {
        true
    }

    #[inline]
    fn feed_bounded<F: Folder<B::Out>>(
        &self,
        ctx: &C,
        limit: usize,
        out: &mut F,
    ) -> Result<ControlFlow<()>, usize> {
        let source = self.children(ctx);
        let len = source.size();
        if len >= limit {
            return Err(len);
        }
        Ok(feed_each(&self.inner, 0..len, |i| self.child(ctx, &source, i), out))
    }

    fn emit<F: Folder<B::Out>>(&self, ctx: C, out: &mut F) -> ControlFlow<()> {
        self.feed(ctx, out)
    }

    #[inline]
    fn fanout(&self, ctx: &C) -> usize {
        match self.regular {
            Some(len) => len,
            None => self.gen.source(ctx).size(),
        }
    }

    fn regular_fanout(&self) -> Option<usize> {
        self.regular
    }

    #[inline]
    fn feed_children<F: Folder<B::Out>>(
        &self,
        ctx: &C,
        children: Range<usize>,
        out: &mut F,
    ) -> ControlFlow<()> {
        let source = self.children(ctx);
        let len = source.size();
        if children.end > len {
            self.site.size_changed(children.end, len);
        }
        feed_each(&self.inner, children, |i| self.child(ctx, &source, i), out)
    }

    fn count(&self, ctx: C) -> Option<usize> {
        let n = self.fanout(&ctx);
        self.count_children(&ctx, 0..n)
    }

    fn count_children(&self, ctx: &C, children: Range<usize>) -> Option<usize> {
        if B::DEPTH == 0 {
            return Some(children.end - children.start);
        }
        let source = self.children(ctx);
        let mut total = 0usize;
        for i in children {
            total = total.checked_add(self.inner.count(self.child(ctx, &source, i))?)?;
        }
        Some(total)
    }

    fn descend<I: Iterator<Item = C>, V: Descend<B::Out>>(
        &self,
        parents: I,
        visit: V,
    ) -> V::Output {
        let mut contexts = Vec::new();
        for ctx in parents {
            let source = self.children(&ctx);
            for i in 0..source.size() {
                contexts.push(self.child(&ctx, &source, i));
            }
        }
        visit.visit(contexts, &self.inner)
    }
}
