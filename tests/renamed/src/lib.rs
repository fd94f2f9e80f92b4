//! parcomp renamed to `pc` in `Cargo.toml`: every macro of the family expands to code that
//! reaches the runtime as `::pc`, not `::parcomp`.

#[cfg(test)]
mod tests {
    use pc::{par, par_count, par_explain, par_max_by_key, par_reduce, par_sum};

    #[pc::par_fn]
    fn square(x: i64) -> i64 {
        x * x
    }

    #[test]
    fn every_form_expands_under_the_new_name() {
        let n = 10i64;
        assert_eq!(par![x * 2 | x <- 0..4], [0, 2, 4, 6]);
        assert_eq!(par_sum![square(x) | x <- 1..=n], 385);
        assert_eq!(par_count![() | x <- 0..n, y <- x..n, (x + y) % 3 == 0], 19);
        assert_eq!(par_reduce!(|a: i64, b| a.max(b), 0; x % 7 | x <- 0..n), 6);
        // Nested, zipped branches with several qualifiers (computed first by `par!`).
        let rows = vec![vec![1, 2], vec![], vec![3]];
        assert_eq!(par![par_sum![v | v <- row] | row <- &rows], [3, 0, 3]);
        assert_eq!(par![(a, b) | a <- 0..3 | b <- 10..20, b % 2 == 0], [(0, 10), (1, 12), (2, 14)]);
        // Transforms and the by-key extrema.
        let words = vec!["pear".to_string(), "fig".into(), "banana".into()];
        assert_eq!(par![w.as_str() | w <- &words, order by w.len(), take 2], ["fig", "pear"]);
        assert_eq!(par_max_by_key!(|w| w.len(); w.as_str() | w <- &words), Some("banana"));
        assert!(par_explain![x | x <- 0..n, group by x].contains("group by"));
    }
}
