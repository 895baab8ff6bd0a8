//! The Table printers of the resources served since issue 15 (the rest of
//! kube-apiserver v1.36's built-in resources): the columns and cells of
//! kube's `pkg/printers/internalversion/printers.go` (and kube-aggregator's
//! APIService printer), one `Builtin` per kind, grouped as kube's API groups.
//!
//! Cells are computed from the stored JSON as kube computes them from the
//! internal object: where the internal type has a default the JSON may lack
//! (a CSIDriver's `attachRequired`, a StorageClass's reclaim policy), the
//! printer applies it.
//!
//! Invariant: as in `printers.rs`, any JSON prints without panicking (a
//! missing or mistyped field reads as absent) and the clock is an argument.

use super::*;

fn created(v: &Value, now: SystemTime) -> Value {
    json!(age_of(v, &["metadata", "creationTimestamp"], now))
}

/// kube's `listWithMoreString`: the first `max` items, `+ N more...`, or
/// `<unset>` when there are none.
fn list_with_more(items: &[String], max: usize) -> String {
    let shown: Vec<&str> = items.iter().take(max).map(String::as_str).collect();
    let joined = shown.join(",");
    if items.len() > max {
        format!("{joined} + {} more...", items.len() - max)
    } else if joined.is_empty() {
        "<unset>".into()
    } else {
        joined
    }
}

/// A value that is a quantity or a number, as Go's `Quantity.String()`
/// prints a canonical quantity.
fn quantity(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".into(),
    }
}

/// An IntOrString as kube prints it (`intstr.String()`).
fn int_or_string(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// The status of the condition of type `type_`, if there is one.
fn condition<'a>(v: &'a Value, type_: &str) -> Option<&'a Value> {
    array(v, &["status", "conditions"]).iter().find(|c| text(c, &["type"]) == type_)
}

// ---------------------------------------------------------------------------
// Core.

pub(super) static PODTEMPLATE: Builtin = Builtin {
    columns: &[
        Col("Template", "string", "name", "Name of the pod template.", 0),
        Col("Containers", "string", "", "Names of each container in the template.", 0),
        Col("Images", "string", "", "Images referenced by each container in the template.", 0),
        Col("Pod Labels", "string", "", "The labels of the pod template.", 0),
    ],
    print: |t, _| {
        let (containers, images) = container_cells(get(t, &["template", "spec"]));
        vec![
            json!(name(t)),
            json!(containers),
            json!(images),
            json!(format_labels(get(t, &["template", "metadata", "labels"]))),
        ]
    },
};

pub(super) static REPLICATIONCONTROLLER: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Desired", "integer", "", "Number of desired pods.", 0),
        Col("Current", "integer", "", "Number of actually running pods.", 0),
        Col("Ready", "integer", "", "Number of pods ready.", 0),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    print: |rc, now| {
        let (containers, images) = container_cells(get(rc, &["spec", "template", "spec"]));
        vec![
            json!(name(rc)),
            json!(int_or(rc, &["spec", "replicas"], 1)),
            json!(int(rc, &["status", "replicas"])),
            json!(int(rc, &["status", "readyReplicas"])),
            created(rc, now),
            json!(containers),
            json!(images),
            json!(format_labels(get(rc, &["spec", "selector"]))),
        ]
    },
};

