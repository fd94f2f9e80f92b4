//! Programs: a comprehension's kernels with their types filled in, built once per process and
//! cached on disk.
//!
//! A comprehension's program is, in order: the dialect's prelude and scalar operations; the
//! *type prelude* — for each class `#define PC_Cn tag`, and for each tuple, `Option` or derived
//! struct type (its members the fields' names, `m_x`: `parcomp_contract::member_name`) a
//! struct with its constructor, zero, comparisons and column loads and stores; the generated
//! functions; the reduction kernels instantiated for each of its reductions; and the generated
//! kernels. The generic kernels (scan, load-balanced search, compaction) are one program per
//! device, and so are the radix sort's (`sort.cl`).

use super::device::{Device, DeviceError, DeviceErrorKind, Program};
use super::plan::{CaptureKind, DevicePlan};
pub(crate) use super::record::Provenance;
use super::types::{Prim, RecordLayout, TypeDesc};
use super::{bundle, cache, record};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) use super::device::GROUP;
/// Items per work-item of the tiled kernels (`PC_ITEMS`).
pub(crate) const ITEMS: u64 = 4;
/// Positions per tile of the tiled kernels (`PC_TILE`).
pub(crate) const TILE: u64 = GROUP as u64 * ITEMS;
/// Consecutive positions per work-item of a filtering level below the first generator
/// (`PC_LEVEL_ITEMS`): one parent search per work-item instead of one per position, the next
/// positions' parent found by stepping, and one rank scan per `GROUP` × this many positions.
pub(crate) const LEVEL_ITEMS: u64 = 32;
/// Consecutive positions per work-item of a nested reduction's level (`PC_LEVEL_ITEMS`, defined
/// per program): [`LEVEL_ITEMS`] on a GPU; on a CPU device (PoCL runs a work-group's work-items
/// as a loop on one core) four times as many, the work-item's setup, its first parent's merge
/// and the work-group's reduction by key amortised over more positions (the sparse matrix ×
/// vector's level kernel: 20–30 % fewer CPU samples on PoCL than with 32). The work-item holds
/// no value per position, so nothing bounds it by the classes' widths.
pub(crate) fn level_items(cpu_shapes: bool) -> u64 {
    if cpu_shapes {
        4 * LEVEL_ITEMS
    } else {
        LEVEL_ITEMS
    }
}

/// Positions per work-item of a level that writes a value per position (`PC_PLAIN_ITEMS`,
/// defined per program). On a CPU device, below the first generator, 16 consecutive ones: the
/// parent found by a search once per work-item, then by stepping, instead of a search per
/// position. Few, so that the level's positions still spread over every core: such levels are
/// often the small upper levels of a comprehension (the Pythagorean triples' second, 20,000
/// positions, in five work-groups rather than one); at the first generator a CPU device takes
/// one. On a GPU, at every level, 4 positions `GROUP` apart: a tile of 1,024 positions pays its
/// setup (the parents' search, the fault word's read) once, and a work-item has four loads in
/// flight — while 10⁶ positions still make some 1,000 work-groups, a wave of a large GPU.
/// `PARCOMP_DEVICE_PLAIN_ITEMS` (1 to 32, read once per process) sets it for either shape, to
/// measure the choice on a device: 1 is a GPU's form of one position per work-item.
pub(crate) fn plain_items(cpu_shapes: bool) -> u64 {
    static SET: OnceLock<Option<u64>> = OnceLock::new();
    let set = SET.get_or_init(|| env_count("PARCOMP_DEVICE_PLAIN_ITEMS").filter(|&n| n <= 32));
    match (set, cpu_shapes) {
        (Some(n), _) => *n,
        (None, true) => 16,
        (None, false) => 4,
    }
}

/// The environment variable `var` as a positive count (`_` allowed between digits).
pub(crate) fn env_count(var: &str) -> Option<u64> {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse::<u64>().ok())
        .filter(|&c| c > 0)
}

/// Consecutive positions per work-item of a filtering level below the first generator
/// (`PC_FILTER_ITEMS`, defined per program): [`LEVEL_ITEMS`] on a GPU, where more would leave
/// its cores idle at the sizes a CPU handles and its work-items hold their kept values in
/// local memory; on a CPU device (PoCL runs a work-group's work-items as a loop on one core)
/// up to four times as many, the rows they cover longer and their setup and rank scan
/// amortised over more positions, as long as the values a work-item may hold stay within
/// 2 kB (the widest class's values, `items` of them).
pub(crate) fn filter_items(types: &[TypeDesc], is_cpu: bool) -> u64 {
    if !is_cpu {
        return LEVEL_ITEMS;
    }
    let widest =
        types.iter().map(|t| t.leaves().iter().map(|l| l.size() as u64).sum()).max().unwrap_or(0);
    let fit = 2048 / widest.max(1);
    if fit >= 4 * LEVEL_ITEMS {
        4 * LEVEL_ITEMS
    } else if fit >= 2 * LEVEL_ITEMS {
        2 * LEVEL_ITEMS
    } else {
        LEVEL_ITEMS
    }
}

/// Whether a device's kernels take the shapes made for a CPU device (PoCL runs a work-group's
/// work-items as loops on one core): more positions per work-item of a filtering level
/// ([`filter_items`]), the filters' test over whole vectors ([`probe_lanes`]), and the first
/// generator's filtering level and a top-level reduction by blocks of consecutive positions per
/// work-item (`PC_CPU_SHAPES`) rather than neighbouring work-items reading neighbouring
/// positions, which a GPU coalesces. The device's kind
/// decides, unless `PARCOMP_DEVICE_SHAPES` is `gpu` or `cpu` (read once per process): CI runs
/// some device tests on PoCL with the GPU's shapes, so that the kernels a GPU runs are run.
pub(crate) fn cpu_shapes(is_cpu: bool) -> bool {
    static CHOSEN: OnceLock<Option<bool>> = OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| {
        match std::env::var("PARCOMP_DEVICE_SHAPES").map(|v| v.trim().to_ascii_lowercase()) {
            Ok(v) if v == "gpu" => Some(false),
            Ok(v) if v == "cpu" => Some(true),
            _ => None,
        }
    });
    chosen.unwrap_or(is_cpu)
}

