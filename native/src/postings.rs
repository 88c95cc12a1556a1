//! The sentence channel of `es_simhash.index.memory.MemoryIndex`, natively: sentence (and shingle-sketch) hash ->
//! the rows holding it, ascending, and the lookup over them (`MemoryIndex._sentence_rows` in `memory.py` is the
//! reference: the same rows and the same document frequencies).
//!
//! Most hashes are held by one row: the map keeps that row inline (a `u32`), and only hashes held by several rows
//! get a list of their own (`lists`, the map's value is then the list's number with the top bit set). Rows are
//! below 2**31 (checked). A row holding a hash twice is listed twice, as in the Python lists.

use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

const LIST: u32 = 1 << 31;

/// Hash -> rows, ascending (rows are added in ascending order).
#[derive(Default)]
pub struct Postings {
    map: FxHashMap<u64, u32>,
    lists: Vec<Vec<u32>>,
    /// Rows added so far are below this.
    next_row: u64,
}

/// What a lookup of one query gives: the document frequency of each of its hashes (in its order), and whether
/// the sentence channel brings candidates (then `rows` holds them, ascending and distinct).
pub struct Query {
    pub dfs: Vec<u64>,
    pub rows: Vec<u32>,
    pub extra: bool,
}

impl Postings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows are below this.
    pub fn next_row(&self) -> u64 {
        self.next_row
    }

    /// The rows holding `h`, ascending (a row holding it twice twice).
    #[inline]
    pub fn bucket(&self, h: u64) -> &[u32] {
        match self.map.get(&h) {
            None => &[],
            Some(v) if v & LIST != 0 => &self.lists[(v & !LIST) as usize],
            Some(v) => std::slice::from_ref(v),
        }
    }

    /// Row `row` holds `h`. Rows come in ascending order (`row` at least every row added before).
    #[inline]
    fn push(&mut self, h: u64, row: u32) {
        match self.map.entry(h) {
            Entry::Vacant(e) => {
                e.insert(row);
            }
            Entry::Occupied(mut e) => {
                let v = *e.get();
                if v & LIST != 0 {
                    self.lists[(v & !LIST) as usize].push(row);
                } else {
                    let i = self.lists.len();
                    assert!(i < LIST as usize, "too many shared hashes");
                    self.lists.push(vec![v, row]);
                    *e.get_mut() = i as u32 | LIST;
                }
            }
        }
    }

    /// Check that rows `start..start + count` can be added (ascending, below 2**31).
    pub fn check_rows(&self, start: u64, count: u64) -> Result<(), String> {
        if start < self.next_row {
            return Err(format!("rows are added in ascending order: {start} < {}", self.next_row));
        }
        if start + count > LIST as u64 {
            return Err("more than 2**31 rows".into());
        }
        Ok(())
    }

    /// Row `row` holds the hashes `hashes` (after `check_rows`).
    pub fn add_row(&mut self, row: u64, hashes: &[u64]) {
        for &h in hashes {
            self.push(h, row as u32);
        }
        self.next_row = self.next_row.max(row + 1);
    }

    /// The sentence channel of one query among rows `[0, end)`: for each of `hashes`, its document frequency (live
    /// rows holding it: `alive` is `None` when every row is alive); the rows holding one of its long-sentence hashes
    /// (below `sketch_bit`, without `fuzzy_mark`) or `min_shared` of its sketch and fuzzy hashes, counting only
    /// hashes with a document frequency
    /// of 1..=`cap` (dead rows among them too: the caller drops them, as it does the other channels').
    #[allow(clippy::too_many_arguments)]
    pub fn query(&self, hashes: &[u64], end: i64, alive: Option<&[bool]>, cap: i64, sketch_bit: u64,
                 fuzzy_mark: u64, min_shared: usize, sketch: &mut Vec<u32>, out: &mut Query) {
        out.dfs.clear();
        out.rows.clear();
        out.extra = false;
        sketch.clear();
        for &h in hashes {
            let bucket = self.bucket(h);
            let bucket = if bucket.last().is_some_and(|&r| r as i64 >= end) {
                &bucket[..bucket.partition_point(|&r| (r as i64) < end)]
            } else {
                bucket
            };
            let df = match alive {
                Some(alive) => bucket.iter().filter(|&&r| alive[r as usize]).count() as u64,
                None => bucket.len() as u64,
            };
            out.dfs.push(df);
            if df > 0 && (df as i128) <= cap as i128 {
                if h >= sketch_bit || (fuzzy_mark != 0 && h & fuzzy_mark == fuzzy_mark) {
                    sketch.extend_from_slice(bucket);
                } else {
                    out.rows.extend_from_slice(bucket);
                    out.extra = true;
                }
            }
        }
        if sketch.len() >= min_shared {
            sketch.sort_unstable();
            let mut i = 0;
            while i < sketch.len() {
                let mut j = i + 1;
                while j < sketch.len() && sketch[j] == sketch[i] {
                    j += 1;
                }
                if j - i >= min_shared {
                    out.rows.push(sketch[i]);
                    out.extra = true;
                }
                i = j;
            }
        }
        if out.extra {
            out.rows.sort_unstable();
            out.rows.dedup();
        }
    }
}

