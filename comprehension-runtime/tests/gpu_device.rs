//! The OpenCL device layer on its own: build, copy, launch, read back.
#![cfg(feature = "opencl")]

mod support;

use comprehension_runtime::gpu::device::Arg;
use comprehension_runtime::gpu::prelude;

#[test]
fn a_kernel_runs_and_its_output_reads_back() {
    let Some(device) = support::opencl() else {
        return;
    };
    let source = format!(
        "{}\nPC_KERNEL void twice(PC_GLOBAL pc_u64* out, pc_u64 n) {{\n  pc_u64 i = PC_GLOBAL_ID();\n  if (i < n) out[i] = 2 * i + 1;\n}}\n",
        prelude()
    );
    let program = device.build(&source, "").unwrap_or_else(|e| panic!("{e}"));
    let n = 1000u64;
    let buffer = device.alloc(n as usize * 8).unwrap();
    device.launch(&*program, "twice", n, 256, &[Arg::Buffer(&buffer), Arg::U64(n)]).unwrap();
    let mut bytes = vec![0u8; n as usize * 8];
    device.read(&buffer, 0, &mut bytes).unwrap();
    let values: Vec<u64> =
        bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(values, (0..n).map(|i| 2 * i + 1).collect::<Vec<_>>());
    println!("{}", device.info());
}

#[test]
fn a_rejected_program_carries_the_compiler_log() {
    let Some(device) = support::opencl() else {
        return;
    };
    let source = format!(
        "{}\nPC_KERNEL void broken(PC_GLOBAL pc_u64* out) {{ out[0] = undefined_name; }}\n",
        prelude()
    );
    let error = match device.build(&source, "") {
        Ok(_) => panic!("built"),
        Err(e) => e,
    };
    assert!(error.message.contains("undefined_name"), "{error}");
}

#[test]
fn arguments_that_do_not_match_the_kernel_are_an_error_not_a_crash() {
    let Some(device) = support::opencl() else {
        return;
    };
    let source = format!("{}\nPC_KERNEL void set(PC_GLOBAL pc_u64* out, pc_u64 n) {{ if (PC_GLOBAL_ID() < n) out[0] = n; }}\n", prelude());
    let program = device.build(&source, "").unwrap_or_else(|e| panic!("{e}"));
    let buffer = device.alloc(8).unwrap();
    // A number where the kernel takes a buffer.
    let error = device.launch(&*program, "set", 1, 1, &[Arg::U64(3), Arg::U64(3)]).unwrap_err();
    assert!(error.message.contains("a number for parameter 0"), "{error}");
    // Too few arguments.
    let error = device.launch(&*program, "set", 1, 1, &[Arg::Buffer(&buffer)]).unwrap_err();
    assert!(error.message.contains("1 arguments, but it takes 2"), "{error}");
    device.launch(&*program, "set", 1, 1, &[Arg::Buffer(&buffer), Arg::U64(3)]).unwrap();
}
