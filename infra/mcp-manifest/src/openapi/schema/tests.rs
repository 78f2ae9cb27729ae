use super::*;

fn translate(document: &Value, schema: &Value) -> (Value, Map<String, Value>, Vec<String>) {
    let mut translator = SchemaTranslator::new(document, Dialect::V3_0);
    let translated = translator.translate(schema, "'x'").unwrap();
    let (defs, warnings) = translator.finish();
    (translated, defs, warnings)
}

#[test]
fn openapi_3_0_keywords_become_json_schema_2020_12() {
    let (schema, defs, warnings) = translate(
        &json!({}),
        &json!({
            "type": "object",
            "x-internal": true,
            "discriminator": {"propertyName": "kind"},
            "xml": {"name": "x"},
            "externalDocs": {"url": "https://x"},
            "properties": {
                "name": {"type": "string", "nullable": true, "example": "rex", "readOnly": true},
                "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": true,
                        "maximum": 30, "exclusiveMaximum": false},
                "kind": {"type": "string", "enum": ["a", "b"], "nullable": true},
                "any": {"description": "anything", "nullable": true},
                "x-not-an-extension": {"type": "string"}
            }
        }),
    );
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"], "readOnly": true, "examples": ["rex"]},
                "age": {"type": "integer", "exclusiveMinimum": 0, "maximum": 30},
                "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "any": {"anyOf": [{"description": "anything"}, {"type": "null"}]},
                "x-not-an-extension": {"type": "string"}
            }
        })
    );
    assert!(defs.is_empty());
    assert!(warnings.is_empty());
}

#[test]
fn non_recursive_refs_are_inlined_and_recursive_ones_become_defs() {
    let document = json!({"components": {"schemas": {
        "Tag": {"type": "object", "properties": {"name": {"type": "string"}}},
        "Node": {"type": "object", "properties": {
            "tag": {"$ref": "#/components/schemas/Tag"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
        }}
    }}});
    let (schema, defs, _) = translate(
        &document,
        &json!({"type": "object", "properties": {
            "root": {"$ref": "#/components/schemas/Node"},
            "other": {"$ref": "#/components/schemas/Node"},
            "tag": {"$ref": "#/components/schemas/Tag"}
        }}),
    );
    assert_eq!(
        schema["properties"]["root"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert_eq!(
        schema["properties"]["other"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert_eq!(
        schema["properties"]["tag"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(
        defs["Node"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert_eq!(defs["Node"]["properties"]["tag"]["type"], "object");
    assert_eq!(defs.len(), 1);
}

#[test]
fn a_pattern_the_gateway_cannot_compile_is_dropped_with_a_warning() {
    let (schema, _, warnings) = translate(
        &json!({}),
        &json!({"type": "object", "properties": {
            "bad": {"type": "string", "pattern": "(?<=a)b[", "minLength": 1},
            "good": {"type": "string", "pattern": "^[a-z]+$"}
        }}),
    );
    assert_eq!(
        schema["properties"]["bad"],
        json!({"type": "string", "minLength": 1})
    );
    assert_eq!(schema["properties"]["good"]["pattern"], "^[a-z]+$");
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with(
            "dropped pattern '(?<=a)b[' of 'x.bad': the gateway's regex engine cannot compile it"
        ),
        "{warnings:?}"
    );
}

#[test]
fn openapi_3_1_applies_a_refs_siblings_and_3_0_ignores_them() {
    let document = json!({"components": {"schemas": {"Id": {"type": "string"}}}});
    let schema = json!({"$ref": "#/components/schemas/Id", "description": "the id"});
    let mut translator = SchemaTranslator::new(&document, Dialect::V3_1);
    assert_eq!(
        translator.translate(&schema, "'id'").unwrap(),
        json!({"description": "the id", "allOf": [{"type": "string"}]})
    );
    let (translated, _, _) = translate(&document, &schema);
    assert_eq!(translated, json!({"type": "string"}));
}

#[test]
fn external_and_dangling_refs_are_errors() {
    let document = json!({});
    let mut translator = SchemaTranslator::new(&document, Dialect::V3_0);
    assert!(matches!(
        translator.translate(&json!({"$ref": "common.yaml#/Pet"}), "'x'"),
        Err(SchemaError::Ref(RefError::External(_)))
    ));
    assert!(matches!(
        translator.translate(&json!({"$ref": "#/components/schemas/Nope"}), "'x'"),
        Err(SchemaError::Ref(RefError::Unresolved(_)))
    ));
}
