/* Rust's scalar semantics in the kernel dialect (included after prelude.h).
 *
 * For every type tag (i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 bool char; Rust's usize and isize
 * are u64 and i64 on the device) this defines `pc_<op>_<tag>`, and `pc_cast_<from>_<to>` for the
 * `as` conversions, so that generated code can call `PC_OP(add, T3)(a, b)` with `T3` #defined to
 * a tag. Each function takes and returns `PC_T(tag)` unless its comment says otherwise. The
 * semantics are those of a *release* build of Rust: `+ - *`, unary `-`, shifts, `abs` and `pow`
 * wrap; division and remainder by zero, `MIN / -1` and `clamp` with bad bounds are checked in
 * every Rust build, and here record a fault (see prelude.h) with `where` and return a dummy
 * value (the run's result is discarded).
 *
 * Nothing here has undefined behaviour in C: integer arithmetic that may wrap is done in an
 * unsigned type of at least 32 bits (narrower types promote to signed `int`, where u16 * u16
 * can overflow), shift amounts are masked below the width, negative values are never shifted
 * left and are right-shifted only as their complement, and floats are compared against the
 * target's exact power-of-two bounds before a conversion to an integer. What remains is
 * implementation-defined: the conversion of an out-of-range value to a signed type, which is
 * two's complement truncation on every OpenCL and CUDA target (as Futhark's scalar.h assumes),
 * written `PC_NARROW_<tag>(w)` where wrapping arithmetic and integer casts narrow their result
 * (the prelude may define it for a tag whose compiler needs more than the cast: see PC_CUDA's
 * PC_NARROW_i16). All f64 definitions are inside `#ifdef PC_HAVE_F64`.
 */
#ifndef PC_SCALAR_H
#define PC_SCALAR_H

/* ---- narrowing ----------------------------------------------------------------------------- */

/* A wider integer's value as the integer type of `tag`, by two's complement truncation. */
#define PC_NARROW_i8(w) ((pc_i8)(w))
#ifndef PC_NARROW_i16
#define PC_NARROW_i16(w) ((pc_i16)(w))
#endif
#define PC_NARROW_i32(w) ((pc_i32)(w))
#define PC_NARROW_i64(w) ((pc_i64)(w))
#define PC_NARROW_u8(w) ((pc_u8)(w))
#define PC_NARROW_u16(w) ((pc_u16)(w))
#define PC_NARROW_u32(w) ((pc_u32)(w))
#define PC_NARROW_u64(w) ((pc_u64)(w))

/* ---- limits ------------------------------------------------------------------------------ */

/* MIN and MAX of the integer tags: PC_MIN(i32), PC_MAX(T3). */
#define PC_MIN_i8 ((pc_i8)(-127 - 1))
#define PC_MAX_i8 ((pc_i8)127)
#define PC_MIN_i16 ((pc_i16)(-32767 - 1))
#define PC_MAX_i16 ((pc_i16)32767)
#define PC_MIN_i32 ((pc_i32)(-2147483647 - 1))
#define PC_MAX_i32 ((pc_i32)2147483647)
#define PC_MAX_i64 ((pc_i64)PC_U64_C(0x7FFFFFFFFFFFFFFF))
#define PC_MIN_i64 ((pc_i64)(-PC_MAX_i64 - 1))
#define PC_MIN_u8 ((pc_u8)0)
#define PC_MAX_u8 ((pc_u8)0xFFu)
#define PC_MIN_u16 ((pc_u16)0)
#define PC_MAX_u16 ((pc_u16)0xFFFFu)
#define PC_MIN_u32 ((pc_u32)0)
#define PC_MAX_u32 ((pc_u32)0xFFFFFFFFu)
#define PC_MIN_u64 ((pc_u64)0)
#define PC_MAX_u64 (~(pc_u64)0)
#define PC_MIN(tag) PC_CAT(PC_MIN_, tag)
#define PC_MAX(tag) PC_CAT(PC_MAX_, tag)

/* ---- every tag: comparisons, min, max ------------------------------------------------------ */

/* PartialEq / PartialOrd of a primitive: C's operators are Rust's (IEEE for floats, where NaN
 * is unordered and unequal to everything; false < true for bool). Results are pc_bool. */
#define PC_DEF_CMP(tag)                                                                            \
  PC_FN pc_bool pc_eq_##tag(PC_T(tag) a, PC_T(tag) b) { return (pc_bool)(a == b); }                \
  PC_FN pc_bool pc_ne_##tag(PC_T(tag) a, PC_T(tag) b) { return (pc_bool)(a != b); }                \
  PC_FN pc_bool pc_lt_##tag(PC_T(tag) a, PC_T(tag) b) { return (pc_bool)(a < b); }                 \
  PC_FN pc_bool pc_le_##tag(PC_T(tag) a, PC_T(tag) b) { return (pc_bool)(a <= b); }                \
  PC_FN pc_bool pc_gt_##tag(PC_T(tag) a, PC_T(tag) b) { return (pc_bool)(a > b); }                 \
  PC_FN pc_bool pc_ge_##tag(PC_T(tag) a, PC_T(tag) b) { return (pc_bool)(a >= b); }

/* Ord::min / Ord::max (integers, bool): the smaller / larger value. */
#define PC_DEF_ORD_MINMAX(tag)                                                                     \
  PC_FN PC_T(tag) pc_min_##tag(PC_T(tag) a, PC_T(tag) b) { return b < a ? b : a; }                 \
  PC_FN PC_T(tag) pc_max_##tag(PC_T(tag) a, PC_T(tag) b) { return b < a ? a : b; }

/* ---- bool ---------------------------------------------------------------------------------- */

/* `!`, and the non-short-circuit `&`, `|`, `^` on bool (0 or 1 in a byte). */
PC_FN pc_bool pc_not_bool(pc_bool a) { return (pc_bool)(a == 0); }
PC_FN pc_bool pc_and_bool(pc_bool a, pc_bool b) { return (pc_bool)(a & b); }
PC_FN pc_bool pc_or_bool(pc_bool a, pc_bool b) { return (pc_bool)(a | b); }
PC_FN pc_bool pc_xor_bool(pc_bool a, pc_bool b) { return (pc_bool)(a ^ b); }
PC_DEF_CMP(bool)
PC_DEF_ORD_MINMAX(bool)

/* ---- integers: the families ------------------------------------------------------------------
 * Parameters: `tag` the integer tag, `utag` the unsigned tag of the same width, `W` the unsigned
 * type of at least 32 bits that the tag computes in (pc_u32 or pc_u64), `bits` the width. */

