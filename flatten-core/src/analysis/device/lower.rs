//! Lowering Rust expressions of the device subset into the kernel IR.
//!
//! Names are resolved here, once: a local of the expression (a block's `let`, a closure's
//! parameter, a match binding), a comprehension variable, or — for anything else — a value
//! captured from the caller. Every node gets a class, constrained as Rust's typing of the
//! primitive operations demands (the runtime solves them; see `plan::kernel_ir`).

use super::methods::{self, Typing};
use super::{not_device, DeviceCtx};
use crate::analysis::generator::strip;
use crate::analysis::scope::Scope;
use crate::plan::kernel_ir::{
    ArmPattern, BinOp, CaptureId, CaptureKind, Class, Constraint, DArm, DExpr, DKind, DPat, DStmt,
    FaultSite, Literal, LocalId, Method, NotDevice, Prim, UnOp,
};
use crate::plan::Var;
use crate::text::text;
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, Pat};

mod arrays;

/// What names outside the expression refer to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    /// A comprehension: variables of the comprehension, and values captured from the caller.
    Comprehension,
    /// The body of a `#[par_fn]`: its parameters, and the constants of `std`.
    ParFn,
}

/// A local visible at the point being lowered.
#[derive(Clone)]
enum Local {
    /// A value (`mutable`: declared `let mut`).
    Value { name: String, id: LocalId, class: Class, mutable: bool },
    /// A closure bound by `let`, inlined where it is called, in the scope where it was written.
    Closure { name: String, params: Vec<Pat>, body: Box<Expr>, visible: usize },
}

impl Local {
    fn name(&self) -> &str {
        match self {
            Local::Value { name, .. } | Local::Closure { name, .. } => name,
        }
    }
}

/// Lowers expressions in one scope of a comprehension (or of a `#[par_fn]`).
pub(crate) struct Lower<'a> {
    pub(crate) ctx: &'a mut DeviceCtx,
    scope: Option<&'a Scope>,
    vars: &'a [Var],
    context: Context,
    locals: Vec<Local>,
    /// The comprehension variables that hold a row of a captured array of rows.
    rows: &'a std::collections::HashMap<
        crate::plan::kernel_ir::VarId,
        crate::plan::kernel_ir::CaptureId,
    >,
}

/// No row variables.
static NO_ROWS: std::sync::OnceLock<
    std::collections::HashMap<crate::plan::kernel_ir::VarId, crate::plan::kernel_ir::CaptureId>,
> = std::sync::OnceLock::new();

type Lowered = Result<DExpr, NotDevice>;

const SUBSET: &str = "the device runs arithmetic, comparisons, `as` casts, tuples, `if`, \
    `match` on integers and `char`s, blocks with `let`, numeric and ASCII methods, indexing \
    captured slices and calls of `#[par_fn]` functions; write the rest as a `#[par_fn]`, or keep \
    the comprehension on the CPU (`@cpu`)";

impl<'a> Lower<'a> {
    /// A lowerer for expressions of a comprehension, where `scope` holds its variables.
    pub(crate) fn comprehension(
        ctx: &'a mut DeviceCtx,
        scope: &'a Scope,
        vars: &'a [Var],
        rows: &'a std::collections::HashMap<
            crate::plan::kernel_ir::VarId,
            crate::plan::kernel_ir::CaptureId,
        >,
    ) -> Self {
        Lower {
            ctx,
            scope: Some(scope),
            vars,
            context: Context::Comprehension,
            locals: Vec::new(),
            rows,
        }
    }

    /// A lowerer for the body of a `#[par_fn]`, with no comprehension around it.
    pub(crate) fn par_fn(ctx: &'a mut DeviceCtx) -> Self {
        let rows = NO_ROWS.get_or_init(Default::default);
        Lower { ctx, scope: None, vars: &[], context: Context::ParFn, locals: Vec::new(), rows }
    }

    /// The class of comprehension variable `var`.
    pub(crate) fn var_class(&self, var: crate::plan::kernel_ir::VarId) -> Class {
        self.vars[var.0 as usize].class
    }

    /// The captured array of rows whose row the comprehension variable `expr` holds, if it is
    /// a row variable.
    pub(crate) fn row_variable(
        &self,
        expr: &Expr,
    ) -> Option<(crate::plan::kernel_ir::VarId, crate::plan::kernel_ir::CaptureId)> {
        let Expr::Path(p) = strip_ref(expr) else { return None };
        if p.qself.is_some() || p.path.segments.len() != 1 {
            return None;
        }
        let name = p.path.segments[0].ident.to_string();
        if self.find_local(&name).is_some() {
            return None;
        }
        let var = self.scope?.lookup(&name)?;
        self.rows.get(&var).map(|&c| (var, c))
    }

    /// Binds the parameter pattern `pat` (of a closure, a `#[par_fn]`, a `par_reduce!`
    /// operator) to new locals; `class` is the class of the whole value.
    pub(crate) fn bind_param(&mut self, pat: &Pat, class: Class) -> Result<DPat, NotDevice> {
        self.bind_pattern(pat, class)
    }

