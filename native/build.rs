//! Names the build of the vendored jieba-rs (`jieba-rs/`): a hash of its sources and dictionary, so that a
//! dictionary kept in the cache by one build (`core::SEGMENTER_SNAPSHOT_NAME`) is never read back by another whose
//! dictionary, trie hashing or snapshot layout differ (a different build only builds and keeps its own).

use std::hash::Hasher;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).expect("jieba-rs/").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = Path::new("jieba-rs");
    println!("cargo:rerun-if-changed=jieba-rs");
    let mut all = Vec::new();
    files(root, &mut all);
    // FNV-1a over every file's path (relative) and bytes: stable across Rust releases, unlike DefaultHasher
    let mut hash = Fnv(0xcbf2_9ce4_8422_2325);
    for path in &all {
        hash.write(path.strip_prefix(root).unwrap().to_string_lossy().as_bytes());
        hash.write(&std::fs::read(path).expect("a jieba-rs file"));
    }
    println!("cargo:rustc-env=JIEBA_BUILD_ID={:016x}", hash.finish());
}

struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
