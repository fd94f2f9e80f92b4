//! Six everyday questions over a generated table of orders, answered with comprehensions
//! (`group by`, `order by`, `take`) and written by hand in Rust with rayon (a `Vec` indexed by
//! a small dense key or a `HashMap` per thread, merged; `select_nth_unstable_by` for top-k),
//! the answers checked equal, and the medians of interleaved runs printed side by side.
//!
//! ```text
//! cargo run --release --example query_bench                 # 2,000,000 rows
//! cargo run --release --example query_bench -- --rows 20000000 --runs 5
//! ```
//!
//! The table is held as columns (`amount: f64`, `city: u16` of 200, `category: u8` of 20,
//! `customer: u32` of rows / 10, `month: u8` of 12), generated from a fixed seed.

#[path = "support/timing.rs"]
mod timing;

use parcomp::{par, par_max, par_sum};
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use timing::fmt_duration;

const CITIES: usize = 200;
const CATEGORIES: usize = 20;
const MONTHS: usize = 12;

/// The orders, one `Vec` per column.
struct Table {
    amount: Vec<f64>,
    city: Vec<u16>,
    category: Vec<u8>,
    customer: Vec<u32>,
    /// 1..=12.
    month: Vec<u8>,
}

/// SplitMix64's output function: a well-mixed 64-bit value of `x`.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `rows` orders; row `i` is a function of `i` alone, so the table is generated in parallel.
fn table(rows: usize) -> Table {
    let customers = (rows / 10).max(1) as u64;
    let row = |i: usize| {
        let h = mix(2026 ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
        let g = mix(h);
        // Skewed: city and customer densities grow with their number.
        let city = ((h % (CITIES * CITIES) as u64) as f64).sqrt() as u16;
        let customer = ((g % (customers * customers)) as f64).sqrt() as u32;
        let category = ((h >> 20) % CATEGORIES as u64) as u8;
        let month = 1 + ((h >> 40) % MONTHS as u64) as u8;
        // Cents from 1.00 to 1000.99: many equal amounts.
        let amount = 1.0 + ((g >> 17) % 100_000) as f64 / 100.0;
        (amount, city, category, customer, month)
    };
    let mut t = Table {
        amount: Vec::new(),
        city: Vec::new(),
        category: Vec::new(),
        customer: Vec::new(),
        month: Vec::new(),
    };
    t.amount = (0..rows).into_par_iter().map(|i| row(i).0).collect();
    t.city = (0..rows).into_par_iter().map(|i| row(i).1).collect();
    t.category = (0..rows).into_par_iter().map(|i| row(i).2).collect();
    t.customer = (0..rows).into_par_iter().map(|i| row(i).3).collect();
    t.month = (0..rows).into_par_iter().map(|i| row(i).4).collect();
    t
}

// --- The questions as comprehensions. ---

/// The ten cities with the most revenue, and their revenue.
fn q1_par(t: &Table) -> Vec<(u16, f64)> {
    let (city_of, amount_of) = (&t.city, &t.amount);
    par![(city, par_sum![a | a <- amount]) |
         i <- 0..city_of.len(), let city = city_of[i], let amount = amount_of[i],
         group by city,
         order by par_sum![a | a <- amount] desc,
         take 10]
}

/// Each category: its orders, revenue and largest order.
fn q2_par(t: &Table) -> Vec<(u8, usize, f64, f64)> {
    let (category_of, amount_of) = (&t.category, &t.amount);
    par![(category, amount.len(), par_sum![a | a <- amount],
          par_max![a | a <- amount].unwrap_or(f64::NAN)) |
         i <- 0..category_of.len(), let category = category_of[i], let amount = amount_of[i],
         group by category]
}

/// The hundred largest orders (row and amount), the first placed first among equals.
fn q3_par(t: &Table) -> Vec<(usize, f64)> {
    let amount_of = &t.amount;
    par![(i, amount_of[i]) | i <- 0..amount_of.len(), order by amount_of[i] desc, take 100]
}

/// The twenty customers with the most orders (the lower number first among equals).
fn q4_par(t: &Table) -> Vec<(u32, usize)> {
    let (customer_of, amount_of) = (&t.customer, &t.amount);
    par![(customer, amount.len()) |
         i <- 0..customer_of.len(), let customer = customer_of[i], let amount = amount_of[i],
         group by customer,
         order by amount.len() desc,
         take 20]
}

/// Revenue by (month, city).
fn q5_par(t: &Table) -> Vec<(u8, u16, f64)> {
    let (month_of, city_of, amount_of) = (&t.month, &t.city, &t.amount);
    par![(month, city, par_sum![a | a <- amount]) |
         i <- 0..city_of.len(), let month = month_of[i], let city = city_of[i],
         let amount = amount_of[i],
         group by (month, city)]
}

/// Revenue by month of the orders over 500.00 in the first five categories.
fn q6_par(t: &Table) -> Vec<(u8, f64)> {
    let (month_of, category_of, amount_of) = (&t.month, &t.category, &t.amount);
    par![(month, par_sum![a | a <- amount]) |
         i <- 0..month_of.len(), category_of[i] < 5, amount_of[i] > 500.0,
         let month = month_of[i], let amount = amount_of[i],
         group by month]
}

// --- The same questions written by hand. ---

/// Per-thread partial aggregates in a `Vec` indexed by a dense key, merged.
fn dense<A: Copy + Send + Sync>(
    n: usize,
    groups: usize,
    zero: A,
    add: impl Fn(&mut [A], usize) + Sync,
    merge: impl Fn(&mut A, A) + Sync,
) -> Vec<A> {
    // Blocks of rows, each a loop of its own: `add` is inlined into that loop, whatever the
    // compiler makes of the fold's plumbing (called per row, it was sometimes left out of
    // line, three times slower).
    const BLOCK: usize = 1 << 14;
    (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .fold(
            || vec![zero; groups],
            |mut acc, b| {
                for i in b * BLOCK..n.min((b + 1) * BLOCK) {
                    add(&mut acc, i);
                }
                acc
            },
        )
        .reduce(
            || vec![zero; groups],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    merge(x, y);
                }
                a
            },
        )
}

