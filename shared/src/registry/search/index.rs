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

use serde_json::Value;

use super::tokens::terms;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The weights of a tool's fields (CONTRACT S4).
const NAME: f32 = 3.0;
const TITLE: f32 = 2.0;
const DESCRIPTION: f32 = 1.0;
const PROPERTY_NAME: f32 = 1.5;
const PROPERTY_DESCRIPTION: f32 = 1.0;

/// An inverted index over a route's tools.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    /// For each term, the documents it occurs in with its weighted frequency there.
    postings: HashMap<Box<str>, Vec<(u32, f32)>>,
    /// Each document's weighted length.
    lengths: Vec<f32>,
    /// The mean of `lengths`.
    mean_length: f32,
}

/// The weighted terms of one tool's entry.
fn document_terms(entry: &Value, out: &mut HashMap<String, f32>) -> f32 {
    let mut length = 0.0;
    let mut add = |text: &str, weight: f32| {
        let mut words = Vec::new();
        terms(text, &mut words);
        for word in words {
            *out.entry(word).or_default() += weight;
            length += weight;
        }
    };
    let text = |key: &str| entry.get(key).and_then(Value::as_str);
    if let Some(name) = text("name") {
        add(name, NAME);
    }
    if let Some(title) = text("title") {
        add(title, TITLE);
    }
    if let Some(description) = text("description") {
        add(description, DESCRIPTION);
    }
    if let Some(properties) = entry
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, schema) in properties {
            add(name, PROPERTY_NAME);
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                add(description, PROPERTY_DESCRIPTION);
            }
        }
    }
    length
}

impl SearchIndex {
    /// The index of `entries`, each a tool's `tools/list` entry as JSON text, in list order
    /// (an entry that is not JSON, which the load never writes, is a document with no terms).
    #[expect(
        clippy::cast_precision_loss,
        reason = "a route's tool count is far below f32's 2^24 exact integers"
    )]
    pub(crate) fn build<'a>(entries: impl Iterator<Item = &'a [u8]>) -> Self {
        let mut index = Self::default();
        let mut frequencies = HashMap::new();
        for (doc, text) in entries.enumerate() {
            frequencies.clear();
            let length = serde_json::from_slice::<Value>(text)
                .map_or(0.0, |entry| document_terms(&entry, &mut frequencies));
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            for (term, frequency) in frequencies.drain() {
                index
                    .postings
                    .entry(term.into_boxed_str())
                    .or_default()
                    .push((doc, frequency));
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
            let Some(postings) = self.postings.get(word.as_str()) else {
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
