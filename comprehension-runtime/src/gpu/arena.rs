//! Device memory without an allocation per chunk: one arena per device, and one scratch pool
//! per run drawing on it.
//!
//! Allocating and freeing device memory synchronises (`cuMemFree` waits for the device,
//! `clReleaseMemObject` may), so a run that allocated its buffers per chunk stalled per chunk.
//! Instead a run takes buffers from its [`Scratch`]: a buffer the run dropped is reused by the
//! run itself (its queue is in order, so later work on it runs after earlier work), and when
//! the run has finished its queue every buffer goes back to the device's [`Arena`], for the next
//! run on any thread. The arena frees what it holds when an allocation fails (memory is short),
//! when it holds more than a quarter of the device's memory, and when no run has used it for a
//! second (the process is idle), so an idle process does not sit on device memory.
//!
//! A few small buffers go back with what they hold ([`Scratch::keep_known`]): a fault record
//! a run read as zeros, a captures' header. The next run that needs the same bytes on the
//! device ([`Scratch::hold_known`]) takes one and queues no fill or copy, which on a device
//! where each command is a scheduling round-trip is a good part of a short run's time.

use super::device::{Buffer, Device, DeviceError, DeviceErrorKind};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the arena keeps buffers no run uses.
const IDLE: Duration = Duration::from_secs(1);

/// The most buffers the arena keeps with their contents, and the largest contents it keeps.
const KNOWN: usize = 32;
pub(crate) const KNOWN_BYTES: usize = 4096;

/// The buffers of one device that no run holds, for the next run.
pub(crate) struct Arena {
    device: &'static dyn Device,
    state: Mutex<State>,
    /// The most bytes the arena keeps.
    limit: u64,
}

#[derive(Default)]
struct State {
    free: Vec<Buffer>,
    /// Buffers no run holds whose contents the host knows (the first bytes of each; nothing
    /// writes them while the arena holds them), oldest first.
    known: Vec<(Buffer, Box<[u8]>)>,
    pooled: u64,
    /// Runs holding buffers of the arena now.
    active: usize,
    last_use: Option<Instant>,
    reaper: bool,
}

/// Allocation sizes are rounded up to one of eight steps between powers of two (at most 12.5 %
/// more than asked), so that a buffer freed by one run fits the next run's request for about
/// the same size.
fn size_class(bytes: usize) -> usize {
    let bytes = bytes.max(64);
    let top = bytes.next_power_of_two();
    if top <= 1024 {
        return top;
    }
    let step = top / 16;
    bytes.div_ceil(step) * step
}

