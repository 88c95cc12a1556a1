//! A core's IDF table (word -> IDF), built without an allocation per word: the words stay in one buffer (the IDF
//! cache's words file as it is, UTF-8 words joined by `\n`) and a hash table holds each word's number, found by
//! the word's FxHash and confirmed by comparing the word itself. jieba's 350,000-word table is built several times
//! faster than a map of boxed strings (the first texts of every command wait for it). Look-ups answer exactly as
//! a map would: a word given twice keeps its last value.

use std::hash::BuildHasher;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::{FxBuildHasher, FxHashMap};

pub struct IdfTable {
    words: Box<str>,
    /// Byte range of each word in `words`.
    spans: Vec<(u32, u32)>,
    values: Vec<f64>,
    /// Word numbers, by the hash of the word.
    index: HashTable<u32>,
}

fn hash(word: &str) -> u64 {
    FxBuildHasher.hash_one(word)
}

impl IdfTable {
    /// Whether the IDF cache's two files pair up: one little-endian float64 per word (`from_cache` asks for it).
    pub fn pairs_up(words: &str, values: &[u8]) -> bool {
        values.len() % 8 == 0 && words.split('\n').count() == values.len() / 8
    }

    /// The IDF cache's two files: the words joined by `\n` and one little-endian float64 per word (the caller has
    /// checked that they pair up: `pairs_up`).
    pub fn from_cache(words: String, values: &[u8]) -> Self {
        assert!(words.len() < u32::MAX as usize, "IDF words over 4 GB");
        let mut spans = Vec::with_capacity(values.len() / 8);
        let mut start = 0u32;
        for word in words.split('\n') {
            let end = start + word.len() as u32;
            spans.push((start, end));
            start = end + 1;
        }
        let values: Vec<f64> = values.chunks_exact(8).map(|v| f64::from_le_bytes(v.try_into().unwrap())).collect();
        assert_eq!(spans.len(), values.len(), "IDF cache: one float64 per word");
        Self::indexed(words.into_boxed_str(), spans, values)
    }

    /// Words and values one by one (a Python dict, a map).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        let (mut words, mut spans, mut values) = (String::new(), Vec::new(), Vec::new());
        for (word, value) in pairs {
            let start = words.len();
            words.push_str(word);
            assert!(words.len() < u32::MAX as usize, "IDF words over 4 GB");
            spans.push((start as u32, words.len() as u32));
            values.push(value);
        }
        Self::indexed(words.into_boxed_str(), spans, values)
    }

    fn indexed(words: Box<str>, spans: Vec<(u32, u32)>, values: Vec<f64>) -> Self {
        let mut index = HashTable::with_capacity(spans.len());
        let word = |i: u32| {
            let (a, b) = spans[i as usize];
            &words[a as usize..b as usize]
        };
        for i in 0..spans.len() as u32 {
            let w = word(i);
            match index.entry(hash(w), |&j| word(j) == w, |&j| hash(word(j))) {
                Entry::Occupied(mut e) => *e.get_mut() = i, // (a word given again: its last value, as a map keeps)
                Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
        IdfTable { words, spans, values, index }
    }

    fn word(&self, i: u32) -> &str {
        let (a, b) = self.spans[i as usize];
        &self.words[a as usize..b as usize]
    }

    pub fn get(&self, word: &str) -> Option<f64> {
        self.index.find(hash(word), |&j| self.word(j) == word).map(|&j| self.values[j as usize])
    }
}

impl From<FxHashMap<Box<str>, f64>> for IdfTable {
    fn from(map: FxHashMap<Box<str>, f64>) -> Self {
        Self::from_pairs(map.iter().map(|(w, &v)| (&**w, v)))
    }
}
