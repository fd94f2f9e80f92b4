//! The pipeline the `par!` macro emits: `source`, `expand`/`product`, `filter`, `bind`, `map`,
//! `collect`. See `README.md` in this folder for how the pieces fit together.
//!
//! A comprehension is written outside-in (the first generator first) and built as a chain of
//! [`Stage`]s. When a terminal (`collect`) is called, the chain is *driven*: each stage wraps
//! the [`Body`] built so far and hands it to the stage before it, so that at the root the body
//! reads inside-out — "for one element of this level, run everything below it". The executor
//! then decides, knowing every level's size function, where to split the iteration space
//! across threads, while the levels below the split run as fused nested loops.

mod bind;
mod expand;
mod filter;
mod head;
mod nested;
mod reducers;
mod root;

pub use bind::{Bind, BindBody};
pub use expand::{ElementMap, Expand, ExpandBody, Generator, Identity, Invariant};
pub use filter::{Filter, FilterBody};
pub use head::{Comprehension, MapBody};
pub use nested::{ContextRoot, Enclosing, NestBody, Nested};
pub(crate) use reducers::ReduceFolder;
pub use reducers::{
    All, Any, CollectVec, Count, DevicePartial, Extreme, Fold, MaxReducer, MinReducer,
    ProductReducer, Reducer, SumReducer,
};
pub use root::{source, Root};

use crate::site::Site;
use crate::source::Source;
use std::ops::{ControlFlow, Range};

/// Where the outputs of a run go: a `Vec`, a slice being filled, an accumulator.
pub trait Folder<T> {
    /// Whether the folder takes a run of outputs best as an iterator
    /// ([`push_iter`](Folder::push_iter)): its loop then holds its state in locals, which a
    /// call per output (whose state the compiler reloads from memory every time) cannot.
    const OWN_LOOP: bool = false;
    /// Takes one output; `Break` stops the run early (e.g. `par_any!` found its answer).
    fn push(&mut self, item: T) -> ControlFlow<()>;
    /// Takes the outputs `items`, in order, as [`push`](Folder::push) on each would.
    #[inline]
    fn push_iter(&mut self, items: impl Iterator<Item = T>) -> ControlFlow<()> {
        for item in items {
            self.push(item)?;
        }
        ControlFlow::Continue(())
    }
}

/// A [`Folder`] that keeps the one output of a body with no generator left.
struct One<T>(Option<T>);

impl<T> Folder<T> for One<T> {
    #[inline]
    fn push(&mut self, item: T) -> ControlFlow<()> {
        self.0 = Some(item);
        ControlFlow::Continue(())
    }
}

impl<T> Folder<T> for Vec<T> {
    #[inline]
    fn push(&mut self, item: T) -> ControlFlow<()> {
        Vec::push(self, item);
        ControlFlow::Continue(())
    }
}

/// Everything below one level of a comprehension, for one context of that level.
///
/// `C` is the context: the values bound so far, as nested pairs `((x, y), z)`. A body is a
/// chain of [`FilterBody`], [`BindBody`] and [`ExpandBody`] nodes ending in the head
/// ([`MapBody`]). Methods about "children" refer to the next generator below this point (the
/// first `ExpandBody` in the chain, after any filters and `let`s of this level); they are only
/// called when [`Body::DEPTH`] is at least 1.
pub trait Body<C>: Sync {
    /// The element type of the result.
    type Out: Send;
    /// Number of generators below this point (0: each context yields at most one output).
    const DEPTH: usize;
    /// Whether a filter stands anywhere in this body.
    const FILTERS: bool;
    /// Whether a filter stands below the next generator (children may yield no output).
    const FILTERS_BELOW: bool;
    /// Whether a nested comprehension stands in this body: its elements hold work that their
    /// sizes do not show.
    const NESTED: bool = false;
    /// Whether every child of the next generator yields exactly one output (no filter and no
    /// further generator below it): outputs can then be placed by index.
    const CHILD_EXACT: bool;

