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
//! Then the statuses kube-apiserver's own controllers give them
//! ([`sync_statuses`]), by server-side apply of `/status` as those
//! controllers apply it: the `kubernetes` ServiceCIDR's `Ready` condition
//! (the default ServiceCIDR controller, pkg/controlplane/controller/
//! defaultservicecidr: set to True when absent or Unknown and the spec's
//! CIDRs are the flag's) and each FlowSchema's `Dangling` condition (the
//! Priority and Fairness config consumer: False/`Found` when the
//! PriorityLevelConfiguration it names exists, True/`NotFound` when not,
//! written only when status, reason or message differ). kube's controllers
//! keep these current as objects change; Shardline computes them at
//! start-up, so a FlowSchema created or a level deleted later has the
//! condition it had then (or none) until the next start.
//!
//! Architecture invariant: what the objects are is pure data here
//! ([`objects`], [`service_cidr_status`], [`flow_schema_status`]);
//! [`ensure`] and [`sync_statuses`] write them through the `Backend` trait
//! and the create and patch handlers, never the log directly.

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
    // Priority and Fairness' bootstrap objects are its config producer's
    // (the field manager kube records for them).
    let mut producer = system_head();
    producer.user_agent = Some(FLOW_CONTROL_PRODUCER.into());
    let registry = backend.registry();
    // All at once: the log commits them in a few batches, not one each.
    let creates = objects(facts).into_iter().map(|(key, object)| {
        let head = if key.group == "flowcontrol.apiserver.k8s.io" { &producer } else { &head };
        let registry = &registry;
        async move {
            let Some(resolved) = handlers::garbage::resolved_for_key(registry, &key.encode()) else { return Ok(None) };
            let Value::Object(object) = object else { return Ok(None) };
            if handlers::read_current(backend, &key, backend.committed_revision()).await?.is_some() {
                return Ok(None);
            }
            match handlers::create::create_object(backend, head, &resolved, object).await {
                Ok(_) => Ok(Some(Ok(()))),
                Err(ApiError::AlreadyExists(_)) => Ok(None),
                Err(
                    e @ (ApiError::Invalid { .. }
                    | ApiError::Conflict { .. }
                    | ApiError::Forbidden { .. }
                    | ApiError::WebhookDenied { .. }),
                ) => Ok(Some(Err(format!("{} {}/{}: {e}", key.resource, key.namespace, key.name)))),
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

/// The field manager of the default ServiceCIDR controller.
pub const SERVICE_CIDR_MANAGER: &str = "kubernetes-service-cidr-controller";
/// The field manager of Priority and Fairness' config producer (the
/// bootstrap configuration's writer).
pub const FLOW_CONTROL_PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";
/// The field manager of Priority and Fairness' config consumer.
pub const FLOW_SCHEMA_MANAGER: &str = "api-priority-and-fairness-config-consumer-v1";

/// The condition of type `type_` in an object's `status.conditions`.
fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"].as_array()?.iter().find(|c| c["type"] == type_)
}

/// The status apply the default ServiceCIDR controller makes for `current`
/// (the stored `kubernetes` ServiceCIDR), if any: none while it is being
/// deleted, when its CIDRs are not the flag's (kube only reports that), or
/// when its `Ready` condition is already True or False.
pub fn service_cidr_status(current: &Value, service_cidr: &str, now: &str) -> Option<Value> {
    if current["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return None;
    }
    if current["spec"]["cidrs"] != json!([service_cidr]) {
        return None;
    }
    if let Some(ready) = condition(current, "Ready") {
        if ready["status"] != "Unknown" {
            return None;
        }
    }
    Some(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
        "metadata": {"name": "kubernetes"},
        "status": {"conditions": [{
            "type": "Ready", "status": "True", "lastTransitionTime": now,
            "message": "Kubernetes default Service CIDR is ready",
        }]},
    }))
}

/// The status apply Priority and Fairness' config consumer makes for a
/// FlowSchema, given whether the PriorityLevelConfiguration it names
/// exists: none when its `Dangling` condition already says so.
pub fn flow_schema_status(current: &Value, level_exists: bool, now: &str) -> Option<Value> {
    let level = current["spec"]["priorityLevelConfiguration"]["name"].as_str().unwrap_or_default();
    let (status, reason, message) = if level_exists {
        (
            "False",
            "Found",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {} and it exists",
                crate::types::validation::go_quote(level)
            ),
        )
    } else {
        (
            "True",
            "NotFound",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {} but there is no such object",
                crate::types::validation::go_quote(level)
            ),
        )
    };
    if let Some(dangling) = condition(current, "Dangling") {
        if dangling["status"] == status && dangling["reason"] == reason && dangling["message"] == message.as_str() {
            return None;
        }
    }
    let name = current["metadata"]["name"].as_str().unwrap_or_default();
    Some(json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": name},
        "status": {"conditions": [{
            "type": "Dangling", "status": status, "lastTransitionTime": now,
            "reason": reason, "message": message,
        }]},
    }))
}