/// The positions a filtering level's test of a row (its filters alone, `coarse_rows` in the
/// kernel writer) takes at a time (`PC_PROBE_LANES`, defined per program): on a CPU device,
/// whose compiler vectorizes that loop, a vector's lanes of 32-bit values — the row padded to
/// whole vectors with its last position again, uncounted, so that no scalar loop finishes each
/// row; on a GPU, whose work-item runs the loop alone, 1 (no padding).
pub(crate) fn probe_lanes(is_cpu: bool) -> u64 {
    if is_cpu {
        8
    } else {
        1
    }
}

/// Combined items per work-item of the load-balanced search (`PC_LBS_ITEMS`).
pub(crate) const LBS_ITEMS: u64 = 16;

/// Positions per work-item of a top-level reduction's kernel (`pc_rN_items`) when its
/// accumulator is `acc`. The kernel computes `GROUP` × items positions per work-group, striped
/// (work-item `t` takes `t`, `t + GROUP`, ...: neighbouring work-items read neighbouring
/// elements), stages their values in local memory, and reduces them there in order. The stage
/// is kept within 16 KiB, counting every component of the accumulator as 8 bytes (the most a C
/// struct of such components pads it to), and at most 8 positions per work-item. (With a CPU
/// device's shapes each work-item folds the same positions as they come, without the stage;
/// more of them per work-item made no difference to a sum on PoCL.)
pub(crate) fn reduce_items(acc: &TypeDesc) -> u64 {
    let bytes = 8 * acc.leaves().len().max(1) as u64;
    (16384 / (GROUP as u64 * bytes)).clamp(1, 8)
}

const PRELUDE: &str = include_str!("kernels/prelude.h");
const SCALAR: &str = include_str!("kernels/scalar.h");
const SOURCES: &str = include_str!("kernels/sources.h");
const SEARCH: &str = include_str!("kernels/search.h");
const CAPTURES: &str = include_str!("kernels/captures.h");
const GENERIC: &str = include_str!("kernels/generic.cl");
const REDUCE: &str = include_str!("kernels/reduce.cl");
const SORT: &str = include_str!("kernels/sort.cl");

/// The headers every program starts with.
fn headers(fp64: bool) -> String {
    let mut out = String::new();
    if fp64 {
        out.push_str("#define PC_HAVE_F64 1\n");
    }
    // Every launch of the runtime's programs runs work-groups of GROUP work-items.
    let _ = writeln!(out, "#define PC_WG {GROUP}\n#define PC_FIXED_WG 1\n#define PC_ITEMS {ITEMS}");
    out.push_str(&parcomp_contract::fault_defines());
    for part in [PRELUDE, SCALAR, SOURCES, SEARCH, CAPTURES] {
        out.push_str(part);
        out.push('\n');
    }
    out
}

/// The declarations of the types of a program, and the tags of its types.
pub(crate) struct TypePrelude {
    names: HashMap<TypeDesc, String>,
    /// The declarations.
    pub(crate) source: String,
}

impl TypePrelude {
    /// The tag of `t` (declared by [`type_prelude`]).
    pub(crate) fn tag(&self, t: &TypeDesc) -> &str {
        &self.names[t]
    }

    /// Whether [`type_prelude`] declared `t`.
    pub(crate) fn declares(&self, t: &TypeDesc) -> bool {
        self.names.contains_key(t)
    }

    /// `#define PC_Cn tag` for classes solved to `types`, and for a class solved to a
    /// fieldless enum `#define PC_Cn_V_<variant> value` for each of its variants (what the
    /// macro writes for `Color::Red` in a `#[par_fn]`).
    pub(crate) fn class_defines(&self, types: &[TypeDesc]) -> String {
        let mut out = String::new();
        for (k, t) in types.iter().enumerate() {
            let tag = self.tag(t);
            let _ = writeln!(out, "#define PC_C{k} {tag}");
            if let TypeDesc::Enum(_, _, variants) = t {
                for (name, value) in variants {
                    // The discriminant's bits, converted to the enum's primitive as every
                    // integer literal is (`PC_ILIT`).
                    let _ =
                        writeln!(out, "#define PC_C{k}_V_{name} PC_ILIT({tag}, {})", *value as u64);
                }
            }
        }
        out
    }
}

/// `#undef`s of the class macros of classes solved to `types` ([`TypePrelude::class_defines`]).
pub(crate) fn class_undefs(types: &[TypeDesc]) -> String {
    let mut out = String::new();
    for (k, t) in types.iter().enumerate() {
        let _ = writeln!(out, "#undef PC_C{k}");
        if let TypeDesc::Enum(_, _, variants) = t {
            for (name, _) in variants {
                let _ = writeln!(out, "#undef PC_C{k}_V_{name}");
            }
        }
    }
    out
}

/// The type prelude declaring every type of `types`.
pub(crate) fn type_prelude<'t>(types: impl IntoIterator<Item = &'t TypeDesc>) -> TypePrelude {
    let mut names: HashMap<TypeDesc, String> = HashMap::new();
    let mut source = String::new();
    // Every primitive's loads, stores and zero.
    for p in Prim::ALL {
        let tag = p.tag();
        let _ = writeln!(
            source,
            "PC_FN pc_{tag} pc_load_{tag}(PC_GLOBAL const pc_u8 *base, pc_u64 cap, pc_u64 i) {{ (void)cap; return ((PC_GLOBAL const pc_{tag} *)base)[i]; }}\n\
             PC_FN void pc_store_{tag}(PC_GLOBAL pc_u8 *base, pc_u64 cap, pc_u64 i, pc_{tag} v) {{ (void)cap; ((PC_GLOBAL pc_{tag} *)base)[i] = v; }}\n\
             PC_FN pc_{tag} pc_zero_{tag}(void) {{ return (pc_{tag})0; }}",
        );
        if p == Prim::F32 || p == Prim::F64 {
            // f64 is declared only where the device has it.
        }
        names.insert(TypeDesc::Prim(p), tag.to_string());
    }
    if source.contains("pc_f64") {
        // Guard the f64 functions like scalar.h does.
        let mut guarded = String::new();
        for line in source.lines() {
            if line.contains("pc_f64") {
                let _ = writeln!(guarded, "#ifdef PC_HAVE_F64\n{line}\n#endif");
            } else {
                let _ = writeln!(guarded, "{line}");
            }
        }
        source = guarded;
    }
    for t in types {
        declare(t, &mut names, &mut source);
    }
    TypePrelude { names, source }
}

