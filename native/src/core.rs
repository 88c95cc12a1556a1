//! The fingerprint pipeline of `es_simhash.fingerprint.Fingerprinter.fingerprint_many` (version 6), in Rust.
//!
//! Every step mirrors the Python reference (which stays the definition; `tests/test_native_fingerprint.py`
//! compares the two bit for bit): `text._normalize_many`, `text.segment` (jieba-rs 0.11.0 = rjieba 0.2.2, plus
//! the re-split rule `text._jieba_compatible`), `Fingerprinter._token_weights`, the SimHash of
//! `_simhash_chunk`, `text._keys_many`, `_signatures`, `_bottom_k`, `content_hashes`, `sentence_hashes`,
//! `_word_bags`. Character properties come from `tables.rs`, generated from Python (`gen_tables.py`), and the fold
//! of `es_simhash.fold` (script, invisible characters, romanisation) from `fold_tables.rs`, generated likewise.
//!
//! A text that cannot be guaranteed identical is answered `None` ("fallback needed"): the Python side then
//! computes it (a code point unassigned in Python's Unicode database, where the `unicode-normalization` crate's
//! newer Unicode could differ; sums of weights beyond 2^53, where Python's float64 sums could round; a
//! `sublinear` count beyond the logarithm table handed in from numpy).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{OnceLock, RwLock};

use jieba_rs::Jieba;
use rustc_hash::{FxHashMap, FxHashSet};
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

use crate::fold_tables;
use crate::idf::IdfTable;
use crate::tables;

pub const WEIGHT_SCALE: f64 = 1024.0;
/// The fingerprint version this core computes (`es_simhash.fingerprint.FINGERPRINT_VERSION` must equal it).
pub const FINGERPRINT_VERSION: u32 = 15;
const SKETCH_BIT: u64 = 1 << 63;
const CJK_SENTENCE_BIT: u64 = 1 << 62;
const GOLDEN: u64 = 0x9E3779B97F4A7C15;
const M1: u64 = 0xBF58476D1CE4E5B9;
const M2: u64 = 0x94D049BB133111EB;
const SHINGLE_MUL: u64 = 0x100000001B3;
/// Set in a fuzzy sentence hash (version 7): the 32 bits where a sentence hash keeps its bag (`model.FUZZY_MARK`).
const FUZZY_MARK: u64 = 0xFFFF_FFFF << 30;
/// The bits of a shingle hash a fuzzy hash keeps.
const FUZZY_KEEP: u64 = (1 << 62) | ((1 << 30) - 1);
const MAX_CACHE: usize = 4_000_000;
const EXACT_LIMIT: u64 = 1 << 53; // float64 sums of whole numbers are exact below this

// -- character properties --------------------------------------------------------------------------------
const ALNUM: u8 = 1;
const SPACE: u8 = 2;
const LINEBREAK: u8 = 4;
const UNASSIGNED: u8 = 8;
const CASEFOLD: u8 = 16;
const CJK: u8 = 32;
const SENT_END: u8 = 64;
/// Unchanged by the whole normalisation, whatever surrounds it: assigned, no case folding, not a space, NFKC quick
/// check "yes" and combining class 0 (so a text of ASCII and such characters is already NFKC), and none of the
/// characters folded before NFKC (U+2026, U+3000, U+FF01..U+FF5E).
const SIMPLE: u8 = 128;

/// (an array, not a slice: indexing it with a code point below 0x10000 needs no bounds check)
fn bmp_flags() -> &'static [u8; 0x10000] {
    static FLAGS: OnceLock<Box<[u8; 0x10000]>> = OnceLock::new();
    FLAGS.get_or_init(|| {
        let mut f: Box<[u8; 0x10000]> = vec![0u8; 0x10000].into_boxed_slice().try_into().unwrap();
        for &(a, b) in tables::ALNUM.iter() {
            for c in a..=b.min(0xFFFF) {
                f[c as usize] |= ALNUM;
            }
        }
        for &(a, b) in tables::UNASSIGNED.iter() {
            for c in a..=b.min(0xFFFF) {
                f[c as usize] |= UNASSIGNED;
            }
        }
        for &c in tables::SPACE.iter() {
            f[c as usize] |= SPACE;
        }
        for &c in tables::LINEBREAK.iter() {
            f[c as usize] |= LINEBREAK;
        }
        for &(c, _) in tables::CASEFOLD.iter() {
            if c < 0x10000 {
                f[c as usize] |= CASEFOLD;
            }
        }
        for (a, b) in [(0x3400u32, 0x4DBFu32), (0x4E00, 0x9FFF), (0xF900, 0xFAFF)] {
            for c in a..=b {
                f[c as usize] |= CJK;
            }
        }
        for c in "。！？!?;；…\r\n".chars() {
            f[c as usize] |= SENT_END;
        }
        for cp in 0x80u32..0x10000 {
            let Some(c) = char::from_u32(cp) else { continue };
            if f[cp as usize] & (UNASSIGNED | CASEFOLD | SPACE) == 0
                && !in_ranges(&fold_tables::INVISIBLE, cp)
                && unicode_normalization::char::canonical_combining_class(c) == 0
                && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
                && !(cp == 0x2026 || cp == 0x3000 || (0xFF01..=0xFF5E).contains(&cp))
            {
                f[cp as usize] |= SIMPLE;
            }
        }
        f
    })
}

/// Code points U+3400..U+9FFF (the two main ideograph blocks): bit `cp - 0x3400` set when [`bmp_flags`] has
/// `SIMPLE | CJK | ALNUM` for it and the script fold leaves it as it is (a Traditional character goes through
/// `emit`, which folds it). 3.4 KB where those flags take 27 KB of the table: the normalisation of a Chinese text
/// reads this after each text's segmentation has pushed most of it out of the CPU's first-level cache.
const IDEOGRAPH_BITS_FROM: u32 = 0x3400;
const IDEOGRAPH_BITS_LEN: u32 = 0xA000 - IDEOGRAPH_BITS_FROM;

fn ideograph_bits() -> &'static [u64; (IDEOGRAPH_BITS_LEN / 64) as usize] {
    static BITS: OnceLock<[u64; (IDEOGRAPH_BITS_LEN / 64) as usize]> = OnceLock::new();
    BITS.get_or_init(|| {
        let f = bmp_flags();
        let mut bits = [0u64; (IDEOGRAPH_BITS_LEN / 64) as usize];
        for off in 0..IDEOGRAPH_BITS_LEN {
            let cp = IDEOGRAPH_BITS_FROM + off;
            if f[cp as usize] & (SIMPLE | CJK | ALNUM) == SIMPLE | CJK | ALNUM && folded_raw(cp) == cp {
                bits[(off / 64) as usize] |= 1 << (off % 64);
            }
        }
        bits
    })
}

// -- the fold of version 6 (es_simhash.fold) -----------------------------------------------------------------
static FOLD_ON: AtomicBool = AtomicBool::new(true);

/// Turn the fold off (`false`) or on: for `bench/fingerprint.py`, which times the fold against no fold. Off, the
/// fingerprints are not version 6's.
pub fn set_fold(on: bool) {
    FOLD_ON.store(on, Ordering::Relaxed);
}

#[inline]
fn fold_on() -> bool {
    FOLD_ON.load(Ordering::Relaxed)
}

/// The script fold of a code point (`fold_table()`), whether or not the fold is on.
fn folded_raw(cp: u32) -> u32 {
    match fold_tables::FOLD.binary_search_by(|&(a, _)| a.cmp(&cp)) {
        Ok(i) => fold_tables::FOLD[i].1,
        Err(_) => cp,
    }
}

/// Code points the script fold changes: bit `cp` set (the BMP; astral ones are looked up).
fn foldable_bits() -> &'static [u64; 1024] {
    static BITS: OnceLock<[u64; 1024]> = OnceLock::new();
    BITS.get_or_init(|| {
        let mut bits = [0u64; 1024];
        for &(a, _) in fold_tables::FOLD.iter() {
            if a < 0x10000 {
                bits[(a / 64) as usize] |= 1 << (a % 64);
            }
        }
        bits
    })
}

/// The first code point the script fold changes (`gen_tables.py` checks it: `FOLD` is sorted).
const FOLD_FROM: u32 = fold_tables::FOLD[0].0;

/// `fold_table().get(c, c)` (whether or not the fold is on: `Collapse` asks).
#[inline]
fn fold_char(c: char, foldable: &[u64; 1024]) -> char {
    let cp = c as u32;
    if cp < FOLD_FROM || cp < 0x10000 && foldable[(cp / 64) as usize] >> (cp % 64) & 1 == 0 {
        return c;
    }
    char::from_u32(folded_raw(cp)).unwrap_or(c)
}

/// `fold.is_invisible` (when the fold is on).
#[inline]
fn invisible(cp: u32) -> bool {
    fold_on() && in_ranges(&fold_tables::INVISIBLE, cp)
}

/// `fold._IDEOGRAPH`: the ideographs romanisation can follow.
#[inline]
fn annotatable(c: char) -> bool {
    let cp = c as u32;
    (0x3400..=0x4DBF).contains(&cp) || (0x4E00..=0x9FFF).contains(&cp) || (0xF900..=0xFAFF).contains(&cp)
        || (0x20000..=0x3134F).contains(&cp)
}

fn untoned(c: char) -> Option<char> {
    fold_tables::TONED.binary_search_by(|&(a, _)| a.cmp(&c)).ok().map(|i| fold_tables::TONED[i].1)
}

/// A letter of `fold._PINYIN_LETTERS`: a-z, ü, ê and the vowels with a tone mark.
#[inline]
fn pinyin_letter(c: char) -> bool {
    c.is_ascii_lowercase() || c == 'ü' || c == 'ê' || untoned(c).is_some()
}

fn is_zhuyin_letter(c: char) -> bool {
    let cp = c as u32;
    (0x3105..=0x312F).contains(&cp) || (0x31A0..=0x31BF).contains(&cp)
}

fn is_zhuyin_tone(c: char) -> bool {
    matches!(c as u32, 0x02C7 | 0x02C9 | 0x02CA | 0x02CB)
}

/// `fold._ZHUYIN.fullmatch(s)`: one to four letters, then a tone mark or the neutral tone's dot as NFKC leaves it
/// (a space and U+0307); or that dot (with or without the space) before them.
fn zhuyin(s: &[char]) -> bool {
    let letters = |t: &[char]| (1..=4).contains(&t.len()) && t.iter().all(|&c| is_zhuyin_letter(c));
    let after_dot = match s {
        [' ', '\u{307}', rest @ ..] | ['\u{307}', rest @ ..] => Some(rest),
        _ => None,
    };
    if after_dot.is_some_and(letters) {
        return true;
    }
    match s {
        [body @ .., ' ', '\u{307}'] if letters(body) => true,
        [body @ .., last] if is_zhuyin_tone(*last) && letters(body) => true,
        _ => letters(s),
    }
}

/// `fold._syllable(s, bare)`.
fn syllable(s: &[char], bare: bool) -> bool {
    if !bare && zhuyin(s) {
        return true;
    }
    let toned = s.iter().any(|&c| untoned(c).is_some());
    if bare && !toned {
        return false;
    }
    let body = match s {
        [body @ .., last] if !bare && ('1'..='5').contains(last) => body,
        _ => s,
    };
    let base: String = body.iter().map(|&c| untoned(c).unwrap_or(c)).collect();
    fold_tables::PINYIN.binary_search(&base.as_str()).is_ok()
}

/// What `Collapse` notes while writing a normalised text: where romanisation may follow an ideograph, and the full
/// stops to write as "。".
struct Annotations {
    /// byte offsets of the brackets right after an ideograph, ascending
    brackets: Vec<usize>,
    /// a vowel with a tone mark somewhere
    toned: bool,
    /// byte offsets of the "." that `text._FULL_STOP` reads as "。" (none in a text without an ideograph), ascending
    stops: Vec<usize>,
}

