//! The everyday language compiles without warnings: borrowed elements, char ranges, refutable
//! patterns, transforms, and `par_explain!` mentioning a variable used nowhere else.
#![deny(warnings)]

use parcomp::{par, par_explain, par_max_by_key, par_sum, ByOrd};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Date(u32);

fn main() {
    let words: Vec<String> = vec!["a".into(), "bb".into()];
    let lens = par![w.len() | w <- &words, !w.is_empty()];
    let letters = par![c | c <- 'a'..='c'];
    let opts = vec![Some(1), None];
    let somes = par![v | Some(v) <- &opts];
    let longest = par_max_by_key!(|w| w.len(); w | w <- &words);
    let sorted = par![w | w <- &words, order by w.len() desc, take 1];
    let dates = [Date(3), Date(1)];
    let by_date = par![d.0 | d <- dates, order by ByOrd(d)];
    let groups = par![(k, par_sum![x | x <- x]) | x <- 0..10, let k = x % 2, group by k];
    let only_here = 10;
    let plan = par_explain![x | x <- 0..only_here, take 3];
    assert!(!plan.is_empty());
    let _ = (lens, letters, somes, longest, sorted, by_date, groups);
}
