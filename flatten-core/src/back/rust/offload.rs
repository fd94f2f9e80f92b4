//! The device half of the emitted code: the kernels' static plan, and the observations of the
//! call site that the runtime needs to run them.
//!
//! ```text
//! static __PARCOMP_DEVICE: rt::gpu::DevicePlan = rt::gpu::DevicePlan { kernels: "...", .. };
//! let __parcomp_capture_0 = &(n);                       // every value the kernels read
//! let __parcomp_captures = [(&&&rt::Probe::of(__parcomp_capture_0)).capture_scalar(..)];
//! let __parcomp_offload = rt::Offload::new(&__PARCOMP_DEVICE, root, &__parcomp_captures, ..);
//! ```
//!
//! Whether a value can be on the device is decided by autoref dispatch on its `Probe` (see the
//! runtime's `gpu::offload`), so a value the device cannot hold makes the comprehension run on
//! the CPU instead of stopping the program from compiling. Under `@gpu` the emitted code also
//! requires each value's type to be a device type, at the value's own tokens.

use crate::analysis::device::generator::root_is_range;
use crate::back::kernel::{self, CompManifest, ReduceKind, TerminalManifest};
use crate::plan::kernel_ir::{CaptureId, CaptureKind, Class, Constraint, ParFnId, Prim};
use crate::plan::{Compiled, Marker, StepKind};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Ident;

