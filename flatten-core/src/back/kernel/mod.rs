//! Emission for the device: a comprehension as kernels of parcomp's C dialect (one source that
//! compiles as OpenCL C and as CUDA C++), and the manifest that tells the runtime how to run
//! them.
//!
//! - `writer`: expressions and generators as C;
//! - [`types`]: how the kernels name the type of a class (`PC_T(PC_C3)`);
//! - [`ops`]: Rust's operators and methods as the dialect's operations (`PC_OP(add, PC_C3)`);
//! - [`keywords`]: names of C, OpenCL C and CUDA that variables must not take.
//!
//! Each generator is a *level*: a size kernel gives the number of children of every parent, and
//! a level kernel runs one chunk of the flattened positions — it finds its parent and child
//! index, reads the parent's variables, fetches its element, runs the qualifiers that follow the
//! generator, and writes the variables later levels need (or, at the last level, the head).
//! Comprehensions nested in the head run after the last level, on its stored contexts, and a
//! head kernel then computes the head — except when the head is exactly a nested `par!`,
//! whose values, tagged with their context, are the rows of the result (and, at run time, when
//! the head is exactly a nested reduction of its type, [`CompManifest::head_result`], whose
//! results are then the values). A nested comprehension's first level takes its parent's index
//! for its group. See `comprehension-runtime/src/gpu/plan.rs` for the
//! kernels' parameters.

pub mod keywords;
pub mod ops;
pub mod types;
mod writer;

use crate::plan::kernel_ir::{Class, DExpr, DGenerator, DKind, DSource, PlanExpr, VarId};
use crate::plan::{Compiled, Plan, Slot, Step, StepKind, Terminal};
use std::collections::BTreeSet;
use types::{class, ty};
pub(crate) use writer::{Body, ExprWriter};

/// The kernels of a comprehension and their manifest.
pub struct Kernels {
    /// Functions the kernels and the runtime's reduction kernels call.
    pub functions: String,
    /// The kernels.
    pub kernels: String,
    /// How to run them.
    pub manifest: Manifest,
}

/// How the runtime runs a comprehension's kernels (the static `DevicePlan` is written from it).
pub struct Manifest {
    /// Whether the first generator is an integer range computed on the device.
    pub root_range: bool,
    /// The reductions, for which the runtime instantiates its reduction kernels.
    pub reductions: Vec<ReductionManifest>,
    /// The comprehension.
    pub comp: CompManifest,
}

/// A reduction: `NAME_op` and `NAME_identity` of the generated functions.
pub struct ReductionManifest {
    /// The functions' prefix.
    pub name: String,
    /// The class of the accumulator.
    pub acc: Class,
}

/// A comprehension's levels and what follows them.
pub struct CompManifest {
    /// Its generators.
    pub levels: Vec<LevelManifest>,
    /// The comprehensions nested in its head.
    pub nested: Vec<NestedManifest>,
    /// The head kernel, when nested comprehensions run before the head.
    pub head_kernel: Option<String>,
    /// The variables the head kernel reads.
    pub head_inputs: Vec<VarId>,
    /// The nested comprehension, a reduction, whose result is exactly the head (`k` of
    /// [`CompManifest::nested`]).
    pub head_result: Option<u32>,
    /// The class of the head.
    pub head_class: Class,
    /// What it produces.
    pub terminal: TerminalManifest,
}

/// One level.
pub struct LevelManifest {
    /// The level kernel.
    pub kernel: String,
    /// The size kernel (`None` for the root).
    pub size_kernel: Option<String>,
    /// Whether every parent has the same number of children.
    pub regular: bool,
    /// Whether a filter can drop positions.
    pub filters: bool,
    /// The class of the elements the generator reads from captured memory, one per position
    /// (a captured slice or a row of captured rows), for the runtime's traffic model.
    pub reads: Option<Class>,
    /// When the level is the first of a comprehension nested in the head of a top-level one
    /// whose only generator is an integer range without a filter, has no qualifier before its
    /// generator, and the generator is the row of captured rows `k` selected by the range's
    /// element (`m.row(i)`): `Some(k)`. The runtime then takes the children's offsets from
    /// the rows' own where the range's elements are row indices.
    pub rows_of: Option<u32>,
    /// The kernel that runs the level one row per work-item on a CPU device, where its rows
    /// are short enough to be a work-item's each (a nested reduction's only level that reads
    /// its rows directly: `rows_of`), and whether it reads the parents' columns (it computes
    /// the range's element, the row's index, from the row: only a `let` above reads one).
    pub rows_kernel: Option<RowsKernelManifest>,
    /// The captured collections the level kernel reads by an index of its own (`x[c]`,
    /// `m[r][i]`), for the runtime's traffic model: where those reads land depends on the
    /// indices, and the model counts each collection at most once per launch.
    pub gathers: Vec<Gather>,
    /// Variables read from the parents.
    pub inputs: Vec<VarId>,
    /// Variables written for the children.
    pub outputs: Vec<VarId>,
}

/// A captured collection that a kernel reads by an index of its own (`LevelManifest::gathers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    /// The capture.
    pub capture: u32,
    /// The class of the elements read.
    pub class: Class,
}

/// A level's one-row-per-work-item kernel (`LevelManifest::rows_kernel`).
pub struct RowsKernelManifest {
    /// Its name.
    pub name: String,
    /// Whether it reads a column of the parents (a `let` above the level).
    pub reads_parents: bool,
    /// Whether it takes the captures' header words as arguments after the level kernel's
    /// (four per capture, up to eight captures) rather than reading them from
    /// the header's buffer.
    pub header_arguments: bool,
}

/// The most captures whose header words a rows kernel takes as arguments: 32 words, 256 bytes
/// beside the level kernel's 30 or so parameters (OpenCL guarantees 1 kB of them).
const HEADER_ARGUMENTS: usize = 8;

/// A comprehension nested in a head.
pub struct NestedManifest {
    /// It.
    pub comp: CompManifest,
    /// The variable of its result.
    pub result: VarId,
    /// The variables of the enclosing comprehension it reads.
    pub inputs: Vec<VarId>,
}

/// What a comprehension produces.
pub enum TerminalManifest {
    /// Its elements, in order.
    Collect,
    /// The values of its one nested `par!`, which is its whole head, as rows.
    Rows,
    /// A reduction.
    Reduce {
        /// Index into [`Manifest::reductions`].
        reduction: u32,
        /// How the host reads its partial results.
        kind: ReduceKind,
    },
}

/// The kind of a reduction (the contract's, shared with the runtime).
pub use parcomp_contract::ReduceKind;

/// Writes the kernels of `compiled` (which the device can run). `root_range`: the first
/// generator is an integer range.
pub fn write(compiled: &Compiled, root_range: bool) -> Kernels {
    let mut w = KernelWriter {
        ew: ExprWriter::new(compiled),
        functions: String::new(),
        kernels: String::new(),
        reductions: Vec::new(),
        root_range,
        root_parent: None,
        rows_level: None,
        rows_kernel: None,
        captures: compiled.device.captures.len(),
    };
    let comp = w.comp(&compiled.plan, "pc", false, &[]);
    Kernels {
        functions: w.functions,
        kernels: w.kernels,
        manifest: Manifest { root_range, reductions: w.reductions, comp },
    }
}

/// The parameters every generated kernel starts with (`PC_CAPS_PARAMS`: the captures' header and
/// every collection's buffers, as the program defines them). The first generator's elements, as
/// a level's input columns (`input_params`) and offsets, are `restrict`: no kernel writes them,
/// so a compiler may load them ahead of the kernel's stores (several positions' at once).
const COMMON: &str = "pc_fault_t pc_fault, PC_CAPS_PARAMS, pc_u64 pc_root_start, \
    pc_u64 pc_root_cap, PC_GLOBAL const pc_u8* PC_RESTRICT pc_root";

struct KernelWriter<'c> {
    ew: ExprWriter<'c>,
    functions: String,
    kernels: String,
    reductions: Vec<ReductionManifest>,
    root_range: bool,
    /// While writing a comprehension nested in the head of a top-level one whose only
    /// generator is an integer range without a filter: the range's variable.
    root_parent: Option<VarId>,
    /// While writing a level whose generator reads the rows of this capture, selected by the
    /// top-level range's element (`LevelManifest::rows_of`).
    /// And the range's variable, whose element is the row's index.
    rows_level: Option<(u32, VarId)>,
    /// The body of the level's one-row-per-work-item kernel, where its writer wrote one
    /// (`LevelManifest::rows_kernel`), and whether it reads a parents' column.
    rows_kernel: Option<(String, bool)>,
    /// How many values the kernels read from the caller (the captures' header holds four
    /// words for each).
    captures: usize,
}

/// A generator and the qualifiers that follow it (and, for the first generator of a nested
/// comprehension, those before it).
struct LevelSteps<'p> {
    before: Vec<&'p Step>,
    generator: &'p Step,
    after: Vec<&'p Step>,
    /// Slots bound once the level's qualifiers have run.
    slots_after: usize,
}

impl<'p> LevelSteps<'p> {
    /// The device form of the level's generator (the writer only runs on plans the device can
    /// run, where every generator has one).
    fn device_generator(&self) -> &'p DGenerator {
        self.generator.device.as_ref().and_then(|d| d.as_ref().ok()).expect("a device generator")
    }
}

/// How the last level (or the head kernel) delivers the head.
#[derive(Clone, Copy)]
enum Delivery {
    /// A top-level `par!`: the head's value at the position, and a flag.
    Collect,
    /// A top-level reduction: one partial result per work-group.
    Reduce(u32),
    /// A nested reduction: the contribution (or the identity) and the group, at the position.
    Segmented(u32),
    /// A nested `par!`: the head's value, a flag and the group.
    NestedCollect,
}

fn levels(plan: &Plan) -> Vec<LevelSteps<'_>> {
    let mut out: Vec<LevelSteps<'_>> = Vec::new();
    let mut before = Vec::new();
    for step in &plan.steps {
        if step.kind.is_generator() {
            out.push(LevelSteps {
                before: std::mem::take(&mut before),
                generator: step,
                after: Vec::new(),
                slots_after: 0,
            });
        } else if let Some(level) = out.last_mut() {
            level.after.push(step);
        } else {
            before.push(step);
        }
    }
    let bound = plan.slots.len() - plan.nested.len();
    for k in 0..out.len() {
        out[k].slots_after = match out.get(k + 1) {
            Some(next) => next.before.first().unwrap_or(&next.generator).context,
            None => bound,
        };
    }
    out
}

/// The variables a plan uses, nested comprehensions included.
fn plan_uses(plan: &Plan, out: &mut BTreeSet<VarId>) {
    for step in &plan.steps {
        out.extend(step.uses.iter().copied());
    }
    out.extend(plan.head_uses.iter().copied());
    for nested in &plan.nested {
        plan_uses(&nested.plan, out);
    }
}

fn vars_of(slots: &[Slot]) -> BTreeSet<VarId> {
    slots.iter().flat_map(|s| s.vars.iter().copied()).collect()
}

fn device(e: &PlanExpr) -> &DExpr {
    e.device.as_ref().expect("the writer runs only on comprehensions the device can run")
}

