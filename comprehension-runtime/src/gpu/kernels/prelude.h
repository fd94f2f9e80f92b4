/* parcomp's kernel dialect: one C dialect that compiles as OpenCL C (1.2 and later) and as
 * CUDA C++ (NVRTC). Every kernel parcomp runs, generic or generated from a comprehension,
 * starts with this prelude; nothing else in a kernel names a dialect-specific construct.
 *
 * - types: pc_i8 ... pc_u64, pc_f32, pc_f64 (when PC_HAVE_F64 is defined), pc_bool (a byte,
 *   0 or 1, as Rust stores bool), pc_char (a Unicode scalar value's code point in 32 bits, as
 *   Rust stores char);
 * - PC_KERNEL, PC_FN, PC_GLOBAL, PC_RESTRICT, PC_LOCAL_ARRAY, PC_BARRIER, PC_LOCAL_INC_U32 (an
 *   atomic increment in local memory), PC_UNROLL, and the work-item indices;
 * - PC_T(tag) / PC_OP(op, tag): the C type and the operation of a type tag (i32, f64, tup0,
 *   ...), so that generated code written once over type classes (`#define T3 i32`) serves
 *   every instantiation;
 * - faults: the first failed check of a run (a division by zero, an index out of bounds) is
 *   recorded in a global fault word with an atomic compare-and-swap, as Futhark's generated
 *   code does; the host turns it into Rust's panic message after the run.
 */
#ifndef PC_PRELUDE_H
#define PC_PRELUDE_H

#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)
#define PC_OPENCL 1
#elif defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define PC_CUDA 1
#else
#error "parcomp kernels compile as OpenCL C or CUDA C++"
#endif

/* ---- dialect ---------------------------------------------------------------------------- */

/* Unrolls the loop after it (a compile-time trip count): both compilers take the pragma. */
#define PC_UNROLL _Pragma("unroll")

/* A condition that is false on every run that does not fail: a check's failing path. Said to
 * the compiler, it lays that path out of the way, and a loop with a check in it (`x[c]` over a
 * row) runs as fast as one without (9 % on PoCL for the sparse matrix x vector's loop). NVRTC
 * and clang take the builtin; a compiler without it gets the plain condition. */
#if defined(PC_CUDA)
#define PC_UNLIKELY(c) __builtin_expect(!!(c), 0)
#elif defined(__has_builtin)
#if __has_builtin(__builtin_expect)
#define PC_UNLIKELY(c) __builtin_expect(!!(c), 0)
#endif
#endif
#ifndef PC_UNLIKELY
#define PC_UNLIKELY(c) (c)
#endif

#ifdef PC_OPENCL
/* Rust never contracts a * b + c into a fused multiply-add; neither may the kernels. */
#pragma OPENCL FP_CONTRACT OFF
#ifdef PC_HAVE_F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
typedef char pc_i8;
typedef short pc_i16;
typedef int pc_i32;
typedef long pc_i64;
typedef uchar pc_u8;
typedef ushort pc_u16;
typedef uint pc_u32;
typedef ulong pc_u64;
typedef float pc_f32;
#ifdef PC_HAVE_F64
typedef double pc_f64;
#endif
/* The runtime launches every kernel of its programs in work-groups of PC_WG work-items and
 * says so (PC_FIXED_WG): the compiler may specialise on it. */
#ifdef PC_FIXED_WG
#define PC_KERNEL __kernel __attribute__((reqd_work_group_size(PC_WG, 1, 1)))
#else
#define PC_KERNEL __kernel
#endif
#define PC_FN
#define PC_RESTRICT restrict
#define PC_GLOBAL __global
#define PC_LOCAL_ARRAY(type, name, n) __local type name[n]
#define PC_LOCAL_PTR(type) __local type *
#define PC_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define PC_GLOBAL_ID() ((pc_u64)get_global_id(0))
#define PC_LOCAL_ID() ((pc_u32)get_local_id(0))
#define PC_GROUP_ID() ((pc_u64)get_group_id(0))
#define PC_LOCAL_SIZE() ((pc_u32)get_local_size(0))
#define PC_NUM_GROUPS() ((pc_u64)get_num_groups(0))
#define PC_ATOMIC_CAS_U32(p, cmp, val) atomic_cmpxchg((volatile PC_GLOBAL pc_u32 *)(p), (cmp), (val))
#define PC_LOCAL_INC_U32(p) ((void)atomic_inc((volatile __local pc_u32 *)(p)))
#define PC_U64_C(x) x##UL
/* Math functions are overloaded by argument type in OpenCL C. */
#define PC_MATH32(f) f
#define PC_MATH64(f) f
#define PC_ISNAN(x) isnan(x)
#define PC_ISINF(x) isinf(x)
#define PC_SIGNBIT(x) signbit(x)
/* For scalar.h: population count and count of leading zeros as pc_u32 (the clz of 0 is the
 * width), and a float's bit pattern as the unsigned integer of its width. */
