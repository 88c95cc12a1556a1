//! Inside Rust: the full fingerprint (`Core::fingerprint` on the raw text) against jieba-rs segmentation alone
//! (`Jieba::cut(normalised text, hmm=true)`), same documents, interleaved rounds, medians.
//!
//!     python bench/fingerprint.py --dump DIR        # writes DIR/texts.bin, DIR/idf.tsv, DIR/stopwords.txt
//!     cargo run --release --no-default-features --features bench --bin fpbench -- DIR [ROUNDS]
//!
//! (`bench/fingerprint.py --rust` does both.) Prints `RESULT fingerprint_vs_segment=<seg time / fp time>`.
//! `FPBENCH_STAGES=1` also times the stages one by one (normalise, segment, keys). `FPBENCH_FLOOR=1` also times,
//! in interleaved rounds of their own, the work no fingerprint can skip: normalising the raw text (with its keys)
//! and cutting it, then that and BLAKE2b of every content key; `cut` over each is the best ratio a fingerprint
//! that also counts, weighs and hashes its tokens could approach.

use std::time::Instant;

use es_simhash_native::core::{self, Config, Core, Tf};
use rustc_hash::{FxHashMap, FxHashSet};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: fpbench DIR [ROUNDS]   (DIR written by: python bench/fingerprint.py --dump DIR)");
        std::process::exit(2);
    }
    let dir = std::path::Path::new(&args[1]);
    let rounds: usize = args.get(2).map(|r| r.parse().expect("ROUNDS")).unwrap_or(5);
    let raw = std::fs::read_to_string(dir.join("texts.bin")).expect("texts.bin");
    let texts: Vec<&str> = raw.split('\0').filter(|t| !t.is_empty()).collect();
    let mut idf: FxHashMap<Box<str>, f64> = FxHashMap::default();
    let mut default_idf = f64::NAN;
    for line in std::fs::read_to_string(dir.join("idf.tsv")).expect("idf.tsv").lines() {
        let (word, value) = line.rsplit_once('\t').expect("word\\tidf");
        if word == "\0default" {
            default_idf = value.parse().unwrap();
        } else {
            idf.insert(word.into(), value.parse().unwrap());
        }
    }
    let stop: FxHashSet<Box<str>> = std::fs::read_to_string(dir.join("stopwords.txt"))
        .expect("stopwords.txt")
        .lines()
        .map(Into::into)
        .collect();
    let cfg = Config {
        min_token_len: 2,
        sentences: 5,
        min_sentence_chars: 8,
        short_chars: 100,
        sketch: 12,
        sketch_chars: 300,
        sketch_shingle: (3, 5),
        line_sketch: 8,
        tf: Tf::Cap(5),
    };
    let core = Core::new(idf, default_idf, stop, cfg);
    let normalized: Vec<String> = texts.iter().map(|t| core::normalize(t).expect("assigned code points")).collect();
    let n_chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    let jieba = core::jieba();

    let batch: Vec<Option<&str>> = texts.iter().map(|t| Some(*t)).collect();
    let mut checksum = 0u64;
    let mut run_fp = || {
        let t0 = Instant::now();
        for fp in core.fingerprint_many(&batch) {
            checksum = checksum.wrapping_add(fp.expect("fingerprint").simhash);
        }
        t0.elapsed().as_secs_f64()
    };
    let mut n_tokens = 0usize;
    let mut run_seg = || {
        let t0 = Instant::now();
        let mut n = 0usize;
        for t in &normalized {
            n += jieba.cut(t, true).len();
        }
        n_tokens = n;
        t0.elapsed().as_secs_f64()
    };
    run_fp(); // warm-up: dictionary loaded, token cache filled
    run_seg();
    for a in [&core::SEGMENT_NANOS, &core::PREPARE_NANOS, &core::FINISH_NANOS].into_iter().chain(&core::STAGE_NANOS) {
        a.store(0, std::sync::atomic::Ordering::Relaxed);
    }
    let (mut fp_t, mut seg_t) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        fp_t.push(run_fp());
        seg_t.push(run_seg());
    }
    let ratios: Vec<String> = fp_t.iter().zip(&seg_t).map(|(f, s)| format!("{:.3}", s / f)).collect();
    let (fp_m, seg_m) = (median(&mut fp_t), median(&mut seg_t));
    println!("fpbench: {} documents, {} characters, {} tokens; {} rounds after a warm-up (medians)", texts.len(), n_chars, n_tokens, rounds);
    println!("  full fingerprint (raw text)          {:8.1} ms  {:8.0} docs/s", fp_m * 1e3, texts.len() as f64 / fp_m);
    println!("  jieba-rs cut alone (normalised text) {:8.1} ms  {:8.0} docs/s", seg_m * 1e3, texts.len() as f64 / seg_m);
    println!("  per-round segment/fingerprint: {}", ratios.join(", "));
    let inside = core::SEGMENT_NANOS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9 / rounds as f64;
    let per_round = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6 / rounds as f64;
    println!("  inside fingerprint (mean of the timed rounds): segmenting {:.1} ms; normalising + segmenting {:.1} ms; \
              counting, weights, hashes {:.1} ms", inside * 1e3, per_round(&core::PREPARE_NANOS), per_round(&core::FINISH_NANOS));
    println!("  (of the last: counting {:.1} ms, look-ups and SimHash sums {:.1} ms, the rest {:.1} ms)",
             per_round(&core::STAGE_NANOS[0]), per_round(&core::STAGE_NANOS[1]), per_round(&core::STAGE_NANOS[2]));
    println!("  (checksum {checksum:016x})");
    if std::env::var_os("FPBENCH_STAGES").is_some() {
        let t0 = Instant::now();
        for t in &texts {
            std::hint::black_box(core::normalize(t));
        }
        println!("  stage normalize        {:8.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        for t in &normalized {
            let mut v = Vec::new();
            core::segment(t, &mut v);
            std::hint::black_box(v);
        }
        println!("  stage segment          {:8.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        for t in &normalized {
            std::hint::black_box(core::keys(t, 8));
        }
        println!("  stage keys             {:8.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        for t in &texts {
            let (n, k) = core::normalize_with_keys(t, 8).unwrap();
            let mut v = Vec::new();
            core::segment(&n, &mut v);
            std::hint::black_box((v.len(), k.n_chars));
        }
        println!("  normalize_with_keys+segment {:8.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        for t in &texts {
            let (n, k) = core::normalize_with_keys(t, 8).unwrap();
            std::hint::black_box((n.len(), k.n_chars));
        }
        println!("  normalize_with_keys    {:8.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        for t in &normalized {
            std::hint::black_box(jieba.cut(t, true));
        }
        println!("  cut again              {:8.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    }
    if std::env::var_os("FPBENCH_FLOOR").is_some() {
        let mut params = blake2b_simd::Params::new();
        params.hash_length(8);
        let (mut seg, mut floor, mut floor_hash, mut full) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t0 = Instant::now();
            for t in &normalized {
                std::hint::black_box(jieba.cut(t, true).len());
            }
            seg.push(t0.elapsed().as_secs_f64());
            let t0 = Instant::now();
            for t in &texts {
                let (n, k) = core::normalize_with_keys(t, 8).unwrap();
                std::hint::black_box((jieba.cut(&n, true).len(), k.n_chars));
            }
            floor.push(t0.elapsed().as_secs_f64());
            let t0 = Instant::now();
            for group in texts.chunks(32) {
                let keys: Vec<core::Keys> = group
                    .iter()
                    .map(|t| {
                        let (n, k) = core::normalize_with_keys(t, 8).unwrap();
                        std::hint::black_box(jieba.cut(&n, true).len());
                        k
                    })
                    .collect();
                let mut jobs: Vec<_> =
                    keys.iter().map(|k| blake2b_simd::many::HashManyJob::new(&params, k.content.as_bytes())).collect();
                blake2b_simd::many::hash_many(jobs.iter_mut());
                std::hint::black_box(&jobs);
            }
            floor_hash.push(t0.elapsed().as_secs_f64());
            let t0 = Instant::now();
            std::hint::black_box(core.fingerprint_many(&batch));
            full.push(t0.elapsed().as_secs_f64());
        }
        let (seg, floor, floor_hash, full) = (median(&mut seg), median(&mut floor), median(&mut floor_hash), median(&mut full));
        println!("  floor (interleaved rounds of their own, medians): cut {:.1} ms; normalise + cut {:.1} ms ({:.3}); \
                  + BLAKE2b of the content keys {:.1} ms ({:.3}); full fingerprint {:.1} ms ({:.3})",
                 seg * 1e3, floor * 1e3, seg / floor, floor_hash * 1e3, seg / floor_hash, full * 1e3, seg / full);
    }
    println!("RESULT fingerprint_vs_segment={:.3}", seg_m / fp_m);
}
