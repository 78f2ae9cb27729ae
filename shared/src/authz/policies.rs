//! A route's `authorization` (CONTRACT Z1, Z2, Z8): its mode and its Cedar policies, parsed
//! and validated in strict mode against the route's generated schema once, at load.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::OnceLock;

use bytes::Bytes;
use cedar_policy::{Entity, EntityId, EntityTypeName, EntityUid, PolicyId, PolicySet};
use serde_json::Value;

pub use super::digest::{CEDAR_VERSION, validation_digest, validation_digest_with_json};
use super::parse::{json_form, parse, parse_json, validate};
use super::schema::{CALL_TOOL, CedarType};
use super::scopes::Scopes;
use super::shape::input_type_of_text;

/// What a route's policies do (CONTRACT Z1, Z7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `"enforce"`: denials are answered (Z4, Z6).
    Enforce,
    /// `"shadow"`: decisions are recorded, nothing is enforced and every tool is listed (Z7).
    Shadow,
}

/// One problem with a route's `authorization`, at `path` below it (`""`, `mode`, `policies`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyProblem {
    /// `mode`, `policies`, `validated` or `policiesJson` (empty for the object itself).
    pub path: &'static str,
    /// What is wrong: names the policy by its `@id` (or its place, `policy<N>` from 0) and
    /// gives Cedar's message (CONTRACT Z8).
    pub message: String,
}

/// One tool's action: its entity and the Cedar type of its arguments. What is made later is
/// boxed: a route holds one per tool from its load on, most of them never asked about, and
/// each held Cedar's entity, type and policy set in line (808 bytes a tool).
#[derive(Debug)]
pub(super) struct ToolAction {
    /// The tool's name.
    pub(super) name: String,
    /// The action's uid and entity (a member of `call_tool`), made by the first decision about
    /// the tool ([`RoutePolicies::entity_of`]): a load with a thousand tools makes none.
    ids: OnceLock<Box<(EntityUid, Entity)>>,
    /// The JSON text of the tool's `inputSchema` (a slice of the manifest's text at a load).
    schema: Bytes,
    /// The Cedar type of the arguments (CONTRACT Z2), read from `schema` at load when the
    /// policies are validated there, else by the first call of the tool; `None` when `schema`
    /// is not JSON (every call of the tool then denies, Z5).
    input: OnceLock<Option<Box<CedarType>>>,
    /// The policies whose action scope can hold this tool's action: the only ones a call of it
    /// evaluates (a policy whose scope excludes the action is never satisfied and never
    /// errors, since Cedar checks the scope before the conditions). Made by the first decision
    /// about the tool, so that a cold start with a thousand tools pays for none of them
    /// ([`RoutePolicies::slice`]).
    slice: OnceLock<Box<PolicySet>>,
}

/// A route's compiled policies: the policy set (each policy under its `@id`), validated at
/// load against the route's schema unless a matching digest vouches for it (CONTRACT Z11), and
/// each tool's action; what a decision needs of a tool (its entity, Cedar type, slice of the
/// set) is made once, by the first decision about it (STYLE 10; CONTRACT Z1).
#[derive(Debug)]
pub struct RoutePolicies {
    pub(super) mode: Mode,
    /// The policies, parsed at load when they are validated there, else by the first request
    /// that needs them (CONTRACT Z11: a matching digest stands for validation, and the parse
    /// is most of what is left of a cold start's cost).
    parsed: OnceLock<Parsed>,
    /// The policy text, for a parse on first use.
    text: String,
    /// Cedar's JSON form of the text, when the manifest carries it (CONTRACT Z12): parsed on
    /// first use in place of the text when the digest that covers both matched.
    json: Option<String>,
    pub(super) route: Entity,
    pub(super) call_tool: Entity,
    /// `Gateway::Action`, parsed once.
    action_type: EntityTypeName,
    /// The tools' actions, in manifest order.
    pub(super) actions: Vec<ToolAction>,
    /// Each tool's place in `actions`, by name. The names are the manifest's, so a fast
    /// hasher is safe here (a request only looks one up).
    tools: HashMap<String, usize, foldhash::fast::RandomState>,
    /// `Gateway::Caller`, parsed once: Cedar parses a type name with its grammar.
    pub(super) caller_type: EntityTypeName,
    /// The policies by action, for the tools' slices (made by the first decision).
    scopes: OnceLock<Scopes>,
    /// The digest of what strict validation judged (CONTRACT Z11).
    digest: String,
}

/// A route's policy set, each policy under its `@id`, and the ids in the text's order (for a
/// stable choice of the deciding forbid, Z6).
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub(super) policies: PolicySet,
    pub(super) order: Vec<PolicyId>,
}

fn type_name(name: &str) -> EntityTypeName {
    #[expect(clippy::expect_used, reason = "constant names of the schema")]
    EntityTypeName::from_str(&format!("{}::{name}", super::schema::NAMESPACE))
        .expect("a valid type name")
}

pub(super) fn uid(ty: &str, id: &str) -> EntityUid {
    EntityUid::from_type_name_and_id(type_name(ty), EntityId::new(id))
}

