//! What receives a run's results, chunk after chunk: the values of a `par!` (copied into the
//! output `Vec`), of a `par_device!` (kept on the device), or a reduction's partial results
//! (combined in order on the host).

use super::executor;
use super::failure::DeviceFailure;
use super::output_codec::OutputCodec;
use super::{device, plan, types};
use crate::pipeline::Reducer;

/// The values of a `par!`, chunk after chunk.
pub(super) struct CollectSink<T> {
    pub(super) out: Vec<T>,
    pub(super) codec: OutputCodec<T>,
    /// The first of the rows [`executor::TopSink::begin_rows`] last added.
    pub(super) rows_base: usize,
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
