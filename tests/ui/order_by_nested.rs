use parcomp::par;

fn main() {
    let rows = vec![vec![3, 1], vec![2]];
    let _ = par![par![x | x <- row, order by x] | row <- &rows];
}
