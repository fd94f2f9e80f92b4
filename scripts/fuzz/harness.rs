//! Runs generated comprehensions on every backend of this build and prints, per case and
//! backend, whether the result equals the one plain loops computed (see scripts/fuzz).
//!
//! Arguments: the cases to run (all when none). Output, one line each:
//! `start ID`, `result ID BACKEND ok|wrong GOT || WANT|panic MESSAGE`,
//! `device ID BACKEND ON/RUNS REASON`, `end ID`.

#![allow(dead_code)]

mod cases;

use parcomp::{trace, with_backend, with_eager_splitting, Backend};
use std::fmt::Debug;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What one case runs on: a name, a backend, and whether rayon splits eagerly.
pub struct Harness {
    id: usize,
    backends: Vec<(&'static str, Backend, bool)>,
}

impl Harness {
    /// Runs `got` on every backend and compares each result with `want`.
    pub fn check<T: PartialEq + Debug>(&mut self, want: fn() -> T, got: fn() -> T) {
        // The loops are written to have one right answer: a panic there is the generator's.
        let want = match catch_unwind(want) {
            Ok(want) => want,
            Err(payload) => {
                println!("result {} loops panic {}", self.id, message(payload.as_ref()));
                return;
            }
        };
        for &(name, backend, eager) in &self.backends {
            let run = || with_backend(backend, || if eager { with_eager_splitting(got) } else { got() });
            let (result, runs) = trace::record(|| catch_unwind(AssertUnwindSafe(run)));
            let id = self.id;
            match result {
                Ok(value) if value == want => println!("result {id} {name} ok"),
                Ok(value) => println!("result {id} {name} wrong {} || {}", show(&value), show(&want)),
                Err(payload) => println!("result {id} {name} panic {}", message(payload.as_ref())),
            }
            if backend.is_device() {
                let on = runs.iter().filter(|r| r.backend == backend).count();
                let why = runs
                    .iter()
                    .find(|r| r.backend != backend)
                    .map(|r| r.reason.clone().unwrap_or_default())
                    .unwrap_or_default();
                println!("device {id} {name} {on}/{} {}", runs.len(), one_line(&why));
            }
            std::io::stdout().flush().ok();
        }
    }
}

fn show<T: Debug>(value: &T) -> String {
    let text = one_line(&format!("{value:?}"));
    if text.len() > 400 {
        let mut end = 400;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} characters)", &text[..end], text.len())
    } else {
        text
    }
}

fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        one_line(s)
    } else if let Some(s) = payload.downcast_ref::<String>() {
        one_line(s)
    } else {
        "(a panic without a message)".to_string()
    }
}

/// The case running and when it started (seconds since the harness started), for the
/// watchdog.
static RUNNING: std::sync::Mutex<Option<(usize, u64)>> = std::sync::Mutex::new(None);

/// Ends the process, saying so, when one case runs longer than `limit` seconds: a case hangs.
fn watchdog(limit: u64) {
    let started = std::time::Instant::now();
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
        let now = started.elapsed().as_secs();
        if let Some((id, since)) = *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) {
            if now - since > limit {
                println!("hang {id} {limit}");
                std::io::stdout().flush().ok();
                std::process::exit(3);
            }
        }
    });
    START.get_or_init(|| started);
}

static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

fn main() {
    // The panics of a case are reported on its `result` line, not on stderr.
    std::panic::set_hook(Box::new(|_| {}));
    let limit = std::env::var("PARCOMP_FUZZ_CASE_SECONDS").ok().and_then(|v| v.parse().ok());
    watchdog(limit.unwrap_or(300));
    let mut backends: Vec<(&'static str, Backend, bool)> = vec![
        ("seq", Backend::Sequential, false),
        ("rayon", Backend::Rayon, false),
        ("rayon-eager", Backend::Rayon, true),
    ];
    let required = std::env::var("PARCOMP_REQUIRE_DEVICE").unwrap_or_default();
    for &device in Backend::DEVICES {
        match parcomp::gpu_device(device) {
            Ok(_) => backends.push((device.name(), device, false)),
            Err(e) if required == "1" || required.contains(device.name()) || required == "all" => {
                if device != Backend::Cuda || required != "1" {
                    eprintln!("PARCOMP_REQUIRE_DEVICE: no {device} device: {e}");
                    std::process::exit(2);
                }
            }
            Err(e) => eprintln!("no {device} device, its runs are skipped: {e}"),
        }
    }
    let names: Vec<&str> = backends.iter().map(|b| b.0).collect();
    println!("backends {}", names.join(" "));
    let wanted: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a case number")).collect();
    for &(id, case) in cases::CASES {
        if !wanted.is_empty() && !wanted.contains(&id) {
            continue;
        }
        println!("start {id}");
        std::io::stdout().flush().ok();
        let since = START.get().map_or(0, |s| s.elapsed().as_secs());
        *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = Some((id, since));
        let mut harness = Harness { id, backends: backends.clone() };
        case(&mut harness);
        *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = None;
        println!("end {id}");
    }
}
