//! Compiling a route's tools on scoped threads, in batches taken as they come, with results in
//! manifest order (CONTRACT R5 load; STYLE 10).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use serde_json::value::RawValue;

use super::problems::{ManifestProblem, Problems};
use super::tool::{PublicTool, compile_tool};
use crate::registry::Tool;
use crate::registry::search::FieldSpans;
use crate::registry::snapshot::ListEntry;

/// Fewest tools for which compiling on more than one thread pays for starting the threads.
const PARALLEL_COMPILE_MIN_TOOLS: usize = 64;
/// Most threads a route's tools are compiled on.
const MAX_COMPILE_THREADS: usize = 4;

/// A route's tools as the loader hands them over: the elements of a parsed `tools` array, or
/// each element's raw JSON text, parsed on the thread that compiles it.
#[derive(Clone, Copy)]
pub(super) enum ToolsInput<'a> {
    Parsed(&'a [Value]),
    Raw(&'a [&'a RawValue]),
}

/// One tool after compilation: the tool with whether it is active, the problems found in it,
/// and for an active tool its `tools/list` entry (public fields, CONTRACT T1) as JSON text.
pub(super) struct CompiledTool {
    pub(super) tool: Option<(Arc<Tool>, bool)>,
    pub(super) problems: Vec<ManifestProblem>,
    pub(super) public: Option<Box<ListEntry>>,
    /// Where the entry's searched texts lie, when the pass noted them (CONTRACT S4).
    pub(super) searched: Option<FieldSpans>,
}

fn compile_one(tool: &Value, path: &str) -> CompiledTool {
    let mut found = Problems::default();
    let compiled = compile_tool(tool, path, &mut found);
    let public = match &compiled {
        Some((_, true)) => serde_json::value::to_raw_value(&PublicTool(tool))
            .ok()
            .map(|text| Box::new(ListEntry::Text(text))),
        _ => None,
    };
    CompiledTool {
        tool: compiled.map(|(tool, is_active)| (Arc::new(tool), is_active)),
        problems: found.0,
        public,
        searched: None,
    }
}

fn compile_at(tools: ToolsInput<'_>, i: usize, tools_path: &str) -> CompiledTool {
    let path = format!("{tools_path}[{i}]");
    match tools {
        ToolsInput::Parsed(tools) => compile_one(&tools[i], &path),
        // Raw text was checked as JSON by the first pass; it parses.
        ToolsInput::Raw(tools) => match serde_json::from_str::<Value>(tools[i].get()) {
            Ok(tool) => compile_one(&tool, &path),
            Err(error) => CompiledTool {
                tool: None,
                problems: vec![ManifestProblem {
                    path,
                    message: format!("is not JSON: {error}"),
                }],
                public: None,
                searched: None,
            },
        },
    }
}

/// Tools a compiling thread takes at a time.
const COMPILE_BATCH: usize = 16;

/// Compiles every tool of a route, in manifest order. Parsing and schema compilation are most
/// of a cold start's load, so a large route is compiled on scoped threads (as many as the
/// instance has CPUs, at most [`MAX_COMPILE_THREADS`], the calling thread one of them): each
/// thread takes the next [`COMPILE_BATCH`] tools until none are left, and parses, compiles,
/// serializes and frees its own. Taking batches as they come keeps every thread busy to the
/// end, where fixed shares would leave the thread that started first waiting on the others.
/// Results and problems keep the manifest's order either way.
pub(super) fn compile_tools(tools: ToolsInput<'_>, tools_path: &str) -> Vec<CompiledTool> {
    let count = match tools {
        ToolsInput::Parsed(tools) => tools.len(),
        ToolsInput::Raw(tools) => tools.len(),
    };
    compile_tools_at(tools, &(0..count).collect::<Vec<_>>(), tools_path)
}

/// Compiles the tools at `indices` of a route, in that order, as [`compile_tools`] does.
pub(super) fn compile_tools_at(
    tools: ToolsInput<'_>,
    indices: &[usize],
    tools_path: &str,
) -> Vec<CompiledTool> {
    let count = indices.len();
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(MAX_COMPILE_THREADS);
    if threads < 2 || count < PARALLEL_COMPILE_MIN_TOOLS {
        return indices
            .iter()
            .map(|&i| compile_at(tools, i, tools_path))
            .collect();
    }
    let next = AtomicUsize::new(0);
    // The batches one thread compiled, each with the index of its first tool.
    let take_batches = || {
        let mut batches = Vec::new();
        loop {
            let start = next.fetch_add(COMPILE_BATCH, Ordering::Relaxed);
            if start >= count {
                return batches;
            }
            let batch: Vec<CompiledTool> = indices[start..count.min(start + COMPILE_BATCH)]
                .iter()
                .map(|&i| compile_at(tools, i, tools_path))
                .collect();
            batches.push((start, batch));
        }
    };
    let mut batches = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads).map(|_| scope.spawn(take_batches)).collect();
        let mut batches = take_batches();
        for worker in workers {
            // A panic on a worker goes on as it would have without threads.
            batches.extend(
                worker
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        batches
    });
    batches.sort_unstable_by_key(|(start, _)| *start);
    let mut all = Vec::with_capacity(count);
    for (_, batch) in batches {
        all.extend(batch);
    }
    all
}