/* Wrapping `+`, `-`, `*` and unary `-` (release Rust; `-` also for unsigned tags, as
 * wrapping_neg), bitwise `!`, `&`, `|`, `^`: computed in W, where C wraps, and converted back. */
#define PC_DEF_INT_WRAPPING(tag, W)                                                                \
  PC_FN PC_T(tag) pc_add_##tag(PC_T(tag) a, PC_T(tag) b) { return PC_NARROW_##tag((W)a + (W)b); }  \
  PC_FN PC_T(tag) pc_sub_##tag(PC_T(tag) a, PC_T(tag) b) { return PC_NARROW_##tag((W)a - (W)b); }  \
  PC_FN PC_T(tag) pc_mul_##tag(PC_T(tag) a, PC_T(tag) b) { return PC_NARROW_##tag((W)a * (W)b); }  \
  PC_FN PC_T(tag) pc_neg_##tag(PC_T(tag) a) { return PC_NARROW_##tag((W)0 - (W)a); }               \
  PC_FN PC_T(tag) pc_not_##tag(PC_T(tag) a) { return (PC_T(tag))(~(W)a); }                         \
  PC_FN PC_T(tag) pc_and_##tag(PC_T(tag) a, PC_T(tag) b) { return (PC_T(tag))((W)a & (W)b); }      \
  PC_FN PC_T(tag) pc_or_##tag(PC_T(tag) a, PC_T(tag) b) { return (PC_T(tag))((W)a | (W)b); }       \
  PC_FN PC_T(tag) pc_xor_##tag(PC_T(tag) a, PC_T(tag) b) { return (PC_T(tag))((W)a ^ (W)b); }

/* `<<` (and `>>` for unsigned tags) in release Rust: the amount is masked to bits - 1
 * (wrapping_shl / wrapping_shr); a narrow type keeps its width (200u8 << 1 == 144). */
#define PC_DEF_INT_SHL(tag, W, bits)                                                               \
  PC_FN PC_T(tag) pc_shl_##tag(PC_T(tag) a, pc_u32 s) {                                            \
    return PC_NARROW_##tag((W)a << (s & (bits - 1u)));                                             \
  }
#define PC_DEF_UINT_SHR(tag, bits)                                                                 \
  PC_FN PC_T(tag) pc_shr_##tag(PC_T(tag) a, pc_u32 s) {                                            \
    return (PC_T(tag))(a >> (s & (bits - 1u)));                                                    \
  }
/* `>>` on a signed tag: arithmetic, amount masked. A negative value is shifted as its
 * complement (non-negative), so no shift of a negative value is left to the implementation. */
#define PC_DEF_SINT_SHR(tag, bits)                                                                 \
  PC_FN PC_T(tag) pc_shr_##tag(PC_T(tag) a, pc_u32 s) {                                            \
    s &= bits - 1u;                                                                                \
    return (PC_T(tag))(a < 0 ? ~(~a >> s) : a >> s);                                               \
  }

/* Division and remainder checks. Rust checks these in every build, release included, and
 * panics; verified with rustc 1.95 -O:
 *   x / 0, x.div_euclid(0)       "attempt to divide by zero"                    DIV_ZERO
 *   x % 0, x.rem_euclid(0)       "attempt to calculate the remainder with a divisor of zero"
 *                                                                                REM_ZERO
 *   MIN / -1, MIN.div_euclid(-1) "attempt to divide with overflow"              DIV_OVERFLOW
 *   MIN % -1, MIN.rem_euclid(-1) "attempt to calculate the remainder with overflow"
 *                                                                                REM_OVERFLOW
 * (also for i8 and i16, where C's promotion to int would give a result: Rust still panics; and
 * `%` and rem_euclid panic although the mathematical remainder, 0, exists; wrapping_rem would
 * give 0). pc_div_ok_<tag> returns 1 when the operation is defined, otherwise records `zero`
 * or `overflow` (with arguments 0, 0) and returns 0; the callers then return 0. */
#define PC_DEF_SINT_DIV_OK(tag)                                                                    \
  PC_FN pc_bool pc_div_ok_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b,          \
                                pc_u32 zero, pc_u32 overflow) {                                    \
    if (PC_UNLIKELY(b == 0)) {                                                                     \
      pc_record_fault(fault, zero, where, 0, 0);                                                          \
      return 0;                                                                                    \
    }                                                                                              \
    if (PC_UNLIKELY(a == PC_MIN_##tag && b == -1)) {                                               \
      pc_record_fault(fault, overflow, where, 0, 0);                                                      \
      return 0;                                                                                    \
    }                                                                                              \
    return 1;                                                                                      \
  }
#define PC_DEF_UINT_DIV_OK(tag)                                                                    \
  PC_FN pc_bool pc_div_ok_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b,          \
                                pc_u32 zero, pc_u32 overflow) {                                    \
    (void)a;                                                                                       \
    (void)overflow;                                                                                \
    if (PC_UNLIKELY(b == 0)) {                                                                     \
      pc_record_fault(fault, zero, where, 0, 0);                                                          \
      return 0;                                                                                    \
    }                                                                                              \
    return 1;                                                                                      \
  }

