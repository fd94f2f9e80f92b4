//! Generators on the device: where the elements of each level come from.
//!
//! The first generator's elements come from the host: an integer or `char` range is computed on
//! the device from its start and length, any other source is read on the host and copied (with
//! its `step_by`, `rev` and `map`s, which the host applies). Every later generator is read on the
//! device: ranges (with `step_by`, `rev` and `map`s), collections of the caller read by index,
//! and rows of the caller's arrays of rows (`m.row(i)`, `rows[x]`).

use super::lower::{strip_ref, Lower};
use super::not_device;
use crate::analysis::generator::{Form, IndexSource, PlaceOp, PlaceRoot};
use crate::plan::kernel_ir::{CaptureKind, Constraint, DGenerator, DSource, NotDevice, Prim};
use crate::text::text;
use syn::spanned::Spanned;
use syn::Expr;

const SUBSET: &str =
    "write `i <- 0..m.len(), v <- m.row(i)`, or `row <- &m, v <- row` with `m` an \
    array of rows of the caller (`Jagged`, `Vec<Vec<T>>`)";

/// The device form of a generator. `root`: the comprehension's first generator.
pub(crate) fn lower(
    lower: &mut Lower<'_>,
    form: &Form,
    root: bool,
    whole: &Expr,
) -> Result<DGenerator, NotDevice> {
    if root {
        let class = lower.ctx.class();
        lower.ctx.constrain(Constraint::Root(class));
        return Ok(DGenerator { source: DSource::Root { class }, maps: Vec::new(), class });
    }
    let (source, mut class) = index_source(lower, &form.source, whole)?;
    let mut maps = Vec::new();
    for f in &form.maps {
        let (map, out) = lower.map_function(f, class)?;
        maps.push(map);
        class = out;
    }
    Ok(DGenerator { source, maps, class })
}

/// The device form of a generator whose variable holds a row of an array of rows of the caller
/// (`row <- &m` when a later generator reads `row`): its elements are the row indices. `None`
/// if the generator is not a collection of the caller.
pub(crate) fn lower_rows(
    lower: &mut Lower<'_>,
    form: &Form,
    root: bool,
) -> Option<(DGenerator, crate::plan::kernel_ir::CaptureId)> {
    if !form.maps.is_empty() {
        return None;
    }
    let expr: Expr = match &form.source {
        IndexSource::Collection(e) => strip_ref(e).clone(),
        IndexSource::Hoisted(name) => syn::parse_quote!(#name),
        _ => return None,
    };
    let capture = lower.ctx.capture(&expr, CaptureKind::Jagged);
    let class = lower.ctx.prim(Prim::U64);
    let source = if root {
        lower.ctx.constrain(Constraint::Root(class));
        DSource::Root { class }
    } else {
        DSource::RowIndices { capture, class }
    };
    Some((DGenerator { source, maps: Vec::new(), class }, capture))
}

/// Whether the first generator is a plain integer or `char` range, computed on the device.
pub(crate) fn root_is_range(form: &Form) -> bool {
    form.maps.is_empty() && matches!(form.source, IndexSource::Range { .. })
}

fn index_source(
    lower: &mut Lower<'_>,
    source: &IndexSource,
    whole: &Expr,
) -> Result<(DSource, crate::plan::kernel_ir::Class), NotDevice> {
    match source {
        IndexSource::Range { start, end, inclusive } => {
            let start = lower.expr(start)?;
            let end = lower.expr(end)?;
            lower.ctx.same(start.class, end.class);
            let class = start.class;
            let fault = lower.ctx.fault(text(whole));
            Ok((DSource::Range { start, end, inclusive: *inclusive, class, fault }, class))
        }
        IndexSource::StepBy { inner, step } => {
            let (inner, class) = index_source(lower, inner, whole)?;
            let step = lower.expr(step)?;
            let usize_class = lower.ctx.prim(Prim::U64);
            lower.ctx.same(step.class, usize_class);
            let fault = lower.ctx.fault(text(whole));
            Ok((DSource::StepBy { inner: Box::new(inner), step, fault }, class))
        }
        IndexSource::Rev { inner } => {
            let (inner, class) = index_source(lower, inner, whole)?;
            Ok((DSource::Rev { inner: Box::new(inner) }, class))
        }
        IndexSource::Collection(expr) => collection(lower, expr),
        IndexSource::Hoisted(name) => collection(lower, &syn::parse_quote!(#name)),
        IndexSource::Place(place) if place.ops.is_empty() => {
            // `v <- row`, where `row` holds a row of an array of rows of the caller.
            let PlaceRoot::Bound(name) = &place.root else {
                return Err(not_device(whole.span(), "reads a place the device cannot", SUBSET));
            };
            let Some((var, capture)) = lower.row_variable(&syn::parse_quote!(#name)) else {
                return Err(not_device(
                    name.span(),
                    format!(
                        "reads the elements of `{name}`, which the device does not hold as a row"
                    ),
                    SUBSET,
                ));
            };
            let row = crate::plan::kernel_ir::DExpr {
                kind: crate::plan::kernel_ir::DKind::Var(var),
                class: lower.var_class(var),
            };
            let class = lower.ctx.class();
            lower.ctx.constrain(Constraint::Element(class, capture));
            let fault = lower.ctx.fault(text(whole));
            Ok((DSource::Row { capture, row, class, fault }, class))
        }
        IndexSource::Place(place) => {
            let row = match place.ops.as_slice() {
                [PlaceOp::Index(row)] | [PlaceOp::Row(row)] => row,
                _ => return Err(not_device(
                    whole.span(),
                    format!("reads the generator `{}` from a place the device cannot", text(whole)),
                    "the device reads rows `rows[x]` and `m.row(i)` of an array of rows of the \
                         caller (`Jagged`, `Vec<Vec<T>>`)",
                )),
            };
            let base: Expr =
                match &place.root {
                    PlaceRoot::Invariant(e) => strip_ref(e).clone(),
                    PlaceRoot::Hoisted(name) => syn::parse_quote!(#name),
                    PlaceRoot::Bound(name) => return Err(not_device(
                        name.span(),
                        format!(
                            "reads the rows of `{name}`, a variable of the comprehension; the \
                             device reads rows of arrays of the caller"
                        ),
                        "write `i <- 0..m.len(), v <- m.row(i)` instead of `row <- &m, v <- row`",
                    )),
                };
            let capture = lower.ctx.capture(&base, CaptureKind::Jagged);
            let row = lower.expr(row)?;
            let usize_class = lower.ctx.prim(Prim::U64);
            lower.ctx.same(row.class, usize_class);
            let class = lower.ctx.class();
            lower.ctx.constrain(Constraint::Element(class, capture));
            let fault = lower.ctx.fault(text(whole));
            Ok((DSource::Row { capture, row, class, fault }, class))
        }
    }
}

/// A collection of the caller, read by index.
fn collection(
    lower: &mut Lower<'_>,
    expr: &Expr,
) -> Result<(DSource, crate::plan::kernel_ir::Class), NotDevice> {
    let capture = lower.ctx.capture(strip_ref(expr), CaptureKind::Slice);
    let class = lower.ctx.class();
    lower.ctx.constrain(Constraint::Element(class, capture));
    Ok((DSource::Slice { capture, class }, class))
}
