//! The GPU backend: comprehensions flattened by expansion and run on a device.
//!
//! See `README.md` in this folder for how the pieces fit together.

mod arena;
mod cache;
pub mod calibrate;
#[cfg(feature = "cuda-api")]
pub mod cuda;
pub mod device;
mod executor;
mod fault;
mod infer;
pub mod offload;
#[cfg(feature = "opencl")]
pub(crate) mod opencl;
pub mod par_fn;
pub mod plan;
mod program;
pub mod resident;
pub(crate) mod segmented;
pub(crate) mod sort;
pub(crate) mod threshold;
pub mod types;

pub use cache::entries as cache_entries;
pub use executor::{KernelCost, RunStats};
pub use offload::{Offload, OutputCodec, OutputProbe};

use crate::backend::Backend;
use crate::pipeline::Reducer;
use crate::site::Site;
use device::{Device, DeviceError, DeviceErrorKind, DeviceInfo};
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(any(feature = "opencl", feature = "cuda-api"))]
use std::sync::OnceLock;

/// The dialect prelude every kernel starts with, after the fault codes' `#define`s (generated
/// from the contract's table).
pub fn prelude() -> String {
    parcomp_contract::fault_defines() + include_str!("kernels/prelude.h")
}
/// Rust's arithmetic, comparisons, casts and numeric methods for every primitive type.
pub const SCALAR: &str = include_str!("kernels/scalar.h");

/// Why a device did not run a comprehension it was given.
#[derive(Clone, Debug)]
pub(crate) struct DeviceFailure {
    /// What went wrong, for the trace and for errors.
    pub(crate) message: String,
    /// A device error (a build, an allocation, a launch failed), as opposed to something the
    /// device cannot express (a value it cannot represent): an error when the device is forced.
    pub(crate) fatal: bool,
}

impl DeviceFailure {
    /// Something the device cannot express (a value it cannot represent, a shape it does not
    /// run): the comprehension runs on the host, even when a device is forced.
    pub(crate) fn cannot(message: impl Into<String>) -> Self {
        DeviceFailure { message: message.into(), fatal: false }
    }

    /// The device failed (a build, an allocation, a launch, a size it cannot hold): an error
    /// when the device is forced.
    pub(crate) fn fatal(message: impl Into<String>) -> Self {
        DeviceFailure { message: message.into(), fatal: true }
    }
}

/// A device error is a failure of the device.
impl From<DeviceError> for DeviceFailure {
    fn from(e: DeviceError) -> Self {
        DeviceFailure::fatal(e.to_string())
    }
}

/// The process's OpenCL device, opened on first use.
pub fn opencl_device() -> Result<&'static dyn Device, DeviceError> {
    #[cfg(feature = "opencl")]
    {
        static DEVICE: OnceLock<Result<opencl::OpenClDevice, DeviceError>> = OnceLock::new();
        match DEVICE.get_or_init(opencl::OpenClDevice::open) {
            Ok(device) => Ok(device),
            Err(e) => Err(e.clone()),
        }
    }
    #[cfg(not(feature = "opencl"))]
    {
        Err(DeviceError::new(
            DeviceErrorKind::Unavailable,
            "this build has no OpenCL support: enable the `opencl` feature of parcomp",
        ))
    }
}

/// The process's CUDA device, opened on first use.
pub fn cuda_device() -> Result<&'static dyn Device, DeviceError> {
    #[cfg(feature = "cuda-api")]
    {
        static DEVICE: OnceLock<Result<cuda::CudaDevice, DeviceError>> = OnceLock::new();
        match DEVICE.get_or_init(cuda::CudaDevice::open) {
            Ok(device) => Ok(device),
            Err(e) => Err(e.clone()),
        }
    }
    #[cfg(not(feature = "cuda-api"))]
    {
        Err(DeviceError::new(
            DeviceErrorKind::Unavailable,
            "this build has no CUDA support: enable the `cuda` feature of parcomp",
        ))
    }
}

