//! Tool names: 1-64 characters of `[A-Za-z0-9_-]`, the names every common MCP client accepts
//! (stricter than the gateway's 128 of `[A-Za-z0-9_.-]`, CONTRACT R5), unique in the route.

use std::collections::HashSet;

/// The longest tool name written.
const MAX_NAME: usize = 64;

/// Whether `name` is 1-64 characters of `[A-Za-z0-9_-]`.
pub(crate) fn is_portable_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// An operation's tool name before uniqueness: its `operationId` as it is when it fits, else
/// made to fit (other characters become `_`, cut to 64), else `<method>_<path slug>`.
pub(crate) fn base_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    if let Some(id) = operation_id {
        if is_portable_name(id) {
            return id.to_string();
        }
        let fitted: String = id.chars().map(portable_char).take(MAX_NAME).collect();
        if fitted.bytes().any(|b| b.is_ascii_alphanumeric()) {
            return fitted;
        }
    }
    let mut name = method.to_ascii_lowercase();
    let slug = slug(path);
    if !slug.is_empty() {
        name.push('_');
        name.push_str(&slug);
    }
    name.chars().take(MAX_NAME).collect()
}

fn portable_char(c: char) -> char {
    if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
        c
    } else {
        '_'
    }
}

/// A path template as a name part: `/pet/{petId}/uploadImage` → `pet_petId_uploadImage`.
fn slug(path: &str) -> String {
    let mut slug = String::with_capacity(path.len());
    for c in path.chars().map(portable_char) {
        if c == '_' && (slug.is_empty() || slug.ends_with('_')) {
            continue;
        }
        slug.push(c);
    }
    slug.trim_end_matches('_').to_string()
}

/// The tool names given so far in one import.
#[derive(Debug, Default)]
pub(crate) struct ToolNames {
    taken: HashSet<String>,
}

impl ToolNames {
    /// `base` when it is free, else `base` (cut to fit) with the first free `_2`, `_3`...
    pub(crate) fn unique(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while self.taken.contains(&name) {
            let suffix = format!("_{n}");
            let keep = MAX_NAME.saturating_sub(suffix.len()).min(base.len());
            name = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_id_that_fits_is_kept_as_it_is() {
        assert_eq!(
            base_name(Some("getPetById"), "get", "/pet/{petId}"),
            "getPetById"
        );
        assert_eq!(
            base_name(Some("list-pets_v2"), "get", "/pets"),
            "list-pets_v2"
        );
    }

    #[test]
    fn an_operation_id_that_does_not_fit_is_made_to_fit() {
        assert_eq!(
            base_name(Some("pets.list v2"), "get", "/pets"),
            "pets_list_v2"
        );
        let long = "a".repeat(70);
        assert_eq!(base_name(Some(&long), "get", "/pets"), "a".repeat(64));
        assert_eq!(base_name(Some("ペット"), "get", "/pets"), "get_pets");
        assert_eq!(base_name(Some(""), "get", "/pets"), "get_pets");
    }

    #[test]
    fn without_an_operation_id_the_name_is_method_and_path() {
        assert_eq!(
            base_name(None, "post", "/pet/{petId}/uploadImage"),
            "post_pet_petId_uploadImage"
        );
        assert_eq!(base_name(None, "get", "/"), "get");
        assert!(is_portable_name(&base_name(None, "get", &"/x".repeat(80))));
    }

    #[test]
    fn names_are_made_unique_within_64_characters() {
        let mut names = ToolNames::default();
        assert_eq!(names.unique("find"), "find");
        assert_eq!(names.unique("find"), "find_2");
        assert_eq!(names.unique("find"), "find_3");
        let long = "b".repeat(64);
        assert_eq!(names.unique(&long), long);
        let second = names.unique(&long);
        assert_eq!(second, format!("{}_2", "b".repeat(62)));
        assert!(is_portable_name(&second));
    }
}
