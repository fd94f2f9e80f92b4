//! Fixed-size arrays `[T; N]` in device code: literals (`[a, b, c]`, `[v; N]`), indexing
//! with a constant or a variable (checked against `N` as Rust checks it: the same fault, so
//! the same panic), `.len()`, `for` loops over an array's elements, and element assignment to
//! a `let mut` array (`acc[k] += v`).
//!
//! The macro does not see most arrays' types (an element of the caller's `Vec<[f32; 3]>`, a
//! struct's field, a `#[par_fn]`'s parameter), so every array node constrains its class with
//! [`Constraint::Array`], its length given when the syntax says it (`[a, b]`, `[v; 3]`,
//! `[f32; 3]`) and otherwise found in the types the runtime observes. `N` itself is written
//! in the kernels as `PC_OP(len, class)()`, a constant once the runtime declares the type.
//!
//! A captured array indexed in a comprehension (`w[i]` with `w` the caller's) is read as a
//! captured slice instead (see `Lower::index`): it is copied once, not once per element.

use super::{not_device, strip, text, Local, Lower, Lowered};
use crate::plan::kernel_ir::{
    BinOp, Class, Constraint, DExpr, DKind, DPat, DStmt, Literal, NotDevice, PlaceStep, Prim,
};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::Expr;

/// The length an array type or repeat expression writes, when it is an integer literal.
fn literal_length(len: &Expr) -> Option<u32> {
    match strip(len) {
        Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => n.base10_parse().ok(),
        _ => None,
    }
}

