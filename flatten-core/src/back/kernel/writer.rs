//! The kernel writer: device expressions and comprehension levels as kernel-dialect C.
//!
//! Expressions are written as C expressions where C evaluates them as Rust does — operands
//! first, `?:`, `&&` and `||` evaluating only what is selected — and as statements where C
//! has no expression for the construct (blocks with `let`, `match`): a value then goes into a
//! temporary (`pc_v3`) set by `if` statements, so a division in a branch not taken never runs.

use super::keywords;
use super::ops;
use super::types::{self, class, ty};
use super::Gather;
use crate::plan::kernel_ir::{
    ArmPattern, CaptureId, Class, DExpr, DGenerator, DKind, DMap, DPat, DSource, DStmt, LocalId,
    PlaceStep, VarId,
};
use crate::plan::{Compiled, Var};
use parcomp_contract::FaultCode;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// C statements being written, indented.
#[derive(Default)]
pub(crate) struct Body {
    lines: Vec<String>,
    indent: usize,
}

impl Body {
    pub(crate) fn new(indent: usize) -> Self {
        Body { lines: Vec::new(), indent }
    }

    pub(crate) fn line(&mut self, line: impl AsRef<str>) {
        self.lines.push(format!("{}{}", "  ".repeat(self.indent), line.as_ref()));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Appends `other`'s lines (written one level deeper than `self`).
    pub(crate) fn append(&mut self, other: Body) {
        self.lines.extend(other.lines);
    }

    /// Appends `text`'s lines as they are (written by [`Self::text`] of a body as deep).
    pub(crate) fn append_text(&mut self, text: &str) {
        self.lines.extend(text.lines().map(str::to_string));
    }

    pub(crate) fn nested(&self) -> Body {
        Body::new(self.indent + 1)
    }

    /// An empty body at the same depth.
    fn sibling(&self) -> Body {
        Body::new(self.indent)
    }

    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            let _ = writeln!(out, "{line}");
        }
        out
    }
}

/// The C names of variables and locals: the Rust name when it is free, else renamed.
pub(crate) struct Names {
    used: HashSet<String>,
    vars: HashMap<VarId, String>,
    locals: HashMap<LocalId, String>,
    temps: u32,
}

impl Names {
    pub(crate) fn new() -> Self {
        Names { used: HashSet::new(), vars: HashMap::new(), locals: HashMap::new(), temps: 0 }
    }

    fn fresh(&mut self, wanted: &str) -> String {
        let base = keywords::ascii(wanted);
        // A name reserved by its prefix (`_X`, `__x`, parcomp's `pc_`) stays reserved whatever
        // suffix it gets: it gets a prefix instead, without leading underscores (C++ reserves
        // every name with a double underscore).
        let reserved_prefix = |b: &str| {
            b.starts_with('_') || b.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("pc"))
        };
        let base = if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            format!("v{base}")
        } else if reserved_prefix(&base) {
            match base.trim_start_matches('_') {
                "" => "v".to_string(),
                rest => format!("v_{rest}"),
            }
        } else {
            base
        };
        let mut name = base.clone();
        let mut n = 1;
        while keywords::is_reserved(&name) || self.used.contains(&name) {
            name = format!("{}_{n}", base.trim_end_matches('_'));
            n += 1;
        }
        self.used.insert(name.clone());
        name
    }

    pub(crate) fn var(&mut self, var: VarId, vars: &[Var]) -> String {
        if let Some(name) = self.vars.get(&var) {
            return name.clone();
        }
        let raw = vars[var.0 as usize].name.to_string();
        // The results of nested comprehensions have hygienic names of the macro's.
        let wanted = raw.strip_prefix("__parcomp_").map_or(raw.clone(), |s| s.to_string());
        let name = self.fresh(&wanted);
        self.vars.insert(var, name.clone());
        name
    }

    pub(crate) fn local(&mut self, local: LocalId, names: &[(String, Class)]) -> String {
        if let Some(name) = self.locals.get(&local) {
            return name.clone();
        }
        let wanted = names.get(local.0 as usize).map_or("local", |(n, _)| n.as_str());
        let wanted = wanted.strip_prefix("__parcomp_").unwrap_or(wanted);
        let name = self.fresh(wanted);
        self.locals.insert(local, name.clone());
        name
    }

    pub(crate) fn temp(&mut self) -> String {
        self.temps += 1;
        format!("pc_v{}", self.temps)
    }
}

