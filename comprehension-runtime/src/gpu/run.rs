//! The engine's entry: a comprehension's device half prepared once per call site and types
//! (types solved, source assembled, programs built or loaded), then run by the executor into a
//! sink (`sinks.rs`) that collects, keeps or reduces what its head delivers.

use super::device::Device;
use super::devices::device_of;
use super::failure::DeviceFailure;
use super::offload::{self, Offload};
use super::sinks::{CollectSink, ReduceSink, ResidentSink};
use super::{arena, executor, infer, par_fn, plan, program, resident, types};
use crate::backend::Backend;
use crate::pipeline::Reducer;
use crate::site::Site;

/// Runs a comprehension's device half with `sink` receiving what its head delivers.
fn run<T>(
    backend: Backend,
    site: &'static Site,
    offload: &Offload<'_, T>,
    sink: &mut dyn executor::TopSink,
) -> Result<(), DeviceFailure> {
    let parts = offload.parts().ok_or_else(|| DeviceFailure::cannot("it has no device half"))?;
    if !cfg!(all(target_pointer_width = "64", target_endian = "little")) {
        return Err(DeviceFailure::cannot("the device path needs a 64-bit little-endian host"));
    }
    let device = device_of(backend)?;
    let captures: Vec<offload::HostData<'_>> = parts
        .captures
        .iter()
        .map(|c| *c.as_ref().expect("a capable offload observed every capture"))
        .collect();
    let facts = Facts::of(device.info(), device.reads_in_place());
    let device_id = std::ptr::from_ref(device).cast::<()>() as usize;
    let key = key_of(parts.plan, parts.root, &captures, parts.output.desc(), facts, device_id)?;
    let compile_start = std::time::Instant::now();
    let (prepared, origins) = prepared(device, site, parts.plan, parts.par_fns, key)?;
    let compile = compile_start.elapsed();
    // The scratch memory is made before the session, so that it is dropped after it: the
    // session's queue is finished before the buffers go back to the device's arena.
    let scratch = arena::Scratch::new(arena::Arena::of(device));
    let mut session = executor::Session::new(
        device,
        &scratch,
        prepared.program.clone(),
        prepared.generic.clone(),
        parts.plan,
        site,
        prepared.types.clone(),
        prepared.faults.clone(),
        backend,
    )?;
    session.stats.compile = compile;
    for origin in origins {
        session.stats.count(origin);
    }
    // The run's time starts before its copies in: on a GPU they are part of what the caller
    // waits for (on a device whose memory is the host's, the first generator is read in place).
    let start = std::time::Instant::now();
    let result = session
        .upload(&captures, &prepared.records, prepared.root_records.as_ref(), parts.root)
        .and_then(|()| session.run(sink, start));
    if result.is_ok() {
        session.keep_known();
    }
    let stats = session.stats.clone();
    drop(session);
    drop(scratch);
    executor::record_stats(stats);
    result
}

/// The facts of a device that decide a program's source besides the comprehension and its
/// types.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Facts {
    /// It computes in `f64`.
    fp64: bool,
    /// Its programs take a CPU device's shapes (`program::cpu_shapes`).
    cpu_shapes: bool,
    /// It reads the host's memory where it lies, so programs read records in place.
    reads_in_place: bool,
}

impl Facts {
    fn of(info: &super::device::DeviceInfo, reads_in_place: bool) -> Facts {
        Facts { fp64: info.fp64, cpu_shapes: program::cpu_shapes(info.is_cpu), reads_in_place }
    }

    /// A GPU's: what a CUDA device (and a discrete OpenCL GPU) builds for.
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
    fn gpu() -> Facts {
        Facts { fp64: true, cpu_shapes: program::cpu_shapes(false), reads_in_place: false }
    }
}

