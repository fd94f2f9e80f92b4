//! `char` on the device: stored as its code point, compared by it, cast as Rust casts it, with
//! the ASCII methods of `char` and `u8`, ranges that skip the surrogates, and `char` results.
//! Every comprehension runs on every backend, on the device too (checked by the trace), and
//! must give the sequential backend's answer.

mod support;

use parcomp::{
    par, par_count, par_device, par_explain, par_fn, par_max, par_min, with_backend, Backend,
    DeviceVec,
};
use support::{off_device, on_device, on_every_backend};

/// ASCII of every class, Latin-1, the last code points before and the first after the
/// surrogates, and the last `char`.
fn sample() -> Vec<char> {
    let mut chars: Vec<char> = (0u8..=0xFF).map(char::from).collect();
    chars.extend("é€ßÅ😀\u{2028}\u{3000}\u{FEFF}".chars());
    chars.extend(['\u{D7FE}', '\u{D7FF}', '\u{E000}', '\u{E001}', '\u{FFFF}', '\u{10000}']);
    chars.extend(['\u{10FFFE}', char::MAX]);
    chars
}

#[test]
fn chars_as_integers() {
    let chars = sample();
    let got = on_every_backend(
        || par![(c as u32, c as u8, c as i8, c as u16, c as i16, c as u64, c as i64) | c <- &chars],
    );
    let want: Vec<_> = chars
        .iter()
        .map(|&c| (c as u32, c as u8, c as i8, c as u16, c as i16, c as u64, c as i64))
        .collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| par![(u32::from(c), u64::from(c)) | c <- &chars]);
    assert_eq!(got, chars.iter().map(|&c| (u32::from(c), u64::from(c))).collect::<Vec<_>>());
    let digits = "x0123456789y".chars().collect::<Vec<_>>();
    let got = on_every_backend(|| par![c as u32 - '0' as u32 | c <- &digits, c.is_ascii_digit()]);
    assert_eq!(got, (0..10).collect::<Vec<u32>>());
}

#[test]
fn bytes_as_chars() {
    let bytes: Vec<u8> = (0..=255).collect();
    let got = on_every_backend(|| par![(b as char, char::from(b)) | b <- &bytes]);
    assert_eq!(got, bytes.iter().map(|&b| (b as char, char::from(b))).collect::<Vec<_>>());
    // Byte literals are `u8`s.
    let got = on_every_backend(|| par![b - b'a' | b <- &bytes, b >= b'a', b <= b'z']);
    assert_eq!(got, (0..26).collect::<Vec<u8>>());
}

#[test]
fn comparisons_by_code_point() {
    let chars = sample();
    // Literals on both sides of the surrogate gap, and a captured `char`.
    let pivot = '\u{E000}';
    let got = on_every_backend(|| {
        par![((c < '\u{D7FF}', c <= '\u{D7FF}', c > pivot, c >= pivot, c == 'é', c != 'a'),
              (c.max('m'), c.min(pivot), c.clamp('0', '\u{E001}'))) | c <- &chars]
    });
    let want: Vec<_> = chars
        .iter()
        .map(|&c| {
            (
                (c < '\u{D7FF}', c <= '\u{D7FF}', c > pivot, c >= pivot, c == 'é', c != 'a'),
                (c.max('m'), c.min(pivot), c.clamp('0', '\u{E001}')),
            )
        })
        .collect();
    assert_eq!(got, want);
    // Pairs across the gap.
    let edges = ['\u{D7FF}', '\u{E000}', 'a', char::MAX];
    let got = on_every_backend(|| par![(a, b) | a <- &edges, b <- &edges, a < b]);
    let mut want = Vec::new();
    for &a in &edges {
        for &b in &edges {
            if a < b {
                want.push((a, b));
            }
        }
    }
    assert_eq!(got, want);
    assert_eq!(on_every_backend(|| par_max![c | c <- &chars]), Some(char::MAX));
    assert_eq!(on_every_backend(|| par_min![c | c <- &chars, c > 'z']), Some('{'));
}

