//! A fault recorded by a kernel, as the panic Rust raises for it.
//!
//! The kernels record the first failed check of a run in the fault word (see `prelude.h`):
//! its code, the check's number in the generated source and two arguments. The host reads the
//! word after each chunk and panics with Rust's own message — `attempt to divide by zero`,
//! `index out of bounds: the len is 300 but the index is 1000` — followed by the expression
//! that failed and where the comprehension is written, as the CPU's panic would be raised
//! from the same comprehension.

use crate::site::Site;
use parcomp_contract::FaultCode;

/// The fault word: code, check, two 64-bit arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) code: u32,
    pub(crate) check: u32,
    pub(crate) a0: u64,
    pub(crate) a1: u64,
}

impl Fault {
    /// The fault in the words of a fault buffer, if one was recorded.
    pub(crate) fn from_words(words: &[u8]) -> Option<Fault> {
        let word =
            |k: usize| u32::from_le_bytes(words[4 * k..4 * k + 4].try_into().expect("4 bytes"));
        let code = word(0);
        (code != 0).then(|| Fault {
            code,
            check: word(1),
            a0: word(2) as u64 | (word(3) as u64) << 32,
            a1: word(4) as u64 | (word(5) as u64) << 32,
        })
    }

    /// Rust's message for the fault.
    pub(crate) fn message(&self, site: &Site) -> String {
        let Some(code) = FaultCode::from_code(self.code) else {
            return format!("parcomp internal error: unknown device fault {}", self.code);
        };
        match code {
            FaultCode::DivZero => "attempt to divide by zero".into(),
            FaultCode::RemZero => {
                "attempt to calculate the remainder with a divisor of zero".into()
            }
            FaultCode::DivOverflow => "attempt to divide with overflow".into(),
            FaultCode::RemOverflow => "attempt to calculate the remainder with overflow".into(),
            FaultCode::Index => {
                format!("index out of bounds: the len is {} but the index is {}", self.a1, self.a0)
            }
            FaultCode::SizeOverflow => format!(
                "parcomp: the iteration space of {site} has more elements than usize can count \
                 (a size sum overflowed); no result can be produced"
            ),
            FaultCode::RangeTooLong => {
                "parcomp: a range in a generator has more elements than usize can count".into()
            }
            FaultCode::StepZero => {
                "parcomp: step_by(0) in a generator: the step must be positive".into()
            }
            FaultCode::UnwrapNone => "called `Option::unwrap()` on a `None` value".into(),
            FaultCode::Clamp => "min > max (or either is NaN) in a call of `clamp`".into(),
            FaultCode::SizeChanged => format!(
                "parcomp internal error: a kernel produced other sizes than it counted (an \
                 element at {} of {})",
                self.a0, self.a1
            ),
        }
    }
}

/// Panics with the message of `fault`, naming the expression that failed and the
/// comprehension.
#[cold]
pub(crate) fn raise(fault: Fault, faults: &[String], site: &'static Site, backend: &str) -> ! {
    let message = fault.message(site);
    let check = faults
        .get(fault.check as usize)
        .filter(|_| fault.code != FaultCode::SizeOverflow.code())
        .map(|text| format!(" (in `{text}`)"))
        .unwrap_or_default();
    if fault.code == FaultCode::SizeOverflow.code() {
        panic!("{message} (on {backend})");
    }
    panic!("{message}{check} in {site}, on {backend}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_messages() {
        let mut words = [0u8; 32];
        assert_eq!(Fault::from_words(&words), None);
        words[0] = 5;
        words[4] = 2;
        words[8..12].copy_from_slice(&1000u32.to_le_bytes());
        words[16..20].copy_from_slice(&300u32.to_le_bytes());
        let fault = Fault::from_words(&words).unwrap();
        assert_eq!((fault.code, fault.check, fault.a0, fault.a1), (5, 2, 1000, 300));
        let site = Site::api("test");
        assert_eq!(
            fault.message(&site),
            "index out of bounds: the len is 300 but the index is 1000"
        );
    }
}
