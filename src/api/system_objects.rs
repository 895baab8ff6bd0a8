//! The objects kube-apiserver itself keeps in a cluster and controllers read:
//! the `default/kubernetes` Service (the first address of
//! `--service-cluster-ip-range`, port 443 to the server's own port) and its
//! ServiceCIDR `kubernetes`; the PriorityClasses `system-cluster-critical`
//! and `system-node-critical`; the ConfigMap
//! `kube-system/kube-apiserver-legacy-service-account-token-tracking`; and
//! the API Priority and Fairness bootstrap configuration (eight
//! PriorityLevelConfigurations, eleven FlowSchemas).
//!
//! kube-apiserver writes them from its post-start hooks (the "bootstrap
//! controller" in pkg/controlplane/controller/kubernetesservice, the
//! scheduling and flowcontrol storage's PostStartHooks, the
//! legacytokentracking controller); a fresh v1.36 cluster holds exactly
//! these (tests/fixtures/kube-v1.36/lists). The Priority and Fairness
//! objects' names, annotations and specs are data, taken from that fixture
//! into `system_objects_flowcontrol.json` (regenerate: keep `name`,
//! `annotations` and `spec` of each item of the fixture's
//! flowschemas/prioritylevelconfigurations lists).
//!
//! Each is created through the typed layer (defaults, validation,
//! allocation of the Service's cluster IP, managedFields as
//! `kube-apiserver`), only where absent, so an operator's later change is
//! kept across restarts, as kube keeps it where the object does not carry
//! `apf.kubernetes.io/autoupdate-spec: "true"`.
//!
//! Architecture invariant: what the objects are is pure data here
//! ([`objects`]); [`ensure`] writes them through the `Backend` trait and the
//! create handler, never the log directly.

use super::handlers;
use super::status::ApiError;
use super::{Backend, RequestHead};
use crate::auth::UserInfo;
use crate::types::key::ObjectKey;
use serde_json::{json, Value};

/// The user kube-apiserver's own writes are made as (`user.APIServerUser`).
pub const APISERVER_USER: &str = "system:apiserver";
/// The field manager of the objects (kube-apiserver's user agent product).
pub const MANAGER: &str = "kube-apiserver";
/// The ConfigMap that says since when legacy service account tokens are tracked.
pub const LEGACY_TOKEN_TRACKING: &str = "kube-apiserver-legacy-service-account-token-tracking";

const FLOWCONTROL: &str = include_str!("system_objects_flowcontrol.json");

/// What the objects depend on.
#[derive(Clone, Debug)]
pub struct Facts {
    /// `--service-cluster-ip-range`, as kube prints it.
    pub service_cidr: String,
    /// The `kubernetes` Service's cluster IP: the range's first address.
    pub service_ip: String,
    /// The port the server listens on (the Service's targetPort).
    pub port: u16,
    /// Today's date (`2006-01-02`), the tracking ConfigMap's `since`.
    pub today: String,
}

/// Each object as a client would POST it, with the key it is created at.
pub fn objects(facts: &Facts) -> Vec<(ObjectKey, Value)> {
    let mut out = Vec::new();
    out.push((
        ObjectKey::new("networking.k8s.io", "servicecidrs", "", "kubernetes"),
        json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
            "metadata": {"name": "kubernetes"},
            "spec": {"cidrs": [facts.service_cidr]},
        }),
    ));
    out.push((
        ObjectKey::new("", "services", "default", "kubernetes"),
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {
                "name": "kubernetes", "namespace": "default",
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {
                "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": facts.port}],
                "clusterIP": facts.service_ip,
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "ipFamilyPolicy": "SingleStack",
                "internalTrafficPolicy": "Cluster",
            },
        }),
    ));
    for (name, value, description) in [
        (
            "system-node-critical",
            2_000_001_000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        (
            "system-cluster-critical",
            2_000_000_000,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        ),
    ] {
        out.push((
            ObjectKey::new("scheduling.k8s.io", "priorityclasses", "", name),
            json!({
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "description": description,
                "preemptionPolicy": "PreemptLowerPriority",
            }),
        ));
    }
    out.push((
        ObjectKey::new("", "configmaps", "kube-system", LEGACY_TOKEN_TRACKING),
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": LEGACY_TOKEN_TRACKING, "namespace": "kube-system"},
            "data": {"since": facts.today},
        }),
    ));
    let flowcontrol: Value = serde_json::from_str(FLOWCONTROL).unwrap_or(Value::Null);
    for (kind, resource) in
        [("PriorityLevelConfiguration", "prioritylevelconfigurations"), ("FlowSchema", "flowschemas")]
    {
        for item in flowcontrol[kind].as_array().into_iter().flatten() {
            let Some(name) = item["name"].as_str() else { continue };
            out.push((
                ObjectKey::new("flowcontrol.apiserver.k8s.io", resource, "", name),
                json!({
                    "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": kind,
                    "metadata": {"name": name, "annotations": item["annotations"]},
                    "spec": item["spec"],
                }),
            ));
        }
    }
    out
}