/// Writes expressions of one comprehension (or of one `#[par_fn]`).
pub(crate) struct ExprWriter<'c> {
    vars: &'c [Var],
    locals: &'c [(String, Class)],
    pub(crate) names: Names,
    /// In a `#[par_fn]`, fault sites are numbered from `PCF_FAULT_BASE`, which the runtime
    /// defines when it puts the function into a program.
    par_fn: bool,
    /// While writing the positions of a level whose generator reads the rows of this capture
    /// (`LevelManifest::rows_of`), with `pc_j` the position: its element is element `pc_j` of
    /// the rows' values when the kernel's `pc_rows_direct` says so.
    pub(crate) direct_rows: Option<u32>,
    /// The captured collections the expressions written so far read by an index of their own
    /// (`x[c]`, `m[r][i]`), with the class of the elements read: for the runtime's traffic
    /// model (`LevelManifest::gathers`). The level writer empties it before each level kernel.
    pub(crate) gathers: Vec<Gather>,
}

impl<'c> ExprWriter<'c> {
    /// Notes a read of captured collection `capture` by an index of the expression's own.
    fn gathered(&mut self, capture: u32, class: Class) {
        let gather = Gather { capture, class };
        if !self.gathers.contains(&gather) {
            self.gathers.push(gather);
        }
    }

    pub(crate) fn new(compiled: &'c Compiled) -> Self {
        ExprWriter {
            vars: &compiled.vars,
            locals: &compiled.device.locals,
            names: Names::new(),
            par_fn: false,
            direct_rows: None,
            gathers: Vec::new(),
        }
    }

    /// A writer for the body of a `#[par_fn]` whose locals are `locals`.
    pub(crate) fn for_par_fn(locals: &'c [(String, Class)]) -> Self {
        ExprWriter {
            vars: &[],
            locals,
            names: Names::new(),
            par_fn: true,
            direct_rows: None,
            gathers: Vec::new(),
        }
    }

    /// How a fault site is written.
    fn site(&self, site: crate::plan::kernel_ir::FaultSite) -> String {
        if self.par_fn {
            format!("(PCF_FAULT_BASE + {}u)", site.0)
        } else {
            format!("{}u", site.0)
        }
    }

    pub(crate) fn var_name(&mut self, var: VarId) -> String {
        self.names.var(var, self.vars)
    }

    pub(crate) fn var_class(&self, var: VarId) -> Class {
        self.vars[var.0 as usize].class
    }

    pub(crate) fn local_name(&mut self, local: LocalId) -> String {
        self.names.local(local, self.locals)
    }

    /// Declares `name` of class `c` with `value`.
    fn declare(&mut self, body: &mut Body, c: Class, name: &str, value: &str) {
        body.line(format!("{} {name} = {value};", ty(c)));
    }