    /// Runs the whole subtree of `ctx`, in nested-loop order.
    fn feed<F: Folder<Self::Out>>(&self, ctx: C, out: &mut F) -> ControlFlow<()>;

    /// For a body with no generator left ([`Body::DEPTH`] 0): whether `ctx` passes its
    /// filters, computing its `let`s as needed but producing nothing. Free of side effects, so
    /// that a loop searching for the next context that passes can be vectorised.
    fn passes(&self, ctx: &C) -> bool;

    /// For a body with no generator left: the output of a context that [`Body::passes`] (the
    /// filters are not evaluated again).
    fn emit<F: Folder<Self::Out>>(&self, ctx: C, out: &mut F) -> ControlFlow<()>;

    /// Number of children of `ctx` at the next generator; 0 when a filter of this level rejects
    /// `ctx`.
    fn fanout(&self, ctx: &C) -> usize;

    /// The fanout when it is the same for every context (a product, with no filter before it).
    fn regular_fanout(&self) -> Option<usize>;

    /// Runs the subtrees of children `children` of `ctx` only.
    fn feed_children<F: Folder<Self::Out>>(
        &self,
        ctx: &C,
        children: Range<usize>,
        out: &mut F,
    ) -> ControlFlow<()>;

    /// Runs the subtree of `ctx` like [`Body::feed`] if the next generator has fewer than
    /// `limit` children; otherwise runs nothing and returns their number, so that the caller can
    /// divide them. Reads the generator once either way.
    fn feed_bounded<F: Folder<Self::Out>>(
        &self,
        ctx: &C,
        limit: usize,
        out: &mut F,
    ) -> Result<ControlFlow<()>, usize>;

    /// Number of outputs of the subtree of `ctx`: exact when no filter stands below the next
    /// generator, otherwise an upper bound (filters of the last level are not evaluated).
    /// `None` if the count overflows `usize`.
    fn count(&self, ctx: C) -> Option<usize>;

    /// [`Body::count`] summed over children `children` of `ctx`.
    fn count_children(&self, ctx: &C, children: Range<usize>) -> Option<usize>;

    /// Materialises the contexts of the next generator for all of `parents` and hands them with
    /// the body below that generator to `visit` — used to split a level too small to balance.
    fn descend<I: Iterator<Item = C>, V: Descend<Self::Out>>(
        &self,
        parents: I,
        visit: V,
    ) -> V::Output;
}

/// The one output of `ctx` through a body with no generator and no filter left.
#[inline(always)]
pub(crate) fn emit_one<C, B: Body<C>>(body: &B, ctx: C) -> B::Out {
    let mut one = One(None);
    let _ = body.emit(ctx, &mut one);
    one.0
        .expect("parcomp internal error: a body with no generator or filter left yields one output")
}

/// Runs `body` on the contexts `context(i)` for `i` in `range`, in order.
///
/// When no generator is left in `body` but filters are, it searches ahead for the next context
/// that passes them — a loop with no side effects, which the compiler vectorises — and only
/// then produces its output. A selective filter (most contexts produce nothing) then costs a
/// few instructions per context instead of a branchy call chain; this is what rayon's
/// `filter` gets from `Iterator::find` too.
#[inline(always)]
pub(crate) fn feed_each<C, B, F>(
    body: &B,
    range: Range<usize>,
    context: impl Fn(usize) -> C,
    out: &mut F,
) -> ControlFlow<()>
where
    B: Body<C>,
    F: Folder<B::Out>,
{
    if B::DEPTH == 0 && F::OWN_LOOP {
        // The outputs as an iterator, the filters searched ahead as below.
        let (mut next, end) = (range.start, range.end);
        let outputs = std::iter::from_fn(move || {
            let i = if B::FILTERS {
                (next..end).find(|&i| body.passes(&context(i)))?
            } else {
                (next < end).then_some(next)?
            };
            next = i + 1;
            let mut one = One(None);
            let _ = body.emit(context(i), &mut one);
            one.0
        });
        out.push_iter(outputs)?;
    } else if B::DEPTH == 0 && B::FILTERS {
        let mut next = range.start;
        while let Some(i) = (next..range.end).find(|&i| body.passes(&context(i))) {
            body.emit(context(i), out)?;
            next = i + 1;
        }
    } else {
        for i in range {
            body.feed(context(i), out)?;
        }
    }
    ControlFlow::Continue(())
}