pub(super) static RESOURCEQUOTA: Builtin = Builtin {
    columns: &[
        NAME,
        AGE,
        Col("Request", "string", "", "Request represents a minimum amount of cpu/memory that a container may consume.", 0),
        Col("Limit", "string", "", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", 0),
    ],
    print: |q, now| {
        let mut resources: Vec<&str> = get(q, &["spec", "hard"])
            .and_then(Value::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        resources.sort_unstable();
        let (mut request, mut limit) = (Vec::new(), Vec::new());
        for resource in resources {
            let used = quantity(get(q, &["status", "used", resource]));
            let hard = quantity(get(q, &["status", "hard", resource]));
            let cell = format!("{resource}: {used}/{hard}");
            let pieces: Vec<&str> = resource.split('.').collect();
            if pieces.len() > 1 && pieces[0] == "limits" {
                limit.push(cell);
            } else {
                request.push(cell);
            }
        }
        vec![json!(name(q)), created(q, now), json!(request.join(", ")), json!(limit.join(", "))]
    },
};

pub(super) static LIMITRANGE: Builtin = Builtin {
    columns: &[NAME, Col("Created At", "date", "", "When the object was created (RFC 3339, UTC).", 0)],
    print: |l, _| {
        let created = match text(l, &["metadata", "creationTimestamp"]) {
            "" => "0001-01-01T00:00:00Z".to_string(),
            t => t.to_string(),
        };
        vec![json!(name(l)), json!(created)]
    },
};

pub(super) static COMPONENTSTATUS: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Status", "string", "", "Status of the component conditions", 0),
        Col("Message", "string", "", "Message of the component conditions", 0),
        Col("Error", "string", "", "Error of the component conditions", 0),
    ],
    print: |c, _| {
        let (mut status, mut message, mut error) = ("Unknown", "", "");
        for condition in array(c, &["conditions"]) {
            if text(condition, &["type"]) == "Healthy" {
                status = if text(condition, &["status"]) == "True" { "Healthy" } else { "Unhealthy" };
                message = text(condition, &["message"]);
                error = text(condition, &["error"]);
                break;
            }
        }
        vec![json!(name(c)), json!(status), json!(message), json!(error)]
    },
};

// ---------------------------------------------------------------------------
// apps, autoscaling, policy.

pub(super) static CONTROLLERREVISION: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Controller", "string", "", "Controller of the object", 0),
        Col("Revision", "integer", "", "The revision of the ControllerRevision.", 0),
        AGE,
    ],
    print: |r, now| {
        let controller = array(r, &["metadata", "ownerReferences"])
            .iter()
            .find(|o| get(o, &["controller"]).and_then(Value::as_bool) == Some(true))
            .map(|o| {
                let group = text(o, &["apiVersion"]).rsplit_once('/').map(|(g, _)| g).unwrap_or("");
                let kind = text(o, &["kind"]);
                let group_kind = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
                if group_kind.is_empty() {
                    text(o, &["name"]).to_string()
                } else {
                    format!("{}/{}", group_kind.to_lowercase(), text(o, &["name"]))
                }
            })
            .unwrap_or_else(|| "<none>".into());
        vec![json!(name(r)), json!(controller), json!(int(r, &["revision"])), created(r, now)]
    },
};

