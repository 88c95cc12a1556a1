//! The SimHash channel of `es_simhash.index.memory.MemoryIndex` lookups, natively: for each query and lookup-key
//! table, the stored rows whose key equals the query's (through a run's direct-address directory), plus a
//! brute-force scan of the unsorted tail, kept when within `max_distance` bits and alive. The numpy code in
//! `memory.py` (`MemoryIndex._key_pairs`) is the reference: per query, the same rows, ascending, without repeats.
//!
//! The arrays are the index's own numpy buffers (no copy); this module only reads them.

/// A run's directory offsets: int32 below 2**31 entries, int64 above (as `memory._make_run` makes them).
#[derive(Clone, Copy)]
pub enum Offsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Offsets<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        match self {
            Offsets::I32(o) => o.len(),
            Offsets::I64(o) => o.len(),
        }
    }
    #[inline(always)]
    fn pair(&self, i: usize) -> (usize, usize) {
        match self {
            Offsets::I32(o) => (o[i] as usize, o[i + 1] as usize),
            Offsets::I64(o) => (o[i] as usize, o[i + 1] as usize),
        }
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        match self {
            Offsets::I32(o) => prefetch(o.as_ptr().wrapping_add(i)),
            Offsets::I64(o) => prefetch(o.as_ptr().wrapping_add(i)),
        }
    }
}

/// One run of `memory._Run`: scrambled keys sorted within each table (tables one after another), the row of each
/// entry, and the directory over the keys' top `bits` bits.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub keys: &'a [u32],
    pub rows: &'a [i32],
    pub offsets: Offsets<'a>,
    pub bits: u32,
}

/// What a lookup reads of the index.
pub struct Index<'a> {
    pub runs: Vec<Run<'a>>,
    /// SimHash of every row (at least `tail_stop` long).
    pub simhash: &'a [u64],
    /// Liveness of every row, or `None` when every row is alive (`MemoryIndex._any_dead` false).
    pub alive: Option<&'a [bool]>,
    /// Whether each row has keys (rows without features have none).
    pub has_keys: &'a [bool],
    /// The unsorted tail: rows `tail_start..tail_stop`.
    pub tail_start: usize,
    pub tail_stop: usize,
    /// For each table, the SimHash bits its key keeps (`LookupKeys.masks`).
    pub masks: &'a [u64],
    /// The keys' `k`: pairs within `k` bits always share a key.
    pub k: u32,
}

pub const SCRAMBLE: u32 = 0x9E37_79B1;

#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(p as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The lookup keys of each SimHash (`LookupKeys.keys`: each table packs its blocks' bits, lowest block first,
/// cut to the low 32 bits), scrambled as runs store them: `n * n_tables` keys, query-major.
/// `blocks`: (shift, width) of each block; `tables`: the blocks of each table.
pub fn scrambled_keys(sims: &[u64], blocks: &[(u32, u32)], tables: &[Vec<usize>]) -> Vec<u32> {
    let n_t = tables.len();
    let mut out = vec![0u32; sims.len() * n_t];
    for (q, &s) in sims.iter().enumerate() {
        for (t, table) in tables.iter().enumerate() {
            let mut key = 0u64;
            let mut offset = 0u32;
            for &b in table {
                let (shift, width) = blocks[b];
                let part = if width >= 64 { s >> shift } else { (s >> shift) & ((1u64 << width) - 1) };
                if offset < 64 {
                    key |= part << offset;
                }
                offset += width;
            }
            out[q * n_t + t] = (key as u32).wrapping_mul(SCRAMBLE);
        }
    }
    out
}

/// Check that the index's arrays fit together (cheap checks; the lookup's reads are bounds-checked too).
pub fn validate(ix: &Index<'_>, n_tables: usize) -> Result<(), String> {
    if ix.tail_start > ix.tail_stop || ix.tail_stop > ix.simhash.len() || ix.tail_stop > ix.has_keys.len() {
        return Err("tail out of range".into());
    }
    if let Some(a) = ix.alive {
        if a.len() < ix.simhash.len() {
            return Err("alive shorter than simhash".into());
        }
    }
    if ix.masks.len() != n_tables {
        return Err("masks: one per table".into());
    }
    for run in &ix.runs {
        if !(1..=32).contains(&run.bits) {
            return Err("run bits outside 1..32".into());
        }
        let slots = 1usize << run.bits;
        if run.offsets.len() != n_tables * slots + 1 || run.keys.len() != run.rows.len() {
            return Err("run arrays do not match".into());
        }
        // only O(1) checks per call: every access below is bounds-checked, so a malformed run panics (a Python
        // exception), it cannot read outside the buffers
        let n = run.keys.len();
        let (first, last) = match run.offsets {
            Offsets::I32(o) => (o[0] as i64, o[o.len() - 1] as i64),
            Offsets::I64(o) => (o[0], o[o.len() - 1]),
        };
        if first != 0 || last != n as i64 {
            return Err("run offsets are not a cumulative count of its entries".into());
        }
    }
    Ok(())
}

const BLOCK: usize = 16; // queries whose probes are in flight together (memory-level parallelism)
const CHECK_LIMIT: usize = 4096; // entries x known rows compared one by one; above, repeats go to the final dedup

