//! Nested comprehensions: a comprehension in the head of another, reduced once per outer
//! element inside the enclosing comprehension's own run.
//!
//! `.nested(inner, reducer)` extends each context of the enclosing comprehension with the
//! result of the inner comprehension for it. Nothing is run per outer element on its own: the
//! enclosing comprehension is divided among the threads as usual, and each thread reduces the
//! inner comprehensions of its outer elements in a fused loop, one after the other — so
//! millions of tiny inner spaces cost no more than a loop over them and nothing but the results
//! is stored. An inner space too large to leave to one thread (more than `SPLIT_AT` elements)
//! is itself cut into pieces reduced in parallel and combined in order, so one huge row is
//! shared by all threads. An outer element whose inner space is empty gets the reducer's
//! identity.
//!
//! The inner comprehension's body is only known once its own chain is driven, so `drive` goes
//! through the inner chain first ([`Enclosing`] is the driver it ends at), then drives the
//! enclosing chain with a [`NestBody`] holding both.

use super::head::MapBody;
use super::{Body, Comprehension, Descend, Driver, Executor, Folder, ReduceFolder, Reducer, Stage};
use crate::site::Site;
use crate::source::Source;
use std::marker::PhantomData;
use std::ops::{ControlFlow, Range};

/// The root of an inner comprehension: the contexts of the enclosing one.
pub struct ContextRoot<C>(PhantomData<fn() -> C>);

impl<C> ContextRoot<C> {
    pub(super) fn new() -> Self {
        ContextRoot(PhantomData)
    }
}

impl<C: Clone + Send + Sync> Stage for ContextRoot<C> {
    type Item = C;
    type Root = C;

    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<C, Out = O>,
        D: Driver<O, C>,
    {
        driver.run_nested(site, body)
    }
}

/// The stage of a nested comprehension: extends the context with the inner result.
pub struct Nested<P, I, H, R> {
    prev: P,
    inner: Comprehension<I, H>,
    reducer: R,
}

impl<P, I, H, R> Nested<P, I, H, R> {
    pub(super) fn new(prev: P, inner: Comprehension<I, H>, reducer: R) -> Self {
        Nested { prev, inner, reducer }
    }
}

impl<P, I, H, V, R> Stage for Nested<P, I, H, R>
where
    P: Stage,
    I: Stage<Root = P::Item>,
    H: Fn(I::Item) -> V + Sync,
    V: Send,
    R: Reducer<V>,
    R::Result: Clone + Send + Sync,
{
    type Item = (P::Item, R::Result);
    type Root = P::Root;

    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<Self::Item, Out = O>,
        D: Driver<O, P::Root>,
    {
        let exec = driver.executor();
        let enclosing = Enclosing {
            prev: self.prev,
            reducer: self.reducer,
            next: body,
            driver,
            split: exec.divide_inner_from().map(|at| Split { at, exec }),
            inner_out: PhantomData,
        };
        self.inner.stage.drive(site, MapBody::new(self.inner.head), enclosing)
    }
}

/// When and how to divide a large inner space among the threads.
#[derive(Clone, Copy)]
pub struct Split<E> {
    /// Inner spaces with at least this many elements (at their first generator) are divided.
    at: usize,
    /// By this executor.
    exec: E,
}

/// The driver an inner comprehension's chain ends at: it receives the inner body and drives the
/// enclosing chain with a [`NestBody`].
pub struct Enclosing<P, R, B, D: Driver<O, P::Root>, V, O: Send>
where
    P: Stage,
{
    prev: P,
    reducer: R,
    next: B,
    driver: D,
    split: Option<Split<D::Exec>>,
    inner_out: PhantomData<fn(V, O)>,
}