/// `fold.strip_annotations(normalized)`: bracketed syllables after an ideograph, then bare toned ones (each pass
/// over the text as it was before it, as `re.sub` goes). `None` when nothing is dropped (most brackets after an
/// ideograph hold Chinese: one look at their first characters).
fn strip_annotations(normalized: &str, places: &Annotations) -> Option<String> {
    let bracketed = strip_bracketed(normalized, &places.brackets);
    let text = bracketed.as_deref().unwrap_or(normalized);
    match if places.toned { strip_bare(text) } else { None } {
        Some(s) => Some(s),
        None => bracketed,
    }
}

/// `fold._BRACKETED.sub(...)` at the brackets `at` (right after an ideograph): one to eight characters that are not
/// a bracket or a line break, then `)`; dropped when they are one pinyin or zhuyin syllable.
fn strip_bracketed(s: &str, at: &[usize]) -> Option<String> {
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes of `s` already in `out` (or dropped)
    let mut inner = ['\0'; 9];
    for &i in at {
        if i < copied {
            continue; // (inside a bracket already dropped)
        }
        let mut n = 0;
        let mut close = None;
        for (j, d) in s[i + 1..].char_indices().take(9) {
            if d == '(' || d == '\n' {
                break;
            }
            if d == ')' {
                close = Some(i + 1 + j);
                break;
            }
            inner[n] = d;
            n += 1;
        }
        if let Some(end) = close {
            if (1..=8).contains(&n) && syllable(&inner[..n], false) {
                let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
                o.push_str(&s[copied..i]);
                copied = end + 1;
            }
        }
    }
    let mut o = out?;
    o.push_str(&s[copied..]);
    Some(o)
}

/// `fold._BARE.sub(...)`: a run of pinyin letters right after an ideograph, at most seven, not followed by a digit;
/// dropped when it is one syllable with a tone mark.
fn strip_bare(s: &str) -> Option<String> {
    if !s.chars().any(toned) {
        return None;
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        if i > 0 && annotatable(chars[i - 1]) && pinyin_letter(chars[i]) {
            let run = chars[i..].iter().take_while(|&&c| pinyin_letter(c)).count();
            let next = chars.get(i + run);
            if run <= 7 && !next.is_some_and(|c| c.is_ascii_digit()) && syllable(&chars[i..i + run], true) {
                i += run;
                changed = true;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    changed.then_some(out)
}

/// A vowel with a tone mark (`fold.TONED`: all of them in U+00E0..U+01F9, but for three).
#[inline]
fn toned(c: char) -> bool {
    let cp = c as u32;
    ((0xE0..=0x1F9).contains(&cp) || (0x1E3F..=0x1EC1).contains(&cp)) && untoned(c).is_some()
}

fn in_ranges(ranges: &[(u32, u32)], c: u32) -> bool {
    match ranges.binary_search_by(|&(a, _)| a.cmp(&c)) {
        Ok(_) => true,
        Err(0) => false,
        Err(i) => c <= ranges[i - 1].1,
    }
}

#[inline]
fn flags(c: char) -> u8 {
    let cp = c as u32;
    if cp < 0x10000 {
        return bmp_flags()[cp as usize];
    }
    // astral: never a space, line break, sentence end or CJK (of the three ranges)
    let mut f = 0;
    if in_ranges(&tables::ALNUM, cp) {
        f |= ALNUM;
    }
    if in_ranges(&tables::UNASSIGNED, cp) {
        f |= UNASSIGNED;
    }
    if tables::CASEFOLD.binary_search_by(|&(a, _)| a.cmp(&cp)).is_ok() {
        f |= CASEFOLD;
    }
    f
}

#[inline]
fn is_alnum(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    flags(c) & ALNUM != 0
}

#[inline]
fn is_cjk_char(c: char) -> bool {
    let cp = c as u32;
    (0x3400..=0x4DBF).contains(&cp) || (0x4E00..=0x9FFF).contains(&cp) || (0xF900..=0xFAFF).contains(&cp)
}

pub fn has_cjk(s: &str) -> bool {
    // every CJK ideograph is 3 bytes in UTF-8, lead byte 0xE3..0xEF
    s.bytes().any(|b| (0xE3..=0xEF).contains(&b)) && s.chars().any(is_cjk_char)
}

fn casefold(c: char) -> Option<&'static str> {
    let cp = c as u32;
    tables::CASEFOLD.binary_search_by(|&(a, _)| a.cmp(&cp)).ok().map(|i| tables::CASEFOLD[i].1)
}

// -- normalisation (text._normalize_many) ----------------------------------------------------------------
/// Writes the casefolded text with whitespace collapsed: a run with a line boundary -> "\n", any other run ->
/// " ", none at the ends, and no space between two CJK ideographs.
///
/// With `keys` it also builds what [`keys`] returns for the text it writes, on the fly (one pass less).
struct Collapse {
    out: String,
    pending: u8, // 0: none, 1: a space, 2: a line break
    last: char,
    keys: Option<Keys>,
    /// the fold is on ([`set_fold`], read once per text), and the code points it changes
    fold: bool,
    foldable: &'static [u64; 1024],
    /// where a bracket was written right after an ideograph (byte offsets in `out`), and whether a vowel with a tone
    /// mark was: the places `strip_annotations` looks at
    brackets: Vec<usize>,
    toned: bool,
    /// an ideograph was written (`text._CJK`); the full stops read as "。" so far (byte offsets in `out`), and the
    /// last "." written when what follows it decides (its offset, and whether an ASCII letter or digit is before it)
    cjk: bool,
    stops: Vec<usize>,
    dot: Option<(usize, bool)>,
}

/// The content key and the spans of the sentence keys (see [`keys`]) of the text written so far.
pub struct Keys {
    pub content: String,
    pub n_chars: usize,
    pub sentences: Vec<(usize, usize, usize)>, // (byte start, byte end in content, chars)
    /// the content key's character bag (sum of the character hashes; see `bag`) and whether it has an ideograph
    pub bag: u64,
    pub cjk: bool,
    /// `_ASCII_RUN_WITH_SYMBOLS` (`[a-z0-9][.+#&_%\-]+[a-z0-9]`) matches the text (see [`needs_resplit`])
    pub resplit: bool,
    rs: u8, // its state: 0, 1 after [a-z0-9], 2 after [a-z0-9][.+#&_%-]+
    start: usize,
    count: usize,
    min_len: usize,
    dot: bool, // the last character written was "." (a sentence end if whitespace or the end follows)
    lead: Lead,
}

/// How the sentence being written opens (`text._Openings`), by its first character that is neither whitespace nor a
/// sentence end: "—" or "―", or "-" followed at once by "-", is an attribution, no sentence key; "【" opens a label,
/// which its first "】" ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// nothing but whitespace and sentence ends yet
    Fresh,
    /// a "-" (an attribution if "-" follows at once)
    Hyphen,
    Attribution,
    Label,
    Other,
}

impl Lead {
    /// After the character `c` (not whitespace), `joined`: it follows the one before with no whitespace between.
    #[inline]
    fn after(self, c: char, joined: bool) -> Lead {
        match self {
            Lead::Fresh => match c {
                '-' => Lead::Hyphen,
                '\u{2014}' | '\u{2015}' => Lead::Attribution,
                '\u{3010}' => Lead::Label,
                _ => Lead::Other,
            },
            Lead::Hyphen if c == '-' && joined => Lead::Attribution,
            Lead::Hyphen => Lead::Other,
            lead => lead,
        }
    }
}

impl Keys {
    fn new(capacity: usize, min_sentence_chars: usize) -> Self {
        Keys {
            content: String::with_capacity(capacity),
            n_chars: 0,
            sentences: Vec::new(),
            start: 0,
            count: 0,
            min_len: min_sentence_chars.max(1),
            dot: false,
            lead: Lead::Fresh,
            bag: 0,
            cjk: false,
            resplit: false,
            rs: 0,
        }
    }

    #[inline]
    fn push(&mut self, ch: char) {
        self.content.push(ch);
        self.count += 1;
        self.n_chars += 1;
        self.bag = self.bag.wrapping_add(splitmix64(ch as u64) >> 32);
    }

    #[inline]
    fn end_sentence(&mut self) {
        if self.count >= self.min_len && self.lead != Lead::Attribution {
            self.sentences.push((self.start, self.content.len(), self.count));
        }
        self.start = self.content.len();
        self.count = 0;
        self.lead = Lead::Fresh;
    }

    fn finish(mut self) -> Self {
        self.end_sentence();
        self
    }
}

impl Collapse {
    fn new(capacity: usize, keys: Option<usize>) -> Self {
        Collapse {
            out: String::with_capacity(capacity),
            pending: 0,
            last: '\0',
            keys: keys.map(|m| Keys::new(capacity, m)),
            fold: fold_on(),
            foldable: foldable_bits(),
            brackets: Vec::new(),
            toned: false,
            cjk: false,
            stops: Vec::new(),
            dot: None,
        }
    }

    /// The "." written last and followed by `next` (`None`: the end of the text): a full stop read as "。" unless
    /// `next` is a "." or it stands between two ASCII letters or digits (`text._FULL_STOP`).
    #[inline]
    fn settle_dot(&mut self, next: Option<char>) {
        if let Some((at, after_alnum)) = self.dot.take() {
            if !(next == Some('.') || after_alnum && next.is_some_and(|c| c.is_ascii_alphanumeric())) {
                self.stops.push(at);
            }
        }
    }

    /// A "." about to be written at the end of `out`: it may be a full stop unless the character before it is a
    /// "." (".."), or an ASCII letter after a full stop ("u.s.", "e.g.").
    #[inline]
    fn note_dot(&mut self) {
        let mut before = self.out.chars().rev();
        let (prev, prev2) = (before.next(), before.next());
        if prev != Some('.') && !(prev.is_some_and(|c| c.is_ascii_alphabetic()) && matches!(prev2, Some('.' | '。'))) {
            self.dot = Some((self.out.len(), prev.is_some_and(|c| c.is_ascii_alphanumeric())));
        }
    }

    #[inline]
    fn space(&mut self, linebreak: bool) {
        if !self.out.is_empty() {
            if linebreak {
                self.pending = 2;
            } else if self.pending == 0 {
                self.pending = 1;
            }
        }
    }

    /// An ASCII character (folded to lower case; whitespace collapsed).
    #[inline]
    fn ascii(&mut self, b: u8) {
        match b {
            b' ' | 0x09 | 0x1F => self.space(false),
            0x0A..=0x0D | 0x1C..=0x1E => self.space(true),
            _ => self.emit(b.to_ascii_lowercase() as char),
        }
    }

    /// A character that is not whitespace, already case-folded (folded to its script here).
    #[inline]
    fn emit(&mut self, ch: char) {
        let ch = if self.fold { fold_char(ch, self.foldable) } else { ch };
        if self.dot.is_some() {
            self.settle_dot(Some(match self.pending {
                0 => ch,
                1 => ' ',
                _ => '\n',
            }));
        }
        self.cjk |= is_cjk_char(ch);
        if ch == '(' && self.pending == 0 && annotatable(self.last) {
            self.brackets.push(self.out.len());
        } else if ch as u32 >= 0xE0 && toned(ch) {
            self.toned = true;
        }
        if let Some(k) = &mut self.keys {
            if self.pending != 0 {
                if k.dot || self.pending == 2 {
                    k.end_sentence(); // "." then whitespace; "\n"
                }
                k.rs = 0;
            }
            k.lead = k.lead.after(ch, self.pending == 0);
            k.dot = false;
            let cp = ch as u32;
            if cp < 0x80 {
                let b = cp as u8;
                if b.is_ascii_alphanumeric() {
                    k.push(ch);
                    if k.rs == 2 {
                        k.resplit = true;
                    }
                    k.rs = 1;
                } else {
                    match b {
                        b'.' => k.dot = true,
                        b'!' | b'?' | b';' => k.end_sentence(),
                        _ => {}
                    }
                    let sym = matches!(b, b'.' | b'+' | b'#' | b'&' | b'_' | b'%' | b'-');
                    k.rs = if sym && k.rs >= 1 { 2 } else { 0 };
                }
            } else {
                k.rs = 0;
                let f = flags(ch);
                if f & ALNUM != 0 {
                    k.push(ch);
                    k.cjk |= f & CJK != 0;
                } else if f & SENT_END != 0 || (ch == '\u{3011}' && k.lead == Lead::Label) {
                    k.end_sentence();
                }
            }
        }
        if self.pending == 2 {
            self.out.push('\n');
        } else if self.pending == 1 && !(is_cjk_char(self.last) && is_cjk_char(ch)) {
            self.out.push(' ');
        }
        self.pending = 0;
        if ch == '.' {
            self.note_dot();
        }
        self.out.push(ch);
        self.last = ch;
    }

    fn finish(mut self) -> (String, Option<Keys>, Annotations) {
        self.settle_dot(None);
        if !self.cjk {
            self.stops.clear();
        }
        (self.out, self.keys.map(Keys::finish), Annotations { brackets: self.brackets, toned: self.toned, stops: self.stops })
    }
}

/// `text.normalize(text)`, or `None` when the text holds a code point unassigned in Python's Unicode database.
pub fn normalize(text: &str) -> Option<String> {
    normalize_keyed(text, None).map(|(s, _)| s)
}

/// [`normalize`] and, of its result, [`keys`] (computed while writing it).
pub fn normalize_with_keys(text: &str, min_sentence_chars: usize) -> Option<(String, Keys)> {
    normalize_keyed(text, Some(min_sentence_chars)).map(|(s, k)| (s, k.unwrap()))
}

fn normalize_keyed(text: &str, keys: Option<usize>) -> Option<(String, Option<Keys>)> {
    let (mut s, mut k, mut places) = normalize_fast(text, keys).or_else(|| normalize_full(text, keys))?;
    if (!places.brackets.is_empty() || places.toned) && fold_on() {
        if let Some(stripped) = strip_annotations(&s, &places) {
            // written again: a space between two ideographs that the annotation kept apart goes, and the keys follow
            (s, k, places) = rewrite(&stripped, keys);
        }
    }
    if places.stops.is_empty() {
        return Some((s, k));
    }
    // the full stops written "。" (`text._FULL_STOP`), and written again so that the keys end their sentences there
    let mut mapped = String::with_capacity(s.len() + 2 * places.stops.len());
    let mut copied = 0;
    for &at in &places.stops {
        mapped.push_str(&s[copied..at]);
        mapped.push('。');
        copied = at + 1;
    }
    mapped.push_str(&s[copied..]);
    let (s, k, _) = rewrite(&mapped, keys);
    Some((s, k))
}

/// A normalised text written again (the same text: `Collapse` leaves it as it is), with its keys.
fn rewrite(normalized: &str, keys: Option<usize>) -> (String, Option<Keys>, Annotations) {
    let mut w = Collapse::new(normalized.len(), keys);
    for c in normalized.chars() {
        if c.is_ascii() {
            w.ascii(c as u8);
        } else {
            w.emit(c);
        }
    }
    w.finish()
}

/// The common case in one pass: ASCII, full-width forms, U+3000, U+2026, spaces and [`SIMPLE`] characters only
/// (then the text after the fold is already NFKC). `None`: any other character (use [`normalize_full`]).
fn normalize_fast(text: &str, keys: Option<usize>) -> Option<(String, Option<Keys>, Annotations)> {
    let table = bmp_flags();
    let ideographs = ideograph_bits();
    let bytes = text.as_bytes();
    let mut w = Collapse::new(text.len() + 8, keys);
    let mut i = 0;
    while i < bytes.len() {
        if w.pending == 0 {
            // a run of ideographs (of U+3400..U+9FFF, see `ideograph_bits`) right after a non-space (most characters
            // of Chinese text): what `emit` does for each, shortly, and their bytes copied as they are, once for the
            // run (each is 3 bytes in UTF-8, lead byte 0xE3..0xE9). Any other character, even one `emit` handles
            // the same way (an ideograph of U+F900..U+FAFF), ends the run and goes through `emit`.
            let (start, mut bag, mut last) = (i, 0u64, 0u32);
            // (one length test per character: a lead byte 0xE3..0xE9 is followed by its two continuation bytes in
            // valid UTF-8)
            while let [b0 @ 0xE3..=0xE9, b1, b2, ..] = bytes[i..] {
                let cp = (b0 as u32 & 0x0F) << 12 | (b1 as u32 & 0x3F) << 6 | (b2 as u32 & 0x3F);
                let off = cp.wrapping_sub(IDEOGRAPH_BITS_FROM);
                if off >= IDEOGRAPH_BITS_LEN || ideographs[(off / 64) as usize] >> (off % 64) & 1 == 0 {
                    break;
                }
                bag = bag.wrapping_add(splitmix64(cp as u64) >> 32);
                last = cp;
                i += 3;
            }
            if i > start {
                let run = &text[start..i];
                if w.dot.is_some() {
                    w.settle_dot(Some('中')); // (an ideograph follows it)
                }
                w.cjk = true;
                if let Some(k) = &mut w.keys {
                    k.lead = k.lead.after('中', true);
                    k.dot = false;
                    k.rs = 0;
                    k.cjk = true;
                    k.content.push_str(run);
                    k.count += run.len() / 3;
                    k.n_chars += run.len() / 3;
                    k.bag = k.bag.wrapping_add(bag);
                }
                w.out.push_str(run);
                w.last = char::from_u32(last).unwrap();
                continue;
            }
        }
        let b = bytes[i];
        if b < 0x80 {
            w.ascii(b);
            i += 1;
            continue;
        }
        let c = text[i..].chars().next().unwrap();
        i += c.len_utf8();
        let cp = c as u32;
        if cp >= 0x10000 {
            return None;
        }
        let f = table[cp as usize];
        if f & SIMPLE != 0 {
            w.emit(c);
        } else if invisible(cp) {
            continue;
        } else if (0xFF01..=0xFF5E).contains(&cp) {
            w.ascii((cp - 0xFEE0) as u8);
        } else if cp == 0x3000 {
            w.space(false);
        } else if cp == 0x2026 {
            w.emit('.');
            w.emit('.');
            w.emit('.');
        } else if f & SPACE != 0 && f & UNASSIGNED == 0 {
            // NFKC maps a space to U+0020 or to itself (a line boundary stays one), a starter that composes with
            // nothing before it; a combining mark after it is not SIMPLE, so that case never gets here.
            w.space(f & LINEBREAK != 0);
        } else {
            return None;
        }
    }
    Some(w.finish())
}

/// Step by step as Python does it: fold, NFKC, casefold and collapse.
fn normalize_full(text: &str, keys: Option<usize>) -> Option<(String, Option<Keys>, Annotations)> {
    // 1. full-width ASCII and U+3000 folded, U+2026 -> "..." (what Python does before NFKC)
    let mut s = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        let cp = c as u32;
        if cp < 0x80 {
            s.push(c);
        } else if (0xFF01..=0xFF5E).contains(&cp) {
            s.push(char::from_u32(cp - 0xFEE0).unwrap());
        } else if cp == 0x3000 {
            s.push(' ');
        } else if cp == 0x2026 {
            s.push_str("...");
        } else {
            if flags(c) & UNASSIGNED != 0 {
                return None;
            }
            s.push(c);
        }
    }
    // 2. NFKC (the identity when the quick check says so)
    if is_nfkc_quick(s.chars()) != IsNormalized::Yes {
        s = s.nfkc().collect();
    }
    // 3. invisible characters dropped; 4. casefold, collapse whitespace, fold the script; 5. no space between two
    // CJK ideographs (romanisation after ideographs: `normalize_keyed`)
    let mut w = Collapse::new(s.len(), keys);
    for c in s.chars() {
        if c.is_ascii() {
            w.ascii(c as u8);
            continue;
        }
        if invisible(c as u32) {
            continue;
        }
        let f = flags(c);
        if f & SPACE != 0 {
            w.space(f & LINEBREAK != 0);
        } else if f & CASEFOLD != 0 {
            for ch in casefold(c).unwrap().chars() {
                w.emit(ch);
            }
        } else {
            w.emit(c);
        }
    }
    Some(w.finish())
}