/* `/` and `%`: C99 truncates towards zero as Rust does; only the checked cases differ. */
#define PC_DEF_INT_DIV(tag)                                                                        \
  PC_FN PC_T(tag) pc_div_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {         \
    if (!pc_div_ok_##tag(fault, where, a, b, PC_FAULT_DIV_ZERO, PC_FAULT_DIV_OVERFLOW)) return 0;  \
    return (PC_T(tag))(a / b);                                                                     \
  }                                                                                                \
  PC_FN PC_T(tag) pc_rem_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {         \
    if (!pc_div_ok_##tag(fault, where, a, b, PC_FAULT_REM_ZERO, PC_FAULT_REM_OVERFLOW)) return 0;  \
    return (PC_T(tag))(a % b);                                                                     \
  }                                                                                                \
  /* div_ceil, as core's: the quotient rounded towards +inf (faults as `/`). */                  \
  PC_FN PC_T(tag) pc_div_ceil_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {    \
    if (!pc_div_ok_##tag(fault, where, a, b, PC_FAULT_DIV_ZERO, PC_FAULT_DIV_OVERFLOW)) return 0;  \
    PC_T(tag) d = (PC_T(tag))(a / b);                                                              \
    PC_T(tag) r = (PC_T(tag))(a % b);                                                              \
    PC_T(tag) zero = 0;                                                                            \
    return ((r > zero && b > zero) || (r < zero && b < zero)) ? pc_add_##tag(d, 1) : d;            \
  }

/* div_euclid / rem_euclid on signed tags, as core's int_macros.rs:
 *   q = a / b; if a % b < 0 { if b > 0 { q - 1 } else { q + 1 } } else { q }
 *   r = a % b; if r < 0 { r.wrapping_add(b.wrapping_abs()) } else { r }
 * (the wrapping add gives the right answer for b == MIN). */
#define PC_DEF_SINT_EUCLID(tag)                                                                    \
  PC_FN PC_T(tag) pc_div_euclid_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {  \
    if (!pc_div_ok_##tag(fault, where, a, b, PC_FAULT_DIV_ZERO, PC_FAULT_DIV_OVERFLOW)) return 0;  \
    PC_T(tag) q = (PC_T(tag))(a / b);                                                              \
    if ((PC_T(tag))(a % b) < 0) {                                                                  \
      return b > 0 ? pc_sub_##tag(q, 1) : pc_add_##tag(q, 1);                                      \
    }                                                                                              \
    return q;                                                                                      \
  }                                                                                                \
  PC_FN PC_T(tag) pc_rem_euclid_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {  \
    if (!pc_div_ok_##tag(fault, where, a, b, PC_FAULT_REM_ZERO, PC_FAULT_REM_OVERFLOW)) return 0;  \
    PC_T(tag) r = (PC_T(tag))(a % b);                                                              \
    return r < 0 ? pc_add_##tag(r, pc_abs_##tag(b)) : r;                                           \
  }
/* On unsigned tags they are `/` and `%` (with the same faults). */
#define PC_DEF_UINT_EUCLID(tag)                                                                    \
  PC_FN PC_T(tag) pc_div_euclid_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {  \
    return pc_div_##tag(fault, where, a, b);                                                       \
  }                                                                                                \
  PC_FN PC_T(tag) pc_rem_euclid_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {  \
    return pc_rem_##tag(fault, where, a, b);                                                       \
  }

/* abs (wrapping in release: abs(MIN) == MIN), signum (-1, 0, 1), is_positive, is_negative
 * (-> pc_bool) on signed tags. */
#define PC_DEF_SINT_SIGN(tag)                                                                      \
  PC_FN PC_T(tag) pc_abs_##tag(PC_T(tag) a) { return a < 0 ? pc_neg_##tag(a) : a; }                \
  PC_FN PC_T(tag) pc_signum_##tag(PC_T(tag) a) { return (PC_T(tag))((a > 0) - (a < 0)); }          \
  PC_FN pc_bool pc_is_positive_##tag(PC_T(tag) a) { return (pc_bool)(a > 0); }                     \
  PC_FN pc_bool pc_is_negative_##tag(PC_T(tag) a) { return (pc_bool)(a < 0); }

/* is_power_of_two (-> pc_bool) on unsigned tags. */
#define PC_DEF_UINT_POW2(tag, W)                                                                   \
  PC_FN pc_bool pc_is_power_of_two_##tag(PC_T(tag) a) {                                            \
    return (pc_bool)(a != 0 && (((W)a & ((W)a - 1u)) == 0));                                       \
  }

/* pow(a, e: u32), wrapping as in release Rust: a^e mod 2^bits, which square-and-multiply in W
 * (whose width is a multiple of the tag's) computes exactly whatever the order of products. */
#define PC_DEF_INT_POW(tag, W)                                                                     \
  PC_FN PC_T(tag) pc_pow_##tag(PC_T(tag) a, pc_u32 e) {                                            \
    W base = (W)a;                                                                                 \
    W acc = 1u;                                                                                    \
    while (e != 0u) {                                                                              \
      if (e & 1u) acc *= base;                                                                     \
      e >>= 1;                                                                                     \
      base *= base;                                                                                \
    }                                                                                              \
    return (PC_T(tag))acc;                                                                         \
  }

/* abs_diff(a, b) -> the unsigned type of the same width (core's formula: the difference of the
 * larger and the smaller, computed modulo 2^bits). */
#define PC_DEF_INT_ABS_DIFF(tag, utag, W)                                                          \
  PC_FN PC_T(utag) pc_abs_diff_##tag(PC_T(tag) a, PC_T(tag) b) {                                   \
    return (PC_T(utag))(a < b ? (W)b - (W)a : (W)a - (W)b);                                        \
  }

/* count_ones, count_zeros, leading_zeros, trailing_zeros (-> pc_u32; leading/trailing_zeros(0)
 * is the width), rotate_left, rotate_right (amount taken modulo the width). The bits are those
 * of the unsigned type of the same width, zero-extended into W (of `wbits` bits); POP and CLZ
 * are the prelude's PC_POPCOUNT32/64 and PC_CLZ32/64 for W. */
#define PC_DEF_INT_BITS(tag, utag, W, wbits, bits, POP, CLZ)                                       \
  PC_FN pc_u32 pc_count_ones_##tag(PC_T(tag) a) { return POP((W)(PC_T(utag))a); }                  \
  PC_FN pc_u32 pc_count_zeros_##tag(PC_T(tag) a) { return bits - POP((W)(PC_T(utag))a); }          \
  PC_FN pc_u32 pc_leading_zeros_##tag(PC_T(tag) a) {                                               \
    return CLZ((W)(PC_T(utag))a) - (wbits - bits);                                                 \
  }                                                                                                \
  PC_FN pc_u32 pc_trailing_zeros_##tag(PC_T(tag) a) {                                              \
    W x = (W)(PC_T(utag))a;                                                                        \
    /* the bits below the lowest set one */                                                        \
    return x == 0u ? bits : POP(~x & (x - 1u));                                                    \
  }                                                                                                \
  PC_FN PC_T(tag) pc_rotate_left_##tag(PC_T(tag) a, pc_u32 n) {                                    \
    W x = (W)(PC_T(utag))a;                                                                        \
    n &= bits - 1u;                                                                                \
    return (PC_T(tag))(PC_T(utag))((x << n) | (x >> ((bits - n) & (bits - 1u))));                  \
  }                                                                                                \
  PC_FN PC_T(tag) pc_rotate_right_##tag(PC_T(tag) a, pc_u32 n) {                                   \
    W x = (W)(PC_T(utag))a;                                                                        \
    n &= bits - 1u;                                                                                \
    return (PC_T(tag))(PC_T(utag))((x >> n) | (x << ((bits - n) & (bits - 1u))));                  \
  }

/* saturating_add / saturating_sub on signed tags: the wrapped result overflowed when its sign
 * differs from the sign the exact result must have; then the bound on the side of `a`. */
