//! Copies between the host's ordinary memory and a GPU through page-locked ("pinned") staging
//! memory: the part of the copy path the device backends (`opencl/`, `cuda/`) share.
//!
//! A GPU copies by DMA, which reaches only page-locked host memory. A copy from a caller's
//! ordinary (pageable) memory makes the driver stage it through memory of its own, and most
//! drivers then copy synchronously: CUDA's `cuMemcpyHtoDAsync` from pageable memory returns
//! only once the bytes are staged, and a read into pageable memory waits for everything queued
//! before it. A run's queue instead copies through two pinned **slots** of `piece` bytes in
//! turn ([`Ring`]): the host copies piece k + 1 into one slot while the DMA engine moves piece k
//! out of the other, and a read lands in a slot and is copied to the caller's memory when that
//! slot is needed again or when the queue finishes. Each slot is waited for only when it is
//! reused (a marker — an OpenCL event, a CUDA event — of the last copy through it).
//!
//! Beside the slots, a pinned **mailbox** of [`MAILBOX`] bytes takes the short reads: the
//! total a sizing wait reads, the fault record read with every wait, a reduction's result, the
//! first kept values of a filter. Each lands at a place of its own there, nothing marks it, and
//! all are copied to their destinations when the queue finishes. Into ordinary memory each such
//! read would wait for everything queued before it (CUDA's `cuMemcpyDtoHAsync` into pageable
//! memory returns only once the copy has completed), so a wait that reads a total and the fault
//! record would wait two or three times where the queue's one finish suffices.
//!
//! A device whose memory is the host's (a CPU device such as PoCL, an integrated GPU) stages
//! nothing: a copy there is one `memcpy` already, and a second would only cost. Writes shorter
//! than [`DIRECT_BELOW`] go straight from the caller's memory too: the driver copies those
//! into memory of its own at once and the call returns. `PARCOMP_DEVICE_STAGING` overrides the
//! choice, read once per process: `off`, or a number of bytes per piece to stage every copy of
//! a run on any device (the tests stage through pieces of a few kilobytes on PoCL, so that the
//! path a GPU takes runs in CI).

use super::device::{Buffer, DeviceError, StagingStats};
use std::cell::{Cell, RefCell};
use std::sync::OnceLock;

/// Bytes per slot where the environment does not say: large enough that a piece's DMA runs
/// near the bus's bandwidth, small enough that the host's copy of the next piece overlaps it.
pub(crate) const PIECE: usize = 4 << 20;

/// The largest piece `PARCOMP_DEVICE_STAGING` may ask for (a device allocates two).
pub(crate) const MOST_PIECE: usize = 1 << 30;

/// Writes shorter than this go straight from the caller's memory where staging is chosen by
/// default.
pub(crate) const DIRECT_BELOW: usize = 64 << 10;

/// Bytes of a queue's pinned mailbox, beside its two slots: the short reads queued between two
/// finishes of the queue land there (each of at most a piece).
pub(crate) const MAILBOX: usize = 64 << 10;

/// Each read's place in the mailbox starts at a multiple of this.
const MAILBOX_ALIGN: usize = 64;

/// How a device's runs copy: through slots of `piece` bytes (and the mailbox), every read and
/// the writes of at least `direct_below` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Staging {
    /// Bytes per slot.
    pub(crate) piece: usize,
    /// Writes shorter than this are not staged.
    pub(crate) direct_below: usize,
}

/// What `PARCOMP_DEVICE_STAGING` says: `None` where it is unset (or unreadable), `Some(None)`
/// for `off`, `Some(Some(piece))` for a number of bytes.
fn overridden() -> Option<Option<usize>> {
    static SET: OnceLock<Option<Option<usize>>> = OnceLock::new();
    *SET.get_or_init(|| {
        let value = std::env::var("PARCOMP_DEVICE_STAGING").ok()?;
        let value = value.trim().replace('_', "");
        match value.as_str() {
            "" => None,
            "off" | "0" => Some(None),
            bytes => bytes.parse::<usize>().ok().map(Some),
        }
    })
}

