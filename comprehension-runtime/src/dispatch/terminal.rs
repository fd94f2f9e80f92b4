//! The terminals: running a [`Comprehension`] (`collect`, `reduce`) where
//! [`place`](super::place) puts it — the host executor in effect, or the comprehension's device
//! half ([`Offload`]) on a device.

use super::place::{self, host_executor, HostExecutor};
use crate::gpu::{Offload, OutputProbe};
use crate::pipeline::{Body, Comprehension, Driver, MapBody, Reducer, Rooted, Stage};
use crate::site::Site;
use crate::source::Source;
use std::marker::PhantomData;

impl<P, H, T> Comprehension<P, H>
where
    P: Stage<Root = Rooted>,
    H: Fn(P::Item) -> T + Sync,
    T: Send,
{
    /// Runs the comprehension on the host backend in effect and returns its elements in
    /// nested-loop order.
    pub fn collect(self) -> Vec<T> {
        self.collect_on(Offload::host_only("no device half was given"))
    }

    /// Runs the comprehension on the backend in effect — its device half `offload` on a device
    /// when the backend places it there — and returns its elements in nested-loop order.
    pub fn collect_on(self, offload: Offload<'_, T>) -> Vec<T> {
        let exec = host_executor();
        self.stage.drive(self.site, MapBody::new(self.head), Collect { offload, exec })
    }

    /// Runs the comprehension on the backend in effect, leaving its elements on the device
    /// when it runs there (`par_device!`).
    pub fn collect_device_on(self, offload: Offload<'_, T>) -> crate::DeviceVec<T>
    where
        T: crate::gpu::types::DeviceType,
    {
        let exec = host_executor();
        self.stage.drive(self.site, MapBody::new(self.head), CollectDevice { offload, exec })
    }

    /// Runs the comprehension on the host backend in effect, combining its elements with
    /// `reducer`.
    pub fn reduce_with<R: Reducer<T>>(self, reducer: R) -> R::Result {
        self.reduce_on(reducer, Offload::host_only("no device half was given"))
    }

    /// Runs the comprehension on the backend in effect (see [`collect_on`](Self::collect_on)),
    /// combining its elements with `reducer`.
    pub fn reduce_on<R: Reducer<T>>(self, reducer: R, offload: Offload<'_, T>) -> R::Result {
        let exec = host_executor();
        let driver = Reduce { reducer: &reducer, offload, exec };
        let acc = self.stage.drive(self.site, MapBody::new(self.head), driver);
        reducer.finish(acc)
    }

    /// The type of the elements, for the emitted code to ask (by autoref dispatch) whether
    /// the device can represent them.
    pub fn output_probe(&self) -> OutputProbe<T> {
        OutputProbe(PhantomData)
    }
}

/// The terminal that gathers the outputs into a `Vec`, in nested-loop order.
pub struct Collect<'a, T> {
    offload: Offload<'a, T>,
    exec: HostExecutor,
}

impl<T: Send> Driver<T, Rooted> for Collect<'_, T> {
    type Output = Vec<T>;
    type Exec = HostExecutor;

    fn executor(&self) -> HostExecutor {
        self.exec
    }

    fn run<S, B>(self, site: &'static Site, source: S, body: B) -> Vec<T>
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = T>,
    {
        place::collect(site, self.exec, self.offload, &source, &body)
    }

    fn run_nested<B: Body<Rooted, Out = T>>(self, _: &'static Site, _: B) -> Vec<T> {
        unreachable!("parcomp: a comprehension rooted at a source has no enclosing context")
    }
}

/// The terminal that leaves the outputs on the device (`par_device!`).
pub struct CollectDevice<'a, T> {
    offload: Offload<'a, T>,
    exec: HostExecutor,
}

impl<T: crate::gpu::types::DeviceType> Driver<T, Rooted> for CollectDevice<'_, T> {
    type Output = crate::DeviceVec<T>;
    type Exec = HostExecutor;

    fn executor(&self) -> HostExecutor {
        self.exec
    }

    fn run<S, B>(self, site: &'static Site, source: S, body: B) -> crate::DeviceVec<T>
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = T>,
    {
        place::collect_device(site, self.exec, self.offload, &source, &body)
    }

    fn run_nested<B: Body<Rooted, Out = T>>(self, _: &'static Site, _: B) -> crate::DeviceVec<T> {
        unreachable!("parcomp: a comprehension rooted at a source has no enclosing context")
    }
}

/// The terminal that reduces the outputs (returns the accumulator; the caller finishes it).
pub struct Reduce<'a, 'r, T, R> {
    reducer: &'r R,
    offload: Offload<'a, T>,
    exec: HostExecutor,
}

impl<T: Send, R: Reducer<T>> Driver<T, Rooted> for Reduce<'_, '_, T, R> {
    type Output = R::Acc;
    type Exec = HostExecutor;

    fn executor(&self) -> HostExecutor {
        self.exec
    }

    fn run<S, B>(self, site: &'static Site, source: S, body: B) -> R::Acc
    where
        S: Source + Sync,
        S::Item: Clone + Send + Sync,
        B: Body<S::Item, Out = T>,
    {
        place::reduce(site, self.exec, self.offload, &source, &body, self.reducer)
    }

    fn run_nested<B: Body<Rooted, Out = T>>(self, _: &'static Site, _: B) -> R::Acc {
        unreachable!("parcomp: a comprehension rooted at a source has no enclosing context")
    }
}