impl ToolAction {
    /// The Cedar type of the tool's arguments, read from its schema's text the first time.
    pub(super) fn input(&self) -> Option<&CedarType> {
        self.input
            .get_or_init(|| input_type_of_text(&self.schema).map(Box::new))
            .as_deref()
    }
}

impl RoutePolicies {
    /// Compiles a route's `authorization` value for the route `key` (`""` when it has none)
    /// and its tools (name and `inputSchema`, in manifest order).
    ///
    /// # Errors
    /// Every [`PolicyProblem`]: a wrong shape, a policy Cedar cannot parse, a template, a
    /// repeated `@id`, or a policy strict validation refuses (CONTRACT Z1, Z8).
    pub fn compile<'a>(
        key: &str,
        authorization: &Value,
        tools: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> Result<Self, Vec<PolicyProblem>> {
        let tools = tools
            .into_iter()
            .map(|(name, schema)| {
                let text = serde_json::to_vec(schema).unwrap_or_default();
                (name.to_string(), Bytes::from(text))
            })
            .collect();
        Self::compile_texts(key, authorization, tools)
    }

    /// [`RoutePolicies::compile`] for tools given as their name and the JSON text of their
    /// `inputSchema` (in manifest order), as the load holds them: a load whose digest matches
    /// (CONTRACT Z11) reads no schema; each tool's Cedar type is read from its text by the
    /// tool's first call ([`super::shape::input_type_of_text`]).
    ///
    /// # Errors
    /// As [`RoutePolicies::compile`]; a schema text that is not JSON when the policies are
    /// validated.
    pub fn compile_texts(
        key: &str,
        authorization: &Value,
        tools: Vec<(String, Bytes)>,
    ) -> Result<Self, Vec<PolicyProblem>> {
        let problem = |path, message: String| vec![PolicyProblem { path, message }];
        let Some(object) = authorization.as_object() else {
            return Err(problem(
                "",
                "must be an object with \"mode\" and \"policies\"".into(),
            ));
        };
        let mode = match object.get("mode").and_then(Value::as_str) {
            Some("enforce") => Mode::Enforce,
            Some("shadow") => Mode::Shadow,
            _ => return Err(problem("mode", "must be \"enforce\" or \"shadow\"".into())),
        };
        if let Some(other) = object.keys().find(|k| {
            !matches!(
                k.as_str(),
                "mode" | "policies" | "validated" | "policiesJson"
            )
        }) {
            return Err(problem(
                "",
                format!("'{other}' is not a field of authorization"),
            ));
        }
        let text = match object.get("policies") {
            Some(Value::String(text)) => text,
            // CONTRACT Z9: a `.cedar` file is mcp-manifest's to read; the gateway loads text.
            Some(Value::Object(file)) if file.contains_key("file") => {
                return Err(problem(
                    "policies",
                    "a policies file is read by mcp-manifest: run `mcp-manifest policy embed` \
                     and load the manifest it writes"
                        .into(),
                ));
            }
            _ => {
                return Err(problem(
                    "policies",
                    "must be a string of Cedar policies".into(),
                ));
            }
        };
        let validated = match object.get("validated") {
            None => None,
            Some(Value::String(digest)) => Some(digest.as_str()),
            Some(_) => {
                return Err(problem(
                    "validated",
                    "must be the string `mcp-manifest policy embed` writes".into(),
                ));
            }
        };
        let json = match object.get("policiesJson") {
            None => None,
            Some(Value::String(json)) => Some(json.clone()),
            Some(_) => {
                return Err(problem(
                    "policiesJson",
                    "must be the string `mcp-manifest policy embed` writes".into(),
                ));
            }
        };
        let named = tools.iter().map(|(n, t)| (n.as_str(), &t[..]));
        // CONTRACT Z12: the digest covers the JSON form too.
        let digest = super::digest::route_digest(validated, named, text, json.as_deref());

        // CONTRACT Z11: what was validated before is not validated again. Strict validation
        // typechecks every policy once per action of the schema (1,000 tools and 100
        // policies: about a second of CPU), the one part of the load that grows with both;
        // and policies validated before are parsed by the first request that needs them.
        let parsed = OnceLock::new();
        let mut types: Vec<Option<CedarType>> = Vec::new();
        if validated != Some(digest.as_str()) {
            let (policies, order) = parse(text)?;
            let mut named_types = Vec::with_capacity(tools.len());
            for (name, schema) in &tools {
                let Some(ty) = input_type_of_text(schema) else {
                    return Err(problem(
                        "",
                        format!("the inputSchema of tool '{name}' is not JSON"),
                    ));
                };
                named_types.push((name.clone(), ty));
            }
            validate(&named_types, &policies)?;
            types = named_types.into_iter().map(|(_, ty)| Some(ty)).collect();
            let _ = parsed.set(Parsed { policies, order });
        }
        // The JSON form is read only when the digest vouched for it with the text.
        let json = json.filter(|_| parsed.get().is_none());
        let mut types = types.into_iter();
        let action_type = type_name("Action");
        let call_tool_uid =
            EntityUid::from_type_name_and_id(action_type.clone(), EntityId::new(CALL_TOOL));
        let route = Entity::new_no_attrs(uid("Route", key), [].into());
        let call_tool = Entity::new_no_attrs(call_tool_uid, [].into());
        let mut places =
            HashMap::with_capacity_and_hasher(tools.len(), foldhash::fast::RandomState::default());
        let actions = tools
            .into_iter()
            .enumerate()
            .map(|(place, (name, schema))| {
                places.insert(name.clone(), place);
                let input = OnceLock::new();
                if let Some(ty) = types.next() {
                    let _ = input.set(ty.map(Box::new));
                }
                ToolAction {
                    name,
                    ids: OnceLock::new(),
                    schema,
                    input,
                    slice: OnceLock::new(),
                }
            })
            .collect();
        Ok(Self {
            mode,
            parsed,
            text: text.clone(),
            json,
            route,
            call_tool,
            action_type,
            actions,
            tools: places,
            caller_type: type_name("Caller"),
            scopes: OnceLock::new(),
            digest,
        })
    }

