//! Priority: a new pod's `priority` (and `preemptionPolicy`) come from its
//! `priorityClassName`, or from the global default PriorityClass when it
//! names none (priority 0 and `PreemptLowerPriority` when there is none); a
//! class that does not exist, or a priority or policy that differs from the
//! class's, is 403. On update the stored values are kept when the new
//! version drops them. A PriorityClass may be the global default only if no
//! other is.
// plugin/pkg/admission/priority/admission.go: admitPod, establishPriority,
// getDefaultPriorityClass (lowest value among several defaults),
// resolvePriorityClass, validatePriorityClass

use super::{Attributes, Object, Operation, Rejection};
use serde_json::{json, Value};

/// The classes kube-apiserver creates at start-up (its scheduling
/// post-start hook), used when no stored class of that name is read.
// pkg/apis/scheduling/types.go: SystemNodeCritical, SystemClusterCritical, SystemCriticalPriority
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i64); 2] =
    [("system-node-critical", 2_000_001_000), ("system-cluster-critical", 2_000_000_000)];
/// `scheduling.DefaultPriorityWhenNoDefaultClassExists`.
pub const DEFAULT_PRIORITY: i64 = 0;
pub const PREEMPT_LOWER_PRIORITY: &str = "PreemptLowerPriority";

/// A PriorityClass as the plugin uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Class {
    name: String,
    value: i64,
    preemption_policy: Option<String>,
}

fn class_of(object: &Object) -> Option<Class> {
    Some(Class {
        name: super::text(object, &["metadata", "name"]).to_string(),
        value: object.get("value")?.as_i64()?,
        preemption_policy: object.get("preemptionPolicy").and_then(Value::as_str).map(str::to_string),
    })
}

fn find(classes: &[Object], name: &str) -> Option<Class> {
    let stored = classes.iter().filter_map(class_of).find(|c| c.name == name);
    stored.or_else(|| {
        SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name).map(|(n, v)| Class {
            name: n.to_string(),
            value: *v,
            preemption_policy: Some(PREEMPT_LOWER_PRIORITY.into()),
        })
    })
}

/// The global default class: the lowest value if several claim it.
fn global_default(classes: &[Object]) -> Option<Class> {
    classes
        .iter()
        .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
        .filter_map(class_of)
        .min_by_key(|c| c.value)
}

pub fn admit_pod(
    attributes: &Attributes,
    pod: &mut Object,
    old: Option<&Object>,
    classes: &[Object],
) -> Result<(), Rejection> {
    let Some(spec) = super::map_mut(pod, &["spec"]) else { return Ok(()) };
    match (attributes.operation, old) {
        (Operation::Update, Some(old)) => {
            for field in ["priority", "preemptionPolicy"] {
                if spec.get(field).is_none() {
                    if let Some(kept) = super::field(old, &["spec", field]) {
                        spec.insert(field.into(), kept.clone());
                    }
                }
            }
            Ok(())
        }
        (Operation::Update, None) => Ok(()),
        (Operation::Create, _) => admit_new_pod(spec, classes),
    }
}

fn admit_new_pod(spec: &mut Object, classes: &[Object]) -> Result<(), Rejection> {
    let requested = spec.get("priorityClassName").and_then(Value::as_str).unwrap_or("").to_string();
    let class = if requested.is_empty() {
        global_default(classes).unwrap_or(Class {
            name: String::new(),
            value: DEFAULT_PRIORITY,
            preemption_policy: Some(PREEMPT_LOWER_PRIORITY.into()),
        })
    } else {
        find(classes, &requested)
            .ok_or_else(|| Rejection::Forbidden(format!("no PriorityClass with name {requested} was found")))?
    };
    if !class.name.is_empty() {
        spec.insert("priorityClassName".into(), json!(class.name));
    }
    if let Some(given) = spec.get("priority") {
        if given.as_i64() != Some(class.value) {
            return Err(Rejection::Forbidden(format!(
                "the integer value of priority ({given}) must not be provided in pod spec; priority admission \
                 controller computed {} from the given PriorityClass name",
                class.value
            )));
        }
    }
    spec.insert("priority".into(), json!(class.value));
    if let Some(policy) = class.preemption_policy {
        if let Some(given) = spec.get("preemptionPolicy") {
            if given.as_str() != Some(policy.as_str()) {
                let given = given.as_str().map(str::to_string).unwrap_or_else(|| given.to_string());
                return Err(Rejection::Forbidden(format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority \
                     admission controller computed {policy} from the given PriorityClass name"
                )));
            }
        }
        spec.insert("preemptionPolicy".into(), json!(policy));
    }
    Ok(())
}

