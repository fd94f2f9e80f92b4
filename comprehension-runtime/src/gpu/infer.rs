//! Solving a plan's type classes: which Rust type each class of the generated kernels is.
//!
//! The macro relates the classes of every expression (`a + b`: one class; `x as f32`: `f32`;
//! an unsuffixed `2`: some integer); the emitted code observes the types of what the kernels
//! read — captured values, the first generator's elements, the head's values, `#[par_fn]`
//! signatures. Unifying both gives every class its type, as Rust's own inference did. Integer
//! and float literal classes nothing else decides are `i32` and `f64`, as in Rust. Anything
//! that does not fit (which would be a disagreement between this solver and rustc) is an error,
//! and the comprehension runs on the CPU.

use super::par_fn::SigSlot;
use super::plan::{ClassId, Constraint};
use super::types::{Prim, TypeDesc};

/// What a class is known to be so far.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    Unknown,
    /// Some integer type.
    Integer,
    /// Some float type.
    Float,
    Prim(Prim),
    Tuple(Vec<usize>),
    Option(usize),
    /// A derived struct: its name and its fields' classes by name.
    Struct(&'static str, Vec<(&'static str, usize)>),
    /// A derived fieldless enum (its description: it holds no classes).
    Enum(TypeDesc),
    /// An array: its element's class and its length, once known.
    Array(usize, Option<usize>),
}

/// The observed types the constraints refer to.
pub(crate) struct Observations<'a> {
    /// The type of each capture (a scalar's own type, a collection's element type).
    pub(crate) captures: &'a [TypeDesc],
    /// The first generator's elements (none for a `#[par_fn]`).
    pub(crate) root: Option<TypeDesc>,
    /// The comprehension's elements (none for a `#[par_fn]`).
    pub(crate) output: Option<TypeDesc>,
    /// Each `#[par_fn]`'s parameters and return type; `None` for a method call (`p.dist(q)`)
    /// whose function is found once its receiver's type is known ([`solve_with_methods`]).
    pub(crate) par_fns: &'a [Option<Signature>],
    /// For each call of a generic `#[par_fn]` (an instance of it): which of its parameters and
    /// result are its type parameters (the signature's types there are ignored). An index past
    /// the end, or an empty list, is a function that is not generic.
    pub(crate) generic: &'a [&'static [SigSlot]],
}

/// A `#[par_fn]`'s parameters' and result's types.
pub(crate) type Signature = (Vec<TypeDesc>, TypeDesc);

