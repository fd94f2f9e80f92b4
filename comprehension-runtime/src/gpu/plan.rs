//! The device plan: what the macro emits for the device, as static data.
//!
//! The macro writes a comprehension's kernels (`functions` and `kernels`, in the kernel
//! dialect, over type classes `PC_C0`, `PC_C1`, ...) and describes them here: the classes and
//! how they relate, the values captured from the caller, and the comprehension's levels — which
//! kernel computes each level's sizes, which runs it, which variables it reads from its parents
//! and writes for its children. The executor (`executor.rs`) reads nothing else.
//!
//! # Kernel parameters
//!
//! Every generated kernel starts with the same parameters:
//!
//! ```text
//! pc_fault_t pc_fault, PC_CAPS_PARAMS,
//! pc_u64 pc_root_start, pc_u64 pc_root_cap, PC_GLOBAL const pc_u8* pc_root
//! ```
//!
//! — the fault word, the captured values (`PC_CAPS_PARAMS`, which the program defines from
//! [`DevicePlan::captures`]: `pc_caps`, a header of four `u64` per capture and the scalars'
//! values, then a buffer for each slice's values and two for each array of rows', its values'
//! and its offsets', in the order of the captures; see `kernels/captures.h`), and the first
//! generator (an integer range's first element, or its elements' columns). Then:
//!
//! - a level kernel (`Level::kernel`): `pc_u64 pc_j0, pc_u64 pc_count, pc_u64 pc_fanout,
//!   pc_u64 pc_parents, const pc_u64* pc_offsets, pc_u64 pc_offsets_at, pc_u64 pc_in_cap,
//!   const pc_u8* pc_in_V...
//!   (one per `Level::inputs`), const pc_u64* pc_in_group (the parents' groups below the first
//!   level of a nested comprehension; at its first level a position's group is its parent's
//!   index, and the kernel reads no column), pc_u64 pc_out_cap, pc_u8* pc_out_V...
//!   (one per output, or one `pc_out` for the head), pc_u64* pc_out_group, pc_u64 pc_res_cap,
//!   pc_u8* pc_res, pc_u64* pc_places, pc_u32 pc_phase, pc_u32 pc_rows_direct, pc_u8* pc_staging,
//!   pc_u64 pc_staging_cap, pc_u64 pc_staging_stride`: it runs positions `pc_j0 .. pc_j0 +
//!   pc_count` of its level, position `j` being child `j - pc_offsets[p]` of parent `p` (found
//!   among the `pc_parents` by the searches of `kernels/search.h`), or of `j / pc_fanout` when
//!   `pc_fanout` is not 0 (the offsets start `pc_offsets_at` words into their buffer);
//!   `pc_rows_direct` is 1 when `pc_offsets` are the offsets of the rows the level's generator
//!   reads (`Level::rows_of`, read in place in the rows' offsets' buffer), so that position `j` is
//!   element `j` of their values;
//! - a size kernel (`Level::size_kernel`): `pc_u64 pc_count, pc_u64 pc_in_cap, const pc_u8*
//!   pc_in_V..., pc_u64* pc_sizes`: the number of children of each parent;
//! - a head kernel (`Comp::head_kernel`): `pc_u64 pc_count, pc_u64 pc_in_cap, const pc_u8*
//!   pc_in_V..., const pc_u64* pc_in_group, pc_u64 pc_out_cap, pc_u8* pc_out, pc_u64*
//!   pc_out_group`.
//!
//! What a level kernel writes depends on its level: a level that filters (and is not reduced)
//! runs twice, `pc_phase` 0 writing each work-group's kept count to `pc_places` and 1 writing
//! the kept positions packed from the places the host's scan of those counts left there (a
//! work-group that kept at most half its positions wrote them to its region of `pc_staging` in
//! phase 0 — columns `pc_staging_stride` bytes apart, of `pc_staging_cap` values, then the groups —
//! and only copies them in phase 1); a
//! top-level reduction's kernel writes one partial per work-group to `pc_out`, each work-group
//! taking `PC_WG * pc_rN_items` positions (`program::reduce_items`); a nested reduction's writes
//! each group its tile completes to `pc_res` (capacity `pc_res_cap`) and two summary entries per
//! work-group to `pc_out` and `pc_out_group`; otherwise a value per position.

/// A type class of the generated kernels.
pub type ClassId = u32;

/// The primitive types, as the macro names them in constraints.
pub use super::types::Prim;
/// How captures and the first generator are read, and what a reduction's partial results are:
/// the contract's kinds, shared with the macro.
pub use parcomp_contract::{CaptureKind, ReduceKind, RootKind};

/// How the macro relates the classes: the contract's constraints in the form the macro emits
/// them (classes, captures and `#[par_fn]`s by number). An alias, not a re-export, so that the
/// emitted `Constraint::Tuple(0, &[1, 2])` names the form and its slice coerces.
pub type Constraint = parcomp_contract::Constraint<parcomp_contract::Static>;

/// A value the kernels read from the caller.
#[derive(Clone, Copy, Debug)]
pub struct CaptureInfo {
    /// The expression as written.
    pub text: &'static str,
    /// How the kernels read it.
    pub kind: CaptureKind,
}

/// What a comprehension produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// `par!`: the values of class `class`, in order.
    Collect,
    /// `par!` whose head is exactly its one nested `par!`: that comprehension's values, grouped
    /// by the enclosing element (a jagged result, one `Vec` per element).
    Rows,
    /// A reduction: `reduction` indexes [`DevicePlan::reductions`].
    Reduce {
        /// Which reduction.
        reduction: u32,
        /// What kind, so the host can read its partial results.
        kind: ReduceKind,
    },
}