#define PC_POPCOUNT32(x) ((pc_u32)popcount((pc_u32)(x)))
#define PC_POPCOUNT64(x) ((pc_u32)popcount((pc_u64)(x)))
#define PC_CLZ32(x) ((pc_u32)clz((pc_u32)(x)))
#define PC_CLZ64(x) ((pc_u32)clz((pc_u64)(x)))
#define PC_F32_BITS(x) as_uint((pc_f32)(x))
#define PC_F64_BITS(x) as_ulong((pc_f64)(x))
#endif

#ifdef PC_CUDA
/* Generated kernels bind every variable of a level the same way, whether or not a kernel reads
 * it (a pass flag no filter sets, a context component the head ignores): NVRTC's notes on
 * unused variables (#177 declared but never referenced, #550 set but never used) say nothing
 * about the program. Every other diagnostic stays on, and CI fails on any. */
#pragma nv_diag_suppress 177
#pragma nv_diag_suppress 550
typedef signed char pc_i8;
typedef short pc_i16;
typedef int pc_i32;
typedef long long pc_i64;
typedef unsigned char pc_u8;
typedef unsigned short pc_u16;
typedef unsigned int pc_u32;
typedef unsigned long long pc_u64;
typedef float pc_f32;
#ifdef PC_HAVE_F64
typedef double pc_f64;
#endif
/* The runtime launches blocks of PC_WG threads (PC_FIXED_WG): registers are sized for it. */
#ifdef PC_FIXED_WG
#define PC_KERNEL extern "C" __global__ __launch_bounds__(PC_WG)
#else
#define PC_KERNEL extern "C" __global__
#endif
#define PC_FN __device__
#define PC_RESTRICT __restrict__
#define PC_GLOBAL
#define PC_LOCAL_ARRAY(type, name, n) __shared__ type name[n]
#define PC_LOCAL_PTR(type) type *
#define PC_BARRIER() __syncthreads()
#define PC_GLOBAL_ID() ((pc_u64)blockIdx.x * (pc_u64)blockDim.x + (pc_u64)threadIdx.x)
#define PC_LOCAL_ID() ((pc_u32)threadIdx.x)
#define PC_GROUP_ID() ((pc_u64)blockIdx.x)
#define PC_LOCAL_SIZE() ((pc_u32)blockDim.x)
#define PC_NUM_GROUPS() ((pc_u64)gridDim.x)
#define PC_ATOMIC_CAS_U32(p, cmp, val) atomicCAS((unsigned int *)(p), (cmp), (val))
#define PC_LOCAL_INC_U32(p) ((void)atomicAdd((unsigned int *)(p), 1u))
#define PC_U64_C(x) x##ULL
/* CUDA names the single-precision functions with an `f` suffix. */
#define PC_MATH32(fn) fn##f
#define PC_MATH64(f) f
#define PC_ISNAN(x) isnan(x)
#define PC_ISINF(x) isinf(x)
#define PC_SIGNBIT(x) signbit(x)
/* For scalar.h: population count and count of leading zeros as pc_u32 (the clz of 0 is the
 * width), and a float's bit pattern as the unsigned integer of its width. */
#define PC_POPCOUNT32(x) ((pc_u32)__popc((pc_u32)(x)))
#define PC_POPCOUNT64(x) ((pc_u32)__popcll((pc_u64)(x)))
#define PC_CLZ32(x) ((pc_u32)__clz((int)(pc_u32)(x)))
#define PC_CLZ64(x) ((pc_u32)__clzll((long long)(pc_u64)(x)))
#define PC_F32_BITS(x) __float_as_uint((pc_f32)(x))
#define PC_F64_BITS(x) ((pc_u64)__double_as_longlong((pc_f64)(x)))
#endif

/* scalar.h's narrowing to i16 on NVIDIA's compilers (CUDA, and NVIDIA's OpenCL, for which the
 * runtime defines PC_NVIDIA_PTX), by a conversion the compiler cannot see through. NVIDIA's PTX
 * assembler (ptxas 12.9 and 13.0 for sm_90, in the SASS they write) takes the negation of a
 * sign-extended 16-bit value (`neg.s16`, or `sub.s16` from 0, which NVVM makes of any i16
 * `0 - x`, `x * -1` or `-x`) to be sign-extended itself, false for -32768: it negates in 32
 * bits and skips the re-extension, so `-(-32768i16)` widened to 64 bits read 32768 where Rust
 * gives -32768 (gpu_scalar's check, on an H200 through NVIDIA's OpenCL). Narrowed here, the
 * arithmetic stays in 32 bits, and ptxas re-extends what `cvt.u16.u32` gives. */
