/* The sizes and elements of generators on the device, as the CPU's `Source`s compute them:
 * `a..b` has `b - a` elements when `b > a`, else none; `a..=b` one more (a range longer than a
 * u64 counts faults as the CPU panics); `R.step_by(k)` has `(n - 1) / k + 1` of R's `n` (a step
 * of 0 faults as `step_by(0)` panics). Lengths are computed on the 64-bit two's complement of
 * the bounds, so `i64::MIN..i64::MAX` is exact. Element `i` of a range from `start`
 * (`pc_range_at_<tag>`, `i` below its length) is `start + i`, wrapping as the CPU's does. */
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
    if (PC_UNLIKELY(span == ~(pc_u64)0)) {                                                          \
      pc_record_fault(fault, PC_FAULT_RANGE_TOO_LONG, where, 0, 0);                                        \
      return 0;                                                                                     \
    }                                                                                               \
    return span + 1;                                                                                \
  }                                                                                                \
  PC_FN PC_T(tag) pc_range_at_##tag(PC_T(tag) start, pc_u64 i) {                                   \
    return pc_add_##tag(start, pc_cast_u64_##tag(i));                                              \
  }

PC_DEF_RANGE(i8, pc_i64)
PC_DEF_RANGE(i16, pc_i64)
PC_DEF_RANGE(i32, pc_i64)
PC_DEF_RANGE(i64, pc_i64)
PC_DEF_RANGE(u8, pc_u64)
PC_DEF_RANGE(u16, pc_u64)
PC_DEF_RANGE(u32, pc_u64)
PC_DEF_RANGE(u64, pc_u64)

/* Ranges of char skip the surrogate code points U+D800..=U+DFFF, which are not chars, as
 * `Range<char>`'s iterator does: a range from below the gap to above it is 0x800 shorter, and
 * its elements from the gap on are 0x800 further. Its bounds are chars, so no range of char is
 * too long to count. */
#define PC_SURROGATES_START 0xD800u
#define PC_SURROGATES 0x800u
PC_FN pc_u64 pc_range_len_char(pc_char start, pc_char end) {
  if (end <= start) return 0;
  pc_u32 gap = start < PC_SURROGATES_START && end > PC_SURROGATES_START ? PC_SURROGATES : 0u;
  return (pc_u64)(end - start - gap);
}
PC_FN pc_u64 pc_range_len_incl_char(pc_fault_t fault, pc_u32 where, pc_char start,
                                    pc_char end) {
  (void)fault; (void)where;
  return end < start ? 0 : pc_range_len_char(start, end) + 1;
}
PC_FN pc_char pc_range_at_char(pc_char start, pc_u64 i) {
  pc_u32 code = start + (pc_u32)i;
  return start < PC_SURROGATES_START && code >= PC_SURROGATES_START ? code + PC_SURROGATES : code;
}
/* The first generator's start as the host passes it (64 bits, zero-extended), as a char: for
 * the kernels' own use (Rust has no `u64 as char`). */
PC_DEF_CAST(u64, char)

PC_FN pc_u64 pc_step_len(pc_fault_t fault, pc_u32 where, pc_u64 n, pc_u64 step) {
  if (PC_UNLIKELY(step == 0)) {
    pc_record_fault(fault, PC_FAULT_STEP_ZERO, where, 0, 0);
    return 0;
  }
  return n == 0 ? 0 : (n - 1) / step + 1;
}

#endif /* PC_SOURCES_H */