/// A reduction of the plan: its operator and identity are functions of the generated source
/// (`NAME_op`, `NAME_identity`), and the runtime instantiates the reduction kernels for it.
#[derive(Clone, Copy, Debug)]
pub struct ReductionInfo {
    /// The functions' prefix, e.g. `pc_r0`.
    pub name: &'static str,
    /// The class of the accumulator.
    pub acc: ClassId,
}

/// One generator of a comprehension, and the qualifiers after it.
#[derive(Clone, Copy, Debug)]
pub struct Level {
    /// The kernel that runs the level.
    pub kernel: &'static str,
    /// The kernel that sizes it (`None` for the first generator of a top-level comprehension,
    /// whose size is the root's).
    pub size_kernel: Option<&'static str>,
    /// Whether every parent has the same number of children (a product).
    pub regular: bool,
    /// Whether a filter can drop positions (the kernel then packs the positions it keeps).
    pub filters: bool,
    /// The class of the elements the generator reads from captured memory, one per position
    /// (a captured slice, a row of captured rows): counted in the traffic model.
    pub reads: Option<ClassId>,
    /// `Some(k)` when the level is the first of a comprehension nested in the head of a
    /// top-level one whose only generator is an integer range without a filter, and its
    /// generator is the row of captured rows `k` that the range's element selects
    /// (`par![par_sum![.. | (c, v) <- m.row(i)] | i <- 0..m.len()]`), with no qualifier before
    /// it: where the range's elements are the rows' indices, the children's offsets are the
    /// rows' own (no size kernel, no scan, no wait for the total).
    pub rows_of: Option<u32>,
    /// A CPU device's kernel that runs the level one row per work-item (a nested reduction's
    /// only level with `rows_of`), where no work-group's rows hold more than a small share of
    /// the level's positions: `None` where the writer made none.
    pub rows_kernel: Option<RowsKernel>,
    /// The captured collections the level kernel reads by an index of its own (`x[c]`,
    /// `m[r][i]`): counted in the traffic model, each at most once per launch.
    pub gathers: &'static [Gather],
    /// The variables read from the parents' columns, in parameter order.
    pub inputs: &'static [u32],
    /// The variables written to the children's columns, in parameter order (empty for the last
    /// level of a comprehension without nested ones: it computes the head itself).
    pub outputs: &'static [u32],
}

/// A captured collection a level kernel reads by an index of its own (`Level::gathers`).
#[derive(Debug)]
pub struct Gather {
    /// The capture.
    pub capture: u32,
    /// The class of the elements read.
    pub class: ClassId,
}

/// A level's one-row-per-work-item kernel (`Level::rows_kernel`).
#[derive(Clone, Copy, Debug)]
pub struct RowsKernel {
    /// Its name.
    pub name: &'static str,
    /// Whether it reads a column of the level above: it computes the range's element (the
    /// row's index) from the row it takes, so only a `let` bound above is read. Where it reads
    /// none, the range's level need not run (`Session::level`).
    pub reads_parents: bool,
    /// Whether it takes the captures' header words (four per capture) as arguments after the
    /// level kernel's, which it reads instead of the header's buffer (once for every
    /// work-item of a CPU device's loop over them, not once per row).
    pub header_arguments: bool,
}

/// A comprehension (the top-level one, or one nested in a head).
#[derive(Clone, Copy, Debug)]
pub struct Comp {
    /// Its generators, outermost first.
    pub levels: &'static [Level],
    /// The comprehensions nested in its head, each giving one variable.
    pub nested: &'static [NestedComp],
    /// The kernel that computes the head after the nested comprehensions (`None`: the last
    /// level computes it).
    pub head_kernel: Option<&'static str>,
    /// The variables the head kernel reads.
    pub head_inputs: &'static [u32],
    /// When the head is exactly the result of `nested[k]`, a reduction: `Some(k)`. A top-level
    /// `par!` whose head's type is that reduction's then takes the results column as its values
    /// and runs no head kernel (which would only copy them).
    pub head_result: Option<u32>,
    /// The class of the head's values.
    pub head_class: ClassId,
    /// What it produces.
    pub terminal: Terminal,
}

/// A comprehension nested in a head.
#[derive(Clone, Copy, Debug)]
pub struct NestedComp {
    /// The comprehension.
    pub comp: &'static Comp,
    /// The variable its result is bound to.
    pub result: u32,
    /// The variables of the enclosing comprehension it reads (its parents' columns).
    pub inputs: &'static [u32],
}

/// The device half of a comprehension, compiled by the macro.
#[derive(Debug)]
pub struct DevicePlan {
    /// The comprehension as written, for messages.
    pub text: &'static str,
    /// The generated functions: reduction operators, identities.
    pub functions: &'static str,
    /// The generated kernels.
    pub kernels: &'static str,
    /// Number of type classes.
    pub classes: u32,
    /// How they relate.
    pub constraints: &'static [Constraint],
    /// The class of each variable.
    pub vars: &'static [ClassId],
    /// The values the kernels read from the caller, in the order the emitted code observes them.
    pub captures: &'static [CaptureInfo],
    /// The text of each fault site.
    pub faults: &'static [&'static str],
    /// How the first generator is read.
    pub root: RootKind,
    /// The reductions.
    pub reductions: &'static [ReductionInfo],
    /// The comprehension.
    pub comp: Comp,
}
