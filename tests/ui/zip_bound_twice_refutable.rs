use parcomp::par;

// Patterns that may not match are desugared into a test and a binding; the error names the
// variable the user wrote, never a name of the expansion.
fn main() {
    let opts = vec![Some(1), None];
    let _ = par![a | Some(a) <- &opts | Some(a) <- &opts];
}