impl Staging {
    /// The staging of a device: `by_default` where its memory is not the host's, unless
    /// `PARCOMP_DEVICE_STAGING` says otherwise.
    pub(crate) fn chosen(by_default: bool) -> Option<Staging> {
        match overridden() {
            Some(Some(piece)) => Some(Staging { piece: piece.min(MOST_PIECE), direct_below: 1 }),
            Some(None) => None,
            None => by_default.then_some(Staging { piece: PIECE, direct_below: DIRECT_BELOW }),
        }
    }

    /// Whether a copy of `len` bytes the way `way` says goes through the slots or the
    /// mailbox: every read (into ordinary memory it would wait for the queue), a write of at
    /// least `direct_below` bytes.
    pub(crate) fn stages(&self, way: Way, len: usize) -> bool {
        len > 0
            && match way {
                Way::In => len >= self.direct_below,
                Way::Out => true,
            }
    }
}

/// Whether a device's runs copy beside their kernels, on a second queue of their own (the
/// queue's lane, [`super::device::Queue::lane`]): `by_default` where the device's memory is not
/// the host's — a GPU's DMA engines copy while its compute units compute — unless
/// `PARCOMP_DEVICE_OVERLAP` says `on` or `off` (read once per process). On a CPU device a copy is
/// a `memcpy` by the cores that run the kernels, so a lane would only compete with them; the
/// tests turn it on there so that the path a GPU's runs take runs in CI.
pub(crate) fn lane_chosen(by_default: bool) -> bool {
    static SET: OnceLock<Option<bool>> = OnceLock::new();
    let set = *SET.get_or_init(|| {
        match std::env::var("PARCOMP_DEVICE_OVERLAP").ok()?.trim().to_ascii_lowercase().as_str() {
            "on" | "1" => Some(true),
            "off" | "0" => Some(false),
            _ => None,
        }
    });
    set.unwrap_or(by_default)
}

/// Which way a copy through a slot goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// From the slot into the device's buffer.
    In,
    /// From the device's buffer into the slot.
    Out,
}

/// Where in a queue's pinned memory a copy goes: slot 0 or 1 (a piece each), or the mailbox
/// from its byte `at` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    Slot(usize),
    Mailbox(usize),
}

impl Place {
    /// Where the place starts in memory laid out as the two slots, then the mailbox.
    pub(crate) fn offset(self, piece: usize) -> usize {
        match self {
            Place::Slot(slot) => slot * piece,
            Place::Mailbox(at) => 2 * piece + at,
        }
    }
}

/// A device's two pinned slots and its mailbox, and the copies through them, all on one
/// in-order queue.
pub(crate) trait Slots {
    /// The pinned memory of `place`, laid out as [`Place::offset`] says (`2 * piece +
    /// MAILBOX` bytes in all): valid for reads and writes for as long as the slots live, and
    /// touched by the device only during copies queued with the place.
    fn host(&self, place: Place) -> *mut u8;
    /// Waits until the copies queued with `slot` have ended (at once when there were none).
    fn wait(&mut self, slot: usize) -> Result<(), DeviceError>;
    /// Queues a copy of `len` bytes between the place's first bytes and `buffer` at `offset`,
    /// the way `way` says (the ring has checked the range against the buffer, and the bytes lie
    /// inside the place: at most a piece in a slot, up to [`MAILBOX`] in the mailbox). A slot is
    /// marked in use until the copy ends; nothing marks a read into the mailbox, which the ring
    /// reads only after the queue finished.
    fn copy(
        &mut self,
        place: Place,
        way: Way,
        buffer: &Buffer,
        offset: usize,
        len: usize,
    ) -> Result<(), DeviceError>;
}

/// A queue's use of its slots and mailbox: the slot to use next, which hold a copy still under
/// way, which hold a read still to be delivered to its destination, and the reads queued into
/// the mailbox since the queue last finished.
pub(crate) struct Ring {
    /// Bytes per slot.
    piece: usize,
    next: usize,
    busy: [bool; 2],
    reads: [Option<(*mut u8, usize)>; 2],
    /// Bytes of the mailbox taken since the queue last finished.
    mailbox_used: usize,
    /// `(place in the mailbox, destination, length)` of each read queued into it.
    mailbox_reads: Vec<(usize, *mut u8, usize)>,
    stats: StagingStats,
}