#[cfg(feature = "python")]
mod python {
    use super::{Postings, Query};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::types::{PyDict, PyList, PyTuple};

    /// A numpy bool array's buffer (no copy): 1-D, contiguous; the native lookup's ``view`` (``lib.rs``), which
    /// also takes arrays of more dimensions as flat. Valid while ``obj`` lives and is not resized (the caller keeps
    /// it for the call).
    unsafe fn bool_view<'a>(obj: &Bound<'_, PyAny>) -> PyResult<&'a [bool]> {
        let ndim: usize = obj.getattr("ndim").and_then(|d| d.extract())
            .map_err(|_| PyValueError::new_err("alive: not a numpy array"))?;
        if ndim != 1 {
            return Err(PyValueError::new_err("alive: not 1-D"));
        }
        crate::python::view::<bool>(obj, &["|b1"], "alive")
    }

    /// The hashes of a tuple (or any iterable) of ints, into `out`.
    fn hashes_of(obj: &Bound<'_, PyAny>, out: &mut Vec<u64>) -> PyResult<()> {
        out.clear();
        if let Ok(t) = obj.cast::<PyTuple>() {
            for item in t.iter() {
                out.push(item.extract()?);
            }
        } else {
            for item in obj.try_iter()? {
                out.push(item?.extract()?);
            }
        }
        Ok(())
    }

    /// Sentence-hash postings of ``MemoryIndex`` (``memory.py``: ``MemoryIndex._sentence_rows`` is the reference):
    /// hash -> the rows holding it. ``sketch_bit``: hashes at least this are sketch hashes, and hashes with every
    /// bit of ``fuzzy_mark`` set (0: none) fuzzy ones, bringing a candidate only when it holds ``min_shared`` of a
    /// query's.
    #[pyclass(module = "es_simhash_native")]
    pub struct SentencePostings {
        postings: Postings,
        sketch_bit: u64,
        fuzzy_mark: u64,
        min_shared: usize,
    }

    #[pymethods]
    impl SentencePostings {
        #[new]
        #[pyo3(signature = (sketch_bit, min_shared, fuzzy_mark=0))]
        fn new(sketch_bit: u64, min_shared: usize, fuzzy_mark: u64) -> Self {
            SentencePostings { postings: Postings::new(), sketch_bit, fuzzy_mark, min_shared }
        }

        /// Row ``start + i`` holds the hashes ``hashes[i]`` (a tuple of ints). Rows are added in ascending order.
        fn add(&mut self, start: u64, hashes: &Bound<'_, PyAny>) -> PyResult<()> {
            let items: Vec<Bound<'_, PyAny>> = match hashes.cast::<PyList>() {
                Ok(l) => l.iter().collect(),
                Err(_) => hashes.try_iter()?.collect::<PyResult<_>>()?,
            };
            self.postings.check_rows(start, items.len() as u64).map_err(PyValueError::new_err)?;
            let mut buf = Vec::new();
            for (i, item) in items.iter().enumerate() {
                hashes_of(item, &mut buf)?;
                self.postings.add_row(start + i as u64, &buf);
            }
            Ok(())
        }

        /// The rows holding ``h``, ascending.
        fn rows(&self, h: u64) -> Vec<u32> {
            self.postings.bucket(h).to_vec()
        }

        /// The sentence channel of a batch of lookups: query ``i`` holds the hashes ``hashes[i]`` and sees rows
        /// ``[0, ends[i])`` (``ends`` ``None``: rows ``[0, n)`` for all); ``alive``: the index's liveness array, or
        /// ``None`` when every row is alive; ``cap``: ``max_sentence_df``. Returns, per query (as many as
        /// ``ends`` has, when it is shorter), ``(rows, sentence_df)``: ``rows`` the candidate rows the channel
        /// brings, ascending (``None`` when it brings none, as ``_sentence_rows`` gives ``extra``), and
        /// ``sentence_df`` the dict hash -> document frequency of every hash.
        #[pyo3(signature = (hashes, n, ends, alive, cap))]
        fn lookup<'py>(&self, py: Python<'py>, hashes: &Bound<'py, PyAny>, n: i64, ends: Option<Vec<i64>>,
                       alive: Option<Bound<'py, PyAny>>, cap: i64) -> PyResult<Bound<'py, PyList>> {
            let queries: Vec<Bound<'py, PyAny>> = match hashes.cast::<PyList>() {
                Ok(l) => l.iter().collect(),
                Err(_) => hashes.try_iter()?.collect::<PyResult<_>>()?,
            };
            // SAFETY: `alive` is held for the whole call, and nothing here runs Python code that could resize it.
            let alive = match &alive {
                Some(a) => Some(unsafe { bool_view(a)? }),
                None => None,
            };
            if let Some(a) = alive {
                if (a.len() as u64) < self.postings.next_row() {
                    return Err(PyValueError::new_err("alive: shorter than the rows"));
                }
            }
            let count = match &ends {
                Some(e) => e.len().min(queries.len()),
                None => queries.len(),
            };
            let out = PyList::empty(py);
            let mut buf: Vec<u64> = Vec::new();
            let mut sketch: Vec<u32> = Vec::new();
            let mut q = Query { dfs: Vec::new(), rows: Vec::new(), extra: false };
            for (i, item) in queries.iter().take(count).enumerate() {
                let end = ends.as_ref().map_or(n, |e| e[i]);
                let df = PyDict::new(py);
                let tuple = item.cast::<PyTuple>().ok();
                let hs: Vec<Bound<'py, PyAny>>;
                let items: &[Bound<'py, PyAny>] = match tuple {
                    Some(t) if t.is_empty() => &[],
                    Some(t) => {
                        hs = t.iter().collect();
                        &hs
                    }
                    None => {
                        hs = item.try_iter()?.collect::<PyResult<_>>()?;
                        &hs
                    }
                };
                if items.is_empty() {
                    out.append((py.None(), df))?;
                    continue;
                }
                buf.clear();
                for h in items {
                    buf.push(h.extract()?);
                }
                self.postings.query(&buf, end, alive, cap, self.sketch_bit, self.fuzzy_mark, self.min_shared, &mut sketch, &mut q);
                for (h, d) in items.iter().zip(&q.dfs) {
                    df.set_item(h, *d)?;
                }
                if q.extra {
                    out.append((PyList::new(py, &q.rows)?, df))?;
                } else {
                    out.append((py.None(), df))?;
                }
            }
            Ok(out)
        }
    }
}

