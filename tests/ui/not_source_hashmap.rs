use parcomp::par;
use std::collections::HashMap;

fn main() {
    let ages: HashMap<&str, u32> = HashMap::from([("ada", 36), ("alan", 41)]);
    let _ = par![age | age <- ages];
}