/// A PriorityClass being created or updated may be the global default only
/// if no other class is.
pub fn validate_class(attributes: &Attributes, class: &Object, classes: &[Object]) -> Result<(), Rejection> {
    if class.get("globalDefault").and_then(Value::as_bool) != Some(true) {
        return Ok(());
    }
    let Some(existing) = global_default(classes) else { return Ok(()) };
    let conflict = match attributes.operation {
        Operation::Create => true,
        Operation::Update => existing.name != attributes.name,
    };
    if conflict {
        return Err(Rejection::Forbidden(format!(
            "PriorityClass {} is already marked as default. Only one default can exist",
            existing.name
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attributes(operation: Operation) -> Attributes<'static> {
        Attributes {
            operation,
            group: "",
            resource: "pods",
            subresource: None,
            namespace: "ns",
            name: "p",
            dry_run: false,
        }
    }

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    fn class(name: &str, value: i64, default: bool, policy: &str) -> Object {
        object(
            json!({"metadata": {"name": name}, "value": value, "globalDefault": default, "preemptionPolicy": policy}),
        )
    }

    fn admit(spec: Value, classes: &[Object]) -> Result<Object, Rejection> {
        let mut pod = object(json!({ "spec": spec }));
        admit_pod(&attributes(Operation::Create), &mut pod, None, classes)?;
        Ok(pod)
    }

    #[test]
    fn a_pod_without_a_class_gets_zero_and_preempt_lower_priority() {
        // tests/fixtures/kube-v1.36/lists/core_v1_pods.json: web-0 (priority 0 given, no class).
        let pod = admit(json!({"containers": [], "priority": 0}), &[]).unwrap();
        assert_eq!(pod["spec"]["priority"], 0);
        assert_eq!(pod["spec"]["preemptionPolicy"], "PreemptLowerPriority");
        assert!(pod["spec"].get("priorityClassName").is_none());
    }

    #[test]
    fn classes_resolve_built_in_stored_and_default() {
        let pod = admit(json!({"priorityClassName": "system-node-critical"}), &[]).unwrap();
        assert_eq!(pod["spec"]["priority"], 2_000_001_000);
        let classes = [class("high", 1000, false, "Never"), class("low", 10, true, "PreemptLowerPriority")];
        let pod = admit(json!({"priorityClassName": "high"}), &classes).unwrap();
        assert_eq!(
            (pod["spec"]["priority"].clone(), pod["spec"]["preemptionPolicy"].clone()),
            (json!(1000), json!("Never"))
        );
        let pod = admit(json!({}), &classes).unwrap();
        assert_eq!(pod["spec"]["priorityClassName"], "low");
        assert_eq!(pod["spec"]["priority"], 10);
        let both = [class("a", 7, true, "Never"), class("b", 3, true, "Never")];
        assert_eq!(admit(json!({}), &both).unwrap()["spec"]["priorityClassName"], "b", "lowest default wins");
    }

    #[test]
    fn refusals_use_kubes_words() {
        assert_eq!(
            admit(json!({"priorityClassName": "gold"}), &[]).unwrap_err(),
            Rejection::Forbidden("no PriorityClass with name gold was found".into())
        );
        assert_eq!(
            admit(json!({"priority": 5}), &[]).unwrap_err(),
            Rejection::Forbidden(
                "the integer value of priority (5) must not be provided in pod spec; priority admission controller \
                 computed 0 from the given PriorityClass name"
                    .into()
            )
        );
        assert_eq!(
            admit(json!({"preemptionPolicy": "Never"}), &[]).unwrap_err(),
            Rejection::Forbidden(
                "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission \
                 controller computed PreemptLowerPriority from the given PriorityClass name"
                    .into()
            )
        );
    }

    #[test]
    fn updates_keep_the_stored_priority() {
        let old = object(json!({"spec": {"priority": 7, "preemptionPolicy": "Never"}}));
        let mut pod = object(json!({"spec": {"containers": []}}));
        admit_pod(&attributes(Operation::Update), &mut pod, Some(&old), &[]).unwrap();
        assert_eq!(pod["spec"]["priority"], 7);
        assert_eq!(pod["spec"]["preemptionPolicy"], "Never");
    }

    #[test]
    fn only_one_global_default() {
        let existing = [class("a", 1, true, "Never")];
        let mut new = attributes(Operation::Create);
        new.group = "scheduling.k8s.io";
        new.resource = "priorityclasses";
        new.name = "b";
        let b = class("b", 2, true, "Never");
        assert_eq!(
            validate_class(&new, &b, &existing).unwrap_err(),
            Rejection::Forbidden("PriorityClass a is already marked as default. Only one default can exist".into())
        );
        let same = Attributes { operation: Operation::Update, name: "a", ..new };
        assert!(validate_class(&same, &class("a", 1, true, "Never"), &existing).is_ok());
        assert!(validate_class(&new, &class("b", 2, false, "Never"), &existing).is_ok());
    }
}