/// The [`PreparedKey`] of a comprehension's device half on a device of `facts` (`device`:
/// which one, for the process's table).
fn key_of(
    plan: &'static plan::DevicePlan,
    root: &offload::HostData<'_>,
    captures: &[offload::HostData<'_>],
    output: types::TypeDesc,
    facts: Facts,
    device: usize,
) -> Result<PreparedKey, DeviceFailure> {
    let capture_types: Vec<types::TypeDesc> = captures
        .iter()
        .map(|c| match c {
            offload::HostData::Scalar(v) => v.desc(),
            offload::HostData::Slice(s) => s.desc(),
            offload::HostData::Jagged(j) => j.desc(),
            offload::HostData::Range(r) => r.desc(),
            offload::HostData::Elements(e) => e.desc(),
        })
        .collect();
    let root_type = match root {
        offload::HostData::Range(r) => r.desc(),
        offload::HostData::Elements(e) => e.desc(),
        // An array of rows: the device runs over its row indices.
        offload::HostData::Jagged(_) => types::TypeDesc::Prim(types::Prim::U64),
        _ => return Err(DeviceFailure::cannot("its first generator is not a range or a source")),
    };
    // On a device whose memory is the host's, a captured collection of tuples is read as the
    // records it is in memory, where it lies (no columns converted on the host): its program
    // reads each component at its offset.
    let capture_records: Vec<Option<types::RecordLayout>> = captures
        .iter()
        .map(|c| match c {
            _ if !facts.reads_in_place => None,
            offload::HostData::Slice(s) => s.record_layout(),
            offload::HostData::Jagged(j) => j.record_layout(),
            _ => None,
        })
        .collect();
    // The same for the first generator's elements (not a `DeviceVec`'s: its columns, which
    // its first device run uploads and keeps).
    let root_records = match root {
        offload::HostData::Elements(e) if facts.reads_in_place => e.record_layout(),
        _ => None,
    };
    Ok(PreparedKey {
        plan: std::ptr::from_ref(plan) as usize,
        device,
        facts,
        captures: capture_types,
        records: capture_records,
        root_records,
        root: root_type,
        output,
    })
}

/// What decides a comprehension's programs: the plan, the device, and the types observed at
/// the call site.
#[derive(Clone, PartialEq, Eq, Hash)]
struct PreparedKey {
    plan: usize,
    device: usize,
    facts: Facts,
    captures: Vec<types::TypeDesc>,
    /// The layout of each capture's records, where its program reads them in place.
    records: Vec<Option<types::RecordLayout>>,
    /// The layout of the first generator's records, where its program reads them in place.
    root_records: Option<types::RecordLayout>,
    root: types::TypeDesc,
    output: types::TypeDesc,
}

impl PreparedKey {
    /// The element types, for records and errors: the first generator's, the captures' and
    /// the output's.
    fn describe(&self) -> String {
        let captures: Vec<String> = self.captures.iter().map(ToString::to_string).collect();
        format!(
            "elements {}, captures ({}), output {}",
            self.root,
            captures.join(", "),
            self.output
        )
    }
}

/// A comprehension ready to run on a device for one [`PreparedKey`]: its solved types, its
/// faults' texts and its programs.
struct Prepared {
    types: Vec<types::TypeDesc>,
    /// The captures its program reads as records ([`PreparedKey::records`], less any whose
    /// type no kernel reads).
    records: Vec<Option<types::RecordLayout>>,
    /// Whether, and how, its program reads the first generator's elements as records.
    root_records: Option<types::RecordLayout>,
    faults: Vec<String>,
    program: program::Built,
    generic: program::Built,
}

/// The [`Prepared`] of `key`: made once per process (solving the types, assembling the source,
/// building or loading the programs), then found by the key, so that a run of a few elements
/// does not pay for the assembly again. Returns where the programs came from this time.
fn prepared(
    device: &dyn Device,
    site: &'static Site,
    plan: &'static plan::DevicePlan,
    par_fns: &[&'static str],
    key: PreparedKey,
) -> Result<(std::sync::Arc<Prepared>, [program::Origin; 2]), DeviceFailure> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static PREPARED: OnceLock<Mutex<HashMap<PreparedKey, Arc<Prepared>>>> = OnceLock::new();
    let table = PREPARED.get_or_init(Mutex::default);
    if let Some(found) = table.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok((found.clone(), [program::Origin::Memory; 2]));
    }
    let Assembled { types, records, root_records, faults, source } =
        assemble(plan, par_fns, &key, device.info())?;
    // The comprehension's own program first: a program missing from the kernel bundles is then
    // reported as the comprehension's.
    let provenance = program::Provenance::site(site, key.describe());
    let (program, origin) = program::build(device, &source, &provenance)?;
    let (generic, generic_origin) = program::generic(device)?;
    let prepared = Arc::new(Prepared { types, records, root_records, faults, program, generic });
    table.lock().unwrap_or_else(|p| p.into_inner()).insert(key, prepared.clone());
    Ok((prepared, [generic_origin, origin]))
}