    /// The class of the value a type annotation names, if it is a device type (a primitive or
    /// a tuple of them).
    pub(crate) fn class_of_type(&mut self, ty: &syn::Type) -> Result<Class, NotDevice> {
        match ty {
            syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
                let name = p.path.segments[0].ident.to_string();
                if let Some(class) = self.ctx.type_param(&name) {
                    return Ok(class);
                }
                match Prim::from_rust(&name) {
                    Some(prim) => Ok(self.ctx.prim(prim)),
                    None => Err(not_device(
                        ty.span(),
                        format!("uses the type `{}`, which is not a device type", text(ty)),
                        "device types are the primitive numbers, `bool`, `char` and tuples of \
                         them",
                    )),
                }
            }
            syn::Type::Tuple(t) => {
                let items =
                    t.elems.iter().map(|t| self.class_of_type(t)).collect::<Result<Vec<_>, _>>()?;
                let class = self.ctx.class();
                self.ctx.constrain(Constraint::Tuple(class, items));
                Ok(class)
            }
            syn::Type::Paren(p) => self.class_of_type(&p.elem),
            syn::Type::Reference(r) => self.class_of_type(&r.elem),
            syn::Type::Array(a) => self.array_type(a),
            other => Err(not_device(
                other.span(),
                format!("uses the type `{}`, which is not a device type", text(other)),
                "device types are the primitive numbers, `bool`, `char` and tuples of them",
            )),
        }
    }

    /// Lowers `expr`.
    pub(crate) fn expr(&mut self, expr: &Expr) -> Lowered {
        match expr {
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Lit(lit) => self.literal(&lit.lit),
            Expr::Path(path) => self.path(path),
            Expr::Reference(r) => self.expr(&r.expr),
            Expr::Unary(u) => self.unary(u),
            Expr::Binary(b) => self.binary(b),
            Expr::Cast(c) => {
                let arg = self.expr(&c.expr)?;
                let class = self.cast_target(&c.ty)?;
                Ok(DExpr { kind: DKind::Cast(Box::new(arg)), class })
            }
            Expr::Tuple(t) => {
                let items = t.elems.iter().map(|e| self.expr(e)).collect::<Result<Vec<_>, _>>()?;
                let class = self.ctx.class();
                self.ctx
                    .constrain(Constraint::Tuple(class, items.iter().map(|i| i.class).collect()));
                Ok(if items.is_empty() {
                    DExpr { kind: DKind::Unit, class }
                } else {
                    DExpr { kind: DKind::Tuple(items), class }
                })
            }
            Expr::Field(f) => self.field(f),
            Expr::Struct(lit) => self.struct_lit(lit),
            Expr::If(i) => self.if_expr(i),
            Expr::Block(b) if b.label.is_none() => self.block(&b.block),
            Expr::Match(m) => self.match_expr(m),
            Expr::MethodCall(call) => self.method_call(call),
            Expr::Call(call) => self.call(call),
            Expr::Index(index) => self.index(index),
            Expr::Array(lit) => self.array_literal(lit),
            Expr::Repeat(repeat) => self.array_repeat(repeat),
            // The arm of a refutable generator's `let` that its filter never lets through.
            Expr::Macro(m) if is_unmatched_arm(&m.mac) => {
                Ok(DExpr { kind: DKind::Never, class: self.ctx.class() })
            }
            Expr::Macro(m) => {
                let name =
                    m.mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                Err(not_device(
                    m.span(),
                    format!("uses the macro `{name}!`, which the device cannot run"),
                    SUBSET,
                ))
            }
            Expr::While(w) if w.label.is_none() => {
                if let Expr::Let(l) = &*w.cond {
                    return Err(not_device(
                        l.span(),
                        "uses `while let`, which the device does not have",
                        SUBSET,
                    ));
                }
                let cond = self.expr(&w.cond)?;
                let bool_class = self.ctx.prim(Prim::Bool);
                self.ctx.same(cond.class, bool_class);
                let body = self.block(&w.body)?;
                Ok(self.unit(DKind::While(Box::new(cond), Box::new(body))))
            }
            Expr::Loop(l) if l.label.is_none() => {
                let class = self.ctx.prim(Prim::Bool);
                let cond = DExpr { kind: DKind::Lit(Literal::Bool(true)), class };
                let body = self.block(&l.body)?;
                Ok(self.unit(DKind::While(Box::new(cond), Box::new(body))))
            }
            Expr::ForLoop(f) if f.label.is_none() => self.for_loop(f),
            Expr::Break(b) if b.label.is_none() && b.expr.is_none() => Ok(self.never(DKind::Break)),
            Expr::Continue(c) if c.label.is_none() => Ok(self.never(DKind::Continue)),
            Expr::Return(r) if self.context == Context::ParFn => {
                let value = match &r.expr {
                    Some(v) => self.expr(v)?,
                    None => self.unit(DKind::Unit),
                };
                let result = self.ctx.return_class.expect("a #[par_fn] has a result class");
                self.ctx.same(value.class, result);
                Ok(self.never(DKind::Return(Box::new(value))))
            }
            Expr::Closure(c) => Err(not_device(
                c.span(),
                "contains a closure, which the device can only call where it is bound by `let`",
                SUBSET,
            )),
            other => Err(not_device(
                other.span(),
                format!("contains `{}`, which is outside the device subset", short(other)),
                SUBSET,
            )),
        }
    }

    /// A node of class `()`.
    fn unit(&mut self, kind: DKind) -> DExpr {
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Tuple(class, Vec::new()));
        DExpr { kind, class }
    }

    /// A node that does not finish (`break`, `return`): of any class.
    fn never(&mut self, kind: DKind) -> DExpr {
        let class = self.ctx.class();
        DExpr { kind, class }
    }

    /// `for x in a..b { body }` (`a..=b`): a counted loop.
    fn for_loop(&mut self, f: &syn::ExprForLoop) -> Lowered {
        if let Some(array) = Self::looped_array(&f.expr) {
            if self.context == Context::Comprehension && self.invariant(array) {
                // The caller's collection (a `Vec`, a slice or an array) is read by index.
                return Err(not_device(
                    f.expr.span(),
                    format!("loops over `{}`, a collection of the caller", text(strip_ref(array))),
                    "loop over its indices and index it: `for i in 0..xs.len() { .. xs[i] .. }`",
                ));
            }
            return self.array_for_loop(f, array);
        }
        let Expr::Range(range) = strip(&f.expr) else {
            return Err(not_device(
                f.expr.span(),
                "loops over something other than a range `a..b`, which the device does not have",
                "loop over an integer range: `for i in 0..n`",
            ));
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return Err(not_device(range.span(), "loops over a range without two bounds", SUBSET));
        };
        let start = self.expr(start)?;
        let end = self.expr(end)?;
        self.ctx.same(start.class, end.class);
        let depth = self.locals.len();
        let result = (|| {
            let syn::Pat::Ident(name) = &*f.pat else {
                return Err(not_device(
                    f.pat.span(),
                    "binds a pattern in a loop",
                    "bind a name: `for i in 0..n`",
                ));
            };
            let local = self.ctx.local(&name.ident.to_string(), start.class);
            self.locals.push(Local::Value {
                name: name.ident.to_string(),
                id: local,
                class: start.class,
                mutable: false,
            });
            let body = self.block(&f.body)?;
            let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
            Ok(self.unit(DKind::For {
                local,
                start: Box::new(start),
                end: Box::new(end),
                inclusive,
                body: Box::new(body),
            }))
        })();
        self.locals.truncate(depth);
        result
    }

    /// `target = value` or `target op= value` as a statement.
    fn assignment(
        &mut self,
        target: &Expr,
        op: Option<(crate::plan::kernel_ir::BinOp, &syn::BinOp)>,
        value: &Expr,
        whole: &Expr,
    ) -> Result<DStmt, NotDevice> {
        if let Some(index) = Self::indexed_place(target) {
            return self.index_assignment(index, op.map(|(op, _)| op), value, whole);
        }
        let name = match strip(target) {
            Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
                p.path.segments[0].ident.to_string()
            }
            other => {
                return Err(not_device(
                    other.span(),
                    "assigns to something other than a local variable",
                    "the device assigns to `let mut` variables of its own blocks",
                ))
            }
        };
        let Some(k) = self.find_local(&name) else {
            return Err(not_device(
                target.span(),
                format!("assigns to `{name}`, which is not a local of the expression"),
                "the device assigns only to `let mut` variables of its own blocks",
            ));
        };
        let Local::Value { id, class, mutable: true, .. } = self.locals[k].clone() else {
            return Err(not_device(
                target.span(),
                format!("assigns to `{name}`, which is not `mut`"),
                "declare it `let mut`",
            ));
        };
        let value = self.expr(value)?;
        let value = match op {
            None => {
                self.ctx.same(value.class, class);
                value
            }
            Some((op, _)) => {
                if !matches!(
                    op,
                    crate::plan::kernel_ir::BinOp::Shl | crate::plan::kernel_ir::BinOp::Shr
                ) {
                    self.ctx.same(value.class, class);
                }
                let site = op.faults().then(|| self.ctx.fault(text(whole)));
                let current = DExpr { kind: DKind::Local(id), class };
                DExpr { kind: DKind::Binary(op, Box::new(current), Box::new(value), site), class }
            }
        };
        Ok(DStmt::Assign(id, value))
    }

    fn literal(&mut self, lit: &syn::Lit) -> Lowered {
        match lit {
            // A negative literal (`-4` of a pattern `-4..=0`, which syn reads as one literal):
            // the negation of its digits, as `-(4)` would be.
            syn::Lit::Int(int) if int.base10_digits().starts_with('-') => {
                let positive = syn::LitInt::new(
                    &format!("{}{}", &int.base10_digits()[1..], int.suffix()),
                    int.span(),
                );
                let negated: Expr = syn::parse_quote_spanned! {int.span()=> -#positive };
                self.expr(&negated)
            }
            syn::Lit::Int(int) => {
                let suffix = int.suffix();
                if matches!(suffix, "f32" | "f64") {
                    let class = self.ctx.prim(if suffix == "f32" { Prim::F32 } else { Prim::F64 });
                    let digits = int.base10_digits();
                    return Ok(DExpr {
                        kind: DKind::Lit(Literal::Float(format!("{digits}.0"))),
                        class,
                    });
                }
                let value: u128 = int.base10_parse().map_err(|e| {
                    not_device(
                        int.span(),
                        format!("the literal `{int}` cannot be read: {e}"),
                        SUBSET,
                    )
                })?;
                if value > u64::MAX as u128 || matches!(suffix, "i128" | "u128") {
                    return Err(not_device(
                        int.span(),
                        "uses a 128-bit integer, which the device does not have",
                        "use 64-bit integers, or keep the comprehension on the CPU (`@cpu`)",
                    ));
                }
                let class = if suffix.is_empty() {
                    let class = self.ctx.class();
                    self.ctx.constrain(Constraint::Integer(class));
                    class
                } else {
                    let prim = Prim::from_rust(suffix).ok_or_else(|| {
                        not_device(int.span(), format!("unknown literal suffix `{suffix}`"), SUBSET)
                    })?;
                    self.ctx.prim(prim)
                };
                Ok(DExpr { kind: DKind::Lit(Literal::Int(value)), class })
            }
            syn::Lit::Float(float) => {
                let class = match float.suffix() {
                    "f32" => self.ctx.prim(Prim::F32),
                    "f64" => self.ctx.prim(Prim::F64),
                    _ => {
                        let class = self.ctx.class();
                        self.ctx.constrain(Constraint::Float(class));
                        class
                    }
                };
                let mut digits = float.base10_digits().to_string();
                if !digits.contains(['.', 'e', 'E']) {
                    digits.push_str(".0");
                } else if digits.ends_with('.') {
                    digits.push('0');
                }
                Ok(DExpr { kind: DKind::Lit(Literal::Float(digits)), class })
            }
            syn::Lit::Bool(b) => {
                let class = self.ctx.prim(Prim::Bool);
                Ok(DExpr { kind: DKind::Lit(Literal::Bool(b.value)), class })
            }
            // A `char` is its code point on the device, a byte literal (`b'a'`) a `u8`.
            syn::Lit::Char(c) => {
                let class = self.ctx.prim(Prim::Char);
                Ok(DExpr { kind: DKind::Lit(Literal::Int(u32::from(c.value()).into())), class })
            }
            syn::Lit::Byte(b) => {
                let class = self.ctx.prim(Prim::U8);
                Ok(DExpr { kind: DKind::Lit(Literal::Int(b.value().into())), class })
            }
            other => Err(not_device(
                other.span(),
                format!(
                    "uses the literal `{}`, which is not a number, a `bool` or a `char`",
                    text(other)
                ),
                "strings and byte strings stay on the CPU",
            )),
        }
    }

    fn find_local(&self, name: &str) -> Option<usize> {
        self.locals.iter().rposition(|l| l.name() == name)
    }

    fn path(&mut self, path: &syn::ExprPath) -> Lowered {
        let single = path.qself.is_none()
            && path.path.leading_colon.is_none()
            && path.path.segments.len() == 1
            && path.path.segments[0].arguments.is_none();
        if single {
            let name = path.path.segments[0].ident.to_string();
            if let Some(k) = self.find_local(&name) {
                return match &self.locals[k] {
                    Local::Value { id, class, .. } => {
                        Ok(DExpr { kind: DKind::Local(*id), class: *class })
                    }
                    Local::Closure { .. } => Err(not_device(
                        path.span(),
                        format!("uses the closure `{name}` as a value; the device only calls it"),
                        SUBSET,
                    )),
                };
            }
            if let Some(scope) = self.scope {
                if let Some(var) = scope.lookup(&name) {
                    let class = self.vars[var.0 as usize].class;
                    return Ok(DExpr { kind: DKind::Var(var), class });
                }
            }
            // `None`: made on the device, its type found where it goes (a captured `None`
            // would have no type of its own for the host to observe).
            if name == "None" {
                let class = self.ctx.class();
                let inner = self.ctx.class();
                self.ctx.constrain(Constraint::Option(class, inner));
                return Ok(DExpr { kind: DKind::Zero, class });
            }
        }
        match self.context {
            Context::Comprehension => Ok(self.capture_scalar(&Expr::Path(path.clone()))),
            Context::ParFn => self.std_constant(path),
        }
    }

    /// A value evaluated on the host and read by the kernels.
    fn capture_scalar(&mut self, expr: &Expr) -> DExpr {
        let capture = self.ctx.capture(expr, CaptureKind::Scalar);
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Capture(class, capture));
        DExpr { kind: DKind::Capture(capture), class }
    }

    /// A constant of `std` in a `#[par_fn]` (`i32::MAX`, `f64::consts::PI`).
    fn std_constant(&mut self, path: &syn::ExprPath) -> Lowered {
        let segments: Vec<String> =
            path.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let unknown = || {
            not_device(
                path.span(),
                format!(
                    "uses `{}`: a `#[par_fn]` can use its parameters, its locals and the \
                     numeric constants of `std`",
                    text(path)
                ),
                "pass the value as a parameter",
            )
        };
        let n = segments.len();
        if n < 2 {
            return Err(unknown());
        }
        self.type_param_item(&path.path)?;
        // `Color::Red`, `module::Color::Red`: a variant of a fieldless enum with
        // `#[derive(DeviceValue)]`, by Rust's naming conventions (a type's constants are
        // written in capitals, `i32::MAX`); its type is found where the value goes.
        if path.qself.is_none() && path.path.segments.iter().all(|s| s.arguments.is_none()) {
            let ty = path.path.segments[n - 2].ident.unraw().to_string();
            let name = path.path.segments[n - 1].ident.unraw().to_string();
            let lower = |s: &str| s.chars().any(|c| c.is_ascii_lowercase());
            let camel_type = ty.starts_with(char::is_uppercase) && lower(&ty) && ty != "Self";
            if camel_type && (lower(&name) || name.len() == 1) {
                let class = self.ctx.class();
                self.ctx.constrain(Constraint::Variant(class, name.clone()));
                return Ok(DExpr { kind: DKind::Variant(name), class });
            }
        }
        let (ty, name) = if n >= 3 && segments[n - 2] == "consts" {
            (segments[n - 3].as_str(), segments[n - 1].as_str())
        } else {
            (segments[n - 2].as_str(), segments[n - 1].as_str())
        };
        let Some(prim) = Prim::from_rust(ty) else {
            // `Point::ORIGIN`, `Self::SCALE`: an associated constant of a `#[par_fn] impl`
            // (by Rust's naming conventions: a type, then a constant's name).
            let owner = &segments[n - 2];
            let constant = &segments[n - 1];
            let is_type = owner == "Self" || owner.starts_with(|c: char| c.is_ascii_uppercase());
            let is_const = constant.chars().any(|c| c.is_ascii_uppercase())
                && !constant.chars().any(|c| c.is_ascii_lowercase());
            let plain = path.qself.is_none()
                && path.path.segments.last().is_some_and(|s| s.arguments.is_none());
            if !(is_type && is_const && plain) {
                return Err(unknown());
            }
            let mut owner_path = path.path.clone();
            owner_path.segments.pop();
            owner_path.segments.pop_punct();
            let id = self.ctx.constant(&owner_path, constant);
            return Ok(self.call_of(id, Vec::new()));
        };
        let literal = constant_value(prim, name).ok_or_else(unknown)?;
        let class = self.ctx.prim(prim);
        Ok(DExpr { kind: DKind::Lit(literal), class })
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> Lowered {
        let arg = self.expr(&u.expr)?;
        match u.op {
            syn::UnOp::Deref(_) => Ok(arg),
            syn::UnOp::Neg(_) => {
                let class = arg.class;
                Ok(DExpr { kind: DKind::Unary(UnOp::Neg, Box::new(arg)), class })
            }
            syn::UnOp::Not(_) => {
                let class = arg.class;
                Ok(DExpr { kind: DKind::Unary(UnOp::Not, Box::new(arg)), class })
            }
            _ => Err(not_device(u.span(), "uses an operator the device does not have", SUBSET)),
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Lowered {
        use syn::BinOp as B;
        let op = match b.op {
            B::Add(_) => BinOp::Add,
            B::Sub(_) => BinOp::Sub,
            B::Mul(_) => BinOp::Mul,
            B::Div(_) => BinOp::Div,
            B::Rem(_) => BinOp::Rem,
            B::BitAnd(_) => BinOp::BitAnd,
            B::BitOr(_) => BinOp::BitOr,
            B::BitXor(_) => BinOp::BitXor,
            B::Shl(_) => BinOp::Shl,
            B::Shr(_) => BinOp::Shr,
            B::Eq(_) => BinOp::Eq,
            B::Ne(_) => BinOp::Ne,
            B::Lt(_) => BinOp::Lt,
            B::Le(_) => BinOp::Le,
            B::Gt(_) => BinOp::Gt,
            B::Ge(_) => BinOp::Ge,
            B::And(_) | B::Or(_) => {
                let lhs = self.expr(&b.left)?;
                let rhs = self.expr(&b.right)?;
                let class = self.ctx.prim(Prim::Bool);
                self.ctx.same(lhs.class, class);
                self.ctx.same(rhs.class, class);
                let kind = if matches!(b.op, B::And(_)) {
                    DKind::And(Box::new(lhs), Box::new(rhs))
                } else {
                    DKind::Or(Box::new(lhs), Box::new(rhs))
                };
                return Ok(DExpr { kind, class });
            }
            _ => {
                return Err(not_device(
                    b.span(),
                    format!(
                        "assigns with `{}`, which an expression of the device cannot",
                        text(&b.op)
                    ),
                    SUBSET,
                ))
            }
        };
        let lhs = self.expr(&b.left)?;
        let rhs = self.expr(&b.right)?;
        let class = if op.is_comparison() {
            self.ctx.same(lhs.class, rhs.class);
            self.ctx.prim(Prim::Bool)
        } else if matches!(op, BinOp::Shl | BinOp::Shr) {
            lhs.class
        } else {
            self.ctx.same(lhs.class, rhs.class);
            lhs.class
        };
        let site = op.faults().then(|| self.ctx.fault(text(b)));
        Ok(DExpr { kind: DKind::Binary(op, Box::new(lhs), Box::new(rhs), site), class })
    }

    fn cast_target(&mut self, ty: &syn::Type) -> Result<Class, NotDevice> {
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none() && p.path.segments.len() == 1 {
                let name = p.path.segments[0].ident.to_string();
                if let Some(class) = self.ctx.type_param(&name) {
                    return Ok(class);
                }
                if let Some(prim) = Prim::from_rust(&name) {
                    return Ok(self.ctx.prim(prim));
                }
            }
        }
        Err(not_device(
            ty.span(),
            format!("casts to `{}`, which is not a primitive number or `char`", text(ty)),
            "the device casts between the primitive numbers, from `bool` and `char` to them, and \
             from `u8` to `char`",
        ))
    }

    fn field(&mut self, f: &syn::ExprField) -> Lowered {
        let syn::Member::Unnamed(index) = &f.member else {
            // A field of a captured value (`self.k`, `params.rate`) is read on the host.
            if self.context == Context::Comprehension && self.invariant(&f.base) {
                return Ok(self.capture_scalar(&Expr::Field(f.clone())));
            }
            // A field of a struct with `#[derive(DeviceValue)]`, found by name in the struct's
            // layout the runtime observes (a struct without the derive keeps the comprehension
            // on the CPU, for lack of `DeviceType`, with the type named).
            let syn::Member::Named(name) = &f.member else { unreachable!() };
            let base = self.expr(&f.base)?;
            let class = self.ctx.class();
            let name = name.unraw().to_string();
            self.ctx.constrain(Constraint::Member(base.class, name.clone(), class));
            return Ok(DExpr { kind: DKind::Member(Box::new(base), name), class });
        };
        if self.context == Context::Comprehension && self.invariant(&f.base) && is_place(&f.base) {
            return Ok(self.capture_scalar(&Expr::Field(f.clone())));
        }
        let base = self.expr(&f.base)?;
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Field(base.class, index.index, class));
        Ok(DExpr { kind: DKind::Field(Box::new(base), index.index), class })
    }

    /// `Point { x: a, y: b }`, `Point { x: a, ..base }`: a struct with `#[derive(DeviceValue)]`
    /// (its type is known once the runtime observes it where the value goes: the elements, a
    /// `#[par_fn]`'s parameter or result, or its own base).
    fn struct_lit(&mut self, lit: &syn::ExprStruct) -> Lowered {
        if lit.qself.is_some() {
            return Err(not_device(
                lit.span(),
                "builds a struct named through a qualified path".to_string(),
                "name the struct by its path (`Point { .. }`)",
            ));
        }
        let class = self.ctx.class();
        self.name_struct(class, &lit.path);
        let mut fields = Vec::new();
        for field in &lit.fields {
            let value = self.expr(&field.expr)?;
            let name = crate::text::member_text(&field.member);
            self.ctx.constrain(Constraint::Member(class, name.clone(), value.class));
            fields.push((name, value));
        }
        let base = match &lit.rest {
            Some(rest) => {
                let base = self.expr(rest)?;
                self.ctx.same(class, base.class);
                Some(Box::new(base))
            }
            None => None,
        };
        Ok(DExpr { kind: DKind::Struct(fields, base), class })
    }

    /// Whether `expr` uses no comprehension variable and no local.
    fn invariant(&self, expr: &Expr) -> bool {
        let mut names = std::collections::HashSet::new();
        for local in &self.locals {
            names.insert(local.name().to_string());
        }
        if let Some(scope) = self.scope {
            if !scope.vars_in(expr).is_empty() {
                return false;
            }
        }
        crate::analysis::free_vars::mentions(expr, &names).is_empty()
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Lowered {
        if let Expr::Let(l) = &*i.cond {
            return Err(not_device(
                l.span(),
                "uses `if let`, which the device does not have",
                "compare with `==`, or use `match` on an integer",
            ));
        }
        let cond = self.expr(&i.cond)?;
        let bool_class = self.ctx.prim(Prim::Bool);
        self.ctx.same(cond.class, bool_class);
        let then = self.block(&i.then_branch)?;
        let otherwise = match &i.else_branch {
            Some((_, e)) => self.expr(e)?,
            None => {
                let class = self.ctx.class();
                self.ctx.constrain(Constraint::Tuple(class, Vec::new()));
                DExpr { kind: DKind::Unit, class }
            }
        };
        self.ctx.same(then.class, otherwise.class);
        let class = then.class;
        Ok(DExpr { kind: DKind::If(Box::new(cond), Box::new(then), Box::new(otherwise)), class })
    }

    /// Lowers a block: its `let`s and expression statements, then its value.
    pub(crate) fn block(&mut self, block: &syn::Block) -> Lowered {
        let depth = self.locals.len();
        let result = self.block_inner(block);
        self.locals.truncate(depth);
        result
    }

    fn block_inner(&mut self, block: &syn::Block) -> Lowered {
        let mut stmts = Vec::new();
        let mut value = None;
        for (k, stmt) in block.stmts.iter().enumerate() {
            let last = k + 1 == block.stmts.len();
            match stmt {
                syn::Stmt::Local(local) => {
                    let Some(init) = &local.init else {
                        return Err(not_device(
                            local.span(),
                            "declares a variable without a value",
                            "give the `let` a value",
                        ));
                    };
                    if init.diverge.is_some() {
                        return Err(not_device(local.span(), "uses `let ... else`", SUBSET));
                    }
                    let (pat, annotation) = match &local.pat {
                        Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
                        other => (other, None),
                    };
                    if let (Pat::Ident(name), Expr::Closure(closure)) = (pat, strip(&init.expr)) {
                        if name.mutability.is_none()
                            && name.by_ref.is_none()
                            && closure.capture.is_none()
                        {
                            self.locals.push(Local::Closure {
                                name: name.ident.to_string(),
                                params: closure.inputs.iter().cloned().collect(),
                                body: closure.body.clone(),
                                visible: self.locals.len(),
                            });
                            continue;
                        }
                    }
                    let value = self.expr(&init.expr)?;
                    if let Some(ty) = annotation {
                        let class = self.class_of_type(ty)?;
                        self.ctx.same(value.class, class);
                    }
                    let pattern = self.bind_pattern(pat, value.class)?;
                    stmts.push(DStmt::Let(pattern, value));
                }
                syn::Stmt::Expr(expr, semi) => {
                    if let Some(assign) = self.statement(expr)? {
                        stmts.push(assign);
                        continue;
                    }
                    let lowered = self.expr(expr)?;
                    if last && semi.is_none() {
                        value = Some(lowered);
                    } else {
                        let diverges = matches!(
                            lowered.kind,
                            DKind::Break | DKind::Continue | DKind::Return(_)
                        );
                        stmts.push(DStmt::Expr(lowered));
                        if last && diverges {
                            let class = self.ctx.class();
                            value = Some(DExpr { kind: DKind::Never, class });
                        }
                    }
                }
                syn::Stmt::Item(syn::Item::Const(item)) if item.generics.params.is_empty() => {
                    stmts.push(self.const_item(item)?);
                }
                syn::Stmt::Item(item) => {
                    return Err(not_device(
                        item.span(),
                        "declares an item inside an expression, which the device cannot",
                        "declare it outside the comprehension",
                    ))
                }
                syn::Stmt::Macro(m) => {
                    let name =
                        m.mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                    return Err(not_device(
                        m.span(),
                        format!("uses the macro `{name}!`, which the device cannot run"),
                        SUBSET,
                    ));
                }
            }
        }
        let value = match value {
            Some(v) => v,
            None => {
                let class = self.ctx.class();
                self.ctx.constrain(Constraint::Tuple(class, Vec::new()));
                DExpr { kind: DKind::Unit, class }
            }
        };
        if stmts.is_empty() {
            return Ok(value);
        }
        let class = value.class;
        Ok(DExpr { kind: DKind::Block(stmts, Box::new(value)), class })
    }

    /// An assignment statement (`x = v`, `x += v`), lowered; `None` for other expressions.
    fn statement(&mut self, expr: &Expr) -> Result<Option<DStmt>, NotDevice> {
        use crate::plan::kernel_ir::BinOp;
        match strip(expr) {
            Expr::Assign(a) => Ok(Some(self.assignment(&a.left, None, &a.right, expr)?)),
            Expr::Binary(b) => {
                let op = match b.op {
                    syn::BinOp::AddAssign(_) => BinOp::Add,
                    syn::BinOp::SubAssign(_) => BinOp::Sub,
                    syn::BinOp::MulAssign(_) => BinOp::Mul,
                    syn::BinOp::DivAssign(_) => BinOp::Div,
                    syn::BinOp::RemAssign(_) => BinOp::Rem,
                    syn::BinOp::BitAndAssign(_) => BinOp::BitAnd,
                    syn::BinOp::BitOrAssign(_) => BinOp::BitOr,
                    syn::BinOp::BitXorAssign(_) => BinOp::BitXor,
                    syn::BinOp::ShlAssign(_) => BinOp::Shl,
                    syn::BinOp::ShrAssign(_) => BinOp::Shr,
                    _ => return Ok(None),
                };
                Ok(Some(self.assignment(&b.left, Some((op, &b.op)), &b.right, expr)?))
            }
            _ => Ok(None),
        }
    }

    /// Binds the names of `pat` to new locals for a value of class `class`.
    fn bind_pattern(&mut self, pat: &Pat, class: Class) -> Result<DPat, NotDevice> {
        match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                let id = self.ctx.local(&p.ident.to_string(), class);
                let mutable = p.mutability.is_some();
                self.locals.push(Local::Value { name: p.ident.to_string(), id, class, mutable });
                Ok(DPat::Bind(id))
            }
            Pat::Wild(_) => Ok(DPat::Wild),
            Pat::Paren(p) => self.bind_pattern(&p.pat, class),
            Pat::Type(t) => {
                let annotated = self.class_of_type(&t.ty)?;
                self.ctx.same(annotated, class);
                self.bind_pattern(&t.pat, class)
            }
            Pat::Reference(r) => self.bind_pattern(&r.pat, class),
            Pat::Tuple(t) => {
                let classes: Vec<Class> = t.elems.iter().map(|_| self.ctx.class()).collect();
                self.ctx.constrain(Constraint::Tuple(class, classes.clone()));
                let items = t
                    .elems
                    .iter()
                    .zip(classes)
                    .map(|(p, c)| self.bind_pattern(p, c))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(DPat::Tuple(items))
            }
            // `Point { x, y: b, .. }`: a struct pattern is irrefutable, and Rust checks that
            // the path names a struct (a variant would not compile in a `let`).
            Pat::Struct(s) if s.qself.is_none() => {
                let mut fields = Vec::new();
                for field in &s.fields {
                    let name = crate::text::member_text(&field.member);
                    let c = self.ctx.class();
                    self.ctx.constrain(Constraint::Member(class, name.clone(), c));
                    fields.push((name, self.bind_pattern(&field.pat, c)?));
                }
                Ok(DPat::Struct(fields))
            }
            // `Wrapper(a, b)`, `Wrapper(a, ..)`: a tuple struct's fields by position (irrefutable
            // in a `let` or a parameter, as for `Point { .. }`).
            Pat::TupleStruct(s) if s.qself.is_none() => {
                let mut fields = Vec::new();
                for (k, item) in s.elems.iter().enumerate() {
                    if let Pat::Rest(rest) = item {
                        if k + 1 != s.elems.len() {
                            return Err(not_device(
                                rest.span(),
                                "binds a tuple struct's fields after `..`, which the device does \
                                 not have"
                                    .to_string(),
                                "name the fields before `..` (`Wrapper(a, _, ..)`)",
                            ));
                        }
                        break;
                    }
                    let name = k.to_string();
                    let c = self.ctx.class();
                    self.ctx.constrain(Constraint::Member(class, name.clone(), c));
                    fields.push((name, self.bind_pattern(item, c)?));
                }
                Ok(DPat::Struct(fields))
            }
            Pat::Slice(s) => self.array_pattern(s, class),
            other => Err(not_device(
                other.span(),
                format!("binds the pattern `{}`, which the device does not have", text(other)),
                "device patterns are names, `_`, tuples and structs with named fields",
            )),
        }
    }

    fn match_expr(&mut self, m: &syn::ExprMatch) -> Lowered {
        let scrutinee = self.expr(&m.expr)?;
        let class = self.ctx.class();
        let mut arms = Vec::new();
        for arm in &m.arms {
            let depth = self.locals.len();
            let mut alternatives = Vec::new();
            let mut bind = None;
            let mut fields = Vec::new();
            self.arm_pattern(&arm.pat, scrutinee.class, &mut alternatives, &mut bind, &mut fields)?;
            let guard = match &arm.guard {
                Some((_, g)) => {
                    let g = self.expr(g)?;
                    let bool_class = self.ctx.prim(Prim::Bool);
                    self.ctx.same(g.class, bool_class);
                    Some(g)
                }
                None => None,
            };
            let body = self.expr(&arm.body)?;
            self.ctx.same(body.class, class);
            self.locals.truncate(depth);
            arms.push(DArm { alternatives, bind, fields, guard, body });
        }
        Ok(DExpr { kind: DKind::Match(Box::new(scrutinee), arms), class })
    }

    fn arm_pattern(
        &mut self,
        pat: &Pat,
        class: Class,
        alternatives: &mut Vec<ArmPattern>,
        bind: &mut Option<LocalId>,
        fields: &mut Vec<(LocalId, Class, Vec<u32>)>,
    ) -> Result<(), NotDevice> {
        match pat {
            Pat::Wild(_) => Ok(()),
            Pat::Paren(p) => self.arm_pattern(&p.pat, class, alternatives, bind, fields),
            // `(j, -1)`, `Some(v)`: tests of the scrutinee's fields, names bound to them.
            Pat::Tuple(_) | Pat::TupleStruct(_) if is_structured(pat) => {
                alternatives.extend(self.structured_pattern(pat, class, &[], fields)?);
                Ok(())
            }
            // `None` names the variant, not a new binding (as in Rust, where the prelude's
            // `None` is what the name resolves to): the arm tests the scrutinee's flag.
            Pat::Ident(p)
                if p.ident == "None"
                    && p.subpat.is_none()
                    && p.by_ref.is_none()
                    && p.mutability.is_none() =>
            {
                let inner = self.ctx.class();
                self.ctx.constrain(Constraint::Option(class, inner));
                alternatives.push(ArmPattern::None);
                Ok(())
            }
            Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() => {
                let id = self.ctx.local(&p.ident.to_string(), class);
                self.locals.push(Local::Value {
                    name: p.ident.to_string(),
                    id,
                    class,
                    mutable: false,
                });
                *bind = Some(id);
                match &p.subpat {
                    Some((_, sub)) => self.arm_pattern(sub, class, alternatives, bind, fields),
                    None => Ok(()),
                }
            }
            // `Color::Red`: a fieldless enum's variant (in a comprehension a value read on the
            // host; in a `#[par_fn]` the variant's discriminant, found by the runtime).
            Pat::Path(path) => {
                let value = self.expr(&Expr::Path(path.clone()))?;
                self.ctx.same(value.class, class);
                alternatives.push(ArmPattern::Value(value));
                Ok(())
            }
            Pat::Lit(lit) => {
                let value = self.expr(&Expr::Lit(lit.clone()))?;
                self.ctx.same(value.class, class);
                alternatives.push(ArmPattern::Value(value));
                Ok(())
            }
            Pat::Range(range) => {
                let bound =
                    |e: &Option<Box<Expr>>, this: &mut Self| -> Result<Option<DExpr>, NotDevice> {
                        match e {
                            Some(e) => {
                                let v = this.expr(e)?;
                                this.ctx.same(v.class, class);
                                Ok(Some(v))
                            }
                            None => Ok(None),
                        }
                    };
                let lo = bound(&range.start, self)?;
                let hi = bound(&range.end, self)?;
                let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
                alternatives.push(ArmPattern::Range(lo, hi, inclusive));
                Ok(())
            }
            Pat::Or(or) => {
                for case in &or.cases {
                    let before = alternatives.len();
                    let bound = fields.len();
                    self.arm_pattern(case, class, alternatives, bind, fields)?;
                    if fields.len() != bound {
                        return Err(not_device(
                            case.span(),
                            format!(
                                "binds names inside the alternative `{}`, which the device does \
                                 not have",
                                text(case)
                            ),
                            "bind the names in an arm of their own",
                        ));
                    }
                    if alternatives.len() == before {
                        // `_` among alternatives: the arm matches everything.
                        alternatives.clear();
                        return Ok(());
                    }
                }
                Ok(())
            }
            Pat::Verbatim(tokens) => {
                // A negative literal pattern (`-1`) reaches syn as tokens.
                let expr: Expr = syn::parse2(tokens.clone()).map_err(|_| {
                    not_device(pat.span(), "uses a pattern the device does not have", SUBSET)
                })?;
                let value = self.expr(&expr)?;
                self.ctx.same(value.class, class);
                alternatives.push(ArmPattern::Value(value));
                Ok(())
            }
            other => Err(not_device(
                other.span(),
                format!("matches the pattern `{}`, which the device does not have", text(other)),
                "device `match` arms are integer or `bool` literals, ranges, `|`, `_`, names, \
                 tuples and `Some(..)` of them",
            )),
        }
    }

    /// The alternatives of `pat`, a pattern at `path` inside a tuple or `Some` pattern of a
    /// `match` arm whose scrutinee is of class `class`; the names it binds are added to
    /// `fields` with their paths.
    fn structured_pattern(
        &mut self,
        pat: &Pat,
        class: Class,
        path: &[u32],
        fields: &mut Vec<(LocalId, Class, Vec<u32>)>,
    ) -> Result<Vec<ArmPattern>, NotDevice> {
        let at = |k: u32| -> Vec<u32> { path.iter().copied().chain([k]).collect() };
        match pat {
            Pat::Paren(p) => self.structured_pattern(&p.pat, class, path, fields),
            Pat::Tuple(t) if !t.elems.iter().any(|p| matches!(p, Pat::Rest(_))) => {
                let classes: Vec<Class> = t.elems.iter().map(|_| self.ctx.class()).collect();
                self.ctx.constrain(Constraint::Tuple(class, classes.clone()));
                let mut items = Vec::new();
                for (k, (p, c)) in t.elems.iter().zip(classes).enumerate() {
                    items.push((c, self.structured_pattern(p, c, &at(k as u32), fields)?));
                }
                // A tuple of names and `_` always matches: it only binds.
                if items.iter().all(|(_, alternatives)| alternatives.is_empty()) {
                    return Ok(Vec::new());
                }
                Ok(vec![ArmPattern::Tuple(items)])
            }
            Pat::TupleStruct(_) if is_structured(pat) => {
                let Pat::TupleStruct(s) = pat else { unreachable!("matched above") };
                let inner = self.ctx.class();
                self.ctx.constrain(Constraint::Option(class, inner));
                let value = self.structured_pattern(&s.elems[0], inner, &at(1), fields)?;
                Ok(vec![ArmPattern::Some(inner, value)])
            }
            Pat::Ident(p)
                if p.by_ref.is_none()
                    && p.mutability.is_none()
                    && !(p.ident == "None" && p.subpat.is_none()) =>
            {
                let id = self.ctx.local(&p.ident.to_string(), class);
                self.locals.push(Local::Value {
                    name: p.ident.to_string(),
                    id,
                    class,
                    mutable: false,
                });
                fields.push((id, class, path.to_vec()));
                match &p.subpat {
                    Some((_, sub)) => self.structured_pattern(sub, class, path, fields),
                    None => Ok(Vec::new()),
                }
            }
            // Literals, ranges, `None`, `_` and alternatives of them: as at the top of an arm.
            other => {
                let mut alternatives = Vec::new();
                let mut bind = None;
                let bound = fields.len();
                self.arm_pattern(other, class, &mut alternatives, &mut bind, fields)?;
                if bind.is_some() || fields.len() != bound {
                    return Err(not_device(
                        other.span(),
                        format!(
                            "matches the pattern `{}`, which the device does not have",
                            text(other)
                        ),
                        "device `match` arms are integer or `bool` literals, ranges, `|`, `_`, \
                         names, tuples and `Some(..)` of them",
                    ));
                }
                Ok(alternatives)
            }
        }
    }

    fn method_call(&mut self, call: &syn::ExprMethodCall) -> Lowered {
        let name = call.method.to_string();
        if self.context == Context::Comprehension
            && matches!(name.as_str(), "len" | "is_empty" | "row_len")
            && self.invariant(&Expr::MethodCall(call.clone()))
        {
            // `xs.len()`, `m.is_empty()` of a value of the caller: computed on the host.
            return Ok(self.capture_scalar(&Expr::MethodCall(call.clone())));
        }
        // `m.row_len(i)` and `m.row(i).len()` of an array of rows of the caller.
        let row_of = match (name.as_str(), call.args.len()) {
            ("row_len", 1) => Some((&*call.receiver, &call.args[0])),
            ("len", 0) => match strip(&call.receiver) {
                Expr::MethodCall(inner) if inner.method == "row" && inner.args.len() == 1 => {
                    Some((&*inner.receiver, &inner.args[0]))
                }
                _ => None,
            },
            _ => None,
        };
        if let ("len", 0) = (name.as_str(), call.args.len()) {
            if let Some((var, capture)) = self.row_variable(&call.receiver) {
                let row = DExpr { kind: DKind::Var(var), class: self.vars[var.0 as usize].class };
                let class = self.ctx.prim(Prim::U64);
                let site = self.ctx.fault(text(call));
                return Ok(DExpr { kind: DKind::RowLen(capture, Box::new(row), site), class });
            }
        }
        if let Some((rows, row)) = row_of {
            if self.context == Context::Comprehension && self.invariant(rows) && is_place(rows) {
                let capture = self.ctx.capture(strip_ref(rows), CaptureKind::Jagged);
                let row = self.expr(row)?;
                let usize_class = self.ctx.prim(Prim::U64);
                self.ctx.same(row.class, usize_class);
                let class = self.ctx.prim(Prim::U64);
                let site = self.ctx.fault(text(call));
                return Ok(DExpr { kind: DKind::RowLen(capture, Box::new(row), site), class });
            }
        }
        if matches!(name.as_str(), "len" | "is_empty") && call.args.is_empty() {
            // `a.len()` of an array value (a captured collection's is read on the host above),
            // or `l.len()` of a struct whose `#[par_fn] impl` has a `len`: the macro cannot
            // tell, the runtime decides once it knows the receiver's type.
            return self.len_or_call(&call.receiver, &name);
        }
        let Some(info) = methods::method(&name, call.args.len()) else {
            let known = methods::is_known(&name);
            let refused = not_device(
                call.method.span(),
                if known {
                    format!("calls `.{name}()` with {} arguments", call.args.len())
                } else {
                    format!("calls the method `.{name}()`, which the device does not have")
                },
                SUBSET,
            );
            // Methods of `#[par_fn] impl` blocks are not generic.
            if call.turbofish.is_some() {
                return Err(refused);
            }
            return self.user_method(call, refused);
        };
        let receiver = self.expr(&call.receiver)?;
        let args = call.args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
        let whole = Expr::MethodCall(call.clone());
        match info.typing {
            // An `Option` is never a struct; `abs_diff`'s typing waits on its receiver's type.
            Typing::OptionValue | Typing::OptionFlag | Typing::Unsigned => {
                self.apply_method(info, receiver, args, &whole)
            }
            _ => self.method_or_call(info, &name, receiver, args, &whole),
        }
    }

    /// `x.abs()` of a receiver that may be a struct with a `#[par_fn]` method of that name:
    /// the runtime chooses by the receiver's type (`Constraint::Builtin`), the program by
    /// whether `PC_FN_k` is defined. The numeric method's typing is written over stand-ins of
    /// the receiver and arguments, joined to them only when it is chosen.
    fn method_or_call(
        &mut self,
        info: &methods::MethodInfo,
        name: &str,
        receiver: DExpr,
        args: Vec<DExpr>,
        whole: &Expr,
    ) -> Lowered {
        let id = self.ctx.method(name);
        let mut stand_ins = Vec::new();
        for _ in 0..=args.len() {
            stand_ins.push(DExpr { kind: DKind::Unit, class: self.ctx.class() });
        }
        let mut stand_ins = stand_ins.into_iter();
        let stand_in = stand_ins.next().expect("a receiver");
        let builtin = self.apply_method(info, stand_in, stand_ins.collect(), whole)?;
        let DKind::Method(method, stand_ins, site) = builtin.kind else {
            unreachable!("apply_method makes a method")
        };
        let mut all = vec![receiver];
        all.extend(args);
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Builtin(id, class, builtin.class));
        for (a, s) in all.iter().zip(&stand_ins) {
            self.ctx.constrain(Constraint::Builtin(id, a.class, s.class));
        }
        self.ctx.constrain(Constraint::Return(class, id));
        for (k, a) in all.iter().enumerate() {
            let param = self.ctx.class();
            self.ctx.constrain(Constraint::Param(param, id, k as u32));
            self.ctx.same(a.class, param);
        }
        Ok(DExpr { kind: DKind::MethodOrCall(method, id, all, site), class })
    }

    /// `receiver.len()` or `receiver.is_empty()` (`name`): an array's length, or a method of a
    /// `#[par_fn] impl` block when the receiver is a struct ([`DKind::LenOrCall`]): the
    /// runtime's choice, as for [`method_or_call`](Self::method_or_call).
    fn len_or_call(&mut self, receiver: &Expr, name: &str) -> Lowered {
        let receiver = self.expr(receiver)?;
        let id = self.ctx.method(name);
        let class = self.ctx.class();
        let builtin = self.ctx.prim(if name == "is_empty" { Prim::Bool } else { Prim::U64 });
        self.ctx.constrain(Constraint::Builtin(id, class, builtin));
        self.ctx.constrain(Constraint::Return(class, id));
        let param = self.ctx.class();
        self.ctx.constrain(Constraint::Param(param, id, 0));
        self.ctx.same(receiver.class, param);
        Ok(DExpr { kind: DKind::LenOrCall(id, Box::new(receiver), name == "is_empty"), class })
    }

    /// `receiver.name(args)` for a method the device does not have built in: a method of a
    /// `#[par_fn] impl` block, found by the runtime once the receiver's type is known (a
    /// struct with `#[derive(DeviceValue)]`; any other type keeps the comprehension on the CPU,
    /// with `refused` as the reason). A receiver the device cannot compute is `refused` now.
    fn user_method(&mut self, call: &syn::ExprMethodCall, refused: NotDevice) -> Lowered {
        let receiver = self.expr(&call.receiver).map_err(|_| refused)?;
        let mut args = vec![receiver];
        for a in &call.args {
            args.push(self.expr(a)?);
        }
        let id = self.ctx.method(&call.method.unraw().to_string());
        Ok(self.call_of(id, args))
    }

    /// A call of the `#[par_fn]` `id` with `args`, typed by its signature.
    fn call_of(&mut self, id: crate::plan::kernel_ir::ParFnId, args: Vec<DExpr>) -> DExpr {
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Return(class, id));
        for (k, a) in args.iter().enumerate() {
            let param = self.ctx.class();
            self.ctx.constrain(Constraint::Param(param, id, k as u32));
            self.ctx.same(a.class, param);
        }
        DExpr { kind: DKind::Call(id, args), class }
    }

    fn apply_method(
        &mut self,
        info: &methods::MethodInfo,
        receiver: DExpr,
        args: Vec<DExpr>,
        whole: &Expr,
    ) -> Lowered {
        let class = match info.typing {
            Typing::SelfLike => {
                for a in &args {
                    self.ctx.same(a.class, receiver.class);
                }
                receiver.class
            }
            Typing::SelfWith(prims) => {
                for (a, &p) in args.iter().zip(prims) {
                    let pc = self.ctx.prim(p);
                    self.ctx.same(a.class, pc);
                }
                receiver.class
            }
            Typing::Returns(p) => {
                for a in &args {
                    self.ctx.same(a.class, receiver.class);
                }
                self.ctx.prim(p)
            }
            Typing::Unsigned => {
                for a in &args {
                    self.ctx.same(a.class, receiver.class);
                }
                let class = self.ctx.class();
                self.ctx.constrain(Constraint::Unsigned(class, receiver.class));
                class
            }
            Typing::OptionValue => {
                let class = self.ctx.class();
                self.ctx.constrain(Constraint::Option(receiver.class, class));
                for a in &args {
                    self.ctx.same(a.class, class);
                }
                class
            }
            Typing::OptionFlag => {
                let inner = self.ctx.class();
                self.ctx.constrain(Constraint::Option(receiver.class, inner));
                self.ctx.prim(Prim::Bool)
            }
        };
        let site = info.faults.then(|| self.ctx.fault(text(whole)));
        let mut all = vec![receiver];
        all.extend(args);
        Ok(DExpr { kind: DKind::Method(Method { rust: info.rust, op: info.op }, all, site), class })
    }

    fn call(&mut self, call: &syn::ExprCall) -> Lowered {
        let Expr::Path(func) = strip(&call.func) else {
            return Err(not_device(call.func.span(), "calls a computed function", SUBSET));
        };
        let segments: Vec<String> =
            func.path.segments.iter().map(|s| s.ident.to_string()).collect();
        // A closure bound by `let`: inlined.
        if segments.len() == 1 && func.qself.is_none() {
            if let Some(k) = self.find_local(&segments[0]) {
                if let Local::Closure { params, body, visible, .. } = self.locals[k].clone() {
                    return self.inline_closure(&params, &body, visible, &call.args, call.span());
                }
            }
        }
        // `Wrapper(x)`, `Shape::Circle(r)`: a tuple struct or a variant, by Rust's naming
        // conventions, not a function the device could call. (`Some(x)` is made below.)
        let some = segments.len() == 1 && segments[0] == "Some" && call.args.len() == 1;
        if let Some(last) = segments.last().filter(|l| l.starts_with(char::is_uppercase) && !some) {
            return self.tuple_struct(call, &segments, last);
        }
        let args = call.args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
        let n = segments.len();
        // `i64::max(a, b)`, `f64::sqrt(x)`, `u64::from(x)`.
        if n >= 2 {
            if let Some(prim) = Prim::from_rust(&segments[n - 2]) {
                let method = &segments[n - 1];
                if method == "from" && args.len() == 1 {
                    let class = self.ctx.prim(prim);
                    let arg = args.into_iter().next().expect("one argument");
                    return Ok(DExpr { kind: DKind::Cast(Box::new(arg)), class });
                }
                if let Some(info) =
                    args.len().checked_sub(1).and_then(|a| methods::method(method, a))
                {
                    let mut args = args.into_iter();
                    let receiver = args.next().expect("a receiver");
                    let pc = self.ctx.prim(prim);
                    self.ctx.same(receiver.class, pc);
                    return self.apply_method(
                        info,
                        receiver,
                        args.collect(),
                        &Expr::Call(call.clone()),
                    );
                }
                // `char::from_u32(x)`, `char::from_digit(d, radix)`: not every `u32` is a
                // `char`, so they answer with an `Option` the device does not make.
                if prim == Prim::Char {
                    return Err(not_device(
                        call.func.span(),
                        format!("calls `{}`, which the device does not have", text(func)),
                        "the device makes a `char` from a `u8` (`b as char`, `char::from(b)`); \
                         make other `char`s before the comprehension, or keep it on the CPU \
                         (`@cpu`)",
                    ));
                }
            }
            // `std::cmp::max(a, b)`, `cmp::min(a, b)`.
            if segments[n - 2] == "cmp"
                && matches!(segments[n - 1].as_str(), "max" | "min")
                && args.len() == 2
            {
                let info = methods::method(&segments[n - 1], 1).expect("min and max are methods");
                let mut args = args.into_iter();
                let receiver = args.next().expect("two arguments");
                return self.apply_method(
                    info,
                    receiver,
                    args.collect(),
                    &Expr::Call(call.clone()),
                );
            }
        }
        if segments.len() == 1 && segments[0] == "Some" && args.len() == 1 {
            let arg = args.into_iter().next().expect("one argument");
            let class = self.ctx.class();
            self.ctx.constrain(Constraint::Option(class, arg.class));
            let flag_class = self.ctx.prim(Prim::Bool);
            let flag = DExpr { kind: DKind::Lit(Literal::Bool(true)), class: flag_class };
            return Ok(DExpr { kind: DKind::Tuple(vec![flag, arg]), class });
        }
        if let Some(id) = self.generic_call(func)? {
            return Ok(self.call_of(id, args));
        }
        if func.qself.is_some() || func.path.segments.iter().any(|s| !s.arguments.is_none()) {
            return Err(not_device(
                call.func.span(),
                format!(
                    "calls `{}`, a generic function named in a way the device does not",
                    text(func)
                ),
                "the device calls a generic `#[par_fn]` by its path with type arguments, \
                 `lerp::<f32>(a, b, t)`",
            ));
        }
        // Any other function: a `#[par_fn]` (or an associated function of a `#[par_fn]
        // impl`), found when the comprehension runs.
        let id = self.ctx.par_fn(&func.path);
        Ok(self.call_of(id, args))
    }

    /// `Wrapper(a, b)` (also `Self(a, b)` and `module::Wrapper(a, b)`): a tuple struct with
    /// `#[derive(DeviceValue)]`, built as a struct whose fields are named `0`, `1`, ... (its
    /// type is found where the value goes, as for `Point { .. }`). A variant with fields
    /// (`Shape::Circle(r)`, `Ok(x)`) is refused: the device holds fieldless enums only.
    fn tuple_struct(&mut self, call: &syn::ExprCall, segments: &[String], last: &str) -> Lowered {
        let n = segments.len();
        let variant = matches!(last, "Ok" | "Err")
            || (n >= 2
                && segments[n - 2].starts_with(char::is_uppercase)
                && segments[n - 2] != "Self");
        if variant {
            return Err(not_device(
                call.func.span(),
                format!("constructs `{}(..)`, an enum variant with fields, which the device does not have", segments.join("::")),
                "the device holds structs and fieldless enums with `#[derive(DeviceValue)]`",
            ));
        }
        let class = self.ctx.class();
        if let Expr::Path(func) = strip(&call.func) {
            self.name_struct(class, &func.path);
        }
        let mut fields = Vec::new();
        for (k, arg) in call.args.iter().enumerate() {
            let value = self.expr(arg)?;
            let name = k.to_string();
            self.ctx.constrain(Constraint::Member(class, name.clone(), value.class));
            fields.push((name, value));
        }
        Ok(DExpr { kind: DKind::Struct(fields, None), class })
    }

    /// Names the struct a literal of class `class` builds (`Point` of `geo::Point { .. }`), for
    /// the runtime to find among the types it observes when nothing else types the literal.
    fn name_struct(&mut self, class: Class, path: &syn::Path) {
        if let Some(last) = path.segments.last() {
            let name = last.ident.unraw().to_string();
            if name != "Self" {
                self.ctx.constrain(Constraint::Named(class, name));
            }
        }
    }

    /// Refuses `F::zero()`, `F::MAX` and other items of a type parameter `F` of the generic
    /// `#[par_fn]` being compiled: the device compiles the body once per instance from its
    /// operators, and does not resolve the traits a type parameter's bounds name.
    fn type_param_item(&self, path: &syn::Path) -> Result<(), NotDevice> {
        let first = &path.segments[0].ident;
        if path.segments.len() < 2 || self.ctx.type_param(&first.to_string()).is_none() {
            return Ok(());
        }
        Err(not_device(
            path.span(),
            format!(
                "uses `{}`, an item of the type parameter `{first}`, which the device does not \
                 resolve (it compiles a generic `#[par_fn]` from its operators, casts, literals \
                 and numeric methods, not from the traits of its bounds)",
                text(path)
            ),
            format!(
                "pass the value as a parameter of type `{first}`, or make it from one \
                 (`x - x` is zero)"
            ),
        ))
    }

    /// `lerp::<f32>(..)`, `lerp::<F>(..)`, `geo::lerp::<_>(..)`: a call of a generic
    /// `#[par_fn]` with its type arguments written, an instance of its own. Each type argument
    /// that is a primitive or a type parameter of the `#[par_fn]` being compiled decides the
    /// instance's (a `_` or another type is decided by the arguments' types). `None`: not
    /// such a call.
    fn generic_call(
        &mut self,
        func: &syn::ExprPath,
    ) -> Result<Option<crate::plan::kernel_ir::ParFnId>, NotDevice> {
        self.type_param_item(&func.path)?;
        let n = func.path.segments.len();
        let last = &func.path.segments[n - 1];
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return Ok(None) };
        if func.qself.is_some()
            || func.path.segments.iter().take(n - 1).any(|s| !s.arguments.is_none())
        {
            return Ok(None);
        }
        let mut types = Vec::new();
        for arg in &args.args {
            match arg {
                syn::GenericArgument::Type(ty) => types.push(ty),
                other => {
                    return Err(not_device(
                        other.span(),
                        format!(
                            "calls `{}` with a generic argument that is not a type",
                            text(func)
                        ),
                        "a generic `#[par_fn]` has type parameters only",
                    ))
                }
            }
        }
        let id = self.ctx.generic_call(&func.path);
        for (j, ty) in types.into_iter().enumerate() {
            let class = match ty {
                syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
                    let name = p.path.segments[0].ident.to_string();
                    match Prim::from_rust(&name) {
                        Some(prim) => Some(self.ctx.prim(prim)),
                        None => self.ctx.type_param(&name),
                    }
                }
                _ => None,
            };
            if let Some(class) = class {
                self.ctx.constrain(Constraint::TypeArg(class, id, j as u32));
            }
        }
        Ok(Some(id))
    }

    fn inline_closure(
        &mut self,
        params: &[Pat],
        body: &Expr,
        visible: usize,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
        span: Span,
    ) -> Lowered {
        if params.len() != args.len() {
            return Err(not_device(
                span,
                "calls a closure with the wrong number of arguments",
                SUBSET,
            ));
        }
        let args = args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
        // The body sees what was visible where the closure was written, and its parameters.
        let saved = std::mem::take(&mut self.locals);
        self.locals = saved[..visible].to_vec();
        let result = (|| {
            let mut stmts = Vec::new();
            for (param, arg) in params.iter().zip(args) {
                let pattern = self.bind_pattern(param, arg.class)?;
                stmts.push(DStmt::Let(pattern, arg));
            }
            let value = self.expr(body)?;
            let class = value.class;
            Ok(DExpr { kind: DKind::Block(stmts, Box::new(value)), class })
        })();
        self.locals = saved;
        result
    }

    /// A function of the elements of a generator: `|x| body`, or a path to a `#[par_fn]`.
    pub(crate) fn map_function(
        &mut self,
        f: &Expr,
        element: Class,
    ) -> Result<(crate::plan::kernel_ir::DMap, Class), NotDevice> {
        match strip(f) {
            Expr::Closure(c) if c.inputs.len() == 1 => {
                let depth = self.locals.len();
                let result = (|| {
                    let pattern = self.bind_pattern(&c.inputs[0], element)?;
                    let body = self.expr(&c.body)?;
                    let class = body.class;
                    Ok((crate::plan::kernel_ir::DMap::Closure(pattern, body), class))
                })();
                self.locals.truncate(depth);
                result
            }
            Expr::Path(p) if p.qself.is_none() => {
                let id = match self.generic_call(p)? {
                    Some(id) => id,
                    None => self.ctx.par_fn(&p.path),
                };
                let param = self.ctx.class();
                self.ctx.constrain(Constraint::Param(param, id, 0));
                self.ctx.same(param, element);
                let class = self.ctx.class();
                self.ctx.constrain(Constraint::Return(class, id));
                Ok((crate::plan::kernel_ir::DMap::ParFn(id, class), class))
            }
            other => Err(not_device(
                other.span(),
                "maps with a function the device cannot see: write a closure or name a `#[par_fn]`",
                SUBSET,
            )),
        }
    }

    /// What indexing an element of `capture` needs: the index as a `usize`, the element's class
    /// and the bounds check's fault site.
    fn element_at(
        &mut self,
        index: &syn::ExprIndex,
        capture: CaptureId,
    ) -> Result<(DExpr, Class, FaultSite), NotDevice> {
        let i = self.expr(&index.index)?;
        let usize_class = self.ctx.prim(Prim::U64);
        self.ctx.same(i.class, usize_class);
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Element(class, capture));
        Ok((i, class, self.ctx.fault(text(index))))
    }

    fn index(&mut self, index: &syn::ExprIndex) -> Lowered {
        if let Some((var, capture)) = self.row_variable(&index.expr) {
            let row = DExpr { kind: DKind::Var(var), class: self.vars[var.0 as usize].class };
            let (i, class, site) = self.element_at(index, capture)?;
            return Ok(DExpr {
                kind: DKind::RowIndex(capture, Box::new(row), Box::new(i), site),
                class,
            });
        }
        if self.context == Context::Comprehension
            && self.invariant(&index.expr)
            && is_place(&index.expr)
        {
            let capture = self.ctx.capture(strip_ref(&index.expr), CaptureKind::Slice);
            let (i, class, site) = self.element_at(index, capture)?;
            return Ok(DExpr { kind: DKind::Index(capture, Box::new(i), site), class });
        }
        // Any other value indexed is an array `[T; N]` (a local, an element, a field, a
        // parameter): the runtime's types say whether it is one.
        self.array_index(index)
    }
}