impl Arena {
    /// The arena of `device` (one per device, for the life of the process).
    pub(crate) fn of(device: &'static dyn Device) -> &'static Arena {
        static ARENAS: OnceLock<Mutex<HashMap<usize, &'static Arena>>> = OnceLock::new();
        let key = std::ptr::from_ref(device).cast::<()>() as usize;
        let mut arenas =
            ARENAS.get_or_init(Mutex::default).lock().unwrap_or_else(|p| p.into_inner());
        arenas.entry(key).or_insert_with(|| {
            let memory = device.info().global_memory;
            let limit = if memory == 0 { 1 << 30 } else { memory / 4 };
            Box::leak(Box::new(Arena { device, state: Mutex::default(), limit }))
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes the arena holds for the next run.
    pub(crate) fn pooled(&self) -> u64 {
        self.state().pooled
    }

    /// Frees every buffer the arena holds.
    pub(crate) fn release(&self) {
        let freed = {
            let mut state = self.state();
            state.pooled = 0;
            (std::mem::take(&mut state.free), std::mem::take(&mut state.known))
        };
        drop(freed);
    }

    /// A buffer whose first bytes are `content`, taken from those the arena keeps so.
    fn take_known(&self, content: &[u8]) -> Option<Buffer> {
        let mut state = self.state();
        let at = state.known.iter().rposition(|(_, known)| **known == *content)?;
        let (buffer, _) = state.known.remove(at);
        state.pooled -= buffer.bytes() as u64;
        Some(buffer)
    }

    /// Keeps `buffer`, whose first bytes are `content`, for a run that needs those bytes (the
    /// oldest goes when the arena keeps [`KNOWN`]). Called while a run is active: the run's end
    /// starts the reaper that frees it once the process is idle.
    fn keep_known(&self, buffer: Buffer, content: Box<[u8]>) {
        let oldest = {
            let mut state = self.state();
            state.pooled += buffer.bytes() as u64;
            state.known.push((buffer, content));
            if state.known.len() > KNOWN {
                let (oldest, _) = state.known.remove(0);
                state.pooled -= oldest.bytes() as u64;
                Some(oldest)
            } else {
                None
            }
        };
        drop(oldest);
    }

    /// The smallest free buffer of at least `bytes` (and at most twice that) from `free`.
    fn pick(free: &mut Vec<Buffer>, bytes: usize) -> Option<Buffer> {
        let best = free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.bytes() >= bytes && b.bytes() <= bytes.saturating_mul(2).max(4096))
            .min_by_key(|(_, b)| b.bytes())
            .map(|(i, _)| i)?;
        Some(free.swap_remove(best))
    }

    /// A buffer of at least `bytes`, and whether it was newly allocated.
    fn take(&self, bytes: usize) -> Result<(Buffer, bool), DeviceError> {
        {
            let mut state = self.state();
            if let Some(buffer) = Self::pick(&mut state.free, bytes) {
                state.pooled -= buffer.bytes() as u64;
                return Ok((buffer, false));
            }
        }
        let class = size_class(bytes);
        match self.device.alloc(class) {
            Ok(buffer) => Ok((buffer, true)),
            Err(_) if self.pooled() > 0 => {
                // Memory is short: give back what the arena holds, and try once more.
                self.release();
                self.device.alloc(class).map(|b| (b, true))
            }
            Err(e) => Err(e),
        }
    }

    /// Takes a buffer no run uses any more (the storage of a dropped `DeviceVec`).
    pub(crate) fn recycle(&'static self, buffer: Buffer) {
        self.begin();
        self.end(vec![buffer]);
    }

    fn begin(&self) {
        let mut state = self.state();
        state.active += 1;
    }

    /// Takes back the buffers of a run whose queue has finished.
    fn end(&'static self, buffers: Vec<Buffer>) {
        let mut spawn = false;
        let surplus = {
            let mut state = self.state();
            state.active -= 1;
            state.last_use = Some(Instant::now());
            for buffer in buffers {
                state.pooled += buffer.bytes() as u64;
                state.free.push(buffer);
            }
            // Over the limit: the largest buffers go first.
            let mut surplus = Vec::new();
            if state.pooled > self.limit {
                state.free.sort_by_key(Buffer::bytes);
                while state.pooled > self.limit {
                    let Some(b) = state.free.pop() else { break };
                    state.pooled -= b.bytes() as u64;
                    surplus.push(b);
                }
            }
            if !state.reaper && state.pooled > 0 {
                state.reaper = true;
                spawn = true;
            }
            surplus
        };
        drop(surplus);
        if spawn {
            let started =
                std::thread::Builder::new().name("parcomp-arena".into()).spawn(move || self.reap());
            if started.is_err() {
                self.state().reaper = false;
            }
        }
    }

    /// Frees the arena's buffers once no run has used them for [`IDLE`]; ends when it holds
    /// none.
    fn reap(&self) {
        loop {
            std::thread::sleep(IDLE / 2);
            let freed = {
                let mut state = self.state();
                let idle = state.active == 0 && state.last_use.is_none_or(|t| t.elapsed() >= IDLE);
                if idle || state.pooled == 0 {
                    state.pooled = 0;
                    state.reaper = false;
                    Some((std::mem::take(&mut state.free), std::mem::take(&mut state.known)))
                } else {
                    None
                }
            };
            if let Some(freed) = freed {
                drop(freed);
                return;
            }
        }
    }
}

/// The device memory of one run: buffers it dropped are reused by it, and all of them go back
/// to the [`Arena`] when it is dropped, after its queue finished.
pub(crate) struct Scratch {
    arena: &'static Arena,
    free: RefCell<Vec<Buffer>>,
    live: Cell<u64>,
    peak: Cell<u64>,
    allocations: Cell<u64>,
}

impl Scratch {
    /// A run's scratch memory, from `arena`.
    pub(crate) fn new(arena: &'static Arena) -> Scratch {
        arena.begin();
        Scratch {
            arena,
            free: RefCell::default(),
            live: Cell::new(0),
            peak: Cell::new(0),
            allocations: Cell::new(0),
        }
    }

    /// A buffer of at least `bytes`: one the run dropped, one of the arena, or a new one.
    pub(crate) fn take(&self, bytes: usize) -> Result<Buffer, DeviceError> {
        let local = Arena::pick(&mut self.free.borrow_mut(), bytes);
        let buffer = match local {
            Some(buffer) => buffer,
            None => {
                let (buffer, new) = self.arena.take(bytes)?;
                if new {
                    self.allocations.set(self.allocations.get() + 1);
                }
                buffer
            }
        };
        self.count_held(&buffer);
        Ok(buffer)
    }

    /// Counts `buffer` as the run's from now on (its live bytes and their peak).
    fn count_held(&self, buffer: &Buffer) {
        let live = self.live.get() + buffer.bytes() as u64;
        self.live.set(live);
        self.peak.set(self.peak.get().max(live));
    }

    /// A buffer of at least `bytes` (and at least 8) that goes back to this scratch memory when
    /// dropped; a size the host cannot address is an allocation error.
    pub(crate) fn hold(&self, bytes: u64) -> Result<Mem<'_>, DeviceError> {
        let bytes = usize::try_from(bytes.max(8)).map_err(|_| {
            DeviceError::new(DeviceErrorKind::Alloc, format!("{bytes} bytes do not fit in memory"))
        })?;
        let buf = self.take(bytes)?;
        Ok(Mem { buf: ManuallyDrop::new(buf), scratch: self })
    }

    /// A buffer whose first bytes are `content` (at most [`KNOWN_BYTES`]) already, kept so by
    /// an earlier run ([`Self::keep_known`]), if the arena has one: nothing needs writing.
    pub(crate) fn hold_known(&self, content: &[u8]) -> Option<Mem<'_>> {
        let buf = self.arena.take_known(content)?;
        self.count_held(&buf);
        Some(Mem { buf: ManuallyDrop::new(buf), scratch: self })
    }

    /// Gives `mem` back to the arena as holding `content` in its first bytes, for a later run
    /// that needs them ([`Self::hold_known`]). The caller's promise: the device holds exactly
    /// that, and no queued work still writes it (its queue waited after its last launch).
    pub(crate) fn keep_known(&self, mem: Mem<'_>, content: Box<[u8]>) {
        if content.len() > KNOWN_BYTES {
            return;
        }
        self.arena.keep_known(mem.into_buffer(), content);
    }

    /// A buffer the run no longer uses (work queued on it before still runs first: the queue is
    /// in order).
    pub(crate) fn put(&self, buffer: Buffer) {
        self.live.set(self.live.get() - buffer.bytes() as u64);
        self.free.borrow_mut().push(buffer);
    }

    /// A buffer the run took that now outlives it (a result kept on the device).
    pub(crate) fn forget(&self, buffer: &Buffer) {
        self.live.set(self.live.get() - buffer.bytes() as u64);
    }

    /// The most bytes the run held at once.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.get()
    }

