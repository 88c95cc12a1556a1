//! es_simhash_native: the native fingerprint core of es-simhash (see `core.rs`). The Python package uses it when
//! it is installed (`es_simhash.fingerprint.Fingerprinter(engine="auto")`) and stays the reference.

pub mod core;
pub mod fold_tables;
pub mod idf;
pub mod memlookup;
pub mod postings;
pub mod tables;

#[cfg(feature = "python")]
mod python {
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
    use rustc_hash::{FxHashMap, FxHashSet};
    use std::sync::{Mutex, OnceLock};
    use std::thread::JoinHandle;

    use crate::core::{self, Config, Core, Places, Tf};
    use crate::idf::IdfTable;
    use crate::memlookup;

    /// The fingerprint pipeline for one configuration of ``Fingerprinter`` (IDF table, stop words, parameters).
    #[pyclass(frozen, module = "es_simhash_native")]
    struct NativeFingerprinter {
        /// The core, or why it could not be built (the IDF cache's files could not be read or do not pair up)
        core: OnceLock<Result<Core, String>>,
        /// The core being built on another thread (an IDF table given as the cache's words and values)
        pending: Mutex<Option<JoinHandle<Result<Core, String>>>>,
    }

    impl NativeFingerprinter {
        /// The core, once built (waiting for the thread building it, if any): ``IdfCacheError`` (a ValueError)
        /// when its IDF table could not be read from the cache's files, every time it is asked for.
        fn core(&self) -> PyResult<&Core> {
            let built = self.core.get_or_init(|| {
                let handle = self.pending.lock().unwrap_or_else(|e| e.into_inner()).take();
                match handle.map(JoinHandle::join) {
                    Some(Ok(core)) => core,
                    Some(Err(panic)) => std::panic::resume_unwind(panic),
                    None => Err("no core and no thread building one".into()),
                }
            });
            built.as_ref().map_err(|why| IdfCacheError::new_err(why.clone()))
        }
    }

    pyo3::create_exception!(es_simhash_native, IdfCacheError, PyValueError,
        "The IDF cache's files a NativeFingerprinter was made from could not be read, or do not pair up.");