/// The items to emit after the chain is bound to `run`, and the `Offload` value for its
/// terminal.
pub(super) fn emit(
    compiled: &Compiled,
    rt: &TokenStream,
    root: &Ident,
    run: &Ident,
) -> (TokenStream, TokenStream) {
    let unit = &compiled.device;
    if let Some(reason) = unit.not_device.first() {
        let why = reason.reason.clone();
        return (TokenStream::new(), quote! { #rt::Offload::host_only(#why) });
    }
    let root_range = match compiled.plan.steps.first().map(|s| &s.kind) {
        Some(StepKind::Root(form)) => root_is_range(form) || unit.root_rows.is_some(),
        _ => false,
    };
    let kernels = kernel::write(compiled, root_range);
    let plan_name = Ident::new("__PARCOMP_DEVICE", Span::mixed_site());
    let plan = device_plan(compiled, &kernels, rt);
    let required = matches!(unit.marker, Marker::Gpu(_));

    // The site, registered so that `parcomp::kernels::missing()` knows every device-capable
    // comprehension of the binary when it links.
    let site = Ident::new("__PARCOMP_SITE", Span::mixed_site());
    let mut items = quote! {
        static #plan_name: #rt::gpu::DevicePlan = #plan;
        #rt::inventory::submit! { #rt::DeviceSite::new(&#site) }
        #[allow(unused_imports)]
        use #rt::probe::*;
    };
    let mut probes = Vec::new();
    for (k, capture) in unit.captures.iter().enumerate() {
        let name = format_ident!("__parcomp_capture_{}", k, span = Span::mixed_site());
        let expr = &capture.expr;
        let span = capture.expr.span();
        items.extend(quote_spanned! {span=> let #name = &(#expr); });
        let (method, require) = match capture.kind {
            CaptureKind::Scalar => (quote! { capture_scalar }, quote! { require_scalar }),
            CaptureKind::Slice => (quote! { capture_slice }, quote! { require_slice }),
            CaptureKind::Jagged => (quote! { capture_jagged }, quote! { require_jagged }),
        };
        let refs = if capture.kind == CaptureKind::Scalar {
            quote! { &&& }
        } else {
            quote! { && }
        };
        probes.push(quote! { (#refs #rt::Probe::of(#name)).#method(#name) });
        if required {
            items.extend(quote_spanned! {span=> #rt::#require(#name); });
        }
    }
    let captures = Ident::new("__parcomp_captures", Span::mixed_site());
    items.extend(quote! { let #captures = [#(#probes),*]; });

    let root_probe = if unit.root_rows.is_some() {
        quote! { (&&#rt::Probe::of(&#root)).root_rows(&#root) }
    } else if root_range {
        quote! { (&&#rt::Probe::of(&#root)).root_range(&#root) }
    } else {
        quote! { (&&#rt::Probe::of(&#root)).root_elements(&#root) }
    };
    if required {
        let span = compiled.plan.steps.first().map_or_else(Span::call_site, |s| s.span);
        let require = if root_range {
            quote! { require_range }
        } else {
            quote! { require_elements }
        };
        // The checks take one identifier located at the user's tokens, so that a failed bound
        // points at the generator or the head, not at the whole macro.
        let root_ref = Ident::new("__parcomp_required_root", Span::mixed_site().located_at(span));
        items.extend(quote! { let #root_ref = &#root; });
        items.extend(quote_spanned! {span=> #rt::#require(#root_ref); });
        let head_span = compiled.plan.head.expr.span();
        let run_ref =
            Ident::new("__parcomp_required_run", Span::mixed_site().located_at(head_span));
        items.extend(quote! { let #run_ref = &#run; });
        if compiled.plan.rows {
            items.extend(quote_spanned! {head_span=> #rt::require_rows_output(#run_ref); });
        } else {
            items.extend(quote_spanned! {head_span=> #rt::require_output(#run_ref); });
        }
    }
    if required {
        for (k, callee) in unit.par_fns.iter().enumerate() {
            // An associated function (`Point::new`) cannot be imported to be checked; it and
            // a method are found when the comprehension runs.
            if let crate::analysis::device::Callee::Path(path)
            | crate::analysis::device::Callee::Generic(path) = callee
            {
                if !crate::par_fn::names_associated_item(path) {
                    items.extend(require_par_fn(path, k, rt));
                }
            }
        }
    }
    let par_fns = Ident::new("__parcomp_par_fns", Span::mixed_site());
    let names = unit.par_fns.iter().map(|callee| callee.name(rt));
    items.extend(quote! { let #par_fns = [#(#names),*]; });
    let output = Ident::new("__parcomp_output", Span::mixed_site());
    items.extend(quote! { let #output = (&&&#run.output_probe()).output_codec(); });
    let offload = quote! {
        #rt::Offload::new(
            &#plan_name,
            #root_probe,
            &#captures,
            &#par_fns,
            #output,
            #required,
        )
    };
    (items, offload)
}

/// The static `DevicePlan`.
fn device_plan(compiled: &Compiled, kernels: &kernel::Kernels, rt: &TokenStream) -> TokenStream {
    let unit = &compiled.device;
    let gpu = quote! { #rt::gpu };
    let text = format!("{}![{}]", compiled.plan.terminal.as_macro(), compiled.plan.text);
    let functions = &kernels.functions;
    let source = &kernels.kernels;
    let classes = unit.classes;
    let constraints = unit.constraints.iter().map(|c| constraint(c, &gpu));
    let vars = compiled.vars.iter().map(|v| v.class.0);
    let captures = unit.captures.iter().map(|c| {
        let text = &c.text;
        let kind = match c.kind {
            CaptureKind::Scalar => quote! { Scalar },
            CaptureKind::Slice => quote! { Slice },
            CaptureKind::Jagged => quote! { Jagged },
        };
        quote! { #gpu::CaptureInfo { text: #text, kind: #gpu::CaptureKind::#kind } }
    });
    let faults = &unit.faults;
    let root = if kernels.manifest.root_range {
        quote! { Range }
    } else {
        quote! { Elements }
    };
    let reductions = kernels.manifest.reductions.iter().map(|r| {
        let name = &r.name;
        let acc = r.acc.0;
        quote! { #gpu::ReductionInfo { name: #name, acc: #acc } }
    });
    let comp = comp(&kernels.manifest.comp, &gpu);
    quote! {
        #gpu::DevicePlan {
            text: #text,
            functions: #functions,
            kernels: #source,
            classes: #classes,
            constraints: &[#(#constraints),*],
            vars: &[#(#vars),*],
            captures: &[#(#captures),*],
            faults: &[#(#faults),*],
            root: #gpu::RootKind::#root,
            reductions: &[#(#reductions),*],
            comp: #comp,
        }
    }
}

fn comp(m: &CompManifest, gpu: &TokenStream) -> TokenStream {
    let levels = m.levels.iter().map(|l| {
        let kernel = &l.kernel;
        let size = match &l.size_kernel {
            Some(s) => quote! { Some(#s) },
            None => quote! { None },
        };
        let regular = l.regular;
        let filters = l.filters;
        let reads = match l.reads {
            Some(c) => {
                let c = c.0;
                quote! { Some(#c) }
            }
            None => quote! { None },
        };
        let rows_of = match l.rows_of {
            Some(k) => quote! { Some(#k) },
            None => quote! { None },
        };
        let rows_kernel = match &l.rows_kernel {
            Some(k) => {
                let (name, reads_parents, header) = (&k.name, k.reads_parents, k.header_arguments);
                quote! {
                    Some(#gpu::RowsKernel {
                        name: #name,
                        reads_parents: #reads_parents,
                        header_arguments: #header,
                    })
                }
            }
            None => quote! { None },
        };
        let inputs = l.inputs.iter().map(|v| v.0);
        let outputs = l.outputs.iter().map(|v| v.0);
        let gathers = l.gathers.iter().map(|g| {
            let (capture, class) = (g.capture, g.class.0);
            quote! { #gpu::Gather { capture: #capture, class: #class } }
        });
        quote! {
            #gpu::Level {
                kernel: #kernel,
                size_kernel: #size,
                regular: #regular,
                filters: #filters,
                reads: #reads,
                rows_of: #rows_of,
                rows_kernel: #rows_kernel,
                gathers: &[#(#gathers),*],
                inputs: &[#(#inputs),*],
                outputs: &[#(#outputs),*],
            }
        }
    });
    let nested = m.nested.iter().map(|n| {
        let comp = comp(&n.comp, gpu);
        let result = n.result.0;
        let inputs = n.inputs.iter().map(|v| v.0);
        quote! { #gpu::NestedComp { comp: &#comp, result: #result, inputs: &[#(#inputs),*] } }
    });
    let head_kernel = match &m.head_kernel {
        Some(k) => quote! { Some(#k) },
        None => quote! { None },
    };
    let head_inputs = m.head_inputs.iter().map(|v| v.0);
    let head_result = match m.head_result {
        Some(k) => quote! { Some(#k) },
        None => quote! { None },
    };
    let head_class = m.head_class.0;
    let terminal = match &m.terminal {
        TerminalManifest::Collect => quote! { #gpu::Terminal::Collect },
        TerminalManifest::Rows => quote! { #gpu::Terminal::Rows },
        TerminalManifest::Reduce { reduction, kind } => {
            let kind = match kind {
                ReduceKind::Value => quote! { #gpu::ReduceKind::Value },
                ReduceKind::Optional => quote! { #gpu::ReduceKind::Optional },
                ReduceKind::Count => quote! { #gpu::ReduceKind::Count },
                ReduceKind::Flag { stop } => quote! { #gpu::ReduceKind::Flag { stop: #stop } },
            };
            quote! { #gpu::Terminal::Reduce { reduction: #reduction, kind: #kind } }
        }
    };
    quote! {
        #gpu::Comp {
            levels: &[#(#levels),*],
            nested: &[#(#nested),*],
            head_kernel: #head_kernel,
            head_inputs: &[#(#head_inputs),*],
            head_result: #head_result,
            head_class: #head_class,
            terminal: #terminal,
        }
    }
}

fn prim(p: Prim, gpu: &TokenStream) -> TokenStream {
    let variant = Ident::new(p.variant(), Span::call_site());
    quote! { #gpu::Prim::#variant }
}

/// A constraint in the contract's `Static` form, as the runtime reads it (`gpu` the path of the
/// runtime's plan types): the ids by number, a tuple's classes in a static slice.
pub(crate) fn constraint(c: &Constraint, gpu: &TokenStream) -> TokenStream {
    let ty = quote! { #gpu::Constraint };
    match c {
        Constraint::Same(a, b) => quote! { #ty::Same(#a, #b) },
        Constraint::Prim(a, p) => {
            let p = prim(*p, gpu);
            quote! { #ty::Prim(#a, #p) }
        }
        Constraint::Integer(a) => quote! { #ty::Integer(#a) },
        Constraint::Float(a) => quote! { #ty::Float(#a) },
        Constraint::Tuple(a, items) => quote! { #ty::Tuple(#a, &[#(#items),*]) },
        Constraint::Field(a, n, b) => quote! { #ty::Field(#a, #n, #b) },
        Constraint::Member(a, name, b) => quote! { #ty::Member(#a, #name, #b) },
        Constraint::Variant(a, name) => quote! { #ty::Variant(#a, #name) },
        Constraint::Named(a, name) => quote! { #ty::Named(#a, #name) },
        Constraint::Option(a, b) => quote! { #ty::Option(#a, #b) },
        Constraint::Array(a, b, n) => {
            let n = match n {
                Some(n) => quote! { ::core::option::Option::Some(#n) },
                None => quote! { ::core::option::Option::None },
            };
            quote! { #ty::Array(#a, #b, #n) }
        }
        Constraint::Capture(a, n) => quote! { #ty::Capture(#a, #n) },
        Constraint::Element(a, n) => quote! { #ty::Element(#a, #n) },
        Constraint::Root(a) => quote! { #ty::Root(#a) },
        Constraint::Output(a) => quote! { #ty::Output(#a) },
        Constraint::Unsigned(a, b) => quote! { #ty::Unsigned(#a, #b) },
        Constraint::Param(a, f, n) => quote! { #ty::Param(#a, #f, #n) },
        Constraint::Return(a, f) => quote! { #ty::Return(#a, #f) },
        Constraint::Builtin(f, a, b) => quote! { #ty::Builtin(#f, #a, #b) },
        Constraint::TypeArg(a, f, j) => quote! { #ty::TypeArg(#a, #f, #j) },
    }
}

/// The macro's ids emitted as the numbers they wrap (`Class(3)` is `3u32`).
macro_rules! id_tokens {
    ($($id:ty),*) => {$(
        impl ToTokens for $id {
            fn to_tokens(&self, tokens: &mut TokenStream) {
                self.0.to_tokens(tokens)
            }
        }
    )*};
}
id_tokens!(Class, CaptureId, ParFnId);

/// Under `@gpu`: the check that the function at `path` is a `#[par_fn]`, an error at the call
/// naming the function otherwise.
///
/// Only a `#[par_fn]` has a type of its name (the braced struct twin implementing `ParFn`). The
/// inner `use` imports whatever `path` names — the function, and the twin when there is one —
/// without failing when there is no type; the outer block names a fallback struct of the
/// function's own name, found only when the inner import has no type. The fallback does not
/// implement `ParFn`, so an unmarked function is `ParFn`'s own error, "`cube` is not marked
/// `#[par_fn]`", with its note, at the call.
///
/// ```text
/// {
///     mod __parcomp_fallback_0 { pub struct cube; }
///     use __parcomp_fallback_0::cube as __parcomp_fn_0;
///     {
///         use cube as __parcomp_fn_0;     // value only, or value and twin
///         <__parcomp_fn_0 as ParFn>::required();
///     }
/// }
/// ```
fn require_par_fn(path: &syn::Path, k: usize, rt: &TokenStream) -> TokenStream {
    let span = path.span();
    let mut plain = path.clone();
    for segment in &mut plain.segments {
        segment.arguments = syn::PathArguments::None;
    }
    let name = &plain.segments.last().expect("a path has a segment").ident;
    // Located at the call, so that the error points there and not at the whole macro.
    let at_call = Span::mixed_site().located_at(span);
    let fallback = format_ident!("__parcomp_fallback_{k}", span = at_call);
    let alias = format_ident!("__parcomp_fn_{k}", span = at_call);
    let par_fn = Ident::new("__parcomp_ParFn", at_call);
    quote_spanned! {at_call=>
        {
            #[allow(non_camel_case_types, dead_code)]
            mod #fallback {
                pub struct #name;
            }
            #[allow(unused_imports)]
            use #fallback::#name as #alias;
            use #rt::ParFn as #par_fn;
            {
                #[allow(unused_imports)]
                use #plain as #alias;
                <#alias as #par_fn>::required();
            }
        }
    }
}