// -- segmentation (text.segment) ---------------------------------------------------------------------------
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(|| {
        let Some(path) = SEGMENTER_SNAPSHOT.get() else { return Jieba::new() };
        if let Some(jieba) = std::fs::read(path).ok().and_then(|bytes| Jieba::from_snapshot(&bytes)) {
            return jieba;
        }
        let jieba = Jieba::new();
        if let Some(bytes) = jieba.to_snapshot() {
            keep_snapshot(path, &bytes);
        }
        jieba
    })
}

/// Which dictionary a snapshot holds: jieba-rs's version and a hash of the vendored crate's sources and dictionary
/// (`build.rs`), so that no other build reads it back.
pub const SEGMENTER_SNAPSHOT_NAME: &str = concat!("jieba-rs-0.11.0-", env!("JIEBA_BUILD_ID"), ".snapshot");

/// Where the built dictionary is kept (set once, before the first segmentation: `set_segmenter_snapshot`); not
/// set, the dictionary is built from jieba-rs's text at every start, as published.
static SEGMENTER_SNAPSHOT: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Keep the built dictionary at `path` from now on (read at the start, written after a build). `false` when a path
/// was set already. (Set after the dictionary was built, it is not read: `start_segmenter` sets it first.)
pub fn set_segmenter_snapshot(path: std::path::PathBuf) -> bool {
    SEGMENTER_SNAPSHOT.set(path).is_ok()
}