/// The tag of `t`, declaring it (and its parts) first if needed.
fn declare(t: &TypeDesc, names: &mut HashMap<TypeDesc, String>, out: &mut String) -> String {
    if let Some(name) = names.get(t) {
        return name.clone();
    }
    let tag = match t {
        TypeDesc::Prim(p) => p.tag().to_string(),
        TypeDesc::Tuple(items) if items.is_empty() => {
            let _ = writeln!(
                out,
                "typedef pc_u8 pc_unit;\n\
                 PC_FN pc_unit pc_make_unit(void) {{ return 0; }}\n\
                 PC_FN pc_unit pc_zero_unit(void) {{ return 0; }}\n\
                 PC_FN pc_unit pc_load_unit(PC_GLOBAL const pc_u8 *base, pc_u64 cap, pc_u64 i) {{ (void)base; (void)cap; (void)i; return 0; }}\n\
                 PC_FN void pc_store_unit(PC_GLOBAL pc_u8 *base, pc_u64 cap, pc_u64 i, pc_unit v) {{ (void)base; (void)cap; (void)i; (void)v; }}\n\
                 PC_FN pc_bool pc_eq_unit(pc_unit a, pc_unit b) {{ (void)a; (void)b; return 1; }}\n\
                 PC_FN pc_bool pc_ne_unit(pc_unit a, pc_unit b) {{ (void)a; (void)b; return 0; }}\n\
                 PC_FN pc_bool pc_lt_unit(pc_unit a, pc_unit b) {{ (void)a; (void)b; return 0; }}\n\
                 PC_FN pc_bool pc_le_unit(pc_unit a, pc_unit b) {{ (void)a; (void)b; return 1; }}\n\
                 PC_FN pc_bool pc_gt_unit(pc_unit a, pc_unit b) {{ (void)a; (void)b; return 0; }}\n\
                 PC_FN pc_bool pc_ge_unit(pc_unit a, pc_unit b) {{ (void)a; (void)b; return 1; }}\n\
                 PC_FN pc_unit pc_min_unit(pc_unit a, pc_unit b) {{ (void)b; return a; }}\n\
                 PC_FN pc_unit pc_max_unit(pc_unit a, pc_unit b) {{ (void)a; return b; }}"
            );
            "unit".to_string()
        }
        // A struct without fields is held as the unit type (C has no empty struct).
        TypeDesc::Struct(_, fields) if fields.is_empty() => {
            declare(&TypeDesc::Tuple(Vec::new()), names, out)
        }
        // A fieldless enum is its discriminant: its primitive's tag, so that comparisons and
        // `as` casts are the primitive's.
        TypeDesc::Enum(_, repr, _) => declare(&TypeDesc::Prim(*repr), names, out),
        TypeDesc::Array(item, n) => {
            let part = declare(item, names, out);
            let tag = format!("arr{}", names.len());
            array(&tag, item, &part, *n, out);
            tag
        }
        TypeDesc::Tuple(_) | TypeDesc::Option(_) | TypeDesc::Struct(..) => {
            let (parts, members, prefix) = match t {
                TypeDesc::Tuple(items) => (items.clone(), positional(items.len()), "tup"),
                TypeDesc::Option(inner) => {
                    (vec![TypeDesc::Prim(Prim::Bool), (**inner).clone()], positional(2), "opt")
                }
                TypeDesc::Struct(_, fields) => (
                    fields.iter().map(|(_, t)| t.clone()).collect(),
                    fields.iter().map(|(f, _)| parcomp_contract::member_name(f)).collect(),
                    "st",
                ),
                TypeDesc::Prim(_) | TypeDesc::Enum(..) | TypeDesc::Array(..) => unreachable!(),
            };
            let part_tags: Vec<String> = parts.iter().map(|p| declare(p, names, out)).collect();
            let tag = format!("{prefix}{}", names.len());
            composite(&tag, t, &part_tags, &members, prefix == "opt", out);
            tag
        }
    };
    names.insert(t.clone(), tag.clone());
    tag
}

/// The members of a tuple (or `Option`) of `n` parts: `f0`, `f1`, ...
fn positional(n: usize) -> Vec<String> {
    (0..n).map(|k| format!("f{k}")).collect()
}

