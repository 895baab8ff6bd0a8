//! Authorization: whether a user may do what a request asks.
//! `--authorization-mode AlwaysAllow` (the default: every request is
//! allowed, as before authorization existed) or `RBAC` over the shard's
//! [`RbacIndex`]. Members of `system:masters` are allowed everything in
//! every mode, as kube-apiserver's privileged-group authorizer does.
//! `Node,RBAC` (kube's usual list) asks the Node authorizer ([`node`]) first
//! and RBAC on its NoOpinion; [`decide`] returns the chain's [`Decision`],
//! so an authorizer added after RBAC (upstream SubjectAccessReview) takes
//! the final NoOpinion.

use super::node::{self, Decision, NodeGraph};
use super::rbac::RbacIndex;
use super::{Attributes, UserInfo, MASTERS_GROUP};

/// `--authorization-mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthorizationMode {
    #[default]
    AlwaysAllow,
    Rbac,
    /// `Node,RBAC`: the Node authorizer, then RBAC.
    NodeRbac,
}

impl AuthorizationMode {
    /// Whether the Node authorizer is in the chain.
    pub fn has_node(self) -> bool {
        self == AuthorizationMode::NodeRbac
    }

    /// Whether RBAC is in the chain (`RBAC` and `Node,RBAC`).
    pub fn has_rbac(self) -> bool {
        matches!(self, AuthorizationMode::Rbac | AuthorizationMode::NodeRbac)
    }
}

impl std::str::FromStr for AuthorizationMode {
    type Err = String;

    fn from_str(text: &str) -> Result<AuthorizationMode, String> {
        match text {
            "AlwaysAllow" => Ok(AuthorizationMode::AlwaysAllow),
            "RBAC" => Ok(AuthorizationMode::Rbac),
            "Node,RBAC" => Ok(AuthorizationMode::NodeRbac),
            other => Err(format!("unsupported authorization mode {other:?} (use AlwaysAllow, RBAC or Node,RBAC)")),
        }
    }
}

/// The decision for one request without the Node authorizer (access
/// reviews): `index` is the shard's RBAC index (needed only in RBAC modes).
pub fn allows(mode: AuthorizationMode, index: &RbacIndex, user: &UserInfo, attributes: &Attributes) -> bool {
    decide(mode, index, None, user, attributes) == Decision::Allow
}

/// The chain's decision for one request: masters, then (in `Node,RBAC`)
/// the Node authorizer over `graph`, then RBAC. A NoOpinion carries the
/// Node authorizer's reason for the 403 message.
pub fn decide(
    mode: AuthorizationMode,
    index: &RbacIndex,
    graph: Option<&NodeGraph>,
    user: &UserInfo,
    attributes: &Attributes,
) -> Decision {
    if user.in_group(MASTERS_GROUP) {
        return Decision::Allow;
    }
    let mut reason = String::new();
    match mode {
        AuthorizationMode::AlwaysAllow => return Decision::Allow,
        AuthorizationMode::Rbac => {}
        AuthorizationMode::NodeRbac => {
            if let Some(graph) = graph {
                match node::authorize(graph, user, attributes) {
                    Decision::Allow => return Decision::Allow,
                    Decision::NoOpinion(why) => reason = why,
                }
            }
        }
    }
    if index.allows(user, attributes) {
        Decision::Allow
    } else {
        Decision::NoOpinion(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_the_masters_group() {
        let index = RbacIndex::default();
        let anyone = UserInfo::anonymous();
        let master = UserInfo::authenticated("root".into(), String::new(), vec![MASTERS_GROUP.into()]);
        let a =
            Attributes { verb: "delete".into(), resource_request: true, resource: "pods".into(), ..Default::default() };
        assert!(allows(AuthorizationMode::AlwaysAllow, &index, &anyone, &a));
        assert!(!allows(AuthorizationMode::Rbac, &index, &anyone, &a));
        assert!(allows(AuthorizationMode::Rbac, &index, &master, &a));
        assert_eq!("RBAC".parse(), Ok(AuthorizationMode::Rbac));
        assert!("Node".parse::<AuthorizationMode>().is_err());
        assert_eq!("Node,RBAC".parse(), Ok(AuthorizationMode::NodeRbac));
        // The Node authorizer's NoOpinion goes to RBAC, with its reason.
        let graph = NodeGraph::default();
        let kubelet = UserInfo::authenticated("system:node:n1".into(), String::new(), vec![node::NODES_GROUP.into()]);
        let own_node = Attributes {
            verb: "get".into(),
            resource_request: true,
            resource: "nodes".into(),
            name: "n1".into(),
            ..Default::default()
        };
        assert_eq!(decide(AuthorizationMode::NodeRbac, &index, Some(&graph), &kubelet, &own_node), Decision::Allow);
        assert!(!allows(AuthorizationMode::Rbac, &index, &kubelet, &own_node));
        let secret = Attributes {
            verb: "get".into(),
            resource_request: true,
            resource: "secrets".into(),
            namespace: "ns".into(),
            name: "s".into(),
            ..Default::default()
        };
        assert_eq!(
            decide(AuthorizationMode::NodeRbac, &index, Some(&graph), &kubelet, &secret),
            Decision::NoOpinion("no relationship found between node 'n1' and this object".into())
        );
    }
}