/// The device of a device backend.
pub fn device(backend: Backend) -> Result<&'static dyn Device, DeviceError> {
    match backend {
        Backend::OpenCl => opencl_device(),
        Backend::Cuda => cuda_device(),
        other => Err(DeviceError::new(
            DeviceErrorKind::Unavailable,
            format!("{other} is not a device backend"),
        )),
    }
}

/// What the device of a device backend is (opening it on first use), or why there is none.
pub fn device_for(backend: Backend) -> Result<&'static DeviceInfo, DeviceError> {
    device(backend).map(Device::info)
}

/// The device backend the automatic choice uses: the first of [`Backend::DEVICES`] whose
/// device is present (CUDA before OpenCL), or why there is none.
pub(crate) fn automatic_device() -> Result<Backend, DeviceError> {
    let mut why = Vec::new();
    for &backend in Backend::DEVICES {
        match device(backend) {
            Ok(_) => return Ok(backend),
            Err(e) => why.push((backend, e.message)),
        }
    }
    let message = match why.as_slice() {
        [] => "this build has no GPU feature (`opencl` or `cuda`)".to_string(),
        [(_, only)] => only.clone(),
        all => all.iter().map(|(b, m)| format!("{b}: {m}")).collect::<Vec<_>>().join("; "),
    };
    Err(DeviceError::new(DeviceErrorKind::Unavailable, message))
}

/// The device backends of this build, in words (`opencl`, `cuda or opencl`).
pub(crate) fn device_names() -> String {
    let names: Vec<&str> = Backend::DEVICES.iter().map(|b| b.name()).collect();
    if names.is_empty() {
        "GPU".into()
    } else {
        names.join(" or ")
    }
}

/// Says once per process, on stderr, why comprehensions run on the CPU although a GPU feature
/// is on: no device was found.
pub(crate) fn say_once_why_not(error: &DeviceError) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("parcomp: comprehensions run on rayon: {error}");
    }
}

/// Says once per process, on stderr, that a device failed to run a comprehension and the CPU
/// ran it instead.
pub(crate) fn warn_once(site: &'static Site, backend: Backend, message: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "parcomp: {site} could not run on {backend} and ran on rayon instead: {message} \
             (further such failures are only traced: PARCOMP_TRACE=1)"
        );
    }
}

fn device_of(backend: Backend) -> Result<&'static dyn Device, DeviceFailure> {
    device(backend).map_err(DeviceFailure::from)
}

thread_local! {
    pub(crate) static LAST_STATS: std::cell::RefCell<Option<RunStats>> = const { std::cell::RefCell::new(None) };
}

/// What the last device run on this thread measured (for reports).
pub fn last_run_stats() -> Option<RunStats> {
    LAST_STATS.with(|s| s.borrow().clone())
}

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
    let root_type = match parts.root {
        offload::HostData::Range(r) => r.desc(),
        offload::HostData::Elements(e) => e.desc(),
        // An array of rows: the device runs over its row indices.
        offload::HostData::Jagged(_) => types::TypeDesc::Prim(types::Prim::U64),
        _ => return Err(DeviceFailure::cannot("its first generator is not a range or a source")),
    };
    let compile_start = std::time::Instant::now();
    let key = PreparedKey {
        plan: std::ptr::from_ref(parts.plan) as usize,
        device: std::ptr::from_ref(device).cast::<()>() as usize,
        captures: capture_types,
        root: root_type,
        output: parts.output.desc(),
    };
    let (prepared, origins) = prepared(device, parts.plan, parts.par_fns, key)?;
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
    let result = session.upload(&captures, parts.root).and_then(|()| session.run(sink));
    let stats = session.stats.clone();
    drop(session);
    drop(scratch);
    LAST_STATS.with(|s| *s.borrow_mut() = Some(stats));
    result
}