/// A comprehension's program source for one [`PreparedKey`], with what its runs need besides
/// the program.
struct Assembled {
    types: Vec<types::TypeDesc>,
    records: Vec<Option<types::RecordLayout>>,
    root_records: Option<types::RecordLayout>,
    faults: Vec<String>,
    source: String,
}

/// Solves the types of a comprehension's device half and assembles its program's source, for
/// a device of `key.facts` (`device`: its name, for messages). Needs no device: a run on the
/// host assembles what a GPU would build, to record it (`record_for_gpu`).
fn assemble(
    plan: &'static plan::DevicePlan,
    par_fns: &[&'static str],
    key: &PreparedKey,
    device: &dyn std::fmt::Display,
) -> Result<Assembled, DeviceFailure> {
    let mut resolver = Resolver::default();
    let calls = resolver.resolve(par_fns).map_err(DeviceFailure::cannot)?;
    let (signatures, generic) = resolver.observations(&calls);
    let observed = infer::Observations {
        captures: &key.captures,
        root: Some(key.root.clone()),
        output: Some(key.output.clone()),
        par_fns: &signatures,
        generic: &generic,
    };
    let mut methods = vec![None; par_fns.len()];
    let (types, arguments) =
        infer::solve_instances(plan.classes, plan.constraints, &observed, &mut |f, receiver| {
            resolver.method(par_fns[f], receiver, &mut methods[f])
        })
        .map_err(|e| match resolver.method_failure.take() {
            // A method the device does not have: the reason as it is.
            Some(reason) => DeviceFailure::cannot(reason),
            None => {
                DeviceFailure::cannot(format!("its types could not be solved on the device: {e}"))
            }
        })?;
    let called = resolver.instances(&calls, &arguments).map_err(DeviceFailure::cannot)?;
    // `None`: a method call that is the device's own method (`PC_FN_k` stays undefined).
    let called: Vec<Option<usize>> = called.iter().zip(&methods).map(|(u, m)| u.or(*m)).collect();
    let units = resolver.units;
    let uses_f64 =
        types.iter().chain(units.iter().flat_map(|u| &u.types)).any(types::TypeDesc::uses_f64);
    if !key.facts.fp64 && uses_f64 {
        return Err(DeviceFailure::cannot(format!("it uses f64, which {device} does not have")));
    }
    let prelude = program::type_prelude(types.iter().chain(units.iter().flat_map(|u| &u.types)));
    let mut faults: Vec<String> = plan.faults.iter().map(|f| f.to_string()).collect();
    let mut par_fn_source = String::new();
    for (i, unit) in units.iter().enumerate() {
        use std::fmt::Write as _;
        let _ = writeln!(
            par_fn_source,
            "#define PCF_SELF pcf_{i}\n#define PCF_FAULT_BASE {}u",
            faults.len()
        );
        for (k, callee) in unit.callees.iter().enumerate() {
            if let Some(callee) = callee {
                let _ = writeln!(par_fn_source, "#define PC_FN_{k} pcf_{callee}");
            }
        }
        par_fn_source.push_str(&prelude.class_defines(&unit.types));
        par_fn_source.push_str(unit.entry.source);
        par_fn_source.push_str("#undef PCF_SELF\n#undef PCF_FAULT_BASE\n");
        for (k, callee) in unit.callees.iter().enumerate() {
            if callee.is_some() {
                let _ = writeln!(par_fn_source, "#undef PC_FN_{k}");
            }
        }
        par_fn_source.push_str(&program::class_undefs(&unit.types));
        faults.extend(
            unit.entry.faults.iter().map(|f| format!("{f}` in `#[par_fn] {}", unit.entry.path)),
        );
    }
    let mut classes = prelude.class_defines(&types);
    for (k, u) in called.iter().enumerate() {
        use std::fmt::Write as _;
        if let Some(u) = u {
            let _ = writeln!(classes, "#define PC_FN_{k} pcf_{u}");
        }
    }
    // A capture whose type the program does not declare is never read by its kernels: it goes
    // as columns, as everywhere else.
    let records: Vec<Option<types::RecordLayout>> = key
        .records
        .iter()
        .zip(&key.captures)
        .map(|(r, t)| r.clone().filter(|_| prelude.declares(t)))
        .collect();
    let root_records = key.root_records.clone().filter(|_| prelude.declares(&key.root));
    let source = program::comprehension_source(
        plan,
        &records,
        &key.captures,
        root_records.as_ref().map(|r| (r, &key.root)),
        &prelude,
        &par_fn_source,
        &classes,
        &types,
        key.facts.fp64,
        key.facts.cpu_shapes,
    );
    Ok(Assembled { types, records, root_records, faults, source })
}

/// With `PARCOMP_KERNEL_RECORD`, records the programs a GPU would build for a comprehension that
/// runs on the host — on any backend, with no device present — so that a bundle made on a
/// machine without a GPU holds them: its own program (assembled for a GPU: `f64`, a GPU's
/// shapes, no records read in place), the generic kernels and the sort's (`order by`).
/// Once per comprehension site and types; a comprehension no device can run with its values is
/// recorded as running on the host (`record::ON_HOST`, with the reason as its types).
#[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
pub(crate) fn record_for_gpu<T>(site: &'static Site, offload: &Offload<'_, T>) {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    if !super::record::enabled()
        || !cfg!(all(target_pointer_width = "64", target_endian = "little"))
    {
        return;
    }
    // A comprehension no device can run with these values (a capture the device cannot hold,
    // types it does not have) is recorded as running on the host: nothing to precompile, and
    // its site is accounted for (`bundle::missing`).
    let on_host = |why: String| {
        super::record::program(
            &program::Provenance::site(site, why),
            "",
            super::record::ON_HOST,
            None,
        )
    };
    let Some(parts) = offload.parts() else {
        return on_host(offload.capable().err().unwrap_or_default());
    };
    let Some(captures) =
        parts.captures.iter().map(|c| c.as_ref().ok().copied()).collect::<Option<Vec<_>>>()
    else {
        return on_host(offload.capable().err().unwrap_or_default());
    };
    let key = match key_of(parts.plan, parts.root, &captures, parts.output.desc(), Facts::gpu(), 0)
    {
        Ok(key) => key,
        Err(why) => return on_host(why.message),
    };
    static DONE: OnceLock<Mutex<HashSet<PreparedKey>>> = OnceLock::new();
    let done = DONE.get_or_init(Mutex::default);
    if done.lock().unwrap_or_else(|p| p.into_inner()).contains(&key) {
        return;
    }
    match assemble(parts.plan, parts.par_fns, &key, &"a GPU") {
        Ok(assembled) => {
            let provenance = program::Provenance::site(site, key.describe());
            super::record::program(&provenance, &assembled.source, super::record::FOR_GPU, None);
            program::record_runtime_programs_for_gpu();
        }
        Err(why) => on_host(why.message),
    }
    done.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
}

/// Runs a comprehension's device half on `backend`'s device, leaving its values there (the
/// caller makes them a `DeviceVec`).
pub(crate) fn collect_resident<T: types::DeviceType>(
    backend: Backend,
    site: &'static Site,
    offload: &Offload<'_, T>,
) -> Result<resident::Resident, DeviceFailure> {
    if matches!(offload.parts().map(|p| p.plan.comp.terminal), Some(plan::Terminal::Rows)) {
        return Err(DeviceFailure::cannot("its elements are rows"));
    }
    let mut sink = ResidentSink { chunks: Vec::new() };
    run(backend, site, offload, &mut sink)?;
    let desc = T::desc();
    let resident = match sink.chunks.len() {
        0 => {
            let layout = types::ColumnLayout::new(&desc, 0).expect("no values");
            resident::Resident::upload(backend, &[], layout, 0)?
        }
        1 => {
            let (buffer, layout, len) = sink.chunks.pop().expect("one chunk");
            resident::Resident::new(backend, buffer, layout, len)
        }
        _ => {
            // Several chunks: their columns joined, leaf by leaf, within the device.
            let len: usize = sink.chunks.iter().map(|c| c.2).sum();
            let layout = types::ColumnLayout::new(&desc, len).ok_or_else(|| {
                DeviceFailure::fatal(format!("a column of {len} values does not fit in memory"))
            })?;
            let device = device_of(backend)?;
            let buffer = device.alloc(layout.bytes.max(8))?;
            let queue = device.queue()?;
            let mut at = 0;
            for (chunk, chunk_layout, count) in &sink.chunks {
                for (k, leaf) in layout.leaves.iter().enumerate() {
                    queue.copy(
                        chunk,
                        chunk_layout.offsets[k],
                        &buffer,
                        layout.offsets[k] + at * leaf.size(),
                        count * leaf.size(),
                    )?;
                }
                at += count;
            }
            queue.finish()?;
            resident::Resident::new(backend, buffer, layout, len)
        }
    };
    Ok(resident)
}

/// Runs a comprehension's device half on `backend`'s device, gathering its outputs.
pub(crate) fn collect<T: Send>(
    backend: Backend,
    site: &'static Site,
    offload: &Offload<'_, T>,
) -> Result<Vec<T>, DeviceFailure> {
    let codec = offload
        .parts()
        .map(|p| p.output)
        .ok_or_else(|| DeviceFailure::cannot("it has no device half"))?;
    let rows = matches!(offload.parts().map(|p| p.plan.comp.terminal), Some(plan::Terminal::Rows));
    if rows != codec.is_rows() {
        return Err(DeviceFailure::cannot(format!(
            "its elements are `{}`, which its device plan does not produce",
            std::any::type_name::<T>()
        )));
    }
    let mut sink = CollectSink::new(codec);
    run(backend, site, offload, &mut sink)?;
    Ok(sink.out)
}

/// Runs a comprehension's device half on `backend`'s device, reducing its outputs.
#[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
pub(crate) fn reduce<T, R: Reducer<T>>(
    backend: Backend,
    site: &'static Site,
    offload: &Offload<'_, T>,
    reducer: &R,
) -> Result<R::Acc, DeviceFailure> {
    let codec = offload
        .parts()
        .map(|p| p.output)
        .ok_or_else(|| DeviceFailure::cannot("it has no device half"))?;
    if codec.is_rows() {
        return Err(DeviceFailure::cannot("a reduction of rows does not run on a device"));
    }
    let mut sink = ReduceSink { reducer, codec, acc: None, decided: false, refused: false };
    run(backend, site, offload, &mut sink)?;
    if sink.refused {
        return Err(DeviceFailure::cannot("its reducer does not run on a device"));
    }
    Ok(sink.acc.unwrap_or_else(|| reducer.identity()))
}

/// A `#[par_fn]` a comprehension calls (directly or through another), ready to be put into
/// its program: for a generic function, one instance of it (its own `pcf_k`).
struct ParFnUnit {
    entry: &'static par_fn::ParFnEntry,
    /// Its callees, as indices into the list of units (`None`: a method call that is the
    /// device's own method).
    callees: Vec<Option<usize>>,
    signature: (Vec<types::TypeDesc>, types::TypeDesc),
    /// Its classes' types.
    types: Vec<types::TypeDesc>,
}

/// A call in device code, as the caller's types are being solved.
#[derive(Clone, Copy)]
enum Call {
    /// A function that is not generic, already resolved to its unit.
    Unit(usize),
    /// A method call, found once its receiver's type is known ([`Resolver::method`]).
    Method,
    /// A generic function at `path`: its instance is known once the caller's types are.
    Generic(&'static str, &'static par_fn::ParFnEntry),
}

/// How deep generic functions may instantiate one another (a generic function calling itself
/// at ever other types would not end).
const MAX_INSTANCE_DEPTH: usize = 32;

/// The `#[par_fn]`s a comprehension calls (directly or through another), callees before
/// callers, found by their names, and the methods among them once their receivers' types are
/// known; a generic function is instantiated per type arguments, which each call's types
/// decide (a worklist: an instance's own generic callees come out of solving its types). A
/// function that is not marked, or that calls itself (OpenCL C has no recursion), is a
/// reason to stay on the CPU.
#[derive(Default)]
struct Resolver {
    units: Vec<ParFnUnit>,
    /// The unit of each function and type arguments visited; `None` while its callees are
    /// being visited.
    index: std::collections::HashMap<(&'static str, Vec<types::TypeDesc>), Option<usize>>,
    /// How many instances are being visited, one inside another.
    depth: usize,
    /// Why the last method call that failed did (a method the device does not have): the
    /// reason the comprehension stays on the CPU, rather than the solver's error it causes.
    method_failure: Option<String>,
}

impl Resolver {
    /// What each of `names` calls: a unit, a method call (found by [`Resolver::method`]), or
    /// a generic function, instantiated by [`Resolver::instances`].
    fn resolve(&mut self, names: &[&'static str]) -> Result<Vec<Call>, String> {
        names
            .iter()
            .map(|&n| {
                if parcomp_contract::slot_method(n).is_some() {
                    return Ok(Call::Method);
                }
                let entry = par_fn::find(n)
                    .ok_or_else(|| format!("it calls `{n}`, which is not marked `#[par_fn]`"))?;
                if entry.generic.is_empty() {
                    self.visit(n, Vec::new()).map(Call::Unit)
                } else {
                    Ok(Call::Generic(n, entry))
                }
            })
            .collect()
    }

    /// The signatures the solver observes for `calls` (a generic function's with its slots).
    fn observations(
        &self,
        calls: &[Call],
    ) -> (Vec<Option<infer::Signature>>, Vec<&'static [par_fn::SigSlot]>) {
        calls
            .iter()
            .map(|c| match *c {
                Call::Unit(u) => (Some(self.units[u].signature.clone()), &[][..]),
                Call::Method => (None, &[][..]),
                Call::Generic(_, entry) => (Some((entry.signature)()), entry.generic),
            })
            .unzip()
    }

    /// The unit of each of `calls`, the generic ones instantiated with the type arguments the
    /// caller's solve gave them (`arguments`, one list per call); `None` for a method call.
    fn instances(
        &mut self,
        calls: &[Call],
        arguments: &[Vec<types::TypeDesc>],
    ) -> Result<Vec<Option<usize>>, String> {
        calls
            .iter()
            .enumerate()
            .map(|(f, c)| match *c {
                Call::Unit(u) => Ok(Some(u)),
                Call::Method => Ok(None),
                Call::Generic(path, _) => {
                    let args = arguments.get(f).cloned().unwrap_or_default();
                    self.visit(path, args).map(Some)
                }
            })
            .collect()
    }

    /// The signature of the method the call `slot` (`.dist`) makes on a receiver of type
    /// `receiver` (a derived struct's name, or another type), whose unit goes to `unit`.
    fn method(
        &mut self,
        slot: &'static str,
        receiver: Result<&'static str, String>,
        unit: &mut Option<usize>,
    ) -> Result<infer::Signature, String> {
        let found = self.find_method(slot, receiver, unit);
        if let Err(e) = &found {
            self.method_failure = Some(e.clone());
        }
        found
    }

    fn find_method(
        &mut self,
        slot: &'static str,
        receiver: Result<&'static str, String>,
        unit: &mut Option<usize>,
    ) -> Result<infer::Signature, String> {
        let method = parcomp_contract::slot_method(slot).unwrap_or(slot);
        let owner = receiver.map_err(|other| {
            format!(
                "it calls the method `.{method}()`, which the device does not have \
                 for a `{other}` (the device's methods of values other than structs are the \
                 numeric and ASCII ones)"
            )
        })?;
        let key = par_fn::intern(par_fn::item_key(owner, method));
        if par_fn::find(key).is_none() {
            return Err(format!(
                "it calls the method `.{method}()`, which the device does not have: \
                 `{owner}` has no method `{method}` in a `#[par_fn] impl` block"
            ));
        }
        let u = self.visit(key, Vec::new())?;
        *unit = Some(u);
        Ok(self.units[u].signature.clone())
    }

    /// The unit of the function at `path` with type arguments `args` (none when it is not
    /// generic).
    fn visit(&mut self, path: &'static str, args: Vec<types::TypeDesc>) -> Result<usize, String> {
        let key = (path, args);
        match self.index.get(&key) {
            Some(Some(done)) => return Ok(*done),
            Some(None) => {
                return Err(format!("`{path}` calls itself, and device code cannot recurse"))
            }
            None => {}
        }
        let entry = par_fn::find(path)
            .ok_or_else(|| format!("it calls `{path}`, which is not marked `#[par_fn]`"))?;
        if key.1.len() != entry.type_params() {
            return Err(format!(
                "`#[par_fn] {path}` has {} type parameters, called with {} type arguments",
                entry.type_params(),
                key.1.len()
            ));
        }
        if self.depth >= MAX_INSTANCE_DEPTH {
            return Err(format!(
                "`#[par_fn] {path}` is instantiated more than {MAX_INSTANCE_DEPTH} deep"
            ));
        }
        self.index.insert(key.clone(), None);
        self.depth += 1;
        let found = self.solve_unit(path, entry, &key.1);
        self.depth -= 1;
        let unit = found?;
        self.units.push(unit);
        self.index.insert(key, Some(self.units.len() - 1));
        Ok(self.units.len() - 1)
    }

    /// Solves the types of the function at `path` with type arguments `args`, visiting its
    /// callees.
    fn solve_unit(
        &mut self,
        path: &'static str,
        entry: &'static par_fn::ParFnEntry,
        args: &[types::TypeDesc],
    ) -> Result<ParFnUnit, String> {
        let names = (entry.callees)();
        let calls = self.resolve(&names)?;
        let signature = entry.instance(args);
        let mut observations: Vec<types::TypeDesc> = signature.0.clone();
        observations.push(signature.1.clone());
        let (callee_signatures, generic) = self.observations(&calls);
        let observed = infer::Observations {
            captures: &observations,
            root: None,
            output: None,
            par_fns: &callee_signatures,
            generic: &generic,
        };
        let mut methods = vec![None; names.len()];
        let instance = if args.is_empty() {
            path.to_string()
        } else {
            let args: Vec<String> = args.iter().map(ToString::to_string).collect();
            format!("{path}::<{}>", args.join(", "))
        };
        let (types, arguments) = infer::solve_instances(
            entry.classes,
            entry.constraints,
            &observed,
            &mut |f, receiver| self.method(names[f], receiver, &mut methods[f]),
        )
        .map_err(|e| match self.method_failure.take() {
            Some(reason) => {
                // The caller's method call (if any) reports it as its own failure.
                let reason = format!("{reason} (in `#[par_fn] {instance}`)");
                self.method_failure = Some(reason.clone());
                reason
            }
            None => format!("the types of `#[par_fn] {instance}` could not be solved: {e}"),
        })?;
        let callees = self.instances(&calls, &arguments)?;
        let callees = callees.iter().zip(&methods).map(|(u, m)| u.or(*m)).collect();
        Ok(ParFnUnit { entry, callees, signature, types })
    }
}