impl<P, R, B, D, V, O> Driver<V, P::Item> for Enclosing<P, R, B, D, V, O>
where
    P: Stage,
    V: Send,
    R: Reducer<V>,
    R::Result: Clone + Send + Sync,
    B: Body<(P::Item, R::Result), Out = O>,
    D: Driver<O, P::Root>,
    O: Send,
{
    type Output = D::Output;
    type Exec = D::Exec;

    fn executor(&self) -> D::Exec {
        self.driver.executor()
    }

    fn run<S, Bs>(self, _: &'static Site, _: S, _: Bs) -> D::Output
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        Bs: Body<S::Item, Out = V>,
    {
        unreachable!("parcomp: an inner comprehension starts from its enclosing context")
    }

    fn run_nested<Bi: Body<P::Item, Out = V>>(self, site: &'static Site, inner: Bi) -> D::Output {
        let body = NestBody {
            inner,
            reducer: self.reducer,
            next: self.next,
            split: self.split,
            inner_out: PhantomData,
        };
        self.prev.drive(site, body, self.driver)
    }
}

/// The body of a nested comprehension: reduce the inner comprehension for the context, then run
/// the rest of the enclosing one on the context extended with the result.
pub struct NestBody<Bi, R, B, V, E> {
    inner: Bi,
    reducer: R,
    next: B,
    split: Option<Split<E>>,
    inner_out: PhantomData<fn(V)>,
}

impl<Bi, R, B, V, E> NestBody<Bi, R, B, V, E>
where
    V: Send,
    R: Reducer<V>,
    E: Executor,
{
    /// The inner comprehension's result for `ctx`.
    #[inline]
    fn reduce<C>(&self, ctx: &C) -> R::Result
    where
        C: Clone + Send + Sync,
        Bi: Body<C, Out = V>,
    {
        let mut folder = ReduceFolder::new(&self.reducer, None);
        let split = match self.split {
            Some(split) if Bi::DEPTH > 0 => split,
            _ => {
                let _ = self.inner.feed(ctx.clone(), &mut folder);
                return self.reducer.finish(folder.acc);
            }
        };
        let acc = match self.inner.feed_bounded(ctx, split.at, &mut folder) {
            Ok(_) => folder.acc,
            Err(children) => split.exec.reduce_children(&self.inner, ctx, children, &self.reducer),
        };
        self.reducer.finish(acc)
    }
}

impl<C, Bi, R, B, V, E> Body<C> for NestBody<Bi, R, B, V, E>
where
    C: Clone + Send + Sync,
    V: Send,
    Bi: Body<C, Out = V>,
    R: Reducer<V>,
    R::Result: Clone + Send + Sync,
    B: Body<(C, R::Result)>,
    E: Executor,
{
    type Out = B::Out;
    const DEPTH: usize = B::DEPTH;
    const FILTERS: bool = B::FILTERS;
    const FILTERS_BELOW: bool = B::FILTERS_BELOW;
    const CHILD_EXACT: bool = B::CHILD_EXACT;
    const NESTED: bool = true;

    #[inline]
    fn feed<F: Folder<B::Out>>(&self, ctx: C, out: &mut F) -> ControlFlow<()> {
        let result = self.reduce(&ctx);
        self.next.feed((ctx, result), out)
    }

    fn passes(&self, ctx: &C) -> bool {
        self.next.passes(&(ctx.clone(), self.reduce(ctx)))
    }

    fn emit<F: Folder<B::Out>>(&self, ctx: C, out: &mut F) -> ControlFlow<()> {
        let result = self.reduce(&ctx);
        self.next.emit((ctx, result), out)
    }

    fn feed_bounded<F: Folder<B::Out>>(
        &self,
        ctx: &C,
        limit: usize,
        out: &mut F,
    ) -> Result<ControlFlow<()>, usize> {
        self.next.feed_bounded(&(ctx.clone(), self.reduce(ctx)), limit, out)
    }

    fn fanout(&self, ctx: &C) -> usize {
        self.next.fanout(&(ctx.clone(), self.reduce(ctx)))
    }

    fn regular_fanout(&self) -> Option<usize> {
        self.next.regular_fanout()
    }

    fn feed_children<F: Folder<B::Out>>(
        &self,
        ctx: &C,
        children: Range<usize>,
        out: &mut F,
    ) -> ControlFlow<()> {
        self.next.feed_children(&(ctx.clone(), self.reduce(ctx)), children, out)
    }

    fn count(&self, ctx: C) -> Option<usize> {
        if B::DEPTH == 0 {
            // One output at most, without reducing anything.
            return Some(1);
        }
        let result = self.reduce(&ctx);
        self.next.count((ctx, result))
    }

    fn count_children(&self, ctx: &C, children: Range<usize>) -> Option<usize> {
        self.next.count_children(&(ctx.clone(), self.reduce(ctx)), children)
    }

    fn descend<I: Iterator<Item = C>, D: Descend<B::Out>>(
        &self,
        parents: I,
        visit: D,
    ) -> D::Output {
        self.next.descend(Reduced { parents, nest: self }, visit)
    }
}

/// The contexts of `parents`, each extended with its inner comprehension's result, as a named
/// type (see `bind::Bound` for why not a closure).
pub struct Reduced<'a, I, N> {
    parents: I,
    nest: &'a N,
}

impl<C, I, Bi, R, B, V, E> Iterator for Reduced<'_, I, NestBody<Bi, R, B, V, E>>
where
    I: Iterator<Item = C>,
    C: Clone + Send + Sync,
    V: Send,
    Bi: Body<C, Out = V>,
    R: Reducer<V>,
    E: Executor,
{
    type Item = (C, R::Result);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let ctx = self.parents.next()?;
        let result = self.nest.reduce(&ctx);
        Some((ctx, result))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.parents.size_hint()
    }
}
