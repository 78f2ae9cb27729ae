//! The JSON Schema 2020-12 keywords the cheap load check of a tool schema knows
//! ([`super::schema_check`], CONTRACT R5): what the value at each place of a schema must be for
//! the read to prove it valid, and which keywords only the compiler can judge.

/// JSON Schema's simple type names (2020-12 validation vocabulary, `simpleTypes`).
pub(super) const SIMPLE_TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// What a value at one place of a schema must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    /// A schema: an object or a boolean; `root` for the `inputSchema` or `outputSchema` itself,
    /// which must be an object (CONTRACT R5).
    Schema { root: bool },
    /// `properties`, `$defs`, `definitions`: names to schemas. `root_defs`: the root's `$defs`,
    /// whose names local references may point at.
    SchemaMap { root_defs: bool },
    /// `allOf`, `anyOf`, `oneOf`, `prefixItems`: a non-empty array of schemas.
    SchemaList,
    /// The root's `type`: `"object"` (CONTRACT R5).
    RootType,
    /// `type`: a simple type name, or a non-empty array of distinct ones.
    Type,
    /// An element of a `type` array.
    TypeName,
    /// `required`: an array of distinct strings.
    Required,
    /// An element of a `required` array.
    RequiredName,
    /// `enum` (non-empty) and `examples`: an array of any values.
    DataList { non_empty: bool },
    /// `maximum`, `minimum`, `exclusiveMaximum`, `exclusiveMinimum`: a number.
    Number,
    /// `multipleOf`: a number greater than 0.
    PositiveNumber,
    /// `minLength`, `maxItems` and the like: a non-negative integer.
    Count,
    /// `uniqueItems`, `readOnly`, `writeOnly`, `deprecated`: a boolean.
    Bool,
    /// `title`, `description`, `format`, `$comment` and the like: a string.
    Text,
    /// `$ref`: a string; `#/$defs/<name>` is checked against the root's `$defs`.
    Ref,
    /// `pattern`: a string, a regular expression compiled once per load to check it.
    Pattern,
    /// Any JSON value: `const`, `default`, the elements of `enum`, unknown keywords.
    Any,
    /// A keyword whose validity only the compiler decides (`$schema`, `$id`,
    /// `patternProperties`, ...): the schema is compiled at load; its value is read as `Any`.
    Compiled,
}

/// What the value of a schema's keyword must be: [`Ctx::Compiled`] for a keyword only the
/// compiler can judge.
pub(super) fn keyword(key: &str, root: bool) -> Ctx {
    // By length first: a key is compared with the few keywords of its length.
    let schema = Ctx::Schema { root: false };
    match key.len() {
        2 if key == "if" => schema,
        3 => match key {
            "not" => schema,
            "$id" => Ctx::Compiled,
            _ => Ctx::Any,
        },
        4 => match key {
            "type" if root => Ctx::RootType,
            "type" => Ctx::Type,
            "enum" => Ctx::DataList { non_empty: true },
            "then" | "else" => schema,
            "$ref" => Ctx::Ref,
            _ => Ctx::Any,
        },
        5 => match key {
            "$defs" => Ctx::SchemaMap { root_defs: root },
            "items" => schema,
            "allOf" | "anyOf" | "oneOf" => Ctx::SchemaList,
            "title" => Ctx::Text,
            _ => Ctx::Any,
        },
        6 if key == "format" => Ctx::Text,
        7 => match key {
            "maximum" | "minimum" => Ctx::Number,
            "pattern" => Ctx::Pattern,
            "$schema" | "$anchor" => Ctx::Compiled,
            _ => Ctx::Any,
        },
        8 => match key {
            "contains" => schema,
            "required" => Ctx::Required,
            "examples" => Ctx::DataList { non_empty: false },
            "maxItems" | "minItems" => Ctx::Count,
            "readOnly" => Ctx::Bool,
            "$comment" => Ctx::Text,
            _ => Ctx::Any,
        },
        9 => match key {
            "maxLength" | "minLength" => Ctx::Count,
            "writeOnly" => Ctx::Bool,
            _ => Ctx::Any,
        },
        10 => match key {
            "properties" => Ctx::SchemaMap { root_defs: false },
            "multipleOf" => Ctx::PositiveNumber,
            "deprecated" => Ctx::Bool,
            _ => Ctx::Any,
        },
        11 => match key {
            "definitions" => Ctx::SchemaMap { root_defs: false },
            "prefixItems" => Ctx::SchemaList,
            "maxContains" | "minContains" => Ctx::Count,
            "uniqueItems" => Ctx::Bool,
            "description" => Ctx::Text,
            "$dynamicRef" | "$vocabulary" => Ctx::Compiled,
            _ => Ctx::Any,
        },
        12 if key == "dependencies" => Ctx::Compiled,
        13 => match key {
            "propertyNames" | "contentSchema" => schema,
            "maxProperties" | "minProperties" => Ctx::Count,
            "$recursiveRef" => Ctx::Compiled,
            _ => Ctx::Any,
        },
        14 if key == "$dynamicAnchor" => Ctx::Compiled,
        15 if key == "contentEncoding" => Ctx::Text,
        16 => match key {
            "unevaluatedItems" => schema,
            "exclusiveMaximum" | "exclusiveMinimum" => Ctx::Number,
            "contentMediaType" => Ctx::Text,
            "$recursiveAnchor" | "dependentSchemas" => Ctx::Compiled,
            _ => Ctx::Any,
        },
        17 if matches!(key, "patternProperties" | "dependentRequired") => Ctx::Compiled,
        20 if key == "additionalProperties" => schema,
        21 if key == "unevaluatedProperties" => schema,
        // `const`, `default`, and keywords of no vocabulary: any value.
        _ => Ctx::Any,
    }
}