impl Lower<'_> {
    /// A new class: an array of `item` (of `len` elements when known).
    fn array_class(&mut self, item: Class, len: Option<u32>) -> Class {
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Array(class, item, len));
        class
    }

    /// The class of the array type `[T; N]` of a type annotation.
    pub(super) fn array_type(&mut self, ty: &syn::TypeArray) -> Result<Class, NotDevice> {
        let item = self.class_of_type(&ty.elem)?;
        Ok(self.array_class(item, literal_length(&ty.len)))
    }

    /// `[a, b, c]`: its elements are one type.
    pub(super) fn array_literal(&mut self, lit: &syn::ExprArray) -> Lowered {
        let items = lit.elems.iter().map(|e| self.expr(e)).collect::<Result<Vec<_>, _>>()?;
        let item = self.ctx.class();
        for i in &items {
            self.ctx.same(i.class, item);
        }
        let class = self.array_class(item, Some(items.len() as u32));
        Ok(DExpr { kind: DKind::Array(items), class })
    }

    /// `[v; N]`: `v` evaluated once, copied `N` times (`N` known here when it is a literal,
    /// else from the type the array meets).
    pub(super) fn array_repeat(&mut self, repeat: &syn::ExprRepeat) -> Lowered {
        let value = self.expr(&repeat.expr)?;
        let class = self.array_class(value.class, literal_length(&repeat.len));
        Ok(DExpr { kind: DKind::Repeat(Box::new(value)), class })
    }

    /// `a[i]` of an array value (a local, a parameter, an element, a field, a call's result):
    /// checked against its length.
    pub(super) fn array_index(&mut self, index: &syn::ExprIndex) -> Lowered {
        if let Expr::Range(range) = strip(&index.index) {
            return Err(not_device(
                range.span(),
                format!(
                    "takes the slice `{}` of an array, which the device does not have",
                    text(index)
                ),
                "index one element at a time (`a[i]`), or loop over the indices",
            ));
        }
        let array = self.expr(&index.expr)?;
        let i = self.expr(&index.index)?;
        let usize_class = self.ctx.prim(Prim::U64);
        self.ctx.same(i.class, usize_class);
        let class = self.ctx.class();
        self.ctx.constrain(Constraint::Array(array.class, class, None));
        let site = self.ctx.fault(text(index));
        Ok(DExpr { kind: DKind::ArrayIndex(Box::new(array), Box::new(i), Some(site)), class })
    }

    /// `const A: [f32; 5] = [..];` in a block (a table of coefficients, the usual case; any
    /// device type): a local of the annotated type, visible after it. Rust evaluates the
    /// value at compile time; the device computes the same value where it is declared.
    pub(super) fn const_item(&mut self, item: &syn::ItemConst) -> Result<DStmt, NotDevice> {
        let value = self.expr(&item.expr)?;
        let class = self.class_of_type(&item.ty)?;
        self.ctx.same(value.class, class);
        let name = item.ident.to_string();
        let id = self.ctx.local(&name, class);
        self.locals.push(Local::Value { name, id, class, mutable: false });
        Ok(DStmt::Let(DPat::Bind(id), value))
    }

    /// `[a, b, c]` in a `let` or a parameter: an array of exactly that many elements (a rest
    /// pattern `..` is refused: its elements' places depend on `N`).
    pub(super) fn array_pattern(
        &mut self,
        pat: &syn::PatSlice,
        class: Class,
    ) -> Result<DPat, NotDevice> {
        let item = self.ctx.class();
        self.ctx.constrain(Constraint::Array(class, item, Some(pat.elems.len() as u32)));
        let mut items = Vec::new();
        for elem in &pat.elems {
            if let syn::Pat::Rest(rest) = elem {
                return Err(not_device(
                    rest.span(),
                    "binds an array with a rest pattern `..`, which the device does not have",
                    "name every element (`let [x, y, z] = a;`), or index the array (`a[0]`)",
                ));
            }
            items.push(self.bind_pattern(elem, item)?);
        }
        Ok(DPat::Array(items))
    }

    /// The array a `for` loop iterates, when its syntax names one: `a`, `&a`, `a.iter()`,
    /// `a.into_iter()` (`a` a name or a field of one). Anything else is not an array loop.
    pub(super) fn looped_array(expr: &Expr) -> Option<&Expr> {
        fn named(expr: &Expr) -> bool {
            match strip(expr) {
                Expr::Path(p) => p.qself.is_none() && p.path.segments.len() == 1,
                Expr::Field(f) => named(&f.base),
                Expr::Reference(r) => named(&r.expr),
                _ => false,
            }
        }
        let expr = match strip(expr) {
            Expr::MethodCall(m)
                if m.args.is_empty() && (m.method == "iter" || m.method == "into_iter") =>
            {
                &*m.receiver
            }
            other => other,
        };
        named(expr).then_some(expr)
    }

    /// `for pat in a { body }` over an array: a counted loop over its indices, `pat` bound to
    /// each element in turn (read unchecked: the index is below `N`). The array is evaluated
    /// once, before the loop, as Rust evaluates the iterator.
    pub(super) fn array_for_loop(&mut self, f: &syn::ExprForLoop, array: &Expr) -> Lowered {
        let array = self.expr(array)?;
        let item = self.ctx.class();
        self.ctx.constrain(Constraint::Array(array.class, item, None));
        let array_class = array.class;
        let held = self.ctx.local("__parcomp_array", array_class);
        let usize_class = self.ctx.prim(Prim::U64);
        let index = self.ctx.local("__parcomp_index", usize_class);
        let depth = self.locals.len();
        let result = (|| {
            let pattern = self.bind_pattern(&f.pat, item)?;
            let body = self.block(&f.body)?;
            let held_expr = DExpr { kind: DKind::Local(held), class: array_class };
            let element = DExpr {
                kind: DKind::ArrayIndex(
                    Box::new(held_expr.clone()),
                    Box::new(DExpr { kind: DKind::Local(index), class: usize_class }),
                    None,
                ),
                class: item,
            };
            let body_class = body.class;
            let body = DExpr {
                kind: DKind::Block(vec![DStmt::Let(pattern, element)], Box::new(body)),
                class: body_class,
            };
            let start = DExpr { kind: DKind::Lit(Literal::Int(0)), class: usize_class };
            let end = DExpr { kind: DKind::ArrayLen(Box::new(held_expr)), class: usize_class };
            let looped = self.unit(DKind::For {
                local: index,
                start: Box::new(start),
                end: Box::new(end),
                inclusive: false,
                body: Box::new(body),
            });
            let class = looped.class;
            Ok(DExpr {
                kind: DKind::Block(vec![DStmt::Let(DPat::Bind(held), array)], Box::new(looped)),
                class,
            })
        })();
        self.locals.truncate(depth);
        result
    }

    /// The index of an assignment's target that reaches an array element (`a[i]`,
    /// `p.pos[k]`, `m[i][j].x`): the target itself if it is an index, else the innermost index
    /// under its fields. `None` for a target without one (`x`, `p.x`).
    pub(super) fn indexed_place(target: &Expr) -> Option<&Expr> {
        match strip(target) {
            Expr::Index(_) => Some(target),
            Expr::Field(f) => Self::indexed_place(&f.base).map(|_| target),
            _ => None,
        }
    }

    /// `a[i] = v`, `a[i] op= v`, `m[i][j] = v`, `p.pos[k] += v`: an element of an array
    /// inside a `let mut` local of the expression (through indices, struct fields and tuple
    /// fields), stored in place (`DKind::ArrayStore`: no copy of the array). `v` is evaluated
    /// first, then each index, outermost first, each checked (as a read of it is: the same
    /// fault and panic) before the next is evaluated, as Rust evaluates an assignment.
    pub(super) fn index_assignment(
        &mut self,
        target: &Expr,
        op: Option<BinOp>,
        value: &Expr,
        whole: &Expr,
    ) -> Result<DStmt, NotDevice> {
        // The place: a local, then its steps from the outermost.
        let mut steps = Vec::new();
        let mut base = strip(target).clone();
        loop {
            match base {
                Expr::Index(index) => {
                    base = strip(&index.expr).clone();
                    steps.push(Expr::Index(index));
                }
                Expr::Field(field) => {
                    base = strip(&field.base).clone();
                    steps.push(Expr::Field(field));
                }
                _ => break,
            }
        }
        steps.reverse();
        let name = match &base {
            Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
                p.path.segments[0].ident.to_string()
            }
            other => {
                return Err(not_device(
                    other.span(),
                    "assigns to an element of something other than a local array",
                    "the device assigns to elements of `let mut` arrays of its own blocks",
                ))
            }
        };
        let Some(k) = self.find_local(&name) else {
            return Err(not_device(
                base.span(),
                format!(
                    "assigns to an element of `{name}`, which is not a local of the expression"
                ),
                "the device assigns only to `let mut` variables of its own blocks",
            ));
        };
        let Local::Value { id, class, mutable: true, .. } = self.locals[k].clone() else {
            return Err(not_device(
                base.span(),
                format!("assigns to an element of `{name}`, which is not `mut`"),
                "declare it `let mut`",
            ));
        };
        let mut stmts = Vec::new();
        // The value, then each index, into locals of their own (each evaluated once).
        let value = self.expr(value)?;
        let value_class = value.class;
        let held_value = self.ctx.local("__parcomp_value", value_class);
        stmts.push(DStmt::Let(DPat::Bind(held_value), value));
        let usize_class = self.ctx.prim(Prim::U64);
        let mut element = DExpr { kind: DKind::Local(id), class };
        let mut path = Vec::new();
        let last_index = steps.iter().rposition(|s| matches!(s, Expr::Index(_)));
        for (n, step) in steps.iter().enumerate() {
            let item = self.ctx.class();
            let kind = match step {
                Expr::Field(f) => match &f.member {
                    syn::Member::Named(name) => {
                        let name = name.unraw().to_string();
                        self.ctx.constrain(Constraint::Member(element.class, name.clone(), item));
                        path.push(PlaceStep::Member(name.clone()));
                        DKind::Member(Box::new(element), name)
                    }
                    syn::Member::Unnamed(index) => {
                        self.ctx.constrain(Constraint::Field(element.class, index.index, item));
                        path.push(PlaceStep::Field(index.index));
                        DKind::Field(Box::new(element), index.index)
                    }
                },
                Expr::Index(index) => {
                    if let Expr::Range(range) = strip(&index.index) {
                        return Err(not_device(
                            range.span(),
                            "assigns to a slice of an array, which the device does not have",
                            "assign one element at a time (`a[i] = v`)",
                        ));
                    }
                    let i = self.expr(&index.index)?;
                    self.ctx.same(i.class, usize_class);
                    let held = self.ctx.local("__parcomp_index", usize_class);
                    stmts.push(DStmt::Let(DPat::Bind(held), i));
                    let site = self.ctx.fault(text(index));
                    self.ctx.constrain(Constraint::Array(element.class, item, None));
                    let i = DExpr { kind: DKind::Local(held), class: usize_class };
                    path.push(PlaceStep::Index(i.clone(), element.class, site));
                    let kind = DKind::ArrayIndex(Box::new(element), Box::new(i), Some(site));
                    // Checked now, before the next index is evaluated, as Rust checks `m[i]`
                    // of `m[i][j]` before it evaluates `j` (the last index is checked by the
                    // store, or by the read of `op=`, before anything else runs).
                    if Some(n) != last_index {
                        stmts.push(DStmt::Expr(DExpr { kind: kind.clone(), class: item }));
                    }
                    kind
                }
                _ => unreachable!("a place is indices and fields"),
            };
            element = DExpr { kind, class: item };
        }
        let held_value = DExpr { kind: DKind::Local(held_value), class: value_class };
        let new = match op {
            None => {
                self.ctx.same(value_class, element.class);
                held_value
            }
            Some(op) => {
                if !matches!(op, BinOp::Shl | BinOp::Shr) {
                    self.ctx.same(value_class, element.class);
                }
                let site = op.faults().then(|| self.ctx.fault(text(whole)));
                let class = element.class;
                DExpr {
                    kind: DKind::Binary(op, Box::new(element), Box::new(held_value), site),
                    class,
                }
            }
        };
        let store = self.unit(DKind::ArrayStore { local: id, path, value: Box::new(new) });
        let class = store.class;
        Ok(DStmt::Expr(DExpr { kind: DKind::Block(stmts, Box::new(store)), class }))
    }
}