/// Write a snapshot under a temporary name, then rename it: a reader never sees half of one (errors: not kept).
fn keep_snapshot(path: &std::path::Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let written = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&tmp, bytes)).and_then(|_| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[inline]
fn ascii_space(b: u8) -> bool {
    b == b' ' || (0x09..=0x0D).contains(&b) || (0x1C..=0x1F).contains(&b)
}

/// `_ASCII_RUN_WITH_SYMBOLS.search(normalized)`: `[a-z0-9][.+#&_%\-]+[a-z0-9]` (after the cheap symbol test).
fn needs_resplit(s: &str) -> bool {
    let b = s.as_bytes();
    let sym = |x: u8| matches!(x, b'.' | b'+' | b'#' | b'&' | b'_' | b'%' | b'-');
    let an = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if !b.iter().any(|&x| sym(x)) {
        return false;
    }
    let mut i = 0;
    while i + 2 < b.len() {
        if an(b[i]) && sym(b[i + 1]) {
            let mut j = i + 1;
            while j < b.len() && sym(b[j]) {
                j += 1;
            }
            if j < b.len() && an(b[j]) {
                return true;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    false
}

/// `text._jieba_compatible` on one token: pieces of `re.split(r"([a-zA-Z0-9]+(?:\.\d+)?%?)", t)`, empties dropped.
fn resplit<'a>(t: &'a str, out: &mut Vec<&'a str>) {
    let b = t.as_bytes();
    let n = b.len();
    let (mut i, mut seg) = (0, 0);
    while i < n {
        if b[i].is_ascii_alphanumeric() {
            let start = i;
            while i < n && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            if i + 1 < n && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                i += 1;
                while i < n && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < n && b[i] == b'%' {
                i += 1;
            }
            if seg < start {
                out.push(&t[seg..start]);
            }
            out.push(&t[start..i]);
            seg = i;
        } else {
            i += 1;
        }
    }
    if seg < n {
        out.push(&t[seg..]);
    }
}

/// `_LATIN_WORD.findall(text)`: `[^\W_]+(?:'[^\W_]+)*`.
fn latin_tokens<'a>(s: &'a str, out: &mut Vec<&'a str>) {
    let alnum_run_end = |from: usize| -> usize {
        let mut end = from;
        for (k, c) in s[from..].char_indices() {
            if !is_alnum(c) {
                return from + k;
            }
            end = from + k + c.len_utf8();
        }
        end
    };
    let mut i = 0;
    while i < s.len() {
        let c = s[i..].chars().next().unwrap();
        if is_alnum(c) {
            let start = i;
            i = alnum_run_end(i);
            while i < s.len() && s.as_bytes()[i] == b'\'' {
                match s[i + 1..].chars().next() {
                    Some(d) if is_alnum(d) => i = alnum_run_end(i + 1),
                    _ => break,
                }
            }
            out.push(&s[start..i]);
        } else {
            i += c.len_utf8();
        }
    }
}

/// `text.segment(normalized)` with rjieba: jieba-rs `cut(text, hmm=True)` plus the re-split rule, or words.
pub fn segment<'a>(normalized: &'a str, out: &mut Vec<&'a str>) {
    segment_known(normalized, has_cjk(normalized), || needs_resplit(normalized), |w, _| out.push(w))
}

/// [`segment`] when whether the text has an ideograph and needs the re-split rule is known already: each token
/// goes to `emit` with its length in characters (jieba-rs counts them anyway).
fn segment_known<'a>(normalized: &'a str, cjk: bool, needs: impl FnOnce() -> bool, mut emit: impl FnMut(&'a str, usize)) {
    if cjk {
        let tokens = jieba().cut(normalized, true);
        if needs() {
            let mut pieces = Vec::new();
            for tok in tokens {
                let w = tok.word;
                let b = w.as_bytes();
                if w.is_ascii()
                    && b.len() > 1
                    && !b.iter().all(|x| x.is_ascii_alphanumeric())
                    && !b.iter().all(|&x| ascii_space(x))
                {
                    resplit(w, &mut pieces);
                    for p in pieces.drain(..) {
                        emit(p, p.len()); // (ASCII)
                    }
                } else {
                    emit(w, tok.end - tok.start);
                }
            }
        } else {
            for tok in tokens {
                emit(tok.word, tok.end - tok.start);
            }
        }
    } else {
        let mut words = Vec::new();
        latin_tokens(normalized, &mut words);
        for w in words {
            emit(w, w.chars().count());
        }
    }
}

// -- keys (text._keys_many) ----------------------------------------------------------------------------------
/// The content key and the sentence keys (at least `min_sentence_chars` characters, text order) with their
/// lengths in characters.
pub fn keys(normalized: &str, min_sentence_chars: usize) -> (String, usize, Vec<(usize, usize, usize)>) {
    let min_len = min_sentence_chars.max(1);
    let mut content = String::with_capacity(normalized.len());
    let mut n_chars = 0usize;
    let mut sentences = Vec::new(); // (byte start, byte end in content, chars)
    let (mut start, mut count) = (0usize, 0usize);
    let (mut lead, mut joined) = (Lead::Fresh, false);
    let mut chars = normalized.chars().peekable();
    while let Some(c) = chars.next() {
        let end = if c == '.' {
            match chars.peek() {
                None => true,
                Some(&d) => {
                    if d.is_ascii() {
                        ascii_space(d as u8)
                    } else {
                        flags(d) & SPACE != 0
                    }
                }
            }
        } else if c.is_ascii() {
            c == '!' || c == '?' || c == ';' || c == '\r' || c == '\n'
        } else {
            flags(c) & SENT_END != 0 || (c == '\u{3011}' && lead == Lead::Label)
        };
        if end {
            if count >= min_len && lead != Lead::Attribution {
                sentences.push((start, content.len(), count));
            }
            start = content.len();
            count = 0;
            (lead, joined) = (Lead::Fresh, false);
            continue;
        }
        let space = if c.is_ascii() { ascii_space(c as u8) } else { flags(c) & SPACE != 0 };
        if space {
            joined = false;
            continue;
        }
        lead = lead.after(c, joined);
        joined = true;
        if is_alnum(c) {
            content.push(c);
            count += 1;
            n_chars += 1;
        }
    }
    if count >= min_len && lead != Lead::Attribution {
        sentences.push((start, content.len(), count));
    }
    (content, n_chars, sentences)
}

// -- hashes -------------------------------------------------------------------------------------------------
#[inline]
pub fn hash64(s: &str) -> u64 {
    let h = blake2b_simd::Params::new().hash_length(8).hash(s.as_bytes());
    u64::from_le_bytes(h.as_bytes().try_into().unwrap())
}

#[inline]
fn splitmix64(z: u64) -> u64 {
    mix64(z.wrapping_add(GOLDEN))
}

fn bag(key: &str) -> u64 {
    key.chars().fold(0u64, |acc, c| acc.wrapping_add(splitmix64(c as u64) >> 32)) & 0xFFFF_FFFF
}

/// [`hash64`] of each input, several at a time (`hash_many`: same parameters, same hashes).
fn hash64_many(inputs: &[&[u8]]) -> Vec<u64> {
    let mut params = blake2b_simd::Params::new();
    params.hash_length(8);
    let mut jobs: Vec<blake2b_simd::many::HashManyJob> =
        inputs.iter().map(|i| blake2b_simd::many::HashManyJob::new(&params, i)).collect();
    blake2b_simd::many::hash_many(jobs.iter_mut());
    jobs.iter().map(|j| u64::from_le_bytes(j.to_hash().as_bytes().try_into().unwrap())).collect()
}

pub fn sentence_hash(key: &str) -> u64 {
    sentence_hash_of(key, hash64(key))
}

/// [`sentence_hash`] with `hash64(key)` known.
fn sentence_hash_of(key: &str, h64: u64) -> u64 {
    let cjk = if has_cjk(key) { CJK_SENTENCE_BIT } else { 0 };
    cjk | (bag(key) << 30) | (h64 & ((1 << 30) - 1))
}

pub fn content_hash(key: &str) -> u64 {
    content_hash_of(key, bag(key), has_cjk(key), hash64(key))
}

/// [`content_hash`] with the key's bag, ideograph flag and `hash64` known.
fn content_hash_of(key: &str, bag: u64, cjk: bool, h64: u64) -> u64 {
    if key.is_empty() {
        return 0;
    }
    let cjk = if cjk { 1u64 << 63 } else { 0 };
    cjk | ((bag & ((1 << 31) - 1)) << 32) | (h64 & 0xFFFF_FFFF)
}

/// `_bottom_k` for one key: the `k` smallest distinct hashes of its `n`-character shingles, ascending.
/// `hashes.least_and_sum` of one key: the least hash of its `n`-character shingles and the wrapping sum of all of
/// them (`cps`: a buffer for its code points).
fn least_and_sum(key: &str, n: usize, cps: &mut Vec<u64>) -> (u64, u64) {
    cps.clear();
    cps.extend(key.chars().map(|c| c as u64));
    let len = cps.len();
    let n_sh = if len >= n { len - n + 1 } else { 1 };
    let width = len.min(n);
    let (mut least, mut total) = (u64::MAX, 0u64);
    for s in 0..n_sh {
        let mut h = n as u64;
        for &cp in &cps[s..s + width] {
            h = h.wrapping_mul(SHINGLE_MUL).wrapping_add(cp).wrapping_add(1);
        }
        let z = splitmix64(h) | SKETCH_BIT;
        least = least.min(z);
        total = total.wrapping_add(z);
    }
    (least, total)
}

fn bottom_k(key: &str, n: usize, k: usize) -> Vec<u64> {
    let cps: Vec<u64> = key.chars().map(|c| c as u64).collect();
    let len = cps.len();
    let n_sh = if len >= n { len - n + 1 } else { 1 };
    let width = len.min(n);
    let mut z: Vec<u64> = (0..n_sh)
        .map(|s| {
            let mut h = n as u64;
            for &cp in &cps[s..s + width] {
                h = h.wrapping_mul(SHINGLE_MUL).wrapping_add(cp).wrapping_add(1);
            }
            splitmix64(h) | SKETCH_BIT
        })
        .collect();
    z.sort_unstable();
    z.dedup();
    z.truncate(k);
    z
}

/// `Fingerprinter._add_line_sketches` for one text (`normalized`, with a sketch): when it has two or more lines whose
/// content keys hold at least `min_sentence_chars` characters (twice that without an ideograph), each such line's
/// bottom-`line_sketch` shingle hashes are merged into `sketch` (kept ascending, distinct).
fn add_line_sketches(sketch: &mut Vec<u64>, normalized: &str, cjk: bool, n: usize, cfg: &Config) {
    let least = if cjk { cfg.min_sentence_chars } else { 2 * cfg.min_sentence_chars };
    let lines: Vec<String> = normalized
        .split('\n')
        .map(|line| line.chars().filter(|&c| is_alnum(c)).collect::<String>())
        .filter(|k| k.chars().count() >= least)
        .collect();
    if lines.len() < 2 {
        return;
    }
    for line in &lines {
        sketch.extend(bottom_k(line, n, cfg.line_sketch));
    }
    sketch.sort_unstable();
    sketch.dedup();
}

// -- fuzzy sentence hashes and the number bag (version 7) ----------------------------------------------------
/// `reference.MIN_FUZZY_SENTENCES`: a text gets fuzzy hashes when it has at least this many distinct long sentences.
const MIN_FUZZY_SENTENCES: usize = 3;

/// `ReferenceEngine._fuzzy` for one text: for each of its `n` longest distinct sentence keys (stable: text order on
/// ties), the least hash of its shingles (3 characters for a key with an ideograph, else the other length), marked;
/// each once, ascending; and the digests: the low 4 bits of the sum of the key's shingle hashes at the place of its
/// fuzzy hash (the first 16). None for a text of fewer than `MIN_FUZZY_SENTENCES` distinct keys.
fn fuzzy_hashes(key: &str, spans: &[(usize, usize, usize)], n: usize, shingle: (usize, usize)) -> (Vec<u64>, u64) {
    let mut out: Vec<u64> = Vec::new();
    let mut digests = 0u64;
    if n == 0 || spans.is_empty() {
        return (out, digests);
    }
    let mut distinct: Vec<&str> = Vec::new();
    for &(s, e, _) in spans {
        if !distinct.contains(&&key[s..e]) {
            distinct.push(&key[s..e]);
            if distinct.len() == MIN_FUZZY_SENTENCES {
                break;
            }
        }
    }
    if distinct.len() < MIN_FUZZY_SENTENCES {
        return (out, digests);
    }
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by(|&a, &b| spans[b].2.cmp(&spans[a].2));
    let mut chosen: Vec<(usize, usize)> = Vec::new();
    for i in order {
        let (s, e, _) = spans[i];
        if !chosen.iter().any(|&(cs, ce)| key[cs..ce] == key[s..e]) {
            chosen.push((s, e));
            if chosen.len() == n {
                break;
            }
        }
    }
    let mut found: Vec<(u64, u64)> = Vec::new();
    let mut cps: Vec<u64> = Vec::new();
    for (s, e) in chosen {
        let k = &key[s..e];
        let len = if has_cjk(k) { shingle.0 } else { shingle.1 };
        let (least, total) = least_and_sum(k, len, &mut cps);
        let h = FUZZY_MARK | (least & FUZZY_KEEP);
        if !found.iter().any(|&(f, _)| f == h) {
            found.push((h, total & 0xF));
        }
    }
    found.sort_unstable();
    for (j, &(h, d)) in found.iter().enumerate() {
        if j < 16 {
            digests |= d << (4 * j);
        }
        out.push(h);
    }
    (out, digests)
}

/// The splitmix64 finaliser without the golden-ratio step (`hashes._mix64`).
#[inline]
fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(M1);
    let z = (z ^ (z >> 27)).wrapping_mul(M2);
    z ^ (z >> 31)
}

