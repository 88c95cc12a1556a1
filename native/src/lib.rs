//! es_simhash_native: the native fingerprint core of es-simhash (see `core.rs`). The Python package uses it when
//! it is installed (`es_simhash.fingerprint.Fingerprinter(engine="auto")`) and stays the reference.

pub mod core;
pub mod tables;

#[cfg(feature = "python")]
mod python {
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::types::{PyDict, PyString, PyTuple};
    use rustc_hash::{FxHashMap, FxHashSet};

    use crate::core::{self, Config, Core, Tf};

    /// The fingerprint pipeline for one configuration of ``Fingerprinter`` (IDF table, stop words, parameters).
    #[pyclass(frozen, module = "es_simhash_native")]
    struct NativeFingerprinter {
        core: Core,
    }

    fn texts_of<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
        let mut out = Vec::new();
        for item in texts.try_iter()? {
            out.push(item?.cast_into::<PyString>()?);
        }
        Ok(out)
    }

    #[pymethods]
    impl NativeFingerprinter {
        /// ``idf``: a dict word -> IDF (words that are not valid UTF-8 are skipped: no token can equal them);
        /// ``stopwords``: an iterable of str; ``tf``: "raw", "cap:N" or "sublinear" (then ``ln_table`` holds
        /// ``numpy.log(k)`` for k = 1, 2, ...: the logarithms exactly as numpy computes them).
        #[new]
        #[pyo3(signature = (idf, default_idf, stopwords, *, min_token_len, sentences, min_sentence_chars,
                            short_chars, sketch, sketch_chars, sketch_shingle, tf, ln_table=None))]
        #[allow(clippy::too_many_arguments)]
        fn new(
            idf: &Bound<'_, PyDict>,
            default_idf: f64,
            stopwords: &Bound<'_, PyAny>,
            min_token_len: usize,
            sentences: usize,
            min_sentence_chars: usize,
            short_chars: usize,
            sketch: usize,
            sketch_chars: usize,
            sketch_shingle: (usize, usize),
            tf: &str,
            ln_table: Option<Vec<f64>>,
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
            table.reserve(idf.len());
            for (k, v) in idf.iter() {
                let k = k.cast_into::<PyString>()?;
                if let Ok(s) = k.to_str() {
                    table.insert(s.into(), v.extract::<f64>()?);
                }
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
                tf,
            };
            Ok(NativeFingerprinter { core: Core::new(table, default_idf, stop, cfg) })
        }

        /// For each text: ``(simhash, content_hash, sentences, n_features, n_chars, short, 4, word_bag)`` (the
        /// fields of ``Fingerprint`` in order), or ``None`` when Python must compute that text. The GIL is
        /// released while computing.
        fn fingerprint_many<'py>(&self, py: Python<'py>, texts: &Bound<'py, PyAny>) -> PyResult<Vec<Option<Bound<'py, PyTuple>>>> {
            let owned = texts_of(texts)?;
            let strs: Vec<Option<&str>> = owned.iter().map(|s| s.to_str().ok()).collect();
            let core = &self.core;
            let fps: Vec<Option<core::Fp>> = py.detach(|| core.fingerprint_many(&strs));
            fps.into_iter()
                .map(|fp| {
                    fp.map(|fp| {
                        let sentences = PyTuple::new(py, &fp.sentences)?;
                        (fp.simhash, fp.content_hash, sentences, fp.n_features, fp.n_chars, fp.short, 4u32, fp.word_bag)
                            .into_pyobject(py)
                    })
                    .transpose()
                })
                .collect()
        }
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

    #[pymodule]
    fn es_simhash_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_class::<NativeFingerprinter>()?;
        m.add_function(wrap_pyfunction!(normalize_many, m)?)?;
        m.add_function(wrap_pyfunction!(segment_many, m)?)?;
        m.add_function(wrap_pyfunction!(keys_many, m)?)?;
        m.add("UNIDATA_VERSION", crate::tables::UNIDATA_VERSION)?;
        m.add("JIEBA_RS_VERSION", "0.11.0")?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