/// What to do with a materialised level (see [`Body::descend`]).
pub trait Descend<Out> {
    /// The result of the run.
    type Output;
    /// Continues the run on `contexts`, each to be run through `body`.
    fn visit<C, B>(self, contexts: Vec<C>, body: &B) -> Self::Output
    where
        C: Clone + Send + Sync,
        B: Body<C, Out = Out>;
}

/// The executor boundary: what runs a driven comprehension on the host. The CPU backends
/// implement it (the sequential reference and rayon); `crate::dispatch` picks one for each run.
pub trait Executor: Copy + Send + Sync {
    /// Runs `body` for every element of `source`, gathering the outputs in nested-loop order.
    fn collect<S, B>(self, site: &'static Site, source: &S, body: &B) -> Vec<B::Out>
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item>;

    /// Runs `body` for every element of `source`, reducing the outputs.
    fn reduce<S, B, R>(self, site: &'static Site, source: &S, body: &B, reducer: &R) -> R::Acc
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item>,
        R: Reducer<B::Out>;

    /// For a nested comprehension: the size from which one inner space is divided among
    /// threads ([`Executor::reduce_children`]), or `None` if it never is.
    fn divide_inner_from(self) -> Option<usize>;

    /// Reduces the subtrees of children `0..children` of `ctx` (an inner space too large for
    /// one thread), combining the parts in order.
    fn reduce_children<C, B, R>(self, body: &B, ctx: &C, children: usize, reducer: &R) -> R::Acc
    where
        C: Clone + Send + Sync,
        B: Body<C>,
        R: Reducer<B::Out>;
}

/// The root of a pipeline that starts with a source (a comprehension of its own), as opposed
/// to one that starts from the contexts of an enclosing comprehension ([`ContextRoot`]).
pub struct Rooted;

/// How a driven pipeline is finally run: collected into a `Vec`, reduced, or — for the inner
/// comprehension of a nested one — reduced once per context of the enclosing comprehension.
///
/// `Root` is what the pipeline starts from: [`Rooted`], or the context type of the enclosing
/// comprehension. A driver implements the methods that make sense for its roots; the others
/// are never called by the stages of this module.
pub trait Driver<Out: Send, Root> {
    /// The result.
    type Output;
    /// What runs the comprehension on the host.
    type Exec: Executor;

    /// The host executor of this run (nested comprehensions divide large inner spaces with it).
    fn executor(&self) -> Self::Exec;

    /// Runs `body` for every element of `source` (a pipeline rooted at a source).
    fn run<S, B>(self, site: &'static Site, source: S, body: B) -> Self::Output
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = Out>;

    /// Runs `body` for the contexts of the enclosing comprehension (a pipeline rooted at
    /// [`ContextRoot`]).
    fn run_nested<B>(self, site: &'static Site, body: B) -> Self::Output
    where
        B: Body<Root, Out = Out>;
}

/// One stage of a comprehension, built outside-in.
pub trait Stage {
    /// The context after this stage.
    type Item: Clone + Send + Sync;
    /// What the pipeline starts from ([`Rooted`] or an enclosing context type).
    type Root;
    /// Wraps `body` in this stage's body and drives the stage before it.
    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<Self::Item, Out = O>,
        D: Driver<O, Self::Root>;
}

/// A comprehension under construction: the stages so far and where it was written.
#[must_use = "a pipeline does nothing until it is collected"]
pub struct Pipeline<P> {
    site: &'static Site,
    stage: P,
}

impl<P: Stage> Pipeline<P> {
    /// A generator whose source depends on the context: `y <- x..n` becomes
    /// `.expand(|&x| x..n)`. The new context is `(context, element)`.
    pub fn expand<G, S>(self, gen: G) -> Pipeline<Expand<P, G, Identity>>
    where
        G: Fn(&P::Item) -> S + Sync,
        S: Source,
        S::Item: Clone + Send + Sync,
    {
        Pipeline { site: self.site, stage: Expand::new(self.stage, gen, Identity, None) }
    }

    /// [`expand`](Self::expand) with an element map: `y <- (0..x).map(|i| i * z)` becomes
    /// `.expand_map(|&(x, _)| 0..x, |&(_, z), i| i * z)`.
    pub fn expand_map<G, S, M, T>(self, gen: G, map: M) -> Pipeline<Expand<P, G, M>>
    where
        G: Fn(&P::Item) -> S + Sync,
        S: Source,
        M: Fn(&P::Item, S::Item) -> T + Sync,
        T: Clone + Send + Sync,
    {
        Pipeline { site: self.site, stage: Expand::new(self.stage, gen, map, None) }
    }

    /// A generator whose source does not depend on the context (the regular case): `y <- ys`
    /// becomes `.product(&ys)`, evaluated once. Sizes are index arithmetic, no prefix sums.
    pub fn product<S>(self, source: S) -> Pipeline<Expand<P, Invariant<S>, Identity>>
    where
        S: Source + Copy + Sync,
        S::Item: Clone + Send + Sync,
    {
        let size = source.size();
        let stage = Expand::new(self.stage, Invariant(source), Identity, Some(size));
        Pipeline { site: self.site, stage }
    }

    /// [`product`](Self::product) with an element map that may use the context:
    /// `y <- (0..k).map(|i| x + i)` becomes `.product_map(&(0..k), |&x, i| x + i)`.
    pub fn product_map<S, M, T>(self, source: S, map: M) -> Pipeline<Expand<P, Invariant<S>, M>>
    where
        S: Source + Copy + Sync,
        M: Fn(&P::Item, S::Item) -> T + Sync,
        T: Clone + Send + Sync,
    {
        let size = source.size();
        let stage = Expand::new(self.stage, Invariant(source), map, Some(size));
        Pipeline { site: self.site, stage }
    }

    /// A filter qualifier: keeps the contexts for which `pred` holds.
    pub fn filter<F>(self, pred: F) -> Pipeline<Filter<P, F>>
    where
        F: Fn(&P::Item) -> bool + Sync,
    {
        Pipeline { site: self.site, stage: Filter::new(self.stage, pred) }
    }

    /// A `let` qualifier: extends the context with `f(context)`.
    pub fn bind<F, T>(self, f: F) -> Pipeline<Bind<P, F>>
    where
        F: Fn(&P::Item) -> T + Sync,
        T: Clone + Send + Sync,
    {
        Pipeline { site: self.site, stage: Bind::new(self.stage, f) }
    }

    /// Nested comprehensions in the head: extends each context with the result of `reducer`
    /// over the inner comprehension that `inner` builds from the context. The inner
    /// comprehensions run inside the enclosing comprehension's run, not one run per context
    /// (see `nested.rs`). `par![par_sum![v * x[c] | (c, v) <- m.row(i)] | i <- 0..n]` becomes
    /// `.nested(|p| p.expand(|&i| m.row(i)).map(|(_, (c, v))| v * x[c]), SumReducer::new())`.
    pub fn nested<F, I, H, V, R>(self, inner: F, reducer: R) -> Pipeline<Nested<P, I, H, R>>
    where
        F: FnOnce(Pipeline<ContextRoot<P::Item>>) -> Comprehension<I, H>,
        I: Stage<Root = P::Item>,
        H: Fn(I::Item) -> V + Sync,
        V: Send,
        R: Reducer<V>,
        R::Result: Clone + Send + Sync,
    {
        let inner = inner(Pipeline { site: self.site, stage: ContextRoot::new() });
        Pipeline { site: self.site, stage: Nested::new(self.stage, inner, reducer) }
    }

    /// The head of the comprehension: the element computed for each context.
    pub fn map<H, T>(self, head: H) -> Comprehension<P, H>
    where
        H: Fn(P::Item) -> T + Sync,
        T: Send,
    {
        Comprehension::new(self.site, self.stage, head)
    }
}
