//! The ranking of a route's tools for a query (CONTRACT S4): BM25 over weighted fields, built
//! from the tools' `tools/list` entries the first time the route is searched.
//!
//! Each tool is one document whose terms ([`super::tokens::terms`]) come from its name (weight
//! 3), title (2), description (1) and the names (1.5) and descriptions (1) of its
//! `inputSchema` properties; a term's frequency in a document is the sum of its fields' weights
//! for each time it occurs, and the document's length the sum of the weights of all its terms.
//! A query's score for a document is BM25's (k1 = 1.2, b = 0.75, IDF `ln(1 + (N − df + 0.5) /
//! (df + 0.5))`) summed over the query's distinct terms. Documents with no query term score
//! nothing and are never returned; ties keep the list's order.

use std::collections::HashMap;

use super::spans::Field;
use super::tokens::{Scratch, each_term, terms};

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The weight of a tool's field (CONTRACT S4).
fn weight(field: Field) -> f32 {
    match field {
        Field::Name => 3.0,
        Field::Title => 2.0,
        Field::Description | Field::PropertyDescription => 1.0,
        Field::PropertyName => 1.5,
    }
}

/// Term texts to their ids. The terms come from the manifest (the route's own tools) and a
/// query only looks them up, so a fast hasher is safe here. A term of at most 16 bytes (most
/// of them) is keyed by its bytes in one `u128`, zero-padded (a term holds no NUL), which
/// compares without a call and keeps no string of its own.
#[derive(Debug, Default)]
struct TermIds {
    short: HashMap<u128, u32, foldhash::fast::RandomState>,
    long: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
}

/// The key of a term of at most 16 bytes.
fn short_key(term: &str) -> Option<u128> {
    let bytes = term.as_bytes();
    let mut key = [0_u8; 16];
    key.get_mut(..bytes.len())?.copy_from_slice(bytes);
    Some(u128::from_le_bytes(key))
}

impl TermIds {
    fn get(&self, term: &str) -> Option<u32> {
        match short_key(term) {
            Some(key) => self.short.get(&key).copied(),
            None => self.long.get(term).copied(),
        }
    }

    /// The id of `term`, given `next` when it is new.
    fn get_or_insert(&mut self, term: &str, next: u32) -> u32 {
        if let Some(key) = short_key(term) {
            return *self.short.entry(key).or_insert(next);
        }
        if let Some(&id) = self.long.get(term) {
            return id;
        }
        self.long.insert(term.into(), next);
        next
    }
}

/// An inverted index over a route's tools.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    /// Each term's id.
    ids: TermIds,
    /// Where each term's postings start in `postings`: term `t`'s are
    /// `postings[starts[t]..starts[t + 1]]`.
    starts: Vec<u32>,
    /// The postings of every term, term after term: the documents it occurs in (ascending),
    /// each with the term's weighted frequency there.
    postings: Vec<(u32, f32)>,
    /// Each document's weighted length.
    lengths: Vec<f32>,
    /// The mean of `lengths`.
    mean_length: f32,
}

/// The index being built: each term's occurrences, document by document.
#[derive(Default)]
struct Builder {
    ids: TermIds,
    /// For each term, the last document it occurred in and that posting's place in
    /// `occurrences`.
    last: Vec<(u32, u32)>,
    /// Each (term, document) pair met, in document order, with its weighted frequency.
    occurrences: Vec<(u32, u32, f32)>,
}

impl Builder {
    /// Adds one occurrence of `term` in `doc`, the last document added so far.
    fn add(&mut self, term: &str, doc: u32, weight: f32) {
        let next = u32::try_from(self.last.len()).unwrap_or(u32::MAX);
        let id = self.ids.get_or_insert(term, next);
        if id == next {
            self.last.push((u32::MAX, 0));
        }
        let Some(last) = self.last.get_mut(id as usize) else {
            return;
        };
        if last.0 == doc {
            if let Some(occurrence) = self.occurrences.get_mut(last.1 as usize) {
                occurrence.2 += weight;
            }
        } else {
            *last = (
                doc,
                u32::try_from(self.occurrences.len()).unwrap_or(u32::MAX),
            );
            self.occurrences.push((id, doc, weight));
        }
    }

