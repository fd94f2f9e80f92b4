//! `par_explain!`: the plan as a table a person can read.

use super::{Compiled, Plan, Prelude, StepKind, Terminal};
use crate::plan::kernel_ir::VarId;
use crate::text::text;
use std::fmt::Write;

impl Compiled {
    /// The plan as text (see `Plan::explain_with`), and where it runs: on a device when one is
    /// present, or on the CPU and why.
    pub fn explain(&self) -> String {
        let names = |vars: &[VarId]| -> String {
            vars.iter()
                .map(|v| self.vars[v.0 as usize].name.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = self.plan.explain_with(&names);
        let methods: Vec<String> = self
            .device
            .par_fns
            .iter()
            .filter_map(|c| match c {
                // A numeric method's name (`x.abs()`) serves a number as well.
                crate::analysis::device::Callee::Method(name)
                    if !crate::analysis::device::methods::is_known(name) =>
                {
                    Some(format!("`.{name}()`"))
                }
                _ => None,
            })
            .collect();
        let device = match self.device.not_device.first() {
            None if methods.is_empty() => {
                "device   runs on a device when one is present and the work is large enough"
                    .to_string()
            }
            None if methods.len() == 1 => format!(
                "device   runs on a device when one is present and the work is large enough, \
                 once {} is found in the `#[par_fn] impl` block of its receiver's type (looked \
                 up when it runs)",
                methods[0]
            ),
            None => format!(
                "device   runs on a device when one is present and the work is large enough, \
                 once {} are found in the `#[par_fn] impl` blocks of their receivers' types \
                 (looked up when it runs)",
                methods.join(", ")
            ),
            Some(why) => format!("device   no: {}", why.reason),
        };
        let _ = writeln!(out, "  {device}");
        out
    }
}

impl Plan {
    /// The plan as text: one line per stage, with what each stage depends on.
    ///
    /// ```text
    /// par![(x, y, z) | x <- 1..n, y <- x..n, z <- y..x + y, z < n, x * x + y * y == z * z]
    ///   source   x <- 1..n
    ///   expand   y <- x..n            size depends on x
    ///   expand   z <- y..x + y        size depends on x, y
    ///   filter   z < n
    ///   filter   x * x + y * y == z * z
    ///   map      (x, y, z)
    ///   collect  Vec in nested-loop order
    /// ```
    pub(crate) fn explain_with(&self, names: &dyn Fn(&[VarId]) -> String) -> String {
        let mut rows: Vec<(String, String, String)> = Vec::new();
        for prelude in &self.prelude {
            if let Prelude::Let { pat, expr } = prelude {
                rows.push((
                    "once".into(),
                    format!("let {} = {}", text(pat), text(expr)),
                    "evaluated before the comprehension runs".into(),
                ));
            }
        }
        for step in &self.steps {
            let note = match &step.kind {
                StepKind::Root(_) => "evaluated once, split across threads".to_string(),
                StepKind::Zip(_) => "branches zipped, truncated to the shortest".to_string(),
                StepKind::Product(form) if form.maps.is_empty() || step.uses.is_empty() => {
                    "regular: the same for every context, evaluated once".to_string()
                }
                StepKind::Product(_) => {
                    format!("regular size; elements use {}", names(&step.uses))
                }
                StepKind::Expand(_) => format!("size depends on {}", names(&step.uses)),
                StepKind::Filter(_) | StepKind::Let(_) if step.uses.is_empty() => String::new(),
                StepKind::Filter(_) | StepKind::Let(_) => format!("uses {}", names(&step.uses)),
            };
            rows.push((step.kind.name().into(), step.text.clone(), note));
        }
        // The nested comprehensions' results are named `nested_k` here, as in the head.
        let mut head = text(&self.head.expr);
        for (k, nested) in self.nested.iter().enumerate() {
            let inner = &nested.plan;
            head = head.replace(&nested.name.to_string(), &format!("nested_{k}"));
            rows.push((
                "nested".into(),
                format!("nested_{k} = {}![{}]", inner.terminal.as_macro(), inner.text),
                format!("{} per element, inside this run", inner.terminal.describe()),
            ));
        }
        rows.push(("map".into(), head, String::new()));
        let last = if matches!(self.terminal, Terminal::Collect) { "collect" } else { "reduce" };
        rows.push((last.into(), self.terminal.describe(), String::new()));

        let width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
        let mut out = format!("{}![{}]\n", self.terminal.as_macro(), self.text);
        for (kind, what, note) in rows {
            let line = format!("  {kind:<8} {what:<width$}  {note}");
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }
}