/// What decides a comprehension's programs: the plan, the device, and the types observed at
/// the call site.
#[derive(Clone, PartialEq, Eq, Hash)]
struct PreparedKey {
    plan: usize,
    device: usize,
    captures: Vec<types::TypeDesc>,
    root: types::TypeDesc,
    output: types::TypeDesc,
}

/// A comprehension ready to run on a device for one [`PreparedKey`]: its solved types, its
/// faults' texts and its programs.
struct Prepared {
    types: Vec<types::TypeDesc>,
    faults: Vec<String>,
    program: program::Built,
    generic: program::Built,
}

/// The [`Prepared`] of `key`: made once per process (solving the types, assembling the source,
/// building or loading the programs), then found by the key, so that a run of a few elements
/// does not pay for the assembly again. Returns where the programs came from this time.
fn prepared(
    device: &dyn Device,
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
    let info = device.info();
    let (units, called) = resolve_par_fns(par_fns).map_err(DeviceFailure::cannot)?;
    let signatures: Vec<(Vec<types::TypeDesc>, types::TypeDesc)> =
        called.iter().map(|&u| units[u].signature.clone()).collect();
    let observed = infer::Observations {
        captures: &key.captures,
        root: Some(key.root.clone()),
        output: Some(key.output.clone()),
        par_fns: &signatures,
    };
    let types = infer::solve(plan.classes, plan.constraints, &observed).map_err(|e| {
        DeviceFailure::cannot(format!("its types could not be solved on the device: {e}"))
    })?;
    let uses_f64 =
        types.iter().chain(units.iter().flat_map(|u| &u.types)).any(types::TypeDesc::uses_f64);
    if !info.fp64 && uses_f64 {
        return Err(DeviceFailure::cannot(format!("it uses f64, which {info} does not have")));
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
        for (k, &callee) in unit.callees.iter().enumerate() {
            let _ = writeln!(par_fn_source, "#define PC_FN_{k} pcf_{callee}");
        }
        par_fn_source.push_str(&prelude.class_defines(&unit.types));
        par_fn_source.push_str(unit.entry.source);
        par_fn_source.push_str("#undef PCF_SELF\n#undef PCF_FAULT_BASE\n");
        for k in 0..unit.callees.len() {
            let _ = writeln!(par_fn_source, "#undef PC_FN_{k}");
        }
        par_fn_source.push_str(&program::class_undefs(unit.types.len()));
        faults.extend(
            unit.entry.faults.iter().map(|f| format!("{f}` in `#[par_fn] {}", unit.entry.path)),
        );
    }
    let mut classes = prelude.class_defines(&types);
    for (k, &u) in called.iter().enumerate() {
        use std::fmt::Write as _;
        let _ = writeln!(classes, "#define PC_FN_{k} pcf_{u}");
    }
    let source =
        program::comprehension_source(plan, &prelude, &par_fn_source, &classes, &types, info.fp64);
    let (generic, generic_origin) = program::generic(device)?;
    let (program, origin) = program::build(device, &source)?;
    let prepared = Arc::new(Prepared { types, faults, program, generic });
    table.lock().unwrap_or_else(|p| p.into_inner()).insert(key, prepared.clone());
    Ok((prepared, [generic_origin, origin]))
}

/// The values of a `par!`, chunk after chunk.
struct CollectSink<T> {
    out: Vec<T>,
    codec: OutputCodec<T>,
    /// The first of the rows [`executor::TopSink::begin_rows`] last added.
    rows_base: usize,
}