    /// Writes the statements `e` needs into `body` and returns a C expression of its value.
    pub(crate) fn expr(&mut self, e: &DExpr, body: &mut Body) -> String {
        match &e.kind {
            DKind::Lit(lit) => types::literal(lit, e.class),
            DKind::Var(v) => self.var_name(*v),
            DKind::Local(l) => self.local_name(*l),
            DKind::Capture(c) => capture_scalar(e.class, *c),
            DKind::Unit => format!("PC_OP(make, {})()", class(e.class)),
            DKind::Unary(op, a) => {
                let sa = self.expr(a, body);
                ops::unary(*op, a.class, &sa)
            }
            DKind::Binary(op, a, b, site) => {
                let parts = self.operands(&[a, b], body);
                let (sa, sb) = (parts[0].clone(), parts[1].clone());
                match op {
                    crate::plan::kernel_ir::BinOp::Shl | crate::plan::kernel_ir::BinOp::Shr => {
                        let amount = ops::shift_amount(b.class, &sb);
                        ops::binary(*op, a.class, site.map(|s| self.site(s)), &sa, &amount)
                    }
                    _ => ops::binary(*op, a.class, site.map(|s| self.site(s)), &sa, &sb),
                }
            }
            DKind::And(a, b) | DKind::Or(a, b) => {
                let and = matches!(e.kind, DKind::And(..));
                let sa = self.expr(a, body);
                let mut rhs = body.nested();
                let sb = self.expr(b, &mut rhs);
                let c_op = if and { "&&" } else { "||" };
                if rhs.is_empty() {
                    return format!("((pc_bool)({sa} {c_op} {sb}))");
                }
                let t = self.names.temp();
                body.line(format!("pc_bool {t} = {sa};"));
                body.line(if and { format!("if ({t}) {{") } else { format!("if (!{t}) {{") });
                body.append(rhs);
                body.line(format!("  {t} = {sb};"));
                body.line("}");
                t
            }
            DKind::Cast(a) => {
                let sa = self.expr(a, body);
                ops::cast(a.class, e.class, &sa)
            }
            DKind::Tuple(items) => {
                let items: Vec<&DExpr> = items.iter().collect();
                let parts = self.operands(&items, body);
                format!("PC_OP(make, {})({})", class(e.class), parts.join(", "))
            }
            DKind::Field(base, n) => {
                let sb = self.expr(base, body);
                format!("({sb}).f{n}")
            }
            DKind::Zero => format!("PC_OP(zero, {})()", class(e.class)),
            // The runtime defines `PC_Cn_V_<variant>` beside `PC_Cn` for a class solved to an
            // enum (`program::TypePrelude::class_defines`).
            DKind::Variant(name) => format!("{}_V_{name}", class(e.class)),
            DKind::ArrayIndex(..)
            | DKind::ArrayLen(_)
            | DKind::Array(_)
            | DKind::Repeat(_)
            | DKind::ArrayStore { .. } => self.array_expr(e, body),
            DKind::Member(base, name) => {
                let sb = self.expr(base, body);
                format!("({sb}).{}", parcomp_contract::member_name(name))
            }
            DKind::Struct(fields, base) => {
                // A temporary of the struct's type, its fields assigned one by one: the macro
                // does not know their order, the runtime's declaration names them. The fields
                // are evaluated as written, then the base, as in Rust.
                let values: Vec<String> = fields.iter().map(|(_, v)| self.expr(v, body)).collect();
                let t = self.names.temp();
                match base {
                    Some(base) => {
                        let sb = self.expr(base, body);
                        self.declare(body, e.class, &t, &sb);
                    }
                    None => body.line(format!(
                        "{} {t} = PC_OP(zero, {})();",
                        ty(e.class),
                        class(e.class)
                    )),
                }
                for ((name, _), value) in fields.iter().zip(values) {
                    body.line(format!("{t}.{} = {value};", parcomp_contract::member_name(name)));
                }
                t
            }
            DKind::If(c, a, b) => {
                let sc = self.expr(c, body);
                let mut then = body.nested();
                let sa = self.expr(a, &mut then);
                let mut otherwise = body.nested();
                let sb = self.expr(b, &mut otherwise);
                if then.is_empty() && otherwise.is_empty() {
                    return format!("({sc} ? {sa} : {sb})");
                }
                let t = self.names.temp();
                body.line(format!("{} {t};", ty(e.class)));
                body.line(format!("if ({sc}) {{"));
                body.append(then);
                body.line(format!("  {t} = {sa};"));
                body.line("} else {");
                body.append(otherwise);
                body.line(format!("  {t} = {sb};"));
                body.line("}");
                t
            }
            DKind::Block(stmts, value) => {
                for stmt in stmts {
                    match stmt {
                        DStmt::Let(pat, v) => {
                            let sv = self.expr(v, body);
                            self.bind(pat, v.class, &sv, body);
                        }
                        DStmt::Expr(v) => {
                            let sv = self.expr(v, body);
                            body.line(format!("(void)({sv});"));
                        }
                        DStmt::Assign(local, v) => {
                            let sv = self.expr(v, body);
                            let name = self.local_name(*local);
                            body.line(format!("{name} = {sv};"));
                        }
                    }
                }
                self.expr(value, body)
            }
            DKind::Match(scrutinee, arms) => self.match_expr(e.class, scrutinee, arms, body),
            DKind::Method(method, args, site) => {
                let refs: Vec<&DExpr> = args.iter().collect();
                let parts = self.operands(&refs, body);
                let receiver = args[0].class;
                match method.op {
                    "unwrap_or" => format!("(({0}).f0 ? ({0}).f1 : {1})", parts[0], parts[1]),
                    "is_some" => format!("(({}).f0)", parts[0]),
                    "is_none" => format!("((pc_bool)!({}).f0)", parts[0]),
                    "unwrap" => {
                        let t = self.names.temp();
                        self.declare(body, receiver, &t, &parts[0]);
                        let site = site.expect("unwrap has a fault site");
                        body.line(format!(
                            "if (PC_UNLIKELY(!{t}.f0)) pc_record_fault(pc_fault, {}, {}, 0, 0);",
                            FaultCode::UnwrapNone.c_name(),
                            self.site(site)
                        ));
                        format!("{t}.f1")
                    }
                    op => {
                        let f = ops::op(op, receiver);
                        match site {
                            Some(site) => {
                                format!("{f}(pc_fault, {}, {})", self.site(*site), parts.join(", "))
                            }
                            None => format!("{f}({})", parts.join(", ")),
                        }
                    }
                }
            }
            DKind::Index(capture, index, site) => {
                self.gathered(capture.0, e.class);
                let si = self.expr(index, body);
                format!(
                    "PC_CAP_INDEX({}, {}, {}, {si})",
                    class(e.class),
                    capture.0,
                    self.site(*site)
                )
            }
            DKind::Len(capture) => format!("PC_CAP_LEN({})", capture.0),
            DKind::RowIndex(capture, row, index, site) => {
                self.gathered(capture.0, e.class);
                let parts = self.operands(&[row, index], body);
                format!(
                    "PC_CAP_ROW_INDEX({}, {}, {}, {}, {})",
                    class(e.class),
                    capture.0,
                    self.site(*site),
                    parts[0],
                    parts[1]
                )
            }
            DKind::RowLen(capture, row, site) => {
                let r = self.expr(row, body);
                format!("PC_CAP_ROW_LEN({}, {}, {r})", capture.0, self.site(*site))
            }
            DKind::MethodOrCall(method, f, args, site) => {
                // The struct's `#[par_fn]` method when the runtime defines `PC_FN_k`, else the
                // numeric method.
                let refs: Vec<&DExpr> = args.iter().collect();
                let parts = self.operands(&refs, body).join(", ");
                let t = self.names.temp();
                body.line(format!("{} {t};", ty(e.class)));
                body.line(format!("#ifdef PC_FN_{}", f.0));
                body.line(format!("{t} = PC_FN_{}(pc_fault, {parts});", f.0));
                body.line("#else");
                let op = ops::op(method.op, args[0].class);
                match site {
                    Some(site) => {
                        body.line(format!("{t} = {op}(pc_fault, {}, {parts});", self.site(*site)))
                    }
                    None => body.line(format!("{t} = {op}({parts});")),
                }
                body.line("#endif");
                t
            }
            DKind::LenOrCall(f, receiver, is_empty) => {
                // The struct's `#[par_fn]` method when the runtime defines `PC_FN_k`, else the
                // array's length (the receiver is an array then: nothing else has `len()`).
                let sr = self.expr(receiver, body);
                let t = self.names.temp();
                body.line(format!("{} {t};", ty(e.class)));
                body.line(format!("#ifdef PC_FN_{}", f.0));
                body.line(format!("{t} = PC_FN_{}(pc_fault, {sr});", f.0));
                body.line("#else");
                body.line(format!("(void)({sr});"));
                let len = format!("PC_OP(len, {})()", class(receiver.class));
                if *is_empty {
                    body.line(format!("{t} = (pc_bool)({len} == 0);"));
                } else {
                    body.line(format!("{t} = {len};"));
                }
                body.line("#endif");
                t
            }
            DKind::Call(f, args) => {
                let refs: Vec<&DExpr> = args.iter().collect();
                let mut parts = vec!["pc_fault".to_string()];
                parts.extend(self.operands(&refs, body));
                format!("PC_FN_{}({})", f.0, parts.join(", "))
            }
            DKind::While(cond, loop_body) => {
                // `for (;;)`, so that `continue` tests the condition again.
                body.line("for (;;) {");
                let mut inner = body.nested();
                let c = self.expr(cond, &mut inner);
                inner.line(format!("if (!({c})) break;"));
                let v = self.expr(loop_body, &mut inner);
                inner.line(format!("(void)({v});"));
                body.append(inner);
                body.line("}");
                format!("PC_OP(make, {})()", class(e.class))
            }
            DKind::For { local, start, end, inclusive, body: loop_body } => {
                let parts = self.operands(&[start, end], body);
                let c = start.class;
                let i = self.local_name(*local);
                let last = self.names.temp();
                body.line(format!("{} {last} = {};", ty(c), parts[1]));
                // The step is the range's next element (`range_at`: past the surrogates for a
                // range of `char`).
                if *inclusive {
                    // `i == last` is tested before the step, so the step past an end of MAX
                    // (which wraps) is never used.
                    let done = self.names.temp();
                    body.line(format!(
                        "pc_bool {done} = !PC_OP(le, {0})({1}, {last});",
                        class(c),
                        parts[0]
                    ));
                    body.line(format!(
                        "for ({} {i} = {}; !{done}; {done} = PC_OP(eq, {2})({i}, {last}), {i} = PC_OP(range_at, {2})({i}, 1)) {{",
                        ty(c),
                        parts[0],
                        class(c)
                    ));
                } else {
                    body.line(format!(
                        "for ({} {i} = {}; PC_OP(lt, {2})({i}, {last}); {i} = PC_OP(range_at, {2})({i}, 1)) {{",
                        ty(c),
                        parts[0],
                        class(c)
                    ));
                }
                let mut inner = body.nested();
                let v = self.expr(loop_body, &mut inner);
                inner.line(format!("(void)({v});"));
                body.append(inner);
                body.line("}");
                format!("PC_OP(make, {})()", class(e.class))
            }
            DKind::Break => {
                body.line("break;");
                format!("PC_OP(zero, {})()", class(e.class))
            }
            DKind::Continue => {
                body.line("continue;");
                format!("PC_OP(zero, {})()", class(e.class))
            }
            DKind::Return(value) => {
                let v = self.expr(value, body);
                body.line(format!("return {v};"));
                format!("PC_OP(zero, {})()", class(e.class))
            }
            DKind::Never => format!("PC_OP(zero, {})()", class(e.class)),
        }
    }