/// kube's `formatHPAMetrics` for autoscaling/v2 metrics. kube prints the
/// internal (v2-shaped) object whichever version is asked for, so a v1
/// object is converted first: its CPU target is one Resource metric, the
/// other metrics come from its annotation (`types::conversion::autoscaling`).
fn hpa_targets(h: &Value) -> String {
    let converted;
    let h = if get(h, &["spec"]).is_some() && get(h, &["spec", "metrics"]).is_none() {
        converted = Value::Object(super::super::conversion::autoscaling::to_v2(h));
        &converted
    } else {
        h
    };
    let mut specs: Vec<Value> = array(h, &["spec", "metrics"]).to_vec();
    let mut statuses: Vec<Value> = array(h, &["status", "currentMetrics"]).to_vec();
    if specs.is_empty() {
        if let Some(target) = get(h, &["spec", "targetCPUUtilizationPercentage"]).and_then(Value::as_i64) {
            specs.push(
                json!({"type": "Resource", "resource": {"name": "cpu", "target": {"averageUtilization": target}}}),
            );
            if let Some(current) = get(h, &["status", "currentCPUUtilizationPercentage"]).and_then(Value::as_i64) {
                statuses.push(json!({"resource": {"current": {"averageUtilization": current}}}));
            }
        }
    }
    if specs.is_empty() {
        return "<none>".into();
    }
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i);
        let current = |source: &str, field: &str| -> Option<String> {
            status.and_then(|s| get(s, &[source, "current", field])).map(|q| quantity(Some(q)))
        };
        let unknown = || "<unknown>".to_string();
        let cell = match text(spec, &["type"]) {
            source_type @ ("External" | "Object") => {
                let source = if source_type == "External" { "external" } else { "object" };
                match get(spec, &[source, "target", "averageValue"]) {
                    Some(average) => format!(
                        "{}/{} (avg)",
                        current(source, "averageValue").unwrap_or_else(unknown),
                        quantity(Some(average))
                    ),
                    None => format!(
                        "{}/{}",
                        current(source, "value").unwrap_or_else(unknown),
                        quantity(get(spec, &[source, "target", "value"]))
                    ),
                }
            }
            "Pods" => format!(
                "{}/{}",
                current("pods", "averageValue").unwrap_or_else(unknown),
                quantity(get(spec, &["pods", "target", "averageValue"]))
            ),
            source_type @ ("Resource" | "ContainerResource") => {
                let source = if source_type == "Resource" { "resource" } else { "containerResource" };
                let resource = text(spec, &[source, "name"]);
                match get(spec, &[source, "target", "averageValue"]) {
                    Some(average) => format!(
                        "{resource}: {}/{}",
                        current(source, "averageValue").unwrap_or_else(unknown),
                        quantity(Some(average))
                    ),
                    None => {
                        let current = status
                            .and_then(|s| get(s, &[source, "current", "averageUtilization"]))
                            .and_then(Value::as_i64)
                            .map(|u| format!("{u}%"))
                            .unwrap_or_else(unknown);
                        let target = get(spec, &[source, "target", "averageUtilization"])
                            .and_then(Value::as_i64)
                            .map(|u| format!("{u}%"))
                            .unwrap_or_else(|| "<auto>".into());
                        format!("{resource}: {current}/{target}")
                    }
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(cell);
    }
    const MAX: usize = 2;
    let joined = list.iter().take(MAX).cloned().collect::<Vec<_>>().join(", ");
    if list.len() > MAX {
        format!("{joined} + {} more...", list.len() - MAX)
    } else {
        joined
    }
}

pub(super) static HORIZONTALPODAUTOSCALER: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Reference", "string", "", "The target reference.", 0),
        Col("Targets", "string", "", "The target and current metric values.", 0),
        Col("MinPods", "string", "", "Lower limit for the number of pods.", 0),
        Col("MaxPods", "integer", "", "Upper limit for the number of pods.", 0),
        Col("Replicas", "string", "", "Current number of replicas.", 0),
        AGE,
    ],
    print: |h, now| {
        let reference = format!(
            "{}/{}",
            text(h, &["spec", "scaleTargetRef", "kind"]),
            text(h, &["spec", "scaleTargetRef", "name"])
        );
        let min = match get(h, &["spec", "minReplicas"]).and_then(Value::as_i64) {
            Some(m) => m.to_string(),
            None => "<unset>".into(),
        };
        vec![
            json!(name(h)),
            json!(reference),
            json!(hpa_targets(h)),
            json!(min),
            json!(int(h, &["spec", "maxReplicas"])),
            json!(int(h, &["status", "currentReplicas"])),
            created(h, now),
        ]
    },
};

pub(super) static PODDISRUPTIONBUDGET: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Min Available", "string", "", "The minimum number of pods that must be available.", 0),
        Col("Max Unavailable", "string", "", "The maximum number of pods that may be unavailable.", 0),
        Col("Allowed Disruptions", "integer", "", "Calculated number of pods that may be disrupted at this time.", 0),
        AGE,
    ],
    print: |p, now| {
        let or_na = |v: Option<String>| v.unwrap_or_else(|| "N/A".into());
        vec![
            json!(name(p)),
            json!(or_na(int_or_string(get(p, &["spec", "minAvailable"])))),
            json!(or_na(int_or_string(get(p, &["spec", "maxUnavailable"])))),
            json!(int(p, &["status", "disruptionsAllowed"])),
            created(p, now),
        ]
    },
};