#[test]
fn ascii_methods_of_chars() {
    let chars = sample();
    let got = on_every_backend(|| {
        par![((c.is_ascii(), c.is_ascii_alphabetic(), c.is_ascii_uppercase(),
               c.is_ascii_lowercase(), c.is_ascii_alphanumeric(), c.is_ascii_digit()),
              (c.is_ascii_hexdigit(), c.is_ascii_punctuation(), c.is_ascii_graphic(),
               c.is_ascii_whitespace(), c.is_ascii_control())) | c <- &chars]
    });
    let want: Vec<_> = chars
        .iter()
        .map(|c| {
            (
                (
                    c.is_ascii(),
                    c.is_ascii_alphabetic(),
                    c.is_ascii_uppercase(),
                    c.is_ascii_lowercase(),
                    c.is_ascii_alphanumeric(),
                    c.is_ascii_digit(),
                ),
                (
                    c.is_ascii_hexdigit(),
                    c.is_ascii_punctuation(),
                    c.is_ascii_graphic(),
                    c.is_ascii_whitespace(),
                    c.is_ascii_control(),
                ),
            )
        })
        .collect();
    assert_eq!(got, want);
    let got = on_every_backend(|| {
        par![(c.to_ascii_uppercase(), c.to_ascii_lowercase(), c.eq_ignore_ascii_case(&'Q'))
             | c <- &chars]
    });
    let want: Vec<_> = chars
        .iter()
        .map(|c| (c.to_ascii_uppercase(), c.to_ascii_lowercase(), c.eq_ignore_ascii_case(&'Q')))
        .collect();
    assert_eq!(got, want);
    // Non-ASCII chars are in no ASCII class and map to themselves.
    let wide = ['é', '€', 'Å', '\u{10FFFF}'];
    let got = on_every_backend(|| {
        par![(c.is_ascii() || c.is_ascii_alphabetic() || c.is_ascii_whitespace(),
              c.to_ascii_uppercase()) | c <- &wide]
    });
    assert_eq!(got, wide.map(|c| (false, c)));
    // The filter of the issue.
    let text: Vec<char> = "a1b22€3\u{10FFFF}9".chars().collect();
    let got = on_every_backend(|| par![c as u32 | c <- &text, c.is_ascii_digit()]);
    assert_eq!(got, [49, 50, 50, 51, 57]);
}