#[cfg(feature = "python")]
pub use python::SentencePostings;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_then_list_and_cut() {
        let mut p = Postings::new();
        p.add_row(0, &[1, 2]);
        p.add_row(1, &[1]);
        p.add_row(3, &[1, 1]);
        assert_eq!(p.bucket(1), &[0, 1, 3, 3]);
        assert_eq!(p.bucket(2), &[0]);
        assert_eq!(p.bucket(9), &[] as &[u32]);
        let (mut s, mut q) = (Vec::new(), Query { dfs: vec![], rows: vec![], extra: false });
        p.query(&[1, 2, 9], 2, None, 50, 1 << 63, 0, 2, &mut s, &mut q);
        assert_eq!(q.dfs, vec![2, 1, 0]);
        assert_eq!(q.rows, vec![0, 1]);
        assert!(q.extra);
        let alive = [true, false, true, true];
        p.query(&[1], 4, Some(&alive), 2, 1 << 63, 0, 2, &mut s, &mut q);
        assert_eq!(q.dfs, vec![3]);
        assert!(!q.extra);
    }

    #[test]
    fn sketch_needs_min_shared() {
        let mut p = Postings::new();
        let (a, b, c) = (1u64 << 63 | 5, 1u64 << 63 | 6, 1u64 << 63 | 7);
        p.add_row(0, &[a, b]);
        p.add_row(1, &[a, c]);
        let (mut s, mut q) = (Vec::new(), Query { dfs: vec![], rows: vec![], extra: false });
        p.query(&[a, b], 2, None, 50, 1 << 63, 0, 2, &mut s, &mut q);
        assert_eq!(q.rows, vec![0]);
        p.query(&[c], 2, None, 50, 1 << 63, 0, 2, &mut s, &mut q);
        assert!(!q.extra);
    }

    #[test]
    fn fuzzy_needs_min_shared() {
        let mark = 0xFFFF_FFFFu64 << 30;
        let mut p = Postings::new();
        let (a, b, c) = (mark | 5, mark | 6, mark | 7);
        p.add_row(0, &[a, b]);
        p.add_row(1, &[a, c]);
        let (mut s, mut q) = (Vec::new(), Query { dfs: vec![], rows: vec![], extra: false });
        p.query(&[a, b], 2, None, 50, 1 << 63, mark, 2, &mut s, &mut q);
        assert_eq!(q.rows, vec![0]);
        p.query(&[a], 2, None, 50, 1 << 63, mark, 2, &mut s, &mut q);
        assert!(!q.extra);
        p.query(&[a], 2, None, 50, 1 << 63, 0, 2, &mut s, &mut q);
        assert_eq!(q.rows, vec![0, 1]);
    }
}