#define PC_DEF_SINT_SAT_ADD_SUB(tag)                                                               \
  PC_FN PC_T(tag) pc_saturating_add_##tag(PC_T(tag) a, PC_T(tag) b) {                              \
    PC_T(tag) r = pc_add_##tag(a, b);                                                              \
    if ((a < 0) == (b < 0) && (r < 0) != (a < 0)) return a < 0 ? PC_MIN_##tag : PC_MAX_##tag;      \
    return r;                                                                                      \
  }                                                                                                \
  PC_FN PC_T(tag) pc_saturating_sub_##tag(PC_T(tag) a, PC_T(tag) b) {                              \
    PC_T(tag) r = pc_sub_##tag(a, b);                                                              \
    if ((a < 0) != (b < 0) && (r < 0) != (a < 0)) return a < 0 ? PC_MIN_##tag : PC_MAX_##tag;      \
    return r;                                                                                      \
  }
/* saturating_add / saturating_sub on unsigned tags. */
#define PC_DEF_UINT_SAT_ADD_SUB(tag)                                                               \
  PC_FN PC_T(tag) pc_saturating_add_##tag(PC_T(tag) a, PC_T(tag) b) {                              \
    PC_T(tag) r = pc_add_##tag(a, b);                                                              \
    return r < a ? PC_MAX_##tag : r;                                                               \
  }                                                                                                \
  PC_FN PC_T(tag) pc_saturating_sub_##tag(PC_T(tag) a, PC_T(tag) b) {                              \
    return a < b ? (PC_T(tag))0 : pc_sub_##tag(a, b);                                              \
  }
/* saturating_mul on signed tags of up to 32 bits: the exact product in pc_i64, clamped to the
 * tag's range. */
#define PC_DEF_INT_SAT_MUL_WIDE(tag, Wide)                                                         \
  PC_FN PC_T(tag) pc_saturating_mul_##tag(PC_T(tag) a, PC_T(tag) b) {                              \
    Wide p = (Wide)a * (Wide)b;                                                                    \
    if (p < (Wide)PC_MIN_##tag) return PC_MIN_##tag;                                               \
    if (p > (Wide)PC_MAX_##tag) return PC_MAX_##tag;                                               \
    return (PC_T(tag))p;                                                                           \
  }

/* saturating_mul on unsigned tags of up to 32 bits: the exact product in pc_u64, clamped to
 * MAX (no lower bound to check: comparing with MIN == 0 draws NVRTC's warning #186). */
#define PC_DEF_UINT_SAT_MUL_WIDE(tag)                                                              \
  PC_FN PC_T(tag) pc_saturating_mul_##tag(PC_T(tag) a, PC_T(tag) b) {                              \
    pc_u64 p = (pc_u64)a * (pc_u64)b;                                                              \
    return p > (pc_u64)PC_MAX_##tag ? PC_MAX_##tag : (PC_T(tag))p;                                 \
  }

/* clamp(x, lo, hi) (Ord::clamp): Rust panics with "min > max. min = {lo}, max = {hi}" (rustc
 * 1.95; the integer impls override Ord's "assertion failed: min <= max") when lo > hi: records
 * PC_FAULT_CLAMP with the bounds as a0, a1 (the value converted to u64: sign-extended for
 * signed tags) and returns x. */
#define PC_DEF_INT_CLAMP(tag)                                                                      \
  PC_FN PC_T(tag) pc_clamp_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) x, PC_T(tag) lo,        \
                                 PC_T(tag) hi) {                                                   \
    if (PC_UNLIKELY(lo > hi)) {                                                                    \
      pc_record_fault(fault, PC_FAULT_CLAMP, where, (pc_u64)lo, (pc_u64)hi);                              \
      return x;                                                                                    \
    }                                                                                              \
    return x < lo ? lo : (x > hi ? hi : x);                                                        \
  }

/* Everything of a signed tag, and of an unsigned one (saturating_mul follows below). */
#define PC_DEF_SINT(tag, utag, W, wbits, bits, POP, CLZ)                                           \
  PC_DEF_CMP(tag)                                                                                  \
  PC_DEF_ORD_MINMAX(tag)                                                                           \
  PC_DEF_INT_WRAPPING(tag, W)                                                                      \
  PC_DEF_INT_SHL(tag, W, bits)                                                                     \
  PC_DEF_SINT_SHR(tag, bits)                                                                       \
  PC_DEF_SINT_DIV_OK(tag)                                                                          \
  PC_DEF_INT_DIV(tag)                                                                              \
  PC_DEF_SINT_SIGN(tag)                                                                            \
  PC_DEF_SINT_EUCLID(tag)                                                                          \
  PC_DEF_INT_POW(tag, W)                                                                           \
  PC_DEF_INT_ABS_DIFF(tag, utag, W)                                                                \
  PC_DEF_INT_BITS(tag, utag, W, wbits, bits, POP, CLZ)                                             \
  PC_DEF_SINT_SAT_ADD_SUB(tag)                                                                     \
  PC_DEF_INT_CLAMP(tag)
#define PC_DEF_UINT(tag, W, wbits, bits, POP, CLZ)                                                 \
  PC_DEF_CMP(tag)                                                                                  \
  PC_DEF_ORD_MINMAX(tag)                                                                           \
  PC_DEF_INT_WRAPPING(tag, W)                                                                      \
  PC_DEF_INT_SHL(tag, W, bits)                                                                     \
  PC_DEF_UINT_SHR(tag, bits)                                                                       \
  PC_DEF_UINT_DIV_OK(tag)                                                                          \
  PC_DEF_INT_DIV(tag)                                                                              \
  PC_DEF_UINT_EUCLID(tag)                                                                          \
  PC_DEF_UINT_POW2(tag, W)                                                                         \
  PC_DEF_INT_POW(tag, W)                                                                           \
  PC_DEF_INT_ABS_DIFF(tag, tag, W)                                                                 \
  PC_DEF_INT_BITS(tag, tag, W, wbits, bits, POP, CLZ)                                              \
  PC_DEF_UINT_SAT_ADD_SUB(tag)                                                                     \
  PC_DEF_INT_CLAMP(tag)

/* ---- integers: the tags -------------------------------------------------------------------- */