/// The declarations of a tuple, `Option` or struct type: `members` are the C members of its
/// parts.
fn composite(
    tag: &str,
    t: &TypeDesc,
    parts: &[String],
    members: &[String],
    option: bool,
    out: &mut String,
) {
    let ty = format!("pc_{tag}");
    let _ = write!(out, "typedef struct {{");
    for (p, m) in parts.iter().zip(members) {
        let _ = write!(out, " pc_{p} {m};");
    }
    let _ = writeln!(out, " }} {ty};");
    // Constructor and zero.
    let params: Vec<String> =
        parts.iter().enumerate().map(|(k, p)| format!("pc_{p} a{k}")).collect();
    let _ = write!(out, "PC_FN {ty} pc_make_{tag}({}) {{ {ty} r;", params.join(", "));
    for (k, m) in members.iter().enumerate() {
        let _ = write!(out, " r.{m} = a{k};");
    }
    let _ = writeln!(out, " return r; }}");
    let zeros: Vec<String> = parts.iter().map(|p| format!("pc_zero_{p}()")).collect();
    let _ = writeln!(
        out,
        "PC_FN {ty} pc_zero_{tag}(void) {{ return pc_make_{tag}({}); }}",
        zeros.join(", ")
    );
    // Loads and stores, component by component (see `ColumnLayout`).
    let leaves = leaf_paths(t);
    let _ = write!(out, "PC_FN {ty} pc_load_{tag}(PC_GLOBAL const pc_u8 *base, pc_u64 cap, pc_u64 i) {{ {ty} r; pc_u64 off = 0;");
    for (path, leaf) in &leaves {
        let _ = write!(
            out,
            " r{path} = ((PC_GLOBAL const pc_{l} *)(base + off))[i]; off += (cap * {s} + 7) & ~(pc_u64)7;",
            l = leaf.tag(),
            s = leaf.size()
        );
    }
    let _ = writeln!(out, " (void)off; return r; }}");
    let _ = write!(out, "PC_FN void pc_store_{tag}(PC_GLOBAL pc_u8 *base, pc_u64 cap, pc_u64 i, {ty} v) {{ pc_u64 off = 0;");
    for (path, leaf) in &leaves {
        let _ = write!(
            out,
            " ((PC_GLOBAL pc_{l} *)(base + off))[i] = v{path}; off += (cap * {s} + 7) & ~(pc_u64)7;",
            l = leaf.tag(),
            s = leaf.size()
        );
    }
    let _ = writeln!(out, " (void)off; }}");
    // Comparisons: tuples lexicographically, `None` before `Some`, as Rust orders them.
    if option {
        let inner = &parts[1];
        let _ = writeln!(
            out,
            "PC_FN pc_bool pc_eq_{tag}({ty} a, {ty} b) {{ return (pc_bool)(a.f0 == b.f0 && (!a.f0 || pc_eq_{inner}(a.f1, b.f1))); }}\n\
             PC_FN pc_bool pc_lt_{tag}({ty} a, {ty} b) {{ return (pc_bool)((!a.f0 && b.f0) || (a.f0 && b.f0 && pc_lt_{inner}(a.f1, b.f1))); }}\n\
             PC_FN pc_bool pc_le_{tag}({ty} a, {ty} b) {{ return (pc_bool)(!a.f0 || (b.f0 && pc_le_{inner}(a.f1, b.f1))); }}"
        );
    } else {
        let eq: Vec<String> =
            parts.iter().zip(members).map(|(p, k)| format!("pc_eq_{p}(a.{k}, b.{k})")).collect();
        let _ = writeln!(
            out,
            "PC_FN pc_bool pc_eq_{tag}({ty} a, {ty} b) {{ return (pc_bool)({}); }}",
            if eq.is_empty() { "1".into() } else { eq.join(" && ") }
        );
        // a < b: the first unequal component decides; all equal is not less. The last
        // component compares with its own < and <= (no `&& 0` for the compiler to warn about).
        // (A struct compares as `#[derive(PartialOrd)]` does: by its fields in order.)
        let (mut lt, mut le) = match parts.iter().zip(members).next_back() {
            Some((p, k)) => {
                (format!("pc_lt_{p}(a.{k}, b.{k})"), format!("pc_le_{p}(a.{k}, b.{k})"))
            }
            None => ("0".to_string(), "1".to_string()),
        };
        for (p, k) in parts.iter().zip(members).rev().skip(1) {
            lt = format!("(pc_lt_{p}(a.{k}, b.{k}) || (pc_eq_{p}(a.{k}, b.{k}) && {lt}))");
            le = format!("(pc_lt_{p}(a.{k}, b.{k}) || (pc_eq_{p}(a.{k}, b.{k}) && {le}))");
        }
        let _ = writeln!(
            out,
            "PC_FN pc_bool pc_lt_{tag}({ty} a, {ty} b) {{ return (pc_bool){lt}; }}\n\
             PC_FN pc_bool pc_le_{tag}({ty} a, {ty} b) {{ return (pc_bool){le}; }}"
        );
    }
    let _ = writeln!(
        out,
        "PC_FN pc_bool pc_ne_{tag}({ty} a, {ty} b) {{ return (pc_bool)!pc_eq_{tag}(a, b); }}\n\
         PC_FN pc_bool pc_gt_{tag}({ty} a, {ty} b) {{ return pc_lt_{tag}(b, a); }}\n\
         PC_FN pc_bool pc_ge_{tag}({ty} a, {ty} b) {{ return pc_le_{tag}(b, a); }}\n\
         PC_FN {ty} pc_min_{tag}({ty} a, {ty} b) {{ return pc_le_{tag}(a, b) ? a : b; }}\n\
         PC_FN {ty} pc_max_{tag}({ty} a, {ty} b) {{ return pc_le_{tag}(a, b) ? b : a; }}"
    );
}