const MIN_NUMBERS: usize = 3;
const TERMINAL: &[char] = &['。', '！', '？', '!', '?', '…', '.', '．', '｡'];
const CLOSING: &[char] = &['”', '’', '"', '\'', '」', '』', ')', '）', '》', ']', '］', '〕', '＂', '＇'];

/// `text._BYLINE`: where the line's final part of 1 to 60 characters in brackets (a reporter's name, a reader's
/// address, a note) begins, if it ends with one.
fn byline_start(line: &str) -> Option<usize> {
    if !(line.ends_with(')') || line.ends_with('）')) {
        return None;
    }
    let inner = &line[..line.len() - line.chars().next_back()?.len_utf8()];
    let (open, c) = inner.char_indices().rev().find(|&(_, c)| matches!(c, '(' | ')' | '（' | '）'))?;
    let n = inner[open + c.len_utf8()..].chars().count();
    (matches!(c, '(' | '（') && (1..=60).contains(&n)).then_some(open)
}

/// `text.ends_sentence`: the line ends with a sentence's end, closing marks after it and a final part in brackets
/// (`byline_start`) left aside.
fn ends_sentence(line: &str) -> bool {
    let line = byline_start(line).map_or(line, |open| &line[..open]);
    line.trim_end_matches(CLOSING).ends_with(TERMINAL)
}

/// `hashes._body_line`: a line whose numbers are the event's (it ends a sentence, or holds more ASCII digits than
/// other letters, digits and ideographs).
fn body_line(line: &str) -> bool {
    if ends_sentence(line) {
        return true;
    }
    let digits = line.bytes().filter(|b| b.is_ascii_digit()).count();
    digits > 0 && 2 * digits > line.chars().filter(|&c| is_alnum(c)).count()
}

/// `hashes.number_bag` of a normalised text.
fn number_bag(normalized: &str) -> u64 {
    let mut numbers: Vec<&str> = Vec::new();
    for line in normalized.split('\n') {
        if !line.bytes().any(|b| b.is_ascii_digit()) || !body_line(line) {
            continue;
        }
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !b[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            numbers.push(&line[start..i]);
        }
    }
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.len() < MIN_NUMBERS {
        return 0;
    }
    let mut bag = 0u64;
    for n in numbers {
        let h = mix64(n.bytes().fold(n.len() as u64, |h, b| h.wrapping_mul(SHINGLE_MUL).wrapping_add(b as u64 + 1)));
        bag |= 1 << (h >> 58);
    }
    bag
}

// -- events (fingerprint/events.py) --------------------------------------------------------------------------
/// `events._sentence_lines` joined by line breaks, as characters.
fn sentence_lines(normalized: &str) -> Vec<char> {
    lines_where(normalized, ends_sentence)
}

/// `events.MEDIA`: words of a line that names a medium (a masthead, a site's header, a byline).
const MEDIA: [&str; 8] = ["报", "网", "台", "来源", "编辑", "记者", "频道", "客户端"];

/// `events._place_lines`: the sentence lines, the lines before the first of them (the text's head: a headline, a
/// caption) that name no medium (`MEDIA`), and the lines that are wholly a final part in brackets (`byline_start`
/// at 0: an author's unit and place), joined by line breaks.
fn place_lines(normalized: &str) -> Vec<char> {
    let mut body = false;
    lines_where(normalized, |line| {
        let ends = ends_sentence(line);
        let head = !body && !MEDIA.iter().any(|w| line.contains(w));
        let keep = ends || head || byline_start(line) == Some(0);
        body |= ends;
        keep
    })
}

/// The non-empty lines of `normalized` that `keep`, joined by line breaks (`keep` is asked of each in order).
fn lines_where(normalized: &str, mut keep: impl FnMut(&str) -> bool) -> Vec<char> {
    let mut out: Vec<char> = Vec::new();
    let mut first = true;
    for line in normalized.split('\n') {
        if line.is_empty() || !keep(line) {
            continue;
        }
        if !first {
            out.push('\n');
        }
        first = false;
        out.extend(line.chars());
    }
    out
}

const CN_UNITS: &[char] = &['一', '二', '三', '四', '五', '六', '七', '八', '九'];
const EN_MONTHS: [&str; 12] = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
                               "october", "november", "december"];
const EN_WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

fn cn_digit(c: char) -> Option<u32> {
    match c {
        '〇' | '零' => Some(0),
        _ => CN_UNITS.iter().position(|&u| u == c).map(|i| i as u32 + 1),
    }
}

fn cn_unit(c: char) -> u32 {
    CN_UNITS.iter().position(|&u| u == c).map_or(0, |i| i as u32 + 1)
}

/// `events._cn_number`.
fn cn_number(s: &[char]) -> u32 {
    match s.len() {
        0 => 0,
        1 => if s[0] == '十' { 10 } else { cn_unit(s[0]) },
        _ if s[0] == '十' => if s.len() == 2 && cn_unit(s[1]) > 0 { 10 + cn_unit(s[1]) } else { 0 },
        2 | 3 if (s[0] == '二' || s[0] == '三') && s[1] == '十' => {
            let n = if s[0] == '二' { 20 } else { 30 };
            if s.len() == 2 {
                n
            } else if cn_unit(s[2]) > 0 && (n == 20 || s[2] == '一') {
                n + cn_unit(s[2])
            } else {
                0
            }
        }
        _ => 0,
    }
}

fn day_bit(d: u32) -> u64 {
    if (1..=31).contains(&d) { 1 << (d - 1) } else { 0 }
}

fn month_bit(m: u32) -> u64 {
    if (1..=12).contains(&m) { 1 << (30 + m) } else { 0 }
}

fn year_bit(y: u32) -> u64 {
    1 << (50 + y % 14)
}

/// The start of the longest run of characters that `is_in` takes ending just before `k`.
fn run_before(t: &[char], k: usize, is_in: impl Fn(char) -> bool) -> usize {
    let mut j = k;
    while j > 0 && is_in(t[j - 1]) {
        j -= 1;
    }
    j
}

fn number_of(t: &[char]) -> u32 {
    t.iter().fold(0u32, |n, c| n.saturating_mul(10).saturating_add(c.to_digit(10).unwrap_or(0)))
}

fn is_word(c: char) -> bool {
    c == '_' || is_alnum(c)
}

/// The length of the name in `names` that `t[i..]` begins with, as a whole word when `whole`.
fn word_at(t: &[char], i: usize, names: &[&str]) -> Option<(usize, usize)> {
    for (n, name) in names.iter().enumerate() {
        let len = name.len();
        if i + len <= t.len() && name.chars().zip(&t[i..i + len]).all(|(a, &b)| a == b) {
            return Some((n, len));
        }
    }
    None
}