/// The request head of kube-apiserver's own creates.
fn system_head() -> RequestHead {
    system_request(http::Method::POST, "application/json")
}

/// The request head of a write kube-apiserver makes as itself
/// (`system:apiserver`, its loopback client's identity).
pub fn system_request(method: http::Method, content_type: &str) -> RequestHead {
    RequestHead {
        method,
        params: Default::default(),
        accept: None,
        content_type: Some(content_type.into()),
        content_length: None,
        query: None,
        user: UserInfo {
            name: APISERVER_USER.into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            extra: Default::default(),
        },
        accept_encoding: None,
        user_agent: Some(format!("{MANAGER}/shardline")),
        warnings: Default::default(),
    }
}

/// What [`ensure`] did.
#[derive(Debug, Default)]
pub struct Ensured {
    pub created: usize,
    /// Objects the typed layer refused (for example a Service an operator
    /// made that holds the address already), each with why; the others are
    /// still created, and the server serves without them, as kube-apiserver
    /// logs such a failure and goes on.
    pub refused: Vec<String>,
}

/// Creates every object of [`objects`] that is absent (an object present,
/// whatever it holds now, is left alone). An object the registry does not
/// serve is skipped.
pub async fn ensure(backend: &impl Backend, facts: &Facts) -> Result<Ensured, ApiError> {
    let head = system_head();
    let registry = backend.registry();
    // All at once: the log commits them in a few batches, not one each.
    let creates = objects(facts).into_iter().map(|(key, object)| {
        let (head, registry) = (&head, &registry);
        async move {
            let Some(resolved) = handlers::garbage::resolved_for_key(registry, &key.encode()) else { return Ok(None) };
            let Value::Object(object) = object else { return Ok(None) };
            if handlers::read_current(backend, &key, backend.committed_revision()).await?.is_some() {
                return Ok(None);
            }
            match handlers::create::create_object(backend, head, &resolved, object).await {
                Ok(_) => Ok(Some(Ok(()))),
                Err(ApiError::AlreadyExists(_)) => Ok(None),
                Err(e @ (ApiError::Invalid { .. } | ApiError::Conflict { .. } | ApiError::Forbidden { .. })) => {
                    Ok(Some(Err(format!("{} {}/{}: {e}", key.resource, key.namespace, key.name))))
                }
                Err(e) => Err(e),
            }
        }
    });
    let mut ensured = Ensured::default();
    for outcome in futures_util::future::join_all(creates).await {
        match outcome? {
            Some(Ok(())) => ensured.created += 1,
            Some(Err(refused)) => ensured.refused.push(refused),
            None => {}
        }
    }
    Ok(ensured)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            service_cidr: "10.0.0.0/24".into(),
            service_ip: "10.0.0.1".into(),
            port: 6443,
            today: "2026-11-28".into(),
        }
    }

    #[test]
    fn the_objects_of_a_fresh_v1_36_cluster() {
        let objects = objects(&facts());
        let names = |resource: &str| -> Vec<String> {
            let mut names: Vec<String> =
                objects.iter().filter(|(k, _)| k.resource == resource).map(|(k, _)| k.name.clone()).collect();
            names.sort();
            names
        };
        // The names a real v1.36 cluster holds (its fixture lists).
        for (resource, list) in [
            ("flowschemas", "flowcontrol.apiserver.k8s.io_v1_flowschemas"),
            ("prioritylevelconfigurations", "flowcontrol.apiserver.k8s.io_v1_prioritylevelconfigurations"),
        ] {
            let text = std::fs::read_to_string(format!(
                "{}/tests/fixtures/kube-v1.36/lists/{list}.json",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            let fixture: Value = serde_json::from_str(&text).unwrap();
            let mut want: Vec<String> = fixture["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
                .collect();
            want.sort();
            assert_eq!(names(resource), want, "{resource}");
            for item in fixture["items"].as_array().unwrap() {
                let name = item["metadata"]["name"].as_str().unwrap();
                let ours = &objects.iter().find(|(k, _)| k.resource == resource && k.name == name).unwrap().1;
                assert_eq!(ours["spec"], item["spec"], "{resource} {name}");
                assert_eq!(ours["metadata"]["annotations"], item["metadata"]["annotations"], "{resource} {name}");
            }
        }
        assert_eq!(names("priorityclasses"), ["system-cluster-critical", "system-node-critical"]);
        let service = &objects.iter().find(|(k, _)| k.resource == "services").unwrap();
        assert_eq!((service.0.namespace.as_str(), service.0.name.as_str()), ("default", "kubernetes"));
        assert_eq!(service.1["spec"]["clusterIP"], "10.0.0.1");
        assert_eq!(service.1["spec"]["ports"][0]["targetPort"], 6443);
        let tracking = &objects.iter().find(|(k, _)| k.name == LEGACY_TOKEN_TRACKING).unwrap();
        assert_eq!(tracking.0.namespace, "kube-system");
        assert_eq!(tracking.1["data"]["since"], "2026-11-28");
    }
}