    fn texts_of<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
        let mut out = Vec::new();
        for item in texts.try_iter()? {
            out.push(item?.cast_into::<PyString>()?);
        }
        Ok(out)
    }

    #[pymethods]
    impl NativeFingerprinter {
        /// ``idf``: a dict word -> IDF (words that are not valid UTF-8 are skipped: no token can equal them), or
        /// ``(words, values)``: the IDF cache's words file (bytes: UTF-8 words joined by ``\n``) and the IDF of each
        /// word (bytes: little-endian float64), or ``(words_path, values_path)``: the paths of those two files (str),
        /// read on the thread that builds the table (or the table ``start_idf_files`` started building from them);
        /// with either of the last two, the table is built on a background thread (the first
        /// ``fingerprint_many`` waits for it) so the caller goes on at once; ``stopwords``: an iterable of str; ``place_list``: the text of the list of
        /// places ``events.places`` reads, whose names are normalised here as ``events.places`` normalises them
        /// (``None``: no places); ``tf``: "raw", "cap:N" or "sublinear" (then ``ln_table`` holds
        /// ``numpy.log(k)`` for k = 1, 2, ...: the logarithms exactly as numpy computes them).
        #[new]
        #[pyo3(signature = (idf, default_idf, stopwords, *, min_token_len, sentences, min_sentence_chars,
                            short_chars, sketch, sketch_chars, sketch_shingle, line_sketch, tf, ln_table=None, fuzzy=16,
                            place_list=None))]
        #[allow(clippy::too_many_arguments)]
        fn new(
            idf: &Bound<'_, PyAny>,
            default_idf: f64,
            stopwords: &Bound<'_, PyAny>,
            min_token_len: usize,
            sentences: usize,
            min_sentence_chars: usize,
            short_chars: usize,
            sketch: usize,
            sketch_chars: usize,
            sketch_shingle: (usize, usize),
            line_sketch: usize,
            tf: &str,
            ln_table: Option<Vec<f64>>,
            fuzzy: usize,
            place_list: Option<String>,
        ) -> PyResult<Self> {
            let tf = match tf {
                "raw" => Tf::Raw,
                "sublinear" => Tf::Sublinear(ln_table.ok_or_else(|| PyValueError::new_err("sublinear needs ln_table"))?),
                t if t.starts_with("cap:") => Tf::Cap(
                    t[4..].parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| PyValueError::new_err("bad tf"))?,
                ),
                _ => return Err(PyValueError::new_err(format!("tf is 'sublinear', 'raw' or 'cap:N', not {tf:?}"))),
            };
            if min_token_len < 1 || min_sentence_chars < 1 || sketch_shingle.0 < 1 || sketch_shingle.1 < 1 {
                return Err(PyValueError::new_err("min_token_len, min_sentence_chars, sketch_shingle must be >= 1"));
            }
            let mut table: FxHashMap<Box<str>, f64> = FxHashMap::default();
            let mut cached: Option<(String, Vec<u8>)> = None;
            let mut files: Option<(String, String)> = None;
            if let Ok(idf) = idf.cast::<PyDict>() {
                table.reserve(idf.len());
                for (k, v) in idf.iter() {
                    let k = k.cast_into::<PyString>()?;
                    if let Ok(s) = k.to_str() {
                        table.insert(s.into(), v.extract::<f64>()?);
                    }
                }
            } else if let Ok(paths) = idf.extract::<(String, String)>() {
                files = Some(paths);
            } else {
                let (words, values): (Bound<'_, PyBytes>, Bound<'_, PyBytes>) = idf.extract()
                    .map_err(|_| PyValueError::new_err("idf is a dict or (words, values) bytes"))?;
                let words = std::str::from_utf8(words.as_bytes())
                    .map_err(|_| PyValueError::new_err("idf words are not UTF-8"))?;
                let values = values.as_bytes();
                if !IdfTable::pairs_up(words, values) {
                    return Err(PyValueError::new_err("idf: one float64 per word"));
                }
                cached = Some((words.to_owned(), values.to_vec()));
            }
            let mut stop: FxHashSet<Box<str>> = FxHashSet::default();
            for w in stopwords.try_iter()? {
                let w = w?.cast_into::<PyString>()?;
                if let Ok(s) = w.to_str() {
                    stop.insert(s.into());
                }
            }
            let cfg = Config {
                min_token_len,
                sentences,
                min_sentence_chars,
                short_chars,
                sketch,
                sketch_chars,
                sketch_shingle,
                line_sketch,
                tf,
                fuzzy,
                places: match place_list {
                    Some(list) => Places::from_list(&list).map_err(PyValueError::new_err)?,
                    None => Places::default(),
                },
            };
            let build: Box<dyn FnOnce() -> Result<IdfTable, String> + Send> = match (cached, files) {
                (Some((words, values)), _) => Box::new(move || Ok(IdfTable::from_cache(words, &values))),
                (None, Some(paths)) => {
                    Box::new(move || take_prebuilt(&paths).unwrap_or_else(|| idf_from_files(&paths.0, &paths.1)))
                }
                (None, None) => {
                    let core = Ok(Core::new(table, default_idf, stop, cfg));
                    return Ok(NativeFingerprinter { core: OnceLock::from(core), pending: Mutex::new(None) });
                }
            };
            let handle = std::thread::Builder::new()
                .name("idf-table".into())
                .spawn(move || build().map(|table| Core::new(table, default_idf, stop, cfg)))
                .map_err(|e| PyValueError::new_err(format!("cannot start a thread: {e}")))?;
            Ok(NativeFingerprinter { core: OnceLock::new(), pending: Mutex::new(Some(handle)) })
        }

        /// Wait until the core is built (a table given as words and values is built on a thread of its own).
        /// ``os.fork`` calls it first: a child cannot wait for a thread of its parent.
        fn wait(&self, py: Python<'_>) {
            py.detach(|| {
                let _ = self.core(); // (a core that could not be built says so when it is used)
            });
        }

        /// For each text: ``(simhash, content_hash, sentences, n_features, n_chars, short, version, word_bag,
        /// sketch, number_bag, fuzzy, fuzzy_digests, date_bag, place_bag)`` (the fields of ``Fingerprint`` in order: ``ROW_FIELDS``; the version is
        /// ``FINGERPRINT_VERSION``), or ``None`` when Python must compute that text. The GIL is released while
        /// computing.
        fn fingerprint_many<'py>(&self, py: Python<'py>, texts: &Bound<'py, PyAny>) -> PyResult<Vec<Option<Bound<'py, PyTuple>>>> {
            let owned = texts_of(texts)?;
            let strs: Vec<Option<&str>> = owned.iter().map(|s| s.to_str().ok()).collect();
            let core = py.detach(|| self.core())?;
            let fps: Vec<Option<core::Fp>> = py.detach(|| core.fingerprint_many(&strs));
            fps.into_iter()
                .map(|fp| {
                    fp.map(|fp| {
                        // the signature, then the sketch (top bit set): two fields
                        let split = fp.sentences.iter().position(|&h| h >> 63 == 1).unwrap_or(fp.sentences.len());
                        let sentences = PyTuple::new(py, &fp.sentences[..split])?;
                        let sketch = PyTuple::new(py, &fp.sentences[split..])?;
                        let fuzzy = PyTuple::new(py, &fp.fuzzy)?;
                        let row: [Bound<'py, PyAny>; 14] = [
                            fp.simhash.into_pyobject(py)?.into_any(),
                            fp.content_hash.into_pyobject(py)?.into_any(),
                            sentences.into_any(),
                            fp.n_features.into_pyobject(py)?.into_any(),
                            fp.n_chars.into_pyobject(py)?.into_any(),
                            fp.short.into_pyobject(py)?.to_owned().into_any(),
                            core::FINGERPRINT_VERSION.into_pyobject(py)?.into_any(),
                            fp.word_bag.into_pyobject(py)?.into_any(),
                            sketch.into_any(),
                            fp.number_bag.into_pyobject(py)?.into_any(),
                            fuzzy.into_any(),
                            fp.fuzzy_digests.into_pyobject(py)?.into_any(),
                            fp.date_bag.into_pyobject(py)?.into_any(),
                            fp.place_bag.into_pyobject(py)?.into_any(),
                        ];
                        PyTuple::new(py, row)
                    })
                    .transpose()
                })
                .collect()
        }
    }

    /// An IDF table built from the IDF cache's files ahead of the core that will use it (``start_idf_files``).
    enum Prebuilt {
        Building(JoinHandle<Result<IdfTable, String>>),
        Built(Result<IdfTable, String>),
    }

    impl Prebuilt {
        /// The table, once built (waiting for its thread).
        fn into_table(self) -> Result<IdfTable, String> {
            match self {
                Prebuilt::Building(handle) => handle.join().unwrap_or_else(|_| Err("its build panicked".into())),
                Prebuilt::Built(table) => table,
            }
        }
    }

    /// Tables started by ``start_idf_files``, by their files' paths, until a core takes them.
    static PREBUILT: Mutex<Vec<((String, String), Prebuilt)>> = Mutex::new(Vec::new());

    /// The IDF table in the IDF cache's two files: the words (UTF-8, joined by ``\n``) and one little-endian
    /// float64 per word.
    fn idf_from_files(words_path: &str, values_path: &str) -> Result<IdfTable, String> {
        let words = std::fs::read(words_path).map_err(|e| format!("cannot read {words_path}: {e}"))?;
        let words = String::from_utf8(words).map_err(|_| format!("{words_path} is not UTF-8"))?;
        let values = std::fs::read(values_path).map_err(|e| format!("cannot read {values_path}: {e}"))?;
        if !IdfTable::pairs_up(&words, &values) {
            return Err(format!("{words_path} and {values_path} do not pair up (one float64 per word)"));
        }
        Ok(IdfTable::from_cache(words, &values))
    }

    /// The table ``start_idf_files`` built (or is building) from these files, if it was started: taken, so
    /// the next core made from them reads them again.
    fn take_prebuilt(paths: &(String, String)) -> Option<Result<IdfTable, String>> {
        let found = {
            let mut started = PREBUILT.lock().unwrap_or_else(|e| e.into_inner());
            let at = started.iter().position(|(p, _)| p == paths)?;
            started.swap_remove(at).1
        };
        Some(found.into_table())
    }

    /// Start building the IDF table held in the IDF cache's two files (see ``NativeFingerprinter``) on a
    /// background thread, for the core that will be made from the same two paths: the command line starts it
    /// before its imports, so the first texts do not wait for the table. ``True`` when this call started it.
    /// Nothing changes but when the files are read: a core made from other files, or from a dict, does not use it.
    #[pyfunction]
    fn start_idf_files(words_path: String, values_path: String) -> bool {
        let mut started = PREBUILT.lock().unwrap_or_else(|e| e.into_inner());
        let paths = (words_path, values_path);
        if started.iter().any(|(p, _)| *p == paths) {
            return false;
        }
        let (w, v) = paths.clone();
        // (a thread of its own, beside the segmenter's: measured faster than building it after the dictionary on
        // the segmenter's thread, though the command's imports then share the cores with two threads)
        let build = move || idf_from_files(&w, &v);
        match std::thread::Builder::new().name("idf-files".into()).spawn(build) {
            Ok(handle) => {
                started.push((paths, Prebuilt::Building(handle)));
                true
            }
            Err(_) => false,
        }
    }

    /// Wait until every table ``start_idf_files`` started is built (``os.fork`` calls it first: a child cannot
    /// wait for a thread of its parent).
    #[pyfunction]
    fn wait_idf_files(py: Python<'_>) {
        py.detach(|| {
            let mut started = PREBUILT.lock().unwrap_or_else(|e| e.into_inner());
            for (_, state) in started.iter_mut() {
                let building = std::mem::replace(state, Prebuilt::Built(Err(String::new())));
                *state = Prebuilt::Built(building.into_table());
            }
        });
    }

    /// Start building jieba-rs's dictionary (~0.2 s of CPU, otherwise paid by the first text segmented) on a
    /// background thread, so it overlaps whatever the caller does next (imports, reading the IDF table and the
    /// input). Returns ``True`` when this call started it, ``False`` when it was already started (or built).
    /// Segmenting before it is done waits for it (it is built once per process, whoever asks first). The build
    /// cannot change a token: it is the same ``Jieba::new()``, only earlier.
    ///
    /// ``cache_dir``: a folder where the built dictionary is kept (a snapshot of jieba-rs's tables, ~25 MB): read
    /// back instead of built when it is there (~0.01 s instead of ~0.1 s), written after a build when it is not;
    /// one that is damaged, cut short or of another build is not used (and is written again). Given only by the
    /// first call.
    #[pyfunction]
    #[pyo3(signature = (cache_dir=None))]
    fn start_segmenter(cache_dir: Option<std::path::PathBuf>) -> bool {
        static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if STARTED.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return false;
        }
        if let Some(dir) = cache_dir {
            core::set_segmenter_snapshot(dir.join(core::SEGMENTER_SNAPSHOT_NAME));
        }
        let spawned = std::thread::Builder::new().name("jieba-dict".into()).spawn(|| {
            core::jieba();
        });
        spawned.is_ok() // (no thread: the first text builds it, as before)
    }

    /// Wait until jieba-rs's dictionary is built (building it here if nobody has started it). ``os.fork`` calls
    /// it first: a child forked while another thread builds the dictionary would wait for it forever.
    #[pyfunction]
    fn wait_segmenter(py: Python<'_>) {
        py.detach(|| {
            core::jieba();
        });
    }

    /// ``text.normalize`` of each text (``None``: left to Python).
    #[pyfunction]
    fn normalize_many(py: Python<'_>, texts: &Bound<'_, PyAny>) -> PyResult<Vec<Option<String>>> {
        let owned = texts_of(texts)?;
        let strs: Vec<Option<&str>> = owned.iter().map(|s| s.to_str().ok()).collect();
        Ok(py.detach(|| strs.iter().map(|t| t.and_then(core::normalize)).collect()))
    }

    /// ``text.segment(normalized)`` of each (already normalised) text, as rjieba + the re-split rule give it.
    #[pyfunction]
    fn segment_many(py: Python<'_>, texts: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Vec<String>>>> {
        let owned = texts_of(texts)?;
        let strs: Vec<Option<&str>> = owned.iter().map(|s| s.to_str().ok()).collect();
        Ok(py.detach(|| {
            strs.iter()
                .map(|t| {
                    t.map(|t| {
                        let mut out = Vec::new();
                        core::segment(t, &mut out);
                        out.into_iter().map(String::from).collect()
                    })
                })
                .collect()
        }))
    }

    /// ``text._keys_many`` of each (already normalised) text: (content key, sentence keys).
    #[pyfunction]
    fn keys_many(py: Python<'_>, texts: &Bound<'_, PyAny>, min_sentence_chars: usize) -> PyResult<Vec<Option<(String, Vec<String>)>>> {
        let owned = texts_of(texts)?;
        let strs: Vec<Option<&str>> = owned.iter().map(|s| s.to_str().ok()).collect();
        Ok(py.detach(|| {
            strs.iter()
                .map(|t| {
                    t.map(|t| {
                        let (key, _, spans) = core::keys(t, min_sentence_chars);
                        let sentences = spans.iter().map(|&(s, e, _)| key[s..e].to_string()).collect();
                        (key, sentences)
                    })
                })
                .collect()
        }))
    }

    /// A read-only view of a numpy array's buffer, through ``__array_interface__`` (no copy): C-contiguous, of one
    /// of the ``typestrs``. The slice is valid while ``obj`` lives and is not resized (the caller keeps it).
    pub(crate) unsafe fn view<'a, T>(obj: &Bound<'_, PyAny>, typestrs: &[&str], what: &str) -> PyResult<&'a [T]> {
        let bad = |why: &str| PyValueError::new_err(format!("{what}: {why}"));
        let ai = obj.getattr("__array_interface__").map_err(|_| bad("not a numpy array"))?;
        let ai = ai.cast_into::<PyDict>().map_err(|_| bad("bad __array_interface__"))?;
        let get = |k: &str| ai.get_item(k).ok().flatten().ok_or_else(|| bad("bad __array_interface__"));
        let typestr: String = get("typestr")?.extract()?;
        if !typestrs.contains(&typestr.as_str()) {
            return Err(bad(&format!("dtype {typestr}, expected {typestrs:?}")));
        }
        let shape: Vec<usize> = get("shape")?.extract()?;
        let len: usize = shape.iter().product();
        let strides = get("strides")?;
        if !strides.is_none() {
            let s: Vec<isize> = strides.extract()?;
            if !(shape.len() == 1 && s == [std::mem::size_of::<T>() as isize]) && len > 1 {
                return Err(bad("not contiguous"));
            }
        }
        if ai.get_item("mask").ok().flatten().is_some_and(|m| !m.is_none()) {
            return Err(bad("masked"));
        }
        let (ptr, _readonly): (usize, bool) = get("data")?.extract()?;
        if len == 0 {
            return Ok(&[]);
        }
        if ptr == 0 || ptr % std::mem::align_of::<T>() != 0 {
            return Err(bad("unaligned buffer"));
        }
        Ok(std::slice::from_raw_parts(ptr as *const T, len))
    }

    /// The SimHash channel of ``MemoryIndex._lookup`` (``memory.py``; ``MemoryIndex._key_pairs`` is the numpy
    /// reference): for each query, the rows sharing a lookup key with it (or in the tail) within
    /// ``max_distance`` bits and alive, ascending and distinct. ``runs``: ``(keys, rows, offsets, bits)`` of each
    /// ``_Run``; ``alive``: ``None`` when every row is alive; ``blocks``/``tables``: the ``LookupKeys``'
    /// (shift, width) of each block and blocks of each table; ``q_sims``: the SimHashes of the queries with keys,
    /// ``q_rows`` their positions among ``n_q`` queries. Returns ``n_q`` lists of rows (empty for the others).
    /// The GIL is released while looking up.
    #[pyfunction]
    #[pyo3(signature = (runs, simhash, alive, has_keys, tail_start, tail_stop, masks, k, blocks, tables, q_sims, q_rows, n_q, max_distance))]
    #[allow(clippy::too_many_arguments)]
    fn memory_lookup<'py>(
        py: Python<'py>,
        runs: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>, u32)>,
        simhash: Bound<'py, PyAny>,
        alive: Option<Bound<'py, PyAny>>,
        has_keys: Bound<'py, PyAny>,
        tail_start: usize,
        tail_stop: usize,
        masks: Bound<'py, PyAny>,
        k: u32,
        blocks: Vec<(u32, u32)>,
        tables: Vec<Vec<usize>>,
        q_sims: Bound<'py, PyAny>,
        q_rows: Bound<'py, PyAny>,
        n_q: usize,
        max_distance: u32,
    ) -> PyResult<Bound<'py, PyList>> {
        // SAFETY: every array is kept alive by the Bound references held for the whole call; memory.py does not
        // write them during a lookup (MemoryIndex is not thread-safe anyway).
        let (index, q_sims, q_rows) = unsafe {
            let mut rv = Vec::with_capacity(runs.len());
            for (keys, rows, offsets, bits) in &runs {
                let offsets = match view::<i32>(offsets, &["<i4"], "offsets") {
                    Ok(o) => memlookup::Offsets::I32(o),
                    Err(_) => memlookup::Offsets::I64(view::<i64>(offsets, &["<i8"], "offsets")?),
                };
                rv.push(memlookup::Run { keys: view(keys, &["<u4"], "keys")?, rows: view(rows, &["<i4"], "rows")?, offsets, bits: *bits });
            }
            let alive = match &alive {
                Some(a) => Some(view::<bool>(a, &["|b1"], "alive")?),
                None => None,
            };
            let index = memlookup::Index {
                runs: rv,
                simhash: view(&simhash, &["<u8"], "simhash")?,
                alive,
                has_keys: view(&has_keys, &["|b1"], "has_keys")?,
                tail_start,
                tail_stop,
                masks: view(&masks, &["<u8"], "masks")?,
                k,
            };
            (index, view::<u64>(&q_sims, &["<u8"], "q_sims")?, view::<i64>(&q_rows, &["<i8"], "q_rows")?)
        };
        let n_tables = tables.len();
        if q_rows.len() != q_sims.len() || q_rows.iter().any(|&r| r < 0 || r as usize >= n_q)
            || q_rows.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(PyValueError::new_err("q_rows: ascending positions below n_q, one per query"));
        }
        if index.simhash.len() > u32::MAX as usize {
            return Err(PyValueError::new_err("more than 2**32 rows"));
        }
        if blocks.iter().any(|&(s, w)| s >= 64 || w == 0 || w > 64) || tables.iter().flatten().any(|&b| b >= blocks.len()) {
            return Err(PyValueError::new_err("bad blocks/tables"));
        }
        memlookup::validate(&index, n_tables).map_err(PyValueError::new_err)?;
        let (bounds, rows) = py.detach(|| {
            let qkeys = memlookup::scrambled_keys(q_sims, &blocks, &tables);
            memlookup::lookup(&index, q_sims, &qkeys, n_tables, max_distance)
        });
        let out = PyList::empty(py);
        let mut next = 0usize;
        for (i, &qr) in q_rows.iter().enumerate() {
            while next < qr as usize {
                out.append(PyList::empty(py))?;
                next += 1;
            }
            out.append(PyList::new(py, &rows[bounds[i]..bounds[i + 1]])?)?;
            next += 1;
        }
        while next < n_q {
            out.append(PyList::empty(py))?;
            next += 1;
        }
        Ok(out)
    }

    /// Turn the fold of fingerprint version 6 off (``False``) or on again: for ``bench/fingerprint.py``, which
    /// times the fold against no fold in one run. Off, fingerprints are not version 6's: never index them.
    #[pyfunction]
    fn _set_fold(on: bool) {
        core::set_fold(on);
    }

    #[pymodule]
    fn es_simhash_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(_set_fold, m)?)?;
        m.add_class::<NativeFingerprinter>()?;
        m.add("IdfCacheError", m.py().get_type::<IdfCacheError>())?;
        m.add_function(wrap_pyfunction!(start_segmenter, m)?)?;
        m.add_function(wrap_pyfunction!(wait_segmenter, m)?)?;
        m.add_function(wrap_pyfunction!(start_idf_files, m)?)?;
        m.add_function(wrap_pyfunction!(wait_idf_files, m)?)?;
        m.add_function(wrap_pyfunction!(normalize_many, m)?)?;
        m.add_function(wrap_pyfunction!(segment_many, m)?)?;
        m.add_function(wrap_pyfunction!(keys_many, m)?)?;
        m.add_function(wrap_pyfunction!(memory_lookup, m)?)?;
        m.add_class::<crate::postings::SentencePostings>()?;
        m.add("UNIDATA_VERSION", crate::tables::UNIDATA_VERSION)?;
        m.add("JIEBA_RS_VERSION", "0.11.0")?;
        m.add("FINGERPRINT_VERSION", core::FINGERPRINT_VERSION)?;
        m.add("ROW_FIELDS", 14usize)?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