// ---------------------------------------------------------------------------
// certificates, networking, discovery, events.

/// kube's `extractCSRStatus`.
fn csr_condition(c: &Value) -> String {
    let (mut approved, mut denied, mut failed) = (false, false, false);
    for condition in array(c, &["status", "conditions"]) {
        match text(condition, &["type"]) {
            "Approved" => approved = true,
            "Denied" => denied = true,
            "Failed" => failed = true,
            _ => {}
        }
    }
    let mut status = if denied {
        "Denied".to_string()
    } else if approved {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if failed {
        status.push_str(",Failed");
    }
    if !text(c, &["status", "certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    status
}

pub(super) static CERTIFICATESIGNINGREQUEST: Builtin = Builtin {
    columns: &[
        NAME,
        AGE,
        Col("SignerName", "string", "", "Requested signer name.", 0),
        Col("Requestor", "string", "", "Name of the user who created the request.", 0),
        Col("RequestedDuration", "string", "", "Requested duration of the certificate.", 0),
        Col("Condition", "string", "", "The state of the request.", 0),
    ],
    print: |c, now| {
        let duration = match get(c, &["spec", "expirationSeconds"]).and_then(Value::as_i64) {
            Some(s) => human_duration(i128::from(s) * 1_000_000_000),
            None => "<none>".into(),
        };
        vec![
            json!(name(c)),
            created(c, now),
            json!(text(c, &["spec", "signerName"])),
            json!(text(c, &["spec", "username"])),
            json!(duration),
            json!(csr_condition(c)),
        ]
    },
};

pub(super) static INGRESSCLASS: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Controller", "string", "", "Controller that is responsible for handling this class", 0),
        Col("Parameters", "string", "", "A reference to a resource with additional parameters", 0),
        AGE,
    ],
    print: |c, now| {
        let parameters = match get(c, &["spec", "parameters"]).filter(|p| p.is_object()) {
            Some(p) => {
                let kind = match text(p, &["apiGroup"]) {
                    "" if get(p, &["apiGroup"]).is_none() => text(p, &["kind"]).to_string(),
                    group => format!("{}.{group}", text(p, &["kind"])),
                };
                format!("{kind}/{}", text(p, &["name"]))
            }
            None => "<none>".into(),
        };
        vec![json!(name(c)), json!(text(c, &["spec", "controller"])), json!(parameters), created(c, now)]
    },
};

pub(super) static NETWORKPOLICY: Builtin = Builtin {
    columns: &[NAME, Col("Pod-Selector", "string", "", "Pods the policy selects.", 0), AGE],
    print: |p, now| {
        vec![json!(name(p)), json!(format_label_selector(get(p, &["spec", "podSelector"]))), created(p, now)]
    },
};

pub(super) static SERVICECIDR: Builtin = Builtin {
    columns: &[NAME, Col("CIDRs", "string", "", "The CIDRs of the ServiceCIDR.", 0), AGE],
    print: |c, now| {
        let cidrs: Vec<&str> = array(c, &["spec", "cidrs"]).iter().filter_map(Value::as_str).collect();
        vec![json!(name(c)), json!(cidrs.join(",")), created(c, now)]
    },
};

pub(super) static IPADDRESS: Builtin = Builtin {
    columns: &[NAME, Col("ParentRef", "string", "", "The object the IP address belongs to.", 0), AGE],
    print: |ip, now| {
        let parent = match get(ip, &["spec", "parentRef"]).filter(|p| p.is_object()) {
            Some(p) => {
                let resource = match text(p, &["group"]) {
                    "" => text(p, &["resource"]).to_string(),
                    group => format!("{}.{group}", text(p, &["resource"])),
                };
                let mut cell = resource.to_lowercase();
                if !text(p, &["namespace"]).is_empty() {
                    cell = format!("{cell}/{}", text(p, &["namespace"]));
                }
                format!("{cell}/{}", text(p, &["name"]))
            }
            None => "<none>".into(),
        };
        vec![json!(name(ip)), json!(parent), created(ip, now)]
    },
};

pub(super) static ENDPOINTSLICE: Builtin = Builtin {
    columns: &[
        NAME,
        Col("AddressType", "string", "", "Type of address the slice holds (IPv4, IPv6, FQDN).", 0),
        Col("Ports", "string", "", "The ports of the slice, the first three.", 0),
        Col("Endpoints", "string", "", "The addresses of the endpoints, the first three.", 0),
        AGE,
    ],
    print: |s, now| {
        let ports: Vec<String> = array(s, &["ports"])
            .iter()
            .map(|p| match (get(p, &["port"]).and_then(Value::as_i64), get(p, &["name"]).and_then(Value::as_str)) {
                (Some(port), _) => port.to_string(),
                (None, Some(name)) => name.to_string(),
                (None, None) => "*".to_string(),
            })
            .collect();
        let addresses: Vec<String> = array(s, &["endpoints"])
            .iter()
            .flat_map(|e| array(e, &["addresses"]).iter().map(|a| a.as_str().unwrap_or("").to_string()))
            .collect();
        vec![
            json!(name(s)),
            json!(text(s, &["addressType"])),
            json!(list_with_more(&ports, 3)),
            json!(list_with_more(&addresses, 3)),
            created(s, now),
        ]
    },
};

/// events.k8s.io/v1 Events are printed as kube prints every Event: from the
/// internal (core) form, which the v1 fields convert to.
pub(super) static EVENTS_V1: Builtin = Builtin {
    columns: EVENT.columns,
    print: |e, now| print_event(&Value::Object(super::super::conversion::event_to_core(e)), now),
};

// ---------------------------------------------------------------------------
// storage, scheduling, node.

pub(super) static STORAGECLASS: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Provisioner", "string", "", "Indicates the type of the provisioner.", 0),
        Col("ReclaimPolicy", "string", "", "Indicates the type of the reclaim policy.", 0),
        Col("VolumeBindingMode", "string", "", "Indicates the mode of the volume binding.", 0),
        Col("AllowVolumeExpansion", "string", "", "Indicates whether the storage class allow volume expand.", 0),
        AGE,
    ],
    print: |c, now| {
        let annotations = get(c, &["metadata", "annotations"]);
        let is_default =
            ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"]
                .iter()
                .any(|a| annotations.and_then(|m| m.get(*a)).and_then(Value::as_str) == Some("true"));
        let display = if is_default { format!("{} (default)", name(c)) } else { name(c).to_string() };
        vec![
            json!(display),
            json!(text(c, &["provisioner"])),
            json!(text_or(c, &["reclaimPolicy"], "Delete")),
            json!(text_or(c, &["volumeBindingMode"], "Immediate")),
            json!(get(c, &["allowVolumeExpansion"]).and_then(Value::as_bool).unwrap_or(false)),
            created(c, now),
        ]
    },
};