/// The length of the run of ASCII digits at `t[i..]`.
fn digits_at(t: &[char], i: usize) -> usize {
    t[i.min(t.len())..].iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `events._dates` of the sentence lines `t`.
fn date_bag(t: &[char]) -> u64 {
    let mut bag = 0u64;
    let n = t.len();
    for k in 0..n {
        match t[k] {
            '年' => {
                let j = run_before(t, k, |c| c.is_ascii_digit());
                if k - j == 4 {
                    bag |= year_bit(number_of(&t[j..k]));
                } else {
                    let j = run_before(t, k, |c| cn_digit(c).is_some());
                    if k - j == 4 {
                        bag |= year_bit(t[j..k].iter().fold(0, |y, &c| y * 10 + cn_digit(c).unwrap()));
                    }
                }
            }
            '月' => {
                let j = run_before(t, k, |c| c.is_ascii_digit());
                if (1..=2).contains(&(k - j)) {
                    bag |= month_bit(number_of(&t[j..k]));
                } else if j == k {
                    let j = run_before(t, k, |c| c == '十' || cn_digit(c).is_some());
                    let m = cn_number(&t[j..k]);
                    if m <= 12 {
                        bag |= month_bit(m);
                    }
                }
                let mut e = k + 1;
                while e < n && (t[e] == '十' || cn_unit(t[e]) > 0) {
                    e += 1;
                }
                if e > k + 1 && e < n && t[e] == '日' {
                    bag |= day_bit(cn_number(&t[k + 1..e]));
                }
            }
            '日' => {
                let j = run_before(t, k, |c| c.is_ascii_digit());
                if (1..=2).contains(&(k - j)) {
                    bag |= day_bit(number_of(&t[j..k]));
                }
            }
            '星' | '礼' | '周' => {
                let lead = match t[k] {
                    '星' => if t.get(k + 1) == Some(&'期') { 2 } else { 0 },
                    '礼' => if t.get(k + 1) == Some(&'拜') { 2 } else { 0 },
                    _ => 1,
                };
                if lead > 0 {
                    let w = match t.get(k + lead) {
                        Some(&'日') => 7,
                        Some(&'天') if lead == 2 => 7,
                        Some(&c) => cn_unit(c).min(7) * (cn_unit(c) <= 6) as u32,
                        None => 0,
                    };
                    if w > 0 {
                        bag |= 1 << (42 + w);
                    }
                }
            }
            _ => {}
        }
    }
    if t.iter().any(|c| c.is_ascii_lowercase()) {
        for i in 0..n {
            let c = t[i];
            let boundary = i == 0 || !is_word(t[i - 1]);
            if c.is_ascii_lowercase() && boundary {
                // `month day[, year]`
                if let Some((m, len)) = word_at(t, i, &EN_MONTHS) {
                    let p = i + len;
                    if t.get(p) == Some(&' ') {
                        let d = digits_at(t, p + 1);
                        if (1..=2).contains(&d) {
                            bag |= month_bit(m as u32 + 1) | day_bit(number_of(&t[p + 1..p + 1 + d]));
                            let q = p + 1 + d;
                            if t.get(q) == Some(&',') && t.get(q + 1) == Some(&' ') && digits_at(t, q + 2) == 4 {
                                bag |= year_bit(number_of(&t[q + 2..q + 6]));
                            }
                        }
                    }
                }
                // a weekday, a whole word
                if let Some((w, len)) = word_at(t, i, &EN_WEEKDAYS) {
                    if t.get(i + len).is_none_or(|&c| !is_word(c)) {
                        bag |= 1 << (43 + w);
                    }
                }
            }
            // `day month`
            if c.is_ascii_digit() && (i == 0 || !t[i - 1].is_ascii_digit()) {
                let d = digits_at(t, i);
                if (1..=2).contains(&d) && t.get(i + d) == Some(&' ') {
                    if let Some((m, len)) = word_at(t, i + d + 1, &EN_MONTHS) {
                        if t.get(i + d + 1 + len).is_none_or(|&c| !is_word(c)) {
                            bag |= month_bit(m as u32 + 1) | day_bit(number_of(&t[i..i + d]));
                        }
                    }
                }
            }
        }
    }
    bag
}

/// Two characters as one hash-map key (where a place name can begin).
fn pair(a: char, b: char) -> u64 {
    (a as u64) << 32 | b as u64
}

/// `events.PLACES_KEPT`, `events.PLACE_SLOT_BITS`, `events.DATELINE_SHIFT`, `events.DATELINE_HEAD`
const PLACES_KEPT: usize = 6;
const PLACE_SLOT_BITS: usize = 9;
const DATELINE_SHIFT: usize = PLACES_KEPT * PLACE_SLOT_BITS;
/// `events.SEVERAL_DATELINES`, `events.DATELINE_SET_BITS`
const SEVERAL_DATELINES: u64 = 1 << PLACE_SLOT_BITS;
const DATELINE_SET_BITS: u64 = 9;
const DATELINE_HEAD: usize = 48;

/// `events._names`: `found(key, end)` for each place name `t` reads, left to right, the longest name at each point,
/// among the names that begin before `starts_before`.
fn place_names(t: &[char], places: &Places, starts_before: usize, mut found: impl FnMut(u64, usize)) {
    let n = t.len();
    let scan = n.min(starts_before);
    let mut prefix = [0u64; 64];
    let mut i = 0;
    while i + 1 < scan {
        let mut next = i + 1;
        let two = pair(t[i], t[i + 1]);
        if places.may_begin(two) {
            if let Some(&lengths) = places.lengths.get(&two) {
                // the lengths of the names these two characters begin, longest first, that fit in `t`
                let fit = (n - i).min(63);
                let mut left = lengths & (u64::MAX >> (63 - fit));
                if left != 0 {
                    let top = 63 - left.leading_zeros() as usize;
                    let mut h = places.seed;
                    for (len, &c) in (1..=top).zip(&t[i..i + top]) {
                        h = name_step(h, c);
                        prefix[len] = h;
                    }
                    while left != 0 {
                        let len = 63 - left.leading_zeros() as usize;
                        left &= !(1u64 << len);
                        if let Some(k) = places.named(prefix[len], &t[i..i + len]) {
                            found(k, i + len);
                            next = i + len;
                            break;
                        }
                    }
                }
            }
        }
        i = next;
    }
}

/// The bits of `Places`' filter of first pairs: 2^20 bits (128 KiB), one in 40 set by the names of `events.places`.
const PAIR_FILTER_BITS: u32 = 20;

#[inline]
fn pair_filter_bit(two: u64) -> usize {
    (mix64(two) >> (64 - PAIR_FILTER_BITS)) as usize
}

/// One character more of a place name's hash (`Places::named`).
#[inline]
fn name_step(h: u64, c: char) -> u64 {
    mix64(h ^ c as u64)
}

/// `events.place_bag` of the lines `t` that name places (without the dateline): of every place named (the longest
/// name at each point), `PLACES_KEPT` or fewer ascending in the bag's 9-bit slots from the lowest (each key's top 9
/// bits); more, a bit for each (`events.place_bit`), the lowest slot left empty.
fn place_bag(t: &[char], places: &Places) -> u64 {
    if places.is_empty() {
        return 0;
    }
    let mut slots: Vec<u64> = Vec::new();
    place_names(t, places, usize::MAX, |k, _| slots.push(place_slot(k)));
    slots.sort_unstable();
    slots.dedup();
    if slots.len() <= PLACES_KEPT {
        return slots.iter().enumerate().fold(0u64, |bag, (i, &k)| bag | (k << (PLACE_SLOT_BITS * i)));
    }
    slots.iter().fold(0u64, |bag, &k| bag | 1 << place_bit(k))
}

/// `events.place_bit`: the bit of a place's slot in a bag of more than `PLACES_KEPT` places, one of the 45 above
/// the lowest slot (left empty).
fn place_bit(slot: u64) -> u64 {
    PLACE_SLOT_BITS as u64 + slot % (DATELINE_SHIFT - PLACE_SLOT_BITS) as u64
}

/// The length of the run of `chars` at `t[at..]`.
fn run_of(t: &[char], at: usize, chars: &str) -> usize {
    t[at.min(t.len())..].iter().take_while(|c| chars.contains(**c)).count()
}

/// Whether `t[j..]` begins as `events._DATELINE_TAIL` matches: a date (1-2 digits 月 1-2 digits 日, or 1-3 Chinese
/// numerals 月 1-3 numerals 日) or none, then 电 or 讯.
fn dateline_tail(t: &[char], j: usize) -> bool {
    const CN: &str = "一二三四五六七八九十";
    let ends = |k: usize| k < t.len() && (t[k] == '电' || t[k] == '讯');
    for (digits, most) in [("0123456789", 2), (CN, 3)] {
        let m = run_of(t, j, digits);
        if (1..=most).contains(&m) && t.get(j + m) == Some(&'月') {
            let d = run_of(t, j + m + 1, digits);
            if (1..=most).contains(&d) && t.get(j + m + 1 + d) == Some(&'日') && ends(j + m + 2 + d) {
                return true;
            }
        }
    }
    ends(j)
}

/// `events.place_slot`: a place key's top 9 bits, never 0 (an empty slot).
fn place_slot(k: u64) -> u64 {
    (k >> 1).max(1)
}

/// `events.dateline_key` of a normalised text: the slot of the place its datelines name (each key's top 9 bits),
/// when they name one place; when they name several, `SEVERAL_DATELINES` and each place's bit (slot modulo
/// `DATELINE_SET_BITS`); 0: none.
fn dateline_key(normalized: &str, places: &Places) -> u64 {
    if places.is_empty() {
        return 0;
    }
    let mut seen: Vec<u64> = Vec::new();
    let mut t: Vec<char> = Vec::with_capacity(DATELINE_HEAD + 64);
    for line in normalized.split('\n') {
        // (a name of at most 45 characters that begins in the head, and the longest tail after it)
        t.clear();
        t.extend(line.chars().take(DATELINE_HEAD + 64));
        place_names(&t, places, DATELINE_HEAD, |k, end| {
            let slot = place_slot(k);
            if dateline_tail(&t, end) && !seen.contains(&slot) {
                seen.push(slot);
            }
        });
    }
    match seen.len() {
        0 => 0,
        1 => seen[0],
        _ => seen.iter().fold(SEVERAL_DATELINES, |code, &slot| code | (1 << (slot % DATELINE_SET_BITS))),
    }
}

// -- the fingerprinter ---------------------------------------------------------------------------------------
#[derive(Clone, Debug)]
pub enum Tf {
    Raw,
    Cap(u64),
    /// `ln(k)` for k = 1.. as numpy computes it (index k - 1)
    Sublinear(Vec<f64>),
}

#[derive(Clone, Debug)]
pub struct Config {
    pub min_token_len: usize,
    pub sentences: usize,
    pub min_sentence_chars: usize,
    pub short_chars: usize,
    pub sketch: usize,
    pub sketch_chars: usize,
    pub sketch_shingle: (usize, usize),
    /// version 5: hashes each long enough line adds to the sketch (0: none)
    pub line_sketch: usize,
    pub tf: Tf,
    /// version 7: how many longest sentences of a text without a sketch add a fuzzy hash (0: none)
    pub fuzzy: usize,
    /// version 8: the place names read as naming an event (`events.places`)
    pub places: Places,
}

/// The place names of `events.places`: each name's 10-bit key by a 64-bit hash of its characters (the characters
/// kept to tell a name from another text of that hash), each name's first two characters with the lengths (in
/// characters, a bit each) of the names they begin, and a filter of those first two characters.
#[derive(Clone, Debug, Default)]
pub struct Places {
    /// a name's hash (`name_step` over its characters from `seed`) -> its key, where its characters are in `chars`
    /// and how many
    keys: FxHashMap<u64, (u64, u32, u32)>,
    chars: Vec<char>,
    seed: u64,
    lengths: FxHashMap<u64, u64>,
    /// a bit per `PAIR_FILTER_BITS`-bit hash of the first two characters of a name: most pairs of a text begin
    /// none, and this tells them for the price of one bit read (a hash-map look-up per character costs more than
    /// the rest of a place bag)
    begins: Vec<u64>,
}

impl Places {
    pub fn new(names: impl IntoIterator<Item = (String, u64)>) -> Self {
        let names: Vec<(Vec<char>, u64)> =
            names.into_iter().map(|(name, k)| (name.chars().collect::<Vec<char>>(), k)).filter(|(c, _)| c.len() >= 2).collect();
        // a seed under which no two names share a hash (the first, in practice)
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        'seeds: loop {
            let mut places = Places { seed, begins: vec![0; (1 << PAIR_FILTER_BITS) / 64], ..Places::default() };
            for (name, k) in &names {
                let h = name.iter().fold(seed, |h, &c| name_step(h, c));
                let (at, n) = (places.chars.len() as u32, name.len());
                if let Some(&(_, other, _)) = places.keys.get(&h) {
                    if places.named(h, name).is_some() {
                        places.keys.insert(h, (*k, other, n as u32)); // (a name given again: its last key)
                        continue;
                    }
                    seed = mix64(seed.wrapping_add(1));
                    continue 'seeds;
                }
                places.chars.extend_from_slice(name);
                places.keys.insert(h, (*k, at, n as u32));
                assert!(n < 64, "a place name of {n} characters (the native core reads names of at most 63)");
                let two = pair(name[0], name[1]);
                *places.lengths.entry(two).or_insert(0) |= 1 << n;
                let b = pair_filter_bit(two);
                places.begins[b / 64] |= 1 << (b % 64);
            }
            return places;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// `events.places` from the text of its list (`es_simhash/data/places.txt`: a line per name, its fields
    /// separated by tabs, the first the name, the third its key), each name normalised as a text is
    /// (`normalize`); an error names the first line that is not three fields with a numeric key or holds a code
    /// point `normalize` leaves to Python.
    pub fn from_list(list: &str) -> Result<Self, String> {
        let mut names = Vec::new();
        for (n, line) in list.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let parsed = match fields[..] {
                [name, _, key] => key.trim().parse::<u64>().ok().zip(normalize(name)),
                _ => None,
            };
            let (key, name) = parsed.ok_or_else(|| format!("the list of places, line {}: {line:?}", n + 1))?;
            names.push((name, key));
        }
        Ok(Places::new(names))
    }

    /// Whether a name may begin with the two characters `two` (`pair`): false, none does.
    #[inline]
    fn may_begin(&self, two: u64) -> bool {
        let b = pair_filter_bit(two);
        self.begins.get(b / 64).is_some_and(|w| w >> (b % 64) & 1 == 1)
    }

    /// The `n` characters of a name at `at` in `chars`.
    #[inline]
    fn name_at(&self, at: u32, n: usize) -> Option<&[char]> {
        self.chars.get(at as usize..at as usize + n)
    }

    /// The key of the name `text` when it is one, `hash` its hash.
    #[inline]
    fn named(&self, hash: u64, text: &[char]) -> Option<u64> {
        let &(k, at, n) = self.keys.get(&hash)?;
        (n as usize == text.len() && self.name_at(at, text.len()) == Some(text)).then_some(k)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fp {
    pub simhash: u64,
    pub content_hash: u64,
    pub sentences: Vec<u64>,
    pub n_features: u64,
    pub n_chars: u64,
    pub short: bool,
    pub word_bag: u64,
    pub number_bag: u64,
    pub fuzzy: Vec<u64>,
    pub fuzzy_digests: u64,
    pub date_bag: u64,
    pub place_bag: u64,
}

#[derive(Clone, Copy, Default)]
struct TokInfo {
    hash: u64,
    weight: u64, // of one occurrence
    word: bool,  // holds a letter/digit/ideograph
}

pub struct Core {
    idf: IdfTable,
    default_idf: f64,
    stopwords: FxHashSet<Box<str>>,
    cfg: Config,
    cache: RwLock<Cache>,
}

/// Token -> [`TokInfo`]. Tokens of up to 15 bytes (nearly all) are keyed by their bytes packed in a `u128`, in an
/// open-addressing table of 32-byte slots whose look-ups are prefetched a few tokens ahead (the table outgrows the
/// CPU caches: the memory latency, not the work, is the cost); longer tokens go to a plain hash map. A look-up
/// starts at the first slot of a cache line (an even slot): the line prefetched holds the slot probed next too.
struct Cache {
    slots: Slots,
    len: usize,
    long: FxHashMap<Box<str>, TokInfo>,
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    key: u128, // 0: empty (a packed key holds its length, >= 1, in the top byte)
    hash: u64,
    info: u64, // weight | word << 63
}

const WORD_FLAG: u64 = 1 << 63;

/// The cache's slots (all zero: empty). A table of 2 MB or more is 2 MB-aligned and, on Linux, advised into
/// transparent huge pages before its first write: a look-up is then no TLB miss (a 4 MB table is 1,024 pages of
/// 4 KB, more than the TLB holds beside the segmenter's tables, which every cache look-up would push out).
struct Slots {
    ptr: std::ptr::NonNull<Slot>,
    len: usize,
}

// SAFETY: `Slots` owns its allocation, like a `Box<[Slot]>`.
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

const HUGE_PAGE: usize = 2 << 20;

#[cfg(target_os = "linux")]
extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
}

impl Slots {
    fn layout(len: usize) -> std::alloc::Layout {
        let size = len.checked_mul(std::mem::size_of::<Slot>()).expect("token cache size");
        let align = if size >= HUGE_PAGE { HUGE_PAGE } else { 64 }; // (a pair of slots is a cache line)
        std::alloc::Layout::from_size_align(size, align).unwrap()
    }

    /// `len` empty slots (`len` > 0).
    fn new(len: usize) -> Self {
        let layout = Self::layout(len);
        // SAFETY: `layout` has a non-zero size; all-zero bytes are a valid (empty) `Slot`
        unsafe {
            let p = std::alloc::alloc(layout);
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            #[cfg(target_os = "linux")]
            if layout.align() == HUGE_PAGE {
                const MADV_HUGEPAGE: std::ffi::c_int = 14;
                madvise(p.cast(), layout.size(), MADV_HUGEPAGE); // (only advice: its failure changes nothing)
            }
            std::ptr::write_bytes(p, 0, layout.size());
            Slots { ptr: std::ptr::NonNull::new_unchecked(p.cast()), len }
        }
    }
}

impl std::ops::Deref for Slots {
    type Target = [Slot];
    fn deref(&self) -> &[Slot] {
        // SAFETY: `len` initialised slots at `ptr`, owned
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for Slots {
    fn deref_mut(&mut self) -> &mut [Slot] {
        // SAFETY: as in `deref`, borrowed mutably
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), Self::layout(self.len)) }
    }
}
/// (fpbench: time spent segmenting inside `fingerprint`)
#[cfg(feature = "bench")]
pub static PREPARE_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
#[cfg(feature = "bench")]
pub static FINISH_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
#[cfg(feature = "bench")]
pub static STAGE_NANOS: [std::sync::atomic::AtomicU64; 3] =
    [std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0)];