    /// Device allocations the run made (buffers neither it nor the arena had).
    pub(crate) fn allocations(&self) -> u64 {
        self.allocations.get()
    }
}

impl Drop for Scratch {
    /// Gives every buffer back to the arena. The run's queue has finished by then: the queue
    /// belongs to the run's session, which is made after its scratch and so dropped before it
    /// (dropping a queue finishes it), also when the run unwinds from a panic.
    fn drop(&mut self) {
        let buffers = self.free.take();
        self.arena.end(buffers);
    }
}

/// Device memory of a run, from its [`Scratch`] and back to it when dropped.
pub(crate) struct Mem<'c> {
    pub(crate) buf: ManuallyDrop<Buffer>,
    scratch: &'c Scratch,
}

impl Drop for Mem<'_> {
    fn drop(&mut self) {
        // SAFETY: `buf` is taken once, here, and the `Mem` is not used after.
        let buf = unsafe { ManuallyDrop::take(&mut self.buf) };
        self.scratch.put(buf);
    }
}

impl Mem<'_> {
    /// The buffer, taken out of the run's scratch memory for good (it outlives the run).
    pub(crate) fn into_buffer(self) -> Buffer {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `buf` is taken once, and `this` is never dropped (so `Mem::drop` does not
        // take it again).
        let buf = unsafe { ManuallyDrop::take(&mut this.buf) };
        this.scratch.forget(&buf);
        buf
    }
}

impl std::ops::Deref for Mem<'_> {
    type Target = Buffer;

    fn deref(&self) -> &Buffer {
        &self.buf
    }
}