pub(super) static VOLUMEATTRIBUTESCLASS: Builtin = Builtin {
    columns: &[NAME, Col("DriverName", "string", "", "Indicates the CSI driver of the class.", 0), AGE],
    print: |c, now| vec![json!(name(c)), json!(text(c, &["driverName"])), created(c, now)],
};

pub(super) static CSIDRIVER: Builtin = Builtin {
    columns: &[
        NAME,
        Col("AttachRequired", "boolean", "", "Whether the driver requires an attach operation.", 0),
        Col("PodInfoOnMount", "boolean", "", "Whether pod information is passed on mount.", 0),
        Col("StorageCapacity", "boolean", "", "Whether the driver publishes storage capacity.", 0),
        Col("TokenRequests", "string", "", "Audiences of the service account tokens the driver gets.", 0),
        Col("RequiresRepublish", "boolean", "", "Whether NodePublishVolume is called periodically.", 0),
        Col("Modes", "string", "", "Volume lifecycle modes the driver supports.", 0),
        AGE,
    ],
    print: |d, now| {
        let flag = |field: &str, default: bool| get(d, &["spec", field]).and_then(Value::as_bool).unwrap_or(default);
        let audiences: Vec<&str> =
            array(d, &["spec", "tokenRequests"]).iter().map(|t| text(t, &["audience"])).collect();
        let tokens = if audiences.is_empty() { "<unset>".to_string() } else { audiences.join(",") };
        let modes: Vec<&str> = array(d, &["spec", "volumeLifecycleModes"]).iter().filter_map(Value::as_str).collect();
        let modes = if modes.is_empty() { "<none>".to_string() } else { modes.join(",") };
        vec![
            json!(name(d)),
            json!(flag("attachRequired", true)),
            json!(flag("podInfoOnMount", false)),
            json!(flag("storageCapacity", false)),
            json!(tokens),
            json!(flag("requiresRepublish", false)),
            json!(modes),
            created(d, now),
        ]
    },
};

