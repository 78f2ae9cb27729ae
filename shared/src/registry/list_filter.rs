//! A route's `tools/list` with only the tools a caller may use (CONTRACT Z4, T2): the entries
//! written at load, filtered per request, paged with the route's own cursors (an index into
//! the whole list), so a cursor stays valid for any caller.

use super::snapshot::{EMPTY_LIST_RESULT, ListEntry, Route};

/// The visible entries of a route's list from some index on, each with its index in the whole
/// list.
#[derive(Debug)]
pub(crate) struct FilteredList<'a>(Vec<(usize, &'a ListEntry, String)>);

impl Route {
    /// The entries from the list's `start`th on, each with its tool's name (an entry whose
    /// name cannot be read is left out).
    pub(crate) fn listed_from(&self, start: usize) -> FilteredList<'_> {
        let entries = self.tools_list.iter().enumerate().skip(start);
        FilteredList(
            entries
                .filter_map(|(i, entry)| Some((i, entry.as_ref(), entry.name()?)))
                .collect(),
        )
    }
}

impl FilteredList<'_> {
    /// The tools' names, in the list's order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(_, _, name)| name.as_str())
    }

    /// Keeps the entries whose tool `keep` accepts, asked once for each entry in the list's
    /// order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.0.retain(|(_, _, name)| keep(name));
    }

    /// How many entries it holds.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The length of the first `count` entries' texts with the commas between them, in bytes.
    pub(crate) fn entries_len(&self, count: usize) -> usize {
        let entries: usize = self.0.iter().take(count).map(|(_, e, _)| e.len()).sum();
        entries + count.min(self.0.len()).saturating_sub(1)
    }

    /// How many entries from the first fit in `room` bytes with their commas, at most `most`.
    pub(crate) fn fitting(&self, room: usize, most: usize) -> usize {
        let (mut used, mut count) = (0, 0);
        for (_, entry, _) in self.0.iter().take(most) {
            used += entry.len() + usize::from(count > 0);
            if used > room {
                break;
            }
            count += 1;
        }
        count
    }

    /// The index in the whole list of the entry after the first `count`: where the next page
    /// starts.
    pub(crate) fn next_start(&self, count: usize) -> Option<usize> {
        self.0.get(count).map(|(i, _, _)| *i)
    }

    /// `response` (written with the result `{"tools":[]}`) with the first `count` entries in
    /// its empty list; `None` when it has no such result.
    pub(crate) fn fill(&self, response: &[u8], count: usize) -> Option<Vec<u8>> {
        let at = response
            .windows(EMPTY_LIST_RESULT.len())
            .position(|window| window == EMPTY_LIST_RESULT)?
            + EMPTY_LIST_RESULT.len()
            - 1;
        let mut out = Vec::with_capacity(response.len() + self.entries_len(count));
        out.extend_from_slice(&response[..at]);
        for (n, (_, entry, _)) in self.0.iter().take(count).enumerate() {
            if n > 0 {
                out.push(b',');
            }
            entry.write_to(&mut out);
        }
        out.extend_from_slice(&response[at..]);
        Some(out)
    }
}
