//! Text a `Value` parse of a manifest refuses (CONTRACT R5): the load refuses it as not JSON,
//! with that parse's error, wherever in a tool, `tools` array or route it sits; the same shapes
//! with valid JSON load as the full check loads them.

use bytes::Bytes;
use serde_json::Value;

use super::compile_manifest;
use super::first_pass::compile_manifest_text;
use super::stream_tests::outcome;

/// Text a `Value` parse of the manifest refuses is refused as that parse refuses it (not JSON),
/// wherever in a tool it sits, however the tool is read.
#[test]
fn r5_text_a_value_parse_refuses_is_not_json_wherever_it_sits() {
    let nested =
        |depth: usize, inner: &str| format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth));
    let deep_schema = |levels: usize| {
        format!(
            r#"{{"type":"object"{}}}"#,
            r#","not":{"type":"object""#.repeat(levels - 1) + &"}".repeat(levels - 1)
        )
    };
    let tool = |fields: &str| {
        format!(
            r#"{{"name":"a",{fields}"inputSchema":{{"type":"object"}},"_meta":{{"endpoint":"http://127.0.0.1:9/a"}}}}"#
        )
    };
    let single = |tool: &str| format!(r#"{{"routeKey":"core","tools":[{tool}]}}"#);
    let routes = |tool: &str| {
        format!(r#"{{"manifestVersion":1,"routes":[{{"routeKey":"core","tools":[{tool}]}}]}}"#)
    };
    let mut texts = vec![
        single(&tool(r#""description":"\ud800","#)),
        single(&tool(r#""annotations":{"x":1e400},"#)),
        single(&tool(r#""icons":["\udc00"],"#)),
        single(&tool(r#""x-private":1e999,"#)),
        single(&tool(r#""description":"\ud800","description":"x","#)),
        single(&tool(r#""inputSchema":{"type":"object","maximum":1e400},"#)),
        single(&tool(&format!(
            r#""annotations":{{"x":{}}},"#,
            nested(124, "1")
        ))),
        single(&tool(&format!(
            r#""annotations":{{"x":{}}},"#,
            nested(123, "1")
        ))),
        single(
            r#"{"name":"\ud800","inputSchema":{"type":"object"},"_meta":{"endpoint":"http://127.0.0.1:9/a"}}"#,
        ),
        // Repeated keys in annotations: the last one wins, as in a `Value`.
        single(&tool(
            r#""annotations":{"destructiveHint":false,"destructiveHint":true},"#,
        )),
    ];
    // Tools arrays and routes a later key of the same name replaces, and `tools` or `routes`
    // of the wrong type: read as strictly all the same.
    let bad = tool(r#""inputSchema":{"type":"object","maximum":1e400},"#);
    let deep = nested(200, "1");
    texts.extend([
        format!(r#"{{"tools":[{bad}],"tools":[{}]}}"#, tool("")),
        format!(
            r#"{{"manifestVersion":1,"routes":[{{"routeKey":"a","tools":[{bad}],"tools":[]}}]}}"#
        ),
        format!(
            r#"{{"manifestVersion":1,"routes":[{{"routeKey":"a","tools":[{bad}]}}],"routes":[]}}"#
        ),
        r#"{"tools":{"x":"\ud800"}}"#.to_owned(),
        r#"{"tools":{"x":1e999}}"#.to_owned(),
        format!(r#"{{"tools":{{"x":{deep}}}}}"#),
        r#"{"manifestVersion":1,"routes":[{"routeKey":"a","tools":{"x":1e999}}]}"#.to_owned(),
        r#"{"manifestVersion":1,"routes":{"x":1e999},"routes":[]}"#.to_owned(),
        r#"{"manifestVersion":1,"routes":[["\ud800"]],"routes":[]}"#.to_owned(),
        format!(r#"{{"manifestVersion":1,"routes":[{deep}],"routes":[]}}"#),
        // The same shapes with valid JSON: problems or a load, as the full check gives them.
        r#"{"tools":{"x":"\u00e9"}}"#.to_owned(),
        r#"{"manifestVersion":1,"routes":[["x"]],"routes":[]}"#.to_owned(),
        format!(r#"{{"tools":[{}],"tools":[{}]}}"#, tool(""), tool("")),
    ]);
    for levels in [122, 123, 124, 125, 126, 127] {
        let text = format!(
            r#"{{"name":"a","inputSchema":{},"_meta":{{"endpoint":"http://127.0.0.1:9/a"}}}}"#,
            deep_schema(levels)
        );
        texts.push(single(&text));
        texts.push(routes(&text));
    }
    let mut refused = 0;
    for text in &texts {
        let by_load = crate::registry::compile_bytes("t", &Bytes::copy_from_slice(text.as_bytes()));
        match serde_json::from_str::<Value>(text) {
            Err(error) => {
                refused += 1;
                assert!(
                    matches!(&by_load, Err(crate::registry::RegistryError::NotJson { reason, .. }) if *reason == error.to_string()),
                    "{text}: {by_load:?}"
                );
            }
            Ok(document) => {
                let by_document = outcome(compile_manifest(&document));
                let by_text =
                    compile_manifest_text(&Bytes::copy_from_slice(text.as_bytes())).map(outcome);
                assert_eq!(
                    by_text.unwrap_or_else(|| by_document.clone()),
                    by_document,
                    "{text}"
                );
                assert!(by_load.is_ok() == by_document.is_ok(), "{text}");
            }
        }
    }
    // Eight of the tools' texts and ten of the replaced or mistyped arrays; schemas nested past
    // 124 levels in the single-route form (3 of 6) and past 122 in the `routes` form (5 of 6).
    assert_eq!(refused, 26, "the texts a Value parse refuses");
}