PC_DEF_SINT(i8, u8, pc_u32, 32u, 8u, PC_POPCOUNT32, PC_CLZ32)
PC_DEF_SINT(i16, u16, pc_u32, 32u, 16u, PC_POPCOUNT32, PC_CLZ32)
PC_DEF_SINT(i32, u32, pc_u32, 32u, 32u, PC_POPCOUNT32, PC_CLZ32)
PC_DEF_SINT(i64, u64, pc_u64, 64u, 64u, PC_POPCOUNT64, PC_CLZ64)
PC_DEF_UINT(u8, pc_u32, 32u, 8u, PC_POPCOUNT32, PC_CLZ32)
PC_DEF_UINT(u16, pc_u32, 32u, 16u, PC_POPCOUNT32, PC_CLZ32)
PC_DEF_UINT(u32, pc_u32, 32u, 32u, PC_POPCOUNT32, PC_CLZ32)
PC_DEF_UINT(u64, pc_u64, 64u, 64u, PC_POPCOUNT64, PC_CLZ64)

PC_DEF_INT_SAT_MUL_WIDE(i8, pc_i64)
PC_DEF_INT_SAT_MUL_WIDE(i16, pc_i64)
PC_DEF_INT_SAT_MUL_WIDE(i32, pc_i64)
PC_DEF_UINT_SAT_MUL_WIDE(u8)
PC_DEF_UINT_SAT_MUL_WIDE(u16)
PC_DEF_UINT_SAT_MUL_WIDE(u32)

/* saturating_mul on 64 bits: the wrapped product is exact iff dividing it by one factor gives
 * the other (MIN * -1, whose check would itself divide MIN by -1, is tested first); on
 * overflow, MAX when the exact product is positive, else MIN (core's formula). */
PC_FN pc_i64 pc_saturating_mul_i64(pc_i64 a, pc_i64 b) {
  if (a == 0 || b == 0) return 0;
  pc_i64 r = pc_mul_i64(a, b);
  if ((a == -1 && b == PC_MIN_i64) || (b == -1 && a == PC_MIN_i64) || r / b != a) {
    return (a < 0) == (b < 0) ? PC_MAX_i64 : PC_MIN_i64;
  }
  return r;
}
PC_FN pc_u64 pc_saturating_mul_u64(pc_u64 a, pc_u64 b) {
  if (a == 0u) return 0u;
  pc_u64 r = a * b;
  return r / a != b ? PC_MAX_u64 : r;
}

/* ---- ASCII: the methods u8 and char share ---------------------------------------------------
 * is_ascii, is_ascii_alphabetic, is_ascii_uppercase, is_ascii_lowercase, is_ascii_alphanumeric,
 * is_ascii_digit, is_ascii_hexdigit, is_ascii_punctuation, is_ascii_graphic,
 * is_ascii_whitespace (space, \t, \n, \x0C, \r: not \x0B), is_ascii_control (-> pc_bool),
 * to_ascii_uppercase, to_ascii_lowercase (other values unchanged), eq_ignore_ascii_case: core's
 * definitions, on the value (a byte, or a char's code point: every non-ASCII char is none of
 * these classes and maps to itself). */
#define PC_DEF_ASCII(tag)                                                                          \
  PC_FN pc_bool pc_is_ascii_##tag(PC_T(tag) a) { return (pc_bool)(a < 0x80u); }                    \
  PC_FN pc_bool pc_is_ascii_uppercase_##tag(PC_T(tag) a) {                                         \
    return (pc_bool)(a >= 0x41u && a <= 0x5Au);                                                    \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_lowercase_##tag(PC_T(tag) a) {                                         \
    return (pc_bool)(a >= 0x61u && a <= 0x7Au);                                                    \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_alphabetic_##tag(PC_T(tag) a) {                                        \
    return (pc_bool)(pc_is_ascii_uppercase_##tag(a) || pc_is_ascii_lowercase_##tag(a));            \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_digit_##tag(PC_T(tag) a) {                                             \
    return (pc_bool)(a >= 0x30u && a <= 0x39u);                                                    \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_alphanumeric_##tag(PC_T(tag) a) {                                      \
    return (pc_bool)(pc_is_ascii_alphabetic_##tag(a) || pc_is_ascii_digit_##tag(a));               \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_hexdigit_##tag(PC_T(tag) a) {                                          \
    return (pc_bool)(pc_is_ascii_digit_##tag(a) || (a >= 0x41u && a <= 0x46u) ||                   \
                     (a >= 0x61u && a <= 0x66u));                                                  \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_punctuation_##tag(PC_T(tag) a) {                                       \
    return (pc_bool)((a >= 0x21u && a <= 0x2Fu) || (a >= 0x3Au && a <= 0x40u) ||                   \
                     (a >= 0x5Bu && a <= 0x60u) || (a >= 0x7Bu && a <= 0x7Eu));                    \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_graphic_##tag(PC_T(tag) a) {                                           \
    return (pc_bool)(a >= 0x21u && a <= 0x7Eu);                                                    \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_whitespace_##tag(PC_T(tag) a) {                                        \
    return (pc_bool)(a == 0x20u || a == 0x09u || a == 0x0Au || a == 0x0Cu || a == 0x0Du);          \
  }                                                                                                \
  PC_FN pc_bool pc_is_ascii_control_##tag(PC_T(tag) a) {                                           \
    return (pc_bool)(a <= 0x1Fu || a == 0x7Fu);                                                    \
  }                                                                                                \
  PC_FN PC_T(tag) pc_to_ascii_uppercase_##tag(PC_T(tag) a) {                                       \
    return pc_is_ascii_lowercase_##tag(a) ? (PC_T(tag))(a - 0x20u) : a;                            \
  }                                                                                                \
  PC_FN PC_T(tag) pc_to_ascii_lowercase_##tag(PC_T(tag) a) {                                       \
    return pc_is_ascii_uppercase_##tag(a) ? (PC_T(tag))(a + 0x20u) : a;                            \
  }                                                                                                \
  PC_FN pc_bool pc_eq_ignore_ascii_case_##tag(PC_T(tag) a, PC_T(tag) b) {                          \
    return (pc_bool)(pc_to_ascii_lowercase_##tag(a) == pc_to_ascii_lowercase_##tag(b));            \
  }

PC_DEF_ASCII(u8)

/* ---- char ---------------------------------------------------------------------------------- */

/* A char is its code point in a pc_char (never a surrogate, never above 0x10FFFF: the device
 * makes chars only from chars, from u8s and by the ranges of sources.h). Rust gives it
 * comparisons (by code point), Ord's min, max and clamp, and the ASCII methods; no arithmetic. */
PC_DEF_CMP(char)
PC_DEF_ORD_MINMAX(char)
PC_DEF_INT_CLAMP(char)
PC_DEF_ASCII(char)

