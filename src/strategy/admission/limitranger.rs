//! LimitRanger: the namespace's LimitRanges give a new pod's containers
//! their default limits (`default`) and requests (`defaultRequest`) of type
//! Container, recorded in the `kubernetes.io/limit-ranger` annotation; then
//! every container, the pod as a whole (type Pod) and persistent volume
//! claims (type PersistentVolumeClaim) are held to `min`, `max` and
//! `maxLimitRequestRatio`, each LimitRange's violations one 403.
// plugin/pkg/admission/limitranger/admission.go: SupportsAttributes,
// defaultContainerResourceRequirements, mergeContainerResources,
// mergePodResourceRequirements, PodValidateLimitFunc,
// PersistentVolumeClaimValidateLimitFunc, minConstraint, maxConstraint,
// maxRequestConstraint, limitRequestRatioConstraint, podRequests, podLimits

use super::quantity::{add_into, max_into, resource_list, Quantity, ResourceList};
use super::{Attributes, Object, Operation, Rejection};
use serde_json::{json, Value};

pub const LIMIT_RANGER_ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// Pods on create (their containers cannot change afterwards), claims on
/// create and update; never subresources.
pub fn applies(attributes: &Attributes) -> bool {
    attributes.group.is_empty()
        && attributes.subresource.is_none()
        && match attributes.resource {
            "pods" => attributes.operation == Operation::Create,
            "persistentvolumeclaims" => true,
            _ => false,
        }
}

/// The `limits` items of a LimitRange of this type.
fn items<'a>(limit_range: &'a Object, kind: &'a str) -> impl Iterator<Item = &'a Object> + 'a {
    super::list(limit_range, &["spec", "limits"])
        .iter()
        .filter_map(Value::as_object)
        .filter(move |item| item.get("type").and_then(Value::as_str) == Some(kind))
}