#if defined(PC_CUDA) || defined(PC_NVIDIA_PTX)
PC_FN pc_i16 pc_narrow_i16(pc_u32 w) {
  pc_i16 r;
  asm("cvt.u16.u32 %0, %1;" : "=h"(r) : "r"(w));
  return r;
}
#define PC_NARROW_i16(w) pc_narrow_i16((pc_u32)(w))
#endif

typedef pc_u8 pc_bool;
typedef pc_u32 pc_char;

/* Work-items per work-group, and items per work-item in tiled kernels (the runtime may define
 * them before the prelude). */
#ifndef PC_WG
#define PC_WG 256
#endif
#ifndef PC_ITEMS
#define PC_ITEMS 4
#endif
#define PC_TILE (PC_WG * PC_ITEMS)
/* Work-group scans and reductions in local memory go by runs of PC_RUN work-items: one
 * work-item per run combines its run serially, one combines the runs, everyone reads its
 * result — four barriers, not two per doubling of the group. */
#define PC_RUN 32u
#define PC_RUNS (PC_WG / PC_RUN)

/* ---- type tags ------------------------------------------------------------------------- */

#define PC_CAT_(a, b) a##b
#define PC_CAT(a, b) PC_CAT_(a, b)
/* The C type of a tag: PC_T(i32) is pc_i32; with `#define T3 i32`, PC_T(T3) is pc_i32 too. */
#define PC_T(tag) PC_CAT(pc_, tag)
/* The operation `op` of a tag: PC_OP(add, T3) is pc_add_i32. The name is pasted before
 * anything is expanded (OpenCL defines `max` and `abs` as macros), the tag after (it is
 * usually a class macro). */
#define PC_OP__(f, tag) f##_##tag
#define PC_OP_(f, tag) PC_OP__(f, tag)
#define PC_OP(op, tag) PC_OP_(pc_##op, tag)
/* A conversion: PC_CAST(T3, f64) is pc_cast_i32_f64. */
#define PC_CAST_(from, to) pc_cast_##from##_##to
#define PC_CAST(from, to) PC_CAST_(from, to)
/* A float literal of a tag's type, parsed directly as that type (`0.1f` for f32, as Rust
 * parses `0.1f32`; never a double rounded to float). */
#define PC_FLIT_f32(v) v##f
#define PC_FLIT_f64(v) v
#define PC_FLIT_(tag, v) PC_FLIT_##tag(v)
#define PC_FLIT(tag, v) PC_FLIT_(tag, v)
/* An integer literal of a tag's type, given as an unsigned decimal or hexadecimal constant. */
#define PC_ILIT(tag, v) ((PC_T(tag))PC_U64_C(v))

/* ---- faults ---------------------------------------------------------------------------- */

/* The fault word: u32[8] in global memory, zero when nothing went wrong.
 *   [0] the fault code (PC_FAULT_*), set once by compare-and-swap: the first fault wins;
 *   [1] where: the number of the check in the generated source (0 for generic kernels);
 *   [2], [3] the first argument (low, high 32 bits); [4], [5] the second.
 * Kernels return at once when [0] is set, so a run stops soon after its first fault. */
typedef PC_GLOBAL pc_u32 *pc_fault_t;

/* The fault codes PC_FAULT_NONE, PC_FAULT_DIV_ZERO, ... are defined before this prelude, from
 * the table the macro and the runtime share (the parcomp-contract crate's FaultCode). */

PC_FN void pc_record_fault(pc_fault_t fault, pc_u32 code, pc_u32 where, pc_u64 a0, pc_u64 a1) {
  if (PC_ATOMIC_CAS_U32(fault, 0u, code) == 0u) {
    fault[1] = where;
    fault[2] = (pc_u32)a0;
    fault[3] = (pc_u32)(a0 >> 32);
    fault[4] = (pc_u32)a1;
    fault[5] = (pc_u32)(a1 >> 32);
  }
}

/* Whether a fault has been recorded: kernels check this first and return at once. */
#define PC_FAULTED(fault) PC_UNLIKELY(*(volatile PC_GLOBAL pc_u32 *)(fault) != 0u)

/* `index` if it is below `len`; otherwise records an out-of-bounds fault and returns 0, so the
 * read that follows stays inside the buffer (every buffer has room for at least one element)
 * and its value is never used: the run's result is discarded. */
PC_FN pc_u64 pc_index(pc_fault_t fault, pc_u32 where, pc_u64 index, pc_u64 len) {
  if (PC_UNLIKELY(index >= len)) {
    pc_record_fault(fault, PC_FAULT_INDEX, where, index, len);
    return 0;
  }
  return index;
}

#endif /* PC_PRELUDE_H */
