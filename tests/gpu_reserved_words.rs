//! Every name the kernel dialect reserves, used as a variable: the generated kernels rename
//! what C, OpenCL C or CUDA C++ would misread (`int`, `kernel`, `min`, `NAN`, parcomp's own
//! `pc_*` names, non-ASCII names), and the results equal plain Rust's.
//!
//! The comprehensions below were written from the list in
//! `flatten-core/src/back/kernel/keywords.rs`; `every_reserved_word_is_used` checks that the list
//! and this file still agree.

#![allow(non_snake_case, non_upper_case_globals, clippy::all)]

mod support;

use parcomp::par;
use support::on_every_backend;

#[test]
fn reserved_words_0() {
    let got = on_every_backend(|| {
        par![(auto, case, long * 1000 + goto) |
            auto <- 0u64..40,
            case <- 0..auto % 7,
            let char = (case * 3 + auto + 1) % 1009,
            let default = (char * 3 + auto + 2) % 1009,
            let double = (default * 3 + auto + 3) % 1009,
            let float = (double * 3 + auto + 4) % 1009,
            let goto = (float * 3 + auto + 5) % 1009,
            let inline = (goto * 3 + auto + 6) % 1009,
            let int = (inline * 3 + auto + 7) % 1009,
            let long = (int * 3 + auto + 8) % 1009,
            (long + goto) % 5 != 1]
    });
    let mut want = Vec::new();
    for auto in 0u64..40 {
        for case in 0..auto % 7 {
            let char = (case * 3 + auto + 1) % 1009;
            let default = (char * 3 + auto + 2) % 1009;
            let double = (default * 3 + auto + 3) % 1009;
            let float = (double * 3 + auto + 4) % 1009;
            let goto = (float * 3 + auto + 5) % 1009;
            let inline = (goto * 3 + auto + 6) % 1009;
            let int = (inline * 3 + auto + 7) % 1009;
            let long = (int * 3 + auto + 8) % 1009;
            if (long + goto) % 5 != 1 {
                want.push((auto, case, long * 1000 + goto));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_1() {
    let got = on_every_backend(|| {
        par![(register, restrict, void * 1000 + typedef) |
            register <- 0u64..40,
            restrict <- 0..register % 7,
            let short = (restrict * 3 + register + 1) % 1009,
            let signed = (short * 3 + register + 2) % 1009,
            let sizeof = (signed * 3 + register + 3) % 1009,
            let switch = (sizeof * 3 + register + 4) % 1009,
            let typedef = (switch * 3 + register + 5) % 1009,
            let union = (typedef * 3 + register + 6) % 1009,
            let unsigned = (union * 3 + register + 7) % 1009,
            let void = (unsigned * 3 + register + 8) % 1009,
            (void + typedef) % 5 != 1]
    });
    let mut want = Vec::new();
    for register in 0u64..40 {
        for restrict in 0..register % 7 {
            let short = (restrict * 3 + register + 1) % 1009;
            let signed = (short * 3 + register + 2) % 1009;
            let sizeof = (signed * 3 + register + 3) % 1009;
            let switch = (sizeof * 3 + register + 4) % 1009;
            let typedef = (switch * 3 + register + 5) % 1009;
            let union = (typedef * 3 + register + 6) % 1009;
            let unsigned = (union * 3 + register + 7) % 1009;
            let void = (unsigned * 3 + register + 8) % 1009;
            if (void + typedef) % 5 != 1 {
                want.push((register, restrict, void * 1000 + typedef));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_2() {
    let got = on_every_backend(|| {
        par![(volatile, _Alignas, _Static_assert * 1000 + _Generic) |
            volatile <- 0u64..40,
            _Alignas <- 0..volatile % 7,
            let _Alignof = (_Alignas * 3 + volatile + 1) % 1009,
            let _Atomic = (_Alignof * 3 + volatile + 2) % 1009,
            let _Bool = (_Atomic * 3 + volatile + 3) % 1009,
            let _Complex = (_Bool * 3 + volatile + 4) % 1009,
            let _Generic = (_Complex * 3 + volatile + 5) % 1009,
            let _Imaginary = (_Generic * 3 + volatile + 6) % 1009,
            let _Noreturn = (_Imaginary * 3 + volatile + 7) % 1009,
            let _Static_assert = (_Noreturn * 3 + volatile + 8) % 1009,
            (_Static_assert + _Generic) % 5 != 1]
    });
    let mut want = Vec::new();
    for volatile in 0u64..40 {
        for _Alignas in 0..volatile % 7 {
            let _Alignof = (_Alignas * 3 + volatile + 1) % 1009;
            let _Atomic = (_Alignof * 3 + volatile + 2) % 1009;
            let _Bool = (_Atomic * 3 + volatile + 3) % 1009;
            let _Complex = (_Bool * 3 + volatile + 4) % 1009;
            let _Generic = (_Complex * 3 + volatile + 5) % 1009;
            let _Imaginary = (_Generic * 3 + volatile + 6) % 1009;
            let _Noreturn = (_Imaginary * 3 + volatile + 7) % 1009;
            let _Static_assert = (_Noreturn * 3 + volatile + 8) % 1009;
            if (_Static_assert + _Generic) % 5 != 1 {
                want.push((volatile, _Alignas, _Static_assert * 1000 + _Generic));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_3() {
    let got = on_every_backend(|| {
        par![(_Thread_local, bool, constant * 1000 + __global) |
            _Thread_local <- 0u64..40,
            bool <- 0.._Thread_local % 7,
            let NULL = (bool * 3 + _Thread_local + 1) % 1009,
            let kernel = (NULL * 3 + _Thread_local + 2) % 1009,
            let __kernel = (kernel * 3 + _Thread_local + 3) % 1009,
            let global = (__kernel * 3 + _Thread_local + 4) % 1009,
            let __global = (global * 3 + _Thread_local + 5) % 1009,
            let local = (__global * 3 + _Thread_local + 6) % 1009,
            let __local = (local * 3 + _Thread_local + 7) % 1009,
            let constant = (__local * 3 + _Thread_local + 8) % 1009,
            (constant + __global) % 5 != 1]
    });
    let mut want = Vec::new();
    for _Thread_local in 0u64..40 {
        for bool in 0.._Thread_local % 7 {
            let NULL = (bool * 3 + _Thread_local + 1) % 1009;
            let kernel = (NULL * 3 + _Thread_local + 2) % 1009;
            let __kernel = (kernel * 3 + _Thread_local + 3) % 1009;
            let global = (__kernel * 3 + _Thread_local + 4) % 1009;
            let __global = (global * 3 + _Thread_local + 5) % 1009;
            let local = (__global * 3 + _Thread_local + 6) % 1009;
            let __local = (local * 3 + _Thread_local + 7) % 1009;
            let constant = (__local * 3 + _Thread_local + 8) % 1009;
            if (constant + __global) % 5 != 1 {
                want.push((_Thread_local, bool, constant * 1000 + __global));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_4() {
    let got = on_every_backend(|| {
        par![(__constant, private, read_write * 1000 + __read_only) |
            __constant <- 0u64..40,
            private <- 0..__constant % 7,
            let __private = (private * 3 + __constant + 1) % 1009,
            let generic = (__private * 3 + __constant + 2) % 1009,
            let __generic = (generic * 3 + __constant + 3) % 1009,
            let read_only = (__generic * 3 + __constant + 4) % 1009,
            let __read_only = (read_only * 3 + __constant + 5) % 1009,
            let write_only = (__read_only * 3 + __constant + 6) % 1009,
            let __write_only = (write_only * 3 + __constant + 7) % 1009,
            let read_write = (__write_only * 3 + __constant + 8) % 1009,
            (read_write + __read_only) % 5 != 1]
    });
    let mut want = Vec::new();
    for __constant in 0u64..40 {
        for private in 0..__constant % 7 {
            let __private = (private * 3 + __constant + 1) % 1009;
            let generic = (__private * 3 + __constant + 2) % 1009;
            let __generic = (generic * 3 + __constant + 3) % 1009;
            let read_only = (__generic * 3 + __constant + 4) % 1009;
            let __read_only = (read_only * 3 + __constant + 5) % 1009;
            let write_only = (__read_only * 3 + __constant + 6) % 1009;
            let __write_only = (write_only * 3 + __constant + 7) % 1009;
            let read_write = (__write_only * 3 + __constant + 8) % 1009;
            if (read_write + __read_only) % 5 != 1 {
                want.push((__constant, private, read_write * 1000 + __read_only));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_5() {
    let got = on_every_backend(|| {
        par![(__read_write, uniform, ptrdiff_t * 1000 + uint) |
            __read_write <- 0u64..40,
            uniform <- 0..__read_write % 7,
            let pipe = (uniform * 3 + __read_write + 1) % 1009,
            let half = (pipe * 3 + __read_write + 2) % 1009,
            let uchar = (half * 3 + __read_write + 3) % 1009,
            let ushort = (uchar * 3 + __read_write + 4) % 1009,
            let uint = (ushort * 3 + __read_write + 5) % 1009,
            let ulong = (uint * 3 + __read_write + 6) % 1009,
            let size_t = (ulong * 3 + __read_write + 7) % 1009,
            let ptrdiff_t = (size_t * 3 + __read_write + 8) % 1009,
            (ptrdiff_t + uint) % 5 != 1]
    });
    let mut want = Vec::new();
    for __read_write in 0u64..40 {
        for uniform in 0..__read_write % 7 {
            let pipe = (uniform * 3 + __read_write + 1) % 1009;
            let half = (pipe * 3 + __read_write + 2) % 1009;
            let uchar = (half * 3 + __read_write + 3) % 1009;
            let ushort = (uchar * 3 + __read_write + 4) % 1009;
            let uint = (ushort * 3 + __read_write + 5) % 1009;
            let ulong = (uint * 3 + __read_write + 6) % 1009;
            let size_t = (ulong * 3 + __read_write + 7) % 1009;
            let ptrdiff_t = (size_t * 3 + __read_write + 8) % 1009;
            if (ptrdiff_t + uint) % 5 != 1 {
                want.push((__read_write, uniform, ptrdiff_t * 1000 + uint));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_6() {
    let got = on_every_backend(|| {
        par![(intptr_t, uintptr_t, int2 * 1000 + event_t) |
            intptr_t <- 0u64..40,
            uintptr_t <- 0..intptr_t % 7,
            let image1d_t = (uintptr_t * 3 + intptr_t + 1) % 1009,
            let image2d_t = (image1d_t * 3 + intptr_t + 2) % 1009,
            let image3d_t = (image2d_t * 3 + intptr_t + 3) % 1009,
            let sampler_t = (image3d_t * 3 + intptr_t + 4) % 1009,
            let event_t = (sampler_t * 3 + intptr_t + 5) % 1009,
            let char2 = (event_t * 3 + intptr_t + 6) % 1009,
            let char4 = (char2 * 3 + intptr_t + 7) % 1009,
            let int2 = (char4 * 3 + intptr_t + 8) % 1009,
            (int2 + event_t) % 5 != 1]
    });
    let mut want = Vec::new();
    for intptr_t in 0u64..40 {
        for uintptr_t in 0..intptr_t % 7 {
            let image1d_t = (uintptr_t * 3 + intptr_t + 1) % 1009;
            let image2d_t = (image1d_t * 3 + intptr_t + 2) % 1009;
            let image3d_t = (image2d_t * 3 + intptr_t + 3) % 1009;
            let sampler_t = (image3d_t * 3 + intptr_t + 4) % 1009;
            let event_t = (sampler_t * 3 + intptr_t + 5) % 1009;
            let char2 = (event_t * 3 + intptr_t + 6) % 1009;
            let char4 = (char2 * 3 + intptr_t + 7) % 1009;
            let int2 = (char4 * 3 + intptr_t + 8) % 1009;
            if (int2 + event_t) % 5 != 1 {
                want.push((intptr_t, uintptr_t, int2 * 1000 + event_t));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_7() {
    let got = on_every_backend(|| {
        par![(int4, float2, get_local_id * 1000 + reqd_work_group_size) |
            int4 <- 0u64..40,
            float2 <- 0..int4 % 7,
            let float4 = (float2 * 3 + int4 + 1) % 1009,
            let double2 = (float4 * 3 + int4 + 2) % 1009,
            let double4 = (double2 * 3 + int4 + 3) % 1009,
            let vec_type_hint = (double4 * 3 + int4 + 4) % 1009,
            let reqd_work_group_size = (vec_type_hint * 3 + int4 + 5) % 1009,
            let work_group_size_hint = (reqd_work_group_size * 3 + int4 + 6) % 1009,
            let get_global_id = (work_group_size_hint * 3 + int4 + 7) % 1009,
            let get_local_id = (get_global_id * 3 + int4 + 8) % 1009,
            (get_local_id + reqd_work_group_size) % 5 != 1]
    });
    let mut want = Vec::new();
    for int4 in 0u64..40 {
        for float2 in 0..int4 % 7 {
            let float4 = (float2 * 3 + int4 + 1) % 1009;
            let double2 = (float4 * 3 + int4 + 2) % 1009;
            let double4 = (double2 * 3 + int4 + 3) % 1009;
            let vec_type_hint = (double4 * 3 + int4 + 4) % 1009;
            let reqd_work_group_size = (vec_type_hint * 3 + int4 + 5) % 1009;
            let work_group_size_hint = (reqd_work_group_size * 3 + int4 + 6) % 1009;
            let get_global_id = (work_group_size_hint * 3 + int4 + 7) % 1009;
            let get_local_id = (get_global_id * 3 + int4 + 8) % 1009;
            if (get_local_id + reqd_work_group_size) % 5 != 1 {
                want.push((int4, float2, get_local_id * 1000 + reqd_work_group_size));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_8() {
    let got = on_every_backend(|| {
        par![(get_group_id, get_local_size, CLK_LOCAL_MEM_FENCE * 1000 + atomic_cmpxchg) |
            get_group_id <- 0u64..40,
            get_local_size <- 0..get_group_id % 7,
            let get_global_size = (get_local_size * 3 + get_group_id + 1) % 1009,
            let get_num_groups = (get_global_size * 3 + get_group_id + 2) % 1009,
            let barrier = (get_num_groups * 3 + get_group_id + 3) % 1009,
            let mem_fence = (barrier * 3 + get_group_id + 4) % 1009,
            let atomic_cmpxchg = (mem_fence * 3 + get_group_id + 5) % 1009,
            let atomic_add = (atomic_cmpxchg * 3 + get_group_id + 6) % 1009,
            let printf = (atomic_add * 3 + get_group_id + 7) % 1009,
            let CLK_LOCAL_MEM_FENCE = (printf * 3 + get_group_id + 8) % 1009,
            (CLK_LOCAL_MEM_FENCE + atomic_cmpxchg) % 5 != 1]
    });
    let mut want = Vec::new();
    for get_group_id in 0u64..40 {
        for get_local_size in 0..get_group_id % 7 {
            let get_global_size = (get_local_size * 3 + get_group_id + 1) % 1009;
            let get_num_groups = (get_global_size * 3 + get_group_id + 2) % 1009;
            let barrier = (get_num_groups * 3 + get_group_id + 3) % 1009;
            let mem_fence = (barrier * 3 + get_group_id + 4) % 1009;
            let atomic_cmpxchg = (mem_fence * 3 + get_group_id + 5) % 1009;
            let atomic_add = (atomic_cmpxchg * 3 + get_group_id + 6) % 1009;
            let printf = (atomic_add * 3 + get_group_id + 7) % 1009;
            let CLK_LOCAL_MEM_FENCE = (printf * 3 + get_group_id + 8) % 1009;
            if (CLK_LOCAL_MEM_FENCE + atomic_cmpxchg) % 5 != 1 {
                want.push((
                    get_group_id,
                    get_local_size,
                    CLK_LOCAL_MEM_FENCE * 1000 + atomic_cmpxchg,
                ));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_9() {
    let got = on_every_backend(|| {
        par![(CLK_GLOBAL_MEM_FENCE, alignas, char8_t * 1000 + bitand) |
            CLK_GLOBAL_MEM_FENCE <- 0u64..40,
            alignas <- 0..CLK_GLOBAL_MEM_FENCE % 7,
            let alignof = (alignas * 3 + CLK_GLOBAL_MEM_FENCE + 1) % 1009,
            let and = (alignof * 3 + CLK_GLOBAL_MEM_FENCE + 2) % 1009,
            let and_eq = (and * 3 + CLK_GLOBAL_MEM_FENCE + 3) % 1009,
            let asm = (and_eq * 3 + CLK_GLOBAL_MEM_FENCE + 4) % 1009,
            let bitand = (asm * 3 + CLK_GLOBAL_MEM_FENCE + 5) % 1009,
            let bitor = (bitand * 3 + CLK_GLOBAL_MEM_FENCE + 6) % 1009,
            let catch = (bitor * 3 + CLK_GLOBAL_MEM_FENCE + 7) % 1009,
            let char8_t = (catch * 3 + CLK_GLOBAL_MEM_FENCE + 8) % 1009,
            (char8_t + bitand) % 5 != 1]
    });
    let mut want = Vec::new();
    for CLK_GLOBAL_MEM_FENCE in 0u64..40 {
        for alignas in 0..CLK_GLOBAL_MEM_FENCE % 7 {
            let alignof = (alignas * 3 + CLK_GLOBAL_MEM_FENCE + 1) % 1009;
            let and = (alignof * 3 + CLK_GLOBAL_MEM_FENCE + 2) % 1009;
            let and_eq = (and * 3 + CLK_GLOBAL_MEM_FENCE + 3) % 1009;
            let asm = (and_eq * 3 + CLK_GLOBAL_MEM_FENCE + 4) % 1009;
            let bitand = (asm * 3 + CLK_GLOBAL_MEM_FENCE + 5) % 1009;
            let bitor = (bitand * 3 + CLK_GLOBAL_MEM_FENCE + 6) % 1009;
            let catch = (bitor * 3 + CLK_GLOBAL_MEM_FENCE + 7) % 1009;
            let char8_t = (catch * 3 + CLK_GLOBAL_MEM_FENCE + 8) % 1009;
            if (char8_t + bitand) % 5 != 1 {
                want.push((CLK_GLOBAL_MEM_FENCE, alignas, char8_t * 1000 + bitand));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_10() {
    let got = on_every_backend(|| {
        par![(char16_t, char32_t, co_await * 1000 + consteval) |
            char16_t <- 0u64..40,
            char32_t <- 0..char16_t % 7,
            let class = (char32_t * 3 + char16_t + 1) % 1009,
            let compl = (class * 3 + char16_t + 2) % 1009,
            let concept = (compl * 3 + char16_t + 3) % 1009,
            let const_cast = (concept * 3 + char16_t + 4) % 1009,
            let consteval = (const_cast * 3 + char16_t + 5) % 1009,
            let constexpr = (consteval * 3 + char16_t + 6) % 1009,
            let constinit = (constexpr * 3 + char16_t + 7) % 1009,
            let co_await = (constinit * 3 + char16_t + 8) % 1009,
            (co_await + consteval) % 5 != 1]
    });
    let mut want = Vec::new();
    for char16_t in 0u64..40 {
        for char32_t in 0..char16_t % 7 {
            let class = (char32_t * 3 + char16_t + 1) % 1009;
            let compl = (class * 3 + char16_t + 2) % 1009;
            let concept = (compl * 3 + char16_t + 3) % 1009;
            let const_cast = (concept * 3 + char16_t + 4) % 1009;
            let consteval = (const_cast * 3 + char16_t + 5) % 1009;
            let constexpr = (consteval * 3 + char16_t + 6) % 1009;
            let constinit = (constexpr * 3 + char16_t + 7) % 1009;
            let co_await = (constinit * 3 + char16_t + 8) % 1009;
            if (co_await + consteval) % 5 != 1 {
                want.push((char16_t, char32_t, co_await * 1000 + consteval));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_11() {
    let got = on_every_backend(|| {
        par![(co_return, co_yield, namespace * 1000 + export) |
            co_return <- 0u64..40,
            co_yield <- 0..co_return % 7,
            let decltype = (co_yield * 3 + co_return + 1) % 1009,
            let delete = (decltype * 3 + co_return + 2) % 1009,
            let dynamic_cast = (delete * 3 + co_return + 3) % 1009,
            let explicit = (dynamic_cast * 3 + co_return + 4) % 1009,
            let export = (explicit * 3 + co_return + 5) % 1009,
            let friend = (export * 3 + co_return + 6) % 1009,
            let mutable = (friend * 3 + co_return + 7) % 1009,
            let namespace = (mutable * 3 + co_return + 8) % 1009,
            (namespace + export) % 5 != 1]
    });
    let mut want = Vec::new();
    for co_return in 0u64..40 {
        for co_yield in 0..co_return % 7 {
            let decltype = (co_yield * 3 + co_return + 1) % 1009;
            let delete = (decltype * 3 + co_return + 2) % 1009;
            let dynamic_cast = (delete * 3 + co_return + 3) % 1009;
            let explicit = (dynamic_cast * 3 + co_return + 4) % 1009;
            let export = (explicit * 3 + co_return + 5) % 1009;
            let friend = (export * 3 + co_return + 6) % 1009;
            let mutable = (friend * 3 + co_return + 7) % 1009;
            let namespace = (mutable * 3 + co_return + 8) % 1009;
            if (namespace + export) % 5 != 1 {
                want.push((co_return, co_yield, namespace * 1000 + export));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_12() {
    let got = on_every_backend(|| {
        par![(new, noexcept, public * 1000 + or) |
            new <- 0u64..40,
            noexcept <- 0..new % 7,
            let not = (noexcept * 3 + new + 1) % 1009,
            let not_eq = (not * 3 + new + 2) % 1009,
            let nullptr = (not_eq * 3 + new + 3) % 1009,
            let operator = (nullptr * 3 + new + 4) % 1009,
            let or = (operator * 3 + new + 5) % 1009,
            let or_eq = (or * 3 + new + 6) % 1009,
            let protected = (or_eq * 3 + new + 7) % 1009,
            let public = (protected * 3 + new + 8) % 1009,
            (public + or) % 5 != 1]
    });
    let mut want = Vec::new();
    for new in 0u64..40 {
        for noexcept in 0..new % 7 {
            let not = (noexcept * 3 + new + 1) % 1009;
            let not_eq = (not * 3 + new + 2) % 1009;
            let nullptr = (not_eq * 3 + new + 3) % 1009;
            let operator = (nullptr * 3 + new + 4) % 1009;
            let or = (operator * 3 + new + 5) % 1009;
            let or_eq = (or * 3 + new + 6) % 1009;
            let protected = (or_eq * 3 + new + 7) % 1009;
            let public = (protected * 3 + new + 8) % 1009;
            if (public + or) % 5 != 1 {
                want.push((new, noexcept, public * 1000 + or));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_13() {
    let got = on_every_backend(|| {
        par![(reinterpret_cast, requires, typename * 1000 + thread_local) |
            reinterpret_cast <- 0u64..40,
            requires <- 0..reinterpret_cast % 7,
            let static_assert = (requires * 3 + reinterpret_cast + 1) % 1009,
            let static_cast = (static_assert * 3 + reinterpret_cast + 2) % 1009,
            let template = (static_cast * 3 + reinterpret_cast + 3) % 1009,
            let this = (template * 3 + reinterpret_cast + 4) % 1009,
            let thread_local = (this * 3 + reinterpret_cast + 5) % 1009,
            let throw = (thread_local * 3 + reinterpret_cast + 6) % 1009,
            let typeid = (throw * 3 + reinterpret_cast + 7) % 1009,
            let typename = (typeid * 3 + reinterpret_cast + 8) % 1009,
            (typename + thread_local) % 5 != 1]
    });
    let mut want = Vec::new();
    for reinterpret_cast in 0u64..40 {
        for requires in 0..reinterpret_cast % 7 {
            let static_assert = (requires * 3 + reinterpret_cast + 1) % 1009;
            let static_cast = (static_assert * 3 + reinterpret_cast + 2) % 1009;
            let template = (static_cast * 3 + reinterpret_cast + 3) % 1009;
            let this = (template * 3 + reinterpret_cast + 4) % 1009;
            let thread_local = (this * 3 + reinterpret_cast + 5) % 1009;
            let throw = (thread_local * 3 + reinterpret_cast + 6) % 1009;
            let typeid = (throw * 3 + reinterpret_cast + 7) % 1009;
            let typename = (typeid * 3 + reinterpret_cast + 8) % 1009;
            if (typename + thread_local) % 5 != 1 {
                want.push((reinterpret_cast, requires, typename * 1000 + thread_local));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_14() {
    let got = on_every_backend(|| {
        par![(using, wchar_t, __restrict__ * 1000 + __host__) |
            using <- 0u64..40,
            wchar_t <- 0..using % 7,
            let xor = (wchar_t * 3 + using + 1) % 1009,
            let xor_eq = (xor * 3 + using + 2) % 1009,
            let __global__ = (xor_eq * 3 + using + 3) % 1009,
            let __device__ = (__global__ * 3 + using + 4) % 1009,
            let __host__ = (__device__ * 3 + using + 5) % 1009,
            let __shared__ = (__host__ * 3 + using + 6) % 1009,
            let __constant__ = (__shared__ * 3 + using + 7) % 1009,
            let __restrict__ = (__constant__ * 3 + using + 8) % 1009,
            (__restrict__ + __host__) % 5 != 1]
    });
    let mut want = Vec::new();
    for using in 0u64..40 {
        for wchar_t in 0..using % 7 {
            let xor = (wchar_t * 3 + using + 1) % 1009;
            let xor_eq = (xor * 3 + using + 2) % 1009;
            let __global__ = (xor_eq * 3 + using + 3) % 1009;
            let __device__ = (__global__ * 3 + using + 4) % 1009;
            let __host__ = (__device__ * 3 + using + 5) % 1009;
            let __shared__ = (__host__ * 3 + using + 6) % 1009;
            let __constant__ = (__shared__ * 3 + using + 7) % 1009;
            let __restrict__ = (__constant__ * 3 + using + 8) % 1009;
            if (__restrict__ + __host__) % 5 != 1 {
                want.push((using, wchar_t, __restrict__ * 1000 + __host__));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_15() {
    let got = on_every_backend(|| {
        par![(__syncthreads, threadIdx, fabs * 1000 + atomicCAS) |
            __syncthreads <- 0u64..40,
            threadIdx <- 0..__syncthreads % 7,
            let blockIdx = (threadIdx * 3 + __syncthreads + 1) % 1009,
            let blockDim = (blockIdx * 3 + __syncthreads + 2) % 1009,
            let gridDim = (blockDim * 3 + __syncthreads + 3) % 1009,
            let warpSize = (gridDim * 3 + __syncthreads + 4) % 1009,
            let atomicCAS = (warpSize * 3 + __syncthreads + 5) % 1009,
            let atomicAdd = (atomicCAS * 3 + __syncthreads + 6) % 1009,
            let abs = (atomicAdd * 3 + __syncthreads + 7) % 1009,
            let fabs = (abs * 3 + __syncthreads + 8) % 1009,
            (fabs + atomicCAS) % 5 != 1]
    });
    let mut want = Vec::new();
    for __syncthreads in 0u64..40 {
        for threadIdx in 0..__syncthreads % 7 {
            let blockIdx = (threadIdx * 3 + __syncthreads + 1) % 1009;
            let blockDim = (blockIdx * 3 + __syncthreads + 2) % 1009;
            let gridDim = (blockDim * 3 + __syncthreads + 3) % 1009;
            let warpSize = (gridDim * 3 + __syncthreads + 4) % 1009;
            let atomicCAS = (warpSize * 3 + __syncthreads + 5) % 1009;
            let atomicAdd = (atomicCAS * 3 + __syncthreads + 6) % 1009;
            let abs = (atomicAdd * 3 + __syncthreads + 7) % 1009;
            let fabs = (abs * 3 + __syncthreads + 8) % 1009;
            if (fabs + atomicCAS) % 5 != 1 {
                want.push((__syncthreads, threadIdx, fabs * 1000 + atomicCAS));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_16() {
    let got = on_every_backend(|| {
        par![(sqrt, cbrt, pow * 1000 + log2) |
            sqrt <- 0u64..40,
            cbrt <- 0..sqrt % 7,
            let exp = (cbrt * 3 + sqrt + 1) % 1009,
            let exp2 = (exp * 3 + sqrt + 2) % 1009,
            let expm1 = (exp2 * 3 + sqrt + 3) % 1009,
            let log = (expm1 * 3 + sqrt + 4) % 1009,
            let log2 = (log * 3 + sqrt + 5) % 1009,
            let log10 = (log2 * 3 + sqrt + 6) % 1009,
            let log1p = (log10 * 3 + sqrt + 7) % 1009,
            let pow = (log1p * 3 + sqrt + 8) % 1009,
            (pow + log2) % 5 != 1]
    });
    let mut want = Vec::new();
    for sqrt in 0u64..40 {
        for cbrt in 0..sqrt % 7 {
            let exp = (cbrt * 3 + sqrt + 1) % 1009;
            let exp2 = (exp * 3 + sqrt + 2) % 1009;
            let expm1 = (exp2 * 3 + sqrt + 3) % 1009;
            let log = (expm1 * 3 + sqrt + 4) % 1009;
            let log2 = (log * 3 + sqrt + 5) % 1009;
            let log10 = (log2 * 3 + sqrt + 6) % 1009;
            let log1p = (log10 * 3 + sqrt + 7) % 1009;
            let pow = (log1p * 3 + sqrt + 8) % 1009;
            if (pow + log2) % 5 != 1 {
                want.push((sqrt, cbrt, pow * 1000 + log2));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_17() {
    let got = on_every_backend(|| {
        par![(pown, sin, cosh * 1000 + atan) |
            pown <- 0u64..40,
            sin <- 0..pown % 7,
            let cos = (sin * 3 + pown + 1) % 1009,
            let tan = (cos * 3 + pown + 2) % 1009,
            let asin = (tan * 3 + pown + 3) % 1009,
            let acos = (asin * 3 + pown + 4) % 1009,
            let atan = (acos * 3 + pown + 5) % 1009,
            let atan2 = (atan * 3 + pown + 6) % 1009,
            let sinh = (atan2 * 3 + pown + 7) % 1009,
            let cosh = (sinh * 3 + pown + 8) % 1009,
            (cosh + atan) % 5 != 1]
    });
    let mut want = Vec::new();
    for pown in 0u64..40 {
        for sin in 0..pown % 7 {
            let cos = (sin * 3 + pown + 1) % 1009;
            let tan = (cos * 3 + pown + 2) % 1009;
            let asin = (tan * 3 + pown + 3) % 1009;
            let acos = (asin * 3 + pown + 4) % 1009;
            let atan = (acos * 3 + pown + 5) % 1009;
            let atan2 = (atan * 3 + pown + 6) % 1009;
            let sinh = (atan2 * 3 + pown + 7) % 1009;
            let cosh = (sinh * 3 + pown + 8) % 1009;
            if (cosh + atan) % 5 != 1 {
                want.push((pown, sin, cosh * 1000 + atan));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_18() {
    let got = on_every_backend(|| {
        par![(tanh, asinh, fmod * 1000 + round) |
            tanh <- 0u64..40,
            asinh <- 0..tanh % 7,
            let acosh = (asinh * 3 + tanh + 1) % 1009,
            let atanh = (acosh * 3 + tanh + 2) % 1009,
            let floor = (atanh * 3 + tanh + 3) % 1009,
            let ceil = (floor * 3 + tanh + 4) % 1009,
            let round = (ceil * 3 + tanh + 5) % 1009,
            let rint = (round * 3 + tanh + 6) % 1009,
            let trunc = (rint * 3 + tanh + 7) % 1009,
            let fmod = (trunc * 3 + tanh + 8) % 1009,
            (fmod + round) % 5 != 1]
    });
    let mut want = Vec::new();
    for tanh in 0u64..40 {
        for asinh in 0..tanh % 7 {
            let acosh = (asinh * 3 + tanh + 1) % 1009;
            let atanh = (acosh * 3 + tanh + 2) % 1009;
            let floor = (atanh * 3 + tanh + 3) % 1009;
            let ceil = (floor * 3 + tanh + 4) % 1009;
            let round = (ceil * 3 + tanh + 5) % 1009;
            let rint = (round * 3 + tanh + 6) % 1009;
            let trunc = (rint * 3 + tanh + 7) % 1009;
            let fmod = (trunc * 3 + tanh + 8) % 1009;
            if (fmod + round) % 5 != 1 {
                want.push((tanh, asinh, fmod * 1000 + round));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_19() {
    let got = on_every_backend(|| {
        par![(fmin, fmax, min * 1000 + isinf) |
            fmin <- 0u64..40,
            fmax <- 0..fmin % 7,
            let fma = (fmax * 3 + fmin + 1) % 1009,
            let hypot = (fma * 3 + fmin + 2) % 1009,
            let copysign = (hypot * 3 + fmin + 3) % 1009,
            let isnan = (copysign * 3 + fmin + 4) % 1009,
            let isinf = (isnan * 3 + fmin + 5) % 1009,
            let isfinite = (isinf * 3 + fmin + 6) % 1009,
            let signbit = (isfinite * 3 + fmin + 7) % 1009,
            let min = (signbit * 3 + fmin + 8) % 1009,
            (min + isinf) % 5 != 1]
    });
    let mut want = Vec::new();
    for fmin in 0u64..40 {
        for fmax in 0..fmin % 7 {
            let fma = (fmax * 3 + fmin + 1) % 1009;
            let hypot = (fma * 3 + fmin + 2) % 1009;
            let copysign = (hypot * 3 + fmin + 3) % 1009;
            let isnan = (copysign * 3 + fmin + 4) % 1009;
            let isinf = (isnan * 3 + fmin + 5) % 1009;
            let isfinite = (isinf * 3 + fmin + 6) % 1009;
            let signbit = (isfinite * 3 + fmin + 7) % 1009;
            let min = (signbit * 3 + fmin + 8) % 1009;
            if (min + isinf) % 5 != 1 {
                want.push((fmin, fmax, min * 1000 + isinf));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_20() {
    let got = on_every_backend(|| {
        par![(max, clamp, NAN * 1000 + mad) |
            max <- 0u64..40,
            clamp <- 0..max % 7,
            let select = (clamp * 3 + max + 1) % 1009,
            let popcount = (select * 3 + max + 2) % 1009,
            let clz = (popcount * 3 + max + 3) % 1009,
            let rotate = (clz * 3 + max + 4) % 1009,
            let mad = (rotate * 3 + max + 5) % 1009,
            let nan = (mad * 3 + max + 6) % 1009,
            let INFINITY = (nan * 3 + max + 7) % 1009,
            let NAN = (INFINITY * 3 + max + 8) % 1009,
            (NAN + mad) % 5 != 1]
    });
    let mut want = Vec::new();
    for max in 0u64..40 {
        for clamp in 0..max % 7 {
            let select = (clamp * 3 + max + 1) % 1009;
            let popcount = (select * 3 + max + 2) % 1009;
            let clz = (popcount * 3 + max + 3) % 1009;
            let rotate = (clz * 3 + max + 4) % 1009;
            let mad = (rotate * 3 + max + 5) % 1009;
            let nan = (mad * 3 + max + 6) % 1009;
            let INFINITY = (nan * 3 + max + 7) % 1009;
            let NAN = (INFINITY * 3 + max + 8) % 1009;
            if (NAN + mad) % 5 != 1 {
                want.push((max, clamp, NAN * 1000 + mad));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn reserved_words_21() {
    let got = on_every_backend(|| {
        par![(int_1, pc_t, __y * 1000 + größe) |
            int_1 <- 0u64..40,
            pc_t <- 0..int_1 % 7,
            let pc_fault = (pc_t * 3 + int_1 + 1) % 1009,
            let PC_C3 = (pc_fault * 3 + int_1 + 2) % 1009,
            let pcf_0 = (PC_C3 * 3 + int_1 + 3) % 1009,
            let größe = (pcf_0 * 3 + int_1 + 4) % 1009,
            let _X = (größe * 3 + int_1 + 5) % 1009,
            let __y = (_X * 3 + int_1 + 6) % 1009,
            (__y + größe) % 5 != 1]
    });
    let mut want = Vec::new();
    for int_1 in 0u64..40 {
        for pc_t in 0..int_1 % 7 {
            let pc_fault = (pc_t * 3 + int_1 + 1) % 1009;
            let PC_C3 = (pc_fault * 3 + int_1 + 2) % 1009;
            let pcf_0 = (PC_C3 * 3 + int_1 + 3) % 1009;
            let größe = (pcf_0 * 3 + int_1 + 4) % 1009;
            let _X = (größe * 3 + int_1 + 5) % 1009;
            let __y = (_X * 3 + int_1 + 6) % 1009;
            if (__y + größe) % 5 != 1 {
                want.push((int_1, pc_t, __y * 1000 + größe));
            }
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn every_reserved_word_is_used() {
    const RUST_KEYWORDS: &[&str] = &[
        "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
        "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
        "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv",
        "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "try",
        "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
    ];
    let list = include_str!("../flatten-core/src/back/kernel/keywords.rs");
    let list = &list[list.find("pub const RESERVED").unwrap()..];
    let list = &list[..list.find("];").unwrap()];
    let this = include_str!("gpu_reserved_words.rs");
    let mut checked = 0;
    for name in list.split('"').skip(1).step_by(2) {
        if RUST_KEYWORDS.contains(&name) {
            continue;
        }
        let bound = format!("let {name} = ");
        let generated = format!("for {name} in ");
        assert!(this.contains(&bound) || this.contains(&generated), "{name} is not tested");
        checked += 1;
    }
    assert!(checked > 150, "only {checked} names checked");
}