/// The mutating part: default requests and limits for pods.
pub fn admit(attributes: &Attributes, object: &mut Object, limit_ranges: &[Object]) {
    if attributes.resource != "pods" {
        return;
    }
    for limit_range in limit_ranges {
        let (mut requests, mut limits) = (serde_json::Map::new(), serde_json::Map::new());
        for item in items(limit_range, "Container") {
            for (target, field) in [(&mut requests, "defaultRequest"), (&mut limits, "default")] {
                if let Some(values) = item.get(field).and_then(Value::as_object) {
                    target.extend(values.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        }
        merge_pod_resources(object, &requests, &limits);
    }
}

fn merge_pod_resources(pod: &mut Object, requests: &Object, limits: &Object) {
    let mut notes = Vec::new();
    for (kind, prefix) in [("containers", "container"), ("initContainers", "init container")] {
        let Some(containers) =
            super::map_mut(pod, &["spec"]).and_then(|s| s.get_mut(kind)).and_then(Value::as_array_mut)
        else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            let name = container.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            let Some(resources) = super::map_mut(container, &["resources"]) else { continue };
            let set_limits = fill(resources, "limits", limits);
            let set_requests = fill(resources, "requests", requests);
            if !set_requests.is_empty() {
                notes.push(format!("{} request for {prefix} {name}", set_requests.join(", ")));
            }
            if !set_limits.is_empty() {
                notes.push(format!("{} limit for {prefix} {name}", set_limits.join(", ")));
            }
        }
    }
    if !notes.is_empty() {
        if let Some(annotations) = super::map_mut(pod, &["metadata", "annotations"]) {
            annotations
                .insert(LIMIT_RANGER_ANNOTATION.into(), json!(format!("LimitRanger plugin set: {}", notes.join("; "))));
        }
    }
}

/// Adds the defaults a container's `resources.<field>` lacks; returns their
/// names, sorted.
fn fill(resources: &mut Object, field: &str, defaults: &Object) -> Vec<String> {
    if defaults.is_empty() {
        return Vec::new();
    }
    let Some(list) = super::map_mut(resources, &[field]) else { return Vec::new() };
    let mut set: Vec<String> = Vec::new();
    for (name, value) in defaults {
        if !list.contains_key(name) {
            list.insert(name.clone(), value.clone());
            set.push(name.clone());
        }
    }
    set.sort();
    set
}

/// The validating part: each LimitRange's min, max and ratio.
pub fn validate(attributes: &Attributes, object: &Object, limit_ranges: &[Object]) -> Result<(), Rejection> {
    for limit_range in limit_ranges {
        let errors = match attributes.resource {
            "pods" => validate_pod(limit_range, object),
            _ => validate_claim(limit_range, object),
        };
        if !errors.is_empty() {
            return Err(Rejection::Forbidden(aggregate(&errors)));
        }
    }
    Ok(())
}

/// `utilerrors.NewAggregate(...).Error()`: one message alone, several
/// (duplicates dropped) in brackets.
pub fn aggregate(messages: &[String]) -> String {
    let mut seen: Vec<&String> = Vec::new();
    for m in messages {
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    match seen.as_slice() {
        [one] => one.to_string(),
        many => format!("[{}]", many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
    }
}

/// The bounds of one LimitRange item, by resource name (sorted: kube walks
/// Go maps, whose order is random).
struct Bounds {
    min: ResourceList,
    max: ResourceList,
    ratio: ResourceList,
}

fn bounds(item: &Object) -> Bounds {
    Bounds {
        min: resource_list(item.get("min")),
        max: resource_list(item.get("max")),
        ratio: resource_list(item.get("maxLimitRequestRatio")),
    }
}

fn check(kind: &str, b: &Bounds, requests: &ResourceList, limits: &ResourceList, errors: &mut Vec<String>) {
    for (name, enforced) in &b.min {
        errors.extend(min_constraint(kind, name, *enforced, requests, limits));
    }
    for (name, enforced) in &b.max {
        errors.extend(max_constraint(kind, name, *enforced, requests, limits));
    }
    for (name, enforced) in &b.ratio {
        errors.extend(ratio_constraint(kind, name, *enforced, requests, limits));
    }
}

fn validate_pod(limit_range: &Object, pod: &Object) -> Vec<String> {
    let mut errors = Vec::new();
    let spec = super::map(pod, &["spec"]).cloned().unwrap_or_default();
    for item in items(limit_range, "Container") {
        let b = bounds(item);
        for kind in ["containers", "initContainers"] {
            for container in super::list(&spec, &[kind]).iter().filter_map(Value::as_object) {
                let requests = resource_list(super::field(container, &["resources", "requests"]));
                let limits = resource_list(super::field(container, &["resources", "limits"]));
                check("Container", &b, &requests, &limits, &mut errors);
            }
        }
    }
    for item in items(limit_range, "Pod") {
        let (requests, limits) = (pod_resources(&spec, "requests"), pod_resources(&spec, "limits"));
        check("Pod", &bounds(item), &requests, &limits, &mut errors);
    }
    errors
}

fn validate_claim(limit_range: &Object, claim: &Object) -> Vec<String> {
    let mut errors = Vec::new();
    let requests = resource_list(super::field(claim, &["spec", "resources", "requests"]));
    for item in items(limit_range, "PersistentVolumeClaim") {
        let b = bounds(item);
        for (name, enforced) in &b.min {
            errors.extend(min_constraint("PersistentVolumeClaim", name, *enforced, &requests, &ResourceList::new()));
        }
        for (name, enforced) in &b.max {
            errors.extend(max_request_constraint("PersistentVolumeClaim", name, *enforced, &requests));
        }
    }
    errors
}

/// A pod's effective requests or limits: its containers' sum (with
/// restartable init containers), at least each init container's.
pub fn pod_resources(spec: &Object, field: &str) -> ResourceList {
    let of = |c: &Object| resource_list(super::field(c, &["resources", field]));
    let mut total = ResourceList::new();
    for container in super::list(spec, &["containers"]).iter().filter_map(Value::as_object) {
        add_into(&mut total, &of(container));
    }
    let (mut restartable, mut init_max) = (ResourceList::new(), ResourceList::new());
    for container in super::list(spec, &["initContainers"]).iter().filter_map(Value::as_object) {
        let own = of(container);
        let effective = if container.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add_into(&mut total, &own);
            add_into(&mut restartable, &own);
            restartable.clone()
        } else {
            let mut sum = own;
            add_into(&mut sum, &restartable);
            sum
        };
        max_into(&mut init_max, &effective);
    }
    max_into(&mut total, &init_max);
    total
}

/// `requestLimitEnforcedValues`: milli units when all three fit, else units.
fn comparable(values: [Option<Quantity>; 3]) -> [i128; 3] {
    const MAX_MILLI_VALUE: i128 = (i64::MAX / 1000) as i128;
    let units = values.map(|q| q.map_or(0, Quantity::value));
    if units.iter().all(|v| *v <= MAX_MILLI_VALUE) {
        values.map(|q| q.map_or(0, Quantity::milli_value))
    } else {
        units
    }
}

fn min_constraint(
    kind: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (req, lim) = (requests.get(name).copied(), limits.get(name).copied());
    let [r, l, e] = comparable([req, lim, Some(enforced)]);
    let e_text = enforced.canonical();
    match (req, lim) {
        (None, _) => Some(format!("minimum {name} usage per {kind} is {e_text}.  No request is specified")),
        (Some(req), _) if r < e => {
            Some(format!("minimum {name} usage per {kind} is {e_text}, but request is {}", req.canonical()))
        }
        (_, Some(lim)) if l < e => {
            Some(format!("minimum {name} usage per {kind} is {e_text}, but limit is {}", lim.canonical()))
        }
        _ => None,
    }
}

fn max_constraint(
    kind: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (req, lim) = (requests.get(name).copied(), limits.get(name).copied());
    let [r, l, e] = comparable([req, lim, Some(enforced)]);
    let e_text = enforced.canonical();
    match (req, lim) {
        (_, None) => Some(format!("maximum {name} usage per {kind} is {e_text}.  No limit is specified")),
        (_, Some(lim)) if l > e => {
            Some(format!("maximum {name} usage per {kind} is {e_text}, but limit is {}", lim.canonical()))
        }
        (Some(req), _) if r > e => {
            Some(format!("maximum {name} usage per {kind} is {e_text}, but request is {}", req.canonical()))
        }
        _ => None,
    }
}

fn max_request_constraint(kind: &str, name: &str, enforced: Quantity, requests: &ResourceList) -> Option<String> {
    let req = requests.get(name).copied();
    let [r, _, e] = comparable([req, None, Some(enforced)]);
    let e_text = enforced.canonical();
    match req {
        None => Some(format!("maximum {name} usage per {kind} is {e_text}.  No request is specified")),
        Some(req) if r > e => {
            Some(format!("maximum {name} usage per {kind} is {e_text}, but request is {}", req.canonical()))
        }
        _ => None,
    }
}

fn ratio_constraint(
    kind: &str,
    name: &str,
    enforced: Quantity,
    requests: &ResourceList,
    limits: &ResourceList,
) -> Option<String> {
    let (req, lim) = (requests.get(name).copied(), limits.get(name).copied());
    let [r, l, _] = comparable([req, lim, Some(enforced)]);
    let e_text = enforced.canonical();
    if req.is_none() || r == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {e_text}, but no request is specified or request is 0"
        ));
    }
    if lim.is_none() || l == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {e_text}, but no limit is specified or limit is 0"
        ));
    }
    let observed = l as f64 / r as f64;
    let (scaled, max) = if enforced.value() <= i128::from(i64::MAX / 1000) {
        (observed * 1000.0, enforced.milli_value() as f64)
    } else {
        (observed, enforced.value() as f64)
    };
    (scaled > max).then(|| {
        format!("{name} max limit to request ratio per {kind} is {e_text}, but provided ratio is {observed:.6}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    fn attributes(resource: &'static str) -> Attributes<'static> {
        Attributes {
            operation: Operation::Create,
            group: "",
            resource,
            subresource: None,
            namespace: "ns",
            name: "x",
            dry_run: false,
        }
    }

    /// tests/fixtures/kube-v1.36/lists/core_v1_limitranges.json: "limits".
    fn fixture_range() -> Object {
        object(json!({"metadata": {"name": "limits"}, "spec": {"limits": [
            {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}}
        ]}}))
    }

    #[test]
    fn containers_get_defaults_and_the_annotation() {
        let mut pod = object(json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "app", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}, {"name": "side"}]
        }}));
        admit(&attributes("pods"), &mut pod, &[fixture_range()]);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1"}})
        );
        assert_eq!(
            pod["spec"]["containers"][1]["resources"],
            json!({"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}})
        );
        assert_eq!(pod["spec"]["initContainers"][0]["resources"]["requests"]["cpu"], "100m");
        assert_eq!(
            pod["metadata"]["annotations"][LIMIT_RANGER_ANNOTATION],
            "LimitRanger plugin set: cpu request for container side; cpu limit for container side; \
             cpu request for init container init; cpu limit for init container init"
        );
    }

    #[test]
    fn min_max_and_ratio_are_enforced_with_kubes_words() {
        let range = object(json!({"spec": {"limits": [
            {"type": "Container", "min": {"cpu": "200m"}, "max": {"memory": "1Gi"}, "maxLimitRequestRatio": {"cpu": "2"}}
        ]}}));
        let pod = object(json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "2Gi"}}}
        ]}}));
        let err = validate(&attributes("pods"), &pod, &[range]).unwrap_err();
        assert_eq!(
            err,
            Rejection::Forbidden(
                "[minimum cpu usage per Container is 200m, but request is 100m, maximum memory usage per Container \
                 is 1Gi, but limit is 2Gi, cpu max limit to request ratio per Container is 2, but provided ratio is \
                 10.000000]"
                    .into()
            )
        );
    }

    #[test]
    fn pod_and_claim_bounds() {
        let range = object(json!({"spec": {"limits": [
            {"type": "Pod", "max": {"cpu": "1"}},
            {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}
        ]}}));
        let pod = object(json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "600m"}, "limits": {"cpu": "600m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "600m"}, "limits": {"cpu": "600m"}}}
        ]}}));
        assert_eq!(
            validate(&attributes("pods"), &pod, std::slice::from_ref(&range)).unwrap_err(),
            Rejection::Forbidden("maximum cpu usage per Pod is 1, but limit is 1200m".into())
        );
        let claim = object(json!({"spec": {"resources": {"requests": {"storage": "20Gi"}}}}));
        assert_eq!(
            validate(&attributes("persistentvolumeclaims"), &claim, std::slice::from_ref(&range)).unwrap_err(),
            Rejection::Forbidden("maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi".into())
        );
        let fine = object(json!({"spec": {"resources": {"requests": {"storage": "5Gi"}}}}));
        assert!(validate(&attributes("persistentvolumeclaims"), &fine, &[range]).is_ok());
    }

    #[test]
    fn init_containers_count_as_a_maximum() {
        let spec = object(json!({
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
            "containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}}}, {"name": "b", "resources": {"requests": {"cpu": "500m"}}}]
        }));
        assert_eq!(pod_resources(&spec, "requests")["cpu"].canonical(), "2");
    }

    #[test]
    fn updates_of_pods_and_subresources_are_not_limited() {
        assert!(!applies(&Attributes { operation: Operation::Update, ..attributes("pods") }));
        assert!(applies(&Attributes { operation: Operation::Update, ..attributes("persistentvolumeclaims") }));
        assert!(!applies(&Attributes { subresource: Some("status"), ..attributes("pods") }));
    }
}
