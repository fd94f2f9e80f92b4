/* The sizes of generators on the device, as the CPU's `Source`s compute them:
 * `a..b` has `b - a` elements when `b > a`, else none; `a..=b` one more (a range longer than a
 * u64 counts faults as the CPU panics); `R.step_by(k)` has `(n - 1) / k + 1` of R's `n` (a step
 * of 0 faults as `step_by(0)` panics). Lengths are computed on the 64-bit two's complement of
 * the bounds, so `i64::MIN..i64::MAX` is exact. */
#ifndef PC_SOURCES_H
#define PC_SOURCES_H

#define PC_DEF_RANGE(tag, wide)                                                                   \
  PC_FN pc_u64 pc_range_len_##tag(PC_T(tag) start, PC_T(tag) end) {                               \
    return end > start ? (pc_u64)(wide)end - (pc_u64)(wide)start : 0;                               \
  }                                                                                                \
  PC_FN pc_u64 pc_range_len_incl_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) start,           \
                                       PC_T(tag) end) {                                             \
    if (end < start) return 0;                                                                      \
    pc_u64 span = (pc_u64)(wide)end - (pc_u64)(wide)start;                                          \
    if (span == ~(pc_u64)0) {                                                                       \
      pc_record_fault(fault, PC_FAULT_RANGE_TOO_LONG, where, 0, 0);                                        \
      return 0;                                                                                     \
    }                                                                                               \
    return span + 1;                                                                                \
  }

PC_DEF_RANGE(i8, pc_i64)
PC_DEF_RANGE(i16, pc_i64)
PC_DEF_RANGE(i32, pc_i64)
PC_DEF_RANGE(i64, pc_i64)
PC_DEF_RANGE(u8, pc_u64)
PC_DEF_RANGE(u16, pc_u64)
PC_DEF_RANGE(u32, pc_u64)
PC_DEF_RANGE(u64, pc_u64)

PC_FN pc_u64 pc_step_len(pc_fault_t fault, pc_u32 where, pc_u64 n, pc_u64 step) {
  if (step == 0) {
    pc_record_fault(fault, PC_FAULT_STEP_ZERO, where, 0, 0);
    return 0;
  }
  return n == 0 ? 0 : (n - 1) / step + 1;
}

#endif /* PC_SOURCES_H */
