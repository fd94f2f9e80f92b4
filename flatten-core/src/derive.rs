//! `#[derive(DeviceValue)]`: a struct whose fields are device values becomes a device value
//! itself, stored on the device as one column per leaf field (an array field `[T; N]` is `N`
//! columns per leaf of `T`: the runtime's `DeviceType` for arrays); a fieldless enum becomes one
//! stored as its discriminant.
//!
//! The derive implements the runtime's `DeviceType` for the type: its description
//! (`TypeDesc::Struct`, the struct's name and its fields by name, in declaration order, a tuple
//! struct's named `0`, `1`, ...; `TypeDesc::Enum`, the enum's name, the primitive of its
//! `#[repr]` and its variants' discriminants) and how its values are written to and read from
//! the columns. The macro that compiles a comprehension cannot see the type, so the kernels
//! read a field by its name (`p.x` is the C member `m_x`, `w.0` the member `f0` as in a tuple)
//! and name a variant by its name (`Color::Red`), and the runtime finds the field's type and
//! the variant's value in the description it observes, as it finds a tuple's `.0`.
//!
//! Parsing, validation and expansion are separate: [`parse`] reads the type, [`validate`]
//! refuses every field whose type cannot be a device value (all of them at once, each at its
//! own span), [`expand`] writes the impl. A field type this macro cannot judge (another struct,
//! a type alias) is left to the impl's bounds: `DeviceType`'s own error names the type.

use crate::error::{error_spanned, Errors};
use crate::text::member_text;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Type};

/// A type to derive for: its name and generics, and what it holds.
pub struct Derived {
    input: DeriveInput,
    shape: Shape,
}

/// What a derived type holds.
enum Shape {
    /// A struct's fields (a tuple struct's named by their positions), and whether they are
    /// positional.
    Struct { fields: Vec<(syn::Member, Type)>, tuple: bool },
    /// A fieldless enum's variants, and the primitive of its `#[repr]` (`isize` without one).
    Enum { variants: Vec<syn::Ident>, repr: syn::Ident },
}

/// The integer types a `#[repr]` may give an enum's discriminant (`i128`/`u128` are not device
/// values).
const REPRS: &[&str] = &["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "isize", "usize"];

/// Reads the type: a struct (named fields, a tuple struct or a unit struct) or a fieldless enum;
/// refuses unions and enums whose variants hold fields.
pub fn parse(input: TokenStream) -> Result<Derived, syn::Error> {
    let input: DeriveInput = syn::parse2(input)?;
    let shape = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => Shape::Struct {
                fields: named
                    .named
                    .iter()
                    .map(|f| {
                        (syn::Member::Named(f.ident.clone().expect("a named field")), f.ty.clone())
                    })
                    .collect(),
                tuple: false,
            },
            Fields::Unnamed(unnamed) => Shape::Struct {
                fields: unnamed
                    .unnamed
                    .iter()
                    .enumerate()
                    .map(|(k, f)| (syn::Member::Unnamed(syn::Index::from(k)), f.ty.clone()))
                    .collect(),
                tuple: true,
            },
            Fields::Unit => Shape::Struct { fields: Vec::new(), tuple: false },
        },
        Data::Enum(data) => {
            let mut errors = Errors::default();
            let mut variants = Vec::new();
            for variant in &data.variants {
                if !matches!(variant.fields, Fields::Unit) {
                    errors.push(error_spanned(
                        &variant.fields,
                        format!(
                            "`{}` cannot derive `DeviceValue`: its variant `{}` holds fields",
                            input.ident, variant.ident
                        ),
                        "the device holds fieldless enums (stored as their discriminants); keep \
                         the fields in a struct beside the enum",
                    ));
                }
                variants.push(variant.ident.clone());
            }
            if variants.is_empty() {
                errors.push(error_spanned(
                    &input.ident,
                    format!("`{}` cannot derive `DeviceValue`: it has no variants", input.ident),
                    "an enum without variants has no values to hold",
                ));
            }
            let mut repr = syn::Ident::new("isize", input.ident.span());
            for attr in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
                let _ = attr.parse_nested_meta(|meta| {
                    if let Some(ident) = meta.path.get_ident() {
                        if REPRS.contains(&ident.to_string().as_str()) {
                            repr = ident.clone();
                        } else if ident == "i128" || ident == "u128" {
                            errors.push(error_spanned(
                                ident,
                                format!("`{}` cannot derive `DeviceValue`: its discriminant is a 128-bit integer", input.ident),
                                "give it a `#[repr]` of 64 bits or fewer (`#[repr(u8)]`)",
                            ));
                        }
                    }
                    Ok(())
                });
            }
            errors.finish(())?;
            Shape::Enum { variants, repr }
        }
        Data::Union(_) => {
            return Err(error_spanned(
                &input.ident,
                "`DeviceValue` is derived for structs and fieldless enums, not unions",
                "the device holds structs whose fields are device values",
            ))
        }
    };
    Ok(Derived { input, shape })
}