impl KernelWriter<'_> {
    fn comp(&mut self, plan: &Plan, prefix: &str, nested: bool, inputs: &[VarId]) -> CompManifest {
        let levels = levels(plan);
        // Only the comprehensions nested right in the top-level one read it.
        let root_parent = if nested { self.root_parent.take() } else { None };
        let mut manifests = Vec::new();
        let last = levels.len() - 1;
        let delivery = self.delivery(plan, nested);
        for (k, level) in levels.iter().enumerate() {
            let mut needed = BTreeSet::new();
            for later in &levels[k + 1..] {
                for step in later.before.iter().chain([&later.generator]).chain(later.after.iter())
                {
                    needed.extend(step.uses.iter().copied());
                }
            }
            for n in &plan.nested {
                plan_uses(&n.plan, &mut needed);
            }
            needed.extend(plan.head_uses.iter().copied());
            let visible = vars_of(&plan.slots[..level.slots_after]);
            let outputs: Vec<VarId> = if k == last && plan.nested.is_empty() {
                Vec::new()
            } else {
                needed.intersection(&visible).copied().collect()
            };
            let level_inputs: Vec<VarId> = if k == 0 {
                inputs.to_vec()
            } else {
                manifests.last().map_or(Vec::new(), |m: &LevelManifest| m.outputs.clone())
            };
            let name = format!("{prefix}_level{k}");
            let root = k == 0 && !nested;
            let size_kernel = (!root).then(|| {
                let size = format!("{prefix}_size{k}");
                self.size_kernel(plan, &size, level, &level_inputs);
                size
            });
            let head_here = k == last && plan.nested.is_empty();
            // A nested comprehension's first level runs on the enclosing contexts, each its own
            // group: the group of a position is its parent's index, read from no column.
            let group = if k == 0 { "pc_p" } else { "pc_in_group[pc_p]" };
            // A level that keeps every position writes the next level's sizes itself, when
            // they differ by parent (`sizes_next`: the runtime decides the same from the plan).
            let next = levels.get(k + 1).filter(|next| {
                !level_filters(level) && !matches!(next.generator.kind, StepKind::Product(_))
            });
            let rows_of = match &level.device_generator().source {
                DSource::Row { capture, row, .. }
                    if k == 0
                        && level.before.is_empty()
                        && matches!(row.kind, DKind::Var(v) if Some(v) == root_parent) =>
                {
                    Some(capture.0)
                }
                _ => None,
            };
            self.rows_level = rows_of.zip(root_parent);
            self.ew.gathers.clear();
            self.level_kernel(
                plan,
                &name,
                level,
                &level_inputs,
                &outputs,
                root,
                nested,
                group,
                head_here.then_some(delivery),
                next,
            );
            self.rows_level = None;
            // The rows kernel's body is the level kernel's: the same gathers.
            let gathers = std::mem::take(&mut self.ew.gathers);
            let rows_kernel = self.rows_kernel.take().map(|(body, reads_parents)| {
                let rows = format!("{name}_rows");
                let header_arguments = self.rows_kernel(&rows, &level_inputs, &body);
                RowsKernelManifest { name: rows, reads_parents, header_arguments }
            });
            let filters = level_filters(level);
            manifests.push(LevelManifest {
                kernel: name,
                size_kernel,
                regular: matches!(level.generator.kind, StepKind::Product(_)),
                filters,
                reads: captured_elements(&level.device_generator().source),
                rows_of,
                rows_kernel,
                gathers,
                inputs: level_inputs,
                outputs,
            });
        }
        let mut nested_manifests = Vec::new();
        let available: Vec<VarId> = manifests.last().map_or(Vec::new(), |m| m.outputs.clone());
        for (k, n) in plan.nested.iter().enumerate() {
            let mut uses = BTreeSet::new();
            plan_uses(&n.plan, &mut uses);
            let inputs: Vec<VarId> =
                available.iter().copied().filter(|v| uses.contains(v)).collect();
            // The nested comprehension's contexts are the range's elements, in order.
            self.root_parent = match levels.as_slice() {
                [root]
                    if !nested
                        && self.root_range
                        && !level_filters(root)
                        && root.device_generator().maps.is_empty()
                        && matches!(root.device_generator().source, DSource::Root { .. }) =>
                {
                    match plan.slots[root.generator.context].vars.as_slice() {
                        [v] => Some(*v),
                        _ => None,
                    }
                }
                _ => None,
            };
            let comp = self.comp(&n.plan, &format!("{prefix}_n{k}"), true, &inputs);
            self.root_parent = None;
            nested_manifests.push(crate::back::kernel::NestedManifest {
                comp,
                result: n.var,
                inputs,
            });
        }
        let (head_kernel, head_inputs) = if plan.nested.is_empty() || plan.rows {
            (None, Vec::new())
        } else {
            let name = format!("{prefix}_head");
            let inputs = plan.head_uses.clone();
            self.head_kernel(plan, &name, &inputs, nested, delivery);
            (Some(name), inputs)
        };
        let terminal = match delivery {
            _ if plan.rows => TerminalManifest::Rows,
            Delivery::Collect | Delivery::NestedCollect => TerminalManifest::Collect,
            Delivery::Reduce(r) | Delivery::Segmented(r) => {
                TerminalManifest::Reduce { reduction: r, kind: reduce_kind(&plan.terminal) }
            }
        };
        // The head is exactly a nested reduction's result (`par![par_sum![..] | ..]`).
        let head_result = match &plan.head.device {
            Ok(DExpr { kind: DKind::Var(v), .. }) => plan
                .nested
                .iter()
                .position(|n| n.var == *v && !matches!(n.plan.terminal, Terminal::Collect))
                .map(|k| k as u32),
            _ => None,
        };
        CompManifest {
            levels: manifests,
            nested: nested_manifests,
            head_kernel,
            head_inputs,
            head_result,
            head_class: plan.head_class,
            terminal,
        }
    }

    /// How `plan` delivers its head; writes its reduction functions.
    fn delivery(&mut self, plan: &Plan, nested: bool) -> Delivery {
        if matches!(plan.terminal, Terminal::Collect) {
            return if nested { Delivery::NestedCollect } else { Delivery::Collect };
        }
        let r = self.reduction(plan);
        if nested {
            Delivery::Segmented(r)
        } else {
            Delivery::Reduce(r)
        }
    }

    /// Writes `NAME_identity` and `NAME_op` of `plan`'s reduction.
    fn reduction(&mut self, plan: &Plan) -> u32 {
        let index = self.reductions.len() as u32;
        let name = format!("pc_r{index}");
        let acc = plan.acc_class;
        let head = plan.head_class;
        let (identity, op) = match &plan.terminal {
            // -0: zero for an integer, -0.0 for a float (Rust's sum of no floats, the identity
            // of `+`: -0.0 + x is x also for x = -0.0, which +0.0 + x is not).
            Terminal::Sum => (
                format!("PC_OP(neg, {0})(PC_CAST(i32, {0})(0))", class(acc)),
                format!("PC_OP(add, {})(pc_a, pc_b)", class(acc)),
            ),
            Terminal::Product => (
                format!("PC_CAST(i32, {})(1)", class(acc)),
                format!("PC_OP(mul, {})(pc_a, pc_b)", class(acc)),
            ),
            Terminal::Count => (
                format!("PC_ILIT({}, 0)", class(acc)),
                format!("PC_OP(add, {})(pc_a, pc_b)", class(acc)),
            ),
            Terminal::Any => ("((pc_bool)0)".into(), "((pc_bool)(pc_a || pc_b))".into()),
            Terminal::All => ("((pc_bool)1)".into(), "((pc_bool)(pc_a && pc_b))".into()),
            // The least element, the first of equals: the right part wins only if it is
            // ordered with itself and smaller, or the left one is not ordered with itself (a
            // NaN, a tuple holding one) — the host's `Min` (such values are ignored, as a NaN is
            // by `f64::min`).
            Terminal::Min => (
                format!("PC_OP(make, {})(0, PC_OP(zero, {})())", class(acc), class(head)),
                extreme_op("lt", &class(head)),
            ),
            // The greatest element, the last of equals: the same with "at least as large".
            Terminal::Max => (
                format!("PC_OP(make, {})(0, PC_OP(zero, {})())", class(acc), class(head)),
                extreme_op("ge", &class(head)),
            ),
            Terminal::Reduce { device, .. } => {
                let op = device
                    .as_ref()
                    .and_then(|d| d.as_ref().as_ref().ok())
                    .expect("a device-capable par_reduce! has its operator on the device");
                let mut body = Body::new(1);
                self.ew.bind(&op.params.0, acc, "pc_a", &mut body);
                self.ew.bind(&op.params.1, acc, "pc_b", &mut body);
                let value = self.ew.expr(&op.body, &mut body);
                let mut id_body = Body::new(1);
                let identity = self.ew.expr(&op.identity, &mut id_body);
                let _ = writeln!(
                    self.functions,
                    "/* {} */\nPC_FN {t} {name}_identity(pc_fault_t pc_fault, PC_CAPS_PARAMS) {{\n  (void)pc_fault; (void)pc_caps;\n{}  return {identity};\n}}\n\
                     PC_FN {t} {name}_op(pc_fault_t pc_fault, PC_CAPS_PARAMS, {t} pc_a, {t} pc_b) {{\n  (void)pc_fault; (void)pc_caps;\n{}  return {value};\n}}\n",
                    plan.terminal.describe(),
                    id_body.text(),
                    body.text(),
                    t = ty(acc)
                );
                self.reductions.push(ReductionManifest { name, acc });
                return index;
            }
            Terminal::Collect => unreachable!("a collect has no reduction"),
        };
        let _ = writeln!(
            self.functions,
            "/* {} */\nPC_FN {t} {name}_identity(pc_fault_t pc_fault, PC_CAPS_PARAMS) {{\n  (void)pc_fault; (void)pc_caps;\n  return {identity};\n}}\n\
             PC_FN {t} {name}_op(pc_fault_t pc_fault, PC_CAPS_PARAMS, {t} pc_a, {t} pc_b) {{\n  (void)pc_fault; (void)pc_caps;\n  return {op};\n}}\n",
            plan.terminal.describe(),
            t = ty(acc)
        );
        self.reductions.push(ReductionManifest { name, acc });
        index
    }

    /// The value a filtering level holds for the variable `var` (a level's `held`), computed
    /// into `body` at the current position: the variable itself, or the head where `var` is
    /// empty.
    fn held_value(&mut self, var: &str, plan: &Plan, body: &mut Body) -> String {
        if var.is_empty() {
            self.ew.expr(device(&plan.head), body)
        } else {
            var.to_string()
        }
    }

    /// Loads `inputs` for parent `parent` from the parents' columns.
    fn load_inputs(&mut self, inputs: &[VarId], parent: &str, body: &mut Body) {
        for &v in inputs {
            let name = self.ew.var_name(v);
            let c = self.ew.var_class(v);
            body.line(format!(
                "{} {name} = {}(pc_in_{name}, pc_in_cap, {parent});",
                ty(c),
                types::load(c)
            ));
        }
    }

    fn input_params(&mut self, inputs: &[VarId]) -> String {
        inputs
            .iter()
            .map(|&v| format!(", PC_GLOBAL const pc_u8* PC_RESTRICT pc_in_{}", self.ew.var_name(v)))
            .collect()
    }

    /// Binds the variables of `slot` to `value` (of class `c`).
    fn bind_slot(&mut self, slot: &Slot, value: &str, c: Class, body: &mut Body) {
        let mut vars = slot.vars.iter().copied();
        self.bind_pat(&slot.pat, value, Some(c), &mut vars, body);
    }

    fn bind_pat(
        &mut self,
        pat: &syn::Pat,
        value: &str,
        c: Option<Class>,
        vars: &mut impl Iterator<Item = VarId>,
        body: &mut Body,
    ) {
        match pat {
            syn::Pat::Ident(_) => {
                let v = vars.next().expect("one variable per name");
                let name = self.ew.var_name(v);
                let vc = self.ew.var_class(v);
                body.line(format!("{} {name} = {value};", ty(vc)));
            }
            syn::Pat::Paren(p) => self.bind_pat(&p.pat, value, c, vars, body),
            syn::Pat::Type(t) => self.bind_pat(&t.pat, value, c, vars, body),
            syn::Pat::Tuple(t) => {
                let whole = match c {
                    Some(c) => {
                        let t = self.ew.names.temp();
                        body.line(format!("{} {t} = {value};", ty(c)));
                        t
                    }
                    None => format!("({value})"),
                };
                for (k, item) in t.elems.iter().enumerate() {
                    self.bind_pat(item, &format!("{whole}.f{k}"), None, vars, body);
                }
            }
            // A struct's fields by their C members (a tuple struct's `0` is `f0`); a trailing
            // `..` binds nothing.
            syn::Pat::Struct(_) | syn::Pat::TupleStruct(_) => {
                let whole = match c {
                    Some(c) => {
                        let t = self.ew.names.temp();
                        body.line(format!("{} {t} = {value};", ty(c)));
                        t
                    }
                    None => format!("({value})"),
                };
                let fields: Vec<(String, &syn::Pat)> = match pat {
                    syn::Pat::Struct(s) => s
                        .fields
                        .iter()
                        .map(|f| {
                            let name = crate::text::member_text(&f.member);
                            (name, &*f.pat)
                        })
                        .collect(),
                    syn::Pat::TupleStruct(t) => t
                        .elems
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| !matches!(p, syn::Pat::Rest(_)))
                        .map(|(k, p)| (k.to_string(), p))
                        .collect(),
                    _ => unreachable!(),
                };
                for (name, item) in fields {
                    let member = parcomp_contract::member_name(&name);
                    self.bind_pat(item, &format!("{whole}.{member}"), None, vars, body);
                }
            }
            _ => {}
        }
    }

    /// The qualifiers `steps`: filters leave the `do { } while (0)` they are written in.
    fn qualifiers(&mut self, plan: &Plan, steps: &[&Step], body: &mut Body) {
        for step in steps {
            match &step.kind {
                StepKind::Filter(e) => {
                    let c = self.ew.expr(device(e), body);
                    body.line(format!("if (!({c})) break;"));
                }
                StepKind::Let(e) => {
                    let d = device(e);
                    let v = self.ew.expr(d, body);
                    self.bind_slot(&plan.slots[step.context], &v, d.class, body);
                }
                _ => unreachable!("qualifiers are filters and lets"),
            }
        }
    }

    fn size_kernel(&mut self, plan: &Plan, name: &str, level: &LevelSteps<'_>, inputs: &[VarId]) {
        let params = self.input_params(inputs);
        let mut body = Body::new(1);
        body.line("pc_u64 pc_t = PC_GLOBAL_ID();");
        body.line("if (pc_t >= pc_count || PC_FAULTED(pc_fault)) return;");
        body.line("pc_u64 pc_size = 0;");
        body.line("do {");
        let mut inner = body.nested();
        self.load_inputs(inputs, "pc_t", &mut inner);
        self.qualifiers(plan, &level.before, &mut inner);
        let generator = level.device_generator();
        let size = self.ew.source_size(&generator.source, &mut inner);
        inner.line(format!("pc_size = {size};"));
        body.append(inner);
        body.line("} while (0);");
        body.line("pc_sizes[pc_t] = pc_size;");
        let _ = writeln!(
            self.kernels,
            "/* sizes of `{}` */\nPC_KERNEL void {name}({COMMON}, pc_u64 pc_count, pc_u64 pc_in_cap{params}, PC_GLOBAL pc_u64* pc_sizes) {{\n{}}}\n",
            level.generator.text.replace("*/", "* /"),
            body.text()
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn level_kernel(
        &mut self,
        plan: &Plan,
        name: &str,
        level: &LevelSteps<'_>,
        inputs: &[VarId],
        outputs: &[VarId],
        root: bool,
        nested: bool,
        group: &str,
        head: Option<Delivery>,
        next: Option<&LevelSteps<'_>>,
    ) {
        let in_params = self.input_params(inputs);
        let out_params: String = match head {
            Some(_) => ", PC_GLOBAL pc_u8* pc_out".into(),
            None => outputs
                .iter()
                .map(|&v| format!(", PC_GLOBAL pc_u8* pc_out_{}", self.ew.var_name(v)))
                .collect(),
        };
        let args = (plan, level, inputs, outputs, (root, nested), group, head, next);
        // Two forms of a level whose best shape depends on the device, of which the runtime
        // chooses one per device (`PC_CPU_SHAPES`, defined per program, and the launch that goes
        // with it). The first generator's compacting level: on a CPU device each work-item takes
        // PC_FILTER_ITEMS consecutive positions, tested by the filters alone in a vectorized loop
        // first and ranked once per work-group of them, as below the first generator (a
        // work-group's rank scan per PC_WG positions, barriers that PoCL runs as loops over the
        // work-items, made the flat filter of a slice slower than a hand-written compaction
        // there); on a GPU a position per work-item, the loads of neighbouring work-items
        // neighbouring (coalesced). A top-level reduction: on a CPU device each work-item folds
        // its consecutive positions as it computes them; on a GPU neighbouring work-items read
        // neighbouring positions, staged in local memory for each to fold its consecutive ones
        // (see `reduce_tile_begin`) — the same positions grouped the same way, so the same
        // result, also for floating-point sums. A level below the first generator that writes a
        // value per position: on a CPU device each work-item takes PC_PLAIN_ITEMS consecutive
        // positions below the first generator, stepping from parent to parent
        // (`coarse_plain_items`), and one at the first; on a GPU PC_PLAIN_ITEMS positions PC_WG
        // apart (`striped_plain_items`), neighbouring work-items writing neighbouring positions.
        let two_forms = match head {
            Some(Delivery::Reduce(_)) => true,
            Some(Delivery::Segmented(_)) => false,
            _ => root || !level_filters(level),
        };
        // The offsets start `pc_offsets_at` words into their buffer (the rows' own, read where
        // the captures hold them, when `pc_rows_direct`).
        let body = if two_forms {
            let cpu = self.level_body(args, true);
            let gpu = self.level_body(args, false);
            format!("#if PC_CPU_SHAPES\n{cpu}#else\n{gpu}#endif\n")
        } else {
            self.level_body(args, false)
        };
        let _ = writeln!(
            self.kernels,
            "/* `{}` and the qualifiers after it */\n{} {{\n  pc_offsets += pc_offsets_at;\n{body}}}\n",
            level.generator.text.replace("*/", "* /"),
            level_signature(name, &in_params, &out_params, ""),
        );
    }

    /// A CPU device's kernel for a nested reduction's only level over rows it reads directly
    /// (`LevelManifest::rows_kernel`): a work-item per row, which folds the row's positions in
    /// order and writes its result, an empty row's the identity — the loop a hand-written
    /// one-row-per-work-item kernel is, with no carry between work-items, no reduction by key
    /// and no second launch. The runtime runs it only where no work-group's rows hold more than
    /// a small share of the level's positions (a long row stays shared by the whole device).
    /// Its parameters are the level kernel's (the runtime passes the same), then, for up to
    /// [`HEADER_ARGUMENTS`] captures, the captures' header words (`pc_cw_<k>_<w>`), which its
    /// body reads instead of the header's buffer: a kernel argument is read once for all the
    /// work-items a CPU device's loop runs, where the header's words, read per row, took about
    /// 8 % of the sparse matrix × vector's kernel (rows of ten values). Returns whether it takes
    /// them. A GPU's program has it empty.
    fn rows_kernel(&mut self, name: &str, inputs: &[VarId], body: &str) -> bool {
        let in_params = self.input_params(inputs);
        let header_arguments = (1..=HEADER_ARGUMENTS).contains(&self.captures);
        let (mut words, mut header) = (String::new(), String::new());
        if header_arguments {
            for k in 0..self.captures {
                for w in 0..4 {
                    let _ = write!(words, ", pc_u64 pc_cw_{k}_{w}");
                }
            }
            header = "#undef PC_CAP_WORD\n#define PC_CAP_WORD(k, w) PC_CAT(PC_CAT(pc_cw_, k), PC_CAT(_, w))\n".into();
        }
        let restore = if header_arguments {
            "#undef PC_CAP_WORD\n#define PC_CAP_WORD(k, w) PC_CAP_WORD_AT(k, w)\n"
        } else {
            ""
        };
        // The level kernel's parameters, of a level whose head is the reduction (one `pc_out`).
        let signature = level_signature(name, &in_params, ", PC_GLOBAL pc_u8* pc_out", &words);
        let _ = writeln!(
            self.kernels,
            "/* the rows of the level before, a work-item each */\n{header}{signature} {{\n#if PC_CPU_SHAPES\n  pc_offsets += pc_offsets_at;\n{body}#endif\n}}\n{restore}",
        );
        header_arguments
    }

    /// The body of a level's kernel (see [`Self::level_kernel`]); `cpu_shapes`: in its CPU
    /// device's form.
    #[allow(clippy::type_complexity)]
    fn level_body(
        &mut self,
        (plan, level, inputs, outputs, (root, nested), group, head, next): (
            &Plan,
            &LevelSteps<'_>,
            &[VarId],
            &[VarId],
            (bool, bool),
            &str,
            Option<Delivery>,
            Option<&LevelSteps<'_>>,
        ),
        cpu_shapes: bool,
    ) -> String {
        let filters = level_filters(level);
        let mut body = Body::new(1);
        let reduce = match head {
            Some(Delivery::Reduce(r)) => Some(r),
            _ => None,
        };
        let segmented = match head {
            Some(Delivery::Segmented(r)) => Some(r),
            _ => None,
        };
        let mut tile = None;
        // A level that filters (and is not reduced) writes only the positions it keeps, packed:
        // the kernel runs twice over the chunk (search.h): phase 0 counts each work-group's
        // kept positions into `pc_places`, which the host scans into each group's first place,
        // and phase 1 writes every kept position's values there. Values are held until the
        // group's ranks are known.
        let compacting = filters && reduce.is_none() && segmented.is_none();
        // Below the first generator (and at it, in a CPU device's form), such a level gives each
        // work-item PC_FILTER_ITEMS consecutive positions (search.h; the runtime defines it per
        // device and program): one search per work-item, the next positions' parent found by
        // stepping, and the work-group's ranks scanned once per PC_WG × PC_FILTER_ITEMS
        // positions.
        // A nested reduction's level gives each work-item PC_LEVEL_ITEMS consecutive positions
        // too, reduced in order in the work-item before the work-group's reduction by key.
        let coarse_reduce = segmented.is_some() && !root;
        // A level that only writes a value per position (its variables, the head's values, the
        // next level's sizes), below the first generator, in a CPU device's form: each
        // work-item takes PC_PLAIN_ITEMS consecutive positions, its first parent found by one
        // search and the next ones by stepping (on a GPU, `striped_plain` below).
        let coarse_plain =
            cpu_shapes && !root && !compacting && reduce.is_none() && segmented.is_none();
        // Such a level in a GPU's form, at the first generator too: each work-item takes
        // PC_PLAIN_ITEMS positions PC_WG apart, so that a warp's loads and stores stay coalesced
        // while the tile's setup (its parents' search, the fault word's read) is paid once per
        // PC_WG × PC_PLAIN_ITEMS positions and each work-item has several loads in flight
        // (`striped_plain_items`). A position per work-item, the form before, kept the H200 at
        // 29 % of its bandwidth for a map and 8 % for a skewed expand (gpu_bandwidth), whose
        // every work-group of 256 positions waited for two binary searches of the offsets.
        let striped_plain = !cpu_shapes && !compacting && reduce.is_none() && segmented.is_none();
        let coarse = (compacting && (!root || cpu_shapes)) || coarse_reduce || coarse_plain;
        // (column, variable — empty for the head —, class) of each value held.
        let mut held: Vec<(String, String, Class)> = Vec::new();
        if compacting {
            match head {
                None => {
                    for &v in outputs {
                        let n = self.ew.var_name(v);
                        held.push((format!("pc_out_{n}"), n, self.ew.var_class(v)));
                    }
                }
                Some(_) => held.push(("pc_out".into(), String::new(), plan.head_class)),
            }
        }
        // A work-group that kept at most `pc_staging_limit` of its positions staged them in
        // phase 0, packed, in its own region of `pc_staging` (search.h): in phase 1 it only
        // copies them to their place (its count is the difference of its place and the next
        // group's), computing nothing.
        let staged = "pc_staging_limit";
        if compacting {
            body.line("if (pc_phase != 0u) {");
            let mut copy = body.nested();
            copy.line("pc_u64 pc_at = pc_places[PC_GROUP_ID()];");
            copy.line("pc_u64 pc_n = pc_places[PC_GROUP_ID() + 1u] - pc_at;");
            copy.line(format!("if (pc_n <= {staged}) {{"));
            copy.line("  if (!PC_FAULTED(pc_fault)) {");
            copy.line(format!("    pc_u64 pc_from = (pc_u64)PC_GROUP_ID() * {staged};"));
            copy.line("    for (pc_u64 pc_m = PC_LOCAL_ID(); pc_m < pc_n; pc_m += PC_WG) {");
            store_held(
                &mut copy,
                (&held, nested),
                Target::Output("      ", "pc_at + pc_m"),
                |k, c| {
                    format!(
                        "{}({}, pc_staging_cap, pc_from + pc_m)",
                        types::load(c),
                        stage_column(k)
                    )
                },
                &format!("{}[pc_from + pc_m]", stage_groups(held.len())),
            );
            copy.line("    }");
            copy.line("  }");
            copy.line("  return;");
            copy.line("}");
            body.append(copy);
            body.line("}");
        }
        if !root {
            // The parents of the work-group's first and last positions (see search.h); a
            // reduction's tile is larger and finds them in reduce_tile_begin.
            body.line("PC_LOCAL_ARRAY(pc_u64, pc_span, 2);");
            if coarse && compacting {
                body.line("if (!pc_fanout) pc_tile_span(pc_offsets, pc_parents, pc_j0, pc_count, (pc_u64)PC_GROUP_ID() * PC_WG * PC_FILTER_ITEMS, PC_WG * PC_FILTER_ITEMS, pc_span);");
            } else if coarse_plain || striped_plain {
                body.line("if (!pc_fanout) pc_tile_span(pc_offsets, pc_parents, pc_j0, pc_count, (pc_u64)PC_GROUP_ID() * PC_WG * PC_PLAIN_ITEMS, PC_WG * PC_PLAIN_ITEMS, pc_span);");
            } else if coarse {
                body.line("if (!pc_fanout) pc_tile_span(pc_offsets, pc_parents, pc_j0, pc_count, (pc_u64)PC_GROUP_ID() * PC_WG * PC_LEVEL_ITEMS, PC_WG * PC_LEVEL_ITEMS, pc_span);");
            } else if reduce.is_none() {
                body.line("if (!pc_fanout) pc_tile_span(pc_offsets, pc_parents, pc_j0, pc_count, PC_GROUP_ID() * PC_WG, PC_WG, pc_span);");
            }
        }
        // How the level's kernel gives an empty parent `pc_e` the identity, where it does (see
        // the coarse runs).
        let mut empty_rows: Option<String> = None;
        let mut work = match (reduce, segmented) {
            (Some(r), _) => {
                let (each, work) = self.reduce_tile_begin(r, (!root, cpu_shapes), &mut body);
                tile = Some(each);
                work
            }
            (None, Some(r)) if coarse_reduce => {
                // Every work-item reaches the tile's reduction (it has barriers): none returns.
                // The work-item's positions fall in one group or several: the last one's part
                // (`pc_tail`, of `pc_group`) goes to the work-group's reduction by key; when there
                // are several, the first one's part (`pc_head`) continues the previous work-item's
                // last group (or, in the first work-item, the previous tile's), and a group
                // between them lies wholly in the work-item: complete, written at once.
                let t = ty(self.reductions[r as usize].acc);
                body.line(format!("PC_LOCAL_ARRAY({t}, pc_scratch, PC_WG);"));
                body.line("PC_LOCAL_ARRAY(pc_bool, pc_starts, PC_WG);");
                body.line("PC_LOCAL_ARRAY(pc_u64, pc_groups, PC_WG);");
                body.line(format!("{t} pc_tail = pc_r{r}_identity(pc_fault, PC_CAPS);"));
                body.line("pc_u64 pc_group = 0;");
                body.line(format!("{t} pc_head = pc_tail;"));
                body.line("pc_u64 pc_head_group = 0;");
                body.line("pc_bool pc_has_head = 0;");
                // Its work-items' first parents come from a merge with the tile's offsets (as a
                // filtering level's do) when the tile spans under PC_MERGE_SPAN parents, else
                // from a search each: once a run's positions became a tight loop, the searches
                // were a sixth of the sparse matrix × vector's level kernel on PoCL.
                // The positions go by runs, each the part of one parent among them: the step to
                // the next parent, the parent's inputs and the change of group are decided once
                // per run, and a run's positions are a loop of the body and the operator alone
                // (the sparse matrix × vector's rows: a few loads and a multiply-add each).
                // The first level of a nested comprehension reduces by parent: a parent with no
                // position (an empty row) gets the identity from the work-item that steps past
                // it — no launch sets every result to the identity first.
                empty_rows = (group == "pc_p").then(|| {
                    format!(
                        "{}(pc_res, pc_res_cap, pc_e, pc_r{r}_identity(pc_fault, PC_CAPS))",
                        types::store(self.reductions[r as usize].acc)
                    )
                });
                let rows_level = self.rows_level.is_some();
                let mut run = coarse_runs(&mut body, empty_rows.as_deref(), rows_level);
                if !root {
                    self.load_inputs(inputs, "pc_p", &mut run);
                }
                run.line(format!("pc_u64 pc_g = {group};"));
                run.line("pc_bool pc_fresh = pc_k == 0u || pc_g != pc_group;");
                run.line("if (pc_fresh && pc_k > 0u) {");
                let mut hand_on = run.nested();
                hand_on_group(&mut hand_on, &types::store(self.reductions[r as usize].acc));
                run.append(hand_on);
                run.line("}");
                run.line("if (pc_fresh) pc_group = pc_g;");
                body.append(run);
                // The run's positions (the loop is opened below, the body written).
                Body::new(4)
            }
            (None, Some(r)) => {
                // Every work-item reaches the tile's reduction (it has barriers): none returns.
                let t = ty(self.reductions[r as usize].acc);
                body.line(format!("PC_LOCAL_ARRAY({t}, pc_scratch, PC_WG);"));
                body.line("PC_LOCAL_ARRAY(pc_bool, pc_starts, PC_WG);");
                body.line("PC_LOCAL_ARRAY(pc_u64, pc_groups, PC_WG);");
                body.line("pc_u64 pc_t = PC_GLOBAL_ID();");
                body.line(format!("{t} pc_acc = pc_r{r}_identity(pc_fault, PC_CAPS);"));
                body.line("pc_u64 pc_group = 0;");
                body.line("if (pc_t < pc_count && !PC_FAULTED(pc_fault)) {");
                body.nested()
            }
            (None, None) if coarse_plain => coarse_plain_items(&mut body),
            (None, None) if striped_plain => striped_plain_items(&mut body, root),
            (None, None) if coarse => {
                body.line("PC_LOCAL_ARRAY(pc_u32, pc_ranks, PC_SCAN_SCRATCH);");
                // The kept values, held in the work-item until its place is known (phase 1).
                for (k, &(_, _, c)) in held.iter().enumerate() {
                    body.line(format!("{} pc_keep{k}[PC_FILTER_ITEMS];", ty(c)));
                }
                if nested {
                    body.line("pc_u64 pc_keep_group[PC_FILTER_ITEMS];");
                }
                body.line("pc_u32 pc_kept = 0;");
                // A row at a time: its parent's values loaded once, its positions in a loop
                // of their own.
                let mut loads = Body::new(0);
                self.load_inputs(inputs, "pc_p", &mut loads);
                // The filters alone first (no value held, nothing stored: a loop a compiler can
                // vectorize), for a row's positions after a run of positions that kept none.
                let mut probe = Body::new(0);
                probe.line("pc_bool pc_pass = 0;");
                probe.line("do {");
                let mut test = probe.nested();
                self.position(plan, level, "pc_ci", &mut test);
                probe.append(test);
                probe.line("} while (0);");
                // (A position past the row's end, which repeats its last, counts nothing.)
                probe.line("pc_hits += (pc_u32)pc_pass & (pc_u32)(pc_q < pc_end);");
                if root {
                    coarse_root_items(&mut body, probe)
                } else {
                    coarse_rows(&mut body, loads, probe)
                }
            }
            (None, None) if compacting => {
                body.line("PC_LOCAL_ARRAY(pc_u32, pc_ranks, PC_SCAN_SCRATCH);");
                body.line("pc_u64 pc_t = PC_GLOBAL_ID();");
                body.line("pc_bool pc_pass = 0;");
                for (k, &(_, _, c)) in held.iter().enumerate() {
                    body.line(format!("{} pc_keep{k} = PC_OP(zero, {})();", ty(c), class(c)));
                }
                if nested {
                    body.line("pc_u64 pc_keep_group = 0;");
                }
                body.line("if (pc_t < pc_count && !PC_FAULTED(pc_fault)) {");
                body.nested()
            }
            (None, None) => {
                body.line("pc_u64 pc_t = PC_GLOBAL_ID();");
                body.line("if (pc_t >= pc_count || PC_FAULTED(pc_fault)) return;");
                body.line("{");
                body.nested()
            }
        };
        if coarse {
            // pc_j, pc_p and pc_i are the loop's.
        } else if striped_plain && !root {
            // The parent searched from the work-item's previous position's (pc_lo) on.
            work.line("pc_u64 pc_j = pc_j0 + pc_t;");
            work.line("pc_u64 pc_p = pc_fanout ? pc_parent_of_regular(pc_j, pc_fanout) : pc_segment_in(pc_offsets, pc_lo, pc_span[1], pc_j);");
            work.line("pc_lo = pc_p;");
            work.line("pc_u64 pc_i = pc_j - (pc_fanout ? pc_p * pc_fanout : pc_offsets[pc_p]);");
        } else if root {
            work.line("pc_u64 pc_j = pc_j0 + pc_t;");
            work.line("pc_u64 pc_i = pc_j;");
        } else {
            work.line("pc_u64 pc_j = pc_j0 + pc_t;");
            work.line("pc_u64 pc_p = pc_fanout ? pc_parent_of_regular(pc_j, pc_fanout) : pc_segment_in(pc_offsets, pc_span[0], pc_span[1], pc_j);");
            work.line("pc_u64 pc_i = pc_j - (pc_fanout ? pc_p * pc_fanout : pc_offsets[pc_p]);");
        }
        // A nested reduction's level advances `pc_j` with its positions: where the rows'
        // offsets are the level's, the element is read at the position, with no wait for the
        // row's index and start (a chain of dependent loads at the start of every row).
        if coarse_reduce {
            self.ew.direct_rows = self.rows_level.map(|(k, _)| k);
        }
        if let (Some(r), true) = (segmented, coarse_reduce) {
            let t = ty(self.reductions[r as usize].acc);
            work.line(format!("{t} pc_acc = pc_r{r}_identity(pc_fault, PC_CAPS);"));
        }
        if !compacting || coarse {
            work.line("pc_bool pc_pass = 0;");
        }
        work.line("do {");
        let mut inner = work.nested();
        // (A nested reduction's level loaded its parent's inputs once per run, a
        // filtering level's row loop (coarse_rows) once per row.)
        if !(root || coarse_reduce || (coarse && compacting)) {
            self.load_inputs(inputs, "pc_p", &mut inner);
        }
        self.position(plan, level, "pc_i", &mut inner);
        match head {
            _ if coarse && compacting => {
                // Held in both phases: phase 0 stages them when the work-group keeps few.
                for (k, (_, var, _)) in held.iter().enumerate() {
                    let value = self.held_value(var, plan, &mut inner);
                    inner.line(format!("pc_keep{k}[pc_kept] = {value};"));
                }
                if nested {
                    inner.line(format!("pc_keep_group[pc_kept] = {group};"));
                }
            }
            _ if compacting => {
                for (k, (_, var, _)) in held.iter().enumerate() {
                    let value = self.held_value(var, plan, &mut inner);
                    inner.line(format!("pc_keep{k} = {value};"));
                }
            }
            None => {
                for &v in outputs {
                    let n = self.ew.var_name(v);
                    let c = self.ew.var_class(v);
                    inner.line(format!("{}(pc_out_{n}, pc_out_cap, pc_t, {n});", types::store(c)));
                }
                if let Some(next) = next {
                    // The next level's size at this position, as its size kernel
                    // computes it from the values just written (no launch of that
                    // kernel, no reading them back).
                    inner.line("pc_u64 pc_size = 0;");
                    inner.line("do {");
                    let mut size = inner.nested();
                    self.qualifiers(plan, &next.before, &mut size);
                    let n = self.ew.source_size(&next.device_generator().source, &mut size);
                    size.line(format!("pc_size = {n};"));
                    inner.append(size);
                    inner.line("} while (0);");
                    inner.line("pc_sizes[pc_t] = pc_size;");
                }
            }
            Some(delivery) => self.deliver(plan, delivery, &mut inner),
        }
        work.append(inner);
        work.line("} while (0);");
        self.ew.direct_rows = None;
        match head {
            Some(Delivery::Reduce(_)) => {}
            Some(Delivery::Segmented(r)) if coarse_reduce => {
                work.line(format!("pc_tail = pc_r{r}_op(pc_fault, PC_CAPS, pc_tail, pc_acc);"));
            }
            Some(Delivery::Segmented(_)) => work.line(format!("pc_group = {group};")),
            _ if compacting => {}
            _ => work.line("(void)pc_pass;"),
        }
        if coarse && compacting {
            work.line("pc_kept += pc_pass;");
        } else if nested && compacting {
            work.line(format!("pc_keep_group = {group};"));
        } else if nested && segmented.is_none() {
            work.line(format!("pc_out_group[pc_t] = {group};"));
        }
        match (reduce, tile, segmented) {
            (Some(r), Some(each), _) => {
                self.reduce_tile_end(r, (each, work), cpu_shapes, &mut body);
            }
            _ if coarse && compacting => {
                // `work` is the loop's body: close the loops and the bounds check.
                body.append(work);
                if root {
                    close_coarse_root_items(&mut body);
                } else {
                    close_coarse_rows(&mut body);
                }
                body.line("pc_u32 pc_rank = pc_group_scan_u32(pc_kept, pc_ranks);");
                body.line("if (pc_phase == 0u) {");
                body.line("  if (PC_LOCAL_ID() == PC_WG - 1u) pc_places[PC_GROUP_ID()] = (pc_u64)pc_rank + pc_kept;");
                body.line(format!("  if (PC_SCAN_TOTAL(pc_ranks) <= {staged}) {{"));
                let mut stage = body.nested().nested();
                stage.line(format!("pc_u64 pc_to = (pc_u64)PC_GROUP_ID() * {staged} + pc_rank;"));
                stage.line("for (pc_u32 pc_m = 0; pc_m < pc_kept; pc_m++) {");
                store_held(
                    &mut stage,
                    (&held, nested),
                    Target::Staging("  ", "pc_to + pc_m"),
                    |k, _| format!("pc_keep{k}[pc_m]"),
                    "pc_keep_group[pc_m]",
                );
                stage.line("}");
                body.append(stage);
                body.line("  }");
                body.line("} else {");
                let mut write = body.nested();
                write.line("pc_u64 pc_at = pc_places[PC_GROUP_ID()] + pc_rank;");
                write.line("for (pc_u32 pc_m = 0; pc_m < pc_kept; pc_m++) {");
                store_held(
                    &mut write,
                    (&held, nested),
                    Target::Output("  ", "pc_at + pc_m"),
                    |k, _| format!("pc_keep{k}[pc_m]"),
                    "pc_keep_group[pc_m]",
                );
                write.line("}");
                body.append(write);
                body.line("}");
            }
            _ if compacting => {
                body.append(work);
                body.line("}");
                body.line("pc_u32 pc_rank = pc_tile_rank(pc_pass, pc_ranks);");
                body.line("if (pc_phase == 0u) {");
                body.line("  if (PC_LOCAL_ID() == PC_WG - 1u) pc_places[PC_GROUP_ID()] = (pc_u64)pc_rank + pc_pass;");
                body.line(format!("  if (pc_pass && PC_SCAN_TOTAL(pc_ranks) <= {staged}) {{"));
                let mut stage = body.nested().nested();
                stage.line(format!("pc_u64 pc_to = (pc_u64)PC_GROUP_ID() * {staged} + pc_rank;"));
                store_held(
                    &mut stage,
                    (&held, nested),
                    Target::Staging("", "pc_to"),
                    |k, _| format!("pc_keep{k}"),
                    "pc_keep_group",
                );
                body.append(stage);
                body.line("  }");
                body.line("} else if (pc_pass) {");
                let mut write = body.nested();
                write.line("pc_u64 pc_at = pc_places[PC_GROUP_ID()] + pc_rank;");
                store_held(
                    &mut write,
                    (&held, nested),
                    Target::Output("", "pc_at"),
                    |k, _| format!("pc_keep{k}"),
                    "pc_keep_group",
                );
                body.append(write);
                body.line("}");
            }
            (_, _, Some(r)) if coarse_reduce => {
                // A run that starts a group starts it from the identity, as the CPU's folds do,
                // so the body is written once (it was written twice, the first copy for a run's
                // first position, whose value started the group).
                let each = work.text();
                // Where the rows may be read directly, the run is written twice, for each value
                // of `pc_rows_direct` (the same for every run of a launch), so that the loop
                // over the run's positions tests nothing but its end.
                let forms: &[&str] = if self.rows_level.is_some() { &["1", "0"] } else { &[""] };
                for (k, direct) in forms.iter().enumerate() {
                    if !direct.is_empty() {
                        body.line(if k == 0 {
                            "    if (pc_rows_direct) {"
                        } else {
                            "    } else {"
                        });
                        body.line(format!(
                            "#undef PC_ROWS_DIRECT\n#define PC_ROWS_DIRECT {direct}"
                        ));
                    }
                    body.line(format!(
                        "    if (pc_fresh) pc_tail = pc_r{r}_identity(pc_fault, PC_CAPS);"
                    ));
                    body.line("    for (pc_u32 pc_q = 0; pc_q < pc_run; pc_q++, pc_j++, pc_i++) {");
                    // `each` is a run's loop body: close it, the loop over runs and the bounds
                    // check.
                    body.append_text(&each);
                    body.line("    }");
                }
                if forms.len() > 1 {
                    body.line("#undef PC_ROWS_DIRECT\n#define PC_ROWS_DIRECT pc_rows_direct");
                    body.line("    }");
                }
                body.line("    pc_k += pc_run;");
                body.line("  }");
                // (As `coarse_runs` left room for it.)
                if let (Some(identity), Some(_)) = (&empty_rows, self.rows_level) {
                    let mut inputs_here = Body::new(3);
                    self.load_inputs(inputs, "pc_p", &mut inputs_here);
                    let store = types::store(self.reductions[r as usize].acc);
                    let start = format!("pc_r{r}_identity(pc_fault, PC_CAPS)");
                    let inputs_here = inputs_here.text();
                    cpu_direct_rows(&mut body, (&inputs_here, &each), (identity, &start), &store);
                    // The rows kernel's row is the range's position: the range's element is
                    // computed from it, not read from the column the range's level writes.
                    let mut row_inputs = Body::new(1);
                    let mut reads_parents = false;
                    for &v in inputs {
                        if Some(v) == self.rows_level.map(|(_, range)| range) {
                            let (name, c) = (self.ew.var_name(v), self.ew.var_class(v));
                            let root = DSource::Root { class: c };
                            let at = self.ew.source_fetch(&root, "pc_p", true, &mut row_inputs);
                            row_inputs.line(format!("{} {name} = {at};", ty(c)));
                        } else {
                            self.load_inputs(&[v], "pc_p", &mut row_inputs);
                            reads_parents = true;
                        }
                    }
                    let acc = ty(self.reductions[r as usize].acc);
                    let body =
                        row_per_work_item((&row_inputs.text(), &each), (&acc, &start), &store);
                    self.rows_kernel = Some((body, reads_parents));
                }
                if let Some(identity) = &empty_rows {
                    // The level's last position: the parents after its own are empty.
                    body.line("  if (!pc_fanout && pc_j == pc_offsets[pc_parents]) {");
                    body.line(format!(
                        "    for (pc_u64 pc_e = pc_p + 1u; pc_e < pc_parents; pc_e++) {identity};"
                    ));
                    body.line("  }");
                }
                body.line("}");
                let store = types::store(self.reductions[r as usize].acc);
                // The heads to the work-items before them: one that continues the previous
                // work-item's last group is appended to it, one that starts at the work-item's
                // first position is a whole group; the first work-item's goes to the summary.
                body.line("pc_u32 pc_lid = PC_LOCAL_ID();");
                body.line("pc_scratch[pc_lid] = pc_head;");
                body.line("pc_groups[pc_lid] = pc_head_group;");
                body.line("pc_starts[pc_lid] = pc_has_head;");
                body.line("PC_BARRIER();");
                body.line("pc_bool pc_first_done = pc_starts[0];");
                body.line("if (pc_lid + 1u < PC_WG && pc_starts[pc_lid + 1u]) {");
                body.line("  if (pc_groups[pc_lid + 1u] == pc_group) {");
                body.line(format!(
                    "    pc_tail = pc_r{r}_op(pc_fault, PC_CAPS, pc_tail, pc_scratch[pc_lid + 1u]);"
                ));
                body.line("  } else {");
                body.line(format!(
                    "    {store}(pc_res, pc_res_cap, pc_groups[pc_lid + 1u], pc_scratch[pc_lid + 1u]);"
                ));
                body.line("  }");
                body.line("}");
                body.line("if (pc_lid == 0u && pc_has_head) {");
                body.line(format!("  {store}(pc_out, pc_out_cap, 2u * PC_GROUP_ID(), pc_head);"));
                body.line("  pc_out_group[2u * PC_GROUP_ID()] = pc_head_group;");
                body.line("}");
                body.line("PC_BARRIER();");
                body.line("pc_u64 pc_first = (pc_u64)PC_GROUP_ID() * PC_WG * PC_LEVEL_ITEMS;");
                body.line("pc_u64 pc_left = (pc_count - pc_first + PC_LEVEL_ITEMS - 1u) / PC_LEVEL_ITEMS;");
                body.line("pc_u32 pc_m = (pc_u32)(pc_left < PC_WG ? pc_left : PC_WG);");
                body.line(format!("pc_r{r}_segtile(pc_fault, PC_CAPS, pc_scratch, pc_starts, pc_groups, pc_m, pc_group, pc_tail, pc_res_cap, pc_res, pc_out_cap, pc_out, pc_out_group, pc_first_done);"));
            }
            (_, _, Some(r)) => {
                body.append(work);
                body.line("}");
                // The tile's results and summary (reduce.cl's _segtile): `pc_out` and
                // `pc_out_group` hold two entries per work-group.
                body.line("pc_u64 pc_first = PC_GROUP_ID() * PC_WG;");
                body.line("pc_u32 pc_m = (pc_u32)(pc_count - pc_first < PC_WG ? pc_count - pc_first : PC_WG);");
                body.line(format!("pc_r{r}_segtile(pc_fault, PC_CAPS, pc_scratch, pc_starts, pc_groups, pc_m, pc_group, pc_acc, pc_res_cap, pc_res, pc_out_cap, pc_out, pc_out_group, 0);"));
            }
            _ if coarse_plain => {
                body.append(work);
                body.line("  }");
                body.line("}");
            }
            _ if striped_plain => close_striped_plain_items(&mut body, &work.text()),
            _ => {
                body.append(work);
                body.line("}");
            }
        }
        body.text()
    }

    /// One position of a level inside its `do { } while (0)`, the parent's values bound: the
    /// qualifiers before the generator, its element (at index `index` of the row) bound, the
    /// qualifiers after it, and `pc_pass` set when none rejected the position.
    fn position(&mut self, plan: &Plan, level: &LevelSteps<'_>, index: &str, body: &mut Body) {
        self.qualifiers(plan, &level.before, body);
        let generator = level.device_generator();
        let element = self.ew.generator_element(generator, index, self.root_range, body);
        self.bind_slot(&plan.slots[level.generator.context], &element, generator.class, body);
        self.qualifiers(plan, &level.after, body);
        body.line("pc_pass = 1;");
    }

    /// Writes what the head delivers, inside the level's (or head kernel's) `do { } while (0)`.
    fn deliver(&mut self, plan: &Plan, delivery: Delivery, body: &mut Body) {
        let head = self.ew.expr(device(&plan.head), body);
        match delivery {
            Delivery::Collect | Delivery::NestedCollect => {
                body.line(format!(
                    "{}(pc_out, pc_out_cap, pc_t, {head});",
                    types::store(plan.head_class)
                ));
            }
            Delivery::Reduce(_) | Delivery::Segmented(_) => {
                let contribution = match plan.terminal {
                    Terminal::Count => {
                        body.line(format!("(void)({head});"));
                        format!("PC_ILIT({}, 1)", class(plan.acc_class))
                    }
                    Terminal::Min | Terminal::Max => {
                        format!("PC_OP(make, {})(1, {head})", class(plan.acc_class))
                    }
                    _ => head,
                };
                body.line(format!("pc_acc = {contribution};"));
            }
        }
    }

    /// The start of a top-level reduction's kernel (reduction `r`): each work-group takes a tile
    /// of `PC_WG * pc_rN_items` positions, work-item `t` the positions `t`, `t + PC_WG`, ... of
    /// it (neighbouring work-items read neighbouring elements), and stages each position's
    /// contribution (`pc_acc`, the identity where a filter rejected it) in local memory for
    /// [`Self::reduce_tile_end`] to reduce in order. With a CPU device's shapes (`blocked`),
    /// work-item `t` takes the positions `t * pc_rN_items`, ... (consecutive) instead, folded as
    /// they come: the positions each work-item folds are the same, without the stage. Returns the
    /// body of one position, `pc_t` bound, run only for positions of the chunk.
    fn reduce_tile_begin(
        &mut self,
        r: u32,
        (search, blocked): (bool, bool),
        body: &mut Body,
    ) -> (Body, Body) {
        let t = ty(self.reductions[r as usize].acc);
        body.line(format!("PC_LOCAL_ARRAY({t}, pc_scratch, PC_WG);"));
        if blocked {
            body.line(format!("{t} pc_fold = pc_r{r}_identity(pc_fault, PC_CAPS);"));
        } else {
            body.line(format!("PC_LOCAL_ARRAY({t}, pc_stage, PC_WG * pc_r{r}_items);"));
        }
        body.line("pc_u32 pc_lid = (pc_u32)PC_LOCAL_ID();");
        body.line(format!("pc_u64 pc_tile = (pc_u64)PC_GROUP_ID() * (PC_WG * pc_r{r}_items);"));
        if search {
            body.line(format!("if (!pc_fanout) pc_tile_span(pc_offsets, pc_parents, pc_j0, pc_count, pc_tile, PC_WG * pc_r{r}_items, pc_span);"));
        }
        // The fault word is read once: a fault raised during this kernel stops the run anyway.
        // A GPU's tile at the first generator does not wait for it: its positions read only the
        // generator's elements inside the chunk and checked captures, safe whatever the word
        // holds, so their loads go out with the word's instead of a trip to memory after it.
        let wait_for_fault = search || blocked;
        if wait_for_fault {
            body.line("pc_bool pc_live = (pc_bool)!PC_FAULTED(pc_fault);");
        }
        body.line(format!("{t} pc_acc;"));
        body.line(format!("for (pc_u32 pc_k = 0; pc_k < pc_r{r}_items; pc_k++) {{"));
        let mut each = body.nested();
        if blocked {
            each.line(format!("pc_u64 pc_t = pc_tile + (pc_u64)pc_lid * pc_r{r}_items + pc_k;"));
        } else {
            each.line("pc_u64 pc_t = pc_tile + (pc_u64)pc_k * PC_WG + pc_lid;");
        }
        each.line(format!("pc_acc = pc_r{r}_identity(pc_fault, PC_CAPS);"));
        each.line(if wait_for_fault {
            "if (pc_live && pc_t < pc_count) {"
        } else {
            "if (pc_t < pc_count) {"
        });
        let work = each.nested();
        (each, work)
    }

    /// The end of a top-level reduction's kernel: `work` (one position's body) closed, the
    /// staged contributions reduced in order — work-item `t` its `pc_rN_items` consecutive ones,
    /// then the work-group's — and the tile's partial written.
    fn reduce_tile_end(
        &mut self,
        r: u32,
        (mut each, work): (Body, Body),
        blocked: bool,
        body: &mut Body,
    ) {
        let acc = self.reductions[r as usize].acc;
        each.append(work);
        each.line("}");
        if blocked {
            // The first contribution as it is, as the staged form starts from it.
            each.line(format!(
                "pc_fold = pc_k == 0u ? pc_acc : pc_r{r}_op(pc_fault, PC_CAPS, pc_fold, pc_acc);"
            ));
            body.append(each);
            body.line("}");
            body.line("pc_acc = pc_fold;");
        } else {
            each.line("pc_stage[pc_k * PC_WG + pc_lid] = pc_acc;");
            body.append(each);
            body.line("}");
            body.line("PC_BARRIER();");
            body.line(format!("pc_acc = pc_stage[pc_lid * pc_r{r}_items];"));
            body.line(format!(
                "for (pc_u32 pc_k = 1; pc_k < pc_r{r}_items; pc_k++) pc_acc = pc_r{r}_op(pc_fault, PC_CAPS, pc_acc, pc_stage[pc_lid * pc_r{r}_items + pc_k]);"
            ));
        }
        body.line(format!("pc_acc = pc_r{r}_group(pc_fault, PC_CAPS, pc_scratch, pc_acc);"));
        body.line(format!(
            "if (pc_lid == 0) {}(pc_out, pc_out_cap, PC_GROUP_ID(), pc_acc);",
            types::store(acc)
        ));
    }

    fn head_kernel(
        &mut self,
        plan: &Plan,
        name: &str,
        inputs: &[VarId],
        nested: bool,
        delivery: Delivery,
    ) {
        let params = self.input_params(inputs);
        let mut body = Body::new(1);
        let reduce = match delivery {
            Delivery::Reduce(r) => Some(r),
            _ => None,
        };
        let mut tile = None;
        let mut work = match reduce {
            Some(r) => {
                let (each, work) = self.reduce_tile_begin(r, (false, false), &mut body);
                tile = Some(each);
                work
            }
            None => {
                body.line("pc_u64 pc_t = PC_GLOBAL_ID();");
                body.line("if (pc_t >= pc_count || PC_FAULTED(pc_fault)) return;");
                body.line("{");
                body.nested()
            }
        };
        if let Delivery::Segmented(r) = delivery {
            work.line(format!(
                "{} pc_acc = pc_r{r}_identity(pc_fault, PC_CAPS);",
                ty(self.reductions[r as usize].acc)
            ));
        }
        work.line("pc_bool pc_pass = 0;");
        work.line("do {");
        let mut inner = work.nested();
        self.load_inputs(inputs, "pc_t", &mut inner);
        inner.line("pc_pass = 1;");
        self.deliver(plan, delivery, &mut inner);
        work.append(inner);
        work.line("} while (0);");
        match delivery {
            Delivery::Reduce(_) => {}
            Delivery::Segmented(_) => {
                work.line(format!(
                    "{}(pc_out, pc_out_cap, pc_t, pc_acc);",
                    types::store(plan.acc_class)
                ));
            }
            // The head kernel has no filter of its own: every context delivers.
            _ => work.line("(void)pc_pass;"),
        }
        if nested {
            work.line("pc_out_group[pc_t] = pc_in_group[pc_t];");
        }
        match (reduce, tile) {
            (Some(r), Some(each)) => self.reduce_tile_end(r, (each, work), false, &mut body),
            _ => {
                body.append(work);
                body.line("}");
            }
        }
        let _ = writeln!(
            self.kernels,
            "/* the head, after the nested comprehensions */\nPC_KERNEL void {name}({COMMON}, pc_u64 pc_count, pc_u64 pc_in_cap{params}, PC_GLOBAL const pc_u64* pc_in_group, pc_u64 pc_out_cap, PC_GLOBAL pc_u8* pc_out, PC_GLOBAL pc_u64* pc_out_group) {{\n{}}}\n",
            body.text()
        );
    }
}

/// The class of the elements `source` reads from captured memory, if it reads any.
fn captured_elements(source: &DSource) -> Option<Class> {
    match source {
        DSource::Slice { class, .. } | DSource::Row { class, .. } => Some(*class),
        DSource::StepBy { inner, .. } | DSource::Rev { inner } => captured_elements(inner),
        DSource::Range { .. } | DSource::RowIndices { .. } | DSource::Root { .. } => None,
    }
}

/// Whether a level's qualifiers drop positions (its kernel packs the positions it keeps).
fn level_filters(level: &LevelSteps<'_>) -> bool {
    level.before.iter().chain(&level.after).any(|s| matches!(s.kind, StepKind::Filter(_)))
}

fn reduce_kind(terminal: &Terminal) -> ReduceKind {
    match terminal {
        Terminal::Min | Terminal::Max => ReduceKind::Optional,
        Terminal::Count => ReduceKind::Count,
        Terminal::Any => ReduceKind::Flag { stop: true },
        Terminal::All => ReduceKind::Flag { stop: false },
        _ => ReduceKind::Value,
    }
}

use std::fmt::Write as _;

/// `par_min!`'s or `par_max!`'s combination of the partial results `pc_a` and `pc_b` (each a
/// flag and a value of `class`), where `beats` is the comparison (`lt`, `ge`) by which the right
/// value wins: it wins if present and ordered with itself, and either the left one is absent or
/// not ordered with itself (a NaN, a tuple holding one) or it beats the left one. The host's
/// `Extreme` keeps the same rule.
fn extreme_op(beats: &str, class: &str) -> String {
    format!(
        "((pc_b.f0 && (!pc_a.f0 || (PC_OP(eq, {class})(pc_b.f1, pc_b.f1) && \
         (PC_OP(ne, {class})(pc_a.f1, pc_a.f1) || PC_OP({beats}, {class})(pc_b.f1, pc_a.f1))))) \
         ? pc_b : pc_a)"
    )
}

/// Where [`store_held`] stores: the staging buffer's columns or the output's, each line
/// indented by the first string, at the index the second names.
enum Target<'a> {
    Staging(&'a str, &'a str),
    Output(&'a str, &'a str),
}

