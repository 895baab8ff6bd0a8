//! ResourceQuota: a new object's usage (pod compute requests and limits,
//! object counts, claim storage) is added to the `status.used` of every
//! ResourceQuota of its namespace that tracks it; past `status.hard` the
//! create is 403 `exceeded quota: ...`. The quotas with their new usage are
//! returned for the API layer to write before the object, as kube-apiserver
//! writes them. `status.hard` and the starting `status.used` are the quota
//! controller's (kube-controller-manager's): a quota whose status it has not
//! filled yet constrains nothing, and one that lacks usage for a tracked
//! resource is 403 `status unknown for quota`, as in kube-apiserver.
// staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go:
// checkRequest, hasUsageStats, prettyPrint, prettyPrintResourceNames
// pkg/quota/v1/evaluator/core/pods.go: podEvaluator Usage, Constraints,
// podComputeUsageHelper, podMatchesScopeFunc, QuotaV1Pod
// pkg/quota/v1/evaluator/core/services.go, persistent_volume_claims.go,
// staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go: object counts

use super::limitranger::pod_resources;
use super::quantity::{add_into, resource_list, Quantity, ResourceList};
use super::{Attributes, Object, Operation, Rejection};
use serde_json::{json, Map, Value};

/// Creates of namespaced objects, and updates of services and claims (a
/// type change, a claim's growth) as kube's evaluators handle them; deletes
/// are the quota controller's to recount (docs/admission.md).
pub fn applies(attributes: &Attributes) -> bool {
    let counted_update =
        attributes.group.is_empty() && matches!(attributes.resource, "services" | "persistentvolumeclaims");
    !attributes.namespace.is_empty()
        && attributes.subresource.is_none()
        && (attributes.operation == Operation::Create || counted_update)
}

/// The compute resources a pod quota makes every container state.
const VALIDATION_SET: [&str; 6] = ["requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "cpu", "memory"];

fn one() -> Quantity {
    Quantity::from_units(1)
}

/// What creating `object` adds to a quota's usage.
pub fn usage(attributes: &Attributes, object: &Object) -> ResourceList {
    let mut usage = ResourceList::new();
    let core = attributes.group.is_empty();
    let count_name = if core {
        format!("count/{}", attributes.resource)
    } else {
        format!("count/{}.{}", attributes.resource, attributes.group)
    };
    usage.insert(count_name, one());
    match (core, attributes.resource) {
        (true, "pods") => {
            if terminal(object) {
                return ResourceList::new();
            }
            let spec = super::map(object, &["spec"]).cloned().unwrap_or_default();
            let mut requests = pod_resources(&spec, "requests");
            let mut limits = pod_resources(&spec, "limits");
            // resourcehelper.PodRequests/PodLimits add the pod's overhead.
            let overhead = resource_list(spec.get("overhead"));
            add_into(&mut requests, &overhead);
            add_into(&mut limits, &overhead);
            usage.extend(compute_usage(&requests, &limits));
        }
        (true, "services") => {
            usage.insert("services".into(), one());
            let ports = super::list(object, &["spec", "ports"]).len() as i64;
            let allocate = super::field(object, &["spec", "allocateLoadBalancerNodePorts"]).and_then(Value::as_bool);
            match super::text(object, &["spec", "type"]) {
                "NodePort" => {
                    usage.insert("services.nodeports".into(), Quantity::from_units(ports));
                }
                "LoadBalancer" => {
                    usage.insert("services.loadbalancers".into(), one());
                    let node_ports = if allocate == Some(false) { 0 } else { ports };
                    usage.insert("services.nodeports".into(), Quantity::from_units(node_ports));
                }
                _ => {}
            }
        }
        (true, "persistentvolumeclaims") => {
            usage.insert("persistentvolumeclaims".into(), one());
            let class = match super::text(object, &["spec", "storageClassName"]) {
                "" => super::text(object, &["metadata", "annotations", "volume.beta.kubernetes.io/storage-class"]),
                name => name,
            };
            if !class.is_empty() {
                usage.insert(format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims"), one());
            }
            if let Some(storage) =
                resource_list(super::field(object, &["spec", "resources", "requests"])).get("storage")
            {
                usage.insert("requests.storage".into(), *storage);
                if !class.is_empty() {
                    usage.insert(format!("{class}.storageclass.storage.k8s.io/requests.storage"), *storage);
                }
            }
        }
        (true, legacy @ ("configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas")) => {
            usage.insert(legacy.to_string(), one());
        }
        _ => {}
    }
    usage.retain(|_, q| q.nanos != 0);
    usage
}

/// `QuotaV1Pod`: terminal pods use nothing.
fn terminal(pod: &Object) -> bool {
    matches!(super::text(pod, &["status", "phase"]), "Succeeded" | "Failed")
}

/// `podComputeUsageHelper`: the quota names of requests and limits.
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut result = ResourceList::new();
    result.insert("pods".into(), one());
    for name in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(name) {
            result.insert(name.to_string(), *q);
            result.insert(format!("requests.{name}"), *q);
        }
        if let Some(q) = limits.get(name) {
            result.insert(format!("limits.{name}"), *q);
        }
    }
    for (name, q) in requests {
        if name.starts_with("hugepages-") {
            result.insert(name.clone(), *q);
            result.insert(format!("requests.{name}"), *q);
        } else if is_extended(name) {
            result.insert(format!("requests.{name}"), *q);
        }
    }
    result
}

