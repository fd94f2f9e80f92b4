use parcomp::par;

fn main() {
    let names = vec!["a", "b"];
    let ages = vec![1, 2];
    let _ = par![(name, age) | name <- names | age <- ages];
}
