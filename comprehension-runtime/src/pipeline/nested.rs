//! Nested comprehensions: a comprehension in the head of another, flattened into one segmented
//! reduction over the whole iteration space.
//!
//! `.nested(inner, reducer)` runs in three steps when the pipeline is driven:
//! 1. the contexts of the enclosing comprehension at this point are gathered (in parallel, in
//!    order) — one per element of the result;
//! 2. the inner comprehension runs for all of them at once: its iteration spaces are laid end
//!    to end and divided evenly across threads, a huge one shared by many
//!    ([`crate::cpu`]'s `reduce_segments`); each context gets its reducer's result, the
//!    identity when its inner space is empty;
//! 3. the rest of the enclosing comprehension (its head, or another nested comprehension) runs
//!    on the contexts extended with those results.

use super::head::MapBody;
use super::{Body, Collect, Comprehension, Driver, Reducer, Rooted, Stage};
use crate::site::Site;
use crate::source::Source;
use std::marker::PhantomData;

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
    P: Stage<Root = Rooted>,
    I: Stage<Root = P::Item>,
    H: Fn(I::Item) -> V + Sync,
    V: Send,
    R: Reducer<V>,
    R::Result: Clone + Send + Sync,
{
    type Item = (P::Item, R::Result);
    type Root = Rooted;

    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<Self::Item, Out = O>,
        D: Driver<O, Rooted>,
    {
        let contexts: Vec<P::Item> = self.prev.drive(site, MapBody::new(|ctx| ctx), Collect);
        let inner = self.inner;
        let segments = Segments { contexts: &contexts, reducer: &self.reducer };
        let accs = inner.stage.drive(site, MapBody::new(inner.head), segments);
        let items: Vec<(P::Item, R::Result)> = contexts
            .into_iter()
            .zip(accs)
            .map(|(ctx, acc)| (ctx, self.reducer.finish(acc)))
            .collect();
        driver.run_owned(site, items, body)
    }
}

/// The driver of an inner comprehension: one accumulator per context of the enclosing one.
pub struct Segments<'a, C, R> {
    contexts: &'a [C],
    reducer: &'a R,
}

impl<V, C, R> Driver<V, C> for Segments<'_, C, R>
where
    V: Send,
    C: Clone + Send + Sync,
    R: Reducer<V>,
{
    type Output = Vec<R::Acc>;

    fn run<S, B>(self, _: &'static Site, _: S, _: B) -> Vec<R::Acc>
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = V>,
    {
        unreachable!("parcomp: an inner comprehension starts from its enclosing context")
    }

    fn run_owned<T, B>(self, _: &'static Site, _: Vec<T>, _: B) -> Vec<R::Acc>
    where
        T: Send,
        B: Body<T, Out = V>,
    {
        unreachable!("parcomp: an inner comprehension starts from its enclosing context")
    }

    fn run_nested<B: Body<C, Out = V>>(self, site: &'static Site, body: B) -> Vec<R::Acc> {
        crate::cpu::reduce_segments(site, self.contexts, &body, self.reducer)
    }
}
