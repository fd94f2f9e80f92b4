//! The comprehension compiler of [parcomp](https://docs.rs/parcomp), as an ordinary library.
//!
//! ```text
//!                                                        ┌─▶ back/rust:   runtime calls
//! tokens ──syntax──▶ Comprehension ──analysis──▶ Plan ──┤
//!                                                        └─▶ back/kernel: kernel source
//! ```
//!
//! - [`syntax`]: splits `HEAD | QUALIFIERS` at its top-level `|` and parses generators
//!   (`PAT <- EXPR`), filters and `let`s;
//! - [`analysis`]: scopes and dependencies, `Size`/`Fetch` of each generator, the regular case,
//!   and the device form of every expression (or why it has none);
//! - [`plan`]: the one IR every writer reads ([`plan::Compiled`]), printable with
//!   [`plan::Compiled::explain`];
//! - [`back`]: the writers — `back::rust` (the chain of calls into `comprehension-runtime`, with
//!   the device half beside it) and `back::kernel` (the kernels, in parcomp's C dialect).
//!
//! Every stage collects all the errors it finds, each with a span and a help line, and the
//! macro reports them together as `compile_error!`s.

pub mod analysis;
pub mod back;
mod derive;
mod desugar;
pub mod error;
mod macros;
pub mod par_fn;
mod par_fn_impl;
pub mod plan;
pub mod syntax;
mod text;

pub use derive::derive_device_value;
pub use macros::Macro;
pub use plan::{Compiled, Plan, Terminal};
pub use text::text;

use error::Errors;
use proc_macro2::TokenStream;
use quote::quote;