/// What the device values are, for help lines.
const DEVICE_VALUES: &str = "device values are the primitive numbers (not `i128`/`u128`), \
                             `bool`, `char`, tuples, `Option`s and arrays `[T; N]` of them, and \
                             structs and fieldless enums with `#[derive(DeviceValue)]`";

/// Why a type cannot be a device value, when its syntax says so.
fn not_device(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(_) => Some("a reference".into()),
        Type::Ptr(_) => Some("a raw pointer".into()),
        Type::Slice(_) => Some("a slice".into()),
        // `[T; N]` is a device value when `T` is: N columns per leaf of `T`.
        Type::Array(a) => not_device(&a.elem).map(|why| format!("an array of {why}")),
        Type::TraitObject(_) | Type::ImplTrait(_) => Some("a trait object".into()),
        Type::BareFn(_) => Some("a function pointer".into()),
        Type::Never(_) => Some("`!`".into()),
        Type::Paren(p) => not_device(&p.elem),
        Type::Group(g) => not_device(&g.elem),
        Type::Tuple(t) => t.elems.iter().find_map(not_device),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            const HEAP: &[&str] = &[
                "String",
                "Vec",
                "Box",
                "Rc",
                "Arc",
                "HashMap",
                "HashSet",
                "BTreeMap",
                "BTreeSet",
                "VecDeque",
                "LinkedList",
                "BinaryHeap",
                "Cell",
                "RefCell",
                "Mutex",
                "RwLock",
                "str",
                "PathBuf",
                "OsString",
                "CString",
                "Cow",
            ];
            if HEAP.contains(&name.as_str()) {
                return Some(format!("a `{name}`"));
            }
            if name == "i128" || name == "u128" {
                return Some(format!("a 128-bit integer (`{name}`)"));
            }
            if name == "Option" && p.path.segments.len() <= 3 {
                if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                    return args.args.iter().find_map(|a| match a {
                        syn::GenericArgument::Type(t) => not_device(t),
                        _ => None,
                    });
                }
            }
            None
        }
        _ => None,
    }
}

/// Refuses each field whose type cannot be a device value, naming it.
pub fn validate(derived: &Derived, errors: &mut Errors) {
    let name = &derived.input.ident;
    match &derived.shape {
        Shape::Struct { fields, .. } => {
            for (field, ty) in fields {
                let field = member_text(field);
                if let Some(why) = not_device(ty) {
                    errors.push(error_spanned(
                        ty,
                        format!(
                            "`{name}` cannot derive `DeviceValue`: its field `{field}` holds \
                             {why}, which cannot be a device value"
                        ),
                        format!(
                            "{DEVICE_VALUES}; keep `{field}` in another struct, or store what \
                             the device needs of it (a number, an index) instead"
                        ),
                    ));
                }
                if !field.is_ascii() {
                    errors.push(error_spanned(
                        ty,
                        format!(
                            "`{name}`'s field `{field}` has a name the device's C cannot write"
                        ),
                        "name the fields of a `DeviceValue` struct with ASCII letters, digits and \
                         `_`",
                    ));
                }
            }
        }
        Shape::Enum { variants, .. } => {
            for variant in variants {
                if !variant.unraw().to_string().is_ascii() {
                    errors.push(error_spanned(
                        variant,
                        format!(
                            "`{name}`'s variant `{variant}` has a name the device's C cannot write"
                        ),
                        "name the variants of a `DeviceValue` enum with ASCII letters, digits and \
                         `_`",
                    ));
                }
            }
        }
    }
}