/// Whether `expr` names a place of the caller: a path, or fields and references of one.
pub(crate) fn is_place(expr: &Expr) -> bool {
    match strip(expr) {
        Expr::Path(_) => true,
        Expr::Field(f) => is_place(&f.base),
        Expr::Reference(r) => is_place(&r.expr),
        Expr::Unary(syn::ExprUnary { op: syn::UnOp::Deref(_), expr, .. }) => is_place(expr),
        _ => false,
    }
}

/// `expr` without a leading `&`.
pub(crate) fn strip_ref(expr: &Expr) -> &Expr {
    match strip(expr) {
        Expr::Reference(r) => strip_ref(&r.expr),
        other => other,
    }
}

/// A short description of an expression's kind, for messages.
fn short(expr: &Expr) -> String {
    match expr {
        Expr::Array(_) => "an array literal".into(),
        Expr::Assign(_) => "an assignment".into(),
        Expr::Async(_) | Expr::Await(_) => "async code".into(),
        Expr::Break(_) => "`break`".into(),
        Expr::Continue(_) => "`continue`".into(),
        Expr::ForLoop(_) => "a `for` loop".into(),
        Expr::Loop(_) => "a `loop`".into(),
        Expr::While(_) => "a `while` loop".into(),
        Expr::Return(_) => "`return`".into(),
        Expr::Struct(_) => "a struct literal".into(),
        Expr::Try(_) => "the `?` operator".into(),
        Expr::Range(_) => "a range outside a generator".into(),
        Expr::Repeat(_) => "an array literal".into(),
        Expr::Unsafe(_) => "an `unsafe` block".into(),
        Expr::Let(_) => "`let` in an expression".into(),
        other => text(other),
    }
}

