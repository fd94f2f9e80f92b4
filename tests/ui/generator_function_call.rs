use parcomp::par;

fn divisors(n: u32) -> Vec<u32> {
    (1..=n).filter(|d| n % d == 0).collect()
}

fn main() {
    let _ = par![(n, d) | n <- 1..20u32, d <- divisors(n)];
}
