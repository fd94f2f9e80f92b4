use parcomp::par;

fn neighbours(node: usize) -> Vec<usize> {
    vec![node + 1]
}

fn main() {
    let nodes = vec![0usize, 1, 2];
    let _ = par![(node, next) | mut node <- nodes, next <- neighbours(node), weight > 0, weight <- 0..next];
}
