//! The quality of `search_tools` (CONTRACT S4) on a public tool-retrieval set: the 199 tools and
//! 2,000 labelled queries of MetaTool's ToolE (MIT; `infra/bench/search/`), scored by recall@5
//! and MRR (over the first 50 results) through the real `tools/call`, beside a plain BM25
//! baseline over each tool's name and description (lower-cased runs of letters and digits, the
//! same k1, b and IDF). The gateway's search must score at least the baseline on both. Queries
//! longer than `search_tools` takes (500 characters) are cut there for both.

#![expect(
    clippy::cast_precision_loss,
    reason = "counts of tools, queries and terms are far below f64's 2^53 exact integers"
)]

use std::collections::HashMap;

use gateway_tests::{Harness, rpc};
use mcp_gateway::Config;
use serde_json::{Value, json};

const DATASET: &str = include_str!("../../infra/bench/search/dataset.json");

/// Recall@5 and MRR of `ranked` lists against `gold` lists.
fn scores(ranked: &[Vec<String>], gold: &[Vec<String>]) -> (f64, f64) {
    let (mut recall, mut mrr) = (0.0, 0.0);
    for (found, gold) in ranked.iter().zip(gold) {
        let top5 = &found[..found.len().min(5)];
        recall += gold.iter().filter(|g| top5.contains(g)).count() as f64 / gold.len() as f64;
        if let Some(rank) = found.iter().position(|name| gold.contains(name)) {
            mrr += 1.0 / (rank + 1) as f64;
        }
    }
    let n = ranked.len() as f64;
    (recall / n, mrr / n)
}

/// Plain BM25 over name + description: the baseline.
struct Baseline {
    documents: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    frequency: HashMap<String, usize>,
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Baseline {
    fn new(tools: &[(String, String)]) -> Self {
        let mut baseline = Self {
            documents: Vec::new(),
            lengths: Vec::new(),
            frequency: HashMap::new(),
        };
        for (name, description) in tools {
            let terms = words(&format!("{name} {description}"));
            let mut counts = HashMap::new();
            for term in &terms {
                *counts.entry(term.clone()).or_insert(0.0) += 1.0;
            }
            for term in counts.keys() {
                *baseline.frequency.entry(term.clone()).or_default() += 1;
            }
            baseline.lengths.push(terms.len() as f64);
            baseline.documents.push(counts);
        }
        baseline
    }

    fn search(&self, query: &str, tools: &[(String, String)], limit: usize) -> Vec<String> {
        let (k1, b) = (1.2, 0.75);
        let n = self.documents.len() as f64;
        let mean = self.lengths.iter().sum::<f64>() / n;
        let mut terms = words(query);
        terms.sort();
        terms.dedup();
        let mut ranked: Vec<(usize, f64)> = self
            .documents
            .iter()
            .enumerate()
            .map(|(doc, counts)| {
                let score = terms
                    .iter()
                    .filter_map(|t| counts.get(t).map(|tf| (t, tf)))
                    .map(|(t, tf)| {
                        let df = self.frequency[t] as f64;
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        let norm = k1 * (1.0 - b + b * self.lengths[doc] / mean);
                        idf * tf * (k1 + 1.0) / (tf + norm)
                    })
                    .sum::<f64>();
                (doc, score)
            })
            .filter(|(_, score)| *score > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(limit)
            .map(|(doc, _)| tools[doc].0.clone())
            .collect()
    }
}

#[tokio::test]
async fn s4_search_scores_at_least_bm25_on_metatool_recall_at_5_and_mrr() {
    let dataset: Value = serde_json::from_str(DATASET).unwrap();
    assert_eq!(dataset["licence"], "MIT");
    let tools: Vec<(String, String)> = dataset["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["description"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let queries: Vec<(String, Vec<String>)> = dataset["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let gold = q["gold"].as_array().unwrap();
            let gold = gold.iter().map(|g| g.as_str().unwrap().to_string());
            // search_tools takes at most 500 characters (S2): the few longer queries are cut
            // there, for both searches.
            let query: String = q["query"].as_str().unwrap().chars().take(500).collect();
            (query, gold.collect())
        })
        .collect();
    assert_eq!((tools.len(), queries.len()), (199, 2000));

    let manifest_tools: Vec<Value> = tools
        .iter()
        .map(|(name, description)| {
            json!({"name": name, "description": description, "inputSchema": {"type": "object"},
                   "_meta": {"endpoint": "http://127.0.0.1:9/tool"}})
        })
        .collect();
    let h = Harness::with_manifest(Config::fixed_defaults(), move |document| {
        document["routes"][0]["tools"] = Value::Array(manifest_tools);
        document["routes"][0]["toolSearch"] = json!({"mode": "only"});
    })
    .await;
    let mut gateway = Vec::with_capacity(queries.len());
    for (query, _) in &queries {
        let body = rpc(
            json!(1),
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": query, "limit": 50}}),
        );
        let answer = h.post("/mcp/core", &body, &[]).await.json();
        let found = answer["result"]["structuredContent"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{query}: {answer}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        gateway.push(found);
    }
    let baseline_index = Baseline::new(&tools);
    let baseline: Vec<Vec<String>> = queries
        .iter()
        .map(|(query, _)| baseline_index.search(query, &tools, 50))
        .collect();
    let gold: Vec<Vec<String>> = queries.iter().map(|(_, gold)| gold.clone()).collect();
    let (recall, mrr) = scores(&gateway, &gold);
    let (base_recall, base_mrr) = scores(&baseline, &gold);
    eprintln!(
        "MetaTool ToolE, 199 tools, 2,000 queries: search_tools recall@5 {recall:.4} MRR {mrr:.4}; \
         BM25 (name + description) recall@5 {base_recall:.4} MRR {base_mrr:.4}"
    );
    assert!(
        recall >= base_recall,
        "recall@5 {recall} < baseline {base_recall}"
    );
    assert!(mrr >= base_mrr, "MRR {mrr} < baseline {base_mrr}");
}