/// Stores each held value of a filtering level (`held`: column, variable, class) — `value(k,
/// class)` for the `k`-th — and, in a nested comprehension, its group `group`, where `into`
/// says: the staging of phase 0, the output of phase 1, or the copy of one into the other.
fn store_held(
    body: &mut Body,
    (held, nested): (&[(String, String, Class)], bool),
    into: Target<'_>,
    value: impl Fn(usize, Class) -> String,
    group: &str,
) {
    let (indent, at) = match into {
        Target::Staging(indent, at) | Target::Output(indent, at) => (indent, at),
    };
    for (k, &(ref column, _, c)) in held.iter().enumerate() {
        let (column, cap) = match into {
            Target::Staging(..) => (stage_column(k), "pc_staging_cap"),
            Target::Output(..) => (column.clone(), "pc_out_cap"),
        };
        body.line(format!("{indent}{}({column}, {cap}, {at}, {});", types::store(c), value(k, c)));
    }
    if nested {
        let groups = match into {
            Target::Staging(..) => stage_groups(held.len()),
            Target::Output(..) => "pc_out_group".to_string(),
        };
        body.line(format!("{indent}{groups}[{at}] = {group};"));
    }
}

/// Held column `k`'s staged values in a filtering level kernel's `pc_staging` (its columns each
/// `pc_staging_stride` bytes, of `pc_staging_cap` values, laid out as the output columns are).
fn stage_column(k: usize) -> String {
    format!("pc_staging + {k}u * pc_staging_stride")
}

