//! The qualifiers that act on all the elements produced so far (*comprehensive
//! comprehensions*, Peyton Jones & Wadler): `order by`, `take`, `skip` and `group by`.
//!
//! The macro cuts a comprehension at each of them into parts. Each part is an ordinary
//! comprehension that gathers the variables bound so far (with the sort key, for `order by`);
//! the step between two parts is one of the functions here; the next part reads what it left:
//!
//! ```text
//! par![(d, par_sum![s | s <- salary]) | (n, d, salary) <- &staff, group by d, order by par_sum![s | s <- salary] desc, take 5]
//!
//!   part 1: par![(d, (n, salary)) | (n, d, salary) <- &staff]          Vec<(key, values)>
//!   group_by                                                           Groups: keys + columns
//!   part 2: par![((d, n, salary), par_sum![s | s <- salary]) | (d, (n, salary)) <- &groups]
//!   order_by(.., descending)                                           stable sort by the key
//!   take_vec(.., 5)
//!   part 3: par![(d, par_sum![s | s <- salary]) | (d, n, salary) <- Owned(&sorted)]
//! ```
//!
//! - [`order`]: [`OrderKey`] (the order of keys: tuples lexicographically, floats by
//!   `total_cmp`) and the stable sort, a radix sort on the device for integer and float keys;
//! - [`take`]: `take N` straight after generators runs lazily ([`take_first`], the [`Take`]
//!   reducer over growing windows of the first generator), elsewhere it truncates;
//! - [`group`]: [`group_by`] orders by key (stable) and cuts the values into one column per
//!   variable, so that after it every non-key variable is the group's values as a slice. Keys
//!   that are one number or a pair of numbers are not sorted: a counting sort over their
//!   groups (found by indexing or hashing, only the distinct keys sorted) places the elements;
//!   `order by KEY, take K` is [`order_by_take`], a selection, not a sort;
//! - [`top_k`]: `order by KEY, take K` straight after the part producing the elements keeps
//!   each thread's best `K` as they are produced ([`TopK`]), never gathering the part;
//! - [`aggregate`]: a `group by` whose groups are only reduced afterwards (`par_sum!` over a
//!   grouped variable, `.len()`) does not form them: [`GroupReduce`] folds each element's
//!   items into a table of accumulators per key.

pub mod aggregate;
pub mod group;
pub mod order;
pub mod take;
pub mod top_k;

pub use aggregate::{Filtered, GroupReduce, Grouped, GroupedByRef, GroupedByValue};
pub use group::{group_by, Columns, Groups};
pub use order::{order_by, order_by_take, ByOrd, Keyed, OrderKey};
pub use take::{skip_vec, take_first, take_vec, Take, Window};
pub use top_k::{order_by_take_part, TopK};