    /// The action of `tool`, `None` for a tool the policies do not know.
    pub(super) fn action(&self, tool: &str) -> Option<&ToolAction> {
        self.tools
            .get(tool)
            .and_then(|&place| self.actions.get(place))
    }

    /// `action`'s uid and entity, a member of `call_tool`, made the first time.
    fn ids<'a>(&self, action: &'a ToolAction) -> &'a (EntityUid, Entity) {
        action.ids.get_or_init(|| {
            let uid = EntityUid::from_type_name_and_id(
                self.action_type.clone(),
                EntityId::new(&action.name),
            );
            let entity = Entity::new_no_attrs(uid.clone(), [self.call_tool.uid()].into());
            Box::new((uid, entity))
        })
    }

    /// `action`'s uid (`Gateway::Action::"<tool>"`).
    pub(super) fn uid_of<'a>(&self, action: &'a ToolAction) -> &'a EntityUid {
        &self.ids(action).0
    }

    /// `action`'s entity, a member of `call_tool`.
    pub(super) fn entity_of<'a>(&self, action: &'a ToolAction) -> &'a Entity {
        &self.ids(action).1
    }

    /// The parsed policies: parsed now when the load did not, from Cedar's JSON form when the
    /// manifest carries one (CONTRACT Z12: about a third of the text's parse), else from the
    /// text. Policies that a matching digest vouched for and that do not parse (a digest
    /// written by hand) leave no policy, so every call is denied (CONTRACT Z5, Z11).
    pub(super) fn parsed(&self) -> &Parsed {
        self.parsed.get_or_init(|| {
            self.json
                .as_deref()
                .map_or_else(|| parse(&self.text), parse_json)
                .map_or_else(
                    |problems| {
                        tracing::error!(
                            problems = problems.len(),
                            "authorization policies vouched for by their digest do not parse; \
                         every call is denied"
                        );
                        Parsed::default()
                    },
                    |(policies, order)| Parsed { policies, order },
                )
        })
    }

    /// `action`'s slice of the policies, in the text's order, made by the first decision
    /// about it (STYLE 10: once per instance).
    pub(super) fn slice<'a>(&self, action: &'a ToolAction) -> &'a PolicySet {
        action
            .slice
            .get_or_init(|| Box::new(self.scopes().slice(&action.name)))
    }

    /// The policies by the actions their scope can hold, made by the first decision.
    pub(super) fn scopes(&self) -> &Scopes {
        self.scopes.get_or_init(|| {
            let parsed = self.parsed();
            Scopes::new(
                &parsed.policies,
                &parsed.order,
                &self.call_tool.uid(),
                &self.action_type,
                |name| self.tools.contains_key(name),
                self.actions.first().map(|a| a.name.as_str()),
            )
        })
    }

    /// The digest that `authorization.validated` carries for these policies and tools
    /// (CONTRACT Z11), what `mcp-manifest policy embed` writes.
    #[must_use]
    pub fn validation_digest(&self) -> &str {
        &self.digest
    }

    /// What `mcp-manifest policy embed` writes into the route's `authorization` (CONTRACT
    /// Z11, Z12): Cedar's JSON form of the policy text, `policiesJson`, and the digest that
    /// covers it with the text and the tools, `validated`. `None` when the text does not parse.
    #[must_use]
    pub fn embedded_form(&self) -> Option<(String, String)> {
        let json = json_form(&self.text)?;
        let digest = validation_digest_with_json(
            self.actions
                .iter()
                .map(|a| (a.name.as_str(), &a.schema[..])),
            &self.text,
            &json,
        );
        Some((json, digest))
    }

    /// The mode (CONTRACT Z1, Z7).
    #[must_use]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The `@id`s (or `policy<N>`) of the policies, in the text's order.
    pub fn policy_ids(&self) -> impl Iterator<Item = &str> {
        self.parsed().order.iter().map(AsRef::as_ref)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn z1_a_tool_not_yet_asked_about_holds_little() {
        // A route of a thousand tools holds a thousand of these from its load on.
        let size = std::mem::size_of::<super::ToolAction>();
        assert!(size <= 128, "ToolAction is {size} bytes");
    }
}