pub(super) static CSINODE: Builtin = Builtin {
    columns: &[NAME, Col("Drivers", "integer", "", "The number of CSI drivers on the node.", 0), AGE],
    print: |n, now| vec![json!(name(n)), json!(array(n, &["spec", "drivers"]).len()), created(n, now)],
};

pub(super) static CSISTORAGECAPACITY: Builtin = Builtin {
    columns: &[
        NAME,
        Col("StorageClassName", "string", "", "The storage class of the capacity.", 0),
        Col("Capacity", "string", "", "The capacity available.", 0),
    ],
    print: |c, _| {
        let capacity = match get(c, &["capacity"]) {
            Some(q @ (Value::String(_) | Value::Number(_))) => quantity(Some(q)),
            _ => "<unset>".into(),
        };
        vec![json!(name(c)), json!(text(c, &["storageClassName"])), json!(capacity)]
    },
};

pub(super) static VOLUMEATTACHMENT: Builtin = Builtin {
    columns: &[
        NAME,
        Col(
            "Attacher",
            "string",
            "",
            "Attacher indicates the name of the volume driver that MUST handle this request.",
            0,
        ),
        Col("PV", "string", "", "Name of the persistent volume to attach.", 0),
        Col("Node", "string", "", "The node that the volume should be attached to.", 0),
        Col("Attached", "boolean", "", "Indicates the volume is successfully attached.", 0),
        AGE,
    ],
    print: |a, now| {
        vec![
            json!(name(a)),
            json!(text(a, &["spec", "attacher"])),
            json!(text(a, &["spec", "source", "persistentVolumeName"])),
            json!(text(a, &["spec", "nodeName"])),
            json!(get(a, &["status", "attached"]).and_then(Value::as_bool).unwrap_or(false)),
            created(a, now),
        ]
    },
};

pub(super) static PRIORITYCLASS: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Value", "integer", "", "The priority of the class.", 0),
        Col("Global-Default", "boolean", "", "Whether it is the default class of pods without one.", 0),
        AGE,
        Col("PreemptionPolicy", "string", "", "Whether pods of the class preempt lower-priority pods.", 0),
    ],
    print: |c, now| {
        vec![
            json!(name(c)),
            json!(int(c, &["value"])),
            json!(get(c, &["globalDefault"]).and_then(Value::as_bool).unwrap_or(false)),
            created(c, now),
            json!(text_or(c, &["preemptionPolicy"], "PreemptLowerPriority")),
        ]
    },
};

