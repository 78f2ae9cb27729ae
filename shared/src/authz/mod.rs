//! Authorization policies (CONTRACT Z): who may call which tool with which arguments, decided
//! by a route's Cedar policies against a schema generated from its tools.
//!
//! - [`schema`]: the route's Cedar schema from its tools' `inputSchema`s (Z2);
//! - [`policies`]: a route's `authorization`, parsed and validated once at load (Z1, Z8);
//! - `parse`: the policy text parsed and strictly validated (Z1, Z8);
//! - [`caller`]: the caller's facts (Z3);
//! - [`context`]: the arguments as Cedar values, numbers read exactly (Z2, Z5);
//! - [`decide`]: decisions and visibility (Z4–Z7);
//! - `scopes`: the policies by the actions their scope can hold, each tool's slice (Z4);
//! - `reach`: the tools no policy can reach, for `mcp-manifest validate` (Z9).

pub mod caller;
pub mod context;
pub mod decide;
mod digest;
mod parse;
pub mod policies;
mod reach;
pub mod schema;
mod scopes;
pub mod shape;

pub use caller::{CallerFacts, RequestFacts};
pub use context::{ArgumentText, InputError, NotAnObject};
pub use decide::{CallerView, Decision, DecisionKind};
pub use policies::{Mode, PolicyProblem, RoutePolicies};
