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

use super::entry_fields::Entry;
use super::tokens::{Scratch, each_term, terms};

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The weights of a tool's fields (CONTRACT S4).
const NAME: f32 = 3.0;
const TITLE: f32 = 2.0;
const DESCRIPTION: f32 = 1.0;
const PROPERTY_NAME: f32 = 1.5;
const PROPERTY_DESCRIPTION: f32 = 1.0;

/// Term texts to their ids. The terms come from the manifest (the route's own tools) and a
/// query only looks them up, so a fast hasher is safe here.
type TermIds = HashMap<Box<str>, u32, foldhash::fast::RandomState>;

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

impl SearchIndex {
    /// The index of `count` documents, each a tool's `tools/list` entry as JSON text that
    /// `write(doc, buffer)` appends to an empty buffer, in list order (an entry that is not
    /// JSON, which the load never writes, is a document with no terms).
    ///
    /// One pass: each entry's searched fields are read borrowed from its text (nothing else
    /// is built), each term is given its id on first sight and added to its posting list
    /// without being allocated again (docs/performance.md "Tool search": about 21 ms at one
    /// core for the search bench's 10,000 tools, about twice that for richer input schemas).
    #[expect(
        clippy::cast_precision_loss,
        reason = "a route's tool count is far below f32's 2^24 exact integers"
    )]
    pub(crate) fn build(count: usize, mut write: impl FnMut(usize, &mut Vec<u8>)) -> Self {
        let mut index = Self::default();
        let mut scratch = Scratch::default();
        let mut text = Vec::new();
        for at in 0..count {
            text.clear();
            write(at, &mut text);
            let doc = u32::try_from(at).unwrap_or(u32::MAX);
            let entry: Entry<'_> = serde_json::from_slice(&text).unwrap_or_default();
            let mut length = 0.0;
            let mut add = |text: &str, weight: f32, scratch: &mut Scratch| {
                each_term(text, scratch, &mut |term| {
                    length += weight;
                    index.add(term, doc, weight);
                });
            };
            let fields = [
                (&entry.name, NAME),
                (&entry.title, TITLE),
                (&entry.description, DESCRIPTION),
            ];
            for (field, weight) in fields {
                if let Some(text) = &field.0 {
                    add(text, weight, &mut scratch);
                }
            }
            for (name, description) in &entry.input_schema.0 {
                add(name, PROPERTY_NAME, &mut scratch);
                if let Some(text) = &description.0 {
                    add(text, PROPERTY_DESCRIPTION, &mut scratch);
                }
            }
            index.lengths.push(length);
        }
        let total: f32 = index.lengths.iter().sum();
        index.mean_length = if index.lengths.is_empty() {
            0.0
        } else {
            total / index.lengths.len() as f32
        };
        index
    }

    /// Adds one occurrence of `term` in `doc`, the last document added so far.
    fn add(&mut self, term: &str, doc: u32, weight: f32) {
        let id = if let Some(&id) = self.ids.get(term) {
            id
        } else {
            let id = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
            self.ids.insert(term.into(), id);
            self.postings.push(Vec::new());
            id
        };
        let Some(postings) = self.postings.get_mut(id as usize) else {
            return;
        };
        match postings.last_mut() {
            Some((last, frequency)) if *last == doc => *frequency += weight,
            _ => postings.push((doc, weight)),
        }
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
                (self.ids.get(word.as_str())).and_then(|&id| self.postings.get(id as usize))
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