/// The staged groups of a nested comprehension's kept values: after the `held` columns.
fn stage_groups(held: usize) -> String {
    format!("((PC_GLOBAL pc_u64*)(pc_staging + {held}u * pc_staging_stride))")
}

/// Opens the loops of a work-item over its PC_FILTER_ITEMS consecutive positions in a filtering
/// level below the first generator, inside `body`: one over the rows they fall in, whose parent
/// is found once (the first by a merge or a search, the next by stepping, past empty rows by a
/// search) and whose parent's values `loads` reads once, and in it one over the row's positions
/// — as a loop over a row's children written by hand, where a single huge row is still shared
/// by every work-item. Returns the body of one position, in which `pc_k`, `pc_p` and `pc_i` are
/// the position's; the caller closes the loops and the bounds check with
/// [`close_coarse_rows`] after appending the position's body.
fn coarse_rows(body: &mut Body, loads: Body, probe: Body) -> Body {
    body.line("pc_u64 pc_tile0 = (pc_u64)PC_GROUP_ID() * PC_WG * PC_FILTER_ITEMS;");
    body.line("PC_LOCAL_ARRAY(pc_u64, pc_firsts, PC_WG);");
    body.line("pc_bool pc_merged = (pc_bool)(!pc_fanout && pc_tile0 < pc_count && pc_span[1] - pc_span[0] < PC_MERGE_SPAN);");
    body.line("if (pc_merged) pc_first_parents(pc_offsets, pc_span, pc_j0 + pc_tile0, PC_FILTER_ITEMS, pc_firsts);");
    body.line("pc_u64 pc_t = pc_tile0 + (pc_u64)PC_LOCAL_ID() * PC_FILTER_ITEMS;");
    body.line("if (pc_t < pc_count && !PC_FAULTED(pc_fault)) {");
    let mut items = body.nested();
    items.line("pc_u64 pc_j = pc_j0 + pc_t;");
    items.line("pc_u64 pc_p = pc_fanout ? pc_parent_of_regular(pc_j, pc_fanout) : pc_merged ? pc_firsts[PC_LOCAL_ID()] : pc_segment_in(pc_offsets, pc_span[0], pc_span[1], pc_j);");
    items.line("pc_u64 pc_i = pc_j - (pc_fanout ? pc_p * pc_fanout : pc_offsets[pc_p]);");
    items.line("pc_u32 pc_items = pc_count - pc_t < PC_FILTER_ITEMS ? (pc_u32)(pc_count - pc_t) : PC_FILTER_ITEMS;");
    items.line("pc_u32 pc_k = 0;");
    items.line("pc_bool pc_probe = 1;");
    items.line("for (;;) {");
    let mut row = items.nested();
    // The rest of row pc_p (never empty: pc_i is inside it), or of the work-item's positions.
    row.line("pc_u64 pc_rest = (pc_fanout ? pc_fanout : pc_offsets[pc_p + 1] - pc_offsets[pc_p]) - pc_i;");
    row.line(
        "pc_u32 pc_end = pc_rest < (pc_u64)(pc_items - pc_k) ? pc_k + (pc_u32)pc_rest : pc_items;",
    );
    for line in loads.text().lines() {
        row.line(line.trim_start());
    }
    // After a run of positions that kept none (and first), the filters alone over the row's
    // positions: when they keep none there, the positions are done; when they keep some, the
    // positions run in full (the filters again, and the values held), and so do the next row's
    // until a row keeps none. A selective filter costs a vectorized test per position, a filter
    // that keeps many one test more per row it enters keeping (see `probe_positions`).
    row.line("if (pc_probe) {");
    let mut test = row.nested();
    probe_positions(&mut test, &probe);
    row.append(test);
    row.line("  if (pc_hits == 0u) {");
    row.line("    pc_i += pc_end - pc_k;");
    row.line("    pc_k = pc_end;");
    row.line("  }");
    row.line("  pc_probe = (pc_bool)(pc_hits == 0u);");
    row.line("}");
    row.line("for (; pc_k < pc_end; pc_k++, pc_i++) {");
    let item = row.nested();
    items.append(row);
    body.append(items);
    item
}