// SAFETY: the destinations in `reads` and `mailbox_reads` are the caller's, valid for writes
// until the queue is finished (the contract of `Queue::read_async`); the ring is used by the
// one queue that owns it, from whichever thread holds that queue, and by nothing else.
unsafe impl Send for Ring {}

impl Ring {
    pub(crate) fn new(piece: usize) -> Ring {
        Ring {
            piece,
            next: 0,
            busy: [false; 2],
            reads: [None, None],
            mailbox_used: 0,
            mailbox_reads: Vec::new(),
            stats: Default::default(),
        }
    }

    /// The place in the mailbox for a read of `len` bytes, taken, where it has room and the
    /// read is at most a piece: else the read goes through the slots.
    fn mailbox_place(&mut self, len: usize) -> Option<usize> {
        if len == 0 || len > self.piece.min(MAILBOX) {
            return None;
        }
        let at = self.mailbox_used.next_multiple_of(MAILBOX_ALIGN);
        // No overflow: `mailbox_used` is at most MAILBOX, and `len` too.
        if at + len > MAILBOX {
            return None;
        }
        self.mailbox_used = at + len;
        Some(at)
    }

    /// What the ring did since the last call, and counting starts again.
    pub(crate) fn take_stats(&mut self) -> StagingStats {
        std::mem::take(&mut self.stats)
    }

    /// The pieces of a copy of `len` bytes: (from, length) each.
    fn pieces(&self, len: usize) -> impl Iterator<Item = (usize, usize)> {
        let piece = self.piece.max(1);
        (0..len).step_by(piece).map(move |at| (at, piece.min(len - at)))
    }

    /// The next slot, free: its last copy ended, and a read it held delivered.
    fn take_slot(&mut self, slots: &mut dyn Slots) -> Result<usize, DeviceError> {
        let slot = self.next;
        self.next ^= 1;
        if self.busy[slot] {
            slots.wait(slot)?;
            self.busy[slot] = false;
            self.stats.waits += 1;
        }
        self.deliver(slots, slot);
        Ok(slot)
    }

    /// Copies the read slot `slot` holds (its copy has ended) to its destination.
    fn deliver(&mut self, slots: &dyn Slots, slot: usize) {
        if let Some((out, len)) = self.reads[slot].take() {
            // SAFETY: the slot's copy from the device has ended (waited for, or the queue
            // finished), so its first `len` bytes are the read's; `out` is the destination
            // `read` was given, valid for `len` bytes of writes until the queue is finished,
            // which has not yet returned to the caller; pinned memory and the caller's do not
            // overlap.
            unsafe { std::ptr::copy_nonoverlapping(slots.host(Place::Slot(slot)), out, len) };
            self.stats.bytes += len as u64;
        }
    }

    /// Queues a copy of `len` bytes at `data` into `buffer` at `offset`, through the slots; the
    /// bytes have been read when it returns.
    ///
    /// # Safety
    ///
    /// `data..data + len` must be valid for reads during the call.
    pub(crate) unsafe fn write(
        &mut self,
        slots: &mut dyn Slots,
        buffer: &Buffer,
        offset: usize,
        data: *const u8,
        len: usize,
    ) -> Result<(), DeviceError> {
        buffer.check_range(offset, len)?;
        for (at, n) in self.pieces(len) {
            let slot = self.take_slot(slots)?;
            // SAFETY: `at + n <= len`, inside the caller's bytes (the caller's promise); the slot
            // holds a piece, at least `n` bytes, and no copy uses it now (`take_slot`).
            unsafe {
                std::ptr::copy_nonoverlapping(data.add(at), slots.host(Place::Slot(slot)), n)
            };
            self.stats.bytes += n as u64;
            slots.copy(Place::Slot(slot), Way::In, buffer, offset + at, n)?;
            self.busy[slot] = true;
        }
        Ok(())
    }