/* ---- floats: the families ---------------------------------------------------------------------
 * Parameters: `tag` f32 or f64, `M` the prelude's PC_MATH32 or PC_MATH64 (the dialect's name
 * of a math function for the tag), `BITS` PC_F32_BITS or PC_F64_BITS. */

/* The operations whose results are exactly specified (bit for bit): IEEE `+ - * /`, `%`
 * (fmod, as LLVM's frem), unary `-`, abs, signum (NaN for NaN, else 1.0 with the sign of x:
 * signum(-0.0) == -1.0), sqrt, copysign, recip (1 / x), mul_add (one rounding: fma), floor,
 * ceil, round (half away from zero), round_ties_even, trunc, fract (x - trunc(x)), min / max
 * (fmin / fmax: a NaN argument is ignored; for +0.0 and -0.0 Rust may return either). */
#define PC_DEF_FLOAT_EXACT(tag, M)                                                                 \
  PC_FN PC_T(tag) pc_add_##tag(PC_T(tag) a, PC_T(tag) b) { return a + b; }                         \
  PC_FN PC_T(tag) pc_sub_##tag(PC_T(tag) a, PC_T(tag) b) { return a - b; }                         \
  PC_FN PC_T(tag) pc_mul_##tag(PC_T(tag) a, PC_T(tag) b) { return a * b; }                         \
  /* Division and remainder take the fault word like the integers' (generated code calls every  \
   * type's alike), but never fault: a float divided by zero is an infinity or NaN in Rust. */    \
  PC_FN PC_T(tag) pc_div_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {         \
    (void)fault; (void)where;                                                                      \
    return a / b;                                                                                  \
  }                                                                                                \
  PC_FN PC_T(tag) pc_rem_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {         \
    (void)fault; (void)where;                                                                      \
    return M(fmod)(a, b);                                                                          \
  }                                                                                                \
  PC_FN PC_T(tag) pc_neg_##tag(PC_T(tag) a) { return -a; }                                         \
  PC_FN PC_T(tag) pc_abs_##tag(PC_T(tag) a) { return M(fabs)(a); }                                 \
  PC_FN PC_T(tag) pc_signum_##tag(PC_T(tag) a) {                                                   \
    return PC_ISNAN(a) ? a : M(copysign)(PC_FLIT(tag, 1.0), a);                                    \
  }                                                                                                \
  PC_FN PC_T(tag) pc_sqrt_##tag(PC_T(tag) a) { return M(sqrt)(a); }                                \
  PC_FN PC_T(tag) pc_copysign_##tag(PC_T(tag) a, PC_T(tag) sign) { return M(copysign)(a, sign); }  \
  PC_FN PC_T(tag) pc_recip_##tag(PC_T(tag) a) { return PC_FLIT(tag, 1.0) / a; }                    \
  PC_FN PC_T(tag) pc_mul_add_##tag(PC_T(tag) a, PC_T(tag) b, PC_T(tag) c) {                        \
    return M(fma)(a, b, c);                                                                        \
  }                                                                                                \
  PC_FN PC_T(tag) pc_floor_##tag(PC_T(tag) a) { return M(floor)(a); }                              \
  PC_FN PC_T(tag) pc_ceil_##tag(PC_T(tag) a) { return M(ceil)(a); }                                \
  PC_FN PC_T(tag) pc_round_##tag(PC_T(tag) a) { return M(round)(a); }                              \
  PC_FN PC_T(tag) pc_round_ties_even_##tag(PC_T(tag) a) { return M(rint)(a); }                     \
  PC_FN PC_T(tag) pc_trunc_##tag(PC_T(tag) a) { return M(trunc)(a); }                              \
  PC_FN PC_T(tag) pc_fract_##tag(PC_T(tag) a) { return a - M(trunc)(a); }                          \
  PC_FN PC_T(tag) pc_min_##tag(PC_T(tag) a, PC_T(tag) b) { return M(fmin)(a, b); }                 \
  PC_FN PC_T(tag) pc_max_##tag(PC_T(tag) a, PC_T(tag) b) { return M(fmax)(a, b); }

/* div_euclid and rem_euclid, std's formulas (also exact):
 *   q = trunc(x / rhs); if x % rhs < 0 { if rhs > 0 { q - 1 } else { q + 1 } } else { q }
 *   r = x % rhs; if r < 0 { r + rhs.abs() } else { r } */
#define PC_DEF_FLOAT_EUCLID(tag, M)                                                                \
  PC_FN PC_T(tag) pc_div_euclid_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {  \
    (void)fault; (void)where;                                                                      \
    PC_T(tag) q = M(trunc)(a / b);                                                                 \
    if (M(fmod)(a, b) < 0) return b > 0 ? q - PC_FLIT(tag, 1.0) : q + PC_FLIT(tag, 1.0);           \
    return q;                                                                                      \
  }                                                                                                \
  PC_FN PC_T(tag) pc_rem_euclid_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) a, PC_T(tag) b) {  \
    (void)fault; (void)where;                                                                      \
    PC_T(tag) r = M(fmod)(a, b);                                                                   \
    return r < 0 ? r + M(fabs)(b) : r;                                                             \
  }

/* powi(x, n: i32): what Rust computes, LLVM's llvm.powi lowered to compiler-rt's
 * __powisf2 / __powidf2 (the Rust compiler-builtins port is the same loop): square-and-multiply
 * over |n| with every product rounded, then 1 / r for negative n. */
#define PC_DEF_FLOAT_POWI(tag)                                                                     \
  PC_FN PC_T(tag) pc_powi_##tag(PC_T(tag) a, pc_i32 n) {                                           \
    pc_u32 e = n < 0 ? 0u - (pc_u32)n : (pc_u32)n;                                                 \
    PC_T(tag) r = PC_FLIT(tag, 1.0);                                                               \
    for (;;) {                                                                                     \
      if (e & 1u) r *= a;                                                                          \
      e >>= 1;                                                                                     \
      if (e == 0u) break;                                                                          \
      a *= a;                                                                                      \
    }                                                                                              \
    return n < 0 ? PC_FLIT(tag, 1.0) / r : r;                                                      \
  }

