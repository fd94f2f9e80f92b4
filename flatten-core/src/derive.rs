//! `#[derive(DeviceValue)]`: a struct with named fields whose types are device values becomes a
//! device value itself, stored on the device as one column per leaf field.
//!
//! The derive implements the runtime's `DeviceType` for the struct: its description
//! (`TypeDesc::Struct`, the struct's name and its fields by name, in declaration order) and
//! how its values are written to and read from the columns, field by field. The macro that
//! compiles a comprehension cannot see the struct, so the kernels read a field by its name
//! (`p.x` is the C member `m_x`) and the runtime finds the field's type in the description it
//! observes, as it finds a tuple's `.0`.
//!
//! Parsing, validation and expansion are separate: [`parse`] reads the struct, [`validate`]
//! refuses every field whose type cannot be a device value (all of them at once, each at its
//! own span), [`expand`] writes the impl. A field type this macro cannot judge (another struct,
//! a type alias) is left to the impl's bounds: `DeviceType`'s own error names the type.

use crate::error::{error_spanned, Errors};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Type};

/// A struct to derive for: its name, generics and named fields.
pub struct Derived {
    input: DeriveInput,
    fields: Vec<(syn::Ident, Type)>,
}

/// Reads the struct: refuses enums, unions and structs without named fields.
pub fn parse(input: TokenStream) -> Result<Derived, syn::Error> {
    let input: DeriveInput = syn::parse2(input)?;
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => named
                .named
                .iter()
                .map(|f| (f.ident.clone().expect("a named field"), f.ty.clone()))
                .collect(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(_) => return Err(error_spanned(
                &input.ident,
                "`DeviceValue` is derived for structs with named fields; this is a tuple struct",
                "give the fields names (`struct Point { x: f64, y: f64 }`), or use a tuple \
                     `(f64, f64)`, which is a device value already",
            )),
        },
        Data::Enum(_) | Data::Union(_) => {
            return Err(error_spanned(
                &input.ident,
                "`DeviceValue` is derived for structs with named fields",
                "the device holds structs whose fields are device values",
            ))
        }
    };
    Ok(Derived { input, fields })
}

/// What the device values are, for help lines.
const DEVICE_VALUES: &str = "device values are the primitive numbers (not `i128`/`u128`), \
                             `bool`, `char`, tuples and `Option`s of them, and structs with \
                             `#[derive(DeviceValue)]`";

/// Why a type cannot be a device value, when its syntax says so.
fn not_device(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(_) => Some("a reference".into()),
        Type::Ptr(_) => Some("a raw pointer".into()),
        Type::Slice(_) => Some("a slice".into()),
        Type::Array(_) => Some("an array, which the device does not hold yet".into()),
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
    for (field, ty) in &derived.fields {
        if let Some(why) = not_device(ty) {
            let field = field.unraw();
            errors.push(error_spanned(
                ty,
                format!(
                    "`{name}` cannot derive `DeviceValue`: its field `{field}` holds {why}, \
                     which cannot be a device value"
                ),
                format!(
                    "{DEVICE_VALUES}; keep `{field}` in another struct, or store what the \
                     device needs of it (a number, an index) instead"
                ),
            ));
        }
        if !field.unraw().to_string().is_ascii() {
            errors.push(error_spanned(
                field,
                format!("`{name}`'s field `{field}` has a name the device's C cannot write"),
                "name the fields of a `DeviceValue` struct with ASCII letters, digits and `_`",
            ));
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
    let descs = derived.fields.iter().map(|(field, ty)| {
        let text = field.unraw().to_string();
        quote_spanned! {ty.span()=> (#text, <#ty as #rt::DeviceType>::desc()) }
    });
    let writes = derived.fields.iter().map(|(field, ty)| {
        quote_spanned! {ty.span()=> <#ty as #rt::DeviceType>::write(&self.#field, out); }
    });
    let reads = derived.fields.iter().map(|(field, ty)| {
        quote_spanned! {ty.span()=> #field: <#ty as #rt::DeviceType>::read(input), }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #rt::DeviceType for #name #ty_generics #where_clause {
            fn desc() -> #rt::TypeDesc {
                #rt::TypeDesc::Struct(
                    ::core::any::type_name::<Self>(),
                    ::std::vec![#(#descs),*],
                )
            }
            #[inline]
            #[allow(unused_variables)]
            fn write(&self, out: &mut #rt::ColumnWriter<'_>) {
                #(#writes)*
            }
            #[inline]
            #[allow(unused_variables)]
            fn read(input: &mut #rt::ColumnReader<'_>) -> Self {
                Self { #(#reads)* }
            }
        }
    }
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
        assert!(parse(quote! { struct T(u8); }).is_err());
        assert!(parse(quote! { enum E { A } }).is_err());
    }
}