pub(super) static RUNTIMECLASS: Builtin = Builtin {
    columns: &[NAME, Col("Handler", "string", "", "The container runtime handler of the class.", 0), AGE],
    print: |c, now| vec![json!(name(c)), json!(text(c, &["handler"])), created(c, now)],
};

// ---------------------------------------------------------------------------
// admissionregistration, apiregistration, flowcontrol.

pub(super) static WEBHOOKCONFIGURATION: Builtin = Builtin {
    columns: &[NAME, Col("Webhooks", "integer", "", "Webhooks indicates the number of webhooks.", 0), AGE],
    print: |c, now| vec![json!(name(c)), json!(array(c, &["webhooks"]).len()), created(c, now)],
};

fn param_kind(p: &Value) -> String {
    match get(p, &["spec", "paramKind"]).filter(|k| k.is_object()) {
        Some(k) => format!("{}/{}", text(k, &["apiVersion"]), text(k, &["kind"])),
        None => "<unset>".into(),
    }
}

pub(super) static VALIDATINGADMISSIONPOLICY: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Validations", "integer", "", "Validations indicates the number of validation rules.", 0),
        Col("ParamKind", "string", "", "ParamKind specifies the kind of resources used to parameterize this policy", 0),
        AGE,
    ],
    print: |p, now| {
        vec![json!(name(p)), json!(array(p, &["spec", "validations"]).len()), json!(param_kind(p)), created(p, now)]
    },
};

pub(super) static MUTATINGADMISSIONPOLICY: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Mutations", "integer", "", "Mutation indicates the number of mutations rules.", 0),
        Col("ParamKind", "string", "", "ParamKind specifies the kind of resources used to parameterize this policy", 0),
        AGE,
    ],
    print: |p, now| {
        vec![json!(name(p)), json!(array(p, &["spec", "mutations"]).len()), json!(param_kind(p)), created(p, now)]
    },
};

pub(super) static ADMISSIONPOLICYBINDING: Builtin = Builtin {
    columns: &[
        NAME,
        Col(
            "PolicyName",
            "string",
            "",
            "PolicyName indicates the policy definition which the policy binding binded to.",
            0,
        ),
        Col("ParamRef", "string", "", "ParamRef indicates the param resource which sets the configration param", 0),
        AGE,
    ],
    print: |b, now| {
        let param = match get(b, &["spec", "paramRef"]).filter(|p| p.is_object()) {
            Some(p) if !text(p, &["name"]).is_empty() => match text(p, &["namespace"]) {
                "" => format!("*/{}", text(p, &["name"])),
                namespace => format!("{namespace}/{}", text(p, &["name"])),
            },
            Some(p) if get(p, &["selector"]).is_some_and(Value::is_object) => {
                selector_string(get(p, &["selector"])).unwrap_or_else(|| "<error>".into())
            }
            _ => "<unset>".into(),
        };
        vec![json!(name(b)), json!(text(b, &["spec", "policyName"])), json!(param), created(b, now)]
    },
};

pub(super) static APISERVICE: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Service", "string", "", "The reference to the service that hosts this API endpoint.", 0),
        Col("Available", "string", "", "Whether this service is available.", 0),
        AGE,
    ],
    print: |a, now| {
        let service = match get(a, &["spec", "service"]).filter(|s| s.is_object()) {
            Some(s) => format!("{}/{}", text(s, &["namespace"]), text(s, &["name"])),
            None => "Local".into(),
        };
        let available = match condition(a, "Available") {
            Some(c) if text(c, &["status"]) == "True" => "True".to_string(),
            Some(c) => format!("{} ({})", text(c, &["status"]), text(c, &["reason"])),
            None => "Unknown".into(),
        };
        vec![json!(name(a)), json!(service), json!(available), created(a, now)]
    },
};

