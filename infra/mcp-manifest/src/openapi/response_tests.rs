//! CONTRACT M3: a tool's `outputSchema` from its operation's success response, and the
//! `readOnly` properties a request leaves out and the `writeOnly` ones a response leaves out.

use serde_json::{Value, json};

use super::tests::{document, import, tool};
use super::*;

/// A `responses` object whose `code` response is JSON with `schema`.
fn json_response(code: &str, schema: &Value) -> Value {
    json!({code: {"description": "ok", "content": {"application/json": {"schema": schema}}}})
}

/// The one tool of an operation `op` on `GET /things` (or `method`) with `responses`.
fn imported(method: &str, responses: &Value) -> Outcome {
    import(
        &document(&json!({"/things": {method: {"operationId": "op", "responses": responses}}})),
        &Options::default(),
    )
}

fn object(properties: &Value) -> Value {
    json!({"type": "object", "properties": properties})
}

#[test]
fn m3_the_200_responses_object_schema_is_the_output_schema() {
    let outcome = imported(
        "get",
        &json_response("200", &json!({"$ref": "#/components/schemas/Pet"})),
    );
    let tool = tool(&outcome, "op");
    assert_eq!(
        tool["outputSchema"],
        json!({"type": "object", "required": ["name"], "properties": {
            "id": {"type": "integer"}, "name": {"type": "string"}}})
    );
    assert!(outcome.lines.is_empty(), "{:?}", outcome.lines);
    // In the order of tools/list (CONTRACT T1): right after the inputSchema.
    let fields: Vec<&String> = tool.as_object().unwrap().keys().collect();
    assert_eq!(
        fields,
        [
            "name",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
            "_meta"
        ]
    );
}

#[test]
fn m3_200_is_preferred_then_201_then_the_lowest_2xx() {
    let a = object(&json!({"a": {"type": "string"}}));
    let mut responses = json_response("202", &a);
    responses["201"] = json_response("201", &a)["201"].clone();
    responses["200"] = json_response("200", &a)["200"].clone();
    responses["404"] = json_response("404", &object(&json!({"error": {}})))["404"].clone();
    let chosen = |responses: &Value| {
        let outcome = imported("post", responses);
        tool(&outcome, "op").get("outputSchema").cloned()
    };
    assert_eq!(
        chosen(&responses).unwrap()["properties"]["a"]["type"],
        "string"
    );
    // The other 2xx responses must say the same: 201 and 202 do.
    responses.as_object_mut().unwrap().shift_remove("200");
    assert!(chosen(&responses).is_some());
    let lowest =
        json!({"203": json_response("203", &a)["203"], "206": json_response("206", &a)["206"]});
    assert!(chosen(&lowest).is_some());
    // Properties without a type are an object schema too; "type": "object" is added.
    let untyped = json_response("200", &json!({"properties": {"a": {"type": "string"}}}));
    assert_eq!(chosen(&untyped).unwrap()["type"], "object");
}

