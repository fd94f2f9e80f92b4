//! `#[par_fn]` on an inherent `impl` block: its methods, associated functions and associated
//! constants become callable in device code.
//!
//! Each item is kept as written and also compiled for the device as a `#[par_fn]` is (a
//! method's receiver, `self`, `mut self` or `&self`, is its parameter 0, passed by value on the
//! device; a constant is a function of no parameters returning it). Beside the block, an entry
//! per item is registered (`ParFnItem`: the type's `type_name`, the item's name and, for a
//! function, `type_name_of_val` of it). The entry is a hidden associated constant of the block,
//! where `Self` names the type in the entry's signature and callees, submitted to `inventory`
//! next to the block.
//!
//! Calls find the items at run time: `p.dist(q)` by the receiver's solved type (a struct with
//! `#[derive(DeviceValue)]`) and the method's name; `Point::new(x, y)` by the function's
//! `type_name_of_val`, as a free `#[par_fn]`; `Point::ORIGIN` in a `#[par_fn]` by the type's name
//! and the constant's (in a comprehension a constant is a value read on the host, as any path).
//!
//! Refused, each with a spanned error and a help line: trait impls, generic impls, `&mut self`,
//! typed receivers (`self: Box<Self>`), and items other than functions and constants.

use crate::error::error_spanned;
use crate::par_fn::{check_signature, compile_fn, Unit};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;