/// The filters alone (`probe`, which adds its position to `pc_hits` when they keep it) over
/// positions `pc_k..pc_end` of a row starting at element `pc_i`, in whole vectors of
/// PC_PROBE_LANES positions: those past the end repeat the last (a position of the row, so no
/// check fails that would not anyway) and count nothing, so that no scalar loop follows the
/// vectorized one.
fn probe_positions(body: &mut Body, probe: &Body) {
    body.line("pc_u32 pc_hits = 0;");
    body.line("pc_u32 pc_stop = pc_k + (pc_end - pc_k + PC_PROBE_LANES - 1u) / PC_PROBE_LANES * PC_PROBE_LANES;");
    body.line("for (pc_u32 pc_q = pc_k; pc_q < pc_stop; pc_q++) {");
    body.line("  pc_u64 pc_ci = pc_i + (pc_u64)((pc_q < pc_end ? pc_q : pc_end - 1u) - pc_k);");
    for line in probe.text().lines() {
        body.line(format!("  {line}"));
    }
    body.line("}");
}

/// [`coarse_rows`] for the first generator's positions, which have no parent: the work-item's
/// `PC_FILTER_ITEMS` consecutive positions are one row, tested by the filters alone (`probe`, a
/// vectorized loop) and run in full only when they keep some. Returns the position's body, in
/// the loop over them (`pc_i` the element's index, `pc_k` the position's in the work-item).
fn coarse_root_items(body: &mut Body, probe: Body) -> Body {
    body.line("pc_u64 pc_t = (pc_u64)PC_GROUP_ID() * PC_WG * PC_FILTER_ITEMS + (pc_u64)PC_LOCAL_ID() * PC_FILTER_ITEMS;");
    body.line("if (pc_t < pc_count && !PC_FAULTED(pc_fault)) {");
    let mut items = body.nested();
    items.line("pc_u64 pc_i = pc_j0 + pc_t;");
    items.line("pc_u32 pc_end = pc_count - pc_t < PC_FILTER_ITEMS ? (pc_u32)(pc_count - pc_t) : PC_FILTER_ITEMS;");
    items.line("pc_u32 pc_k = 0;");
    probe_positions(&mut items, &probe);
    items.line("if (pc_hits == 0u) pc_k = pc_end;");
    items.line("for (; pc_k < pc_end; pc_k++, pc_i++) {");
    let item = items.nested();
    body.append(items);
    item
}

