#!/usr/bin/env python3
"""Compile-time benchmark: what a crate full of comprehensions costs to build.

It generates small binary crates beside each other (under `target/compile-time/`, sharing one
target folder, so parcomp and rayon are built once) and times `cargo build` of the generated
crate alone, the way a user's edit-build loop feels it: the dependencies are up to date, the one
crate is rebuilt.

- `ten`: ten everyday computations, each in its own function, written three ways: with `par!`
  and its reductions, with rayon (`par_iter`, `flat_map_iter`, `filter`, `sum`, `max`, `count`),
  and as plain `for` loops. Debug and release.
- `one`: a crate with one `par![x * 2 | x <- xs]`, and one with the Pythagorean triples.
- `lets`: a comprehension with a chain of N `let`s (N = 4, 8, 16, 32), debug.
- `gens`: a comprehension with a chain of N dependent generators and a filter (N = 2, 4, 8,
  16), debug.

With `--features opencl` (or `cuda`) the crates depend on parcomp with that feature: every
comprehension then compiles its device half too.

Each figure is the median of `--reps` builds (default 3), interleaved. Run from the repository
root:

    python3 benches/compile_time.py [--reps N] [--only ten,one,lets,gens] [--lets 4,8,16,32]
        [--features opencl]

The time of an empty crate (the same dependencies, `fn main() {}`) is printed too and
subtracted: what is left is what the comprehensions cost.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "compile-time")

PRELUDE = """\
#![allow(clippy::all, unused)]
use std::hint::black_box;
"""

# The ten computations. Each takes the same inputs: `xs: &[u64]`, `rows: &[Vec<u64>]`, `n: u64`.
TEN = {
    "par": """\
use parcomp::{par, par_count, par_max, par_sum};

fn map(xs: &[u64]) -> Vec<u64> { par![x * 2 | x <- xs] }
fn filter(xs: &[u64]) -> Vec<u64> { par![x | x <- xs, x % 3 == 0] }
fn pairs(n: u64) -> Vec<(u64, u64)> { par![(i, j) | i <- 0..n, j <- 0..i] }
fn triples(n: u64) -> Vec<(u64, u64, u64)> {
    par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z]
}
fn row_sums(rows: &[Vec<u64>]) -> Vec<u64> { par![par_sum![v | v <- r] | r <- rows] }
fn sum(xs: &[u64]) -> u64 { par_sum![x * x | x <- xs] }
fn max_pair(n: u64) -> Option<u64> { par_max![i * j | i <- 0..n, j <- 0..n, (i + j) % 7 == 0] }
fn lets(n: u64) -> Vec<(u64, u64, u64)> {
    par![(x, y, s) | x <- 0..n, let a = x * 2, y <- 0..a, let s = a + y, s % 3 == 0]
}
fn expand(n: u64) -> Vec<u64> { par![y | x <- 0..n, y <- x..2 * x] }
fn count(xs: &[u64]) -> usize { par_count![x | x <- xs, x % 5 == 1] }
""",
    "rayon": """\
use rayon::prelude::*;

fn map(xs: &[u64]) -> Vec<u64> { xs.par_iter().map(|&x| x * 2).collect() }
fn filter(xs: &[u64]) -> Vec<u64> { xs.par_iter().copied().filter(|x| x % 3 == 0).collect() }
fn pairs(n: u64) -> Vec<(u64, u64)> {
    (0..n).into_par_iter().flat_map_iter(|i| (0..i).map(move |j| (i, j))).collect()
}
fn triples(n: u64) -> Vec<(u64, u64, u64)> {
    (1..n)
        .into_par_iter()
        .flat_map_iter(|x| {
            (x..n).flat_map(move |y| {
                (y..x + y).filter(move |&z| z < n && x * x + y * y == z * z).map(move |z| (x, y, z))
            })
        })
        .collect()
}
fn row_sums(rows: &[Vec<u64>]) -> Vec<u64> { rows.par_iter().map(|r| r.iter().sum()).collect() }
fn sum(xs: &[u64]) -> u64 { xs.par_iter().map(|&x| x * x).sum() }
fn max_pair(n: u64) -> Option<u64> {
    (0..n)
        .into_par_iter()
        .flat_map_iter(|i| (0..n).filter(move |j| (i + j) % 7 == 0).map(move |j| i * j))
        .max()
}
fn lets(n: u64) -> Vec<(u64, u64, u64)> {
    (0..n)
        .into_par_iter()
        .flat_map_iter(|x| {
            let a = x * 2;
            (0..a).map(move |y| (y, a + y)).filter(|&(_, s)| s % 3 == 0).map(move |(y, s)| (x, y, s))
        })
        .collect()
}
fn expand(n: u64) -> Vec<u64> { (0..n).into_par_iter().flat_map_iter(|x| x..2 * x).collect() }
fn count(xs: &[u64]) -> usize { xs.par_iter().filter(|&&x| x % 5 == 1).count() }
""",
    "loops": """\