impl<T: Send> executor::TopSink for CollectSink<T> {
    fn values(
        &mut self,
        layout: &types::ColumnLayout,
        count: usize,
        fetch: &mut executor::Fetch<'_, '_>,
    ) -> Result<(), DeviceFailure> {
        match self.codec.raw_size() {
            Some(size) if layout.leaves.len() == 1 && layout.leaves[0].size() == size => {
                // A primitive result: the device's column is a `[T]` as it is, copied straight
                // into the output's memory.
                self.out.reserve(count);
                let len = self.out.len();
                let spare = self.out.spare_capacity_mut().as_mut_ptr().cast::<u8>();
                // SAFETY: `reserve` made room for `count` more values after `len`, which
                // nothing else touches until the read returns; the bytes read are values of a
                // primitive number (every bit pattern of which is a valid value) written by
                // the kernels, so after the read the first `len + count` values are
                // initialised.
                unsafe {
                    fetch.read(&[(layout.offsets[0], spare, count * size)])?;
                    self.out.set_len(len + count);
                }
            }
            _ => {
                // The first `count` values of each component (the column may have room for
                // more), into a local column that holds just them.
                let mut bytes = Vec::new();
                let (tight, parts) = layout
                    .prefix_reads(count, &mut bytes)
                    .ok_or_else(|| DeviceFailure::fatal("a result too large for memory"))?;
                // SAFETY: every destination is component k's array of the tight layout, inside
                // `bytes`, a local vector untouched until it returns.
                unsafe { fetch.read(&parts)? };
                let converted: usize = tight.leaves.iter().map(|l| l.size() * count).sum();
                fetch.converted(converted);
                self.codec.extend_par(&mut self.out, &bytes, &tight, count);
            }
        }
        Ok(())
    }

    fn begin_rows(&mut self, count: usize) {
        self.rows_base = self.out.len();
        self.codec.empty_rows(&mut self.out, count);
    }

    fn row_values(&mut self, bytes: &[u8], layout: &types::ColumnLayout, groups: &[u64]) {
        self.codec.append_rows(&mut self.out[self.rows_base..], bytes, layout, groups);
    }

    fn partial(&mut self, _: &[u8], _: &types::ColumnLayout, _: plan::ReduceKind) {
        unreachable!("a par! has no partial results")
    }
}

/// The values of a `par_device!`, kept on the device chunk after chunk.
struct ResidentSink {
    chunks: Vec<(device::Buffer, types::ColumnLayout, usize)>,
}

impl executor::TopSink for ResidentSink {
    fn values(
        &mut self,
        _: &types::ColumnLayout,
        _: usize,
        _: &mut executor::Fetch<'_, '_>,
    ) -> Result<(), DeviceFailure> {
        unreachable!("a par_device! keeps its values on the device")
    }

    fn keeps(&self) -> bool {
        true
    }

    fn keep(&mut self, buffer: device::Buffer, layout: types::ColumnLayout, count: usize) {
        if count > 0 {
            self.chunks.push((buffer, layout, count));
        }
    }

    fn begin_rows(&mut self, _: usize) {
        unreachable!("a par_device! has no rows")
    }

    fn row_values(&mut self, _: &[u8], _: &types::ColumnLayout, _: &[u64]) {
        unreachable!("a par_device! has no rows")
    }

    fn partial(&mut self, _: &[u8], _: &types::ColumnLayout, _: plan::ReduceKind) {
        unreachable!("a par_device! has no partial results")
    }
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

/// A reduction's partial results, combined in order.
// Only a build with a device backend runs a reduction's device half (see
// `dispatch::place::reduce`).
#[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
struct ReduceSink<'r, T, R: Reducer<T>> {
    reducer: &'r R,
    codec: OutputCodec<T>,
    acc: Option<R::Acc>,
    decided: bool,
    refused: bool,
}