/// The `DeviceType` impl (`rt`: the runtime's path).
pub fn expand(derived: &Derived, rt: &TokenStream) -> TokenStream {
    let name = &derived.input.ident;
    let mut generics = derived.input.generics.clone();
    {
        let bounds: Vec<syn::WherePredicate> = generics
            .type_params()
            .map(|p| {
                let ident = &p.ident;
                syn::parse_quote! { #ident: #rt::DeviceType }
            })
            .collect();
        generics.make_where_clause().predicates.extend(bounds);
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let (desc, write, read) = match &derived.shape {
        Shape::Struct { fields, tuple } => struct_parts(fields, *tuple, rt),
        Shape::Enum { variants, repr } => enum_parts(name, variants, repr, rt),
    };
    // A struct's fields where Rust put them (`offset_of!`), so that a device whose memory is
    // the host's reads a slice of them where it lies; an enum keeps the default (columns).
    let record = match &derived.shape {
        Shape::Struct { fields, .. } => {
            let parts = fields.iter().map(|(field, ty)| {
                quote_spanned! {ty.span()=>
                    (
                        ::core::mem::offset_of!(Self, #field),
                        <#ty as #rt::DeviceType>::record_layout(),
                    )
                }
            });
            quote! {
                fn record_layout() -> ::core::option::Option<#rt::RecordLayout> {
                    #rt::RecordLayout::of_fields(::core::mem::size_of::<Self>(), &[#(#parts),*])
                }
            }
        }
        Shape::Enum { .. } => TokenStream::new(),
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #rt::DeviceType for #name #ty_generics #where_clause {
            fn desc() -> #rt::TypeDesc {
                #desc
            }
            #[inline]
            #[allow(unused_variables)]
            fn write(&self, out: &mut #rt::ColumnWriter<'_>) {
                #write
            }
            #[inline]
            #[allow(unused_variables)]
            fn read(input: &mut #rt::ColumnReader<'_>) -> Self {
                #read
            }
            #record
        }
    }
}

