//! From syntax to plan: scopes, dependencies, and the classification of every generator.
//!
//! Walking the qualifiers left to right, the analysis knows which variables are bound at each
//! point (`scope`). For every qualifier it finds the variables the qualifier mentions
//! (`free_vars`), reports uses of a variable before the qualifier that binds it, rejects a
//! filter before the first generator, and classifies each generator ([`generator`]): invariant
//! (a product — the regular case), flattenable (an expand), or an error naming the generator
//! and the forms that work. Parallel branches are zipped at the root (`zip`); comprehensions
//! nested in the head become inner plans (`nested`).

pub(crate) mod device;
pub(crate) mod free_vars;
pub mod generator;
mod nested;
mod scope;
mod zip;

use crate::error::{error, error_spanned, Errors};
use crate::plan::kernel_ir::{Class, Constraint, DExpr, DPat, NotDevice, PlanExpr, Prim, VarId};
use crate::plan::{
    Compiled, DeviceUnit, Marker, Plan, Prelude, ReduceOp, Slot, Step, StepKind, Terminal, Var,
};
use crate::syntax::{Comprehension, Qualifier};
use crate::text::text;
use device::lower::Lower;
use device::DeviceCtx;
pub(crate) use nested::nested_macro_mentions;
use scope::Scope;
use std::collections::{HashMap, HashSet};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Pat};

/// The forms a generator that depends on earlier variables may take, for error messages.
const FLATTENABLE_FORMS: &str = "a generator that uses earlier variables must have a size \
    parcomp can compute without building it: a range `a..b` or `a..=b`, `R.map(f)`, \
    `R.step_by(k)` or `R.rev()` of such an `R`, a row `rows[x]` / `&rows[x]` / `m.row(x)` of a \
    collection that does not depend on the comprehension, or a variable bound earlier that holds \
    a slice; anything else can be computed before the comprehension (e.g. into a `Jagged`)";

/// Analyses a parsed comprehension, adding every problem found to `errors`.
pub fn analyze(
    comprehension: Comprehension,
    terminal: Terminal,
    text_of_input: String,
    errors: &mut Errors,
) -> Option<Compiled> {
    let marker = comprehension.marker;
    let mut analyzer = Analyzer {
        errors,
        hoisted: 0,
        branches: 0,
        nesting: None,
        vars: Vec::new(),
        device: DeviceCtx::default(),
        not_device: Vec::new(),
        rows: HashMap::new(),
        root_rows: None,
        pending_row: None,
    };
    let plan = analyzer.top_level(comprehension, terminal, text_of_input)?;
    let Analyzer { vars, device, mut not_device, root_rows, .. } = analyzer;
    if let Marker::Cpu(span) = marker {
        not_device.insert(
            0,
            device::not_device(span, "is marked `@cpu`", "remove `@cpu` to let it run on a device"),
        );
    }
    let unit = DeviceUnit {
        marker,
        not_device,
        captures: device.captures,
        par_fns: device.par_fns,
        classes: device.classes,
        constraints: device.constraints,
        faults: device.faults,
        locals: device.locals,
        root_rows,
    };
    Some(Compiled { plan, vars, device: unit, device_result: false })
}

/// The state shared by the analysis of a comprehension and of everything inside it.
pub(crate) struct Analyzer<'e> {
    pub(crate) errors: &'e mut Errors,
    /// Collections hoisted so far (their names must be unique in the emitted block).
    hoisted: usize,
    /// Parallel branches computed so far (likewise).
    branches: usize,
    /// While analysing a nested comprehension: its text, for messages.
    nesting: Option<String>,
    /// Every variable bound so far.
    vars: Vec<Var>,
    /// The device half: classes, captures, `#[par_fn]`s, fault sites.
    device: DeviceCtx,
    /// Why the device cannot run the comprehension.
    not_device: Vec<NotDevice>,
    /// The variables that hold a row of an array of rows of the caller, and the array.
    rows: HashMap<VarId, crate::plan::kernel_ir::CaptureId>,
    /// When the first generator's variables are rows (`row <- &m` read by a later generator):
    /// the array.
    root_rows: Option<crate::plan::kernel_ir::CaptureId>,
    /// The array of rows of the generator being analysed, whose variable holds a row.
    pending_row: Option<crate::plan::kernel_ir::CaptureId>,
}

