//! Where a comprehension was written, so runtime faults can name it.

use std::fmt;

/// The location and text of one comprehension, emitted by the macro as a `static`.
///
/// Runtime faults (a size sum that overflows `usize`, an allocation that cannot be made, a
/// generator whose size changes between passes) panic with a message that names the site.
#[derive(Debug)]
pub struct Site {
    /// The comprehension as written, e.g. `par![x * y | x <- 0..n, y <- x..n]`.
    pub text: &'static str,
    /// `file!()` of the call.
    pub file: &'static str,
    /// `line!()` of the call.
    pub line: u32,
    /// `column!()` of the call.
    pub column: u32,
}

impl Site {
    /// A site for code that is not a comprehension (the public segmented primitives).
    pub const fn api(name: &'static str) -> Site {
        Site { text: name, file: "", line: 0, column: 0 }
    }

    /// Panics because the iteration space of this comprehension has more elements than `usize`
    /// can count.
    #[cold]
    #[track_caller]
    pub fn size_overflow(&self) -> ! {
        panic!(
            "parcomp: the iteration space of {self} has more elements than usize can count \
             (a size sum overflowed); no result can be produced"
        )
    }

    /// Panics because `count` output elements cannot be allocated.
    #[cold]
    #[track_caller]
    pub fn cannot_allocate(&self, count: usize, what: &str) -> ! {
        panic!("parcomp: cannot allocate {count} {what} for {self}")
    }

    /// Panics because a generator produced a different number of elements than it did when it
    /// was sized (generators and filters must be pure functions of their variables).
    #[cold]
    #[track_caller]
    pub fn size_changed(&self, expected: usize, got: usize) -> ! {
        panic!(
            "parcomp: a generator or filter of {self} is not deterministic: the iteration space \
             was sized at {expected} elements but yielded {got} (generators and filters must be \
             pure functions of the comprehension's variables)"
        )
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            write!(f, "`{}`", self.text)
        } else {
            write!(f, "`{}` at {}:{}:{}", self.text, self.file, self.line, self.column)
        }
    }
}