    /// The values of `exprs`, in order. When an operand needs statements, the operands before
    /// it are evaluated into temporaries first, so they see what Rust's left-to-right order
    /// gives them (`x + { x = 1; 2 }` reads the old `x`).
    fn operands(&mut self, exprs: &[&DExpr], body: &mut Body) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(exprs.len());
        for (k, e) in exprs.iter().enumerate() {
            let mut sub = body.sibling();
            let value = self.expr(e, &mut sub);
            if !sub.is_empty() {
                for (j, earlier) in out.iter_mut().enumerate() {
                    let constant = earlier.starts_with("PC_ILIT(")
                        || earlier.starts_with("PC_FLIT(")
                        || earlier.starts_with("((pc_bool)");
                    if !constant && !earlier.starts_with("pc_v") {
                        let t = self.names.temp();
                        body.line(format!("{} {t} = {earlier};", ty(exprs[j].class)));
                        *earlier = t;
                    }
                }
            }
            let _ = k;
            body.append(sub);
            out.push(value);
        }
        out
    }

    /// An array node (see `DKind::ArrayIndex` and the rest): an array is a C struct whose
    /// member `a` is a C array of its elements, `PC_OP(len, class)()` its length (see the
    /// runtime's `program.rs`).
    fn array_expr(&mut self, e: &DExpr, body: &mut Body) -> String {
        match &e.kind {
            DKind::ArrayIndex(array, index, site) => {
                let parts = self.operands(&[array, index], body);
                let held = self.held(array.class, &parts[0], body);
                // In parentheses: not a temporary's name, so `operands` holds the element in
                // one before a later operand's statements run (its check comes first).
                match site {
                    Some(site) => format!(
                        "({held}.a[pc_index(pc_fault, {}, {}, PC_OP(len, {})())])",
                        self.site(*site),
                        parts[1],
                        class(array.class)
                    ),
                    None => format!("({held}.a[{}])", parts[1]),
                }
            }
            DKind::ArrayLen(array) => {
                let sa = self.expr(array, body);
                if !is_name(&sa) {
                    body.line(format!("(void)({sa});"));
                }
                format!("PC_OP(len, {})()", class(array.class))
            }
            DKind::Array(items) => {
                if items.is_empty() {
                    return format!("PC_OP(zero, {})()", class(e.class));
                }
                let items: Vec<&DExpr> = items.iter().collect();
                let parts = self.operands(&items, body);
                let t = self.names.temp();
                body.line(format!("{} {t};", ty(e.class)));
                for (k, part) in parts.iter().enumerate() {
                    body.line(format!("{t}.a[{k}] = {part};"));
                }
                t
            }
            DKind::Repeat(value) => {
                let sv = self.expr(value, body);
                let held = self.held(value.class, &sv, body);
                let t = self.names.temp();
                let j = self.names.temp();
                self.declare(body, e.class, &t, &format!("PC_OP(zero, {})()", class(e.class)));
                body.line(format!(
                    "for (pc_u64 {j} = 0; {j} < PC_OP(len, {})(); {j}++) {t}.a[{j}] = {held};",
                    class(e.class)
                ));
                t
            }
            DKind::ArrayStore { local, path, value } => {
                // The value first, then the place, each index checked in order in its own
                // statement (C does not order the subscripts of one expression).
                let sv = self.expr(value, body);
                let sv = self.held(value.class, &sv, body);
                let mut place = self.local_name(*local);
                for step in path {
                    match step {
                        PlaceStep::Index(index, array, site) => {
                            let si = self.expr(index, body);
                            let k = self.names.temp();
                            body.line(format!(
                                "pc_u64 {k} = pc_index(pc_fault, {}, {si}, PC_OP(len, {})());",
                                self.site(*site),
                                class(*array)
                            ));
                            place = format!("{place}.a[{k}]");
                        }
                        PlaceStep::Member(name) => {
                            place = format!("{place}.{}", parcomp_contract::member_name(name));
                        }
                        PlaceStep::Field(n) => place = format!("{place}.f{n}"),
                    }
                }
                body.line(format!("{place} = {sv};"));
                format!("PC_OP(make, {})()", class(e.class))
            }
            _ => unreachable!("not an array node"),
        }
    }

    /// `value` (of class `c`) as a name: itself when it is one, else a new temporary holding it
    /// (a member of a C struct that is not a variable is read through one, and a value copied
    /// many times is evaluated once).
    fn held(&mut self, c: Class, value: &str, body: &mut Body) -> String {
        if is_name(value) {
            return value.to_string();
        }
        let t = self.names.temp();
        self.declare(body, c, &t, value);
        t
    }

    /// Binds the locals of `pat` to `value` (of class `c`).
    pub(crate) fn bind(&mut self, pat: &DPat, c: Class, value: &str, body: &mut Body) {
        match pat {
            DPat::Wild => {}
            DPat::Bind(local) => {
                let name = self.local_name(*local);
                self.declare(body, c, &name, value);
            }
            DPat::Tuple(items) => {
                let t = self.names.temp();
                self.declare(body, c, &t, value);
                for (k, item) in items.iter().enumerate() {
                    self.bind_field(item, &format!("{t}.f{k}"), body);
                }
            }
            DPat::Struct(fields) => {
                let t = self.names.temp();
                self.declare(body, c, &t, value);
                for (name, item) in fields {
                    let member = parcomp_contract::member_name(name);
                    self.bind_field(item, &format!("{t}.{member}"), body);
                }
            }
            DPat::Array(items) => {
                let t = self.names.temp();
                self.declare(body, c, &t, value);
                for (k, item) in items.iter().enumerate() {
                    self.bind_field(item, &format!("{t}.a[{k}]"), body);
                }
            }
        }
    }

    /// Binds a pattern whose class the writer does not know by name: the C compiler infers
    /// nothing, so tuples are taken apart field by field and names get `PC_FIELD` types.
    fn bind_field(&mut self, pat: &DPat, value: &str, body: &mut Body) {
        match pat {
            DPat::Wild => {}
            DPat::Bind(local) => {
                let name = self.local_name(*local);
                let c = self.local_class(*local);
                self.declare(body, c, &name, value);
            }
            DPat::Tuple(items) => {
                for (k, item) in items.iter().enumerate() {
                    self.bind_field(item, &format!("({value}).f{k}"), body);
                }
            }
            DPat::Struct(fields) => {
                for (name, item) in fields {
                    let member = parcomp_contract::member_name(name);
                    self.bind_field(item, &format!("({value}).{member}"), body);
                }
            }
            DPat::Array(items) => {
                for (k, item) in items.iter().enumerate() {
                    self.bind_field(item, &format!("({value}).a[{k}]"), body);
                }
            }
        }
    }

    fn local_class(&self, local: LocalId) -> Class {
        self.locals.get(local.0 as usize).expect("every local has a class").1
    }

    /// The C condition that `value`, of class `c`, matches `pattern`; the pattern's values are
    /// evaluated into `body`. `1` for a pattern that matches any value.
    fn pattern_condition(
        &mut self,
        pattern: &ArmPattern,
        value: &str,
        c: Class,
        body: &mut Body,
    ) -> String {
        match pattern {
            ArmPattern::Value(v) => {
                let sv = self.expr(v, body);
                format!("PC_OP(eq, {})({value}, {sv})", class(c))
            }
            ArmPattern::Range(lo, hi, inclusive) => {
                let mut parts = Vec::new();
                if let Some(lo) = lo {
                    let sl = self.expr(lo, body);
                    parts.push(format!("PC_OP(ge, {})({value}, {sl})", class(c)));
                }
                if let Some(hi) = hi {
                    let sh = self.expr(hi, body);
                    let op = if *inclusive { "le" } else { "lt" };
                    parts.push(format!("PC_OP({op}, {})({value}, {sh})", class(c)));
                }
                if parts.is_empty() {
                    "1".into()
                } else {
                    parts.join(" && ")
                }
            }
            // An `Option`'s flag is its field f0, its value f1 (see `is_none` above).
            ArmPattern::None => format!("!({value}).f0"),
            ArmPattern::Some(inner, alternatives) => {
                let field = format!("({value}).f1");
                match self.any_condition(alternatives, &field, *inner, body) {
                    Some(matches) => format!("({value}).f0 && ({matches})"),
                    None => format!("({value}).f0"),
                }
            }
            ArmPattern::Tuple(fields) => {
                let mut parts = Vec::new();
                for (k, (fc, alternatives)) in fields.iter().enumerate() {
                    let field = format!("({value}).f{k}");
                    if let Some(matches) = self.any_condition(alternatives, &field, *fc, body) {
                        parts.push(format!("({matches})"));
                    }
                }
                if parts.is_empty() {
                    "1".into()
                } else {
                    parts.join(" && ")
                }
            }
        }
    }

    /// The C condition that `value` matches one of `alternatives`; `None` when it matches any
    /// value (no alternatives, or one that always matches).
    fn any_condition(
        &mut self,
        alternatives: &[ArmPattern],
        value: &str,
        c: Class,
        body: &mut Body,
    ) -> Option<String> {
        let conditions: Vec<String> =
            alternatives.iter().map(|a| self.pattern_condition(a, value, c, body)).collect();
        if conditions.is_empty() || conditions.iter().any(|c| c == "1") {
            return None;
        }
        Some(conditions.iter().map(|c| format!("({c})")).collect::<Vec<_>>().join(" || "))
    }

    fn match_expr(
        &mut self,
        c: Class,
        scrutinee: &DExpr,
        arms: &[crate::plan::kernel_ir::DArm],
        body: &mut Body,
    ) -> String {
        let s = self.expr(scrutinee, body);
        let sc = self.names.temp();
        self.declare(body, scrutinee.class, &sc, &s);
        let result = self.names.temp();
        let done = self.names.temp();
        body.line(format!("{} {result};", ty(c)));
        body.line(format!("int {done} = 0;"));
        for arm in arms {
            let mut pattern_body = body.nested();
            let conditions: Vec<String> = arm
                .alternatives
                .iter()
                .map(|a| self.pattern_condition(a, &sc, scrutinee.class, &mut pattern_body))
                .collect();
            body.append(pattern_body);
            // An arm that always matches (a wildcard, a binding, an open range) tests only
            // whether an earlier arm matched: no `&& (1)` for the compiler to warn about.
            if conditions.is_empty() || conditions.iter().any(|c| c == "1") {
                body.line(format!("if (!{done}) {{"));
            } else {
                let condition =
                    conditions.iter().map(|c| format!("({c})")).collect::<Vec<_>>().join(" || ");
                body.line(format!("if (!{done} && ({condition})) {{"));
            }
            let mut inner = body.nested();
            if let Some(bind) = arm.bind {
                let name = self.local_name(bind);
                self.declare(&mut inner, scrutinee.class, &name, &sc);
            }
            // The names a tuple or `Some` pattern binds: the fields they stand for.
            for (local, c, path) in &arm.fields {
                let name = self.local_name(*local);
                let value = path.iter().fold(sc.clone(), |v, k| format!("({v}).f{k}"));
                self.declare(&mut inner, *c, &name, &value);
            }
            match &arm.guard {
                Some(guard) => {
                    let sg = self.expr(guard, &mut inner);
                    inner.line(format!("if ({sg}) {{"));
                    let mut arm_body = inner.nested();
                    let value = self.expr(&arm.body, &mut arm_body);
                    inner.append(arm_body);
                    inner.line(format!("  {result} = {value};"));
                    inner.line(format!("  {done} = 1;"));
                    inner.line("}");
                }
                None => {
                    let value = self.expr(&arm.body, &mut inner);
                    inner.line(format!("{result} = {value};"));
                    inner.line(format!("{done} = 1;"));
                }
            }
            body.append(inner);
            body.line("}");
        }
        result
    }

    /// The number of elements of `source` (a `pc_u64`).
    pub(crate) fn source_size(&mut self, source: &DSource, body: &mut Body) -> String {
        match source {
            DSource::Range { start, end, inclusive, class: c, fault } => {
                let s = self.expr(start, body);
                let e = self.expr(end, body);
                if *inclusive {
                    format!(
                        "PC_OP(range_len_incl, {})(pc_fault, {}, {s}, {e})",
                        class(*c),
                        self.site(*fault)
                    )
                } else {
                    format!("PC_OP(range_len, {})({s}, {e})", class(*c))
                }
            }
            DSource::StepBy { inner, step, fault } => {
                let n = self.source_size(inner, body);
                let k = self.expr(step, body);
                format!("pc_step_len(pc_fault, {}, {n}, {k})", self.site(*fault))
            }
            DSource::Rev { inner } => self.source_size(inner, body),
            DSource::Slice { capture, .. } | DSource::RowIndices { capture, .. } => {
                format!("PC_CAP_LEN({})", capture.0)
            }
            DSource::Row { capture, row, fault, .. } => {
                let r = self.expr(row, body);
                format!("PC_CAP_ROW_LEN({}, {}, {r})", capture.0, self.site(*fault))
            }
            DSource::Root { .. } => "pc_root_len".to_string(),
        }
    }

    /// Element `index` of `source` (`index` below its size).
    pub(crate) fn source_fetch(
        &mut self,
        source: &DSource,
        index: &str,
        root_range: bool,
        body: &mut Body,
    ) -> String {
        match source {
            DSource::Range { start, class: c, .. } => {
                let s = self.expr(start, body);
                let start = self.names.temp();
                self.declare(body, *c, &start, &s);
                format!("PC_OP(range_at, {})({start}, {index})", class(*c))
            }
            DSource::StepBy { inner, step, .. } => {
                let k = self.expr(step, body);
                let i = self.names.temp();
                body.line(format!("pc_u64 {i} = {index} * ({k});"));
                self.source_fetch(inner, &i, root_range, body)
            }
            DSource::Rev { inner } => {
                let n = self.source_size(inner, body);
                let i = self.names.temp();
                body.line(format!("pc_u64 {i} = {n} - 1 - {index};"));
                self.source_fetch(inner, &i, root_range, body)
            }
            DSource::Slice { capture, class: c } => {
                format!("PC_CAP_ELEM({}, {}, {index})", class(*c), capture.0)
            }
            DSource::RowIndices { .. } => format!("((pc_u64)({index}))"),
            DSource::Row { capture, row, class: c, .. } => {
                let r = self.expr(row, body);
                let macro_name = if self.direct_rows == Some(capture.0) {
                    "PC_CAP_LEVEL_ROW_ELEM"
                } else {
                    "PC_CAP_ROW_ELEM"
                };
                format!("{macro_name}({}, {}, {r}, {index})", class(*c), capture.0)
            }
            DSource::Root { class: c } => {
                if root_range {
                    format!(
                        "PC_OP(range_at, {0})(PC_CAST(u64, {0})(pc_root_start), {index})",
                        class(*c)
                    )
                } else {
                    // `PC_ROOT_LOAD`, not the class's load: the program reads the first
                    // generator's elements from columns, or from the records they are in the
                    // host's memory (`program.rs`, `source_loads`).
                    format!("PC_ROOT_LOAD({})(pc_root, pc_root_cap, {index})", class(*c))
                }
            }
        }
    }

    /// The element bound by a generator at `index`: fetched, then mapped.
    pub(crate) fn generator_element(
        &mut self,
        g: &DGenerator,
        index: &str,
        root_range: bool,
        body: &mut Body,
    ) -> String {
        let mut value = self.source_fetch(&g.source, index, root_range, body);
        let mut current = source_class(&g.source);
        for map in &g.maps {
            match map {
                DMap::Closure(pat, result) => {
                    self.bind(pat, current, &value, body);
                    value = self.expr(result, body);
                    current = result.class;
                }
                DMap::ParFn(f, out) => {
                    value = format!("PC_FN_{}(pc_fault, {value})", f.0);
                    current = *out;
                }
            }
        }
        value
    }
}

