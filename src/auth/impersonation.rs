//! User impersonation (kube-apiserver's `Impersonate-*` headers, as
//! `kubectl --as/--as-group/--as-uid` and kube's own proxies send them):
//! which headers ask for which identity, which `impersonate` checks the
//! requester must pass, and the identity the request then runs as.
//!
//! Pure: the pipeline (`api/pipeline.rs`) hands in the header values and
//! asks the authorizer about each [`Attributes`] from [`Impersonation::checks`].
//! Invariants, as kube-apiserver's impersonation filter: every requested
//! name, group, uid and extra value is checked with verb `impersonate`
//! (users, groups, serviceaccounts in API group ""; uids and userextras
//! in `authentication.k8s.io`); groups, uid or extras without a user are
//! refused; a non-anonymous impersonated user is in `system:authenticated`,
//! the anonymous one in `system:unauthenticated`; a service account named
//! without groups gets its fixed groups.

use super::{Attributes, UserInfo, ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP};
use std::collections::BTreeMap;

pub const USER_HEADER: &str = "impersonate-user";
pub const GROUP_HEADER: &str = "impersonate-group";
pub const UID_HEADER: &str = "impersonate-uid";
/// Followed by the (percent-encoded) extra key.
pub const EXTRA_HEADER_PREFIX: &str = "impersonate-extra-";

const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";

/// What a request's `Impersonate-*` headers ask for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Impersonation {
    pub user: String,
    pub groups: Vec<String>,
    pub uid: Option<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Impersonation {
    /// The impersonation asked for by `headers` (lower-case names, each
    /// value once per header line), `Ok(None)` when none is; an error
    /// (kube answers it with 500, as kube-apiserver does) when groups, a
    /// uid or extras come without a user, or an extra key is not valid
    /// percent-encoding.
    pub fn from_headers<'a>(
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Option<Impersonation>, String> {
        let mut user: Option<String> = None;
        let mut asked = Impersonation::default();
        let mut any = false;
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            if name == USER_HEADER {
                user = Some(value.to_string());
                any = true;
            } else if name == GROUP_HEADER {
                asked.groups.push(value.to_string());
                any = true;
            } else if name == UID_HEADER {
                asked.uid = Some(value.to_string());
                any = true;
            } else if let Some(key) = name.strip_prefix(EXTRA_HEADER_PREFIX) {
                let key = percent_decode(key).ok_or_else(|| format!("invalid impersonation extra key {key:?}"))?;
                asked.extra.entry(key.to_ascii_lowercase()).or_default().push(value.to_string());
                any = true;
            }
        }
        if !any {
            return Ok(None);
        }
        match user {
            Some(name) if !name.is_empty() => {
                asked.user = name;
                Ok(Some(asked))
            }
            _ => Err(format!(
                "requested impersonation of groups {:?}, uid {:?} and extra {:?} without impersonating a user",
                asked.groups, asked.uid, asked.extra
            )),
        }
    }

    /// The `impersonate` authorization checks the requester must pass, in
    /// kube's order: the user (or service account), each group, each extra
    /// value, the uid.
    pub fn checks(&self) -> Vec<Attributes> {
        let check = |group: &str, resource: &str, subresource: &str, namespace: &str, name: &str| Attributes {
            verb: "impersonate".into(),
            resource_request: true,
            api_group: group.into(),
            api_version: "v1".into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            path: String::new(),
            field_selector: Vec::new(),
        };
        let mut checks = Vec::new();
        match service_account(&self.user) {
            Some((namespace, name)) => checks.push(check("", "serviceaccounts", "", namespace, name)),
            None => checks.push(check("", "users", "", "", &self.user)),
        }
        for group in &self.groups {
            checks.push(check("", "groups", "", "", group));
        }
        for (key, values) in &self.extra {
            for value in values {
                checks.push(check(AUTHENTICATION_GROUP, "userextras", key, "", value));
            }
        }
        if let Some(uid) = &self.uid {
            checks.push(check(AUTHENTICATION_GROUP, "uids", "", "", uid));
        }
        checks
    }

    /// The identity the request runs as once every check passed.
    pub fn user_info(&self) -> UserInfo {
        let mut groups = self.groups.clone();
        if groups.is_empty() {
            if let Some((namespace, _)) = service_account(&self.user) {
                groups = vec!["system:serviceaccounts".into(), format!("system:serviceaccounts:{namespace}")];
            }
        }
        let implied = if self.user == ANONYMOUS_USER { UNAUTHENTICATED_GROUP } else { AUTHENTICATED_GROUP };
        if !groups.iter().any(|g| g == implied) {
            groups.push(implied.into());
        }
        UserInfo {
            name: self.user.clone(),
            uid: self.uid.clone().unwrap_or_default(),
            groups,
            extra: self.extra.clone(),
        }
    }
}

