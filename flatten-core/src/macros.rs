//! The comprehension macros, by identity: which macro [`crate::expand`] expands, and which one
//! a comprehension nested in a head is. Their names are for messages, and for recognising a
//! nested comprehension by the last segment of its path ([`Macro::from_name`]).

use std::fmt;

/// A macro of the `par!` family (the ones [`crate::expand`] expands; `par_explain!`,
/// `par_kernel!` and `#[par_fn]` have entry points of their own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Macro {
    /// `par!`: a `Vec`.
    Par,
    /// `par_device!`: a `par!` whose elements stay on the device.
    ParDevice,
    /// `par_sum!`.
    ParSum,
    /// `par_product!`.
    ParProduct,
    /// `par_min!`.
    ParMin,
    /// `par_max!`.
    ParMax,
    /// `par_count!`.
    ParCount,
    /// `par_any!`.
    ParAny,
    /// `par_all!`.
    ParAll,
    /// `par_reduce!(op, identity; ...)`.
    ParReduce,
    /// `par_min_by_key!(key; ...)`.
    ParMinByKey,
    /// `par_max_by_key!(key; ...)`.
    ParMaxByKey,
}

impl Macro {
    /// Every macro of the family.
    pub const ALL: [Macro; 12] = [
        Macro::Par,
        Macro::ParDevice,
        Macro::ParSum,
        Macro::ParProduct,
        Macro::ParMin,
        Macro::ParMax,
        Macro::ParCount,
        Macro::ParAny,
        Macro::ParAll,
        Macro::ParReduce,
        Macro::ParMinByKey,
        Macro::ParMaxByKey,
    ];

    /// The macro's name, without the `!` (`par_sum`).
    pub fn name(self) -> &'static str {
        match self {
            Macro::Par => "par",
            Macro::ParDevice => "par_device",
            Macro::ParSum => "par_sum",
            Macro::ParProduct => "par_product",
            Macro::ParMin => "par_min",
            Macro::ParMax => "par_max",
            Macro::ParCount => "par_count",
            Macro::ParAny => "par_any",
            Macro::ParAll => "par_all",
            Macro::ParReduce => "par_reduce",
            Macro::ParMinByKey => "par_min_by_key",
            Macro::ParMaxByKey => "par_max_by_key",
        }
    }

    /// The macro named `name` (`par_sum`), if it is one of the family.
    pub fn from_name(name: &str) -> Option<Macro> {
        Macro::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether a comprehension of this macro nested in a head is flattened into the enclosing
    /// one: `par!`, the reductions and `par_reduce!`.
    pub fn nests(self) -> bool {
        !matches!(self, Macro::ParDevice | Macro::ParMinByKey | Macro::ParMaxByKey)
    }
}

/// The macro's name, as messages write it before the `!`.
impl fmt::Display for Macro {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Macro;

    #[test]
    fn names_round_trip() {
        for m in Macro::ALL {
            assert_eq!(Macro::from_name(m.name()), Some(m));
            assert_eq!(m.to_string(), m.name());
        }
        assert_eq!(Macro::from_name("par_explain"), None);
        assert_eq!(Macro::from_name("vec"), None);
    }
}
