use crate::text::text;
use crate::{back::rust::emit, compile, Terminal};
use quote::quote;

fn emitted(input: proc_macro2::TokenStream) -> String {
    let plan = compile(input, Terminal::Collect).unwrap_or_else(|e| panic!("{e}"));
    text(&emit(&plan, &quote!(rt)))
}

#[test]
fn pythagorean_triples_become_two_expands() {
    let code = emitted(
        quote!((x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z),
    );
    assert!(code.contains("match((1)..(n),) { (__parcomp_root,) =>"), "{code}");
    // A range root is the pipeline's own copy (its start then stays in a register).
    assert!(
        code.contains("rt::source(&__PARCOMP_SITE, ::core::clone::Clone::clone(&__parcomp_root))"),
        "{code}"
    );
    assert!(code.contains(".expand(|&x| (x)..(n))"), "{code}");
    assert!(code.contains(".expand(|&(x, y)| (y)..(x + y))"), "{code}");
    assert!(code.contains(".filter(|&(_, z)| z < n)"), "{code}");
    assert!(code.contains(".filter(|&((x, y), z)| x * x + y * y == z * z)"), "{code}");
    assert!(code.contains(".map(|((x, y), z)| (x, y, z))"), "{code}");
}

/// Only a root that is a range is copied: a collection is borrowed, as is a mapped range (its
/// function may not be `Clone`). (A `take`'s root, a window of the whole, is borrowed too: the
/// window is not `Clone`, so the transform tests' `take`s over ranges would not compile.)
#[test]
fn roots_other_than_ranges_are_borrowed() {
    for input in [quote!(x | x <- xs), quote!(x | x <- (0..n).map(f)), quote!(x | x <- &v[1..])] {
        let code = emitted(input);
        assert!(code.contains("rt::source(&__PARCOMP_SITE, &__parcomp_root)"), "{code}");
    }
}

#[test]
fn invariant_generators_become_products() {
    let code = emitted(quote!(x + y | x <- xs, y <- 0..m));
    assert!(
        code.contains("match (__parcomp_collection_0, (0)..(m),)") || code.contains(", (0)..(m),)"),
        "{code}"
    );
    assert!(code.contains(".product(&__parcomp_product_0)"), "{code}");
    let code = emitted(quote!(x + y | x <- xs, y <- (0..m).map(|j| j + x)));
    assert!(
        code.contains(
            ".product_map(&__parcomp_product_0, |&x, __parcomp_item| \
             rt::apply(__parcomp_item, &(|j| j + x)))"
        ),
        "{code}"
    );
}

#[test]
fn rows_are_read_in_place_from_hoisted_collections() {
    let code = emitted(quote!(v | i <- 0..n, v <- rows[i]));
    assert!(code.contains("let __parcomp_collection_0 = &(rows);"), "{code}");
    // Read through `Elements`, which borrows elements that are not `Copy`.
    assert!(
        code.contains(".expand(|&i| (&rt::Elements(&__parcomp_collection_0[i])).elements())"),
        "{code}"
    );
    let code = emitted(quote!(c * v | i <- 0..m.len(), (c, v) <- m.row(i)));
    assert!(
        code.contains(".expand(|&i| (&rt::Elements(__parcomp_collection_0.row(i))).elements())"),
        "{code}"
    );
    assert!(code.contains(".map(|(_, (c, v))| c * v)"), "{code}");
    let code = emitted(quote!(v | row <- &m, v <- row));
    assert!(code.contains(".expand(|&row| (&rt::Elements(row)).elements())"), "{code}");
}

#[test]
fn later_bindings_shadow_earlier_ones() {
    let code = emitted(quote!(x | x <- 0..3, x <- 0..x));
    assert!(code.contains(".map(|(_, x)| x)"), "{code}");
}

#[test]
fn the_plan_names_nested_comprehensions() {
    let plan =
        compile(quote!((i, par_sum![v | v <- m.row(i)]) | i <- 0..m.len()), Terminal::Collect)
            .unwrap_or_else(|e| panic!("{e}"));
    let explained = plan.explain();
    assert!(
        explained.contains("nested   nested_0 = par_sum![v | v <- m.row(i)]  sum per element"),
        "{explained}"
    );
    assert!(explained.contains("map      (i, nested_0)"), "{explained}");
    assert!(explained.contains("collect  Vec in nested-loop order"), "{explained}");
}