#[cfg(feature = "bench")]
pub static SEGMENT_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
const PADDING: &str = "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";

#[inline]
fn pack(t: &str) -> Option<u128> {
    let b = t.as_bytes();
    if b.len() > 15 {
        return None;
    }
    let mut buf = [0u8; 16];
    buf[..b.len()].copy_from_slice(b);
    buf[15] = b.len() as u8;
    Some(u128::from_le_bytes(buf))
}

#[inline]
fn slot_hash(key: u128) -> usize {
    let h = ((key as u64).wrapping_mul(0x9E3779B97F4A7C15) ^ ((key >> 64) as u64)).wrapping_mul(0xBF58476D1CE4E5B9);
    (h ^ (h >> 29)) as usize
}

impl Cache {
    fn new() -> Self {
        Cache { slots: Slots::new(1 << 14), len: 0, long: FxHashMap::default() }
    }

    #[inline]
    fn prefetch(&self, key: u128) {
        #[cfg(target_arch = "x86_64")]
        unsafe {
            let i = slot_hash(key) & (self.slots.len() - 2);
            core::arch::x86_64::_mm_prefetch(self.slots.as_ptr().add(i) as *const i8, core::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    fn get_short(&self, key: u128) -> Option<TokInfo> {
        let mask = self.slots.len() - 1;
        let mut i = slot_hash(key) & mask & !1;
        loop {
            let s = &self.slots[i];
            if s.key == key {
                return Some(TokInfo { hash: s.hash, weight: s.info & !WORD_FLAG, word: s.info & WORD_FLAG != 0 });
            }
            if s.key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    fn insert_short(&mut self, key: u128, info: TokInfo) {
        if (self.len + 1) * 2 > self.slots.len() {
            let size = self.slots.len() * 2;
            let old = std::mem::replace(&mut self.slots, Slots::new(size));
            self.len = 0;
            for &s in old.iter().filter(|s| s.key != 0) {
                self.put(s);
            }
        }
        self.put(Slot { key, hash: info.hash, info: info.weight | if info.word { WORD_FLAG } else { 0 } });
    }

    fn put(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut i = slot_hash(slot.key) & mask & !1;
        loop {
            if self.slots[i].key == 0 {
                self.slots[i] = slot;
                self.len += 1;
                return;
            }
            if self.slots[i].key == slot.key {
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn len(&self) -> usize {
        self.len + self.long.len()
    }
}

/// A text normalised, with its keys, segmented and its tokens counted while segmenting: `distinct`, each distinct
/// token of up to 15 bytes (packed, see [`pack`]) with its count and the byte offset of an occurrence in `padded`
/// (the normalised text and 16 NUL bytes); `long`, each occurrence of a longer token as (byte offset, byte length)
/// in `padded`; `chosen`: the spans in `keys.content` of the sentence keys the signature hashes (see
/// [`Core::chosen_sentences`]).
struct Prepared {
    padded: String,
    keys: Keys,
    distinct: Vec<(u128, u32, u32)>,
    long: Vec<(u32, u32)>,
    chosen: Vec<(usize, usize)>,
}

/// Per-thread scratch reused from document to document: token counts.
#[derive(Default)]
struct Scratch {
    counts: Counts,
    long_counts: FxHashMap<Box<str>, u64>,
}

/// The counts of one text's packed tokens: open addressing, at least twice as many slots (of the table's first
/// `mask + 1`) as the text has distinct tokens (it doubles when they reach half), and the slots used are listed so
/// that emptying it costs a store per distinct token. A text uses only as much of the table as it needs: a short
/// text after a long one does not scatter its few tokens over the long one's table.
#[derive(Default)]
struct Counts {
    slots: Vec<CountSlot>,
    used: Vec<u32>,
    mask: usize,
}

#[derive(Clone, Copy, Default)]
struct CountSlot {
    key: [u64; 2], // the packed token (low, high half; 0: empty), 8-byte aligned so a slot is 24 bytes
    count: u32,
    first: u32, // byte offset of an occurrence
}

impl Counts {
    /// Empty, sized for about `n` distinct tokens.
    fn reset(&mut self, n: usize) {
        for &j in &self.used {
            self.slots[j as usize].key = [0, 0];
        }
        self.used.clear();
        self.resize((2 * n).max(64).next_power_of_two());
    }

    /// Uses the first `size` slots (a power of two; all are empty).
    fn resize(&mut self, size: usize) {
        if self.slots.len() < size {
            self.slots = vec![CountSlot::default(); size];
        }
        self.mask = size - 1;
    }

    #[inline]
    fn add(&mut self, key: u128, at: u32) {
        let mask = self.mask;
        let mut j = slot_hash(key) & mask;
        let key = [key as u64, (key >> 64) as u64];
        loop {
            let s = &mut self.slots[j];
            if s.key == key {
                s.count += 1;
                return;
            }
            if s.key == [0, 0] {
                *s = CountSlot { key, count: 1, first: at };
                self.used.push(j as u32);
                if 2 * self.used.len() > mask {
                    self.grow();
                }
                return;
            }
            j = (j + 1) & mask;
        }
    }

    /// Twice the slots, the counts moved (`used` keeps its order: first occurrence).
    #[cold]
    fn grow(&mut self) {
        let old: Vec<CountSlot> = self.used.iter().map(|&j| self.slots[j as usize]).collect();
        for &j in &self.used {
            self.slots[j as usize].key = [0, 0];
        }
        self.used.clear();
        self.resize(2 * (self.mask + 1));
        let mask = self.mask;
        for s in old {
            let mut j = slot_hash(s.key[0] as u128 | (s.key[1] as u128) << 64) & mask;
            while self.slots[j].key != [0, 0] {
                j = (j + 1) & mask;
            }
            self.slots[j] = s;
            self.used.push(j as u32);
        }
    }

    /// (packed token, count, byte offset of an occurrence) of each distinct token, in order of first occurrence.
    fn distinct(&self) -> impl Iterator<Item = (u128, u32, u32)> + '_ {
        self.used.iter().map(|&j| {
            let s = &self.slots[j as usize];
            (s.key[0] as u128 | (s.key[1] as u128) << 64, s.count, s.first)
        })
    }
}

/// A text's SimHash sums: the weight per (nibble position, nibble value) of the token hashes (16 additions per
/// token instead of 64, bits summed at the end), their total, the features counted and the word bag.
struct Acc {
    hist: [[u64; 16]; 16],
    total: u64,
    n_features: u64,
    word_bag: u64,
}

impl Acc {
    /// A distinct token met `cnt` times; `None`: a sum Python could round (see the module's doc).
    #[inline(always)]
    fn add(&mut self, info: TokInfo, cnt: u64, tf: &Tf, need_words: bool) -> Option<()> {
        if info.word && need_words {
            self.word_bag = self.word_bag.wrapping_add(info.hash.wrapping_mul(cnt));
        }
        if info.weight == 0 {
            return Some(());
        }
        self.n_features += cnt;
        let w = match tf {
            Tf::Raw => info.weight.checked_mul(cnt)?,
            Tf::Cap(c) => info.weight.checked_mul(cnt.min(*c))?,
            Tf::Sublinear(ln) => {
                let l = *ln.get((cnt - 1) as usize)?;
                let v = (info.weight as f64 * (1.0 + l)).round_ties_even();
                if !(v >= 0.0 && v < EXACT_LIMIT as f64) {
                    return None;
                }
                v as u64
            }
        };
        self.total = self.total.checked_add(w)?;
        let h = info.hash;
        for (p, row) in self.hist.iter_mut().enumerate() {
            row[((h >> (4 * p)) & 0xF) as usize] += w;
        }
        Some(())
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

impl Core {
    pub fn new(idf: impl Into<IdfTable>, default_idf: f64, stopwords: FxHashSet<Box<str>>, cfg: Config) -> Self {
        Core { idf: idf.into(), default_idf, stopwords, cfg, cache: RwLock::new(Cache::new()) }
    }

    fn token_info(&self, tok: &str) -> TokInfo {
        let mut word = false;
        let mut all = true;
        let mut n = 0usize;
        for c in tok.chars() {
            n += 1;
            if is_alnum(c) {
                word = true;
            } else {
                all = false;
            }
        }
        let mut weight = 0u64;
        if n > 0 && all && n >= self.cfg.min_token_len && !self.stopwords.contains(tok) {
            let idf = self.idf.get(tok).unwrap_or(self.default_idf);
            let w = (idf * WEIGHT_SCALE).round_ties_even();
            if w > 0.0 {
                weight = w as u64;
            }
        }
        TokInfo { hash: hash64(tok), weight, word }
    }

    /// The fingerprint of one text, or `None` when Python must compute it.
    pub fn fingerprint(&self, text: &str) -> Option<Fp> {
        self.fingerprint_many(&[Some(text)]).pop().flatten()
    }

    /// [`Core::fingerprint`] of each text (`None` in: `None` out). Texts go by groups: a group is normalised,
    /// segmented and its tokens counted, then its distinct tokens are looked up, so the segmenter's tables and the
    /// token cache are not fighting over the CPU caches at every text. The group's BLAKE2b hashes (content keys,
    /// chosen sentence keys) are computed together, several at a time (`hash_many`: 4 inputs in parallel with AVX2).
    pub fn fingerprint_many(&self, texts: &[Option<&str>]) -> Vec<Option<Fp>> {
        // (8: what a group holds between its two halves stays small; fpbench measured 8 a little faster than 32,
        // with 1, 4 and 64 no better)
        const GROUP: usize = 8;
        let mut out = Vec::with_capacity(texts.len());
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            for group in texts.chunks(GROUP) {
                #[cfg(feature = "bench")]
                let t0 = std::time::Instant::now();
                let prepared: Vec<Option<Prepared>> =
                    group.iter().map(|t| t.and_then(|t| self.prepare(t, &mut scratch.counts))).collect();
                #[cfg(feature = "bench")]
                let t1 = std::time::Instant::now();
                // hash64 of each text's content key (if not empty) then of its chosen sentence keys, in text order
                let inputs: Vec<&[u8]> = prepared
                    .iter()
                    .flatten()
                    .flat_map(|p| {
                        let key = &p.keys.content;
                        let content = (!key.is_empty()).then_some(key.as_bytes());
                        content.into_iter().chain(p.chosen.iter().map(|&(s, e)| &key.as_bytes()[s..e]))
                    })
                    .collect();
                let mut hashes = hash64_many(&inputs).into_iter();
                drop(inputs);
                for p in prepared {
                    out.push(p.and_then(|p| {
                        let content = if p.keys.content.is_empty() { 0 } else { hashes.next().unwrap() };
                        let sentences: Vec<u64> = hashes.by_ref().take(p.chosen.len()).collect();
                        self.finish(p, content, &sentences, &mut scratch)
                    }));
                }
                #[cfg(feature = "bench")]
                {
                    PREPARE_NANOS.fetch_add((t1 - t0).as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
                    FINISH_NANOS.fetch_add(t1.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
                }
            }
        });
        out
    }

    /// The first half of a fingerprint: the text normalised (with its keys), segmented and its tokens counted (in
    /// `counts`, as they come: no list of the tokens to write and read again).
    fn prepare(&self, text: &str, counts: &mut Counts) -> Option<Prepared> {
        let (mut padded, keys) = normalize_with_keys(text, self.cfg.min_sentence_chars)?;
        let n = padded.len();
        if n >= u32::MAX as usize - 64 {
            return None;
        }
        padded.push_str(PADDING); // so that 16 bytes can be read from where any token starts (see `finish`)
        let bytes = padded.as_bytes();
        let normalized = &padded[..n];
        let base = normalized.as_ptr() as usize;
        // a token shorter than min_token_len has weight 0: it is kept only for a word bag
        let (keep_all, min_len) = (self.sketched(keys.n_chars), self.cfg.min_token_len);
        // (distinct tokens: at most one per 3 bytes of Chinese text, mostly fewer)
        counts.reset(n / 6);
        let mut long: Vec<(u32, u32)> = Vec::new();
        #[cfg(feature = "bench")]
        let t0 = std::time::Instant::now();
        #[inline(always)]
        fn count(w: &str, base: usize, bytes: &[u8], counts: &mut Counts, long: &mut Vec<(u32, u32)>) {
            let (at, len) = (w.as_ptr() as usize - base, w.len());
            if len <= 15 {
                // `pack(w)`: one unaligned 16-byte read (`PADDING`: always in bounds), masked
                let raw = u128::from_le_bytes(bytes[at..at + 16].try_into().unwrap());
                let key = (raw & ((1u128 << (8 * len)) - 1)) | ((len as u128) << 120);
                debug_assert_eq!(Some(key), pack(w));
                counts.add(key, at as u32);
            } else {
                long.push((at as u32, len as u32));
            }
        }
        if keys.cjk && !keys.resplit {
            // (the common case, `segment_known`'s loop here, so that counting a token is no call)
            for tok in jieba().cut(normalized, true) {
                if keep_all || tok.end - tok.start >= min_len {
                    count(tok.word, base, bytes, counts, &mut long);
                }
            }
        } else {
            // (an ideograph is a letter: the text has one exactly when its content key has one)
            segment_known(normalized, keys.cjk, || keys.resplit, |w, chars| {
                if keep_all || chars >= min_len {
                    count(w, base, bytes, counts, &mut long);
                }
            });
        }
        #[cfg(feature = "bench")]
        SEGMENT_NANOS.fetch_add(t0.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
        let distinct = counts.distinct().collect();
        let chosen = self.chosen_sentences(&keys);
        Some(Prepared { padded, keys, distinct, long, chosen })
    }

    /// Whether a text of `n_chars` (content key characters) gets a shingle sketch (and then a word bag).
    fn sketched(&self, n_chars: usize) -> bool {
        self.cfg.sketch > 0 && n_chars > 0 && n_chars < self.cfg.sketch_chars
    }

    /// The long-sentence signature's keys: the `sentences` longest distinct sentence keys (stable: text order on
    /// ties), as spans in the content key.
    fn chosen_sentences(&self, keys: &Keys) -> Vec<(usize, usize)> {
        let spans = &keys.sentences;
        let mut chosen: Vec<(usize, usize)> = Vec::new();
        if self.cfg.sentences > 0 && !spans.is_empty() {
            let mut order: Vec<usize> = (0..spans.len()).collect();
            order.sort_by(|&a, &b| spans[b].2.cmp(&spans[a].2));
            let key = &keys.content;
            for i in order {
                let (s, e, _) = spans[i];
                if !chosen.iter().any(|&(cs, ce)| key[cs..ce] == key[s..e]) {
                    chosen.push((s, e));
                    if chosen.len() == self.cfg.sentences {
                        break;
                    }
                }
            }
        }
        chosen
    }

    /// The second half: token counts, weights, SimHash, hashes, sketch, word bag. `content_h` and `sentence_h`:
    /// [`hash64`] of the content key (0 if empty) and of each chosen sentence key.
    fn finish(&self, prepared: Prepared, content_h: u64, sentence_h: &[u64], scratch: &mut Scratch) -> Option<Fp> {
        #[cfg(feature = "bench")]
        let t_start = std::time::Instant::now();
        let Prepared { padded, keys, distinct, long, chosen } = prepared;
        let token = |&(at, len): &(u32, u32)| -> &str {
            debug_assert!(padded.is_char_boundary(at as usize) && padded.is_char_boundary((at + len) as usize));
            // SAFETY: (at, len) was taken from a subslice of `padded` (`prepare`): in bounds, on char boundaries
            unsafe { padded.get_unchecked(at as usize..(at + len) as usize) }
        };
        let Keys { content: key, n_chars, bag, cjk, sentences: spans, .. } = keys;
        let cfg = &self.cfg;

        // shingle sketch of a shorter text (and then its word bag), stratified by line (version 5)
        let sketch = if self.sketched(n_chars) {
            let n = if cjk { cfg.sketch_shingle.0 } else { cfg.sketch_shingle.1 };
            let mut sketch = bottom_k(&key, n, cfg.sketch);
            if cfg.line_sketch > 0 {
                add_line_sketches(&mut sketch, &padded[..padded.len() - PADDING.len()], cjk, n, cfg);
            }
            sketch
        } else {
            Vec::new()
        };

        // token counts, then one cache look-up per distinct token
        let need_words = !sketch.is_empty();
        let long_counts = &mut scratch.long_counts;
        long_counts.clear();
        for t in &long {
            *long_counts.entry(token(t).into()).or_insert(0) += 1;
        }
        #[cfg(feature = "bench")]
        let t_counted = std::time::Instant::now();
        let mut acc = Acc { hist: [[0u64; 16]; 16], total: 0, n_features: 0, word_bag: 0 };
        let mut misses: Vec<(&str, Option<u128>, TokInfo)> = Vec::new();
        let tf = &cfg.tf;
        {
            let cache = self.cache.read().unwrap();
            const AHEAD: usize = 24;
            for &(k, _, _) in distinct.iter().take(AHEAD) {
                cache.prefetch(k);
            }
            for j in 0..distinct.len() {
                if let Some(&(k, _, _)) = distinct.get(j + AHEAD) {
                    cache.prefetch(k);
                }
                let (k, cnt, at) = distinct[j];
                let info = match cache.get_short(k) {
                    Some(info) => info,
                    None => {
                        let tok = token(&(at, (k >> 120) as u32));
                        let info = self.token_info(tok);
                        misses.push((tok, Some(k), info));
                        info
                    }
                };
                acc.add(info, cnt as u64, tf, need_words)?;
            }
            for (tok, &cnt) in long_counts.iter() {
                let info = match cache.long.get(tok) {
                    Some(&info) => info,
                    None => {
                        let info = self.token_info(tok);
                        let at = long.iter().find(|t| token(t) == &**tok).unwrap();
                        misses.push((token(at), None, info));
                        info
                    }
                };
                acc.add(info, cnt, tf, need_words)?;
            }
        }
        let Acc { hist, total, n_features, mut word_bag } = acc;
        if total >= EXACT_LIMIT {
            return None;
        }
        if !misses.is_empty() {
            let mut cache = self.cache.write().unwrap();
            if cache.len() + misses.len() > MAX_CACHE {
                *cache = Cache::new();
            }
            for (tok, packed, info) in misses {
                match packed {
                    Some(k) => cache.insert_short(k, info),
                    None => {
                        cache.long.insert(tok.into(), info);
                    }
                }
            }
        }
        #[cfg(feature = "bench")]
        let t_looked = std::time::Instant::now();
        let mut simhash = 0u64;
        if n_features > 0 {
            for (p, row) in hist.iter().enumerate() {
                for j in 0..4 {
                    let ones: u64 = row.iter().enumerate().filter(|(v, _)| v >> j & 1 == 1).map(|(_, &x)| x).sum();
                    if 2 * ones > total {
                        simhash |= 1 << (4 * p + j);
                    }
                }
            }
        }

        // long-sentence signature: the chosen keys' hashes (distinct)
        let mut sentences: Vec<u64> = Vec::new();
        for (&(s, e), &h64) in chosen.iter().zip(sentence_h) {
            let h = sentence_hash_of(&key[s..e], h64);
            if !sentences.contains(&h) {
                sentences.push(h);
            }
        }
        let (fuzzy, fuzzy_digests) =
            if sketch.is_empty() { fuzzy_hashes(&key, &spans, cfg.fuzzy, cfg.sketch_shingle) } else { (Vec::new(), 0) };
        sentences.extend_from_slice(&sketch);
        if sketch.is_empty() {
            word_bag = 0;
        }
        let text = &padded[..padded.len() - PADDING.len()];
        let number_bag = number_bag(text);
        let date_bag = date_bag(&sentence_lines(text));
        let place_bag = place_bag(&place_lines(text), &cfg.places) | dateline_key(text, &cfg.places) << DATELINE_SHIFT;
        #[cfg(feature = "bench")]
        {
            STAGE_NANOS[0].fetch_add((t_counted - t_start).as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
            STAGE_NANOS[1].fetch_add((t_looked - t_counted).as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
            STAGE_NANOS[2].fetch_add(t_looked.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        Some(Fp {
            simhash,
            content_hash: content_hash_of(&key, bag & 0xFFFF_FFFF, cjk, content_h),
            sentences,
            n_features,
            n_chars: n_chars as u64,
            short: n_chars < cfg.short_chars,
            word_bag,
            number_bag,
            fuzzy,
            fuzzy_digests,
            date_bag,
            place_bag,
        })
    }
}