/// Expands `#[par_fn]` on the `impl` block `block`.
pub(crate) fn expand(mut block: syn::ItemImpl, rt: &TokenStream) -> TokenStream {
    // `#[par_fn]` written on the items as well as on the block: the block's covers them.
    for item in &mut block.items {
        if let syn::ImplItem::Fn(f) = item {
            f.attrs.retain(|a| a.path().segments.last().is_none_or(|s| s.ident != "par_fn"));
        }
    }
    let mut errors = refusals(&block);
    let mut consts = Vec::new();
    let mut submits = Vec::new();
    if errors.is_empty() {
        let self_ty = &block.self_ty;
        let owner = crate::text::text(self_ty).replace(' ', "");
        for item in &block.items {
            let (compiled, attrs) = match item {
                syn::ImplItem::Fn(f) => (compile_method(f, &owner, rt), &f.attrs),
                syn::ImplItem::Const(c) => (compile_const(c, &owner, rt), &c.attrs),
                _ => continue,
            };
            // An item compiled only under a `cfg` is registered under the same.
            let cfgs: Vec<_> = attrs.iter().filter(|a| a.path().is_ident("cfg")).collect();
            match compiled {
                Ok(entry) => {
                    let name = &entry.name;
                    submits.push(quote! {
                        #(#cfgs)*
                        #rt::inventory::submit! { <#self_ty>::#name }
                    });
                    let tokens = entry.tokens(rt);
                    consts.push(quote! { #(#cfgs)* #tokens });
                }
                Err(e) => errors.extend(e),
            }
        }
    }
    let errors = errors.into_iter().map(|e| e.to_compile_error());
    if !consts.is_empty() {
        block.items.extend(consts.into_iter().map(syn::ImplItem::Verbatim));
    }
    quote! {
        #block
        #(#submits)*
        #(#errors)*
    }
}

/// What the block cannot be, and its items that are neither functions nor constants.
fn refusals(block: &syn::ItemImpl) -> Vec<syn::Error> {
    let mut errors = Vec::new();
    if let Some((_, path, _)) = &block.trait_ {
        errors.push(error_spanned(
            path,
            format!(
                "`#[par_fn]` cannot mark an implementation of the trait `{}`",
                crate::text::text(path)
            ),
            "device code calls a type's own methods: put the methods in an inherent \
             `impl Point { ... }` block and mark that one `#[par_fn]`",
        ));
    }
    if !block.generics.params.is_empty() || block.generics.where_clause.is_some() {
        errors.push(error_spanned(
            &block.generics,
            "`#[par_fn]` cannot mark a generic `impl` block",
            "the device compiles one function per method: write the block for a concrete \
             type (`impl Pair<f32> { ... }`)",
        ));
    }
    if let Some(u) = &block.unsafety {
        errors.push(error_spanned(
            u,
            "`#[par_fn]` cannot mark an `unsafe impl`",
            "remove `unsafe`",
        ));
    }
    for item in &block.items {
        match item {
            syn::ImplItem::Fn(_) | syn::ImplItem::Const(_) => {}
            other => errors.push(error_spanned(
                other,
                "a `#[par_fn] impl` block holds methods, associated functions and constants",
                "move this item to another `impl` block",
            )),
        }
    }
    errors
}

/// One item compiled: the hidden constant holding its entry.
struct Entry {
    /// The hidden constant's name.
    name: syn::Ident,
    /// The item's name.
    item: String,
    /// `Some(path)` for a function (`Self::dist`), `None` for a constant.
    function: Option<syn::Ident>,
    /// The item as the messages name it (`Point::dist`).
    text: String,
    unit: Unit,
    params: Vec<TokenStream>,
    ret: TokenStream,
}

impl Entry {
    /// The hidden associated constant `const __parcomp_item_x: ParFnItem = ...;`.
    fn tokens(&self, rt: &TokenStream) -> TokenStream {
        let Entry { name, item, text, unit, params, ret, .. } = self;
        let function = unit.entry(text, params, ret, &[], rt);
        let path = match &self.function {
            Some(f) => quote! {
                ::core::option::Option::Some(
                    (|| #rt::par_fn_name(&Self::#f)) as fn() -> &'static str
                )
            },
            None => quote! { ::core::option::Option::None },
        };
        quote! {
            #[doc(hidden)]
            #[allow(non_upper_case_globals, dead_code)]
            const #name: #rt::ParFnItem = #rt::ParFnItem {
                owner: ::core::any::type_name::<Self>,
                name: #item,
                path: #path,
                function: #function,
            };
        }
    }
}

/// `<ty as DeviceType>::desc()`, located at the type.
fn desc(ty: &syn::Type, rt: &TokenStream) -> TokenStream {
    let span = ty.span();
    quote::quote_spanned! {span=> <#ty as #rt::DeviceType>::desc() }
}

fn compile_method(
    f: &syn::ImplItemFn,
    owner: &str,
    rt: &TokenStream,
) -> Result<Entry, Vec<syn::Error>> {
    let mut errors = check_signature(&f.sig);
    if let Some(syn::FnArg::Receiver(r)) = f.sig.inputs.first() {
        if r.reference.is_some() && r.mutability.is_some() {
            errors.push(error_spanned(
                r,
                format!("the device method `{}` cannot take `&mut self`", f.sig.ident),
                "a device method computes a value: take `self` or `&self` and return the new \
                 value (`fn moved(self, by: f32) -> Self`)",
            ));
        } else if r.colon_token.is_some() && !receiver_is_self(&r.ty) {
            errors.push(error_spanned(
                r,
                format!(
                    "the device method `{}` takes its receiver as another type than `Self` or \
                     `&Self`",
                    f.sig.ident
                ),
                "take `self`, `mut self` or `&self`: the device passes the value itself",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let text = format!("{owner}::{}", f.sig.ident);
    let unit = compile_fn(&f.sig, &f.block, &text, &[])?;
    let params = f
        .sig
        .inputs
        .iter()
        .map(|input| match input {
            syn::FnArg::Typed(t) => (*t.ty).clone(),
            // The receiver is passed by value: the block's type.
            syn::FnArg::Receiver(_) => syn::parse_quote!(Self),
        })
        .collect::<Vec<_>>();
    let ident = f.sig.ident.clone();
    let ret = match &f.sig.output {
        syn::ReturnType::Default => syn::parse_quote!(()),
        syn::ReturnType::Type(_, ty) => (**ty).clone(),
    };
    Ok(Entry::new(ident.to_string(), Some(ident), text, unit, params, ret, rt))
}

fn compile_const(
    c: &syn::ImplItemConst,
    owner: &str,
    rt: &TokenStream,
) -> Result<Entry, Vec<syn::Error>> {
    if !c.generics.params.is_empty() {
        return Err(vec![error_spanned(
            &c.generics,
            "a `#[par_fn] impl`'s constant cannot be generic",
            "give it a concrete type",
        )]);
    }
    let ident = &c.ident;
    let ty = &c.ty;
    let expr = &c.expr;
    let sig: syn::Signature = syn::parse_quote_spanned!(ident.span()=> fn #ident() -> #ty);
    let block: syn::Block = syn::parse_quote_spanned!(expr.span()=> { #expr });
    let text = format!("{owner}::{ident}");
    let unit = compile_fn(&sig, &block, &text, &[])?;
    Ok(Entry::new(ident.to_string(), None, text, unit, Vec::new(), ty.clone(), rt))
}

impl Entry {
    fn new(
        item: String,
        function: Option<syn::Ident>,
        text: String,
        unit: Unit,
        params: Vec<syn::Type>,
        ret: syn::Type,
        rt: &TokenStream,
    ) -> Entry {
        let params = params.iter().map(|ty| desc(ty, rt)).collect();
        let ret = desc(&ret, rt);
        Entry {
            name: format_ident!("__parcomp_item_{}", item.trim_start_matches("r#")),
            item: item.trim_start_matches("r#").to_string(),
            function,
            text,
            unit,
            params,
            ret,
        }
    }
}

/// Whether a typed receiver's type is `Self` or `&Self`.
fn receiver_is_self(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => p.qself.is_none() && p.path.is_ident("Self"),
        syn::Type::Reference(r) => r.mutability.is_none() && receiver_is_self(&r.elem),
        _ => false,
    }
}
