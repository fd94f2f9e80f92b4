use parcomp::par;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Date(u32);

fn main() {
    let dates = [Date(3), Date(1)];
    let _ = par![d.0 | d <- dates, order by d];
}