/// `helper.IsExtendedResourceName`: a domain-qualified name outside
/// kubernetes.io that is not itself a quota name.
fn is_extended(name: &str) -> bool {
    let Some((domain, _)) = name.split_once('/') else { return false };
    !(domain == "kubernetes.io" || domain.ends_with(".kubernetes.io") || name.starts_with("requests."))
}

/// Whether a quota's scopes (and scope selector) all match the object.
// pkg/quota/v1/evaluator/core/pods.go: podMatchesScopeFunc; others match no scope.
fn matches_scopes(quota: &Object, attributes: &Attributes, object: &Object) -> bool {
    let is_pod = attributes.group.is_empty() && attributes.resource == "pods";
    let mut selectors: Vec<(String, String, Vec<String>)> = super::list(quota, &["spec", "scopes"])
        .iter()
        .filter_map(Value::as_str)
        .map(|s| (s.to_string(), "Exists".to_string(), Vec::new()))
        .collect();
    for expression in
        super::list(quota, &["spec", "scopeSelector", "matchExpressions"]).iter().filter_map(Value::as_object)
    {
        let values = expression.get("values").and_then(Value::as_array).into_iter().flatten();
        selectors.push((
            super::text(expression, &["scopeName"]).to_string(),
            super::text(expression, &["operator"]).to_string(),
            values.filter_map(Value::as_str).map(str::to_string).collect(),
        ));
    }
    selectors.iter().all(|(scope, operator, values)| is_pod && pod_matches_scope(object, scope, operator, values))
}

fn pod_matches_scope(pod: &Object, scope: &str, operator: &str, values: &[String]) -> bool {
    let deadline = super::field(pod, &["spec", "activeDeadlineSeconds"]).and_then(Value::as_i64);
    let terminating = deadline.is_some_and(|d| d >= 0);
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => best_effort(pod),
        "NotBestEffort" => !best_effort(pod),
        "PriorityClass" => {
            let class = super::text(pod, &["spec", "priorityClassName"]);
            match operator {
                "In" => values.iter().any(|v| v == class),
                "NotIn" => !values.iter().any(|v| v == class),
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                _ => false,
            }
        }
        _ => false,
    }
}

/// QoS BestEffort: no container requests or limits cpu or memory.
fn best_effort(pod: &Object) -> bool {
    let Some(spec) = super::map(pod, &["spec"]) else { return true };
    super::containers(spec).all(|(_, c)| {
        ["requests", "limits"].iter().all(|field| {
            let list = resource_list(super::field(c, &["resources", field]));
            !list.contains_key("cpu") && !list.contains_key("memory")
        })
    })
}

/// The resources of `hard` this object's evaluator knows.
fn matching_resources(attributes: &Attributes, hard: &ResourceList) -> Vec<String> {
    hard.keys().filter(|name| known(attributes, name)).cloned().collect()
}