pub(super) static FLOWSCHEMA: Builtin = Builtin {
    columns: &[
        NAME,
        Col("PriorityLevel", "string", "", "The priority level of the flows of the schema.", 0),
        Col("MatchingPrecedence", "string", "", "Precedence among schemas; lower matches first.", 0),
        Col("DistinguisherMethod", "string", "", "How flows are told apart (ByUser, ByNamespace).", 0),
        AGE,
        Col("MissingPL", "string", "", "Whether the priority level it names is missing.", 0),
    ],
    print: |f, now| {
        let distinguisher = match text(f, &["spec", "distinguisherMethod", "type"]) {
            "" => "<none>".to_string(),
            t => t.to_string(),
        };
        let missing = condition(f, "Dangling").map(|c| text(c, &["status"]).to_string()).unwrap_or_else(|| "?".into());
        vec![
            json!(name(f)),
            json!(text(f, &["spec", "priorityLevelConfiguration", "name"])),
            json!(int(f, &["spec", "matchingPrecedence"]).to_string()),
            json!(distinguisher),
            created(f, now),
            json!(missing),
        ]
    },
};

pub(super) static PRIORITYLEVELCONFIGURATION: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Type", "string", "", "Exempt or Limited.", 0),
        Col("NominalConcurrencyShares", "string", "", "The share of the server's concurrency of this level.", 0),
        Col("Queues", "string", "", "The number of queues of this level.", 0),
        Col("HandSize", "string", "", "The queues a flow is shuffled among.", 0),
        Col("QueueLengthLimit", "string", "", "The longest a queue may grow.", 0),
        AGE,
    ],
    print: |p, now| {
        let none = || json!("<none>");
        let (mut shares, mut queues, mut hand, mut limit) = (none(), none(), none(), none());
        if let Some(limited) = get(p, &["spec", "limited"]).filter(|l| l.is_object()) {
            shares = json!(int(limited, &["nominalConcurrencyShares"]));
            if let Some(q) = get(limited, &["limitResponse", "queuing"]).filter(|q| q.is_object()) {
                queues = json!(int(q, &["queues"]));
                hand = json!(int(q, &["handSize"]));
                limit = json!(int(q, &["queueLengthLimit"]));
            }
        }
        vec![json!(name(p)), json!(text(p, &["spec", "type"])), shares, queues, hand, limit, created(p, now)]
    },
};

// ---------------------------------------------------------------------------
// resource.k8s.io.

pub(super) static NAME_AGE: Builtin =
    Builtin { columns: &[NAME, AGE], print: |o, now| vec![json!(name(o)), created(o, now)] };

pub(super) static RESOURCECLAIM: Builtin = Builtin {
    columns: &[NAME, Col("State", "string", "", "A summary of the claim's state.", 0), AGE],
    print: |c, now| {
        let mut states: Vec<&str> = Vec::new();
        let deleting = is_deleting(c);
        if deleting {
            states.push("deleted");
        }
        if get(c, &["status", "allocation"]).is_none_or(Value::is_null) {
            if !deleting {
                states.push("pending");
            }
        } else {
            states.push("allocated");
            if !array(c, &["status", "reservedFor"]).is_empty() {
                states.push("reserved");
            } else if deleting {
                states.push("deallocating");
            }
        }
        vec![json!(name(c)), json!(states.join(",")), created(c, now)]
    },
};

pub(super) static RESOURCESLICE: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Node", "string", "", "The node of the slice's devices.", 0),
        Col("Driver", "string", "", "The driver that publishes the slice.", 0),
        Col("Pool", "string", "", "The pool of the slice.", 0),
        AGE,
    ],
    print: |s, now| {
        vec![
            json!(name(s)),
            json!(text(s, &["spec", "nodeName"])),
            json!(text(s, &["spec", "driver"])),
            json!(text(s, &["spec", "pool", "name"])),
            created(s, now),
        ]
    },
};