/// The class of the elements a source reads.
pub(crate) fn source_class(source: &DSource) -> Class {
    match source {
        DSource::Range { class, .. }
        | DSource::Slice { class, .. }
        | DSource::Row { class, .. }
        | DSource::RowIndices { class, .. }
        | DSource::Root { class } => *class,
        DSource::StepBy { inner, .. } | DSource::Rev { inner } => source_class(inner),
    }
}

/// A captured scalar of class `c`.
pub(crate) fn capture_scalar(c: Class, capture: CaptureId) -> String {
    format!("PC_CAP_SCALAR({}, {})", class(c), capture.0)
}

/// Whether a C expression is a plain name.
fn is_name(c: &str) -> bool {
    c.chars().next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

#[cfg(test)]
mod tests {
    use super::{keywords, Names};

    #[test]
    fn every_name_becomes_a_distinct_unreserved_c_name() {
        let mut names = Names::new();
        let wanted = [
            "int", "int_1", "int", "_X", "v_X", "__y", "pc_t", "PC_C3", "pcf_0", "größe", "_",
            "__", "kernel", "x", "NAN", "9", "x_",
        ];
        let mut given = std::collections::HashSet::new();
        for w in wanted {
            let name = names.fresh(w);
            assert!(!keywords::is_reserved(&name), "{w} became {name}");
            assert!(!name.contains("__"), "{w} became {name}");
            assert!(given.insert(name.clone()), "{w} became {name}, given before");
        }
        assert_eq!(names.fresh("x"), "x_1");
    }
}