fn known(attributes: &Attributes, name: &str) -> bool {
    let core = attributes.group.is_empty();
    let count = if core {
        format!("count/{}", attributes.resource)
    } else {
        format!("count/{}.{}", attributes.resource, attributes.group)
    };
    if name == count {
        return true;
    }
    if !core {
        return false;
    }
    match attributes.resource {
        "pods" => {
            VALIDATION_SET.contains(&name)
                || matches!(
                    name,
                    "pods" | "ephemeral-storage" | "requests.ephemeral-storage" | "limits.ephemeral-storage"
                )
                || name.starts_with("hugepages-")
                || name.starts_with("requests.")
        }
        "services" => matches!(name, "services" | "services.loadbalancers" | "services.nodeports"),
        "persistentvolumeclaims" => {
            matches!(name, "persistentvolumeclaims" | "requests.storage")
                || name.contains(".storageclass.storage.k8s.io/")
        }
        resource @ ("configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas") => name == resource,
        _ => false,
    }
}

/// `Constraints` of the pod evaluator: a tracked cpu or memory must be
/// stated by every container.
fn pod_constraints(required: &[String], pod: &Object) -> Result<(), String> {
    let required: Vec<&String> = required.iter().filter(|r| VALIDATION_SET.contains(&r.as_str())).collect();
    if required.is_empty() {
        return Ok(());
    }
    let mut missing: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    let spec = super::map(pod, &["spec"]).cloned().unwrap_or_default();
    for kind in ["containers", "initContainers"] {
        for container in super::list(&spec, &[kind]).iter().filter_map(Value::as_object) {
            let requests = resource_list(super::field(container, &["resources", "requests"]));
            let limits = resource_list(super::field(container, &["resources", "limits"]));
            let has = compute_usage(&requests, &limits);
            for name in &required {
                if !has.contains_key(name.as_str()) {
                    let container_name = container.get("name").and_then(Value::as_str).unwrap_or("");
                    missing.entry(name.to_string()).or_default().insert(container_name.to_string());
                }
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let segments: Vec<String> = missing
        .iter()
        .map(|(resource, containers)| {
            format!("{resource} for: {}", containers.iter().cloned().collect::<Vec<_>>().join(","))
        })
        .collect();
    Err(format!("must specify {}", segments.join("; ")))
}

fn pretty(list: &ResourceList, names: &[String]) -> String {
    names.iter().filter_map(|n| Some(format!("{n}={}", list.get(n)?.canonical()))).collect::<Vec<_>>().join(",")
}

/// Checks the create against every quota; returns the quotas whose
/// `status.used` changes, with it changed.
pub fn admit(
    attributes: &Attributes,
    object: &Object,
    old: Option<&Object>,
    quotas: &[Object],
) -> Result<Vec<Object>, Rejection> {
    let is_pod = attributes.group.is_empty() && attributes.resource == "pods";
    let mut interesting = Vec::new();
    for quota in quotas {
        let name = super::text(quota, &["metadata", "name"]);
        let hard = resource_list(super::field(quota, &["status", "hard"]));
        let restricted = matching_resources(attributes, &hard);
        if restricted.is_empty() || !matches_scopes(quota, attributes, object) {
            continue;
        }
        if is_pod {
            pod_constraints(&restricted, object)
                .map_err(|e| Rejection::Forbidden(format!("failed quota: {name}: {e}")))?;
        }
        let used = resource_list(super::field(quota, &["status", "used"]));
        if restricted.iter().any(|r| !used.contains_key(r.as_str())) {
            let names: Vec<&str> = restricted.iter().map(String::as_str).collect();
            return Err(Rejection::Forbidden(format!(
                "status unknown for quota: {name}, resources: {}",
                names.join(",")
            )));
        }
        interesting.push((quota, hard, used));
    }
    let mut delta = usage(attributes, object);
    if let Some((name, _)) = delta.iter().find(|(_, q)| q.nanos < 0) {
        return Err(Rejection::Forbidden(format!("quota usage is negative for resource(s): {name}")));
    }
    if let (Operation::Update, Some(old)) = (attributes.operation, old) {
        // quota.SubtractWithNonNegativeResult: only growth is charged.
        let before = usage(attributes, old);
        for (name, q) in delta.iter_mut() {
            if let Some(previous) = before.get(name) {
                q.nanos = (q.nanos - previous.nanos).max(0);
            }
        }
        delta.retain(|_, q| q.nanos != 0);
    }
    if delta.is_empty() {
        return Ok(Vec::new());
    }
    let mut updates = Vec::new();
    for (quota, hard, used) in interesting {
        let requested: ResourceList =
            delta.iter().filter(|(n, _)| hard.contains_key(*n)).map(|(n, q)| (n.clone(), *q)).collect();
        if requested.is_empty() {
            continue;
        }
        let mut new_used = used.clone();
        add_into(&mut new_used, &requested);
        let exceeded: Vec<String> = requested
            .keys()
            .filter(|n| match (new_used.get(*n), hard.get(*n)) {
                (Some(u), Some(h)) => u.nanos > h.nanos,
                _ => false,
            })
            .cloned()
            .collect();
        if !exceeded.is_empty() {
            return Err(Rejection::Forbidden(format!(
                "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                super::text(quota, &["metadata", "name"]),
                pretty(&requested, &exceeded),
                pretty(&used, &exceeded),
                pretty(&hard, &exceeded)
            )));
        }
        let mut updated = quota.clone();
        if let Some(status) = super::map_mut(&mut updated, &["status"]) {
            let used_json: Map<String, Value> =
                new_used.iter().map(|(n, q)| (n.clone(), json!(q.canonical()))).collect();
            status.insert("used".into(), Value::Object(used_json));
        }
        updates.push(updated);
    }
    Ok(updates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    fn attributes(group: &'static str, resource: &'static str) -> Attributes<'static> {
        Attributes {
            operation: Operation::Create,
            group,
            resource,
            subresource: None,
            namespace: "fixture",
            name: "x",
            dry_run: false,
        }
    }

    /// tests/fixtures/kube-v1.36/lists/core_v1_resourcequotas.json's quota,
    /// as the quota controller fills its status.
    fn quota(used: Value) -> Object {
        object(json!({
            "metadata": {"name": "quota", "namespace": "fixture"},
            "spec": {"hard": {"pods": "50", "requests.cpu": "10", "requests.memory": "20Gi"}},
            "status": {"hard": {"pods": "50", "requests.cpu": "10", "requests.memory": "20Gi"}, "used": used}
        }))
    }

    fn pod(cpu: &str, memory: &str) -> Object {
        object(
            json!({"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}}),
        )
    }

    #[test]
    fn a_pod_adds_its_requests_to_the_quota() {
        let q = quota(json!({"pods": "1", "requests.cpu": "250m", "requests.memory": "64Mi"}));
        let updates = admit(&attributes("", "pods"), &pod("500m", "64Mi"), None, &[q]).unwrap();
        assert_eq!(updates.len(), 1);
        assert_eq!(
            updates[0]["status"]["used"],
            json!({"pods": "2", "requests.cpu": "750m", "requests.memory": "128Mi"})
        );
    }

    #[test]
    fn over_quota_is_refused_with_kubes_message() {
        let q = quota(json!({"pods": "50", "requests.cpu": "9500m", "requests.memory": "1Gi"}));
        assert_eq!(
            admit(&attributes("", "pods"), &pod("1", "64Mi"), None, &[q]).unwrap_err(),
            Rejection::Forbidden(
                "exceeded quota: quota, requested: pods=1,requests.cpu=1, used: pods=50,requests.cpu=9500m, \
                 limited: pods=50,requests.cpu=10"
                    .into()
            )
        );
    }

    #[test]
    fn tracked_compute_must_be_stated_and_status_known() {
        let q = quota(json!({"pods": "0", "requests.cpu": "0", "requests.memory": "0"}));
        let bare = object(json!({"spec": {"containers": [{"name": "app"}, {"name": "side"}]}}));
        assert_eq!(
            admit(&attributes("", "pods"), &bare, None, std::slice::from_ref(&q)).unwrap_err(),
            Rejection::Forbidden(
                "failed quota: quota: must specify requests.cpu for: app,side; requests.memory for: app,side".into()
            )
        );
        let unsynced = quota(json!({"pods": "0"}));
        assert_eq!(
            admit(&attributes("", "pods"), &pod("1", "1Gi"), None, &[unsynced]).unwrap_err(),
            Rejection::Forbidden(
                "status unknown for quota: quota, resources: pods,requests.cpu,requests.memory".into()
            )
        );
        let never_synced = object(json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "0"}}}));
        assert_eq!(admit(&attributes("", "pods"), &bare, None, &[never_synced]), Ok(Vec::new()));
    }

    #[test]
    fn object_counts_and_claims() {
        let q = object(json!({"metadata": {"name": "counts"}, "status": {
            "hard": {"configmaps": "1", "count/deployments.apps": "5", "requests.storage": "10Gi", "standard.storageclass.storage.k8s.io/requests.storage": "4Gi"},
            "used": {"configmaps": "1", "count/deployments.apps": "0", "requests.storage": "0", "standard.storageclass.storage.k8s.io/requests.storage": "0"}
        }}));
        assert!(admit(&attributes("", "configmaps"), &Object::new(), None, std::slice::from_ref(&q)).unwrap_err().eq(
            &Rejection::Forbidden(
                "exceeded quota: counts, requested: configmaps=1, used: configmaps=1, limited: configmaps=1".into()
            )
        ));
        let updates =
            admit(&attributes("apps", "deployments"), &Object::new(), None, std::slice::from_ref(&q)).unwrap();
        assert_eq!(updates[0]["status"]["used"]["count/deployments.apps"], "1");
        let claim =
            object(json!({"spec": {"storageClassName": "standard", "resources": {"requests": {"storage": "5Gi"}}}}));
        assert_eq!(
            admit(&attributes("", "persistentvolumeclaims"), &claim, None, &[q]).unwrap_err(),
            Rejection::Forbidden(
                "exceeded quota: counts, requested: standard.storageclass.storage.k8s.io/requests.storage=5Gi, used: \
                 standard.storageclass.storage.k8s.io/requests.storage=0, limited: \
                 standard.storageclass.storage.k8s.io/requests.storage=4Gi"
                    .into()
            )
        );
    }

    #[test]
    fn scopes_select_pods() {
        let mut q = quota(json!({"pods": "50", "requests.cpu": "0", "requests.memory": "0"}));
        q.insert("spec".into(), json!({"scopes": ["BestEffort"]}));
        let updates = admit(&attributes("", "pods"), &pod("1", "1Gi"), None, std::slice::from_ref(&q)).unwrap();
        assert!(updates.is_empty(), "a pod with requests is not BestEffort");
        let best_effort = object(json!({"spec": {"containers": [{"name": "c"}]}}));
        assert!(pod_matches_scope(&best_effort, "BestEffort", "Exists", &[]));
        let gold = object(json!({"spec": {"priorityClassName": "gold"}}));
        assert!(pod_matches_scope(&gold, "PriorityClass", "In", &["gold".into()]));
        assert!(!pod_matches_scope(&gold, "PriorityClass", "NotIn", &["gold".into()]));
        assert!(!matches_scopes(&q, &attributes("", "configmaps"), &Object::new()), "other kinds match no scope");
    }

    #[test]
    fn updates_charge_only_growth() {
        let q = object(json!({"metadata": {"name": "storage"}, "status": {
            "hard": {"requests.storage": "10Gi", "services.nodeports": "1", "services": "5"},
            "used": {"requests.storage": "8Gi", "services.nodeports": "0", "services": "1"}
        }}));
        let update = |resource| Attributes { operation: Operation::Update, ..attributes("", resource) };
        let claim = |size: &str| object(json!({"spec": {"resources": {"requests": {"storage": size}}}}));
        let grown =
            admit(&update("persistentvolumeclaims"), &claim("3Gi"), Some(&claim("1Gi")), std::slice::from_ref(&q))
                .unwrap();
        assert_eq!(grown[0]["status"]["used"]["requests.storage"], "10Gi");
        assert!(admit(&update("persistentvolumeclaims"), &claim("5Gi"), Some(&claim("1Gi")), std::slice::from_ref(&q))
            .is_err());
        let same =
            admit(&update("persistentvolumeclaims"), &claim("1Gi"), Some(&claim("2Gi")), std::slice::from_ref(&q))
                .unwrap();
        assert!(same.is_empty(), "shrinking charges nothing");
        let service = |kind: &str| object(json!({"spec": {"type": kind, "ports": [{"port": 80}, {"port": 443}]}}));
        assert_eq!(
            admit(&update("services"), &service("NodePort"), Some(&service("ClusterIP")), &[q]).unwrap_err(),
            Rejection::Forbidden(
                "exceeded quota: storage, requested: services.nodeports=2, used: services.nodeports=0, limited: \
                 services.nodeports=1"
                    .into()
            )
        );
        assert!(!applies(&update("configmaps")), "other updates are not counted");
    }

    #[test]
    fn terminal_pods_use_nothing() {
        let done = object(json!({"spec": {"containers": []}, "status": {"phase": "Succeeded"}}));
        assert!(usage(&attributes("", "pods"), &done).is_empty());
    }
}