    /// The postings grouped by term (a counting sort, which keeps each term's documents in
    /// order).
    fn finish(self, lengths: Vec<f32>, mean_length: f32) -> SearchIndex {
        let mut starts = vec![0_u32; self.last.len() + 1];
        for &(term, ..) in &self.occurrences {
            starts[term as usize + 1] += 1;
        }
        for t in 1..starts.len() {
            starts[t] += starts[t - 1];
        }
        let mut next = starts.clone();
        let mut postings = vec![(0_u32, 0.0_f32); self.occurrences.len()];
        for &(term, doc, frequency) in &self.occurrences {
            let at = &mut next[term as usize];
            postings[*at as usize] = (doc, frequency);
            *at += 1;
        }
        SearchIndex {
            ids: self.ids,
            starts,
            postings,
            lengths,
            mean_length,
        }
    }
}

impl SearchIndex {
    /// The index of `count` documents, each a tool whose searched texts `fields(doc, buffer,
    /// out)` gives to `out` (`buffer` an empty buffer it may use), in list order.
    ///
    /// One pass: each text is split into terms where it lies, each term is given its id on
    /// first sight, and the postings are grouped by term at the end (docs/performance.md
    /// "Tool search").
    #[expect(
        clippy::cast_precision_loss,
        reason = "a route's tool count is far below f32's 2^24 exact integers"
    )]
    pub(crate) fn build(
        count: usize,
        mut fields: impl FnMut(usize, &mut Vec<u8>, &mut dyn FnMut(Field, &str)),
    ) -> Self {
        let mut builder = Builder::default();
        let mut lengths = Vec::with_capacity(count);
        let mut scratch = Scratch::default();
        let mut buffer = Vec::new();
        for at in 0..count {
            buffer.clear();
            let doc = u32::try_from(at).unwrap_or(u32::MAX);
            let mut length = 0.0;
            fields(at, &mut buffer, &mut |field, text| {
                let weight = weight(field);
                each_term(text, &mut scratch, &mut |term| {
                    length += weight;
                    builder.add(term, doc, weight);
                });
            });
            lengths.push(length);
        }
        let total: f32 = lengths.iter().sum();
        let mean_length = if lengths.is_empty() {
            0.0
        } else {
            total / lengths.len() as f32
        };
        builder.finish(lengths, mean_length)
    }

    /// The postings of the term with id `id`.
    fn postings(&self, id: u32) -> Option<&[(u32, f32)]> {
        let start = *self.starts.get(id as usize)? as usize;
        let end = *self.starts.get(id as usize + 1)? as usize;
        self.postings.get(start..end)
    }

    /// The documents that match `query`, best first (ties in list order), at most `limit`.
    #[expect(
        clippy::cast_precision_loss,
        reason = "a route's tool count is far below f32's 2^24 exact integers"
    )]
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let mut words = Vec::new();
        terms(query, &mut words);
        words.sort_unstable();
        words.dedup();
        let count = self.lengths.len() as f32;
        let mut scores = vec![0.0_f32; self.lengths.len()];
        for word in &words {
            let Some(postings) = (self.ids.get(word.as_str())).and_then(|id| self.postings(id))
            else {
                continue;
            };
            let df = postings.len() as f32;
            let idf = (1.0 + (count - df + 0.5) / (df + 0.5)).ln();
            for &(doc, frequency) in postings {
                let doc = doc as usize;
                let norm =
                    K1 * (1.0 - B + B * self.lengths[doc] / self.mean_length.max(f32::EPSILON));
                scores[doc] += idf * frequency * (K1 + 1.0) / (frequency + norm);
            }
        }
        let mut ranked: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, score)| *score > 0.0)
            .collect();
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if limit == 0 {
            return Vec::new();
        }
        if ranked.len() > limit {
            ranked.select_nth_unstable_by(limit - 1, order);
            ranked.truncate(limit);
        }
        ranked.sort_unstable_by(order);
        ranked.into_iter().map(|(doc, _)| doc).collect()
    }
}