    /// Queues a copy of `len` bytes of `buffer` at `offset` to `out`, through the slots; the bytes
    /// are there once [`finished`](Self::finished) returns after the queue finished.
    ///
    /// # Safety
    ///
    /// `out..out + len` must be valid for writes, and neither read nor written by anything
    /// else, until `finished` returns.
    pub(crate) unsafe fn read(
        &mut self,
        slots: &mut dyn Slots,
        buffer: &Buffer,
        offset: usize,
        out: *mut u8,
        len: usize,
    ) -> Result<(), DeviceError> {
        buffer.check_range(offset, len)?;
        let used = self.mailbox_used;
        if let Some(at) = self.mailbox_place(len) {
            if let Err(e) = slots.copy(Place::Mailbox(at), Way::Out, buffer, offset, len) {
                self.mailbox_used = used;
                return Err(e);
            }
            self.mailbox_reads.push((at, out, len));
            return Ok(());
        }
        for (at, n) in self.pieces(len) {
            let slot = self.take_slot(slots)?;
            slots.copy(Place::Slot(slot), Way::Out, buffer, offset + at, n)?;
            self.busy[slot] = true;
            // SAFETY: `at + n <= len`: inside the caller's destination.
            self.reads[slot] = Some((unsafe { out.add(at) }, n));
        }
        Ok(())
    }

    /// After the queue finished: the reads the slots and the mailbox still hold delivered when
    /// it finished without error (`ok`), dropped otherwise (their destinations are not
    /// written).
    pub(crate) fn finished(&mut self, slots: &mut dyn Slots, ok: bool) {
        for slot in 0..2 {
            if self.busy[slot] {
                // Every copy ended with the queue; this only lets the device forget the marker.
                let _ = slots.wait(slot);
                self.busy[slot] = false;
            }
            if ok {
                self.deliver(slots, slot);
            } else {
                self.reads[slot] = None;
            }
        }
        for (at, out, len) in self.mailbox_reads.drain(..) {
            if ok {
                // SAFETY: the queue finished, so the read into the mailbox at `at` has ended
                // and its `len` bytes (inside the mailbox: `mailbox_place`) are the read's;
                // `out` is the destination `read` was given, valid for `len` bytes of writes
                // until the queue is finished, which has not yet returned to the caller;
                // pinned memory and the caller's do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(slots.host(Place::Mailbox(at)), out, len) };
                self.stats.bytes += len as u64;
            }
        }
        self.mailbox_used = 0;
    }
}

/// The slots a queue made and their ring, kept with the queue in its device's pool.
pub(crate) type PooledSlots<S> = (S, Ring);

/// A queue's staging, as the device backends keep it: the slots and their ring once the
/// queue's first staged copy made them (kept with the queue in its device's pool after), or a
/// note that making them failed (the queue's copies then go straight).
pub(crate) struct QueueStaging<S> {
    staging: Option<Staging>,
    staged: RefCell<Option<PooledSlots<S>>>,
    unstaged: Cell<bool>,
}

impl<S: Slots> QueueStaging<S> {
    /// The staging of a queue taken from its device's pool with `pooled`, the slots it made
    /// before (their counts start again).
    pub(crate) fn new(staging: Option<Staging>, pooled: Option<PooledSlots<S>>) -> Self {
        let mut pooled = pooled;
        if let Some((_, ring)) = pooled.as_mut() {
            ring.take_stats();
        }
        QueueStaging { staging, staged: RefCell::new(pooled), unstaged: Cell::new(false) }
    }

    /// Runs `copy` with the slots and their ring when a copy of `len` bytes the way `way` says
    /// goes through them (made by `make`, given the piece's bytes, on first use); `None` when it
    /// goes straight (no staging on this device, a short write, or no pinned memory to be had).
    pub(crate) fn copy<R>(
        &self,
        way: Way,
        len: usize,
        make: impl FnOnce(usize) -> Result<S, DeviceError>,
        copy: impl FnOnce(&mut S, &mut Ring) -> R,
    ) -> Option<R> {
        let staging = self.staging.filter(|s| s.stages(way, len))?;
        if self.unstaged.get() {
            return None;
        }
        let mut staged = self.staged.borrow_mut();
        if staged.is_none() {
            match make(staging.piece) {
                Ok(slots) => *staged = Some((slots, Ring::new(staging.piece))),
                Err(_) => {
                    // Pinned memory is scarce on this machine: ordinary copies still work.
                    self.unstaged.set(true);
                    return None;
                }
            }
        }
        let (slots, ring) = staged.as_mut().expect("made above");
        Some(copy(slots, ring))
    }