/// The declarations of an array type `[item; n]` (`part` the element's tag): a C struct
/// holding a C array (`a`, of at least one element: C has no empty array, and `[T; 0]`'s one
/// element is never read, every index of it faults), its length `pc_len_<tag>()`, its zero,
/// loads and stores (element after element, each component its own column: see
/// `ColumnLayout`), and comparisons as Rust compares arrays (lexicographically). Loops, not one
/// line per element, so that a long array stays a short source.
fn array(tag: &str, item: &TypeDesc, part: &str, n: usize, out: &mut String) {
    let ty = format!("pc_{tag}");
    let room = n.max(1);
    let _ = writeln!(
        out,
        "typedef struct {{ pc_{part} a[{room}]; }} {ty};\n\
         PC_FN pc_u64 pc_len_{tag}(void) {{ return (pc_u64){n}u; }}\n\
         PC_FN {ty} pc_zero_{tag}(void) {{ {ty} r; for (pc_u64 j = 0; j < {room}u; j++) r.a[j] = pc_zero_{part}(); return r; }}"
    );
    let leaves = leaf_paths(item);
    if n == 0 || leaves.is_empty() {
        // Nothing stored (no loop over zero elements: the compiler warns of `j < 0u`).
        let _ = writeln!(
            out,
            "PC_FN {ty} pc_load_{tag}(PC_GLOBAL const pc_u8 *base, pc_u64 cap, pc_u64 i) {{ (void)base; (void)cap; (void)i; return pc_zero_{tag}(); }}\n\
             PC_FN void pc_store_{tag}(PC_GLOBAL pc_u8 *base, pc_u64 cap, pc_u64 i, {ty} v) {{ (void)base; (void)cap; (void)i; (void)v; }}"
        );
    } else {
        let _ = write!(out, "PC_FN {ty} pc_load_{tag}(PC_GLOBAL const pc_u8 *base, pc_u64 cap, pc_u64 i) {{ {ty} r; pc_u64 off = 0; for (pc_u64 j = 0; j < {n}u; j++) {{");
        for (path, leaf) in &leaves {
            let _ = write!(
                out,
                " r.a[j]{path} = ((PC_GLOBAL const pc_{l} *)(base + off))[i]; off += (cap * {s} + 7) & ~(pc_u64)7;",
                l = leaf.tag(),
                s = leaf.size()
            );
        }
        let _ = writeln!(out, " }} return r; }}");
        let _ = write!(out, "PC_FN void pc_store_{tag}(PC_GLOBAL pc_u8 *base, pc_u64 cap, pc_u64 i, {ty} v) {{ pc_u64 off = 0; for (pc_u64 j = 0; j < {n}u; j++) {{");
        for (path, leaf) in &leaves {
            let _ = write!(
                out,
                " ((PC_GLOBAL pc_{l} *)(base + off))[i] = v.a[j]{path}; off += (cap * {s} + 7) & ~(pc_u64)7;",
                l = leaf.tag(),
                s = leaf.size()
            );
        }
        let _ = writeln!(out, " }} }}");
    }
    if n == 0 {
        let _ = writeln!(
            out,
            "PC_FN pc_bool pc_eq_{tag}({ty} a, {ty} b) {{ (void)a; (void)b; return 1; }}\n\
             PC_FN pc_bool pc_lt_{tag}({ty} a, {ty} b) {{ (void)a; (void)b; return 0; }}\n\
             PC_FN pc_bool pc_le_{tag}({ty} a, {ty} b) {{ (void)a; (void)b; return 1; }}"
        );
    } else {
        // The first unequal element decides (the last one by its own < and <=); all equal is
        // equal. (No loop before a single element: no `j + 1 < 1u` for the compiler to flag.)
        let last = n - 1;
        let before = if n > 1 {
            format!("for (pc_u64 j = 0; j < {last}u; j++) if (!pc_eq_{part}(a.a[j], b.a[j])) return pc_lt_{part}(a.a[j], b.a[j]); ")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "PC_FN pc_bool pc_eq_{tag}({ty} a, {ty} b) {{ for (pc_u64 j = 0; j < {n}u; j++) if (!pc_eq_{part}(a.a[j], b.a[j])) return 0; return 1; }}\n\
             PC_FN pc_bool pc_lt_{tag}({ty} a, {ty} b) {{ {before}return pc_lt_{part}(a.a[{last}], b.a[{last}]); }}\n\
             PC_FN pc_bool pc_le_{tag}({ty} a, {ty} b) {{ {before}return pc_le_{part}(a.a[{last}], b.a[{last}]); }}"
        );
    }
    let _ = writeln!(
        out,
        "PC_FN pc_bool pc_ne_{tag}({ty} a, {ty} b) {{ return (pc_bool)!pc_eq_{tag}(a, b); }}\n\
         PC_FN pc_bool pc_gt_{tag}({ty} a, {ty} b) {{ return pc_lt_{tag}(b, a); }}\n\
         PC_FN pc_bool pc_ge_{tag}({ty} a, {ty} b) {{ return pc_le_{tag}(b, a); }}\n\
         PC_FN {ty} pc_min_{tag}({ty} a, {ty} b) {{ return pc_le_{tag}(a, b) ? a : b; }}\n\
         PC_FN {ty} pc_max_{tag}({ty} a, {ty} b) {{ return pc_le_{tag}(a, b) ? b : a; }}"
    );
}

