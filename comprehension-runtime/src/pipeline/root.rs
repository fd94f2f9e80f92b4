//! The first generator: a source evaluated once and read by index.

use super::{Body, Driver, Pipeline, Rooted, Stage};
use crate::site::Site;
use crate::source::Source;

/// The root stage: the elements of the first generator.
pub struct Root<S> {
    source: S,
}

/// Starts a comprehension at `site` whose first generator reads `source`.
pub fn source<S>(site: &'static Site, source: S) -> Pipeline<Root<S>>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
{
    Pipeline { site, stage: Root { source } }
}

impl<S> Stage for Root<S>
where
    S: Source + Sync,
    S::Item: Clone + Send + Sync,
{
    type Item = S::Item;
    type Root = Rooted;

    fn drive<O, B, D>(self, site: &'static Site, body: B, driver: D) -> D::Output
    where
        O: Send,
        B: Body<S::Item, Out = O>,
        D: Driver<O, Rooted>,
    {
        driver.run(site, self.source, body)
    }
}