    /// After the queue finished (`ok`: without error): see [`Ring::finished`].
    pub(crate) fn finished(&self, ok: bool) {
        if let Some((slots, ring)) = self.staged.borrow_mut().as_mut() {
            ring.finished(slots, ok);
        }
    }

    /// What the staging did since the queue was taken, or since the last call.
    pub(crate) fn take_stats(&self) -> StagingStats {
        self.staged.borrow_mut().as_mut().map(|(_, ring)| ring.take_stats()).unwrap_or_default()
    }

    /// The slots, for the pool, once the queue has finished: a read not delivered by a finish
    /// has no destination to go to any more, and is dropped.
    pub(crate) fn into_pooled(self) -> Option<PooledSlots<S>> {
        let mut staged = self.staged.into_inner();
        if let Some((slots, ring)) = staged.as_mut() {
            ring.finished(slots, false);
        }
        staged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A device whose copies run only when waited for (in queue order, as an in-order queue
    /// runs them), into buffers of host memory: reusing a slot before its copy ran, or
    /// delivering a read before it landed, gives wrong bytes.
    struct Lazy {
        /// The slots' and the mailbox's memory, reached only through `base` (as pinned memory
        /// is, by pointer).
        _slots: Vec<u8>,
        base: *mut u8,
        piece: usize,
        /// `(place, to the device, buffer, offset, length)`.
        queued: Vec<(Place, bool, *const Buffer, usize, usize)>,
    }

    fn memory(buffer: &Buffer) -> std::sync::MutexGuard<'_, Vec<u8>> {
        buffer.raw.downcast_ref::<Mutex<Vec<u8>>>().unwrap().lock().unwrap()
    }

    fn buffer(bytes: usize) -> Buffer {
        Buffer { raw: Box::new(Mutex::new(vec![0u8; bytes])), bytes }
    }

    impl Lazy {
        fn new(piece: usize) -> Lazy {
            let mut slots = vec![0xEE; 2 * piece + MAILBOX];
            let base = slots.as_mut_ptr();
            Lazy { _slots: slots, base, piece, queued: Vec::new() }
        }

        /// Runs the queued copies up to and including the last one of `slot` (all: `None`).
        fn run(&mut self, slot: Option<usize>) {
            let upto = match slot {
                Some(s) => match self.queued.iter().rposition(|q| q.0 == Place::Slot(s)) {
                    Some(last) => last + 1,
                    None => return,
                },
                None => self.queued.len(),
            };
            let (base, piece) = (self.base, self.piece);
            for (place, to_device, buffer, offset, len) in self.queued.drain(..upto) {
                // SAFETY: the buffers outlive the copies queued on them.
                let mut device = memory(unsafe { &*buffer });
                // SAFETY: the bytes lie inside the place (`Slots::copy`'s promise), in the
                // memory laid out as `Place::offset` says.
                let pinned =
                    unsafe { std::slice::from_raw_parts_mut(base.add(place.offset(piece)), len) };
                if to_device {
                    device[offset..offset + len].copy_from_slice(pinned);
                } else {
                    pinned.copy_from_slice(&device[offset..offset + len]);
                }
            }
        }
    }

    impl Slots for Lazy {
        fn host(&self, place: Place) -> *mut u8 {
            // SAFETY: a slot or a byte of the mailbox, inside the memory laid out as
            // `Place::offset` says.
            unsafe { self.base.add(place.offset(self.piece)) }
        }
        fn wait(&mut self, slot: usize) -> Result<(), DeviceError> {
            self.run(Some(slot));
            Ok(())
        }
        fn copy(
            &mut self,
            place: Place,
            way: Way,
            b: &Buffer,
            o: usize,
            n: usize,
        ) -> Result<(), DeviceError> {
            if let Place::Mailbox(at) = place {
                assert!(way == Way::Out, "only reads go to the mailbox");
                assert!(at % MAILBOX_ALIGN == 0 && at + n <= MAILBOX, "{at} + {n}");
            }
            self.queued.push((place, way == Way::In, b, o, n));
            Ok(())
        }
    }

    fn write(ring: &mut Ring, slots: &mut Lazy, device: &Buffer, at: usize, data: &[u8]) -> Res {
        // SAFETY: `data` is borrowed for the call, which reads it.
        unsafe { ring.write(slots, device, at, data.as_ptr(), data.len()) }
    }

    fn read(ring: &mut Ring, slots: &mut Lazy, device: &Buffer, at: usize, out: &mut [u8]) -> Res {
        // SAFETY: the tests look at `out` only after `finished`, and touch it no other way before.
        unsafe { ring.read(slots, device, at, out.as_mut_ptr(), out.len()) }
    }

    type Res = Result<(), DeviceError>;

    fn bytes(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    #[test]
    fn writes_and_reads_of_every_length_land_whole() {
        for piece in [1, 7, 64] {
            for len in [0, 1, piece - 1, piece, piece + 1, 2 * piece, 5 * piece + 3] {
                let mut slots = Lazy::new(piece);
                let mut ring = Ring::new(piece);
                let device = buffer(len + 10);
                let data = bytes(len, 3);
                write(&mut ring, &mut slots, &device, 10, &data).unwrap();
                // A second write queued before the first ran: slots are reused.
                let more = bytes(10, 90);
                write(&mut ring, &mut slots, &device, 0, &more).unwrap();
                let mut back = vec![0u8; len + 10];
                read(&mut ring, &mut slots, &device, 0, &mut back).unwrap();
                slots.run(None);
                ring.finished(&mut slots, true);
                assert_eq!(&back[..10], &more[..], "piece {piece}, length {len}");
                assert_eq!(&back[10..], &data[..], "piece {piece}, length {len}");
                // A read of at most a piece lands in the mailbox, which takes no slot.
                let read_pieces = if len + 10 <= piece { 0 } else { (len + 10).div_ceil(piece) };
                let pieces = len.div_ceil(piece) + 10usize.div_ceil(piece) + read_pieces;
                let stats = ring.take_stats();
                assert_eq!(stats.bytes, 2 * (len as u64 + 10), "piece {piece}, length {len}");
                assert_eq!(stats.waits as usize, pieces.saturating_sub(2));
                assert_eq!(ring.take_stats(), StagingStats::default());
            }
        }
    }

    #[test]
    fn reads_are_delivered_in_order_with_writes_between() {
        let piece = 16;
        let mut slots = Lazy::new(piece);
        let mut ring = Ring::new(piece);
        let device = buffer(100);
        let data = bytes(100, 1);
        write(&mut ring, &mut slots, &device, 0, &data).unwrap();
        let mut first = vec![0u8; 30];
        read(&mut ring, &mut slots, &device, 5, &mut first).unwrap();
        // Overwrites what the read above takes, after it in the queue: the read sees the old.
        let zeros = vec![0u8; 100];
        write(&mut ring, &mut slots, &device, 0, &zeros).unwrap();
        let mut second = vec![1u8; 20];
        read(&mut ring, &mut slots, &device, 50, &mut second).unwrap();
        slots.run(None);
        ring.finished(&mut slots, true);
        assert_eq!(first, &data[5..35]);
        assert_eq!(second, vec![0u8; 20]);
    }

    #[test]
    fn a_failed_queue_delivers_nothing() {
        let piece = 8;
        let mut slots = Lazy::new(piece);
        let mut ring = Ring::new(piece);
        let device = buffer(8);
        let mut out = [7u8; 8];
        read(&mut ring, &mut slots, &device, 0, &mut out).unwrap();
        slots.run(None);
        ring.finished(&mut slots, false);
        assert_eq!(out, [7u8; 8]);
        // The ring is ready for the next run.
        let data = bytes(8, 5);
        write(&mut ring, &mut slots, &device, 0, &data).unwrap();
        read(&mut ring, &mut slots, &device, 0, &mut out).unwrap();
        slots.run(None);
        ring.finished(&mut slots, true);
        assert_eq!(out[..], data[..]);
    }

    #[test]
    fn a_copy_outside_the_buffer_is_an_error_before_anything_is_queued() {
        let mut slots = Lazy::new(4);
        let mut ring = Ring::new(4);
        let device = buffer(8);
        let data = [0u8; 9];
        assert!(write(&mut ring, &mut slots, &device, 0, &data).is_err());
        let mut out = [0u8; 4];
        assert!(read(&mut ring, &mut slots, &device, 6, &mut out).is_err());
        assert!(slots.queued.is_empty());
    }

    #[test]
    fn short_writes_go_straight_where_staging_is_by_default_and_every_read_is_staged() {
        let staging = Staging { piece: PIECE, direct_below: DIRECT_BELOW };
        assert!(!staging.stages(Way::In, 0));
        assert!(!staging.stages(Way::In, DIRECT_BELOW - 1));
        assert!(staging.stages(Way::In, DIRECT_BELOW));
        assert!(staging.stages(Way::In, 10 * PIECE));
        assert!(!staging.stages(Way::Out, 0));
        for len in [1, 8, 32, DIRECT_BELOW - 1, DIRECT_BELOW, 10 * PIECE] {
            assert!(staging.stages(Way::Out, len), "{len}");
        }
    }

    #[test]
    fn short_reads_land_in_the_mailbox_without_a_wait_and_only_when_the_queue_finished() {
        let piece = 4096;
        let mut slots = Lazy::new(piece);
        let mut ring = Ring::new(piece);
        let device = buffer(1000);
        let data = bytes(1000, 9);
        write(&mut ring, &mut slots, &device, 0, &data).unwrap();
        // A sizing wait's reads: a total, the fault record, a few values; more than two of them,
        // so that through the slots the third would wait for the first.
        let mut outs: Vec<Vec<u8>> = [8, 32, 3, 100, 8].iter().map(|&n| vec![0u8; n]).collect();
        let ats = [992, 0, 17, 500, 8];
        for (out, &at) in outs.iter_mut().zip(&ats) {
            read(&mut ring, &mut slots, &device, at, out).unwrap();
        }
        // Overwrites what the reads above take, after them in the queue.
        write(&mut ring, &mut slots, &device, 0, &[0u8; 1000]).unwrap();
        assert_eq!(ring.stats.waits, 0, "no read waited for a slot");
        assert!(outs.iter().all(|o| o.iter().all(|&b| b == 0)), "nothing delivered yet");
        slots.run(None);
        ring.finished(&mut slots, true);
        for (out, &at) in outs.iter().zip(&ats) {
            assert_eq!(out[..], data[at..at + out.len()], "the read at {at}");
        }
        let staged: usize = 1000 + outs.iter().map(Vec::len).sum::<usize>() + 1000;
        assert_eq!(ring.take_stats(), StagingStats { bytes: staged as u64, waits: 0 });

        // The mailbox is whole again after the finish; a failed queue delivers nothing from it.
        let mut out = [7u8; 8];
        read(&mut ring, &mut slots, &device, 0, &mut out).unwrap();
        slots.run(None);
        ring.finished(&mut slots, false);
        assert_eq!(out, [7u8; 8]);
    }

    #[test]
    fn reads_past_the_mailbox_go_through_the_slots() {
        let piece = 4096;
        let mut slots = Lazy::new(piece);
        let mut ring = Ring::new(piece);
        let device = buffer(2 * piece);
        let data = bytes(2 * piece, 4);
        write(&mut ring, &mut slots, &device, 0, &data).unwrap();
        // A piece each: the mailbox holds MAILBOX / piece of them, the rest take the slots.
        let count = MAILBOX / piece + 3;
        let mut outs = vec![vec![0u8; piece]; count];
        for (k, out) in outs.iter_mut().enumerate() {
            read(&mut ring, &mut slots, &device, k % 2 * piece, out).unwrap();
        }
        // Longer than a piece: through the slots, in pieces.
        let mut long = vec![0u8; 2 * piece];
        read(&mut ring, &mut slots, &device, 0, &mut long).unwrap();
        slots.run(None);
        ring.finished(&mut slots, true);
        for (k, out) in outs.iter().enumerate() {
            assert_eq!(out[..], data[k % 2 * piece..][..piece], "read {k}");
        }
        assert_eq!(long, data);
        // The write's two pieces, the three reads past the mailbox, the long read's two pieces:
        // each use of a slot after the first two waits for its last copy.
        assert_eq!(ring.take_stats().waits, 2 + 3 + 2 - 2);
    }
}
