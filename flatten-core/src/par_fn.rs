//! `#[par_fn]`: a Rust function that device code can call.
//!
//! The function is kept as written, and its body is also compiled for the device — with the
//! device subset of comprehension expressions, where its parameters are the locals and the
//! numeric constants of `std` the only outside values — into one C function of the kernel
//! dialect. Its types are classes, as in a comprehension; the runtime solves them from the
//! function's signature (`<Line as DeviceType>::desc()`, so type aliases work).
//!
//! Beside the function, the expansion registers an entry (through `inventory`, keyed by the
//! function's path, which the comprehensions calling it find with `type_name_of_val`), and
//! declares a braced struct of the same name in the type namespace, which `use` imports with
//! the function and which `@gpu` comprehensions require to be there.

use crate::analysis::device::lower::Lower;
use crate::analysis::device::DeviceCtx;
use crate::back::kernel::Body;
use crate::back::kernel::ExprWriter;
use crate::error::error_spanned;
use crate::plan::kernel_ir::{Constraint, NotDevice};
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

/// Expands `#[par_fn]` on `item` (with `attr` its arguments, which must be empty).
pub fn expand(attr: TokenStream, item: TokenStream, rt: &TokenStream) -> TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            if let Ok(block) = syn::parse2::<syn::ItemImpl>(item.clone()) {
                if !attr.is_empty() {
                    let e =
                        error_spanned(&attr, "`#[par_fn]` takes no arguments", "write `#[par_fn]`")
                            .to_compile_error();
                    return quote! { #block #e };
                }
                return crate::par_fn_impl::expand(block, rt);
            }
            let e = error_spanned(
                &item,
                "`#[par_fn]` applies to a function or an `impl` block",
                "mark a free function, `#[par_fn] fn f(x: f32) -> f32 { ... }`, or a type's \
                 methods, `#[par_fn] impl Point { ... }`",
            )
            .to_compile_error();
            return quote! { #item #e };
        }
    };
    if !attr.is_empty() {
        let e = error_spanned(&attr, "`#[par_fn]` takes no arguments", "write `#[par_fn]`")
            .to_compile_error();
        return quote! { #function #e };
    }
    // A method, or an associated function naming `Self`: the attribute on it cannot see the
    // type it belongs to.
    let at = match function.sig.inputs.first() {
        Some(syn::FnArg::Receiver(r)) => Some(quote! { #r }),
        _ => mentions_self(quote! { #function }).map(|s| quote! { #s }),
    };
    if let Some(at) = at {
        let e = error_spanned(
            &at,
            format!(
                "`#[par_fn]` on `{}`, an item of an `impl` block, cannot see the type it belongs to",
                function.sig.ident
            ),
            "put `#[par_fn]` on the `impl` block instead: `#[par_fn] impl Point { ... }` makes \
             every method, associated function and constant of the block callable on the device",
        )
        .to_compile_error();
        return quote! { #function #e };
    }
    match compile(&function) {
        Ok((unit, slots)) => emit(&function, &unit, &slots, rt),
        Err(errors) => {
            let errors = errors.into_iter().map(|e| e.to_compile_error());
            quote! { #function #(#errors)* }
        }
    }
}

/// The first `Self` in `tokens`.
fn mentions_self(tokens: TokenStream) -> Option<proc_macro2::Ident> {
    tokens.into_iter().find_map(|tt| match tt {
        proc_macro2::TokenTree::Ident(i) if i == "Self" => Some(i),
        proc_macro2::TokenTree::Group(g) => mentions_self(g.stream()),
        _ => None,
    })
}

/// A `#[par_fn]` compiled for the device.
pub(crate) struct Unit {
    pub(crate) source: String,
    pub(crate) classes: u32,
    pub(crate) constraints: Vec<Constraint>,
    pub(crate) faults: Vec<String>,
    pub(crate) callees: Vec<crate::analysis::device::Callee>,
}

impl Unit {
    /// The runtime's `ParFnEntry` of this unit, registered under `module_path!()::text`, with
    /// the descriptions `params` and `ret` of its signature and its type-parameter slots
    /// `generic` (none when it is not generic). A free `#[par_fn]` and each item of a
    /// `#[par_fn] impl` register one.
    pub(crate) fn entry(
        &self,
        text: &str,
        params: &[TokenStream],
        ret: &TokenStream,
        generic: &[TokenStream],
        rt: &TokenStream,
    ) -> TokenStream {
        let source = &self.source;
        let classes = self.classes;
        let gpu = quote! { #rt::gpu };
        let constraints = self.constraints.iter().map(|c| crate::back::rust::constraint(c, &gpu));
        let faults = &self.faults;
        let callees = self.callees.iter().map(|c| c.name(rt));
        quote! {
            #rt::ParFnEntry {
                path: ::core::concat!(::core::module_path!(), "::", #text),
                source: #source,
                classes: #classes,
                constraints: &[#(#constraints),*],
                faults: &[#(#faults),*],
                signature: || (::std::vec![#(#params),*], #ret),
                callees: || ::std::vec![#(#callees),*],
                generic: &[#(#generic),*],
            }
        }
    }
}

/// Whether the path names an item of a type by Rust's naming conventions (`Point::new`,
/// `geo::Point::dist`, `Self::new`): an associated function, which `use` cannot import.
pub(crate) fn names_associated_item(path: &syn::Path) -> bool {
    let n = path.segments.len();
    n >= 2 && {
        let owner = path.segments[n - 2].ident.to_string();
        owner == "Self" || owner.starts_with(|c: char| c.is_ascii_uppercase())
    }
}

pub(crate) fn check_signature(sig: &syn::Signature) -> Vec<syn::Error> {
    let mut errors = Vec::new();
    let mut refuse = |tokens: &dyn quote::ToTokens, what: &str, help: &str| {
        errors.push(error_spanned(tokens, format!("a `#[par_fn]` cannot be {what}"), help));
    };
    if let Some(a) = &sig.asyncness {
        refuse(a, "`async`", "device functions compute a value; remove `async`");
    }
    if let Some(abi) = &sig.abi {
        refuse(abi, "`extern`", "remove the ABI");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        refuse(
            &sig.generics,
            "a generic method",
            "the device finds a method by its receiver's type and compiles it once: give it \
             concrete types (a free `#[par_fn] fn` may be generic over its parameters' types)",
        );
    }
    if let Some(v) = &sig.variadic {
        refuse(v, "variadic", "give it a fixed list of parameters");
    }
    errors
}

fn compile(function: &syn::ItemFn) -> Result<(Unit, Vec<Slot>), Vec<syn::Error>> {
    let mut unchecked = function.sig.clone();
    unchecked.generics = syn::Generics::default();
    let mut errors = check_signature(&unchecked);
    let generics = check_generics(&function.sig);
    let slots = match generics {
        Ok(slots) if errors.is_empty() => slots,
        Ok(_) => return Err(errors),
        Err(e) => {
            errors.extend(e);
            return Err(errors);
        }
    };
    let names: Vec<String> =
        function.sig.generics.type_params().map(|p| p.ident.to_string()).collect();
    let unit =
        compile_fn(&function.sig, &function.block, &format!("fn {}", function.sig.ident), &names)?;
    Ok((unit, slots))
}

/// What a parameter or the result of a `#[par_fn] fn` is (the runtime's `SigSlot`): its own
/// type, or the `j`-th type parameter of a generic function.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Concrete,
    TypeParam(u32),
}

/// The generics a `#[par_fn] fn` may have: type parameters, with any bounds (kept for Rust;
/// the device compiles each instance from the body's operators), each parameter's or the
/// result's type either one of them exactly or a type that mentions none. Returns the slot of
/// each parameter and then of the result.
fn check_generics(sig: &syn::Signature) -> Result<Vec<Slot>, Vec<syn::Error>> {
    let mut errors = Vec::new();
    for param in &sig.generics.params {
        match param {
            syn::GenericParam::Type(_) => {}
            syn::GenericParam::Const(c) => errors.push(error_spanned(
                c,
                "a `#[par_fn]` cannot have const generic parameters",
                "the device instantiates a generic `#[par_fn]` over the types of its \
                 arguments only: pass the value as a parameter",
            )),
            syn::GenericParam::Lifetime(l) => errors.push(error_spanned(
                l,
                "a `#[par_fn]` cannot have lifetime parameters",
                "device functions take and return values: remove the lifetime (a reference \
                 parameter's lifetime can stay elided)",
            )),
        }
    }
    let names: Vec<String> = sig.generics.type_params().map(|p| p.ident.to_string()).collect();
    let slot = |ty: &syn::Type, errors: &mut Vec<syn::Error>| -> Slot {
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none()
                && p.path.segments.len() == 1
                && p.path.segments[0].arguments.is_none()
            {
                let name = p.path.segments[0].ident.to_string();
                if let Some(j) = names.iter().position(|n| *n == name) {
                    return Slot::TypeParam(j as u32);
                }
            }
        }
        if let Some(found) = mentions(quote! { #ty }, &names) {
            errors.push(error_spanned(
                ty,
                format!(
                    "a `#[par_fn]`'s parameter or result of a type built from the type \
                     parameter `{found}` is not supported"
                ),
                format!(
                    "a generic `#[par_fn]`'s parameters and result are each either a type \
                     parameter itself (`{found}`) or a type that mentions none (`f32`, \
                     `(u8, bool)`, a struct)"
                ),
            ));
        }
        Slot::Concrete
    };
    let mut slots = Vec::new();
    for input in &sig.inputs {
        if let syn::FnArg::Typed(t) = input {
            slots.push(slot(&t.ty, &mut errors));
        }
    }
    slots.push(match &sig.output {
        syn::ReturnType::Default => Slot::Concrete,
        syn::ReturnType::Type(_, ty) => slot(ty, &mut errors),
    });
    for (j, param) in sig.generics.type_params().enumerate() {
        if !slots.contains(&Slot::TypeParam(j as u32)) {
            errors.push(error_spanned(
                &param.ident,
                format!(
                    "the type parameter `{}` of a `#[par_fn]` is not the type of a parameter or \
                     of the result",
                    param.ident
                ),
                "the device decides each instance's type arguments from its arguments and \
                 result: make it the type of one of them",
            ));
        }
    }
    if errors.is_empty() {
        Ok(slots)
    } else {
        Err(errors)
    }
}

/// The first of `names` among `tokens`' identifiers.
fn mentions(tokens: TokenStream, names: &[String]) -> Option<String> {
    tokens.into_iter().find_map(|tt| match tt {
        proc_macro2::TokenTree::Ident(i) if names.iter().any(|n| i == n) => Some(i.to_string()),
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), names),
        _ => None,
    })
}

/// Compiles a function (a method when its signature has a receiver, which is parameter 0)
/// whose signature has been checked; `what` names it in the source's comment.
pub(crate) fn compile_fn(
    sig: &syn::Signature,
    block: &syn::Block,
    what: &str,
    type_params: &[String],
) -> Result<Unit, Vec<syn::Error>> {
    let function = (sig, block);
    let mut ctx = DeviceCtx::default();
    for name in type_params {
        let class = ctx.class();
        ctx.type_params.push((name.clone(), class));
    }
    // The class of a parameter's or the result's type when it is a type parameter.
    let param_class = |ctx: &DeviceCtx, ty: &syn::Type| match ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            ctx.type_param(&p.path.segments[0].ident.to_string())
        }
        _ => None,
    };
    let lowered = (|| -> Result<_, NotDevice> {
        let mut lower = Lower::par_fn(&mut ctx);
        let mut params = Vec::new();
        for (k, input) in function.0.inputs.iter().enumerate() {
            let class = lower.ctx.class();
            if let syn::FnArg::Typed(t) = input {
                if let Some(param) = param_class(lower.ctx, &t.ty) {
                    lower.ctx.same(class, param);
                }
            }
            lower
                .ctx
                .constrain(Constraint::Capture(class, crate::plan::kernel_ir::CaptureId(k as u32)));
            let pattern = match input {
                syn::FnArg::Typed(typed) => lower.bind_param(&typed.pat, class)?,
                syn::FnArg::Receiver(r) => {
                    let mut name = syn::PatIdent {
                        attrs: Vec::new(),
                        by_ref: None,
                        mutability: r.mutability,
                        ident: syn::Ident::new("self", r.self_token.span),
                        subpat: None,
                    };
                    if r.reference.is_some() {
                        name.mutability = None;
                    }
                    lower.bind_param(&syn::Pat::Ident(name), class)?
                }
            };
            params.push((pattern, class));
        }
        let result = lower.ctx.class();
        let n = function.0.inputs.len() as u32;
        lower.ctx.constrain(Constraint::Capture(result, crate::plan::kernel_ir::CaptureId(n)));
        if let syn::ReturnType::Type(_, ty) = &function.0.output {
            if let Some(param) = param_class(lower.ctx, ty) {
                lower.ctx.same(result, param);
            }
        }
        lower.ctx.return_class = Some(result);
        let body = lower.block(function.1)?;
        lower.ctx.same(body.class, result);
        Ok((params, result, body))
    })();
    let (params, result, body) = lowered.map_err(|why| {
        vec![crate::error::error(
            why.span,
            format!(
                "`#[par_fn]` cannot compile `{}` for the device: it {}",
                function.0.ident, why.reason
            ),
            why.help,
        )]
    })?;
    let mut writer = ExprWriter::for_par_fn(&ctx.locals);
    let mut out = Body::new(1);
    let mut declared = Vec::new();
    for (k, (pattern, class)) in params.iter().enumerate() {
        declared.push(format!(", {} pc_p{k}", crate::back::kernel::types::ty(*class)));
        writer.bind(pattern, *class, &format!("pc_p{k}"), &mut out);
    }
    let value = writer.expr(&body, &mut out);
    let source = format!(
        "/* #[par_fn] {} */\nPC_FN {} PCF_SELF(pc_fault_t pc_fault{}) {{\n  (void)pc_fault;\n{}  return {value};\n}}\n",
        what.replace("*/", "* /"),
        crate::back::kernel::types::ty(result),
        declared.join(""),
        out.text(),
    );
    Ok(Unit {
        source,
        classes: ctx.classes,
        constraints: ctx.constraints,
        faults: ctx.faults,
        callees: ctx.par_fns,
    })
}

fn emit(function: &syn::ItemFn, unit: &Unit, slots: &[Slot], rt: &TokenStream) -> TokenStream {
    let name = &function.sig.ident;
    let vis = &function.vis;
    let name_text = name.to_string();
    let params: Vec<TokenStream> = function
        .sig
        .inputs
        .iter()
        .zip(slots)
        .map(|(input, slot)| match input {
            // A type parameter's type is each instance's (`generic` says where).
            syn::FnArg::Typed(_) if *slot != Slot::Concrete => {
                quote! { <() as #rt::DeviceType>::desc() }
            }
            syn::FnArg::Typed(t) => {
                let ty = &t.ty;
                let span = ty.span();
                quote::quote_spanned! {span=> <#ty as #rt::DeviceType>::desc() }
            }
            syn::FnArg::Receiver(_) => unreachable!("methods are refused"),
        })
        .collect();
    let ret = match &function.sig.output {
        _ if slots.last() != Some(&Slot::Concrete) => quote! { <() as #rt::DeviceType>::desc() },
        syn::ReturnType::Default => quote! { <() as #rt::DeviceType>::desc() },
        syn::ReturnType::Type(_, ty) => {
            let span = ty.span();
            quote::quote_spanned! {span=> <#ty as #rt::DeviceType>::desc() }
        }
    };
    let generic: Vec<TokenStream> = if slots.iter().all(|s| *s == Slot::Concrete) {
        Vec::new()
    } else {
        slots
            .iter()
            .map(|s| match s {
                Slot::Concrete => quote! { #rt::SigSlot::Concrete },
                Slot::TypeParam(j) => quote! { #rt::SigSlot::TypeParam(#j) },
            })
            .collect()
    };
    let entry = unit.entry(&name_text, &params, &ret, &generic, rt);
    quote! {
        #function

        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name {}

        impl #rt::ParFn for #name {}

        impl #rt::ParFnPath for #name {
            const PATH: &'static str = ::core::concat!(::core::module_path!(), "::", #name_text);
        }

        #rt::inventory::submit! { #entry }
    }
}