fn map(xs: &[u64]) -> Vec<u64> { let mut o = Vec::new(); for &x in xs { o.push(x * 2) } o }
fn filter(xs: &[u64]) -> Vec<u64> {
    let mut o = Vec::new(); for &x in xs { if x % 3 == 0 { o.push(x) } } o
}
fn pairs(n: u64) -> Vec<(u64, u64)> {
    let mut o = Vec::new(); for i in 0..n { for j in 0..i { o.push((i, j)) } } o
}
fn triples(n: u64) -> Vec<(u64, u64, u64)> {
    let mut o = Vec::new();
    for x in 1..n { for y in x..n { for z in y..x + y {
        if z < n && x * x + y * y == z * z { o.push((x, y, z)) }
    } } }
    o
}
fn row_sums(rows: &[Vec<u64>]) -> Vec<u64> {
    let mut o = Vec::new(); for r in rows { let mut s = 0; for &v in r { s += v } o.push(s) } o
}
fn sum(xs: &[u64]) -> u64 { let mut s = 0; for &x in xs { s += x * x } s }
fn max_pair(n: u64) -> Option<u64> {
    let mut m = None;
    for i in 0..n { for j in 0..n { if (i + j) % 7 == 0 { m = m.max(Some(i * j)) } } }
    m
}
fn lets(n: u64) -> Vec<(u64, u64, u64)> {
    let mut o = Vec::new();
    for x in 0..n { let a = x * 2; for y in 0..a { let s = a + y; if s % 3 == 0 { o.push((x, y, s)) } } }
    o
}
fn expand(n: u64) -> Vec<u64> { let mut o = Vec::new(); for x in 0..n { for y in x..2 * x { o.push(y) } } o }
fn count(xs: &[u64]) -> usize { let mut c = 0; for &x in xs { if x % 5 == 1 { c += 1 } } c }
""",
}

TEN_MAIN = """\
fn main() {
    let xs: Vec<u64> = black_box((0..1000).collect());
    let rows: Vec<Vec<u64>> = black_box((0..100).map(|i| (0..i).collect()).collect());
    let n = black_box(100u64);
    black_box(map(&xs));
    black_box(filter(&xs));
    black_box(pairs(n));
    black_box(triples(n));
    black_box(row_sums(&rows));
    black_box(sum(&xs));
    black_box(max_pair(n));
    black_box(lets(n));
    black_box(expand(n));
    black_box(count(&xs));
}
"""

ONE = {
    "map": "use parcomp::par;\nfn main() {\n    let xs: Vec<u64> = black_box((0..1000).collect());\n"
    "    black_box(par![x * 2 | x <- &xs]);\n}\n",
    "triples": "use parcomp::par;\nfn main() {\n    let n = black_box(100u64);\n"
    "    black_box(par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, "
    "x * x + y * y == z * z]);\n}\n",
}


def lets_source(count):
    lets = ", ".join(
        f"let a{k} = a{k - 1} * 3 + {k}" if k > 0 else "let a0 = x + 1" for k in range(count)
    )
    return (
        "use parcomp::par;\nfn main() {\n    let xs: Vec<u64> = black_box((0..1000).collect());\n"
        f"    black_box(par![a{count - 1} | x <- &xs, {lets}]);\n}}\n"
    )


def generators_source(count):
    gens = ", ".join(
        f"x{k} <- 0..2u64" if k == 0 else f"x{k} <- x{k - 1}..x{k - 1} + 2" for k in range(count)
    )
    return (
        "use parcomp::par;\nfn main() {\n"
        f"    black_box(par![x{count - 1} | {gens}, x{count - 1} % 3 != 1]);\n}}\n"
    )


EMPTY = "fn main() {}\n"


FEATURES = []


def write_crate(name, body):
    suffix = "_" + "_".join(FEATURES) if FEATURES else ""
    name = name + suffix
    path = os.path.join(WORK, name)
    os.makedirs(os.path.join(path, "src"), exist_ok=True)
    with open(os.path.join(path, "Cargo.toml"), "w") as f:
        f.write(
            f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
            f'[dependencies]\nparcomp = {{ path = "{ROOT}", features = {json.dumps(FEATURES)} }}\n'
            'rayon = "1"\n\n[workspace]\n'
        )
    main = os.path.join(path, "src", "main.rs")
    with open(main, "w") as f:
        f.write(PRELUDE + body)
    lock = os.path.join(ROOT, "Cargo.lock")
    if not os.path.exists(os.path.join(path, "Cargo.lock")):
        shutil.copy(lock, os.path.join(path, "Cargo.lock"))
    return path


def build(path, release):
    """One rebuild of the crate alone, in seconds."""
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(WORK, "target"), CARGO_INCREMENTAL="0")
    args = ["cargo", "build", "--quiet"] + (["--release"] if release else [])
    # Up to date first (the dependencies), then the timed build with only this crate stale.
    subprocess.run(args, cwd=path, env=env, check=True)
    os.utime(os.path.join(path, "src", "main.rs"))
    start = time.perf_counter()
    subprocess.run(args, cwd=path, env=env, check=True)
    return time.perf_counter() - start


def measure(crates, profiles, reps):
    """{(crate, profile): median seconds}, builds interleaved across crates."""
    times = {}
    for _ in range(reps):
        for name, path in crates:
            for release in profiles:
                times.setdefault((name, release), []).append(build(path, release))
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", default="ten,one,lets,gens")
    parser.add_argument("--lets", default="4,8,16,32", help="the lengths of the let chains")
    parser.add_argument("--features", default="", help="parcomp's features, e.g. opencl")
    args = parser.parse_args()
    only = set(args.only.split(","))
    FEATURES.extend(f for f in args.features.split(",") if f)
    os.makedirs(WORK, exist_ok=True)

    empty = write_crate("ct_empty", EMPTY)
    base = measure([("empty", empty)], [False, True], args.reps)
    print(f"empty crate: debug {base[('empty', False)]:.2f} s, release {base[('empty', True)]:.2f} s")
    print()

    if "ten" in only:
        crates = [(k, write_crate(f"ct_ten_{k}", TEN[k] + TEN_MAIN)) for k in TEN]
        t = measure(crates, [False, True], args.reps)
        print("| the ten computations as | debug build | release build |")
        print("|---|---:|---:|")
        for k in TEN:
            d = t[(k, False)] - base[("empty", False)]
            r = t[(k, True)] - base[("empty", True)]
            print(f"| {k} | {d:.2f} s | {r:.2f} s |")
        d = (t[("par", False)] - base[("empty", False)]) / (t[("rayon", False)] - base[("empty", False)])
        r = (t[("par", True)] - base[("empty", True)]) / (t[("rayon", True)] - base[("empty", True)])
        print(f"\npar! / rayon: debug {d:.2f}x, release {r:.2f}x\n")

    if "one" in only:
        crates = [(k, write_crate(f"ct_one_{k}", ONE[k])) for k in ONE]
        t = measure(crates, [False], args.reps)
        for k in ONE:
            print(f"one comprehension ({k}): debug +{t[(k, False)] - base[('empty', False)]:.2f} s")
        print()

    def chain_table(title, name, counts, source):
        """Debug builds of one comprehension with a chain of `count` qualifiers."""
        crates = [(str(c), write_crate(f"ct_{name}_{c}", source(c))) for c in counts]
        t = measure(crates, [False], args.reps)
        print(f"| {title} | debug build |")
        print("|---:|---:|")
        for c in counts:
            print(f"| {c} | {t[(str(c), False)] - base[('empty', False)]:.2f} s |")
        print()

    if "lets" in only:
        chain_table("lets", "lets", [int(c) for c in args.lets.split(",")], lets_source)
    if "gens" in only:
        chain_table("dependent generators", "gens", [2, 4, 8, 16], generators_source)


if __name__ == "__main__":
    sys.exit(main())