/// The `k` least of `items` by `less`, sorted: a selection per chunk, then one of the chunks'.
fn top_k<T: Copy + Send + Sync>(
    items: &[T],
    k: usize,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering + Sync,
) -> Vec<T> {
    let select = |mut v: Vec<T>| {
        if v.len() > k && k > 0 {
            v.select_nth_unstable_by(k - 1, &cmp);
        }
        v.truncate(k);
        v
    };
    let chunk = items.len().div_ceil(rayon::current_num_threads() * 4).max(1);
    let best: Vec<T> =
        items.par_chunks(chunk).flat_map_iter(|c| select(c.to_vec())).collect::<Vec<_>>();
    let mut best = select(best);
    best.sort_by(&cmp);
    best
}

fn q1_hand(t: &Table) -> Vec<(u16, f64)> {
    let revenue = dense(
        t.amount.len(),
        CITIES,
        0.0,
        |acc, i| acc[t.city[i] as usize] += t.amount[i],
        |a, b| *a += b,
    );
    let cities: Vec<(u16, f64)> =
        (0..CITIES as u16).map(|c| (c, revenue[c as usize])).filter(|c| c.1 != 0.0).collect();
    top_k(&cities, 10, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)))
}

fn q2_hand(t: &Table) -> Vec<(u8, usize, f64, f64)> {
    let per = dense(
        t.amount.len(),
        CATEGORIES,
        (0usize, 0.0, f64::NEG_INFINITY),
        |acc, i| {
            let g = &mut acc[t.category[i] as usize];
            let a = t.amount[i];
            g.0 += 1;
            g.1 += a;
            if a.total_cmp(&g.2).is_gt() {
                g.2 = a;
            }
        },
        |a, b| {
            a.0 += b.0;
            a.1 += b.1;
            if b.2.total_cmp(&a.2).is_gt() {
                a.2 = b.2;
            }
        },
    );
    (0..CATEGORIES)
        .filter(|&c| per[c].0 > 0)
        .map(|c| (c as u8, per[c].0, per[c].1, per[c].2))
        .collect()
}

fn q3_hand(t: &Table) -> Vec<(usize, f64)> {
    let rows: Vec<(usize, f64)> = t.amount.par_iter().copied().enumerate().collect();
    top_k(&rows, 100, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)))
}

fn q4_hand(t: &Table) -> Vec<(u32, usize)> {
    let counts = t
        .customer
        .par_iter()
        .with_min_len(1 << 14)
        .fold(HashMap::<u32, usize>::new, |mut m, &c| {
            *m.entry(c).or_default() += 1;
            m
        })
        .reduce(HashMap::new, |mut a, b| {
            if a.len() < b.len() {
                return merge_counts(b, a);
            }
            for (k, v) in b {
                *a.entry(k).or_default() += v;
            }
            a
        });
    let counts: Vec<(u32, usize)> = counts.into_iter().collect();
    top_k(&counts, 20, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)))
}

fn merge_counts(mut a: HashMap<u32, usize>, b: HashMap<u32, usize>) -> HashMap<u32, usize> {
    for (k, v) in b {
        *a.entry(k).or_default() += v;
    }
    a
}

fn q5_hand(t: &Table) -> Vec<(u8, u16, f64)> {
    let revenue = dense(
        t.amount.len(),
        (MONTHS + 1) * CITIES,
        (0usize, 0.0),
        |acc, i| {
            let g = &mut acc[t.month[i] as usize * CITIES + t.city[i] as usize];
            g.0 += 1;
            g.1 += t.amount[i];
        },
        |a, b| {
            a.0 += b.0;
            a.1 += b.1;
        },
    );
    (0..revenue.len())
        .filter(|&g| revenue[g].0 > 0)
        .map(|g| ((g / CITIES) as u8, (g % CITIES) as u16, revenue[g].1))
        .collect()
}

