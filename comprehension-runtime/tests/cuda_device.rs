//! The CUDA device as far as a machine without an NVIDIA GPU can check it: opening it either
//! succeeds (a driver and a device are present) or is an error that says what was looked for —
//! never a panic inside cudarc — and forcing the backend then panics with that error. Where a
//! GPU is present, `--ignored` also runs a kernel and reads it back.
#![cfg(feature = "cuda-api")]

use comprehension_runtime::gpu::device::{Arg, DeviceErrorKind};
use comprehension_runtime::gpu::{device, prelude};
use comprehension_runtime::{with_backend, Backend};

#[test]
fn an_absent_driver_is_an_error_naming_what_was_searched() {
    match device(Backend::Cuda) {
        Ok(device) => println!("CUDA device present: {}", device.info()),
        Err(e) => {
            assert_eq!(e.kind, DeviceErrorKind::Unavailable, "{e}");
            let m = e.message;
            assert!(
                m.contains("libcuda.so.1") || m.contains("libnvrtc") || m.contains("device"),
                "{m}"
            );
        }
    }
}

#[test]
fn forcing_cuda_without_a_device_panics_saying_so() {
    if device(Backend::Cuda).is_ok() {
        return;
    }
    let result = std::panic::catch_unwind(|| {
        with_backend(Backend::Cuda, || {
            comprehension_runtime::segmented::replicated_iota(&[3, 1, 2])
        })
    });
    let payload = result.expect_err("a forced absent device must panic");
    let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("there is no cuda device"), "{message}");
    assert!(message.contains("PARCOMP_BACKEND=cuda"), "{message}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `--ignored` where one is present"]
fn a_kernel_runs_and_reads_back_on_a_gpu() {
    let device = device(Backend::Cuda).unwrap_or_else(|e| panic!("no CUDA device: {e}"));
    let source = format!(
        "{}\nPC_KERNEL void twice(PC_GLOBAL pc_u64* out, pc_u64 n, pc_u32 k) {{\n  pc_u64 i = PC_GLOBAL_ID();\n  if (i < n) out[i] = k * i + 1;\n}}\n",
        prelude()
    );
    let program = device.build(&source, "").unwrap_or_else(|e| panic!("{e}"));
    let n = 1000u64;
    let buffer = device.alloc(n as usize * 8).unwrap();
    let args = [Arg::Buffer(&buffer), Arg::U64(n), Arg::U32(3)];
    device.launch(&*program, "twice", n, 256, &args).unwrap();
    let mut bytes = vec![0u8; n as usize * 8];
    device.read(&buffer, 0, &mut bytes).unwrap();
    let values: Vec<u64> =
        bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(values, (0..n).map(|i| 3 * i + 1).collect::<Vec<_>>());
    // The binary reloads.
    let binary = program.binary().expect("a CUBIN");
    device.load(&binary, "").unwrap();
}

#[test]
fn cuda_slices_without_a_device_are_an_error() {
    use comprehension_runtime::gpu::cuda::interop::context;
    match (context(), device(Backend::Cuda)) {
        (Ok(context), Ok(_)) => println!("CUDA context present: {:?}", context.cu_ctx()),
        (Err(e), Err(opening)) => {
            assert_eq!(e.kind, DeviceErrorKind::Unavailable, "{e}");
            assert_eq!(e.message, opening.message);
        }
        (context, opening) => {
            panic!("the context and the device disagree: {:?} {:?}", context.err(), opening.err())
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with `--ignored` where one is present"]
fn a_cuda_slice_round_trips_through_a_device_vec_on_a_gpu() {
    use comprehension_runtime::gpu::cuda::interop::context;
    use comprehension_runtime::DeviceVec;
    let context = context().unwrap_or_else(|e| panic!("no CUDA device: {e}"));
    let stream = context.new_stream().unwrap();
    let values: Vec<u64> = (0..100_000).map(|i| i * 3 + 1).collect();
    let slice = stream.clone_htod(&values).unwrap();
    let kept = DeviceVec::from_cuda_slice(&slice).unwrap();
    assert_eq!(kept.device(), Some(Backend::Cuda));
    assert_eq!(kept.to_vec(), values);
    let back = kept.to_cuda_slice(&stream).unwrap();
    assert_eq!(stream.clone_dtoh(&back).unwrap(), values);
    // Empty, and a host DeviceVec uploaded on the way.
    let empty = DeviceVec::<f32>::from_slice(&[]).to_cuda_slice(&stream).unwrap();
    assert_eq!(empty.len(), 0);
    let host = with_backend(Backend::Rayon, || DeviceVec::from_slice(&[1.5f32, -2.0]));
    assert_eq!(host.device(), None);
    let up = host.to_cuda_slice(&stream).unwrap();
    assert_eq!(stream.clone_dtoh(&up).unwrap(), [1.5, -2.0]);
    // Values stored otherwise than a CudaSlice holds them are refused.
    let flags = DeviceVec::from_slice(&[true, false]);
    let refused = flags.to_cuda_slice(&stream).expect_err("bool is no number");
    assert!(refused.message.contains("only numbers convert"), "{refused}");
}

/// Set in the environment of the child process, so that the child test does nothing when
/// someone runs the ignored tests by hand.
const CHILD: &str = "PARCOMP_TEST_CHILD";

#[test]
#[ignore = "run by an_old_driver_is_an_error_not_a_panic"]
fn child_old_driver() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    match device(Backend::Cuda) {
        Ok(device) => panic!("opened {}", device.info()),
        Err(e) => println!("error: {e}"),
    }
}

/// A stand-in `libcuda` whose only function says it is the CUDA 11.4 driver: opening the
/// device must stop there with an error (cudarc would panic on the first function the old
/// driver lacks).
#[test]
fn an_old_driver_is_an_error_not_a_panic() {
    let dir = std::env::temp_dir().join(format!("parcomp-old-driver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("fake_cuda.c");
    std::fs::write(&source, "int cuDriverGetVersion(int *v) { *v = 11040; return 0; }\n").unwrap();
    // Under both names cudarc tries, `libcuda.so` first: on a machine with a driver, the
    // real `libcuda.so` would otherwise be found before the stand-in `libcuda.so.1`.
    for name in ["libcuda.so", "libcuda.so.1"] {
        let built = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(name))
            .arg(&source)
            .status()
            .expect("a C compiler (cc) to build the stand-in driver");
        assert!(built.success());
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_old_driver", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", &dir)
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("the CUDA driver is too old: it supports CUDA 11.4"),
        "{stdout}\n{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
