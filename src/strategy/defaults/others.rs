//! Defaults of the kinds of the smaller groups (coordination, networking,
//! policy, storage, scheduling, discovery, events, autoscaling, ...), one
//! arm per group so that a newly served kind only adds its function.
//!
//! coordination.k8s.io/v1 has no defaulting functions
//! (`pkg/apis/coordination/v1` registers none), so a Lease is stored as sent.

use crate::strategy::Object;

pub fn apply(group: &str, kind: &str, object: &mut Object) {
    match (group, kind) {
        // pkg/apis/coordination/v1: no SetDefaults_Lease.
        ("coordination.k8s.io", "Lease") => {}
        _ => {
            let _ = object;
        }
    }
}