/// `system:serviceaccount:NAMESPACE:NAME` to its namespace and name.
fn service_account(user: &str) -> Option<(&str, &str)> {
    let (namespace, name) = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?.split_once(':')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains(':')).then_some((namespace, name))
}

/// Percent-decoding of an extra key (kube: `url.PathUnescape`).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_headers_no_impersonation() {
        assert_eq!(Impersonation::from_headers([("accept", "application/json")]), Ok(None));
    }

    #[test]
    fn user_groups_extras_and_uid_are_checked_and_applied() {
        let asked = Impersonation::from_headers([
            ("Impersonate-User", "bob"),
            ("Impersonate-Group", "devs"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Extra-Scopes%2Fview", "a"),
            ("Impersonate-Uid", "1234"),
        ])
        .unwrap()
        .unwrap();
        let checks = asked.checks();
        let summary: Vec<_> = checks
            .iter()
            .map(|c| (c.api_group.as_str(), c.resource.as_str(), c.subresource.as_str(), c.name.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("", "users", "", "bob"),
                ("", "groups", "", "devs"),
                ("", "groups", "", "ops"),
                ("authentication.k8s.io", "userextras", "scopes/view", "a"),
                ("authentication.k8s.io", "uids", "", "1234"),
            ]
        );
        assert!(checks.iter().all(|c| c.verb == "impersonate" && c.resource_request));
        let user = asked.user_info();
        assert_eq!(user.name, "bob");
        assert_eq!(user.uid, "1234");
        assert_eq!(user.groups, ["devs", "ops", AUTHENTICATED_GROUP]);
        assert_eq!(user.extra["scopes/view"], ["a"]);
        let alice = UserInfo::authenticated("alice".into(), String::new(), vec![]);
        assert_eq!(
            checks[0].forbidden_message(&alice),
            r#"User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#
        );
    }

    #[test]
    fn service_accounts_and_anonymous() {
        let asked =
            Impersonation::from_headers([("impersonate-user", "system:serviceaccount:team:builder")]).unwrap().unwrap();
        let check = &asked.checks()[0];
        assert_eq!(
            (check.resource.as_str(), check.namespace.as_str(), check.name.as_str()),
            ("serviceaccounts", "team", "builder")
        );
        assert_eq!(
            asked.user_info().groups,
            ["system:serviceaccounts", "system:serviceaccounts:team", AUTHENTICATED_GROUP]
        );
        let anonymous = Impersonation::from_headers([("impersonate-user", ANONYMOUS_USER)]).unwrap().unwrap();
        assert_eq!(anonymous.user_info().groups, [UNAUTHENTICATED_GROUP]);
    }

    #[test]
    fn groups_without_a_user_and_bad_extra_keys_are_refused() {
        assert!(Impersonation::from_headers([("impersonate-group", "devs")]).is_err());
        assert!(Impersonation::from_headers([("impersonate-user", ""), ("impersonate-uid", "1")]).is_err());
        assert!(Impersonation::from_headers([("impersonate-user", "bob"), ("impersonate-extra-a%zz", "x")]).is_err());
    }
}
