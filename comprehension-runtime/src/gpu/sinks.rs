//! What receives a run's results, chunk after chunk: the values of a `par!` (copied into the
//! output `Vec`), of a `par_device!` (kept on the device), or a reduction's partial results
//! (combined in order on the host).

use super::executor;
use super::failure::DeviceFailure;
use super::output_codec::OutputCodec;
use super::{device, plan, types};
use crate::pipeline::Reducer;

/// The values of a `par!`, chunk after chunk. Each chunk's values are read without a wait
/// ([`executor::Fetch::read_later`]): a primitive result into the output's spare capacity, a
/// tuple result into columns of the chunk's own, assembled once they landed — so a run waits
/// for its values once, not once per chunk.
pub(super) struct CollectSink<T> {
    pub(super) out: Vec<T>,
    pub(super) codec: OutputCodec<T>,
    /// The first of the rows [`executor::TopSink::begin_rows`] last added.
    pub(super) rows_base: usize,
    /// Primitive values read into `out`'s spare capacity, after its `len`, not landed yet.
    in_flight: usize,
    /// Chunks of tuple values read into columns of their own (the bytes, their layout and
    /// count), not landed yet, in order.
    columns_in_flight: Vec<(Vec<u8>, types::ColumnLayout, usize)>,
}

impl<T: Send> CollectSink<T> {
    /// The sink of a `par!` whose values `codec` reads.
    pub(super) fn new(codec: OutputCodec<T>) -> Self {
        CollectSink {
            out: Vec::new(),
            codec,
            rows_base: 0,
            in_flight: 0,
            columns_in_flight: Vec::new(),
        }
    }

    /// Takes in the values whose reads landed: the primitive ones are initialised, the tuple
    /// ones assembled, in the order they were read.
    fn take_landed(&mut self) {
        // SAFETY: the reads of `in_flight` values into the spare capacity after `len` landed
        // (the caller's knowledge: a wait came since they were queued, without a fault); they
        // are values of a primitive number, every bit pattern of which is a valid value.
        unsafe { self.out.set_len(self.out.len() + self.in_flight) };
        self.in_flight = 0;
        for (bytes, tight, count) in std::mem::take(&mut self.columns_in_flight) {
            self.codec.extend_par(&mut self.out, &bytes, &tight, count);
        }
    }
}

impl<T: Send> executor::TopSink for CollectSink<T> {
    fn values(
        &mut self,
        layout: &types::ColumnLayout,
        count: usize,
        fetch: &mut executor::Fetch<'_, '_>,
    ) -> Result<(), DeviceFailure> {
        if fetch.landed() {
            self.take_landed();
        }
        match self.codec.raw_size() {
            Some(size) if layout.leaves.len() == 1 && layout.leaves[0].size() == size => {
                // A primitive result: the device's column is a `[T]` as it is, copied straight
                // into the output's memory.
                if self.out.capacity() - self.out.len() - self.in_flight < count {
                    // Growing the output moves it: what is being read into it lands first.
                    fetch.wait()?;
                    self.take_landed();
                    self.out.reserve(count);
                }
                let spare = self.out.spare_capacity_mut()[self.in_flight..].as_mut_ptr();
                // SAFETY: there is room for `count` more values after the `in_flight` ones,
                // which nothing touches until the read landed: the output grows only after a
                // wait (above), and its values after `len` are initialised only then
                // (`take_landed`); the session finishes its queue before the output is freed.
                unsafe {
                    fetch.read_later(&[(layout.offsets[0], spare.cast::<u8>(), count * size)])?;
                }
                self.in_flight += count;
            }
            _ => {
                // The first `count` values of each component (the column may have room for
                // more), into a column of the chunk's own that holds just them.
                let mut bytes = Vec::new();
                let (tight, parts) = layout
                    .prefix_reads(count, &mut bytes)
                    .ok_or_else(|| DeviceFailure::fatal("a result too large for memory"))?;
                // SAFETY: every destination is component k's array of the tight layout, inside
                // `bytes`, whose heap memory stays where it is in `columns_in_flight` (moving a
                // vector does not move it) and is not read until the reads landed.
                unsafe { fetch.read_later(&parts)? };
                let converted: usize = tight.leaves.iter().map(|l| l.size() * count).sum();
                fetch.converted(converted);
                self.columns_in_flight.push((bytes, tight, count));
            }
        }
        Ok(())
    }

    fn expect(&mut self, count: usize) {
        if self.in_flight == 0 && self.columns_in_flight.is_empty() {
            // (`reserve` past the memory's bounds would panic: the reads grow it then.)
            let _ = self.out.try_reserve_exact(count);
        }
    }

    fn landed(&mut self) {
        self.take_landed();
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
pub(super) struct ResidentSink {
    pub(super) chunks: Vec<(device::Buffer, types::ColumnLayout, usize)>,
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

/// A reduction's partial results, combined in order.
// Only a build with a device backend runs a reduction's device half (see
// `dispatch::place::reduce`).
#[cfg_attr(not(any(feature = "opencl", feature = "cuda-api")), allow(dead_code))]
pub(super) struct ReduceSink<'r, T, R: Reducer<T>> {
    pub(super) reducer: &'r R,
    pub(super) codec: OutputCodec<T>,
    pub(super) acc: Option<R::Acc>,
    pub(super) decided: bool,
    pub(super) refused: bool,
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
