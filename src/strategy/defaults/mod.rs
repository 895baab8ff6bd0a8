//! Defaulting of every served built-in kind, field for field as
//! kube-apiserver v1.36 defaults it (its `SetDefaults_*` functions and
//! `+default` markers), one file per API group.

mod apps;
mod batch;
pub mod core;
mod others;
mod rbac;

use super::Object;

/// Fills the defaults of an object of (group, kind).
pub fn apply(group: &str, kind: &str, object: &mut Object) {
    match group {
        "" => core::apply(kind, object),
        "apps" => apps::apply(kind, object),
        "batch" => batch::apply(kind, object),
        "rbac.authorization.k8s.io" => rbac::apply(kind, object),
        _ => others::apply(group, kind, object),
    }
}