/// Candidate rows of each query: `(bounds, rows)`, query `i`'s rows being `rows[bounds[i]..bounds[i + 1]]`,
/// ascending and distinct. `qkeys`: `scrambled_keys(q_sims, ..)`. The caller has run `validate`.
pub fn lookup(ix: &Index<'_>, q_sims: &[u64], qkeys: &[u32], n_tables: usize, max_distance: u32) -> (Vec<usize>, Vec<i64>) {
    let n_q = q_sims.len();
    let mut bounds = Vec::with_capacity(n_q + 1);
    bounds.push(0usize);
    let mut out: Vec<i64> = Vec::with_capacity(n_q * 4);
    let mut cand: Vec<Vec<u32>> = (0..BLOCK).map(|_| Vec::new()).collect();
    let mut slot = vec![0usize; BLOCK * n_tables];
    let mut span = vec![(0usize, 0usize); BLOCK * n_tables];
    let mut hits: Vec<usize> = Vec::new(); // entry positions matching a query's key in one table
    let mut groups: Vec<(usize, usize, usize, usize)> = Vec::new(); // (query in block, hits start, end, known)
    let mut found: Vec<Vec<(u32, u64)>> = (0..BLOCK).map(|_| Vec::new()).collect(); // rows read from this run
    let mut known_rows: Vec<u32> = Vec::new();
    let alive = ix.alive;
    let keep = |row: usize, q: u64| -> bool {
        (ix.simhash[row] ^ q).count_ones() <= max_distance && alive.is_none_or(|a| a[row])
    };
    let mut b0 = 0;
    while b0 < n_q {
        let b1 = (b0 + BLOCK).min(n_q);
        let nb = b1 - b0;
        for c in cand.iter_mut().take(nb) {
            c.clear();
        }
        for run in &ix.runs {
            let shift = 32 - run.bits;
            let slots = 1usize << run.bits;
            let m = nb * n_tables;
            // 1. directory slots, prefetched
            for i in 0..m {
                let t = i % n_tables;
                let s = t * slots + (qkeys[b0 * n_tables + i] >> shift) as usize;
                slot[i] = s;
                run.offsets.prefetch(s);
            }
            // 2. the entries of each slot, their first key prefetched
            for i in 0..m {
                let (lo, hi) = run.offsets.pair(slot[i]);
                span[i] = (lo, hi);
                if lo < hi {
                    prefetch(run.keys.as_ptr().wrapping_add(lo));
                }
            }
            // 3. table by table (the queries of the block side by side): the entries whose key is the query's.
            // Each row of a run is in each of its tables exactly once, so when the rows already read from this run
            // that share table t's key with the query (`known`, counted through the table's mask) are as many as
            // the matching entries, those entries are these rows and their row numbers need not be read again (a
            // neighbour within 3 bits matches up to 20 tables; each match was a cache miss in the row array).
            for f in found.iter_mut().take(nb) {
                f.clear();
            }
            for t in 0..n_tables {
                hits.clear();
                groups.clear();
                let mask = ix.masks[t];
                for qb in 0..nb {
                    let i = qb * n_tables + t;
                    let (lo, hi) = span[i];
                    if lo == hi {
                        continue;
                    }
                    let key = qkeys[b0 * n_tables + i];
                    let start = hits.len();
                    for (pos, &k) in run.keys[lo..hi].iter().enumerate() {
                        if k == key {
                            hits.push(lo + pos);
                        }
                    }
                    let matched = hits.len() - start;
                    if matched == 0 {
                        continue;
                    }
                    let q = q_sims[b0 + qb];
                    let known = found[qb].iter().filter(|&&(_, s)| (s ^ q) & mask == 0).count();
                    if known >= matched {
                        hits.truncate(start); // all of them read already
                        continue;
                    }
                    for &pos in &hits[start..] {
                        prefetch(run.rows.as_ptr().wrapping_add(pos));
                    }
                    groups.push((qb, start, hits.len(), known));
                }
                // 4. their rows (SimHashes prefetched), kept within the distance and alive
                for &pos in &hits {
                    prefetch(ix.simhash.as_ptr().wrapping_add(run.rows[pos] as usize));
                }
                for &(qb, start, end, known) in &groups {
                    let q = q_sims[b0 + qb];
                    // rows already read that may be among these entries (none when `known` is 0)
                    known_rows.clear();
                    if known > 0 && known * (end - start) <= CHECK_LIMIT {
                        known_rows.extend(found[qb].iter().filter(|&&(_, s)| (s ^ q) & mask == 0).map(|&(r, _)| r));
                    }
                    let big = known > 0 && known_rows.is_empty(); // too many to compare: left to the final dedup
                    for &pos in &hits[start..end] {
                        let row = run.rows[pos] as usize;
                        if known_rows.contains(&(row as u32)) {
                            continue;
                        }
                        if !big {
                            // `found` stays free of repeats (an undercount only means reading more, never less)
                            found[qb].push((row as u32, ix.simhash[row]));
                        }
                        if keep(row, q) {
                            cand[qb].push(row as u32);
                        }
                    }
                }
            }
        }
        // the tail: brute force; beyond k a pair must also share a key
        if ix.tail_start < ix.tail_stop {
            let tail = ix.tail_start..ix.tail_stop;
            for (qb, c) in cand.iter_mut().enumerate().take(nb) {
                let q = q_sims[b0 + qb];
                for row in tail.clone() {
                    let x = ix.simhash[row] ^ q;
                    let d = x.count_ones();
                    if d <= max_distance
                        && ix.has_keys[row]
                        && alive.is_none_or(|a| a[row])
                        && (d <= ix.k || ix.masks.iter().any(|&mk| x & mk == 0))
                    {
                        c.push(row as u32);
                    }
                }
            }
        }
        for c in cand.iter_mut().take(nb) {
            if c.len() > 1 {
                c.sort_unstable();
                c.dedup();
            }
            out.extend(c.iter().map(|&r| r as i64));
            bounds.push(out.len());
        }
        b0 = b1;
    }
    (bounds, out)
}