/// The member path (`.f0.f1`, `.m_x`) and primitive of every component of `t`, in storage order.
fn leaf_paths(t: &TypeDesc) -> Vec<(String, Prim)> {
    fn walk(t: &TypeDesc, path: String, out: &mut Vec<(String, Prim)>) {
        match t {
            TypeDesc::Prim(p) | TypeDesc::Enum(_, p, _) => out.push((path, *p)),
            TypeDesc::Tuple(items) => {
                for (k, item) in items.iter().enumerate() {
                    walk(item, format!("{path}.f{k}"), out);
                }
            }
            TypeDesc::Option(inner) => {
                out.push((format!("{path}.f0"), Prim::Bool));
                walk(inner, format!("{path}.f1"), out);
            }
            TypeDesc::Struct(_, fields) => {
                for (f, t) in fields {
                    walk(t, format!("{path}.{}", parcomp_contract::member_name(f)), out);
                }
            }
            TypeDesc::Array(item, n) => {
                for k in 0..*n {
                    walk(item, format!("{path}.a[{k}]"), out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(t, String::new(), &mut out);
    out
}

/// The whole source of a comprehension's program: `par_fns` are the `#[par_fn]` functions it
/// calls (with their class macros), `classes` its own class macros, `class_types` the types its
/// classes were solved to.
#[allow(clippy::too_many_arguments)]
pub(crate) fn comprehension_source(
    plan: &DevicePlan,
    records: &[Option<RecordLayout>],
    capture_types: &[TypeDesc],
    root_records: Option<(&RecordLayout, &TypeDesc)>,
    types: &TypePrelude,
    par_fns: &str,
    classes: &str,
    class_types: &[TypeDesc],
    fp64: bool,
    cpu_shapes: bool,
) -> String {
    let mut out = headers(fp64);
    out.push_str(&captures_params(plan));
    let _ = writeln!(out, "#define PC_LEVEL_ITEMS {}u", level_items(cpu_shapes));
    let _ = writeln!(out, "#define PC_PLAIN_ITEMS {}u", plain_items(cpu_shapes));
    let _ = writeln!(out, "#define PC_FILTER_ITEMS {}u", filter_items(class_types, cpu_shapes));
    let _ = writeln!(out, "#define PC_PROBE_LANES {}u", probe_lanes(cpu_shapes));
    let _ = writeln!(out, "#define PC_CPU_SHAPES {}", u8::from(cpu_shapes));
    let _ = writeln!(out, "/* ---- types ---- */\n{}", types.source);
    let _ = writeln!(
        out,
        "/* ---- the first generator's and the captures' loads ---- */\n{}",
        source_loads(plan, records, capture_types, root_records, types)
    );
    let _ = writeln!(out, "/* ---- #[par_fn]s ---- */\n{par_fns}");
    let _ = writeln!(out, "/* ---- classes ---- */\n{classes}");
    let _ = writeln!(out, "/* ---- {} ---- */\n{}", plan.text.replace("*/", "* /"), plan.functions);
    for r in plan.reductions {
        let _ = writeln!(
            out,
            "#define {}_items {}u\n#define PC_RED {}\n#define PC_RED_C PC_C{}\n{REDUCE}\n#undef PC_RED\n#undef PC_RED_C",
            r.name,
            reduce_items(&class_types[r.acc as usize]),
            r.name,
            r.acc
        );
    }
    out.push_str(plan.kernels);
    out
}

/// `PC_CAPS_PARAMS` and `PC_CAPS` of a comprehension's program (see `kernels/captures.h`): the
/// captures' header, then each collection's buffers — `pc_capv<k>` for a slice's or an array of
/// rows' values, `pc_capo<k>` for the rows' offsets.
fn captures_params(plan: &DevicePlan) -> String {
    let (mut params, mut args) = (String::from(CAPS_HEADER), String::from("pc_caps"));
    for (k, capture) in plan.captures.iter().enumerate() {
        let buffers: &[&str] = match capture.kind {
            CaptureKind::Scalar => &[],
            CaptureKind::Slice => &["pc_capv"],
            CaptureKind::Jagged => &["pc_capv", "pc_capo"],
        };
        for buffer in buffers {
            let _ = write!(params, ", PC_GLOBAL const pc_u8 *PC_RESTRICT {buffer}{k}");
            let _ = write!(args, ", {buffer}{k}");
        }
    }
    format!("#define PC_CAPS_PARAMS {params}\n#define PC_CAPS {args}\n")
}

/// How the first generator's elements (`PC_ROOT_LOAD(class)`) and each captured collection's
/// values (`pc_capload<k>(class)`, which `kernels/captures.h` calls) are read, each with its
/// buffer, its capacity and an index: from columns by the class's load, or, for values read as
/// the records they are in the host's memory (`root_records`, `records[k]`), by a load of their
/// own that reads each component at its offset in the record (the capacity unused).
fn source_loads(
    plan: &DevicePlan,
    records: &[Option<RecordLayout>],
    capture_types: &[TypeDesc],
    root_records: Option<(&RecordLayout, &TypeDesc)>,
    types: &TypePrelude,
) -> String {
    let mut out = String::new();
    match root_records {
        Some((layout, t)) => {
            out.push_str(&record_load("pc_rootrec", layout, t, types));
            out.push_str("#define PC_ROOT_LOAD(c) pc_rootrec\n");
        }
        None => out.push_str("#define PC_ROOT_LOAD(c) PC_LOAD(c)\n"),
    }
    for (k, capture) in plan.captures.iter().enumerate() {
        if matches!(capture.kind, CaptureKind::Scalar) {
            continue;
        }
        match records.get(k).and_then(Option::as_ref).zip(capture_types.get(k)) {
            Some((layout, t)) => {
                out.push_str(&record_load(&format!("pc_caprec{k}"), layout, t, types));
                let _ = writeln!(out, "#define pc_capload{k}(c) pc_caprec{k}");
            }
            None => {
                let _ = writeln!(out, "#define pc_capload{k}(c) PC_LOAD(c)");
            }
        }
    }
    out
}

/// A load named `name` of a value of type `t` from records laid out as `layout`: each
/// component read at its offset in the record (Rust's, `DeviceType::record_layout`).
fn record_load(name: &str, layout: &RecordLayout, t: &TypeDesc, types: &TypePrelude) -> String {
    let ty = format!("pc_{}", types.tag(t));
    let mut out = format!(
        "PC_FN {ty} {name}(PC_GLOBAL const pc_u8 *base, pc_u64 cap, pc_u64 i) {{ \
         {ty} r; PC_GLOBAL const pc_u8 *at = base + i * {}u; (void)cap;",
        layout.stride
    );
    let leaves = leaf_paths(t);
    debug_assert_eq!(leaves.len(), layout.offsets.len(), "a record's components of {t}");
    for ((path, leaf), offset) in leaves.iter().zip(&layout.offsets) {
        let _ = write!(out, " r{path} = *(PC_GLOBAL const pc_{} *)(at + {offset}u);", leaf.tag());
    }
    out.push_str(" return r; }\n");
    out
}

/// The captures' header parameter, which every program's `PC_CAPS_PARAMS` starts with (all a
/// program without captures has).
const CAPS_HEADER: &str = "PC_GLOBAL const pc_u8 *PC_RESTRICT pc_caps";

/// The source of the generic kernels.
fn generic_source(fp64: bool) -> String {
    let mut out = headers(fp64);
    out.push_str(GENERIC);
    out
}

/// The source of the radix sort's kernels (`sort.cl`).
fn sort_source(fp64: bool) -> String {
    let mut out = headers(fp64);
    out.push_str(SORT);
    out
}

/// The program of the segmented API's primitives for one monoid: the reduction kernels of
/// `reduce.cl` (prefix `pc_m`) over the primitive `tag`, combining with the scalar operation
/// `op` (`add`, `min`, ...), the identity read from the first value of the captures buffer.
fn monoid_source(fp64: bool, tag: &str, op: &str) -> String {
    let mut out = headers(fp64);
    let _ = writeln!(out, "/* ---- types ---- */\n{}", type_prelude([]).source);
    let _ = writeln!(
        out,
        "#define PC_CAPS_PARAMS {CAPS_HEADER}\n#define PC_CAPS pc_caps\n\
         #define PC_C0 {tag}\n\
         PC_FN PC_T(PC_C0) pc_m_op(pc_fault_t f, PC_CAPS_PARAMS, PC_T(PC_C0) a, \
         PC_T(PC_C0) b) {{ (void)f; (void)pc_caps; return PC_OP({op}, PC_C0)(a, b); }}\n\
         PC_FN PC_T(PC_C0) pc_m_identity(pc_fault_t f, PC_CAPS_PARAMS) {{ \
         (void)f; return PC_LOAD(PC_C0)(pc_caps, 1, 0); }}\n\
         #define PC_RED pc_m\n#define PC_RED_C PC_C0\n{REDUCE}"
    );
    out
}

/// With `PARCOMP_KERNEL_DUMP=<dir>`, writes every program source a run builds to
/// `<dir>/<hash of the source>.kernel`, once: the set of kernels a test suite produces, which
/// CI compiles for CUDA with NVRTC (`examples/verify_cuda_kernels.rs`) after running the suite
/// on OpenCL. Failing to write is reported once, never fatal.
fn dump(source: &str) {
    static DIR: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    let Some(dir) = DIR.get_or_init(|| {
        std::env::var_os("PARCOMP_KERNEL_DUMP").filter(|d| !d.is_empty()).map(Into::into)
    }) else {
        return;
    };
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut hasher);
    let path = dir.join(format!("{:016x}.kernel", hasher.finish()));
    if path.exists() {
        return;
    }
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        // Written under a temporary name and renamed, so that a reader never sees half a file.
        let partial = path.with_extension(format!("part{}", std::process::id()));
        std::fs::write(&partial, source)?;
        std::fs::rename(&partial, &path)
    });
    if let Err(e) = written {
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!("parcomp: PARCOMP_KERNEL_DUMP: {} could not be written: {e}", path.display());
        }
    }
}

/// A program found by a small key instead of its source: assembling and hashing a source
/// costs more than a run of a few elements. `what` says what the program is for, in records
/// and errors.
fn memoized<K: std::hash::Hash + Eq + Send + 'static>(
    table: &'static OnceLock<Mutex<HashMap<K, Built>>>,
    key: K,
    source: impl FnOnce() -> String,
    device: &dyn Device,
    what: &str,
) -> Result<(Built, Origin), DeviceError> {
    let table = table.get_or_init(Mutex::default);
    if let Some(found) = table.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok((found.clone(), Origin::Memory));
    }
    let (program, origin) = build(device, &source(), &Provenance::runtime(what))?;
    table.lock().unwrap_or_else(|p| p.into_inner()).insert(key, program.clone());
    Ok((program, origin))
}