/// A struct's description, and its writes and reads, field by field.
fn struct_parts(
    fields: &[(syn::Member, Type)],
    tuple: bool,
    rt: &TokenStream,
) -> (TokenStream, TokenStream, TokenStream) {
    let descs = fields.iter().map(|(field, ty)| {
        let text = member_text(field);
        quote_spanned! {ty.span()=> (#text, <#ty as #rt::DeviceType>::desc()) }
    });
    let desc = quote! {
        #rt::TypeDesc::Struct(::core::any::type_name::<Self>(), ::std::vec![#(#descs),*])
    };
    let writes = fields.iter().map(|(field, ty)| {
        quote_spanned! {ty.span()=> <#ty as #rt::DeviceType>::write(&self.#field, out); }
    });
    let reads = fields.iter().map(|(_, ty)| {
        quote_spanned! {ty.span()=> <#ty as #rt::DeviceType>::read(input) }
    });
    let read = if tuple {
        quote! { Self(#(#reads),*) }
    } else {
        let names = fields.iter().map(|(field, _)| field);
        quote! { Self { #(#names: #reads),* } }
    };
    (desc, quote! { #(#writes)* }, read)
}

/// A fieldless enum's description (its variants' discriminants, read with `as`), and its
/// write and read as the discriminant, a value of its `#[repr]`.
fn enum_parts(
    name: &syn::Ident,
    variants: &[syn::Ident],
    repr: &syn::Ident,
    rt: &TokenStream,
) -> (TokenStream, TokenStream, TokenStream) {
    let texts = variants.iter().map(|v| v.unraw().to_string());
    let prim = syn::Ident::new(
        match repr.to_string().as_str() {
            "i8" => "I8",
            "u8" => "U8",
            "i16" => "I16",
            "u16" => "U16",
            "i32" => "I32",
            "u32" => "U32",
            "i64" | "isize" => "I64",
            _ => "U64",
        },
        repr.span(),
    );
    let desc = quote! {
        #rt::TypeDesc::Enum(
            ::core::any::type_name::<Self>(),
            #rt::Prim::#prim,
            ::std::vec![#((#texts, Self::#variants as i128)),*],
        )
    };
    let write = quote! { <#repr as #rt::DeviceType>::write(&(*self as #repr), out); };
    // Every value the device holds came from a variant (the kernels only copy, compare and
    // name variants), so another discriminant is a parcomp bug, not the user's.
    let read = quote! {
        let value = <#repr as #rt::DeviceType>::read(input);
        #(if value == Self::#variants as #repr { return Self::#variants; })*
        ::core::panic!(
            "parcomp internal error: the device returned {} for the enum `{}`, which is none of \
             its discriminants",
            value,
            ::core::stringify!(#name),
        )
    };
    (desc, write, read)
}

/// `#[derive(DeviceValue)]`: the impl, or every error found.
pub fn derive_device_value(input: TokenStream) -> TokenStream {
    let derived = match parse(input) {
        Ok(derived) => derived,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Errors::default();
    validate(&derived, &mut errors);
    match errors.finish(()) {
        Ok(()) => expand(&derived, &crate::runtime_path()),
        Err(e) => e.to_compile_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn errors_of(input: TokenStream) -> Vec<String> {
        let derived = parse(input).unwrap();
        let mut errors = Errors::default();
        validate(&derived, &mut errors);
        match errors.finish(()) {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn every_field_that_cannot_be_a_device_value_is_named() {
        let errors = errors_of(quote! {
            struct Order { price: f64, name: String, tags: Vec<u8>, code: &'static str,
                           maybe: Option<(u8, Box<u8>)>, ok: (u8, Option<char>), other: Point }
        });
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].contains("field `name` holds a `String`"), "{}", errors[0]);
        assert!(errors[1].contains("field `tags` holds a `Vec`"), "{}", errors[1]);
        assert!(errors[2].contains("field `code` holds a reference"), "{}", errors[2]);
        assert!(errors[3].contains("field `maybe` holds a `Box`"), "{}", errors[3]);
        assert!(errors.iter().all(|e| e.contains("= help: device values are")));
    }

    #[test]
    fn the_impl_describes_fields_by_name_in_order() {
        let derived = parse(quote! { struct P { x: f64, r#type: u8 } }).unwrap();
        let code = crate::text(&expand(&derived, &quote! { rt }));
        assert!(code.contains("(\"x\", < f64 as rt::DeviceType > ::desc())"), "{code}");
        assert!(code.contains("\"type\""), "{code}");
    }

    #[test]
    fn tuple_structs_name_their_fields_by_position() {
        let derived = parse(quote! { struct T(u8, f32); }).unwrap();
        let code = crate::text(&expand(&derived, &quote! { rt }));
        assert!(code.contains("(\"0\", < u8 as rt::DeviceType > ::desc())"), "{code}");
        assert!(code.contains("(\"1\", < f32 as rt::DeviceType > ::desc())"), "{code}");
        assert!(code.contains("&self.1"), "{code}");
    }

    #[test]
    fn fieldless_enums_are_their_discriminants_and_others_are_refused() {
        let derived = parse(quote! { #[repr(u8)] enum E { A, r#B = 7 } }).unwrap();
        let code = crate::text(&expand(&derived, &quote! { rt }));
        assert!(code.contains("rt::Prim::U8"), "{code}");
        assert!(code.contains("(\"B\", Self::r#B as i128)"), "{code}");
        let default =
            crate::text(&expand(&parse(quote! { enum E { A } }).unwrap(), &quote! { rt }));
        assert!(default.contains("rt::Prim::I64"), "{default}");
        let errors = parse(quote! { enum E { A(u8), B { x: u8 }, C } }).err().unwrap();
        let errors: Vec<String> = errors.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("variant `A` holds fields"), "{}", errors[0]);
        assert!(errors[1].contains("variant `B` holds fields"), "{}", errors[1]);
        assert!(parse(quote! { enum E {} }).is_err());
        assert!(parse(quote! { #[repr(u128)] enum E { A } }).is_err());
        assert!(parse(quote! { union U { a: u8 } }).is_err());
    }
}