/// The value of a constant of `std` (a number's, or `char::MAX` and the like), as a literal
/// of `prim`.
fn constant_value(prim: Prim, name: &str) -> Option<Literal> {
    macro_rules! int {
        ($t:ty) => {
            match name {
                "MAX" => Some(Literal::Int(<$t>::MAX as u128)),
                "MIN" => Some(Literal::Int(<$t>::MIN as i128 as u64 as u128)),
                "BITS" => Some(Literal::Int(<$t>::BITS as u128)),
                _ => None,
            }
        };
    }
    macro_rules! float {
        ($t:ident) => {{
            use std::$t::consts as c;
            let v: $t = match name {
                "MAX" => $t::MAX,
                "MIN" => $t::MIN,
                "EPSILON" => $t::EPSILON,
                "MIN_POSITIVE" => $t::MIN_POSITIVE,
                "PI" => c::PI,
                "TAU" => c::TAU,
                "E" => c::E,
                "SQRT_2" => c::SQRT_2,
                "LN_2" => c::LN_2,
                "LN_10" => c::LN_10,
                "LOG2_E" => c::LOG2_E,
                "LOG10_E" => c::LOG10_E,
                "FRAC_PI_2" => c::FRAC_PI_2,
                "FRAC_PI_3" => c::FRAC_PI_3,
                "FRAC_PI_4" => c::FRAC_PI_4,
                "FRAC_PI_6" => c::FRAC_PI_6,
                "FRAC_PI_8" => c::FRAC_PI_8,
                "FRAC_1_PI" => c::FRAC_1_PI,
                "FRAC_2_PI" => c::FRAC_2_PI,
                "FRAC_2_SQRT_PI" => c::FRAC_2_SQRT_PI,
                "FRAC_1_SQRT_2" => c::FRAC_1_SQRT_2,
                _ => return None,
            };
            // `{:e}` prints the shortest decimal that reads back as the same value.
            Some(Literal::Float(format!("{v:e}")))
        }};
    }
    match prim {
        Prim::I8 => int!(i8),
        Prim::I16 => int!(i16),
        Prim::I32 => int!(i32),
        Prim::I64 => int!(i64),
        Prim::U8 => int!(u8),
        Prim::U16 => int!(u16),
        Prim::U32 => int!(u32),
        Prim::U64 => int!(u64),
        Prim::F32 => float!(f32),
        Prim::F64 => float!(f64),
        Prim::Char => match name {
            "MIN" => Some(Literal::Int(u32::from(char::MIN).into())),
            "MAX" => Some(Literal::Int(u32::from(char::MAX).into())),
            "REPLACEMENT_CHARACTER" => {
                Some(Literal::Int(u32::from(char::REPLACEMENT_CHARACTER).into()))
            }
            _ => None,
        },
        Prim::Bool => None,
    }
}

/// Whether `mac` is `::core::unreachable!(UNMATCHED)`, the arm the desugaring of a refutable
/// generator writes after its pattern (`match e { Some(v) => v, _ => unreachable!(..) }`): the
/// filter before it keeps only the elements that match, so the arm is never taken.
fn is_unmatched_arm(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| s.ident == "unreachable")
        && syn::parse2::<syn::LitStr>(mac.tokens.clone())
            .is_ok_and(|m| m.value() == crate::syntax::UNMATCHED)
}

/// Whether `pat` is a tuple pattern without `..` or `Some(p)` (`Option::Some(p)`): the
/// patterns of a `match` arm the device tests field by field.
fn is_structured(pat: &Pat) -> bool {
    match pat {
        Pat::Tuple(t) => !t.elems.iter().any(|p| matches!(p, Pat::Rest(_))),
        Pat::TupleStruct(s) => {
            let names: Vec<String> = s.path.segments.iter().map(|s| s.ident.to_string()).collect();
            s.qself.is_none()
                && s.elems.len() == 1
                && !matches!(s.elems[0], Pat::Rest(_))
                && matches!(names.as_slice(), [some] | [_, some] if some == "Some")
                && (names.len() == 1 || names[0] == "Option")
        }
        _ => false,
    }
}