/// The generic program of `device`.
pub(crate) fn generic(device: &dyn Device) -> Result<(Built, Origin), DeviceError> {
    static TABLE: OnceLock<Mutex<HashMap<usize, Built>>> = OnceLock::new();
    let key = std::ptr::from_ref(device).cast::<()>() as usize;
    memoized(&TABLE, key, || generic_source(device.info().fp64), device, GENERIC_WHAT)
}

/// The radix sort's program of `device` (see [`sort_source`]).
pub(crate) fn sort(device: &dyn Device) -> Result<(Built, Origin), DeviceError> {
    static TABLE: OnceLock<Mutex<HashMap<usize, Built>>> = OnceLock::new();
    let key = std::ptr::from_ref(device).cast::<()>() as usize;
    memoized(&TABLE, key, || sort_source(device.info().fp64), device, SORT_WHAT)
}

/// The program of the monoid `op` over the primitive `tag` on `device` (see
/// [`monoid_source`]).
pub(crate) fn monoid(
    device: &dyn Device,
    tag: &'static str,
    op: &'static str,
) -> Result<(Built, Origin), DeviceError> {
    type Key = (usize, &'static str, &'static str);
    static TABLE: OnceLock<Mutex<HashMap<Key, Built>>> = OnceLock::new();
    let key = (std::ptr::from_ref(device).cast::<()>() as usize, tag, op);
    let what = monoid_what(tag, op);
    memoized(&TABLE, key, || monoid_source(device.info().fp64, tag, op), device, &what)
}

/// Records, once per process, the runtime's programs a GPU builds for comprehensions (the
/// generic kernels, the sort's), for a run on the host (`run::record_for_gpu`).
#[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
pub(crate) fn record_runtime_programs_for_gpu() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let generic = Provenance::runtime(GENERIC_WHAT);
        record::program(&generic, &generic_source(true), record::FOR_GPU, None);
        let sort = Provenance::runtime(SORT_WHAT);
        record::program(&sort, &sort_source(true), record::FOR_GPU, None);
    });
}

/// The programs one of the segmented API's primitives builds on a device.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PrimitivePrograms {
    /// The runtime's own: the generic kernels and the sort's.
    Runtime,
    /// Those and the program of the monoid `op` over the primitive `tag`.
    Monoid { tag: &'static str, op: &'static str },
}

impl PrimitivePrograms {
    /// Records, once per process, the programs a GPU builds for the primitive, for a run
    /// anywhere (`dispatch::primitive`): a recording made on the host covers what a GPU would
    /// build, as a comprehension's does (`run::record_for_gpu`).
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
    pub(crate) fn record_for_gpu(self) {
        static DONE: OnceLock<Mutex<HashSet<(&'static str, &'static str)>>> = OnceLock::new();
        if !record::enabled() {
            return;
        }
        record_runtime_programs_for_gpu();
        let Self::Monoid { tag, op } = self else { return };
        let done = DONE.get_or_init(Mutex::default);
        if done.lock().unwrap_or_else(|p| p.into_inner()).insert((tag, op)) {
            let what = Provenance::runtime(&monoid_what(tag, op));
            record::program(&what, &monoid_source(true, tag, op), record::FOR_GPU, None);
        }
    }
}

/// What a monoid's program is for, in records and errors.
fn monoid_what(tag: &str, op: &str) -> String {
    format!("the segmented API's `{op}` over `{tag}`")
}

