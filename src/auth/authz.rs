//! Authorization: whether a user may do what a request asks.
//! `--authorization-mode AlwaysAllow` (the default: every request is
//! allowed, as before authorization existed) or `RBAC` over the shard's
//! [`RbacIndex`]. Members of `system:masters` are allowed everything in
//! every mode, as kube-apiserver's privileged-group authorizer does.

use super::rbac::RbacIndex;
use super::{Attributes, UserInfo, MASTERS_GROUP};

/// `--authorization-mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthorizationMode {
    #[default]
    AlwaysAllow,
    Rbac,
}

impl std::str::FromStr for AuthorizationMode {
    type Err = String;

    fn from_str(text: &str) -> Result<AuthorizationMode, String> {
        match text {
            "AlwaysAllow" => Ok(AuthorizationMode::AlwaysAllow),
            "RBAC" => Ok(AuthorizationMode::Rbac),
            other => Err(format!("unsupported authorization mode {other:?} (use AlwaysAllow or RBAC)")),
        }
    }
}

/// The decision for one request. `index` is the shard's RBAC index (needed
/// only in RBAC mode).
pub fn allows(mode: AuthorizationMode, index: &RbacIndex, user: &UserInfo, attributes: &Attributes) -> bool {
    if user.in_group(MASTERS_GROUP) {
        return true;
    }
    match mode {
        AuthorizationMode::AlwaysAllow => true,
        AuthorizationMode::Rbac => index.allows(user, attributes),
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
    }
}