/// The loop of a level that writes a value per position, in a CPU device's form, over its
/// work-item's `PC_PLAIN_ITEMS` consecutive positions (`pc_t`, position `pc_j`, child `pc_i` of
/// `pc_p`): the first position's parent found by a search among the tile's, the next ones' by
/// stepping to the next parent where a row ends (past empty parents, a search from there), a
/// regular level's without a division. Opens the bounds check and the loop, and returns the
/// position's body; the caller closes both.
fn coarse_plain_items(body: &mut Body) -> Body {
    body.line("pc_u64 pc_t = (pc_u64)PC_GROUP_ID() * PC_WG * PC_PLAIN_ITEMS + (pc_u64)PC_LOCAL_ID() * PC_PLAIN_ITEMS;");
    body.line("if (pc_t >= pc_count || PC_FAULTED(pc_fault)) return;");
    body.line("{");
    let mut items = body.nested();
    items.line("pc_u64 pc_j = pc_j0 + pc_t;");
    items.line("pc_u64 pc_p = pc_fanout ? pc_parent_of_regular(pc_j, pc_fanout) : pc_segment_in(pc_offsets, pc_span[0], pc_span[1], pc_j);");
    items.line("pc_u64 pc_i = pc_j - (pc_fanout ? pc_p * pc_fanout : pc_offsets[pc_p]);");
    // Where the parent's children end: a position there belongs to a later parent.
    items.line("pc_u64 pc_end = pc_j - pc_i + (pc_fanout ? pc_fanout : pc_offsets[pc_p + 1] - pc_offsets[pc_p]);");
    items.line("pc_u32 pc_items = pc_count - pc_t < PC_PLAIN_ITEMS ? (pc_u32)(pc_count - pc_t) : PC_PLAIN_ITEMS;");
    items.line("for (pc_u32 pc_k = 0; pc_k < pc_items; pc_k++, pc_t++, pc_j++, pc_i++) {");
    items.line("  if (pc_j >= pc_end) {");
    items.line("    pc_p++;");
    items.line("    if (pc_fanout) {");
    items.line("      pc_end += pc_fanout;");
    items.line("    } else {");
    items.line("      if (pc_j >= pc_offsets[pc_p + 1]) pc_p = pc_segment_in(pc_offsets, pc_p + 1, pc_span[1], pc_j);");
    items.line("      pc_end = pc_offsets[pc_p + 1];");
    items.line("    }");
    items.line("    pc_i = pc_j - (pc_fanout ? pc_p * pc_fanout : pc_offsets[pc_p]);");
    items.line("  }");
    let item = items.nested();
    body.append(items);
    item
}