/// The path of the runtime as the emitted code names it: the `parcomp` facade re-exports it,
/// under the name the calling crate gives `parcomp` in its `Cargo.toml` (it may rename it:
/// `pc = { package = "parcomp", ... }`).
pub fn runtime_path() -> TokenStream {
    let krate = match proc_macro_crate::crate_name("parcomp") {
        Ok(proc_macro_crate::FoundCrate::Name(name)) => {
            let name = syn::Ident::new(&name, proc_macro2::Span::call_site());
            quote! { ::#name }
        }
        // Inside `parcomp` itself (its doc tests, tests and examples), and where the manifest
        // cannot be read, the crate's own name: the facade declares `extern crate self as
        // parcomp`.
        Ok(proc_macro_crate::FoundCrate::Itself) | Err(_) => quote! { ::parcomp },
    };
    quote! { #krate::__rt }
}

/// Compiles a comprehension to its plan, or every error found in it.
pub fn compile(input: TokenStream, terminal: Terminal) -> Result<Compiled, syn::Error> {
    let mut errors = Errors::default();
    let input_text = text(&input);
    let plan = syntax::parse(input, &mut errors)
        .and_then(|c| analysis::analyze(c, terminal, input_text, &mut errors));
    errors.finish(())?;
    plan.ok_or_else(|| {
        syn::Error::new(
            proc_macro2::Span::call_site(),
            "parcomp internal error: no plan and no error",
        )
    })
}

/// Expands the macro `mac` of the `par!` family into runtime calls.
pub fn expand(mac: Macro, input: TokenStream) -> TokenStream {
    if is_use_marker(&input) {
        // Emitted by an enclosing comprehension that flattened this one (see `emit`).
        return TokenStream::new();
    }
    let markers = analysis::nested_macro_mentions(&input);
    let rt = runtime_path();
    let expanded = match mac {
        Macro::ParMinByKey | Macro::ParMaxByKey => by_key(mac, input, &rt),
        Macro::ParDevice => device_result(input, &rt),
        _ => expand_family(mac, mac, input, &rt),
    };
    match expanded {
        Ok(tokens) => tokens,
        Err(errors) => {
            // With the errors, still mention the nested macros, so that their imports do not
            // draw an extra "unused import" warning.
            let errors = error::to_compile_errors(errors);
            quote! { { #markers #errors } }
        }
    }
}

/// `par_device!`: a `par!` whose elements stay on the device when it runs there (a
/// `DeviceVec`). With transforms, whose last step runs on the host, the result is uploaded once.
fn device_result(input: TokenStream, rt: &TokenStream) -> Result<TokenStream, syn::Error> {
    if desugar::has_transforms(&input) && single_branch(&input) {
        let collected =
            desugar::expand(Macro::Par, Macro::ParDevice, TokenStream::new(), input, rt)?;
        return Ok(quote! { #rt::DeviceVec::from_vec(#collected) });
    }
    // The head's tokens (up to the first `|` outside any group), for an error pointing at them.
    let head: TokenStream = input
        .clone()
        .into_iter()
        .take_while(|t| !matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == '|'))
        .collect();
    let mut compiled = plan_of(Macro::Par, input).and_then(require_device)?;
    if compiled.plan.rows {
        return Err(error::error_spanned(
            head,
            "`par_device!` keeps its elements on the device, but this head is a nested `par!`: \
             its elements are rows (`Vec`s), which a device does not hold",
            "write `par!` for a `Vec<Vec<T>>`, or move the inner generators into the outer \
             comprehension to get the rows' values from one `par_device!`",
        ));
    }
    compiled.device_result = true;
    Ok(back::rust::emit(&compiled, rt))
}

/// A macro of the family other than the by-key ones: cut at its transforms if it has any,
/// else compiled and emitted whole. `written` is the macro the user wrote (`par_min_by_key!`
/// is compiled as `par_min!`): what the transforms' checks and messages are about.
fn expand_family(
    mac: Macro,
    written: Macro,
    input: TokenStream,
    rt: &TokenStream,
) -> Result<TokenStream, syn::Error> {
    let (prefix, rest) = if mac == Macro::ParReduce {
        let (op, identity, rest) = syntax::reduce_arguments(input.clone())?;
        (quote! { #op, #identity; }, rest)
    } else {
        (TokenStream::new(), input.clone())
    };
    if desugar::has_transforms(&rest) && single_branch(&rest) {
        return desugar::expand(mac, written, prefix, rest, rt);
    }
    let compiled = plan_of(mac, input).and_then(require_device)?;
    Ok(back::rust::emit(&compiled, rt))
}

/// Whether the comprehension has one branch of qualifiers (transforms need that; in parallel
/// branches the analysis reports them).
fn single_branch(input: &TokenStream) -> bool {
    syntax::split_top_level(input.clone()) <= 2
}

/// `par_min_by_key!(KEY; HEAD | QUALIFIERS)` and `par_max_by_key!`: the element whose key
/// `KEY(&element)` is least (the first of equals) or greatest (the last of equals), as
/// `Iterator::min_by_key`/`max_by_key`; keys compare as `OrderKey`s. Compiled as `par_min!` or
/// `par_max!` of `Keyed::of(HEAD, &KEY)`, which compares by key alone.
fn by_key(mac: Macro, input: TokenStream, rt: &TokenStream) -> Result<TokenStream, syn::Error> {
    let (key, rest) = syntax::by_key_arguments(mac, input)?;
    let (head, qualifiers) = syntax::split_head(rest);
    let keyed = quote! { #rt::Keyed::of(#head, &(#key)) | #qualifiers };
    let inner = if mac == Macro::ParMinByKey { Macro::ParMin } else { Macro::ParMax };
    let value = expand_family(inner, mac, keyed, rt)?;
    Ok(quote! { ::core::option::Option::map(#value, #rt::Keyed::into_value) })
}

/// `par_explain![HEAD | QUALIFIERS]`: the plan of the comprehension as a `&'static str`,
/// without running it. The variables it mentions are borrowed, so that they do not look
/// unused.
pub fn par_explain(input: TokenStream) -> TokenStream {
    let mentions = syntax::mentioned_variables(&input);
    let explained = if desugar::has_transforms(&input) && single_branch(&input) {
        desugar::explain(input, &runtime_path())
    } else {
        compile(input, Terminal::Collect).map(|compiled| compiled.explain())
    };
    match explained {
        Ok(explanation) => quote! { { #(let _ = &#mentions;)* #explanation } },
        Err(errors) => error::to_compile_errors(errors),
    }
}

/// `#[par_fn]`: keeps the function and makes it callable from device code (see [`par_fn`]).
pub fn par_fn_attribute(attr: TokenStream, item: TokenStream) -> TokenStream {
    par_fn::expand(attr, item, &runtime_path())
}

/// `par_kernel![HEAD | QUALIFIERS]`: the kernel source the device runs for the comprehension,
/// as a `&'static str` (empty, with a comment saying why, when it cannot run on a device).
pub fn par_kernel(input: TokenStream) -> TokenStream {
    match compile(input, Terminal::Collect) {
        Ok(compiled) => {
            let source = kernel_source(&compiled);
            quote! { #source }
        }
        Err(errors) => error::to_compile_errors(errors),
    }
}

/// The generated kernel source of a compiled comprehension (functions, then kernels).
pub fn kernel_source(compiled: &Compiled) -> String {
    if let Some(why) = compiled.device.not_device.first() {
        return format!("/* no kernels: the comprehension {} */\n", why.reason);
    }
    let root_range = match compiled.plan.steps.first().map(|s| &s.kind) {
        Some(plan::StepKind::Root(form)) => {
            analysis::device::generator::root_is_range(form) || compiled.device.root_rows.is_some()
        }
        _ => false,
    };
    let kernels = back::kernel::write(compiled, root_range);
    format!("{}\n{}", kernels.functions, kernels.kernels)
}

/// Under `@gpu`, every reason the device cannot run the comprehension is an error at the
/// offending tokens.
fn require_device(compiled: Compiled) -> Result<Compiled, syn::Error> {
    if !matches!(compiled.device.marker, plan::Marker::Gpu(_))
        || compiled.device.not_device.is_empty()
    {
        return Ok(compiled);
    }
    let mut errors = Errors::default();
    for why in &compiled.device.not_device {
        errors.push(error::error(
            why.span,
            format!("this comprehension is marked `@gpu`, but it {}", why.reason),
            &why.help,
        ));
    }
    errors.finish(compiled)
}

/// Whether `input` is `@used`: the mention of a macro whose comprehension an enclosing one
/// flattened.
fn is_use_marker(input: &TokenStream) -> bool {
    let tokens: Vec<proc_macro2::TokenTree> = input.clone().into_iter().collect();
    matches!(tokens.as_slice(), [proc_macro2::TokenTree::Punct(at), proc_macro2::TokenTree::Ident(used)]
        if at.as_char() == '@' && used == "used")
}

/// The plan of the macro `mac` of the family on `input`.
fn plan_of(mac: Macro, input: TokenStream) -> Result<Compiled, syn::Error> {
    if mac == Macro::ParReduce {
        let (op, identity, rest) = syntax::reduce_arguments(input)?;
        return compile(
            rest,
            Terminal::Reduce { op: Box::new(op), identity: Box::new(identity), device: None },
        );
    }
    let terminal =
        Terminal::of(mac).unwrap_or_else(|| panic!("`{mac}!` is compiled as another macro"));
    compile(input, terminal)
}

#[cfg(test)]
mod test_support {
    use crate::{compile, Terminal};
    use proc_macro2::TokenStream;

    /// Every error of compiling `input`, as `message\n= help: ...`.
    pub(crate) fn errors(input: TokenStream) -> Vec<String> {
        match compile(input, Terminal::Collect) {
            Ok(_) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }
}