/// Finds the function of method call `f` (a `par_fns` entry that is `None`) once its receiver
/// (parameter 0) is known: `Ok(name)` of a derived struct, or `Err(type)` of another type.
pub(crate) type Methods<'m> =
    dyn FnMut(usize, Result<&'static str, String>) -> Result<Signature, String> + 'm;

struct Solver {
    parent: Vec<usize>,
    shape: Vec<Shape>,
}

impl Solver {
    fn new(classes: usize) -> Self {
        Solver { parent: (0..classes).collect(), shape: vec![Shape::Unknown; classes] }
    }

    fn find(&mut self, a: usize) -> usize {
        let mut root = a;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut x = a;
        while self.parent[x] != root {
            let next = self.parent[x];
            self.parent[x] = root;
            x = next;
        }
        root
    }

    /// A new class of shape `shape`.
    fn fresh(&mut self, shape: Shape) -> usize {
        self.parent.push(self.parent.len());
        self.shape.push(shape);
        self.parent.len() - 1
    }

    /// A class holding exactly the type `desc`.
    fn of(&mut self, desc: &TypeDesc) -> usize {
        match desc {
            TypeDesc::Prim(p) => self.fresh(Shape::Prim(*p)),
            TypeDesc::Tuple(items) => {
                let items = items.iter().map(|t| self.of(t)).collect();
                self.fresh(Shape::Tuple(items))
            }
            TypeDesc::Option(inner) => {
                let inner = self.of(inner);
                self.fresh(Shape::Option(inner))
            }
            TypeDesc::Struct(name, fields) => {
                let fields = fields.iter().map(|(f, t)| (*f, self.of(t))).collect();
                self.fresh(Shape::Struct(name, fields))
            }
            TypeDesc::Enum(..) => self.fresh(Shape::Enum(desc.clone())),
            TypeDesc::Array(item, n) => {
                let item = self.of(item);
                self.fresh(Shape::Array(item, Some(*n)))
            }
        }
    }

    fn unify(&mut self, a: usize, b: usize) -> Result<(), String> {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return Ok(());
        }
        let sa = std::mem::replace(&mut self.shape[a], Shape::Unknown);
        let sb = std::mem::replace(&mut self.shape[b], Shape::Unknown);
        self.parent[b] = a;
        let merged = match (sa, sb) {
            (Shape::Unknown, s) | (s, Shape::Unknown) => s,
            (Shape::Integer, Shape::Integer) => Shape::Integer,
            (Shape::Float, Shape::Float) => Shape::Float,
            (Shape::Integer, Shape::Prim(p)) | (Shape::Prim(p), Shape::Integer)
                if p.is_integer() =>
            {
                Shape::Prim(p)
            }
            (Shape::Float, Shape::Prim(p)) | (Shape::Prim(p), Shape::Float) if p.is_float() => {
                Shape::Prim(p)
            }
            (Shape::Prim(p), Shape::Prim(q)) if p == q => Shape::Prim(p),
            (Shape::Tuple(xs), Shape::Tuple(ys)) if xs.len() == ys.len() => {
                for (&x, &y) in xs.iter().zip(&ys) {
                    self.unify(x, y)?;
                }
                Shape::Tuple(xs)
            }
            (Shape::Option(x), Shape::Option(y)) => {
                self.unify(x, y)?;
                Shape::Option(x)
            }
            (Shape::Struct(n, xs), Shape::Struct(m, ys))
                if n == m
                    && xs.len() == ys.len()
                    && xs.iter().zip(&ys).all(|(x, y)| x.0 == y.0) =>
            {
                for (x, y) in xs.iter().zip(&ys) {
                    self.unify(x.1, y.1)?;
                }
                Shape::Struct(n, xs)
            }
            (Shape::Enum(x), Shape::Enum(y)) if x == y => Shape::Enum(x),
            (Shape::Array(x, n), Shape::Array(y, m)) if n.is_none() || m.is_none() || n == m => {
                self.unify(x, y)?;
                Shape::Array(x, n.or(m))
            }
            (x, y) => return Err(format!("a type is both {x:?} and {y:?}")),
        };
        self.shape[a] = merged;
        Ok(())
    }

    fn set(&mut self, a: usize, shape: Shape) -> Result<(), String> {
        let b = self.fresh(shape);
        self.unify(a, b)
    }

    fn desc(&mut self, a: usize, depth: usize) -> Result<TypeDesc, String> {
        if depth > 64 {
            return Err("a type refers to itself".into());
        }
        let a = self.find(a);
        Ok(match self.shape[a].clone() {
            Shape::Unknown => TypeDesc::Tuple(Vec::new()),
            Shape::Integer => TypeDesc::Prim(Prim::I32),
            Shape::Float => TypeDesc::Prim(Prim::F64),
            Shape::Prim(p) => TypeDesc::Prim(p),
            Shape::Tuple(items) => TypeDesc::Tuple(
                items.iter().map(|&i| self.desc(i, depth + 1)).collect::<Result<_, _>>()?,
            ),
            Shape::Option(inner) => TypeDesc::Option(Box::new(self.desc(inner, depth + 1)?)),
            Shape::Struct(name, fields) => TypeDesc::Struct(
                name,
                fields
                    .iter()
                    .map(|&(f, c)| Ok((f, self.desc(c, depth + 1)?)))
                    .collect::<Result<_, String>>()?,
            ),
            Shape::Enum(desc) => desc,
            Shape::Array(item, Some(n)) => {
                TypeDesc::Array(Box::new(self.desc(item, depth + 1)?), n)
            }
            Shape::Array(_, None) => return Err("an array whose length nothing tells".into()),
        })
    }
}

