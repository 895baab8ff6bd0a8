//! Who is asking and what they may do: the authentication and authorization
//! stages of the request pipeline, without HTTP and without I/O.
//!
//! The pipeline (driven by `api/mod.rs`): authentication ([`authn`]: bearer
//! tokens from a `--token-auth-file`, client certificates, anonymous) gives a
//! [`UserInfo`]; authorization ([`authz`]: `AlwaysAllow` or `RBAC` over the
//! shard's [`rbac::RbacIndex`]) decides on the request's [`Attributes`];
//! admission and validation stay in the handlers, which receive the user;
//! the write handlers ask [`escalation`] before storing an RBAC object.
//!
//! Architecture invariant: no I/O here. The token file and the client CA are
//! read at start-up by `main`/`runtime` and handed in as text or parsed
//! values; the RBAC index is maintained from the committed entries each
//! shard applies, so a check never waits on another core.

pub mod authn;
pub mod authz;
pub mod bootstrap;
pub mod delegation;
pub mod escalation;
pub mod impersonation;
pub mod node;
pub mod rbac;
pub mod serviceaccount;

/// The group every anonymous request is in.
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
/// The group every authenticated user is in.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";
/// The user name of anonymous requests.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// Members of this group are allowed everything (kube-apiserver's
/// privileged group, checked before RBAC).
pub const MASTERS_GROUP: &str = "system:masters";

/// The result of authentication: kube's `user.Info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    /// kube's `user.Info.GetExtra()`: for a service account token bound to
    /// a pod, `authentication.kubernetes.io/pod-name`, `pod-uid`,
    /// `credential-id`, ... (empty for other credentials).
    pub extra: std::collections::BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The anonymous user, `system:anonymous` in `system:unauthenticated`.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS_USER.into(),
            uid: String::new(),
            groups: vec![UNAUTHENTICATED_GROUP.into()],
            extra: Default::default(),
        }
    }

    /// An authenticated user: `system:authenticated` is added to its groups.
    pub fn authenticated(name: String, uid: String, mut groups: Vec<String>) -> UserInfo {
        if !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.into());
        }
        UserInfo { name, uid, groups, extra: Default::default() }
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// What a request asks to do, as an authorizer sees it (kube's
/// `authorizer.Attributes`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection` for resources; the lower-case HTTP method's verb
    /// for non-resource paths.
    pub verb: String,
    /// A resource request (under /api/v1 or /apis/GROUP/VERSION) or a path.
    pub resource_request: bool,
    pub api_group: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    /// Empty for cluster-scoped requests and lists across namespaces.
    pub namespace: String,
    pub name: String,
    /// The request path (non-resource requests are authorized by it).
    pub path: String,
    /// The `fieldSelector`'s equality requirements (key, value) of a list
    /// or watch (the Node authorizer allows a kubelet's pod watch by them).
    pub field_selector: Vec<(String, String)>,
}

impl Attributes {
    /// kube-apiserver's message for a refused request: `User "alice" cannot
    /// list resource "pods" in API group "" in the namespace "default"`.
    pub fn forbidden_message(&self, user: &UserInfo) -> String {
        if !self.resource_request {
            return format!("User {:?} cannot {} path {:?}", user.name, self.verb, self.path);
        }
        let resource = if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        };
        if self.namespace.is_empty() {
            format!(
                "User {:?} cannot {} resource {:?} in API group {:?} at the cluster scope",
                user.name, self.verb, resource, self.api_group
            )
        } else {
            format!(
                "User {:?} cannot {} resource {:?} in API group {:?} in the namespace {:?}",
                user.name, self.verb, resource, self.api_group, self.namespace
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_messages_are_kube_apiservers() {
        let user = UserInfo::authenticated("alice".into(), String::new(), vec![]);
        let mut a = Attributes {
            verb: "list".into(),
            resource_request: true,
            resource: "pods".into(),
            namespace: "default".into(),
            ..Attributes::default()
        };
        assert_eq!(
            a.forbidden_message(&user),
            r#"User "alice" cannot list resource "pods" in API group "" in the namespace "default""#
        );
        a.namespace.clear();
        a.api_group = "apps".into();
        a.resource = "deployments".into();
        a.subresource = "scale".into();
        assert_eq!(
            a.forbidden_message(&user),
            r#"User "alice" cannot list resource "deployments/scale" in API group "apps" at the cluster scope"#
        );
        let p = Attributes { verb: "get".into(), path: "/healthz".into(), ..Attributes::default() };
        assert_eq!(p.forbidden_message(&user), r#"User "alice" cannot get path "/healthz""#);
        assert_eq!(user.groups, [AUTHENTICATED_GROUP]);
        assert!(UserInfo::anonymous().in_group(UNAUTHENTICATED_GROUP));
    }
}