/* The functions Rust leaves to libm (within the OpenCL / CUDA accuracy bounds, not bit for
 * bit): cbrt, exp, exp2, exp_m1, ln, log2, log10, ln_1p, powf, sin, cos, tan, asin, acos,
 * atan, atan2 (y.atan2(x) is atan2(y, x)), sinh, cosh, tanh, hypot; and those std writes in
 * Rust, with std's formulas:
 *   log(x, base) = x.ln() / base.ln()
 *   asinh(x) = (|x| + |x| / (hypot(1, 1/|x|) + 1/|x|)).ln_1p().copysign(x)
 *   acosh(x) = if x < 1 { NaN } else { (x + sqrt(x - 1) * sqrt(x + 1)).ln() }
 *              (for x < 1, sqrt(x - 1) is NaN already, so no branch is needed)
 *   atanh(x) = 0.5 * ((2 * x) / (1 - x)).ln_1p()
 * (so asinh and acosh overflow to inf above MAX / 2, as Rust's do: (1e308f64).acosh() is inf);
 *   to_degrees(x) = x * DEG, to_radians(x) = x * RAD with std's constants, given exactly:
 *   f32: DEG = 57.2957795130823208767981548141051703_f32, RAD = consts::PI / 180.0 in f32;
 *   f64: DEG = 180.0 / consts::PI, RAD = consts::PI / 180.0 in f64 (one rounding each). */
#define PC_DEF_FLOAT_MATH(tag, M, DEG, RAD)                                                        \
  PC_FN PC_T(tag) pc_cbrt_##tag(PC_T(tag) a) { return M(cbrt)(a); }                                \
  PC_FN PC_T(tag) pc_exp_##tag(PC_T(tag) a) { return M(exp)(a); }                                  \
  PC_FN PC_T(tag) pc_exp2_##tag(PC_T(tag) a) { return M(exp2)(a); }                                \
  PC_FN PC_T(tag) pc_exp_m1_##tag(PC_T(tag) a) { return M(expm1)(a); }                             \
  PC_FN PC_T(tag) pc_ln_##tag(PC_T(tag) a) { return M(log)(a); }                                   \
  PC_FN PC_T(tag) pc_log2_##tag(PC_T(tag) a) { return M(log2)(a); }                                \
  PC_FN PC_T(tag) pc_log10_##tag(PC_T(tag) a) { return M(log10)(a); }                              \
  PC_FN PC_T(tag) pc_ln_1p_##tag(PC_T(tag) a) { return M(log1p)(a); }                              \
  PC_FN PC_T(tag) pc_log_##tag(PC_T(tag) a, PC_T(tag) base) { return M(log)(a) / M(log)(base); }   \
  PC_FN PC_T(tag) pc_powf_##tag(PC_T(tag) a, PC_T(tag) b) { return M(pow)(a, b); }                 \
  PC_FN PC_T(tag) pc_sin_##tag(PC_T(tag) a) { return M(sin)(a); }                                  \
  PC_FN PC_T(tag) pc_cos_##tag(PC_T(tag) a) { return M(cos)(a); }                                  \
  PC_FN PC_T(tag) pc_tan_##tag(PC_T(tag) a) { return M(tan)(a); }                                  \
  PC_FN PC_T(tag) pc_asin_##tag(PC_T(tag) a) { return M(asin)(a); }                                \
  PC_FN PC_T(tag) pc_acos_##tag(PC_T(tag) a) { return M(acos)(a); }                                \
  PC_FN PC_T(tag) pc_atan_##tag(PC_T(tag) a) { return M(atan)(a); }                                \
  PC_FN PC_T(tag) pc_atan2_##tag(PC_T(tag) y, PC_T(tag) x) { return M(atan2)(y, x); }              \
  PC_FN PC_T(tag) pc_sinh_##tag(PC_T(tag) a) { return M(sinh)(a); }                                \
  PC_FN PC_T(tag) pc_cosh_##tag(PC_T(tag) a) { return M(cosh)(a); }                                \
  PC_FN PC_T(tag) pc_tanh_##tag(PC_T(tag) a) { return M(tanh)(a); }                                \
  PC_FN PC_T(tag) pc_hypot_##tag(PC_T(tag) a, PC_T(tag) b) { return M(hypot)(a, b); }              \
  PC_FN PC_T(tag) pc_asinh_##tag(PC_T(tag) a) {                                                    \
    PC_T(tag) ax = M(fabs)(a);                                                                     \
    PC_T(tag) ix = PC_FLIT(tag, 1.0) / ax;                                                         \
    return M(copysign)(M(log1p)(ax + ax / (M(hypot)(PC_FLIT(tag, 1.0), ix) + ix)), a);             \
  }                                                                                                \
  PC_FN PC_T(tag) pc_acosh_##tag(PC_T(tag) a) {                                                    \
    return M(log)(a + M(sqrt)(a - PC_FLIT(tag, 1.0)) * M(sqrt)(a + PC_FLIT(tag, 1.0)));            \
  }                                                                                                \
  PC_FN PC_T(tag) pc_atanh_##tag(PC_T(tag) a) {                                                    \
    return PC_FLIT(tag, 0.5) * M(log1p)((PC_FLIT(tag, 2.0) * a) / (PC_FLIT(tag, 1.0) - a));        \
  }                                                                                                \
  PC_FN PC_T(tag) pc_to_degrees_##tag(PC_T(tag) a) { return a * DEG; }                             \
  PC_FN PC_T(tag) pc_to_radians_##tag(PC_T(tag) a) { return a * RAD; }

/* is_nan, is_infinite, is_finite, is_sign_positive, is_sign_negative (-> pc_bool; the sign
 * tests read the sign bit, NaN's included). */
#define PC_DEF_FLOAT_CLASS(tag)                                                                    \
  PC_FN pc_bool pc_is_nan_##tag(PC_T(tag) a) { return (pc_bool)(PC_ISNAN(a) != 0); }               \
  PC_FN pc_bool pc_is_infinite_##tag(PC_T(tag) a) { return (pc_bool)(PC_ISINF(a) != 0); }          \
  PC_FN pc_bool pc_is_finite_##tag(PC_T(tag) a) {                                                  \
    return (pc_bool)(PC_ISNAN(a) == 0 && PC_ISINF(a) == 0);                                        \
  }                                                                                                \
  PC_FN pc_bool pc_is_sign_positive_##tag(PC_T(tag) a) { return (pc_bool)(PC_SIGNBIT(a) == 0); }   \
  PC_FN pc_bool pc_is_sign_negative_##tag(PC_T(tag) a) { return (pc_bool)(PC_SIGNBIT(a) != 0); }

/* clamp(x, lo, hi), std's: panics "min > max, or either was NaN. min = {lo}, max = {hi}"
 * unless lo <= hi: records PC_FAULT_CLAMP with the bounds' bit patterns as a0, a1 and returns
 * x; otherwise `if x < lo { lo }`, then `if x > hi { hi }` (a NaN x stays NaN, and
 * (-0.0).clamp(0.0, 0.0) is -0.0). */