impl<T, R: Reducer<T>> executor::TopSink for ReduceSink<'_, T, R> {
    fn values(
        &mut self,
        _: &types::ColumnLayout,
        _: usize,
        _: &mut executor::Fetch<'_, '_>,
    ) -> Result<(), DeviceFailure> {
        unreachable!("a reduction delivers partial results")
    }

    fn begin_rows(&mut self, _: usize) {
        unreachable!("a reduction delivers partial results")
    }

    fn row_values(&mut self, _: &[u8], _: &types::ColumnLayout, _: &[u64]) {
        unreachable!("a reduction delivers partial results")
    }

    fn partial(&mut self, bytes: &[u8], layout: &types::ColumnLayout, kind: plan::ReduceKind) {
        use crate::pipeline::DevicePartial;
        let partial = match kind {
            plan::ReduceKind::Value => DevicePartial::Value(self.codec.read_one(bytes, layout, 0)),
            plan::ReduceKind::Optional => {
                DevicePartial::Optional(self.codec.read_option(bytes, layout, 0))
            }
            plan::ReduceKind::Count => DevicePartial::Count(u64::from_le_bytes(
                bytes[..8].try_into().expect("a count is 8 bytes"),
            )),
            plan::ReduceKind::Flag { stop } => {
                let flag = bytes[0] != 0;
                if flag == stop {
                    self.decided = true;
                }
                DevicePartial::Flag(flag)
            }
        };
        match self.reducer.accept_device(partial) {
            Some(part) => {
                self.acc = Some(match self.acc.take() {
                    Some(acc) => self.reducer.combine(acc, part),
                    None => part,
                });
            }
            None => {
                self.refused = true;
                self.decided = true;
            }
        }
    }

    fn decided(&self) -> bool {
        self.decided
    }
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
    let mut sink = CollectSink { out: Vec::new(), codec, rows_base: 0 };
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
/// its program.
struct ParFnUnit {
    entry: &'static par_fn::ParFnEntry,
    /// Its callees, as indices into the list of units.
    callees: Vec<usize>,
    signature: (Vec<types::TypeDesc>, types::TypeDesc),
    /// Its classes' types.
    types: Vec<types::TypeDesc>,
}

/// The `#[par_fn]`s called by paths `names`, and those they call: callees before callers. Also
/// the unit of each name. A function that is not marked, or that calls itself (OpenCL C has no
/// recursion), is a reason to stay on the CPU.
fn resolve_par_fns(names: &[&'static str]) -> Result<(Vec<ParFnUnit>, Vec<usize>), String> {
    fn visit(
        path: &'static str,
        units: &mut Vec<ParFnUnit>,
        index: &mut std::collections::HashMap<&'static str, Option<usize>>,
    ) -> Result<usize, String> {
        match index.get(path) {
            Some(Some(done)) => return Ok(*done),
            Some(None) => {
                return Err(format!("`{path}` calls itself, and device code cannot recurse"))
            }
            None => {}
        }
        let entry = par_fn::find(path)
            .ok_or_else(|| format!("it calls `{path}`, which is not marked `#[par_fn]`"))?;
        index.insert(path, None);
        let callees = (entry.callees)()
            .into_iter()
            .map(|callee| visit(callee, units, index))
            .collect::<Result<Vec<usize>, String>>()?;
        let signature = (entry.signature)();
        let mut observations: Vec<types::TypeDesc> = signature.0.clone();
        observations.push(signature.1.clone());
        let callee_signatures: Vec<(Vec<types::TypeDesc>, types::TypeDesc)> =
            callees.iter().map(|&c| units[c].signature.clone()).collect();
        let observed = infer::Observations {
            captures: &observations,
            root: None,
            output: None,
            par_fns: &callee_signatures,
        };
        let types = infer::solve(entry.classes, entry.constraints, &observed)
            .map_err(|e| format!("the types of `#[par_fn] {path}` could not be solved: {e}"))?;
        units.push(ParFnUnit { entry, callees, signature, types });
        index.insert(path, Some(units.len() - 1));
        Ok(units.len() - 1)
    }
    let mut units = Vec::new();
    let mut index = std::collections::HashMap::new();
    let called =
        names.iter().map(|&n| visit(n, &mut units, &mut index)).collect::<Result<_, _>>()?;
    Ok((units, called))
}