/// Applies `status` to `/status` of the object at `key` as `manager`
/// (server-side apply, forced, as kube's controllers apply their statuses).
async fn apply_status(backend: &impl Backend, key: &ObjectKey, manager: &str, status: &Value) -> Result<(), String> {
    let Some(mut resolved) = handlers::garbage::resolved_for_key(&backend.registry(), &key.encode()) else {
        return Ok(());
    };
    resolved.subresource = Some("status".into());
    let mut head = system_request(http::Method::PATCH, "application/apply-patch+yaml");
    head.params.field_manager = Some(manager.into());
    head.params.force = Some(true);
    let body = status.to_string();
    Box::pin(handlers::patch::serve(backend, &head, &resolved, body.as_bytes()))
        .await
        .map(|_| ())
        .map_err(|e| e.message())
}

/// Gives the objects of [`objects`] the statuses kube-apiserver's own
/// controllers give them (the module's doc); returns what could not be
/// written, each with why.
pub async fn sync_statuses(backend: &impl Backend, facts: &Facts) -> Result<Vec<String>, ApiError> {
    let now = crate::api::object::timestamp(backend.now());
    let revision = backend.committed_revision();
    let read = |key: ObjectKey| async move {
        Ok::<_, ApiError>(match handlers::read_current(backend, &key, revision).await? {
            Some(current) => serde_json::from_slice::<Value>(&current.json).ok(),
            None => None,
        })
    };
    let mut applies = Vec::new();
    let cidr = ObjectKey::new("networking.k8s.io", "servicecidrs", "", "kubernetes");
    if let Some(current) = read(cidr.clone()).await? {
        if let Some(status) = service_cidr_status(&current, &facts.service_cidr, &now) {
            applies.push((cidr, SERVICE_CIDR_MANAGER, status));
        }
    }
    for (key, _) in objects(facts).into_iter().filter(|(k, _)| k.resource == "flowschemas") {
        let Some(current) = read(key.clone()).await? else { continue };
        let level = current["spec"]["priorityLevelConfiguration"]["name"].as_str().unwrap_or_default().to_string();
        let level_key = ObjectKey::new("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", "", &level);
        let exists = read(level_key).await?.is_some();
        if let Some(status) = flow_schema_status(&current, exists, &now) {
            applies.push((key, FLOW_SCHEMA_MANAGER, status));
        }
    }
    let writes = applies.iter().map(|(key, manager, status)| async move {
        apply_status(backend, key, manager, status).await.err().map(|e| format!("{} {}: {e}", key.resource, key.name))
    });
    Ok(futures_util::future::join_all(writes).await.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_service_cidr_is_made_ready_once() {
        let now = "2026-12-03T10:00:00Z";
        let fresh = json!({"metadata": {"name": "kubernetes"}, "spec": {"cidrs": ["10.0.0.0/24"]}});
        let status = service_cidr_status(&fresh, "10.0.0.0/24", now).unwrap();
        assert_eq!(
            status["status"]["conditions"][0],
            json!({"type": "Ready", "status": "True", "lastTransitionTime": now, "message": "Kubernetes default Service CIDR is ready"})
        );
        let mut ready = fresh.clone();
        ready["status"] = status["status"].clone();
        assert_eq!(service_cidr_status(&ready, "10.0.0.0/24", now), None);
        ready["status"]["conditions"][0]["status"] = json!("False");
        assert_eq!(service_cidr_status(&ready, "10.0.0.0/24", now), None, "False is the administrator's to fix");
        ready["status"]["conditions"][0]["status"] = json!("Unknown");
        assert!(service_cidr_status(&ready, "10.0.0.0/24", now).is_some());
        assert_eq!(service_cidr_status(&fresh, "10.1.0.0/24", now), None, "another range is only reported");
        let mut deleting = fresh.clone();
        deleting["metadata"]["deletionTimestamp"] = json!(now);
        assert_eq!(service_cidr_status(&deleting, "10.0.0.0/24", now), None);
    }

    #[test]
    fn a_flow_schema_says_whether_its_level_exists() {
        let now = "2026-12-03T10:00:00Z";
        let schema = json!({"metadata": {"name": "s"}, "spec": {"priorityLevelConfiguration": {"name": "catch-all"}}});
        let found = flow_schema_status(&schema, true, now).unwrap();
        assert_eq!(
            found["status"]["conditions"][0],
            json!({"type": "Dangling", "status": "False", "lastTransitionTime": now, "reason": "Found",
                   "message": "This FlowSchema references the PriorityLevelConfiguration object named \"catch-all\" and it exists"})
        );
        let mut current = schema.clone();
        current["status"] = found["status"].clone();
        assert_eq!(flow_schema_status(&current, true, now), None);
        let missing = flow_schema_status(&current, false, now).unwrap();
        assert_eq!(missing["status"]["conditions"][0]["status"], "True");
        assert_eq!(missing["status"]["conditions"][0]["reason"], "NotFound");
        assert_eq!(
            missing["status"]["conditions"][0]["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"catch-all\" but there is no such object"
        );
    }

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
