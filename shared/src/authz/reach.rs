//! What a route's policies can reach (CONTRACT Z9): a tool that no policy could permit for
//! any caller with any arguments, which `mcp-manifest validate` warns about.

use cedar_policy::{Authorizer, Decision, Entities, EntityTypeName, RequestBuilder};

use super::policies::RoutePolicies;

impl RoutePolicies {
    /// The tools, in manifest order, that no policy could permit whoever calls and whatever
    /// the arguments: Cedar's partial evaluation with the caller and the context unknown
    /// answers a definite deny (CONTRACT Z9). Shadow mode changes nothing here.
    #[must_use]
    pub fn unreachable_tools(&self) -> Vec<&str> {
        let caller: Option<EntityTypeName> =
            format!("{}::Caller", super::schema::NAMESPACE).parse().ok();
        let Some(caller) = caller else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for action in &self.actions {
            let entities = Entities::from_entities(
                [
                    self.route.clone(),
                    self.call_tool.clone(),
                    self.entity_of(action).clone(),
                ],
                None,
            );
            let Ok(entities) = entities else { continue };
            let request = RequestBuilder::default()
                .unknown_principal_with_type(caller.clone())
                .action(self.uid_of(action).clone())
                .resource(self.route.uid())
                .build();
            let partial =
                Authorizer::new().is_authorized_partial(&request, self.slice(action), &entities);
            if partial.decision() == Some(Decision::Deny) {
                out.push(action.name.as_str());
            }
        }
        out
    }
}
