//! Repeated member names in a manifest's objects (CONTRACT M6): JSON allows them, a load takes
//! the last one, so a reader of the first (a reviewer of a second `policies`, Z1) sees what the
//! gateway does not load. `mcp-manifest validate` reports each as an error.

use std::collections::HashSet;
use std::fmt;

use mcp_gateway::registry::ManifestProblem;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Each member name an object of `text` repeats, at its path (`routes[0].authorization.policies`),
/// in the text's order. Text that is not JSON gives none (the caller reports it as such).
pub(crate) fn repeated_members(text: &[u8]) -> Vec<ManifestProblem> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let scan = Scan {
        path: String::new(),
        found: &mut found,
    };
    if scan.deserialize(&mut deserializer).is_err() {
        return Vec::new();
    }
    found
        .into_iter()
        .map(|path| ManifestProblem {
            path,
            message: "this member name is repeated in its object: a load takes the last one".into(),
        })
        .collect()
}

/// One value of the text at `path`, its objects' repeated names pushed to `found`.
struct Scan<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl Scan<'_> {
    fn child(&mut self, path: String) -> Scan<'_> {
        Scan {
            path,
            found: self.found,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0_usize;
        loop {
            let path = format!("{}[{i}]", self.path);
            if seq.next_element_seed(self.child(path))?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                name.clone()
            } else {
                format!("{}.{name}", self.path)
            };
            if !seen.insert(name) {
                self.found.push(path);
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            map.next_value_seed(self.child(path))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m6_each_repeated_member_name_is_reported_at_its_path_in_order() {
        let text = br#"{"routes":[{"routeKey":"core","authorization":{"mode":"enforce","policies":"a","policies":"b"},"tools":[{"name":"x","name":"y","inputSchema":{"type":"object","type":"string"}}]}],"routes":[]}"#;
        let paths: Vec<String> = repeated_members(text).into_iter().map(|p| p.path).collect();
        assert_eq!(
            paths,
            [
                "routes[0].authorization.policies",
                "routes[0].tools[0].name",
                "routes[0].tools[0].inputSchema.type",
                "routes",
            ]
        );
        let problem = &repeated_members(br#"{"a":1,"a":2}"#)[0];
        assert_eq!(
            problem.to_string(),
            "a: this member name is repeated in its object: a load takes the last one"
        );
        // Names that differ only in case or escapes are different names; none is repeated.
        assert!(repeated_members(br#"{"a":1,"A":2,"b":{"a":1},"c":[{"a":1},{"a":2}]}"#).is_empty());
        assert_eq!(
            repeated_members(br#"{"a":1,"\u0061":2}"#)[0].path,
            "a",
            "an escaped name is the name it spells"
        );
        assert!(repeated_members(b"not json").is_empty());
    }
}
