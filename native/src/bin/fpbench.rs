//! Inside Rust: the full fingerprint (`Core::fingerprint` on the raw text) against jieba-rs segmentation alone
//! (`Jieba::cut(normalised text, hmm=true)`), same documents, interleaved rounds, medians.
//!
//!     python bench/fingerprint.py --dump DIR        # writes DIR/texts.bin, DIR/idf.tsv, DIR/stopwords.txt
//!     cargo run --release --no-default-features --features bench --bin fpbench -- DIR [ROUNDS]
//!
//! (`bench/fingerprint.py --rust` does both.) Prints `RESULT fingerprint_vs_segment=<seg time / fp time>`.
//! Also prints the ratio of the thread CPU times (Linux), steadier than the wall clock on a busy machine.
//! `FPBENCH_STAGES=1` also times the stages one by one (normalise, segment, keys). `FPBENCH_FLOOR=1` also times,
//! in interleaved rounds of their own, the work no fingerprint can skip: normalising the raw text (with its keys)
//! and cutting it, then that and BLAKE2b of every content key; `cut` over each is the best ratio a fingerprint
//! that also counts, weighs and hashes its tokens could approach.

use std::time::Instant;

use es_simhash_native::core::{self, Config, Core, Tf};
use rustc_hash::{FxHashMap, FxHashSet};

/// CPU time of this thread (seconds): unlike the wall clock, not counting the time other processes on the machine
/// take from it (the per-round ratios of CPU times are steadier on a busy machine).
fn thread_cpu() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: a valid pointer to a timespec
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

/// The processor's model name (Linux `/proc/cpuinfo`): the ratio moves with the microarchitecture (cache sizes).
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split_once(':')).map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown".to_string())
}

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
        fuzzy: 16,
        places: Default::default(),
    };
    let core = Core::new(idf, default_idf, stop, cfg);
    let normalized: Vec<String> = texts.iter().map(|t| core::normalize(t).expect("assigned code points")).collect();
    let n_chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    let jieba = core::jieba();

    let batch: Vec<Option<&str>> = texts.iter().map(|t| Some(*t)).collect();
    let mut checksum = 0u64;
    let mut fp_cpu = Vec::new();
    let mut run_fp = || {
        let (t0, c0) = (Instant::now(), thread_cpu());
        for fp in core.fingerprint_many(&batch) {
            checksum = checksum.wrapping_add(fp.expect("fingerprint").simhash);
        }
        fp_cpu.push(thread_cpu() - c0);
        t0.elapsed().as_secs_f64()
    };
    let mut n_tokens = 0usize;
    let mut seg_cpu = Vec::new();
    let mut run_seg = || {
        let (t0, c0) = (Instant::now(), thread_cpu());
        let mut n = 0usize;
        for t in &normalized {
            n += jieba.cut(t, true).len();
        }
        n_tokens = n;
        seg_cpu.push(thread_cpu() - c0);
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
    let (fp_cpu, seg_cpu) = (&mut fp_cpu[1..], &mut seg_cpu[1..]); // (after the warm-up)
    let mut cpu_ratios: Vec<f64> = fp_cpu.iter().zip(seg_cpu.iter()).map(|(f, s)| s / f).collect();
    let cpu_ratio = median(&mut cpu_ratios);
    let (fp_cpu_m, seg_cpu_m) = (median(fp_cpu), median(seg_cpu));
    let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    let min_ratio = min(seg_cpu) / min(fp_cpu);
    let (fp_m, seg_m) = (median(&mut fp_t), median(&mut seg_t));
    println!(
        "fpbench: {} documents, {} characters, {} tokens; {} rounds after a warm-up (medians); cpu: {}",
        texts.len(),
        n_chars,
        n_tokens,
        rounds,
        cpu_model()
    );
    println!("  full fingerprint (raw text)          {:8.1} ms  {:8.0} docs/s", fp_m * 1e3, texts.len() as f64 / fp_m);
    println!("  jieba-rs cut alone (normalised text) {:8.1} ms  {:8.0} docs/s", seg_m * 1e3, texts.len() as f64 / seg_m);
    println!("  per-round segment/fingerprint: {}", ratios.join(", "));
    println!("  thread CPU time (medians): fingerprint {:.1} ms, cut {:.1} ms; median of the per-round CPU ratios {:.3}",
             fp_cpu_m * 1e3, seg_cpu_m * 1e3, cpu_ratio);
    println!("  thread CPU time (minima): fingerprint {:.1} ms, cut {:.1} ms; ratio {:.3}", min(fp_cpu) * 1e3, min(seg_cpu) * 1e3, min_ratio);
    let inside = core::SEGMENT_NANOS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9 / rounds as f64;
    let per_round = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6 / rounds as f64;
    println!("  inside fingerprint (mean of the timed rounds): segmenting and counting {:.1} ms; normalising + that {:.1} ms; \
              look-ups, weights, hashes {:.1} ms", inside * 1e3, per_round(&core::PREPARE_NANOS), per_round(&core::FINISH_NANOS));
    println!("  (of the last: sketch and long tokens {:.1} ms, look-ups and SimHash sums {:.1} ms, the rest {:.1} ms)",
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
