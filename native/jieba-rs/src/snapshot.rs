//! (es-simhash addition) A built `Jieba` written to bytes and read back, so that a program can keep the dictionary
//! it built (~0.1 s: 350,000 words into the trie) and start the next time from the bytes (a copy of ~25 MB). The
//! tables are written as they are in memory (`#[repr(C)]` plain data), with a header that says which layout and
//! sizes they have, and a checksum of everything: bytes that were not written by this code, for this build, are
//! refused (`None`), never trusted. A snapshot is for the machine that wrote it (native byte order).

use crate::{CharTrie, Jieba, Record};

const MAGIC: &[u8; 8] = b"JBSNAP01";

pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_ne_bytes());
}

/// A slice of plain data, with its length and element size before it, padded to 8 bytes.
///
/// # Safety
/// `T` must have no padding bytes and no pointers (`#[repr(C)]` integers and floats): its bytes are read as they
/// are.
pub(crate) unsafe fn put_pod<T: Copy>(out: &mut Vec<u8>, items: &[T]) {
    put_u64(out, items.len() as u64);
    put_u64(out, std::mem::size_of::<T>() as u64);
    // SAFETY: `T` is plain data without padding (see above): its bytes are initialised
    let bytes = unsafe { std::slice::from_raw_parts(items.as_ptr().cast::<u8>(), std::mem::size_of_val(items)) };
    out.extend_from_slice(bytes);
    out.resize(out.len().next_multiple_of(8), 0);
}

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_ne_bytes(self.take(8)?.try_into().ok()?))
    }

    /// What `put_pod` wrote, for a `T` of the same size.
    ///
    /// # Safety
    /// Every bit pattern must be a valid `T` (`#[repr(C)]` integers and floats).
    pub(crate) unsafe fn pod<T: Copy>(&mut self) -> Option<Vec<T>> {
        let n = usize::try_from(self.u64()?).ok()?;
        if self.u64()? != std::mem::size_of::<T>() as u64 {
            return None;
        }
        let size = n.checked_mul(std::mem::size_of::<T>())?;
        let bytes = self.take(size)?;
        self.take(size.next_multiple_of(8) - size)?;
        let mut out: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `size` bytes fit the capacity; every bit pattern is a valid `T` (integers and floats)
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), size);
            out.set_len(n);
        }
        Some(out)
    }

    fn str(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.u64()?).ok()?;
        std::str::from_utf8(self.take(n)?).ok()
    }
}

/// A 64-bit checksum of `bytes` (four independent lanes of a multiply-rotate mix over 8-byte words: a few ms for
/// the 25 MB of a dictionary); not cryptographic, it tells damaged or foreign bytes from a snapshot.
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    const K: [u64; 4] = [0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x85EB_CA77_C2B2_AE63];
    let mut lanes = [1u64, 2, 3, 4];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (i, lane) in lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(block[8 * i..8 * i + 8].try_into().unwrap());
            *lane = (*lane ^ w).wrapping_mul(K[i]).rotate_left(29);
        }
    }
    let mut h = bytes.len() as u64;
    for (i, lane) in lanes.iter().enumerate() {
        h = (h ^ lane).wrapping_mul(K[i]).rotate_left(31);
    }
    for &b in blocks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K[0]);
    }
    h ^ (h >> 29)
}

impl Jieba {
    /// The dictionary as bytes for [`Jieba::from_snapshot`] (`None` with a custom HMM model, which it does not
    /// hold).
    pub fn to_snapshot(&self) -> Option<Vec<u8>> {
        if self.hmm_model.is_some() {
            return None;
        }
        let mut out = Vec::with_capacity(32 << 20);
        out.extend_from_slice(MAGIC);
        put_u64(&mut out, 0); // (the checksum, written last)
        put_u64(&mut out, 1u64.to_ne_bytes()[0] as u64); // byte order
        let freqs: Vec<u64> = self.records.iter().map(|r| r.freq as u64).collect();
        let tags: Vec<u32> = self.records.iter().map(|r| r.tag).collect();
        // SAFETY: u64, u32 and f64 have no padding
        unsafe {
            put_pod(&mut out, &freqs);
            put_pod(&mut out, &tags);
            put_pod(&mut out, &self.log_freqs);
        }
        put_u64(&mut out, self.tags.len() as u64);
        for tag in &self.tags {
            put_u64(&mut out, tag.len() as u64);
            out.extend_from_slice(tag.as_bytes());
        }
        put_u64(&mut out, self.total as u64);
        put_u64(&mut out, self.log_total.to_bits());
        self.trie.to_snapshot(&mut out);
        let sum = checksum(&out[16..]);
        out[8..16].copy_from_slice(&sum.to_ne_bytes());
        Some(out)
    }

    /// The `Jieba` that [`Jieba::to_snapshot`] wrote, or `None` for bytes it did not write (another layout,
    /// another byte order, damaged or cut short).
    pub fn from_snapshot(bytes: &[u8]) -> Option<Jieba> {
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return None;
        }
        if u64::from_ne_bytes(bytes[8..16].try_into().ok()?) != checksum(&bytes[16..]) {
            return None;
        }
        let mut input = Reader { bytes: &bytes[16..] };
        if input.u64()? != 1u64.to_ne_bytes()[0] as u64 {
            return None;
        }
        // SAFETY: any bits are a u64, a u32, an f64
        let (freqs, tag_of, log_freqs): (Vec<u64>, Vec<u32>, Vec<f64>) =
            unsafe { (input.pod()?, input.pod()?, input.pod()?) };
        let n_tags = usize::try_from(input.u64()?).ok()?;
        let mut tags: Vec<Box<str>> = Vec::with_capacity(n_tags.min(1 << 16));
        for _ in 0..n_tags {
            tags.push(input.str()?.into());
        }
        let total = usize::try_from(input.u64()?).ok()?;
        let log_total = f64::from_bits(input.u64()?);
        let trie = CharTrie::from_snapshot(&mut input)?;
        if freqs.len() != tag_of.len() || freqs.len() != log_freqs.len() || !input.bytes.is_empty()
            || tag_of.iter().any(|&t| t as usize >= tags.len()) || !trie.word_ids_below(freqs.len())
        {
            return None;
        }
        let records = freqs.iter().zip(&tag_of).map(|(&f, &tag)| Some(Record { freq: usize::try_from(f).ok()?, tag }))
            .collect::<Option<Vec<Record>>>()?;
        let tag_ids = tags.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        Some(Jieba { records, log_freqs, tags, tag_ids, trie, total, log_total, hmm_model: None })
    }
}