impl Analyzer<'_> {
    fn top_level(
        &mut self,
        comprehension: Comprehension,
        terminal: Terminal,
        text_of_input: String,
    ) -> Option<Plan> {
        let Comprehension { head, mut branches, .. } = comprehension;
        let head = match branches.as_mut_slice() {
            [only] => nested::lets_into_head(head, &mut only.qualifiers),
            _ => head,
        };
        let head_class = self.device.class();
        let mut plan = Plan::new(terminal, text_of_input, head, head_class);
        let mut scope = Scope::default();
        let mut prelude = Vec::new();
        if branches.len() > 1 {
            self.zip(branches, &mut scope, &mut plan, &mut prelude)?;
        } else {
            let branch = branches.into_iter().next()?;
            self.qualifiers(branch.qualifiers, branch.bar, &mut scope, &mut plan, &mut prelude)?;
        }
        self.finish(&mut plan, &mut scope, &mut prelude);
        self.device.constrain(Constraint::Output(output_class(&plan)));
        plan.prelude = prelude;
        Some(plan)
    }

    /// Extracts the nested comprehensions of the head, records what the head uses, lowers it for
    /// the device, and relates the head to what the comprehension produces.
    fn finish(&mut self, plan: &mut Plan, scope: &mut Scope, prelude: &mut Vec<Prelude>) {
        let head = plan.head.expr.clone();
        let head = self.nested_in_head(head, scope, plan, prelude);
        for nested in &plan.nested {
            scope.bind_name(&nested.name, nested.var);
            plan.slots
                .push(Slot { pat: nested::ident_pattern(&nested.name), vars: vec![nested.var] });
        }
        plan.head_uses = scope.uses(&head, self.errors);
        self.nested_rows(plan, &head);
        let lowered = self.lower(scope, &head);
        if let Ok(lowered) = &lowered {
            self.device.same(lowered.class, plan.head_class);
        }
        plan.head = PlanExpr { expr: head, device: lowered };
        plan.acc_class = self.result_class(plan);
        self.reduce_operator(plan);
    }

    /// Decides whether the device can deliver the nested `par!`s of `plan`'s head: only as the
    /// whole head of the outermost `par!`, whose result is then their rows.
    fn nested_rows(&mut self, plan: &mut Plan, head: &Expr) {
        let Some(collect) =
            plan.nested.iter().find(|n| matches!(n.plan.terminal, Terminal::Collect))
        else {
            return;
        };
        let span = collect.path.span();
        let whole =
            matches!(head, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(&collect.name));
        let why = if self.nesting.is_some() {
            Some((
                "nests a `par!` in a nested comprehension, which the device cannot deliver",
                "on the device only the outermost `par!` may hold a nested `par!`",
            ))
        } else if !matches!(plan.terminal, Terminal::Collect) {
            Some((
                "reduces the rows of a nested `par!`, which the device cannot hold",
                "reduce the inner values directly, with the inner generators in the outer \
                 comprehension",
            ))
        } else if !whole || plan.nested.len() > 1 {
            Some((
                "uses a nested `par!` inside its head, which the device cannot deliver",
                "a nested `par!` runs on the device when it is the whole head, \
                 `par![par![..] | ..]`; compute the rest of the head in its own comprehension",
            ))
        } else {
            None
        };
        match why {
            Some((reason, help)) => self.not_device.push(device::not_device(span, reason, help)),
            None => plan.rows = true,
        }
    }

    /// The class of what a comprehension produces for its enclosing one: the reduction's result.
    fn result_class(&mut self, inner: &Plan) -> Class {
        let head = inner.head_class;
        match &inner.terminal {
            Terminal::Sum | Terminal::Product | Terminal::Reduce { .. } => head,
            Terminal::Count => self.device.prim(Prim::U64),
            Terminal::Any | Terminal::All => self.device.prim(Prim::Bool),
            Terminal::Min | Terminal::Max => {
                let class = self.device.class();
                self.device.constrain(Constraint::Option(class, head));
                class
            }
            // A nested `par!` gives a `Vec`, which has no device form: its class stays open.
            Terminal::Collect => self.device.class(),
        }
    }

    /// Lowers `par_reduce!`'s operator and identity for the device.
    fn reduce_operator(&mut self, plan: &mut Plan) {
        let class = plan.head_class;
        let Terminal::Reduce { op, identity, device } = &mut plan.terminal else { return };
        let scope = Scope::default();
        let mut lower = Lower::comprehension(&mut self.device, &scope, &self.vars, &self.rows);
        let lowered = (|| -> Result<ReduceOp, NotDevice> {
            let identity = lower.expr(identity)?;
            lower.ctx.same(identity.class, class);
            match generator::strip(op) {
                Expr::Closure(c) if c.inputs.len() == 2 => {
                    let a = lower.bind_param(&c.inputs[0], class)?;
                    let b = lower.bind_param(&c.inputs[1], class)?;
                    let body = lower.expr(&c.body)?;
                    lower.ctx.same(body.class, class);
                    Ok(ReduceOp { params: (a, b), body, identity })
                }
                Expr::Path(p) => match path_operator(&mut lower, p, class) {
                    Some((params, body)) => Ok(ReduceOp { params, body, identity }),
                    None => Err(device::not_device(
                        p.span(),
                        format!("the device cannot call the operator `{}`", text(p)),
                        format!(
                            "write it as a closure, `|a, b| {}(a, b)`, or mark it `#[par_fn]`",
                            text(p)
                        ),
                    )),
                },
                other => Err(device::not_device(
                    other.span(),
                    "the operator of `par_reduce!` must be a closure on the device",
                    "write it as `|a, b| ...`",
                )),
            }
        })();
        if let Err(e) = &lowered {
            self.not_device.push(e.clone());
        }
        *device = Some(Box::new(lowered));
    }

    /// A new variable named `name` of class `class`.
    fn new_var(&mut self, name: &Ident, class: Class) -> VarId {
        self.vars.push(Var { name: name.clone(), class });
        VarId(self.vars.len() as u32 - 1)
    }

    /// The slot of pattern `pat` for values of class `class`: a new variable per name, whose
    /// classes follow the pattern's tuples.
    fn bind_slot(&mut self, scope: &mut Scope, pat: Pat, class: Class) -> Slot {
        let mut vars = Vec::new();
        self.pattern_vars(&pat, class, &mut vars);
        scope.bind(&pat, &vars);
        Slot { pat, vars }
    }

    fn pattern_vars(&mut self, pat: &Pat, class: Class, vars: &mut Vec<VarId>) {
        match pat {
            Pat::Ident(p) => vars.push(self.new_var(&p.ident, class)),
            Pat::Paren(p) => self.pattern_vars(&p.pat, class, vars),
            Pat::Type(t) => self.pattern_vars(&t.pat, class, vars),
            Pat::Tuple(t) => {
                let classes: Vec<Class> = t.elems.iter().map(|_| self.device.class()).collect();
                self.device.constrain(Constraint::Tuple(class, classes.clone()));
                for (p, c) in t.elems.iter().zip(classes) {
                    self.pattern_vars(p, c, vars);
                }
            }
            // `Point { x, y: b, .. }`, `Meters(d, ..)`: the fields of a struct with
            // `#[derive(DeviceValue)]`, found by name (a tuple struct's by position).
            Pat::Struct(s) => {
                for field in &s.fields {
                    let name = crate::text::member_text(&field.member);
                    let c = self.device.class();
                    self.device.constrain(Constraint::Member(class, name, c));
                    self.pattern_vars(&field.pat, c, vars);
                }
            }
            Pat::TupleStruct(t) => {
                for (k, p) in t.elems.iter().enumerate() {
                    if matches!(p, Pat::Rest(_)) {
                        continue;
                    }
                    let c = self.device.class();
                    self.device.constrain(Constraint::Member(class, k.to_string(), c));
                    self.pattern_vars(p, c, vars);
                }
            }
            _ => {}
        }
    }

    /// The device form of `expr` in `scope`; a reason it has none is recorded.
    fn lower(&mut self, scope: &Scope, expr: &Expr) -> Result<DExpr, NotDevice> {
        let lowered =
            Lower::comprehension(&mut self.device, scope, &self.vars, &self.rows).expr(expr);
        if let Err(e) = &lowered {
            self.not_device.push(e.clone());
        }
        lowered
    }

    /// Analyses the qualifiers of one branch into steps of `plan`. At the top level
    /// (`plan.inherited == 0`) the first generator is the root, `let`s before it are evaluated
    /// once and filters before it are errors; in a nested comprehension they all see the
    /// enclosing context. `None` if there is no generator.
    fn qualifiers(
        &mut self,
        qualifiers: Vec<Qualifier>,
        bar: proc_macro2::Span,
        scope: &mut Scope,
        plan: &mut Plan,
        prelude: &mut Vec<Prelude>,
    ) -> Option<()> {
        let top = plan.inherited == 0 && plan.steps.is_empty();
        let Some(first_generator) =
            qualifiers.iter().position(|q| matches!(q, Qualifier::Generator(_)))
        else {
            let spaced = qualifiers.iter().find_map(|q| match q {
                Qualifier::Filter(expr) => spaced_arrow(expr),
                _ => None,
            });
            if let Some(e) = spaced {
                self.errors.push(e);
            } else if self.errors.is_empty() {
                // (After a syntax error, a generator that could not be parsed is the likely cause.)
                self.errors.push(error(
                    bar,
                    "a comprehension needs at least one generator",
                    "add a generator after `|`: `par![x | x <- xs, x > 0]`",
                ));
            }
            return None;
        };
        for qualifier in &qualifiers[first_generator..] {
            if let Some(pat) = qualifier.pattern() {
                scope.declare(pat);
            }
        }
        let mut row_names = row_names(&qualifiers);
        // Rows read by comprehensions nested in the head count too.
        let mut read_in_head = HashSet::new();
        nested::collections_read(&plan.head.expr, &mut read_in_head);
        for qualifier in &qualifiers {
            if let Qualifier::Generator(g) = qualifier {
                if let Pat::Ident(p) = &g.pat {
                    if read_in_head.contains(&p.ident.to_string()) {
                        row_names.insert(p.ident.to_string());
                    }
                }
            }
        }
        for (index, qualifier) in qualifiers.into_iter().enumerate() {
            let context = plan.slots.len();
            if top && index < first_generator {
                match qualifier {
                    Qualifier::Filter(expr) => {
                        self.errors.push(spaced_arrow(&expr).unwrap_or_else(|| {
                            error_spanned(
                                &expr,
                                "a filter must come after a generator",
                                "filters keep or drop the elements of the generators before them; \
                             move it after the generator whose variables it tests, e.g. \
                             `x <- xs, x > 0`",
                            )
                        }))
                    }
                    Qualifier::Let(binding) => {
                        prelude.push(Prelude::Let { pat: binding.pat, expr: binding.expr })
                    }
                    Qualifier::Generator(_) => unreachable!("before the first generator"),
                    Qualifier::Transform(t) => self.errors.push(misplaced_transform(&t)),
                }
                continue;
            }
            match qualifier {
                Qualifier::Transform(t) => self.errors.push(misplaced_transform(&t)),
                Qualifier::Generator(generator) => {
                    let qualifier_text =
                        format!("{} <- {}", text(&generator.pat), text(&generator.expr));
                    let uses = scope.uses(&generator.expr, self.errors);
                    let root = top && index == first_generator;
                    let kind = self.generator(
                        &generator.expr,
                        &qualifier_text,
                        &uses,
                        root,
                        scope,
                        prelude,
                    );
                    let (source_uses, map_uses) = split_uses(&kind, scope);
                    let rows = matches!(&generator.pat, Pat::Ident(p) if row_names.contains(&p.ident.to_string()));
                    let device = self.generator_device(&kind, root, rows, scope, &generator.expr);
                    let class = match &device {
                        Some(Ok(g)) => g.class,
                        _ => self.device.class(),
                    };
                    plan.steps.push(Step {
                        kind,
                        text: qualifier_text,
                        span: generator.expr.span(),
                        context,
                        uses,
                        map_uses,
                        source_uses,
                        device,
                    });
                    let slot = self.bind_slot(scope, generator.pat, class);
                    if let Some(capture) = self.pending_row.take() {
                        self.rows.insert(slot.vars[0], capture);
                    }
                    plan.slots.push(slot);
                }
                Qualifier::Filter(expr) => {
                    let uses = scope.uses(&expr, self.errors);
                    let qualifier_text = text(&expr);
                    let lowered = self.lower(scope, &expr);
                    if let Ok(l) = &lowered {
                        let bool_class = self.device.prim(Prim::Bool);
                        self.device.same(l.class, bool_class);
                    }
                    plan.steps.push(Step {
                        kind: StepKind::Filter(PlanExpr { device: lowered, expr: expr.clone() }),
                        text: qualifier_text,
                        span: expr.span(),
                        context,
                        uses,
                        map_uses: Vec::new(),
                        source_uses: Vec::new(),
                        device: None,
                    });
                }
                Qualifier::Let(binding) => {
                    let uses = scope.uses(&binding.expr, self.errors);
                    let qualifier_text =
                        format!("let {} = {}", text(&binding.pat), text(&binding.expr));
                    let lowered = self.lower(scope, &binding.expr);
                    let class = match &lowered {
                        Ok(l) => l.class,
                        Err(_) => self.device.class(),
                    };
                    plan.steps.push(Step {
                        kind: StepKind::Let(PlanExpr {
                            device: lowered,
                            expr: binding.expr.clone(),
                        }),
                        text: qualifier_text,
                        span: binding.expr.span(),
                        context,
                        uses,
                        map_uses: Vec::new(),
                        source_uses: Vec::new(),
                        device: None,
                    });
                    let slot = self.bind_slot(scope, binding.pat, class);
                    plan.slots.push(slot);
                }
            }
        }
        Some(())
    }

    /// The device form of a generator of kind `kind`.
    fn generator_device(
        &mut self,
        kind: &StepKind,
        root: bool,
        rows: bool,
        scope: &Scope,
        whole: &Expr,
    ) -> Option<Result<crate::plan::kernel_ir::DGenerator, NotDevice>> {
        let form = match kind {
            StepKind::Root(form) | StepKind::Product(form) | StepKind::Expand(form) => form,
            StepKind::Zip(_) => {
                let class = self.device.class();
                self.device.constrain(Constraint::Root(class));
                return Some(Ok(crate::plan::kernel_ir::DGenerator {
                    source: crate::plan::kernel_ir::DSource::Root { class },
                    maps: Vec::new(),
                    class,
                }));
            }
            // An erroneous generator, already reported.
            StepKind::Filter(_) | StepKind::Let(_) => return None,
        };
        let mut lower = Lower::comprehension(&mut self.device, scope, &self.vars, &self.rows);
        if rows {
            if let Some((generator, capture)) =
                device::generator::lower_rows(&mut lower, form, root)
            {
                if root {
                    self.root_rows = Some(capture);
                }
                self.pending_row = Some(capture);
                return Some(Ok(generator));
            }
        }
        let lowered = device::generator::lower(&mut lower, form, root, whole);
        if let Err(e) = &lowered {
            self.not_device.push(e.clone());
        }
        Some(lowered)
    }

    /// Classifies one generator (see [`generator`]). Errors leave a placeholder step, so that
    /// the analysis goes on and reports what follows.
    fn generator(
        &mut self,
        expr: &Expr,
        qualifier_text: &str,
        uses: &[VarId],
        root: bool,
        scope: &Scope,
        prelude: &mut Vec<Prelude>,
    ) -> StepKind {
        if let Some(e) = unbounded_range(expr, qualifier_text) {
            self.errors.push(e);
            return StepKind::Filter(PlanExpr {
                expr: expr.clone(),
                device: Err(placeholder(expr)),
            });
        }
        let Some(mut form) = scope.classify(expr) else {
            let message = if uses.is_empty() {
                format!("cannot read the generator `{qualifier_text}` by index")
            } else {
                let names: Vec<String> =
                    uses.iter().map(|v| self.vars[v.0 as usize].name.to_string()).collect();
                let generator = match &self.nesting {
                    Some(nested) => format!(
                        "the nested comprehension `{nested}`: its generator `{qualifier_text}`"
                    ),
                    None => format!("the generator `{qualifier_text}`"),
                };
                let verb = if self.nesting.is_some() { "" } else { ": it" };
                format!(
                    "cannot flatten {generator}{verb} depends on {}, and its size cannot be \
                     computed without building it",
                    quoted(&names)
                )
            };
            self.errors.push(error_spanned(expr, message, FLATTENABLE_FORMS));
            return StepKind::Filter(PlanExpr {
                expr: expr.clone(),
                device: Err(placeholder(expr)),
            });
        };
        if root {
            return StepKind::Root(form);
        }
        let size_dependent = form.source.has_place() || {
            let mut dependent = false;
            form.source.size_exprs(&mut |e| dependent |= !scope.deps(e).is_empty());
            dependent
        };
        // Collections are evaluated once, before the comprehension: the CPU and the device read
        // the same value.
        form.source.hoist(&mut |expr| self.hoist(expr, prelude));
        if size_dependent {
            StepKind::Expand(form)
        } else {
            StepKind::Product(form)
        }
    }

    /// Evaluates `expr` once, before the comprehension: `let name = &(expr);`.
    fn hoist(&mut self, expr: Expr, prelude: &mut Vec<Prelude>) -> Ident {
        let name = Ident::new(
            &format!("__parcomp_collection_{}", self.hoisted),
            proc_macro2::Span::mixed_site(),
        );
        self.hoisted += 1;
        // Messages about the collection name it as written (`rows`, not this name).
        let mut written = &expr;
        while let Expr::Reference(r) = generator::strip(written) {
            written = &r.expr;
        }
        self.device.hoisted.push((name.to_string(), text(generator::strip(written))));
        prelude.push(Prelude::Hoist { name: name.clone(), expr });
        name
    }
}

