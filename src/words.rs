//! Words without Unicode property tables: which characters belong to a word, and lower
//! case for the scripts most catalogs are written in. The standard library's Unicode
//! tables (`char::is_alphanumeric`, `str::to_lowercase`) would cost every user tens of
//! kilobytes of wasm.

/// Whether `c` is part of a word: ASCII letters and digits, and any non-ASCII character
/// outside the common punctuation blocks (no Unicode property tables: they would cost
/// every user tens of kilobytes of wasm).
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    !matches!(c as u32,
        0x80..=0xBF // Latin-1 punctuation and symbols
        | 0xD7 | 0xF7 // × ÷
        | 0x2000..=0x2BFF // general punctuation, symbols, arrows, shapes
        | 0x3000..=0x303F // CJK punctuation
        | 0xFE30..=0xFE4F | 0xFF00..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
}

/// Lower case for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic capitals; other
/// characters as they are.
pub fn fold(c: char) -> char {
    let u = c as u32;
    let lower = match u {
        0x41..=0x5A => u + 32,
        0xC0..=0xDE if u != 0xD7 => u + 32,
        0x100..=0x137 | 0x14A..=0x177 if u.is_multiple_of(2) => u + 1,
        0x139..=0x148 | 0x179..=0x17E if !u.is_multiple_of(2) => u + 1,
        0x391..=0x3A9 if u != 0x3A2 => u + 32,
        0x410..=0x42F => u + 32,
        0x400..=0x40F => u + 80,
        _ => u,
    };
    char::from_u32(lower).unwrap_or(c)
}

/// Upper case for the same scripts as [`fold`] (its inverse there); other characters as
/// they are.
pub fn unfold(c: char) -> char {
    let u = c as u32;
    let upper = match u {
        0x61..=0x7A => u - 32,
        0xE0..=0xFE if u != 0xF7 => u - 32,
        0x100..=0x137 | 0x14A..=0x177 if !u.is_multiple_of(2) => u - 1,
        0x139..=0x148 | 0x179..=0x17E if u.is_multiple_of(2) => u - 1,
        0x3B1..=0x3C9 if u != 0x3C2 => u - 32,
        0x430..=0x44F => u - 32,
        0x450..=0x45F => u - 80,
        _ => u,
    };
    char::from_u32(upper).unwrap_or(c)
}