#define PC_DEF_FLOAT_CLAMP(tag, BITS)                                                              \
  PC_FN PC_T(tag) pc_clamp_##tag(pc_fault_t fault, pc_u32 where, PC_T(tag) x, PC_T(tag) lo,        \
                                 PC_T(tag) hi) {                                                   \
    if (PC_UNLIKELY(!(lo <= hi))) {                                                                \
      pc_record_fault(fault, PC_FAULT_CLAMP, where, (pc_u64)BITS(lo), (pc_u64)BITS(hi));                  \
      return x;                                                                                    \
    }                                                                                              \
    if (x < lo) x = lo;                                                                            \
    if (x > hi) x = hi;                                                                            \
    return x;                                                                                      \
  }

#define PC_DEF_FLOAT(tag, M, BITS, DEG, RAD)                                                       \
  PC_DEF_CMP(tag)                                                                                  \
  PC_DEF_FLOAT_EXACT(tag, M)                                                                       \
  PC_DEF_FLOAT_EUCLID(tag, M)                                                                      \
  PC_DEF_FLOAT_POWI(tag)                                                                           \
  PC_DEF_FLOAT_MATH(tag, M, DEG, RAD)                                                              \
  PC_DEF_FLOAT_CLASS(tag)                                                                          \
  PC_DEF_FLOAT_CLAMP(tag, BITS)

/* ---- floats: the tags ---------------------------------------------------------------------- */

PC_DEF_FLOAT(f32, PC_MATH32, PC_F32_BITS, 57.295780181884765625f,
             0.01745329238474369049072265625f)
#ifdef PC_HAVE_F64
PC_DEF_FLOAT(f64, PC_MATH64, PC_F64_BITS, 57.29577951308232286464772187173366546630859375,
             0.0174532925199432954743716805978692718781530857086181640625)
#endif

/* ---- casts: Rust's `as` ---------------------------------------------------------------------
 * pc_cast_<from>_<to> for from in i8..u64, f32, f64, bool and to in i8..u64, f32, f64; char to
 * i8..u64, u8 to char, and char to char (Rust has no other casts of char: `u32 as char` does
 * not compile, as not every u32 is a char). */

/* int -> int (two's complement truncation or extension), int -> float (rounded to nearest),
 * f32 -> f64 (exact), f64 -> f32 (rounded to nearest), bool -> int or float (0/1), char -> int
 * (its code point, truncated: 'é' as u8 is 0xE9, '€' as u8 is 0xAC), u8 -> char (U+0000 to
 * U+00FF): C's conversion is Rust's. */
#define PC_DEF_CAST(from, to)                                                                      \
  PC_FN PC_T(to) pc_cast_##from##_##to(PC_T(from) x) { return (PC_T(to))x; }
#define PC_DEF_CAST_INT(from, to)                                                                  \
  PC_FN PC_T(to) pc_cast_##from##_##to(PC_T(from) x) { return PC_NARROW_##to(x); }
#define PC_DEF_CASTS_TO_INT(from)                                                                  \
  PC_DEF_CAST_INT(from, i8)                                                                        \
  PC_DEF_CAST_INT(from, i16)                                                                       \
  PC_DEF_CAST_INT(from, i32)                                                                       \
  PC_DEF_CAST_INT(from, i64)                                                                       \
  PC_DEF_CAST_INT(from, u8)                                                                        \
  PC_DEF_CAST_INT(from, u16)                                                                       \
  PC_DEF_CAST_INT(from, u32)                                                                       \
  PC_DEF_CAST_INT(from, u64)

/* float -> int: saturating, NaN -> 0. The bounds are exact powers of two of the float type, so
 * the C conversion that remains only sees values whose truncation is in range. */
#define PC_DEF_CAST_F2I(from, to, lo, hi)                                                          \
  PC_FN PC_T(to) pc_cast_##from##_##to(PC_T(from) x) {                                             \
    if (PC_ISNAN(x)) return 0;                                                                     \
    if (x <= PC_FLIT(from, lo)) return PC_MIN_##to;                                                \
    if (x >= PC_FLIT(from, hi)) return PC_MAX_##to;                                                \
    return (PC_T(to))x;                                                                            \
  }
#define PC_DEF_CASTS_F2I(from)                                                                     \
  PC_DEF_CAST_F2I(from, i8, -128.0, 128.0)                                                         \
  PC_DEF_CAST_F2I(from, i16, -32768.0, 32768.0)                                                    \
  PC_DEF_CAST_F2I(from, i32, -2147483648.0, 2147483648.0)                                          \
  PC_DEF_CAST_F2I(from, i64, -9223372036854775808.0, 9223372036854775808.0)                        \
  PC_DEF_CAST_F2I(from, u8, 0.0, 256.0)                                                            \
  PC_DEF_CAST_F2I(from, u16, 0.0, 65536.0)                                                         \
  PC_DEF_CAST_F2I(from, u32, 0.0, 4294967296.0)                                                    \
  PC_DEF_CAST_F2I(from, u64, 0.0, 18446744073709551616.0)

#define PC_DEF_CASTS_FROM_INT(from)                                                                \
  PC_DEF_CASTS_TO_INT(from)                                                                        \
  PC_DEF_CAST(from, f32)

PC_DEF_CASTS_FROM_INT(i8)
PC_DEF_CASTS_FROM_INT(i16)
PC_DEF_CASTS_FROM_INT(i32)
PC_DEF_CASTS_FROM_INT(i64)
PC_DEF_CASTS_FROM_INT(u8)
PC_DEF_CASTS_FROM_INT(u16)
PC_DEF_CASTS_FROM_INT(u32)
PC_DEF_CASTS_FROM_INT(u64)
PC_DEF_CASTS_FROM_INT(bool)
PC_DEF_CASTS_TO_INT(char)
PC_DEF_CAST(u8, char)
PC_DEF_CAST(char, char)
PC_DEF_CASTS_F2I(f32)
PC_DEF_CAST(f32, f32)

#ifdef PC_HAVE_F64
PC_DEF_CAST(i8, f64)
PC_DEF_CAST(i16, f64)
PC_DEF_CAST(i32, f64)
PC_DEF_CAST(i64, f64)
PC_DEF_CAST(u8, f64)
PC_DEF_CAST(u16, f64)
PC_DEF_CAST(u32, f64)
PC_DEF_CAST(u64, f64)
PC_DEF_CAST(bool, f64)
PC_DEF_CAST(f32, f64)
PC_DEF_CASTS_F2I(f64)
PC_DEF_CAST(f64, f32)
PC_DEF_CAST(f64, f64)
#endif

#endif /* PC_SCALAR_H */