/// The loop of a level that writes a value per position, in a GPU's form, over its work-item's
/// `PC_PLAIN_ITEMS` positions `PC_WG` apart (`pc_t`; below the first generator each one's
/// parent searched from the one before's, `pc_lo`, on: the positions rise). Opens the bounds
/// check; returns a body for the position's work, which [`close_striped_plain_items`] writes
/// into the loop.
fn striped_plain_items(body: &mut Body, root: bool) -> Body {
    body.line(
        "pc_u64 pc_t0 = (pc_u64)PC_GROUP_ID() * PC_WG * PC_PLAIN_ITEMS + (pc_u64)PC_LOCAL_ID();",
    );
    // At the first generator the positions read only its elements inside the chunk and checked
    // captures, safe whatever the fault word holds: they do not wait for it (a load of it
    // before theirs is a trip to memory each work-item waits for). Below it a fault may have
    // left the offsets unfinished: the level returns at once.
    if root {
        body.line("if (pc_t0 >= pc_count) return;");
    } else {
        body.line("if (pc_t0 >= pc_count || PC_FAULTED(pc_fault)) return;");
    }
    body.line("{");
    if !root {
        body.line("  pc_u64 pc_lo = pc_span[0];");
    }
    Body::new(3)
}

/// Closes what [`striped_plain_items`] opened, with the position's work `each` in its loop —
/// written twice: for a tile that lies wholly in the chunk (every one but the last), a loop
/// with no bound check between its positions, unrolled, so that the compiler may issue their
/// loads together (a check between them makes each load wait for the store before it); for the
/// last tile, a loop that stops at the chunk's end.
fn close_striped_plain_items(body: &mut Body, each: &str) {
    body.line("  if ((pc_u64)(PC_GROUP_ID() + 1u) * PC_WG * PC_PLAIN_ITEMS <= pc_count) {");
    body.line("    PC_UNROLL");
    body.line("    for (pc_u32 pc_k = 0; pc_k < PC_PLAIN_ITEMS; pc_k++) {");
    body.line("      pc_u64 pc_t = pc_t0 + (pc_u64)pc_k * PC_WG;");
    body.append_text(each);
    body.line("    }");
    body.line("  } else {");
    body.line("    for (pc_u32 pc_k = 0; pc_k < PC_PLAIN_ITEMS; pc_k++) {");
    body.line("      pc_u64 pc_t = pc_t0 + (pc_u64)pc_k * PC_WG;");
    body.line("      if (pc_t >= pc_count) break;");
    body.append_text(each);
    body.line("    }");
    body.line("  }");
    body.line("}");
}

