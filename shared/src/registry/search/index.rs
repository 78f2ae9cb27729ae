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
    /// Each term's id: its place in `postings`.
    ids: TermIds,
    /// For each term, the documents it occurs in (ascending) with its weighted frequency there.
    postings: Vec<Vec<(u32, f32)>>,
    /// Each document's weighted length.
    lengths: Vec<f32>,
    /// The mean of `lengths`.
    mean_length: f32,
}

/// A searched text as the index's builder is given it.
#[derive(Clone, Copy)]
pub(crate) enum Text<'a, 'b> {
    /// A text that lives as long as the build, as the bytes of a slice of a tool's entry:
    /// checked as UTF-8 and split once however often it repeats (property names and
    /// descriptions repeat from tool to tool); bytes that are not UTF-8 have no terms.
    Kept(&'a [u8]),
    /// A text read for one document only (decoded from its entry's JSON).
    Read(&'b str),
}

/// The index being built.
#[derive(Default)]
struct Builder<'a> {
    index: SearchIndex,
    /// The kept texts split so far (property names and descriptions repeat from tool to
    /// tool), by their bytes, each with where its terms' ids are in `split`: a repeat is
    /// neither checked as UTF-8 nor split again.
    texts: HashMap<&'a [u8], (u32, u32), foldhash::fast::RandomState>,
    /// The ids of the terms of `texts`, text after text.
    split: Vec<u32>,
    scratch: Scratch,
}

impl<'a> Builder<'a> {
    /// The id of `term`, given on first sight.
    fn id(index: &mut SearchIndex, term: &str) -> u32 {
        let next = u32::try_from(index.postings.len()).unwrap_or(u32::MAX);
        let id = index.ids.get_or_insert(term, next);
        if id == next {
            index.postings.push(Vec::new());
        }
        id
    }

    /// Adds the terms of `text` to `doc`, the last document added so far, each with `weight`;
    /// their count.
    fn add_text(&mut self, text: Text<'a, '_>, doc: u32, weight: f32) -> u32 {
        let index = &mut self.index;
        let kept = match text {
            Text::Kept(text) => text,
            Text::Read(text) => {
                let mut count = 0;
                each_term(text, &mut self.scratch, &mut |term| {
                    let id = Self::id(index, term);
                    add(index, id, doc, weight);
                    count += 1;
                });
                return count;
            }
        };
        let (start, end) = if let Some(&range) = self.texts.get(kept) {
            range
        } else {
            let start = u32::try_from(self.split.len()).unwrap_or(u32::MAX);
            let split = &mut self.split;
            if let Ok(kept) = std::str::from_utf8(kept) {
                each_term(kept, &mut self.scratch, &mut |term| {
                    split.push(Self::id(index, term));
                });
            }
            let end = u32::try_from(split.len()).unwrap_or(u32::MAX);
            self.texts.insert(kept, (start, end));
            (start, end)
        };
        for &id in self
            .split
            .get(start as usize..end as usize)
            .unwrap_or_default()
        {
            add(index, id, doc, weight);
        }
        end - start
    }
}

/// Adds one occurrence of the term `id` in `doc`, the last document added so far.
fn add(index: &mut SearchIndex, id: u32, doc: u32, weight: f32) {
    let Some(postings) = index.postings.get_mut(id as usize) else {
        return;
    };
    match postings.last_mut() {
        Some((last, frequency)) if *last == doc => *frequency += weight,
        _ => postings.push((doc, weight)),
    }
}

impl SearchIndex {
    /// The index of `count` documents, each a tool whose searched texts `fields(doc, buffer,
    /// out)` gives to `out` (`buffer` an empty buffer it may use), in list order.
    ///
    /// One pass: each text is split into terms where it lies (a kept text that repeats, once),
    /// each term is given its id on first sight and its posting pushed (docs/performance.md
    /// "Tool search").
    #[expect(
        clippy::cast_precision_loss,
        reason = "a route's tool count is far below f32's 2^24 exact integers"
    )]
    pub(crate) fn build<'a>(
        count: usize,
        mut fields: impl FnMut(usize, &mut Vec<u8>, &mut dyn FnMut(Field, Text<'a, '_>)),
    ) -> Self {
        let mut builder = Builder::default();
        let mut lengths = Vec::with_capacity(count);
        let mut buffer = Vec::new();
        for at in 0..count {
            buffer.clear();
            let doc = u32::try_from(at).unwrap_or(u32::MAX);
            let mut length = 0.0;
            fields(at, &mut buffer, &mut |field, text| {
                let weight = weight(field);
                let terms = builder.add_text(text, doc, weight);
                length += weight * terms as f32;
            });
            lengths.push(length);
        }
        let total: f32 = lengths.iter().sum();
        let mut index = builder.index;
        index.mean_length = if lengths.is_empty() {
            0.0
        } else {
            total / lengths.len() as f32
        };
        index.lengths = lengths;
        index
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
            let Some(postings) =
                (self.ids.get(word.as_str())).and_then(|id| self.postings.get(id as usize))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// CONTRACT S4: a kept text is checked and split once however often it occurs, and counts
    /// in every document it occurs in; bytes that are not UTF-8 (a place off a character
    /// boundary) have no terms.
    #[test]
    fn s4_a_kept_text_counts_wherever_it_occurs_and_bytes_not_utf8_have_no_terms() {
        let texts: [&[u8]; 4] = [
            b"create ticket",
            b"create ticket",
            b"\xff ticket",
            "ticket caf\u{e9}".as_bytes(),
        ];
        let index = SearchIndex::build(texts.len(), |doc, _, out| {
            out(Field::Description, Text::Kept(texts[doc]));
        });
        assert_eq!(index.lengths, [2.0, 2.0, 0.0, 2.0]);
        assert_eq!(index.search("ticket", 10), [0, 1, 3]);
        assert_eq!(index.search("create", 10), [0, 1]);
        assert_eq!(index.search("café", 10), [3]);
    }
}