/// The name a generator reads its elements from, when its collection is a bare variable
/// (`v <- row`, `v <- &row`).
pub(crate) fn collection_name(expr: &Expr) -> Option<String> {
    let mut collection = generator::strip(expr);
    while let Expr::Reference(r) = collection {
        collection = generator::strip(&r.expr);
    }
    match collection {
        Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            Some(p.path.segments[0].ident.to_string())
        }
        _ => None,
    }
}

/// The names bound by a generator as a whole (`row <- &m`) that a later generator reads as its
/// collection (`v <- row`): on the device these hold a row of an array of rows of the caller.
fn row_names(qualifiers: &[Qualifier]) -> HashSet<String> {
    let mut bound = HashSet::new();
    let mut rows = HashSet::new();
    for qualifier in qualifiers {
        if let Qualifier::Generator(g) = qualifier {
            if let Some(name) = collection_name(&g.expr) {
                if bound.contains(&name) {
                    rows.insert(name);
                }
            }
            if let Pat::Ident(p) = &g.pat {
                bound.insert(p.ident.to_string());
            }
        }
    }
    rows
}

/// The class of what the comprehension's elements are (for `Output`): the head's class.
fn output_class(plan: &Plan) -> Class {
    match plan.nested.first() {
        // The rows' elements are the nested `par!`'s.
        Some(nested) if plan.rows => nested.plan.head_class,
        _ => plan.head_class,
    }
}