#[test]
fn ascii_methods_of_bytes() {
    let bytes: Vec<u8> = (0..=255).collect();
    let got = on_every_backend(|| {
        par![(b.is_ascii(), b.is_ascii_alphanumeric(), b.is_ascii_punctuation(),
              b.is_ascii_whitespace(), b.is_ascii_control(), b.to_ascii_uppercase(),
              b.to_ascii_lowercase(), b.eq_ignore_ascii_case(&b'k')) | b <- &bytes]
    });
    let want: Vec<_> = bytes
        .iter()
        .map(|b| {
            (
                b.is_ascii(),
                b.is_ascii_alphanumeric(),
                b.is_ascii_punctuation(),
                b.is_ascii_whitespace(),
                b.is_ascii_control(),
                b.to_ascii_uppercase(),
                b.to_ascii_lowercase(),
                b.eq_ignore_ascii_case(&b'k'),
            )
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn char_results_and_captures() {
    let chars = sample();
    let shift = 'A';
    // A captured `char`, `char`s in tuples, an `if` and a `match` on chars.
    let got = on_every_backend(|| {
        par![(c, if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { shift },
              match c { 'a'..='f' | 'A'..='F' => 'h', '\u{E000}'.. => 'p', _ => shift })
             | c <- &chars]
    });
    let want: Vec<_> = chars
        .iter()
        .map(|&c| {
            (
                c,
                if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { shift },
                match c {
                    'a'..='f' | 'A'..='F' => 'h',
                    '\u{E000}'.. => 'p',
                    _ => shift,
                },
            )
        })
        .collect();
    assert_eq!(got, want);
    // A `char` computed on the host and read by the kernels, and the element of a captured
    // collection read by index.
    let got = on_every_backend(|| par![chars[i].max(shift) | i <- 0..chars.len(), i % 7 == 0]);
    assert_eq!(got, chars.iter().step_by(7).map(|&c| c.max(shift)).collect::<Vec<_>>());
    // `Option<char>` elements and results.
    let options = [Some('x'), None, Some('\u{E000}'), Some(char::MAX), None];
    let got =
        on_every_backend(|| par![(o, o.unwrap_or('?')) | o <- &options, o.unwrap_or('?') != 'x']);
    assert_eq!(
        got,
        [(None, '?'), (Some('\u{E000}'), '\u{E000}'), (Some(char::MAX), char::MAX), (None, '?')]
    );
    // Rows of chars: read from an array of rows, and returned as rows.
    let words: Vec<Vec<char>> =
        ["héllo", "", "wörld€", "\u{10FFFF}z"].iter().map(|w| w.chars().collect()).collect();
    let got = on_every_backend(
        || par![par![c.to_ascii_uppercase() | c <- &words[i], c != 'l'] | i <- 0..words.len()],
    );
    let want: Vec<Vec<char>> = words
        .iter()
        .map(|w| w.iter().filter(|&&c| c != 'l').map(|c| c.to_ascii_uppercase()).collect())
        .collect();
    assert_eq!(got, want);
    // Empty input.
    let none: Vec<char> = Vec::new();
    assert_eq!(on_every_backend(|| par![c.to_ascii_uppercase() | c <- &none]), []);
    assert_eq!(on_every_backend(|| par_count![c | c <- &none, c.is_ascii()]), 0);
}

#[test]
fn char_ranges() {
    // The first generator: computed on the device from its start.
    assert_eq!(on_every_backend(|| par![c | c <- 'a'..='e']), ['a', 'b', 'c', 'd', 'e']);
    let across: Vec<char> = ('\u{D7FC}'..='\u{E003}').collect();
    assert_eq!(across.len(), 8);
    assert_eq!(on_every_backend(|| par![c | c <- '\u{D7FC}'..='\u{E003}']), across);
    assert_eq!(
        on_every_backend(|| par![c as u32 | c <- '\u{D7FC}'..'\u{E003}']),
        across[..7].iter().map(|&c| c as u32).collect::<Vec<_>>()
    );
    #[allow(clippy::reversed_empty_ranges)]
    let empty = on_every_backend(|| par![c | c <- 'z'..'a']);
    assert_eq!(empty, []);
    let all = on_every_backend(|| par_count![c | c <- '\0'..=char::MAX]);
    assert_eq!(all, ('\0'..=char::MAX).count());
    // Later generators: sizes and elements on the device, across the gap.
    let starts = ['x', '\u{D7FE}', '\u{D7FF}', '\u{E000}', 'z'];
    let got = on_every_backend(|| par![(a, b) | a <- &starts, b <- a..'\u{E002}']);
    let mut want = Vec::new();
    for &a in &starts {
        for b in a..'\u{E002}' {
            want.push((a, b));
        }
    }
    assert_eq!(got, want);
    let got = on_every_backend(|| par![(a, b) | a <- 'x'..'{', b <- a..='{']);
    let mut want = Vec::new();
    for a in 'x'..'{' {
        for b in a..='{' {
            want.push((a, b));
        }
    }
    assert_eq!(got, want);
    // With `rev` and `step_by`.
    let got = on_every_backend(
        || par![b | a <- 0..2u32, b <- ('\u{D7FD}'..='\u{E002}').rev().step_by(2 + a as usize)],
    );
    let mut want = Vec::new();
    for a in 0..2u32 {
        want.extend(('\u{D7FD}'..='\u{E002}').rev().step_by(2 + a as usize));
    }
    assert_eq!(got, want);
}

/// The letters and the `char`s above the surrogates between `from` and `to` (a loop over a
/// range of `char` in a `#[par_fn]`).
#[par_fn]
fn letters_between(from: char, to: char) -> u32 {
    let mut n = 0u32;
    for c in from..=to {
        if c.is_ascii_alphabetic() || c > '\u{D7FF}' {
            n += 1;
        }
    }
    n
}

/// The code point of `c`, or of `char::MAX` for a surrogate's neighbour.
#[par_fn]
fn code(c: char) -> u32 {
    if c == '\u{D7FF}' || c == '\u{E000}' {
        char::MAX as u32
    } else {
        c as u32
    }
}

/// `c` in upper case, and `'?'` for what is not ASCII (a `char` result of a `#[par_fn]`).
#[par_fn]
fn shout(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_uppercase()
    } else {
        '?'
    }
}

#[test]
fn chars_in_par_fns() {
    let pairs = [('a', 'z'), ('Y', 'b'), ('\u{D7F0}', '\u{E010}'), ('z', 'a'), ('\0', 'ÿ')];
    let got = on_every_backend(|| par![letters_between(a, b) | (a, b) <- &pairs]);
    let want: Vec<u32> = pairs.iter().map(|&(a, b)| letters_between(a, b)).collect();
    assert_eq!(got, want);
    let chars = sample();
    let got = on_every_backend(|| par![code(c) | c <- &chars]);
    assert_eq!(got, chars.iter().map(|&c| code(c)).collect::<Vec<_>>());
    let got = on_every_backend(|| par![shout(c) | c <- &chars]);
    assert_eq!(got, chars.iter().map(|&c| shout(c)).collect::<Vec<_>>());
}

#[test]
fn chars_kept_on_the_device() {
    // A `DeviceVec<char>` made by the device, read by a later comprehension and brought back.
    let text: Vec<char> = "Grüße, 世界! 123 \u{10FFFF}".chars().collect();
    let run = || {
        let kept = DeviceVec::from_slice(&text);
        let upper: DeviceVec<char> = par_device![c.to_ascii_uppercase() | c <- &kept];
        let letters = par_count![c | c <- &upper, c.is_ascii_uppercase()];
        (upper.to_vec(), letters)
    };
    let want = with_backend(Backend::Sequential, run);
    assert_eq!(want.0, text.iter().map(|c| c.to_ascii_uppercase()).collect::<Vec<_>>());
    assert_eq!(want.1, 3);
    assert_eq!(with_backend(Backend::Rayon, run), want);
    if let Some(got) = on_device(run) {
        assert_eq!(got, want);
    }
}

#[test]
fn chars_from_u32_stay_on_the_cpu() {
    let codes: Vec<u32> = vec![0x61, 0xD800, 0x20AC, 0x110000];
    let got = off_device(
        || par![char::from_u32(x) | x <- &codes],
        "calls `char::from_u32`, which the device does not have",
    );
    if let Some(got) = got {
        assert_eq!(got, [Some('a'), None, Some('€'), None]);
    }
    let got = off_device(
        || par![c.to_digit(16) | c <- 'a'..'h'],
        "calls the method `.to_digit()`, which the device does not have",
    );
    if let Some(got) = got {
        assert_eq!(got, [Some(10), Some(11), Some(12), Some(13), Some(14), Some(15), None]);
    }
    // `par_explain!` says so too, and that the rest runs on a device.
    let plan = par_explain![char::from_u32(x) | x <- &codes];
    assert!(plan.contains("no: calls `char::from_u32`, which the device does not have"), "{plan}");
    let plan = par_explain![c.to_ascii_uppercase() | c <- 'a'..='z', c != 'q'];
    assert!(plan.contains("runs on a device when one is present"), "{plan}");
}

#[test]
fn ordered_and_grouped_by_chars() {
    // A large shuffle of every kind of char: sorted by code point on the device.
    let sample = sample();
    let chars: Vec<char> = (0..50_000usize).map(|i| sample[i * 7919 % sample.len()]).collect();
    let got = on_every_backend(|| par![c | c <- &chars, order by c desc]);
    let mut want = chars.clone();
    want.sort_by(|a, b| b.cmp(a));
    assert_eq!(got, want);
    let got = on_every_backend(|| par![(c, i) | (i, c) <- &enumerated(&chars), order by c, take 9]);
    let mut want: Vec<(char, usize)> = chars.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    want.sort_by_key(|&(c, _)| c);
    want.truncate(9);
    assert_eq!(got, want);
    // Grouped by a char key (the groups' counts run on the host, as for every key).
    let got = support::on_every_backend_traced(|| {
        par![(d, par_count![x | x <- c]) | c <- &chars, let d = c.to_ascii_lowercase(),
             group by d]
    });
    let mut want = std::collections::BTreeMap::new();
    for c in &chars {
        *want.entry(c.to_ascii_lowercase()).or_insert(0usize) += 1;
    }
    assert_eq!(got, want.into_iter().collect::<Vec<_>>());
}

fn enumerated(chars: &[char]) -> Vec<(usize, char)> {
    chars.iter().copied().enumerate().collect()
}
