//! The segmented primitives of flattening by expansion, as a public API on slices.