/// What the generic program is for, in records and errors.
const GENERIC_WHAT: &str = "the runtime's generic kernels (scan, search, compaction)";
/// What the sort's program is for.
const SORT_WHAT: &str = "the runtime's radix sort (`order by`)";

/// A built program shared by the runs that use it.
pub(crate) type Built = Arc<dyn Program>;

/// Where [`build`] found a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Built earlier in this process.
    Memory,
    /// Loaded from a kernel bundle (`bundle.rs`).
    Bundle,
    /// Loaded from the disk cache.
    Disk,
    /// Compiled now.
    Compiled,
}

/// The program of `source` on `device`, for what `provenance` says: built once per process,
/// looked up first in the kernel bundles, then in the disk cache, and compiled only when
/// neither holds it (or, as `PARCOMP_KERNEL_MISS` says, refused). With `PARCOMP_KERNEL_RECORD`
/// the program is recorded, with the binary the device runs.
pub(crate) fn build(
    device: &dyn Device,
    source: &str,
    provenance: &Provenance,
) -> Result<(Built, Origin), DeviceError> {
    /// The programs built so far, by the hash of their key: each source with its program.
    type Table = HashMap<u64, Vec<(String, Built)>>;
    static BUILT: OnceLock<Mutex<Table>> = OnceLock::new();
    let key = cache::Key::new(device.info(), source, "");
    let hash = key.hash();
    dump(source);
    let table = BUILT.get_or_init(Mutex::default);
    if let Some(found) = table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&hash)
        .and_then(|entries| entries.iter().find(|(s, _)| s == source))
    {
        return Ok((found.1.clone(), Origin::Memory));
    }
    let found = find_or_compile(device, source, &key, provenance);
    if record::enabled() {
        // With the binary the device runs; a program the compiler rejects is recorded too,
        // without one: the bundle tool says which.
        let binary = found.as_ref().ok().and_then(|(_, _, binary)| binary.as_deref());
        record::program(provenance, source, &bundle::device_target(device.info()), binary);
    }
    let (program, origin, _) = found?;
    crate::trace::program(
        provenance,
        match origin {
            Origin::Bundle => "from a kernel bundle",
            Origin::Disk => "from the disk cache",
            Origin::Compiled => "compiled",
            Origin::Memory => "built earlier",
        },
    );
    table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(hash)
        .or_default()
        .push((source.to_string(), program.clone()));
    Ok((program, origin))
}

/// A program's binary: a bundle's, borrowed from it, or the disk cache's or the compiler's.
type Binary = Cow<'static, [u8]>;

/// The program of `source` from a bundle, the disk cache or the compiler, where it came from,
/// and its binary where the device gives one (for the recording; a bundle's, borrowed).
fn find_or_compile(
    device: &dyn Device,
    source: &str,
    key: &cache::Key,
    provenance: &Provenance,
) -> Result<(Built, Origin, Option<Binary>), DeviceError> {
    let program_key = bundle::program_key(source);
    let candidates = bundle::candidates(program_key, device.info())
        .map_err(|e| DeviceError::new(DeviceErrorKind::Unavailable, e.to_string()))?;
    // An entry the driver refuses counts as a miss: the next one is tried.
    for entry in candidates {
        if let Ok(program) = device.load(entry.binary, "") {
            return Ok((Arc::from(program), Origin::Bundle, Some(Cow::Borrowed(entry.binary))));
        }
    }
    if let Some(binary) = cache::load(key) {
        if let Ok(program) = device.load(&binary, "") {
            return Ok((Arc::from(program), Origin::Disk, Some(Cow::Owned(binary))));
        }
    }
    match bundle::miss_policy() {
        bundle::MissPolicy::Compile => {}
        policy => return Err(missing(device, provenance, policy)),
    }
    let program = device.build(source, "").map_err(|e| {
        if e.kind == DeviceErrorKind::Build {
            let path = cache::write_failed_source(key, source);
            let saved = match path {
                Some(p) => format!(" (the source is in {})", p.display()),
                None => String::new(),
            };
            DeviceError::new(DeviceErrorKind::Build, format!("{}{saved}", e.message))
        } else {
            e
        }
    })?;
    let binary = program.binary();
    if let Some(binary) = &binary {
        cache::store(key, binary);
    }
    Ok((Arc::from(program), Origin::Compiled, binary.map(Cow::Owned)))
}

/// The error of a program no bundle holds, under `PARCOMP_KERNEL_MISS=host` or `error`: it
/// names the comprehension, its element types, the device and how to record the program.
fn missing(
    device: &dyn Device,
    provenance: &Provenance,
    policy: bundle::MissPolicy,
) -> DeviceError {
    let info = device.info();
    let bundles = match bundle::loaded() {
        Ok([]) => "no kernel bundle is embedded or named by PARCOMP_KERNEL_BUNDLE".to_string(),
        Ok(bundles) => {
            let names: Vec<String> = bundles.iter().map(|b| format!("`{}`", b.name)).collect();
            format!("no kernel bundle holds it ({})", names.join(", "))
        }
        Err(e) => e.to_string(),
    };
    let types = match provenance.types.as_str() {
        "" => String::new(),
        t => format!(" for the types {t}"),
    };
    // CUDA binaries are compiled ahead of time by NVRTC; OpenCL ones are the device's own.
    let bundle_command = if info.api == "cuda" {
        "`cargo parcomp bundle kernels.rec -o kernels.pcb --cuda`"
    } else {
        "`cargo parcomp bundle kernels.rec -o kernels.pcb` (on a machine with this device)"
    };
    DeviceError::new(
        DeviceErrorKind::NotInBundle,
        format!(
            "the program of {}{types} for {} `{}` ({}) is not precompiled: {bundles}, and \
             PARCOMP_KERNEL_MISS={} forbids compiling it here; record it by running the program \
             with PARCOMP_KERNEL_RECORD=kernels.rec, then {bundle_command}, and embed the bundle \
             with `parcomp::kernel_bundle!`",
            provenance,
            info.api,
            info.name,
            bundle::device_target(info),
            if policy == bundle::MissPolicy::Host { "host" } else { "error" },
        ),
    )
}