/// A `par_reduce!` operator given as a path: `i64::max` (a method) or a `#[par_fn]`.
fn path_operator(
    lower: &mut Lower<'_>,
    path: &syn::ExprPath,
    class: Class,
) -> Option<((DPat, DPat), DExpr)> {
    let a: Pat = syn::parse_quote!(__parcomp_a);
    let b: Pat = syn::parse_quote!(__parcomp_b);
    let pa = lower.bind_param(&a, class).ok()?;
    let _ = &pa;
    let pb = lower.bind_param(&b, class).ok()?;
    let call: Expr = syn::parse_quote!(#path(__parcomp_a, __parcomp_b));
    let body = lower.expr(&call).ok()?;
    lower.ctx.same(body.class, class);
    Some(((pa, pb), body))
}

/// The variables a generator's source and its element maps use.
fn split_uses(kind: &StepKind, scope: &Scope) -> (Vec<VarId>, Vec<VarId>) {
    let form = match kind {
        StepKind::Root(f) | StepKind::Product(f) | StepKind::Expand(f) => f,
        _ => return (Vec::new(), Vec::new()),
    };
    let mut source = Vec::new();
    form.source.size_exprs(&mut |e| {
        for v in scope.vars_in(e) {
            if !source.contains(&v) {
                source.push(v);
            }
        }
    });
    let mut current = &form.source;
    loop {
        match current {
            generator::IndexSource::StepBy { inner, .. }
            | generator::IndexSource::Rev { inner } => current = inner,
            generator::IndexSource::Place(place) => {
                if let generator::PlaceRoot::Bound(ident) = &place.root {
                    if let Some(v) = scope.lookup(&ident.to_string()) {
                        if !source.contains(&v) {
                            source.push(v);
                        }
                    }
                }
                break;
            }
            _ => break,
        }
    }
    let mut maps = Vec::new();
    for f in &form.maps {
        for v in scope.vars_in(f) {
            if !maps.contains(&v) {
                maps.push(v);
            }
        }
    }
    (source, maps)
}

/// The device form of a step that is only a placeholder for an error already reported.
fn placeholder(expr: &Expr) -> NotDevice {
    device::not_device(expr.span(), "has an error", "fix the error first")
}

impl Plan {
    /// An empty top-level plan.
    pub(crate) fn new(terminal: Terminal, text: String, head: Expr, head_class: Class) -> Plan {
        Plan {
            terminal,
            text,
            prelude: Vec::new(),
            slots: Vec::new(),
            inherited: 0,
            steps: Vec::new(),
            nested: Vec::new(),
            head: PlanExpr { expr: head, device: Err(placeholder(&syn::parse_quote!(()))) },
            head_uses: Vec::new(),
            rows: false,
            head_class,
            acc_class: head_class,
        }
    }
}

/// An error for a generator over a range without an end (`x..`) or a start (`..n`), looking
/// through `.map(f)`, `.step_by(k)` and `.rev()`: it has no size (or no first element).
fn unbounded_range(expr: &Expr, qualifier_text: &str) -> Option<syn::Error> {
    let range = match generator::strip(expr) {
        Expr::MethodCall(call)
            if matches!(
                (call.method.to_string().as_str(), call.args.len()),
                ("map", 1) | ("step_by", 1) | ("rev", 0)
            ) =>
        {
            return unbounded_range(&call.receiver, qualifier_text);
        }
        Expr::Range(range) if range.start.is_none() || range.end.is_none() => range,
        _ => return None,
    };
    let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
    let dots = if inclusive { "..=" } else { ".." };
    let (message, help) = match (&range.start, &range.end) {
        (Some(start), None) => (
            format!(
                "the range `{}` has no end, so the generator `{qualifier_text}` would never end",
                text(range)
            ),
            format!("give the range an end: `{}..n` or `{}..=n`", text(start), text(start)),
        ),
        (None, Some(end)) => (
            format!("the range `{}` has no start, so it cannot be a generator", text(range)),
            format!("give the range a start: `0{dots}{}`", text(end)),
        ),
        _ => (
            format!("the range `{}` has no start and no end", text(range)),
            "a generator over a range needs both bounds: `a..b` or `a..=b`".to_string(),
        ),
    };
    Some(error_spanned(range, message, help))
}

/// For a filter `x < -xs` (a comparison with a negation), the error saying that `<-` must be
/// written without a space: most likely a generator was meant.
fn spaced_arrow(expr: &Expr) -> Option<syn::Error> {
    let Expr::Binary(binary) = generator::strip(expr) else { return None };
    let syn::BinOp::Lt(lt) = &binary.op else { return None };
    let Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(minus), expr: collection, .. }) =
        &*binary.right
    else {
        return None;
    };
    let pattern = text(&binary.left);
    let collection = text(collection);
    Some(error_spanned(
        quote::quote!(#lt #minus),
        format!("`{pattern} < -{collection}` is a comparison, not a generator"),
        format!("write `<-` without a space between `<` and `-`: `{pattern} <- {collection}`"),
    ))
}

fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.len() {
        0 => "no variable".into(),
        1 => quoted[0].clone(),
        n => format!("{} and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

/// A transform where the comprehension cannot be cut into parts: in a nested comprehension or
/// a parallel branch (at the top level, `crate::parts` cuts it before the analysis).
fn misplaced_transform(t: &crate::syntax::Transform) -> syn::Error {
    let (keyword, span) = t.kind.keyword();
    error(
        span,
        format!("`{keyword}` is not supported in a nested comprehension or a parallel branch"),
        format!(
            "`{keyword}` acts on all the elements of a top-level comprehension with one branch; \
             compute the inner comprehension first (`let sorted = par![...]`) and use its result"
        ),
    )
}

#[cfg(test)]
mod tests {
    use crate::test_support::errors;
    use quote::quote;

    #[test]
    fn ranges_without_a_bound_are_errors_not_panics() {
        for (input, message, help) in [
            (
                quote!(n | n <- 1..),
                "the range `1..` has no end, so the generator `n <- 1..` would never end",
                "`1..n` or `1..=n`",
            ),
            (quote!((x, y) | x <- 0..9, y <- x..), "the range `x..` has no end", "`x..n`"),
            (quote!(x | x <- (0..).map(|i| i * 2)), "the range `0..` has no end", "`0..n`"),
            (quote!(x | x <- ..n), "the range `..n` has no start", "`0..n`"),
            (quote!(x | x <- ..=n), "the range `..=n` has no start", "`0..=n`"),
        ] {
            let errors = errors(input);
            assert_eq!(errors.len(), 1, "{errors:#?}");
            assert!(errors[0].contains(message), "{errors:#?}");
            assert!(errors[0].contains(help), "{errors:#?}");
        }
    }

    #[test]
    fn a_spaced_arrow_is_explained() {
        for input in [quote!(x | x < -xs), quote!((x, y) | x < - xs, y <- ys)] {
            assert_eq!(
                errors(input),
                ["`x < -xs` is a comparison, not a generator\n= help: write `<-` without a space \
                  between `<` and `-`: `x <- xs`"]
            );
        }
    }

    #[test]
    fn no_generator() {
        let errors = errors(quote!(1 | enabled));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("a comprehension needs at least one generator"));
    }

    #[test]
    fn a_generator_that_cannot_be_parsed_is_not_also_reported_missing() {
        assert_eq!(
            errors(quote!(x | x <-)),
            ["expected the collection to draw from after `<-`\n= help: a generator is written \
              `PAT <- EXPR`, e.g. `x <- 0..n` or `v <- &values`"]
        );
    }

    #[test]
    fn several_errors_are_reported_together() {
        let errors = errors(quote!((n, m) | mut n <- ns, m <- nbrs(n), w > 0, w <- 0..m));
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(errors[0].starts_with("`mut` and `ref` are not allowed"));
        assert!(
            errors[1].starts_with("cannot flatten the generator `m <- nbrs(n)`: it depends on `n`")
        );
        assert!(errors[2].starts_with("`w` is used before the qualifier that binds it"));
    }
}