#[test]
fn m3_arrays_scalars_bodiless_and_non_json_responses_give_no_output_schema() {
    for responses in [
        json_response(
            "200",
            &json!({"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}),
        ),
        json_response("200", &json!({"type": "string"})),
        json_response(
            "200",
            &json!({"allOf": [{"$ref": "#/components/schemas/Pet"}]}),
        ),
        json!({"200": {"description": "ok", "content": {"application/json": {}}}}),
        json!({"204": {"description": "no content"}}),
        json!({"200": {"description": "ok", "content": {"text/plain": {"schema": {"type": "object"}}}}}),
        json_response("default", &object(&json!({"a": {}}))),
        json_response("404", &object(&json!({"a": {}}))),
    ] {
        let outcome = imported("get", &responses);
        let tool = tool(&outcome, "op");
        assert!(tool.get("outputSchema").is_none(), "{responses}: {tool}");
        assert!(outcome.lines.is_empty(), "{responses}: {:?}", outcome.lines);
    }
    // A HEAD answer has no body to check.
    let outcome = imported("head", &json_response("200", &object(&json!({"a": {}}))));
    assert!(tool(&outcome, "op").get("outputSchema").is_none());
}

#[test]
fn m3_a_response_the_gateway_would_refuse_is_left_out_with_a_warning() {
    let nullable = json_response(
        "200",
        &json!({"type": "object", "nullable": true, "properties": {"a": {"type": "string"}}}),
    );
    let outcome = imported("get", &nullable);
    assert!(tool(&outcome, "op").get("outputSchema").is_none());
    assert_eq!(
        outcome.lines,
        [
            "warning: GET /things (op): no outputSchema: the 200 response admits other types beside an object (an outputSchema is an object schema)"
        ]
    );

    // A 204 beside the 200: the gateway would make every bodiless answer an error.
    let mut both = json_response("200", &object(&json!({"a": {}})));
    both["204"] = json!({"description": "nothing"});
    let outcome = imported("delete", &both);
    assert!(tool(&outcome, "op").get("outputSchema").is_none());
    assert_eq!(
        outcome.lines,
        [
            "warning: DELETE /things (op): no outputSchema: its 200 and 204 responses differ, and every successful answer would have to match it"
        ]
    );

    // A reference that cannot be followed leaves the output schema out, not the tool.
    let dangling = json!({"200": {"$ref": "#/components/responses/Nope"}});
    let outcome = imported("get", &dangling);
    assert!(tool(&outcome, "op").get("outputSchema").is_none());
    assert_eq!(
        outcome.lines,
        [
            "warning: GET /things (op): no outputSchema: the 200 response '#/components/responses/Nope' names nothing in the document"
        ]
    );
    let bad = json_response("200", &json!({"$ref": "#/components/schemas/Nope"}));
    let outcome = imported("get", &bad);
    assert_eq!(outcome.tools.len(), 1);
    assert_eq!(
        outcome.lines,
        [
            "warning: GET /things (op): no outputSchema: the 200 response: '#/components/schemas/Nope' names nothing in the document"
        ]
    );
}

#[test]
fn m3_response_refs_and_recursive_response_schemas() {
    let mut document = document(&json!({"/tree": {"get": {"operationId": "tree",
        "responses": {"200": {"$ref": "#/components/responses/Tree"}}}}}));
    document["components"]["responses"] =
        json_response("Tree", &json!({"$ref": "#/components/schemas/Node"}));
    document["components"]["schemas"]["Node"] = json!({"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}});
    let outcome = import(&document, &Options::default());
    let output = &tool(&outcome, "tree")["outputSchema"];
    // The recursive root is a $defs entry: "type": "object" beside its reference.
    assert_eq!(output["type"], "object");
    assert_eq!(output["$ref"], "#/$defs/Node");
    assert_eq!(
        output["$defs"]["Node"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert!(mcp_gateway::registry::LazyValidator::check(output).is_ok());
}

#[test]
fn m3_read_only_properties_are_left_out_of_the_input_schema_and_its_required() {
    let mut document = document(&json!({"/accounts": {"post": {"operationId": "open",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/Account"}}}},
        "responses": json_response("201", &json!({"$ref": "#/components/schemas/Account"}))}}}));
    document["components"]["schemas"]["Id"] = json!({"type": "string", "readOnly": true});
    document["components"]["schemas"]["Account"] = json!({
        "type": "object",
        "required": ["id", "owner", "created"],
        "properties": {
            "id": {"$ref": "#/components/schemas/Id"},
            "owner": {"type": "object", "required": ["name", "since"], "properties": {
                "name": {"type": "string"},
                "since": {"type": "string", "readOnly": true},
                "pin": {"type": "string", "writeOnly": true}
            }},
            "created": {"type": "string", "format": "date-time", "readOnly": true},
            "password": {"type": "string", "writeOnly": true}
        }
    });
    let outcome = import(&document, &Options::default());
    let tool = tool(&outcome, "open");
    let input = &tool["inputSchema"];
    assert_eq!(
        input["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["owner", "password"]
    );
    assert_eq!(input["required"], json!(["owner"]));
    assert_eq!(
        input["properties"]["owner"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name", "pin"]
    );
    assert_eq!(input["properties"]["owner"]["required"], json!(["name"]));
    assert_eq!(
        tool["_meta"]["parameters"],
        json!({"owner": "body", "password": "body"})
    );

    // The response keeps the readOnly properties and leaves out the writeOnly ones.
    let output = &tool["outputSchema"];
    assert_eq!(
        output["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["id", "owner", "created"]
    );
    assert_eq!(output["required"], json!(["id", "owner", "created"]));
    assert_eq!(
        output["properties"]["owner"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name", "since"]
    );
    assert_eq!(
        output["properties"]["owner"]["required"],
        json!(["name", "since"])
    );
    assert_eq!(output["properties"]["id"]["readOnly"], true);
}

#[test]
fn m3_write_only_required_properties_leave_the_output_schemas_required() {
    let outcome = imported(
        "get",
        &json_response(
            "200",
            &json!({"type": "object", "required": ["user", "secret"],
            "properties": {"user": {"type": "string"}, "secret": {"type": "string", "writeOnly": true}}}),
        ),
    );
    let output = &tool(&outcome, "op")["outputSchema"];
    assert_eq!(output["required"], json!(["user"]));
    assert!(output["properties"].get("secret").is_none());
}

#[test]
fn m3_a_refs_read_only_sibling_counts_in_3_1_and_not_in_3_0() {
    let paths = json!({"/a": {"post": {"operationId": "add", "requestBody": {"content": {
        "application/json": {"schema": {"type": "object", "properties": {
            "id": {"$ref": "#/components/schemas/Pet", "readOnly": true},
            "note": {"type": "string"}}}}}}}}});
    let keys = |dialect: Dialect| {
        let outcome = import_document(&document(&paths), dialect, &Options::default());
        let input = tool(&outcome, "add")["inputSchema"]["properties"].clone();
        input
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(Dialect::V3_1), ["note"]);
    assert_eq!(keys(Dialect::V3_0), ["id", "note"]);
}

#[test]
fn m3_output_schemas_over_max_bytes_are_left_out_not_the_import() {
    let properties: serde_json::Map<String, Value> = (0..12)
        .map(|i| (format!("field{i}"), json!({"type": "string"})))
        .collect();
    let responses = json_response("200", &object(&Value::Object(properties)));
    let paths = json!({"/a": {"get": {"operationId": "a", "responses": responses}},
                       "/b": {"get": {"operationId": "b", "responses": responses}}});
    let outcome = import(
        &document(&paths),
        &Options {
            max_bytes: Some(500),
            ..Options::default()
        },
    );
    assert!(outcome.too_large.is_none());
    assert!(tool(&outcome, "a").get("outputSchema").is_some());
    assert!(tool(&outcome, "b").get("outputSchema").is_none());
    assert_eq!(
        outcome.lines,
        [
            "warning: GET /b (b): no outputSchema: with it, the tools' schemas would take more than 500 bytes (--max-bytes)"
        ]
    );
}