/// The class of the field `name` of the struct `ty` whose fields are `fields`.
fn field_of(ty: &str, fields: &[(&'static str, usize)], name: &str) -> Result<usize, String> {
    fields
        .iter()
        .find(|(f, _)| *f == name)
        .map(|&(_, class)| class)
        .ok_or_else(|| format!("`{ty}` has no field `{name}` the device knows"))
}

fn unsigned_of(p: Prim) -> Option<Prim> {
    Some(match p {
        Prim::I8 | Prim::U8 => Prim::U8,
        Prim::I16 | Prim::U16 => Prim::U16,
        Prim::I32 | Prim::U32 => Prim::U32,
        Prim::I64 | Prim::U64 => Prim::U64,
        _ => return None,
    })
}

/// Gives the first struct literal of `named` whose class is still unknown the struct of its
/// name among the types `observed` holds (`Point` is `geo::Point`), if exactly one is: whether
/// one was given. An alias names no observed struct, and a name two observed structs share
/// decides nothing.
fn name_a_literal(
    s: &mut Solver,
    named: &mut Vec<(usize, &'static str)>,
    observed: &Observations<'_>,
) -> Result<bool, String> {
    fn walk(t: &TypeDesc, name: &str, found: &mut Vec<TypeDesc>) {
        let base = |full: &str| {
            let plain = full.split('<').next().unwrap_or(full);
            plain.rsplit("::").next().unwrap_or(plain).to_string()
        };
        match t {
            TypeDesc::Prim(_) => {}
            TypeDesc::Tuple(items) => items.iter().for_each(|i| walk(i, name, found)),
            TypeDesc::Option(inner) => walk(inner, name, found),
            TypeDesc::Struct(full, fields) => {
                if base(full) == name && !found.contains(t) {
                    found.push(t.clone());
                }
                fields.iter().for_each(|(_, f)| walk(f, name, found));
            }
            TypeDesc::Array(item, _) => walk(item, name, found),
            TypeDesc::Enum(..) => {}
        }
    }
    while let Some((class, name)) = named.pop() {
        let root = s.find(class);
        if s.shape[root] != Shape::Unknown {
            continue;
        }
        let mut found = Vec::new();
        let signatures = observed.par_fns.iter().flatten().flat_map(|(p, r)| p.iter().chain([r]));
        let all = observed.captures.iter().chain(&observed.root).chain(&observed.output);
        for t in all.chain(signatures) {
            walk(t, name, &mut found);
        }
        if let [only] = found.as_slice() {
            let b = s.of(only);
            s.unify(class, b)?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// The type of every class, or why they cannot be solved (with no method calls).
#[cfg(test)]
pub(crate) fn solve(
    classes: u32,
    constraints: &[Constraint],
    observed: &Observations<'_>,
) -> Result<Vec<TypeDesc>, String> {
    solve_with_methods(classes, constraints, observed, &mut |_, _| {
        Err("a method call the runtime cannot resolve here".to_string())
    })
}

/// The type of every class, or why they cannot be solved; `methods` finds the function of each
/// method call once its receiver's type is known.
#[cfg(test)]
pub(crate) fn solve_with_methods(
    classes: u32,
    constraints: &[Constraint],
    observed: &Observations<'_>,
    methods: &mut Methods<'_>,
) -> Result<Vec<TypeDesc>, String> {
    solve_instances(classes, constraints, observed, methods).map(|(types, _)| types)
}

/// The type of every class and the type arguments of each call of a generic `#[par_fn]` (one
/// list per call, empty for a function that is not generic), or why they cannot be solved.
///
/// A call of a generic function is an instance of it: its parameters and result that are the
/// type parameter `j` are one class (the instance's `j`-th type argument), whatever the other
/// instances of the function are.
pub(crate) fn solve_instances(
    classes: u32,
    constraints: &[Constraint],
    observed: &Observations<'_>,
    methods: &mut Methods<'_>,
) -> Result<(Vec<TypeDesc>, Vec<Vec<TypeDesc>>), String> {
    // The method calls decided so far: a `#[par_fn]` method's signature, or `None` for the
    // device's own method of the name (`Builtin`), for a receiver that is not a struct.
    let mut decided: std::collections::HashMap<usize, Option<Signature>> = Default::default();
    let builtin: std::collections::HashSet<usize> = constraints
        .iter()
        .filter_map(|c| match c {
            Constraint::Builtin(f, ..) => Some(*f as usize),
            _ => None,
        })
        .collect();
    let n = classes as usize;
    let mut s = Solver::new(n);
    let check = |c: ClassId| -> Result<usize, String> {
        if (c as usize) < n {
            Ok(c as usize)
        } else {
            Err(format!("class {c} out of range"))
        }
    };
    let mut deferred = Vec::new();
    let mut named = Vec::new();
    // The class of type argument `j` of instance `f`, made when first met.
    let mut arguments: std::collections::HashMap<(usize, u32), usize> = Default::default();
    let slot = |f: u32, k: usize| -> Option<u32> {
        match observed.generic.get(f as usize).and_then(|slots| slots.get(k)) {
            Some(SigSlot::TypeParam(j)) => Some(*j),
            _ => None,
        }
    };
    for constraint in constraints {
        match *constraint {
            Constraint::Same(a, b) => s.unify(check(a)?, check(b)?)?,
            Constraint::Prim(a, p) => s.set(check(a)?, Shape::Prim(p))?,
            Constraint::Integer(a) => s.set(check(a)?, Shape::Integer)?,
            Constraint::Float(a) => s.set(check(a)?, Shape::Float)?,
            Constraint::Tuple(a, items) => {
                let items = items.iter().map(|&c| check(c)).collect::<Result<Vec<_>, _>>()?;
                s.set(check(a)?, Shape::Tuple(items))?
            }
            Constraint::Option(a, b) => {
                let b = check(b)?;
                s.set(check(a)?, Shape::Option(b))?
            }
            Constraint::Array(a, b, n) => {
                let b = check(b)?;
                s.set(check(a)?, Shape::Array(b, n.map(|n| n as usize)))?
            }
            Constraint::Capture(a, k) | Constraint::Element(a, k) => {
                let desc = observed
                    .captures
                    .get(k as usize)
                    .ok_or_else(|| format!("no observation of capture {k}"))?;
                let b = s.of(desc);
                s.unify(check(a)?, b)?
            }
            Constraint::Root(a) => {
                let root = observed.root.as_ref().ok_or("no first generator")?;
                let b = s.of(root);
                s.unify(check(a)?, b)?
            }
            Constraint::Output(a) => {
                let output = observed.output.as_ref().ok_or("no elements")?;
                let b = s.of(output);
                s.unify(check(a)?, b)?
            }
            Constraint::Param(_, f, _) | Constraint::Return(_, f)
                if matches!(observed.par_fns.get(f as usize), Some(None)) =>
            {
                deferred.push(*constraint)
            }
            Constraint::Param(a, f, k) => {
                let (params, _) = observed
                    .par_fns
                    .get(f as usize)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| format!("no signature of #[par_fn] {f}"))?;
                let desc = params.get(k as usize).ok_or_else(|| {
                    format!("a #[par_fn] called with more than {} arguments", params.len())
                })?;
                let b = match slot(f, k as usize) {
                    Some(j) => {
                        *arguments.entry((f as usize, j)).or_insert_with(|| s.fresh(Shape::Unknown))
                    }
                    None => s.of(desc),
                };
                s.unify(check(a)?, b)?
            }
            Constraint::Return(a, f) => {
                let (params, ret) = observed
                    .par_fns
                    .get(f as usize)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| format!("no signature of #[par_fn] {f}"))?;
                let b = match slot(f, params.len()) {
                    Some(j) => {
                        *arguments.entry((f as usize, j)).or_insert_with(|| s.fresh(Shape::Unknown))
                    }
                    None => s.of(ret),
                };
                s.unify(check(a)?, b)?
            }
            Constraint::TypeArg(a, f, j) => {
                let b =
                    *arguments.entry((f as usize, j)).or_insert_with(|| s.fresh(Shape::Unknown));
                s.unify(check(a)?, b)?
            }
            Constraint::Field(..)
            | Constraint::Member(..)
            | Constraint::Variant(..)
            | Constraint::Unsigned(..)
            | Constraint::Builtin(..) => deferred.push(*constraint),
            Constraint::Named(a, name) => named.push((check(a)?, name)),
        }
    }
    // Fields and unsigned counterparts, once the tuples and integers they refer to are known.
    let mut progress = true;
    while progress && !deferred.is_empty() {
        progress = false;
        let mut waiting = Vec::new();
        for constraint in deferred {
            match constraint {
                Constraint::Field(a, k, b) => {
                    let ra = s.find(check(a)?);
                    match s.shape[ra].clone() {
                        Shape::Tuple(items) => {
                            let item = *items.get(k as usize).ok_or_else(|| {
                                format!("field .{k} of a tuple of {}", items.len())
                            })?;
                            s.unify(item, check(b)?)?;
                            progress = true;
                        }
                        // A tuple struct's field, named by its position.
                        Shape::Struct(ty, fields) => {
                            s.unify(field_of(ty, &fields, &k.to_string())?, check(b)?)?;
                            progress = true;
                        }
                        Shape::Option(inner) if k == 1 => {
                            s.unify(inner, check(b)?)?;
                            progress = true;
                        }
                        Shape::Option(_) if k == 0 => {
                            s.set(check(b)?, Shape::Prim(Prim::Bool))?;
                            progress = true;
                        }
                        Shape::Unknown => waiting.push(constraint),
                        other => return Err(format!("field .{k} of {other:?}")),
                    }
                }
                Constraint::Member(a, name, b) => {
                    let ra = s.find(check(a)?);
                    match s.shape[ra].clone() {
                        Shape::Struct(ty, fields) => {
                            s.unify(field_of(ty, &fields, name)?, check(b)?)?;
                            progress = true;
                        }
                        Shape::Unknown => waiting.push(constraint),
                        other => return Err(format!("field `{name}` of {other:?}")),
                    }
                }
                Constraint::Variant(a, name) => {
                    let ra = s.find(check(a)?);
                    match s.shape[ra].clone() {
                        Shape::Enum(TypeDesc::Enum(ty, _, variants)) => {
                            if !variants.iter().any(|(v, _)| *v == name) {
                                return Err(format!("`{ty}` has no variant `{name}`"));
                            }
                            progress = true;
                        }
                        Shape::Unknown => waiting.push(constraint),
                        other => return Err(format!("variant `{name}` of {other:?}")),
                    }
                }
                Constraint::Unsigned(a, b) => {
                    let rb = s.find(check(b)?);
                    match s.shape[rb].clone() {
                        Shape::Prim(p) => {
                            let u = unsigned_of(p).ok_or_else(|| format!("abs_diff of {p:?}"))?;
                            s.set(check(a)?, Shape::Prim(u))?;
                            progress = true;
                        }
                        _ => waiting.push(constraint),
                    }
                }
                // A method call: its function is found by its receiver's type, then it is
                // a call like any other.
                Constraint::Param(a, f, k) => {
                    let f = f as usize;
                    if !decided.contains_key(&f) && k == 0 {
                        let ra = s.find(check(a)?);
                        let (receiver, number) = match s.shape[ra].clone() {
                            Shape::Struct(name, _) => (Ok(name), false),
                            // A fieldless enum is also a number: `c.max(d)` is the numbers'
                            // unless its `#[par_fn] impl` has a `max`.
                            Shape::Enum(TypeDesc::Enum(name, ..)) => (Ok(name), true),
                            Shape::Unknown => {
                                waiting.push(constraint);
                                continue;
                            }
                            _ => (Err(s.desc(ra, 0)?.to_string()), true),
                        };
                        let decision = match receiver {
                            Err(_) if builtin.contains(&f) => None,
                            Ok(name) if number && builtin.contains(&f) => methods(f, Ok(name)).ok(),
                            receiver => Some(methods(f, receiver)?),
                        };
                        decided.insert(f, decision);
                    }
                    match decided.get(&f) {
                        Some(Some((params, _))) => {
                            let desc = params.get(k as usize).ok_or_else(|| {
                                format!("a method called with more than {} arguments", params.len())
                            })?;
                            let b = s.of(&desc.clone());
                            s.unify(check(a)?, b)?;
                            progress = true;
                        }
                        // The device's own method: the call's `Builtin`s type it.
                        Some(None) => progress = true,
                        None => waiting.push(constraint),
                    }
                }
                Constraint::Return(a, f) => match decided.get(&(f as usize)) {
                    Some(Some((_, ret))) => {
                        let b = s.of(&ret.clone());
                        s.unify(check(a)?, b)?;
                        progress = true;
                    }
                    Some(None) => progress = true,
                    None => waiting.push(constraint),
                },
                Constraint::Builtin(f, a, b) => match decided.get(&(f as usize)) {
                    Some(None) => {
                        s.unify(check(a)?, check(b)?)?;
                        progress = true;
                    }
                    Some(Some(_)) => progress = true,
                    None => waiting.push(constraint),
                },
                _ => unreachable!(
                    "only fields, variants, unsigned counterparts and method calls wait"
                ),
            }
        }
        deferred = waiting;
        // When they are stuck, a struct literal that nothing else types takes the observed
        // struct of its name, and they go on.
        if !progress && !deferred.is_empty() {
            progress = name_a_literal(&mut s, &mut named, observed)?;
        }
        // A receiver nothing types is not a struct: the calls waiting on one are the
        // device's own methods.
        if !progress {
            let pending: Vec<usize> =
                builtin.iter().copied().filter(|f| !decided.contains_key(f)).collect();
            for f in pending {
                decided.insert(f, None);
                progress = true;
            }
        }
    }
    if let Some(c) = deferred.first() {
        return Err(format!("cannot determine the type behind {c:?}"));
    }
    // A literal nothing reads a field of (`let _unused = Point { .. }`).
    while name_a_literal(&mut s, &mut named, observed)? {}
    let types = (0..n).map(|c| s.desc(c, 0)).collect::<Result<Vec<_>, _>>()?;
    let mut instances = Vec::new();
    for (f, slots) in observed.generic.iter().enumerate() {
        let count = slots
            .iter()
            .filter_map(|s| match s {
                SigSlot::TypeParam(j) => Some(*j + 1),
                SigSlot::Concrete => None,
            })
            .max()
            .unwrap_or(0);
        let mut args = Vec::new();
        for j in 0..count {
            let class = arguments.get(&(f, j)).copied();
            let known = class.map(|c| s.find(c)).filter(|&r| s.shape[r] != Shape::Unknown);
            let Some(class) = known else {
                return Err(format!(
                    "type argument {j} of the generic #[par_fn] of call {f} is not decided by \
                     the types of its arguments and result"
                ));
            };
            args.push(s.desc(class, 0)?);
        }
        instances.push(args);
    }
    Ok((types, instances))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(root: TypeDesc, output: TypeDesc) -> Observations<'static> {
        Observations {
            captures: &[],
            root: Some(root),
            output: Some(output),
            par_fns: &[],
            generic: &[],
        }
    }

    #[test]
    fn literals_take_the_type_of_what_they_meet() {
        // x * 0.5 with x: f32 stays f32; an integer literal alone is i32.
        let constraints = [
            Constraint::Root(0),
            Constraint::Float(1),
            Constraint::Same(0, 1),
            Constraint::Integer(2),
            Constraint::Output(0),
        ];
        let f32_ = TypeDesc::Prim(Prim::F32);
        let types = solve(3, &constraints, &observed(f32_.clone(), f32_.clone())).unwrap();
        assert_eq!(types, [f32_.clone(), f32_, TypeDesc::Prim(Prim::I32)]);
    }

    #[test]
    fn fields_of_observed_tuples_and_disagreements() {
        let pair = TypeDesc::Tuple(vec![TypeDesc::Prim(Prim::U8), TypeDesc::Prim(Prim::F64)]);
        let constraints = [Constraint::Root(0), Constraint::Field(0, 1, 1), Constraint::Output(1)];
        let types =
            solve(2, &constraints, &observed(pair.clone(), TypeDesc::Prim(Prim::F64))).unwrap();
        assert_eq!(types[1], TypeDesc::Prim(Prim::F64));
        // The head said f64, the output is u8: a disagreement, not a silent choice.
        let bad = solve(2, &constraints, &observed(pair, TypeDesc::Prim(Prim::U8)));
        assert!(bad.is_err());
    }

    #[test]
    fn method_calls_are_found_by_their_receivers_type() {
        let point = TypeDesc::Struct("m::Point", vec![("x", TypeDesc::Prim(Prim::F32))]);
        let f32_ = TypeDesc::Prim(Prim::F32);
        // p.norm(): the receiver is the first generator's struct, the result the output.
        let constraints = [
            Constraint::Root(0),
            Constraint::Param(1, 0, 0),
            Constraint::Same(0, 1),
            Constraint::Return(2, 0),
            Constraint::Output(2),
        ];
        let observed = Observations {
            captures: &[],
            root: Some(point.clone()),
            output: Some(f32_.clone()),
            par_fns: &[None],
            generic: &[],
        };
        let mut asked = Vec::new();
        let types = solve_with_methods(3, &constraints, &observed, &mut |f, receiver| {
            asked.push((f, receiver.clone()));
            Ok((vec![point.clone()], f32_.clone()))
        })
        .unwrap();
        assert_eq!(types, [point.clone(), point.clone(), f32_.clone()]);
        assert_eq!(asked, [(0, Ok("m::Point"))]);
        // A receiver that is not a struct: the finder says why.
        let observed = Observations { root: Some(f32_.clone()), ..observed };
        let err = solve_with_methods(3, &constraints, &observed, &mut |_, receiver| {
            Err(format!("no method for {receiver:?}"))
        });
        assert_eq!(err, Err("no method for Err(\"f32\")".to_string()));
    }

    #[test]
    fn a_numeric_method_where_the_receiver_is_not_a_struct() {
        // x.abs() with x: f32: `Builtin` joins the call to the numeric method's typing (over
        // stand-ins 3 and 4); the finder is not asked.
        let f32_ = TypeDesc::Prim(Prim::F32);
        let constraints = [
            Constraint::Root(0),
            Constraint::Same(3, 4),
            Constraint::Builtin(0, 2, 3),
            Constraint::Builtin(0, 0, 4),
            Constraint::Param(1, 0, 0),
            Constraint::Same(0, 1),
            Constraint::Return(2, 0),
        ];
        let observed = Observations {
            captures: &[],
            root: Some(f32_.clone()),
            output: None,
            par_fns: &[None],
            generic: &[],
        };
        let types = solve_with_methods(5, &constraints, &observed, &mut |_, _| {
            Err("asked for a method".to_string())
        })
        .unwrap();
        assert_eq!(types[2], f32_);
        // A struct receiver is the struct's method: the `Builtin`s do not hold.
        let point = TypeDesc::Struct("m::Line", vec![("x", TypeDesc::Prim(Prim::F32))]);
        let observed = Observations { root: Some(point.clone()), ..observed };
        let types = solve_with_methods(5, &constraints, &observed, &mut |_, _| {
            Ok((vec![point.clone()], TypeDesc::Prim(Prim::U64)))
        })
        .unwrap();
        assert_eq!(types[2], TypeDesc::Prim(Prim::U64));
        assert_eq!(types[4], TypeDesc::Tuple(Vec::new()), "the stand-in stays untyped");
    }

    #[test]
    fn each_call_of_a_generic_function_is_an_instance() {
        // lerp(a, b, t) -> F called twice: with the root's f32, and with an unsuffixed float
        // literal written `lerp::<f32>` (TypeArg), then with one nothing decides (f64).
        let placeholder = TypeDesc::Tuple(Vec::new());
        let signature = (vec![placeholder.clone(); 3], placeholder);
        let slots = &[SigSlot::TypeParam(0); 4][..];
        let constraints = [
            Constraint::Root(0),
            Constraint::Param(0, 0, 0),
            Constraint::Return(1, 0),
            Constraint::Float(2),
            Constraint::Param(2, 1, 0),
            Constraint::Prim(3, Prim::F32),
            Constraint::TypeArg(3, 1, 0),
            Constraint::Float(4),
            Constraint::Param(4, 2, 0),
        ];
        let f32_ = TypeDesc::Prim(Prim::F32);
        let signatures = [Some(signature.clone()), Some(signature.clone()), Some(signature)];
        let observed = Observations {
            captures: &[],
            root: Some(f32_.clone()),
            output: None,
            par_fns: &signatures,
            generic: &[slots, slots, slots],
        };
        let (types, instances) =
            solve_instances(5, &constraints, &observed, &mut |_, _| Err("no methods".into()))
                .unwrap();
        assert_eq!(types[1], f32_, "the result is the instance's type argument");
        assert_eq!(types[2], f32_, "the literal is the written type argument's");
        assert_eq!(
            instances,
            [vec![f32_.clone()], vec![f32_], vec![TypeDesc::Prim(Prim::F64)]],
            "each call has its own type arguments"
        );
        // An instance's parameters disagreeing is an error, not a choice.
        let bad = [Constraint::Root(0), Constraint::Param(0, 0, 0), Constraint::Prim(1, Prim::U8)];
        let bad = [&bad[..], &[Constraint::Param(1, 0, 1)]].concat();
        assert!(solve_instances(2, &bad, &observed, &mut |_, _| Err("none".into())).is_err());
    }

    #[test]
    fn struct_fields_by_name() {
        let point = TypeDesc::Struct(
            "m::Point",
            vec![("x", TypeDesc::Prim(Prim::F32)), ("y", TypeDesc::Prim(Prim::I64))],
        );
        let constraints =
            [Constraint::Root(0), Constraint::Member(0, "y", 1), Constraint::Output(1)];
        let types =
            solve(2, &constraints, &observed(point.clone(), TypeDesc::Prim(Prim::I64))).unwrap();
        assert_eq!(types, [point.clone(), TypeDesc::Prim(Prim::I64)]);
        // A field the struct lacks, or a struct of another name, is an error.
        let missing = [Constraint::Root(0), Constraint::Member(0, "z", 1), Constraint::Output(1)];
        assert!(solve(2, &missing, &observed(point.clone(), TypeDesc::Prim(Prim::I64))).is_err());
        let other = TypeDesc::Struct("m::Other", vec![("x", TypeDesc::Prim(Prim::F32))]);
        let same = [Constraint::Root(0), Constraint::Output(0)];
        assert!(solve(1, &same, &observed(point, other)).is_err());
    }

    #[test]
    fn tuple_struct_fields_by_position_and_enum_variants() {
        let meters = TypeDesc::Struct(
            "m::Meters",
            vec![("0", TypeDesc::Prim(Prim::F64)), ("1", TypeDesc::Prim(Prim::U16))],
        );
        // `w.1` of a tuple struct: the field named `1`.
        let constraints = [Constraint::Root(0), Constraint::Field(0, 1, 1), Constraint::Output(1)];
        let types =
            solve(2, &constraints, &observed(meters.clone(), TypeDesc::Prim(Prim::U16))).unwrap();
        assert_eq!(types[1], TypeDesc::Prim(Prim::U16));
        let past = [Constraint::Root(0), Constraint::Field(0, 2, 1), Constraint::Output(1)];
        assert!(solve(2, &past, &observed(meters, TypeDesc::Prim(Prim::U16))).is_err());
        // `Color::Blue` compared with an element: the element's enum, which must have it.
        let color = TypeDesc::Enum("m::Color", Prim::I64, vec![("Red", 0), ("Blue", 5)]);
        let blue = [Constraint::Root(0), Constraint::Variant(1, "Blue"), Constraint::Same(0, 1)];
        let types = solve(2, &blue, &observed(color.clone(), TypeDesc::Prim(Prim::Bool))).unwrap();
        assert_eq!(types, [color.clone(), color.clone()]);
        let green = [Constraint::Root(0), Constraint::Variant(1, "Green"), Constraint::Same(0, 1)];
        let err = solve(2, &green, &observed(color.clone(), TypeDesc::Prim(Prim::Bool)));
        assert!(err.unwrap_err().contains("has no variant `Green`"));
        // An enum is not its primitive, nor another enum.
        let level = TypeDesc::Enum("m::Level", Prim::I64, vec![("Red", 0)]);
        let same = [Constraint::Root(0), Constraint::Output(0)];
        assert!(solve(1, &same, &observed(color.clone(), level)).is_err());
        assert!(solve(1, &same, &observed(color, TypeDesc::Prim(Prim::I64))).is_err());
        // A variant whose enum nothing observes cannot be solved.
        let alone = [Constraint::Variant(0, "Red")];
        assert!(solve(1, &alone, &observed(TypeDesc::Prim(Prim::U8), TypeDesc::Prim(Prim::U8)))
            .is_err());
    }

    #[test]
    fn arrays_take_their_length_from_what_they_meet() {
        let arr = TypeDesc::Array(Box::new(TypeDesc::Prim(Prim::F32)), 3);
        // a[i] of the elements (length unknown to the macro) is an f32.
        let index = [Constraint::Root(0), Constraint::Array(0, 1, None), Constraint::Output(1)];
        let types = solve(2, &index, &observed(arr.clone(), TypeDesc::Prim(Prim::F32))).unwrap();
        assert_eq!(types, [arr.clone(), TypeDesc::Prim(Prim::F32)]);
        // A literal of four elements is not a [f32; 3].
        let four = [Constraint::Root(0), Constraint::Array(0, 1, Some(4)), Constraint::Output(1)];
        assert!(solve(2, &four, &observed(arr.clone(), TypeDesc::Prim(Prim::F32))).is_err());
        // [x; 3] of unsuffixed floats read back as [f32; 3].
        let lit = [
            Constraint::Float(1),
            Constraint::Array(0, 1, Some(3)),
            Constraint::Output(0),
            Constraint::Root(2),
        ];
        let types = solve(3, &lit, &observed(TypeDesc::Prim(Prim::U8), arr.clone())).unwrap();
        assert_eq!(types[0], arr);
        // An array whose length nothing tells cannot be solved.
        let unknown = [Constraint::Array(0, 1, None), Constraint::Root(1), Constraint::Output(1)];
        let prim = TypeDesc::Prim(Prim::U8);
        assert!(solve(2, &unknown, &observed(prim.clone(), prim)).is_err());
    }
}