fn q6_hand(t: &Table) -> Vec<(u8, f64)> {
    let revenue = dense(
        t.amount.len(),
        MONTHS + 1,
        (0usize, 0.0),
        |acc, i| {
            if t.category[i] < 5 && t.amount[i] > 500.0 {
                let g = &mut acc[t.month[i] as usize];
                g.0 += 1;
                g.1 += t.amount[i];
            }
        },
        |a, b| {
            a.0 += b.0;
            a.1 += b.1;
        },
    );
    (0..revenue.len()).filter(|&m| revenue[m].0 > 0).map(|m| (m as u8, revenue[m].1)).collect()
}

// --- Checking and timing. ---

/// Sums computed in another order differ in the last bits.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// `--rows N`, `--runs N`, `--only Q` (the question numbered Q, 1 to 6; several `--only` add up).
fn arguments() -> (usize, usize, Vec<usize>) {
    let mut rows = 2_000_000;
    let mut runs = 9;
    let mut only = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = |args: &mut dyn Iterator<Item = String>| -> usize {
            let v = args.next().unwrap_or_default().replace('_', "");
            v.parse().unwrap_or_else(|_| panic!("{arg} takes a number, not {v:?}"))
        };
        match arg.as_str() {
            "--rows" => rows = value(&mut args),
            "--runs" => runs = value(&mut args),
            "--only" => only.push(value(&mut args)),
            other => panic!("unknown argument {other:?} (--rows N, --runs N, --only Q)"),
        }
    }
    (rows, runs, only)
}

/// Times `a` and `b` `runs` times each, interleaved; their median times and last results.
fn interleaved<A, B>(
    runs: usize,
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
) -> (Duration, Duration, A, B) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    let (mut ra, mut rb) = (a(), b());
    for run in 0..runs.max(1) {
        // Alternate which goes first, so that neither always finds the caches warm.
        let mut time_a = || {
            let start = Instant::now();
            let r = a();
            ta.push(start.elapsed());
            ra = r;
        };
        if run % 2 == 0 {
            time_a();
            let start = Instant::now();
            let r = b();
            tb.push(start.elapsed());
            rb = r;
        } else {
            let start = Instant::now();
            let r = b();
            tb.push(start.elapsed());
            rb = r;
            time_a();
        }
    }
    ta.sort();
    tb.sort();
    (ta[ta.len() / 2], tb[tb.len() / 2], ra, rb)
}

fn main() {
    let (rows, runs, only) = arguments();
    let asked = |q: usize| only.is_empty() || only.contains(&q);
    let start = Instant::now();
    let t = table(rows);
    println!(
        "{rows} orders generated in {}; {} threads; medians of {runs} interleaved runs\n",
        fmt_duration(start.elapsed()),
        rayon::current_num_threads()
    );
    println!("| question | parcomp | by hand | ratio |");
    println!("|---|---:|---:|---:|");
    let mut ratios = Vec::new();
    let mut row = |name: &str, p: Duration, h: Duration| {
        let ratio = p.as_secs_f64() / h.as_secs_f64();
        ratios.push(ratio);
        println!("| {name} | {} | {} | {ratio:.2}× |", fmt_duration(p), fmt_duration(h));
    };

    if asked(1) {
        let (p, h, a, b) = interleaved(runs, || q1_par(&t), || q1_hand(&t));
        assert_eq!(a.len(), b.len());
        assert!(a.iter().zip(&b).all(|(x, y)| x.0 == y.0 && close(x.1, y.1)), "{a:?}\n{b:?}");
        row("revenue per city, top 10", p, h);
    }

    if asked(2) {
        let (p, h, a, b) = interleaved(runs, || q2_par(&t), || q2_hand(&t));
        assert_eq!(a.len(), b.len());
        assert!(
            a.iter()
                .zip(&b)
                .all(|(x, y)| x.0 == y.0 && x.1 == y.1 && close(x.2, y.2) && x.3 == y.3),
            "{a:?}\n{b:?}"
        );
        row("per category count, sum, max", p, h);
    }

    if asked(3) {
        let (p, h, a, b) = interleaved(runs, || q3_par(&t), || q3_hand(&t));
        assert_eq!(a, b);
        row("top 100 orders by value", p, h);
    }

    if asked(4) {
        let (p, h, a, b) = interleaved(runs, || q4_par(&t), || q4_hand(&t));
        assert_eq!(a, b);
        row("top 20 customers by orders", p, h);
    }

    if asked(5) {
        let (p, h, a, b) = interleaved(runs, || q5_par(&t), || q5_hand(&t));
        assert_eq!(a.len(), b.len());
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.0 == y.0 && x.1 == y.1 && close(x.2, y.2)),
            "{a:?}\n{b:?}"
        );
        row("revenue by (month, city)", p, h);
    }

    if asked(6) {
        let (p, h, a, b) = interleaved(runs, || q6_par(&t), || q6_hand(&t));
        assert_eq!(a.len(), b.len());
        assert!(a.iter().zip(&b).all(|(x, y)| x.0 == y.0 && close(x.1, y.1)), "{a:?}\n{b:?}");
        row("filter, revenue by month", p, h);
    }

    let geomean = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    println!("\nAll answers equal. Geometric mean of the ratios: {geomean:.2}×");
}