/// Closes what [`coarse_root_items`] opened, after the position's body: the loop over the
/// positions and the bounds check.
fn close_coarse_root_items(body: &mut Body) {
    body.line("  }");
    body.line("}");
}

/// Closes what [`coarse_rows`] opened, after the position's body: the row's loop, the step to
/// the next row that holds a position (the next parent, or past empty ones a search), the loop
/// over rows and the bounds check.
fn close_coarse_rows(body: &mut Body) {
    body.line("    }");
    body.line("    if (pc_k >= pc_items) break;");
    body.line("    pc_j = pc_j0 + pc_t + pc_k;");
    body.line("    pc_p++;");
    body.line("    if (pc_fanout) {");
    body.line("      pc_i = 0;");
    body.line("    } else {");
    body.line("      if (pc_j >= pc_offsets[pc_p + 1]) pc_p = pc_segment_in(pc_offsets, pc_p + 1, pc_span[1], pc_j);");
    body.line("      pc_i = pc_j - pc_offsets[pc_p];");
    body.line("    }");
    body.line("  }");
    body.line("}");
}

/// A CPU device's form of a nested reduction's level whose positions are its rows' elements
/// (`pc_rows_direct`) and whose groups are its rows: the `else` of [`coarse_runs`]'s loop, the
/// same runs with nothing per row but the row's end, the work-item's previous group handed on,
/// and the step to the next row. A core keeps only so many instructions in flight, and the
/// rows' elements' loads (the sparse matrix × vector's gathers from `x`) wait among them: the
/// fewer instructions per row, the more of them overlap. `identity` writes row `pc_e`'s
/// result, `start` is the identity's value; `(inputs, each)`: the parent's inputs loaded for
/// `pc_p`, and a position's value folded into `pc_tail`; `store` the accumulator's store.
fn cpu_direct_rows(
    body: &mut Body,
    (inputs, each): (&str, &str),
    (identity, start): (&str, &str),
    store: &str,
) {
    body.line("#if PC_CPU_SHAPES");
    body.line("  else {");
    body.line("    pc_u64 pc_jend = pc_j + pc_items;");
    body.line("    pc_bool pc_more = 0;");
    body.line("    for (;;) {");
    // The work-item's group before this row's is complete, or its head.
    body.line("      if (pc_more) {");
    let mut hand_on = Body::new(5);
    hand_on_group(&mut hand_on, store);
    body.append(hand_on);
    body.line("      }");
    body.line("      pc_more = 1;");
    body.line("      pc_group = pc_p;");
    body.line(format!("      pc_tail = {start};"));
    body.line("      pc_u64 pc_rend = pc_offsets[pc_p + 1u];");
    body.line("      pc_u64 pc_stop = pc_rend < pc_jend ? pc_rend : pc_jend;");
    body.line("      pc_i = pc_j - pc_offsets[pc_p];");
    body.append_text(inputs);
    body.line("#undef PC_ROWS_DIRECT\n#define PC_ROWS_DIRECT 1");
    body.line("      for (; pc_j < pc_stop; pc_j++, pc_i++) {");
    body.append_text(each);
    body.line("      }");
    body.line("#undef PC_ROWS_DIRECT\n#define PC_ROWS_DIRECT pc_rows_direct");
    body.line("      if (pc_j >= pc_jend) break;");
    body.line("      pc_p++;");
    let mut step = Body::new(4);
    step_past_empty_rows(&mut step, identity);
    body.append(step);
    body.line("    }");
    body.line("  }");
    body.line("#endif");
}

/// The declaration of a level's kernel `name` (`KernelWriter::level_kernel`), with its input
/// columns' and output columns' parameters and `extra` ones after all the others (a rows
/// kernel's header words: `KernelWriter::rows_kernel`, whose parameters are the level
/// kernel's so that the runtime passes it the same arguments).
fn level_signature(name: &str, in_params: &str, out_params: &str, extra: &str) -> String {
    format!(
        "PC_KERNEL void {name}({COMMON}, pc_u64 pc_j0, pc_u64 pc_count, pc_u64 pc_fanout, pc_u64 pc_parents, PC_GLOBAL const pc_u64* PC_RESTRICT pc_offsets, pc_u64 pc_offsets_at, pc_u64 pc_in_cap{in_params}, PC_GLOBAL const pc_u64* pc_in_group, pc_u64 pc_out_cap{out_params}, PC_GLOBAL pc_u64* pc_out_group, pc_u64 pc_res_cap, PC_GLOBAL pc_u8* pc_res, PC_GLOBAL pc_u64* pc_places, pc_u32 pc_phase, pc_u32 pc_rows_direct, PC_GLOBAL pc_u8* pc_staging, pc_u64 pc_staging_cap, pc_u64 pc_staging_stride, pc_u64 pc_staging_limit, PC_GLOBAL pc_u64* pc_sizes{extra})"
    )
}

/// The body of a level's one-row-per-work-item kernel (`KernelWriter::rows_kernel`): row
/// `pc_p`'s positions folded in order from `start` into `pc_tail` (of type `acc`) by `each`
/// (`inputs` loads or computes the parent's), and the result written by `store`.
fn row_per_work_item(
    (inputs, each): (&str, &str),
    (acc, start): (&str, &str),
    store: &str,
) -> String {
    let mut body = Body::new(1);
    body.line("pc_u64 pc_p = PC_GLOBAL_ID();");
    body.line("if (pc_p >= pc_parents || PC_FAULTED(pc_fault)) return;");
    body.line("pc_u64 pc_j = pc_offsets[pc_p];");
    body.line("pc_u64 pc_stop = pc_offsets[pc_p + 1u];");
    body.line("pc_u64 pc_i = 0;");
    body.append_text(inputs);
    body.line(format!("{acc} pc_tail = {start};"));
    body.line("#undef PC_ROWS_DIRECT\n#define PC_ROWS_DIRECT 1");
    body.line("for (; pc_j < pc_stop; pc_j++, pc_i++) {");
    body.append_text(each);
    body.line("}");
    body.line("#undef PC_ROWS_DIRECT\n#define PC_ROWS_DIRECT pc_rows_direct");
    body.line(format!("{store}(pc_res, pc_res_cap, pc_p, pc_tail);"));
    body.text()
}

/// A nested reduction's work-item, done with its group `pc_group` (value `pc_tail`) on to
/// another: the first becomes its head (for the work-group's reduction by key), any later one
/// is complete and written by `store` to the result.
fn hand_on_group(body: &mut Body, store: &str) {
    body.line("if (!pc_has_head) {");
    body.line("  pc_head = pc_tail;");
    body.line("  pc_head_group = pc_group;");
    body.line("  pc_has_head = 1;");
    body.line("} else {");
    body.line(format!("  {store}(pc_res, pc_res_cap, pc_group, pc_tail);"));
    body.line("}");
}

/// A step from parent `pc_p` to the next that holds position `pc_j`: where the next ones are
/// empty, a search past them, each given the identity by `identity` (which writes row `pc_e`).
fn step_past_empty_rows(body: &mut Body, identity: &str) {
    body.line("if (pc_j >= pc_offsets[pc_p + 1u]) {");
    body.line("  pc_u64 pc_e = pc_p;");
    body.line("  pc_p = pc_segment_in(pc_offsets, pc_p + 1u, pc_span[1], pc_j);");
    body.line(format!("  for (; pc_e < pc_p; pc_e++) {identity};"));
    body.line("}");
}

/// The loop of a nested reduction's level over its work-item's `PC_LEVEL_ITEMS` positions by
/// runs, each the positions of one parent (`pc_run` of them from `pc_j`, child `pc_i` of
/// `pc_p`, after `pc_k` of the work-item's): opens the bounds check and the loop over runs, and
/// returns the run's body, in which the caller opens the loop over the run's positions.
///
/// Where the level's groups are its rows (`empty_rows`) and they may be read directly
/// (`rows_level`), the loop is the `if` of [`cpu_direct_rows`]'s `else` on a CPU device.
fn coarse_runs(body: &mut Body, empty_rows: Option<&str>, rows_level: bool) -> Body {
    body.line("pc_u64 pc_tile0 = (pc_u64)PC_GROUP_ID() * PC_WG * PC_LEVEL_ITEMS;");
    body.line("PC_LOCAL_ARRAY(pc_u64, pc_firsts, PC_WG);");
    body.line("pc_bool pc_merged = (pc_bool)(!pc_fanout && pc_tile0 < pc_count && pc_span[1] - pc_span[0] < PC_MERGE_SPAN);");
    body.line("if (pc_merged) pc_first_parents(pc_offsets, pc_span, pc_j0 + pc_tile0, PC_LEVEL_ITEMS, pc_firsts);");
    body.line("pc_u64 pc_t = pc_tile0 + (pc_u64)PC_LOCAL_ID() * PC_LEVEL_ITEMS;");
    body.line("if (pc_t < pc_count && !PC_FAULTED(pc_fault)) {");
    let mut items = body.nested();
    items.line("pc_u64 pc_j = pc_j0 + pc_t;");
    items.line("pc_u64 pc_p = pc_fanout ? pc_parent_of_regular(pc_j, pc_fanout) : pc_merged ? pc_firsts[PC_LOCAL_ID()] : pc_segment_in(pc_offsets, pc_span[0], pc_span[1], pc_j);");
    items.line("pc_u64 pc_i = pc_j - (pc_fanout ? pc_p * pc_fanout : pc_offsets[pc_p]);");
    items.line("pc_u32 pc_items = pc_count - pc_t < PC_LEVEL_ITEMS ? (pc_u32)(pc_count - pc_t) : PC_LEVEL_ITEMS;");
    if let Some(identity) = empty_rows {
        // `identity` writes the result of row `pc_e`. An empty row belongs to the work-item
        // holding the position it would start at (so to exactly one; those after the level's
        // last position, to the work-item holding it): here the rows before the first parent
        // that start at the first position.
        items.line(format!("if (!pc_fanout) for (pc_u64 pc_e = pc_p; pc_e-- > 0u && pc_offsets[pc_e] == pc_j;) {identity};"));
    }
    // Each run but the first starts where the previous parent's children end: at the next
    // parent's first child, or — past empty parents — a later one's, searched for from the
    // next parent on (so a run of empty parents costs one search, not a step each). A run
    // ends at its parent's last child or the work-item's last position, so it is never empty.
    if empty_rows.is_some() && rows_level {
        // On a CPU device, rows read directly go by `cpu_direct_rows` instead (its `else`).
        items.line("#if PC_CPU_SHAPES");
        items.line("if (!pc_rows_direct)");
        items.line("#endif");
    }
    items.line("for (pc_u32 pc_k = 0; pc_k < pc_items;) {");
    let mut run = items.nested();
    run.line("if (pc_k > 0u) {");
    run.line("  if (pc_fanout) {");
    run.line("    pc_i = 0;");
    run.line("    pc_p++;");
    run.line("  } else {");
    run.line("    pc_p++;");
    match empty_rows {
        Some(identity) => {
            let mut step = run.nested().nested();
            step_past_empty_rows(&mut step, identity);
            run.append(step);
        }
        None => run.line("    if (pc_j >= pc_offsets[pc_p + 1]) pc_p = pc_segment_in(pc_offsets, pc_p + 1, pc_span[1], pc_j);"),
    }
    run.line("    pc_i = pc_j - pc_offsets[pc_p];");
    run.line("  }");
    run.line("}");
    run.line("pc_u64 pc_rest = pc_fanout ? pc_fanout - pc_i : pc_offsets[pc_p + 1] - pc_j;");
    run.line(
        "pc_u32 pc_run = pc_rest < (pc_u64)(pc_items - pc_k) ? (pc_u32)pc_rest : pc_items - pc_k;",
    );
    body.append(items);
    run
}
