//! Table printers: the columns `kubectl get` shows for each resource and the
//! cells of one object's row, computed as kube-apiserver's printers compute
//! them (pod Ready "1/2", Status with its reasons, Restarts "3 (5m ago)", Age
//! as a short human duration, service External-IP and Port(s), ...).
//!
//! Three kinds of printer (`TablePrinter`):
//! - a built-in printer for each built-in resource that kube-apiserver prints
//!   with its own columns;
//! - the default for every other resource: Name and Created At (the
//!   specification's default table);
//! - custom columns (a custom resource version's `additionalPrinterColumns`,
//!   each a JSONPath, `jsonpath.rs`), or Name + Age when a custom resource
//!   version has none.
//!
//! Cells are computed as kube-apiserver computes them with `Wide: true` (every
//! column, priority 1 included; kubectl hides priority 1 without `-o wide`).
//! The stored object is read as it is: where kube-apiserver would have
//! defaulted a field on write (a Deployment's `spec.replicas`, a Service's
//! `spec.type`, a port's protocol, a Secret's type, a CronJob's `suspend`, a
//! volume's reclaim policy, volume mode and phase), the printer applies the
//! same default.
//!
//! Invariant: no I/O; the clock is an argument, so a golden test fixes it.
//! Any JSON value prints without panicking (missing or mistyped fields read
//! as absent).

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

/// One column of a Table (`metav1.TableColumnDefinition`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDefinition {
    pub name: String,
    /// An OpenAPI type: string, integer, number, boolean, date.
    pub type_: String,
    /// An OpenAPI format hint: `name` for the Name column, otherwise empty.
    pub format: String,
    pub description: String,
    /// 0: always shown; 1: shown by `kubectl get -o wide`.
    pub priority: u8,
}

impl ColumnDefinition {
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// One object's row: its cells (one per column) and row conditions
/// (`Completed` for pods that succeeded or failed).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub cells: Vec<Value>,
    pub conditions: Vec<Value>,
}

/// A column of a built-in printer, in static form.
struct Col(&'static str, &'static str, &'static str, &'static str, u8);

const NAME: Col = Col("Name", "string", "name", "Name of the object, unique in its namespace.", 0);
const AGE: Col = Col("Age", "string", "", "Time since the object was created.", 0);
const CONTAINERS: Col = Col("Containers", "string", "", "Names of the containers of the pod template.", 1);
const IMAGES: Col = Col("Images", "string", "", "Images of the containers of the pod template.", 1);
const SELECTOR: Col = Col("Selector", "string", "", "Label selector of the pods it manages.", 1);

/// A built-in resource's printer: its columns and its row function.
pub struct Builtin {
    columns: &'static [Col],
    print: fn(&Value, SystemTime) -> Vec<Value>,
}

/// A custom column: a header, a type and a JSONPath into the object.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomColumn {
    pub definition: ColumnDefinition,
    pub path: super::jsonpath::JsonPath,
}

/// How the rows of one resource are printed.
pub enum TablePrinter {
    Builtin(&'static Builtin),
    /// Name and Created At (an RFC 3339 date): the default table.
    Default,
    /// Name, then the given columns (a custom resource version).
    Custom(Vec<CustomColumn>),
}

/// The printer for a resource of the given group (empty for core).
pub fn for_resource(group: &str, resource: &str) -> TablePrinter {
    let builtin: Option<&'static Builtin> = match (group, resource) {
        ("", "pods") => Some(&POD),
        ("", "services") => Some(&SERVICE),
        ("", "endpoints") => Some(&ENDPOINTS),
        ("", "nodes") => Some(&NODE),
        ("", "namespaces") => Some(&NAMESPACE),
        ("", "configmaps") => Some(&CONFIGMAP),
        ("", "secrets") => Some(&SECRET),
        ("", "serviceaccounts") => Some(&SERVICEACCOUNT),
        ("", "events") => Some(&EVENT),
        ("", "persistentvolumes") => Some(&PERSISTENTVOLUME),
        ("", "persistentvolumeclaims") => Some(&PERSISTENTVOLUMECLAIM),
        ("apps", "deployments") => Some(&DEPLOYMENT),
        ("apps", "replicasets") => Some(&REPLICASET),
        ("apps", "statefulsets") => Some(&STATEFULSET),
        ("apps", "daemonsets") => Some(&DAEMONSET),
        ("batch", "jobs") => Some(&JOB),
        ("batch", "cronjobs") => Some(&CRONJOB),
        ("networking.k8s.io", "ingresses") => Some(&INGRESS),
        ("rbac.authorization.k8s.io", "rolebindings") => Some(&ROLEBINDING),
        ("rbac.authorization.k8s.io", "clusterrolebindings") => Some(&CLUSTERROLEBINDING),
        ("coordination.k8s.io", "leases") => Some(&LEASE),
        ("", "podtemplates") => Some(&groups::PODTEMPLATE),
        ("", "replicationcontrollers") => Some(&groups::REPLICATIONCONTROLLER),
        ("", "resourcequotas") => Some(&groups::RESOURCEQUOTA),
        ("", "limitranges") => Some(&groups::LIMITRANGE),
        ("", "componentstatuses") => Some(&groups::COMPONENTSTATUS),
        ("apps", "controllerrevisions") => Some(&groups::CONTROLLERREVISION),
        ("autoscaling", "horizontalpodautoscalers") => Some(&groups::HORIZONTALPODAUTOSCALER),
        ("policy", "poddisruptionbudgets") => Some(&groups::PODDISRUPTIONBUDGET),
        ("certificates.k8s.io", "certificatesigningrequests") => Some(&groups::CERTIFICATESIGNINGREQUEST),
        ("networking.k8s.io", "ingressclasses") => Some(&groups::INGRESSCLASS),
        ("networking.k8s.io", "networkpolicies") => Some(&groups::NETWORKPOLICY),
        ("networking.k8s.io", "servicecidrs") => Some(&groups::SERVICECIDR),
        ("networking.k8s.io", "ipaddresses") => Some(&groups::IPADDRESS),
        ("discovery.k8s.io", "endpointslices") => Some(&groups::ENDPOINTSLICE),
        ("events.k8s.io", "events") => Some(&groups::EVENTS_V1),
        ("storage.k8s.io", "storageclasses") => Some(&groups::STORAGECLASS),
        ("storage.k8s.io", "volumeattributesclasses") => Some(&groups::VOLUMEATTRIBUTESCLASS),
        ("storage.k8s.io", "csidrivers") => Some(&groups::CSIDRIVER),
        ("storage.k8s.io", "csinodes") => Some(&groups::CSINODE),
        ("storage.k8s.io", "csistoragecapacities") => Some(&groups::CSISTORAGECAPACITY),
        ("storage.k8s.io", "volumeattachments") => Some(&groups::VOLUMEATTACHMENT),
        ("scheduling.k8s.io", "priorityclasses") => Some(&groups::PRIORITYCLASS),
        ("node.k8s.io", "runtimeclasses") => Some(&groups::RUNTIMECLASS),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations" | "mutatingwebhookconfigurations") => {
            Some(&groups::WEBHOOKCONFIGURATION)
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => Some(&groups::VALIDATINGADMISSIONPOLICY),
        ("admissionregistration.k8s.io", "mutatingadmissionpolicies") => Some(&groups::MUTATINGADMISSIONPOLICY),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings" | "mutatingadmissionpolicybindings") => {
            Some(&groups::ADMISSIONPOLICYBINDING)
        }
        ("apiregistration.k8s.io", "apiservices") => Some(&groups::APISERVICE),
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => Some(&groups::FLOWSCHEMA),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => Some(&groups::PRIORITYLEVELCONFIGURATION),
        ("resource.k8s.io", "deviceclasses" | "resourceclaimtemplates") => Some(&groups::NAME_AGE),
        ("resource.k8s.io", "resourceclaims") => Some(&groups::RESOURCECLAIM),
        ("resource.k8s.io", "resourceslices") => Some(&groups::RESOURCESLICE),
        // roles, clusterroles, customresourcedefinitions and everything
        // else: kube-apiserver's default table.
        _ => None,
    };
    builtin.map(TablePrinter::Builtin).unwrap_or(TablePrinter::Default)
}

impl TablePrinter {
    /// A custom resource version's printer: its `additionalPrinterColumns`
    /// (`name`, `type`, `format`, `description`, `priority`, `jsonPath`), or
    /// Name + Age when it has none. A column whose JSONPath does not parse
    /// is an error (its definition would have been refused).
    pub fn for_custom_resource(additional_printer_columns: &[Value]) -> Result<TablePrinter, String> {
        let columns: Vec<Value> = if additional_printer_columns.is_empty() {
            vec![json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})]
        } else {
            additional_printer_columns.to_vec()
        };
        let mut custom = Vec::with_capacity(columns.len());
        for column in &columns {
            let text = |key: &str| column.get(key).and_then(Value::as_str).unwrap_or("").to_string();
            let path = super::jsonpath::JsonPath::parse(&text("jsonPath"))?;
            custom.push(CustomColumn {
                definition: ColumnDefinition {
                    name: text("name"),
                    type_: text("type"),
                    format: text("format"),
                    description: text("description"),
                    priority: column.get("priority").and_then(Value::as_u64).unwrap_or(0).min(255) as u8,
                },
                path,
            });
        }
        Ok(TablePrinter::Custom(custom))
    }

    pub fn columns(&self) -> Vec<ColumnDefinition> {
        let from = |c: &Col| ColumnDefinition {
            name: c.0.into(),
            type_: c.1.into(),
            format: c.2.into(),
            description: c.3.into(),
            priority: c.4,
        };
        match self {
            TablePrinter::Builtin(b) => b.columns.iter().map(from).collect(),
            TablePrinter::Default => vec![
                from(&NAME),
                from(&Col("Created At", "date", "", "When the object was created (RFC 3339, UTC).", 0)),
            ],
            TablePrinter::Custom(columns) => {
                std::iter::once(from(&NAME)).chain(columns.iter().map(|c| c.definition.clone())).collect()
            }
        }
    }

    /// The row of one object at the given time.
    pub fn row(&self, object: &Value, now: SystemTime) -> Row {
        let conditions = if matches!(self, TablePrinter::Builtin(b) if std::ptr::eq(*b, &POD)) {
            pod_row_conditions(object)
        } else {
            Vec::new()
        };
        let cells = match self {
            TablePrinter::Builtin(b) => (b.print)(object, now),
            TablePrinter::Default => {
                let created = match text(object, &["metadata", "creationTimestamp"]) {
                    "" => "0001-01-01T00:00:00Z".to_string(),
                    t => t.to_string(),
                };
                vec![json!(name(object)), json!(created)]
            }
            TablePrinter::Custom(columns) => std::iter::once(json!(name(object)))
                .chain(columns.iter().map(|c| custom_cell(c, object, now)))
                .collect(),
        };
        Row { cells, conditions }
    }
}

/// A custom column's cell, as the custom resource table convertor makes it:
/// the first result; strings printed as text, dates as an age, numbers and
/// booleans typed; nothing found is null.
fn custom_cell(column: &CustomColumn, object: &Value, now: SystemTime) -> Value {
    let results = column.path.evaluate(object);
    let Some(&value) = results.first() else {
        return Value::Null;
    };
    match column.definition.type_.as_str() {
        "string" => match value {
            Value::String(s) => json!(s),
            Value::Null => json!("<nil>"),
            other => json!(other.to_string()),
        },
        "integer" => match value {
            Value::Number(n) => {
                n.as_i64().map(|i| json!(i)).or_else(|| n.as_f64().map(|f| json!(f as i64))).unwrap_or(Value::Null)
            }
            _ => Value::Null,
        },
        "number" => match value {
            Value::Number(_) => value.clone(),
            _ => Value::Null,
        },
        "boolean" => match value {
            Value::Bool(_) => value.clone(),
            _ => Value::Null,
        },
        "date" => match value {
            Value::String(s) => match parse_time(s) {
                Some(t) => json!(age(Some(t), now)),
                None => json!("<invalid>"),
            },
            _ => Value::Null,
        },
        _ => value.clone(),
    }
}

// ---------------------------------------------------------------------------
// Reading the object.

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn text<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    get(v, path).and_then(Value::as_str).unwrap_or("")
}

fn int(v: &Value, path: &[&str]) -> i64 {
    get(v, path).and_then(Value::as_i64).unwrap_or(0)
}

fn int_or(v: &Value, path: &[&str], default: i64) -> i64 {
    get(v, path).and_then(Value::as_i64).unwrap_or(default)
}

fn array<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    get(v, path).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn object_len(v: &Value, path: &[&str]) -> usize {
    get(v, path).and_then(Value::as_object).map(|m| m.len()).unwrap_or(0)
}

fn name(v: &Value) -> &str {
    text(v, &["metadata", "name"])
}

fn is_deleting(v: &Value) -> bool {
    get(v, &["metadata", "deletionTimestamp"]).is_some_and(|t| !t.is_null())
}

fn or_none(s: &str) -> String {
    if s.is_empty() {
        "<none>".into()
    } else {
        s.into()
    }
}

// ---------------------------------------------------------------------------
// Time.

/// Parses an RFC 3339 time (metav1.Time and MicroTime) into nanoseconds
/// since the Unix epoch.
pub fn parse_time(s: &str) -> Option<i128> {
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
    Some(t.unix_timestamp_nanos())
}

/// Go's zero time (0001-01-01T00:00:00Z), which kube prints as `<unknown>`.
const ZERO_TIME_NANOS: i128 = -62_135_596_800 * 1_000_000_000;

fn nanos(now: SystemTime) -> i128 {
    match now.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// The time since `timestamp` as a short human duration; `<unknown>` when
/// absent or zero.
fn age(timestamp: Option<i128>, now: SystemTime) -> String {
    match timestamp {
        None => "<unknown>".into(),
        Some(t) if t == ZERO_TIME_NANOS => "<unknown>".into(),
        Some(t) => human_duration(nanos(now) - t),
    }
}

fn age_of(v: &Value, path: &[&str], now: SystemTime) -> String {
    age(get(v, path).and_then(Value::as_str).and_then(parse_time), now)
}

/// A duration (in nanoseconds) as kubectl shows ages: "45s", "5m", "3m12s",
/// "3h12m", "20h", "2d", "3d4h", "400d", "2y35d", "9y". Up to two seconds
/// in the future is "0s" (clock skew); more is "<invalid>".
pub fn human_duration(d_nanos: i128) -> String {
    const SECOND: i128 = 1_000_000_000;
    let seconds = d_nanos / SECOND;
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    } else if hours < 48 {
        return format!("{hours}h");
    } else if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{}h", hours / 24, h) };
    } else if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 { format!("{}y", hours / 24 / 365) } else { format!("{}y{}d", hours / 24 / 365, dy) };
    }
    format!("{}y", hours / 24 / 365)
}

// ---------------------------------------------------------------------------
// Shared formatting.

/// Labels as `a=b,c=d`, sorted by key; `<none>` when empty.
fn format_labels(v: Option<&Value>) -> String {
    let Some(map) = v.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    let sorted: BTreeMap<&str, &str> = map.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap_or(""))).collect();
    sorted.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// A LabelSelector as a selector string: requirements sorted by key;
/// `None` when it is invalid. Nil and empty selectors are "".
fn selector_string(selector: Option<&Value>) -> Option<String> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Some(String::new());
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", v.as_str()?)));
        }
    }
    for expression in selector.get("matchExpressions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]) {
        let key = expression.get("key").and_then(Value::as_str)?;
        let values: BTreeSet<&str> = expression
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let joined = values.into_iter().collect::<Vec<_>>().join(",");
        let requirement = match expression.get("operator").and_then(Value::as_str)? {
            "In" if !joined.is_empty() => format!("{key} in ({joined})"),
            "NotIn" if !joined.is_empty() => format!("{key} notin ({joined})"),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return None,
        };
        requirements.push((key.to_string(), requirement));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Some(requirements.into_iter().map(|(_, r)| r).collect::<Vec<_>>().join(","))
}

/// A LabelSelector for display: `<none>` when it selects by nothing,
/// `<error>` when invalid.
fn format_label_selector(selector: Option<&Value>) -> String {
    match selector_string(selector) {
        None => "<error>".into(),
        Some(s) if s.is_empty() => "<none>".into(),
        Some(s) => s,
    }
}

/// The names and the images of a pod template's containers, comma-separated.
fn container_cells(pod_spec: Option<&Value>) -> (String, String) {
    let containers = pod_spec.and_then(|s| s.get("containers")).and_then(Value::as_array);
    let containers = containers.map(Vec::as_slice).unwrap_or(&[]);
    let names = containers.iter().map(|c| text(c, &["name"])).collect::<Vec<_>>().join(",");
    let images = containers.iter().map(|c| text(c, &["image"])).collect::<Vec<_>>().join(",");
    (names, images)
}

fn go_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

// ---------------------------------------------------------------------------
// Pods.

static POD: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Ready", "string", "", "Ready containers out of all containers of the pod.", 0),
        Col("Status", "string", "", "The pod's phase, or why it is not running.", 0),
        Col("Restarts", "string", "", "Container restarts, and how long ago the last one was.", 0),
        AGE,
        Col("IP", "string", "", "The pod's first IP address.", 1),
        Col("Node", "string", "", "The node the pod is bound to.", 1),
        Col("Nominated Node", "string", "", "The node the scheduler nominated while preempting.", 1),
        Col("Readiness Gates", "string", "", "Readiness gates that are true out of all of them.", 1),
    ],
    print: print_pod,
};

fn pod_row_conditions(pod: &Value) -> Vec<Value> {
    match text(pod, &["status", "phase"]) {
        "Succeeded" => vec![json!({
            "type": "Completed", "status": "True", "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        })],
        "Failed" => vec![json!({
            "type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed.",
        })],
        _ => Vec::new(),
    }
}

fn has_condition(conditions: &[Value], type_: &str) -> bool {
    conditions.iter().any(|c| text(c, &["type"]) == type_ && text(c, &["status"]) == "True")
}

/// The time a container last terminated, if it did.
fn last_termination(status: &Value) -> Option<i128> {
    get(status, &["lastState", "terminated", "finishedAt"]).and_then(Value::as_str).and_then(parse_time)
}

fn later(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn print_pod(pod: &Value, now: SystemTime) -> Vec<Value> {
    let spec_containers = array(pod, &["spec", "containers"]);
    let init_containers = array(pod, &["spec", "initContainers"]);
    let conditions = array(pod, &["status", "conditions"]);
    let is_restartable_init = |container_name: &str| {
        init_containers.iter().any(|c| text(c, &["name"]) == container_name && text(c, &["restartPolicy"]) == "Always")
    };
    let total =
        spec_containers.len() + init_containers.iter().filter(|c| text(c, &["restartPolicy"]) == "Always").count();
    let mut restarts: i64 = 0;
    let mut restartable_init_restarts: i64 = 0;
    let mut ready: usize = 0;
    let mut last_restart: Option<i128> = None;
    let mut last_restartable_init_restart: Option<i128> = None;

    let phase = text(pod, &["status", "phase"]);
    let mut reason = phase.to_string();
    if !text(pod, &["status", "reason"]).is_empty() {
        reason = text(pod, &["status", "reason"]).to_string();
    }
    if conditions.iter().any(|c| text(c, &["type"]) == "PodScheduled" && text(c, &["reason"]) == "SchedulingGated") {
        reason = "SchedulingGated".into();
    }

    let mut initializing = false;
    for (i, status) in array(pod, &["status", "initContainerStatuses"]).iter().enumerate() {
        let restart_count = int(status, &["restartCount"]);
        restarts += restart_count;
        last_restart = later(last_restart, last_termination(status));
        let restartable = is_restartable_init(text(status, &["name"]));
        if restartable {
            restartable_init_restarts += restart_count;
            last_restartable_init_restart = later(last_restartable_init_restart, last_termination(status));
        }
        let terminated = get(status, &["state", "terminated"]).filter(|t| t.is_object());
        let waiting_reason = text(status, &["state", "waiting", "reason"]);
        let started = get(status, &["started"]).and_then(Value::as_bool) == Some(true);
        if terminated.is_some_and(|t| int(t, &["exitCode"]) == 0) {
            continue;
        } else if restartable && started {
            if get(status, &["ready"]).and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        } else if let Some(t) = terminated {
            reason = match text(t, &["reason"]) {
                "" if int(t, &["signal"]) != 0 => format!("Init:Signal:{}", int(t, &["signal"])),
                "" => format!("Init:ExitCode:{}", int(t, &["exitCode"])),
                r => format!("Init:{r}"),
            };
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            reason = format!("Init:{waiting_reason}");
        } else {
            reason = format!("Init:{}/{}", i, init_containers.len());
        }
        initializing = true;
        break;
    }

    if !initializing || has_condition(conditions, "Initialized") {
        restarts = restartable_init_restarts;
        last_restart = last_restartable_init_restart;
        let mut has_running = false;
        for status in array(pod, &["status", "containerStatuses"]).iter().rev() {
            restarts += int(status, &["restartCount"]);
            last_restart = later(last_restart, last_termination(status));
            let waiting_reason = text(status, &["state", "waiting", "reason"]);
            let terminated = get(status, &["state", "terminated"]).filter(|t| t.is_object());
            let running = get(status, &["state", "running"]).is_some_and(|r| r.is_object());
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(t) = terminated {
                reason = match text(t, &["reason"]) {
                    "" if int(t, &["signal"]) != 0 => format!("Signal:{}", int(t, &["signal"])),
                    "" => format!("ExitCode:{}", int(t, &["exitCode"])),
                    r => r.to_string(),
                };
            } else if get(status, &["ready"]).and_then(Value::as_bool) == Some(true) && running {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if has_condition(conditions, "Ready") { "Running".into() } else { "NotReady".into() };
        }
    }

    if is_deleting(pod) && text(pod, &["status", "reason"]) == "NodeLost" {
        reason = "Unknown".into();
    } else if is_deleting(pod) && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".into();
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 && t != ZERO_TIME_NANOS => format!("{restarts} ({} ago)", age(Some(t), now)),
        _ => restarts.to_string(),
    };

    let mut ip = array(pod, &["status", "podIPs"]).first().map(|p| text(p, &["ip"])).unwrap_or("");
    if ip.is_empty() {
        ip = text(pod, &["status", "podIP"]);
    }
    let gates = array(pod, &["spec", "readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let true_gates = gates
            .iter()
            .filter(|g| {
                let wanted = text(g, &["conditionType"]);
                conditions.iter().find(|c| text(c, &["type"]) == wanted).is_some_and(|c| text(c, &["status"]) == "True")
            })
            .count();
        format!("{true_gates}/{}", gates.len())
    };
    vec![
        json!(name(pod)),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts_cell),
        json!(age_of(pod, &["metadata", "creationTimestamp"], now)),
        json!(or_none(ip)),
        json!(or_none(text(pod, &["spec", "nodeName"]))),
        json!(or_none(text(pod, &["status", "nominatedNodeName"]))),
        json!(readiness_gates),
    ]
}

// ---------------------------------------------------------------------------
// Workloads.

static DEPLOYMENT: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Ready", "string", "", "Ready pods out of the desired replicas.", 0),
        Col("Up-to-date", "string", "", "Pods running the latest pod template.", 0),
        Col("Available", "string", "", "Pods available to serve.", 0),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    print: |d, now| {
        let (names, images) = container_cells(get(d, &["spec", "template", "spec"]));
        let selector = selector_string(get(d, &["spec", "selector"])).unwrap_or_else(|| "<invalid>".into());
        vec![
            json!(name(d)),
            json!(format!("{}/{}", int(d, &["status", "readyReplicas"]), int_or(d, &["spec", "replicas"], 1))),
            json!(int(d, &["status", "updatedReplicas"])),
            json!(int(d, &["status", "availableReplicas"])),
            json!(age_of(d, &["metadata", "creationTimestamp"], now)),
            json!(names),
            json!(images),
            json!(selector),
        ]
    },
};

static REPLICASET: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Desired", "integer", "", "Replicas wanted.", 0),
        Col("Current", "integer", "", "Replicas that exist.", 0),
        Col("Ready", "integer", "", "Replicas that are ready.", 0),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    print: |r, now| {
        let (names, images) = container_cells(get(r, &["spec", "template", "spec"]));
        vec![
            json!(name(r)),
            json!(int_or(r, &["spec", "replicas"], 1)),
            json!(int(r, &["status", "replicas"])),
            json!(int(r, &["status", "readyReplicas"])),
            json!(age_of(r, &["metadata", "creationTimestamp"], now)),
            json!(names),
            json!(images),
            json!(format_label_selector(get(r, &["spec", "selector"]))),
        ]
    },
};

static STATEFULSET: Builtin = Builtin {
    columns: &[NAME, Col("Ready", "string", "", "Ready pods out of the desired replicas.", 0), AGE, CONTAINERS, IMAGES],
    print: |s, now| {
        let (names, images) = container_cells(get(s, &["spec", "template", "spec"]));
        vec![
            json!(name(s)),
            json!(format!("{}/{}", int(s, &["status", "readyReplicas"]), int_or(s, &["spec", "replicas"], 1))),
            json!(age_of(s, &["metadata", "creationTimestamp"], now)),
            json!(names),
            json!(images),
        ]
    },
};

static DAEMONSET: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Desired", "integer", "", "Nodes that should run the daemon pod.", 0),
        Col("Current", "integer", "", "Nodes running at least one daemon pod.", 0),
        Col("Ready", "integer", "", "Nodes whose daemon pod is ready.", 0),
        Col("Up-to-date", "integer", "", "Nodes running the latest pod template.", 0),
        Col("Available", "integer", "", "Nodes whose daemon pod is available.", 0),
        Col("Node Selector", "string", "", "Labels a node needs to run the pod.", 0),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    print: |d, now| {
        let (names, images) = container_cells(get(d, &["spec", "template", "spec"]));
        vec![
            json!(name(d)),
            json!(int(d, &["status", "desiredNumberScheduled"])),
            json!(int(d, &["status", "currentNumberScheduled"])),
            json!(int(d, &["status", "numberReady"])),
            json!(int(d, &["status", "updatedNumberScheduled"])),
            json!(int(d, &["status", "numberAvailable"])),
            json!(format_labels(get(d, &["spec", "template", "spec", "nodeSelector"]))),
            json!(age_of(d, &["metadata", "creationTimestamp"], now)),
            json!(names),
            json!(images),
            json!(format_label_selector(get(d, &["spec", "selector"]))),
        ]
    },
};

static JOB: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Status", "string", "", "Whether the job is running, complete, failed or suspended.", 0),
        Col("Completions", "string", "", "Succeeded pods out of the completions wanted.", 0),
        Col("Duration", "string", "", "How long the job ran (or has been running).", 0),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    print: |j, now| {
        let succeeded = int(j, &["status", "succeeded"]);
        let completions = match get(j, &["spec", "completions"]).and_then(Value::as_i64) {
            Some(c) => format!("{succeeded}/{c}"),
            None => match int(j, &["spec", "parallelism"]) {
                p if p > 1 => format!("{succeeded}/1 of {p}"),
                _ => format!("{succeeded}/1"),
            },
        };
        let start = get(j, &["status", "startTime"]).and_then(Value::as_str).and_then(parse_time);
        let completion = get(j, &["status", "completionTime"]).and_then(Value::as_str).and_then(parse_time);
        let duration = match (start, completion) {
            (None, _) => String::new(),
            (Some(s), None) => human_duration(nanos(now) - s),
            (Some(s), Some(c)) => human_duration(c - s),
        };
        let conditions = array(j, &["status", "conditions"]);
        // The first condition of a type decides, as kube's hasJobCondition.
        let has = |t: &str| {
            conditions.iter().find(|c| text(c, &["type"]) == t).is_some_and(|c| text(c, &["status"]) == "True")
        };
        let status = if has("Complete") {
            "Complete"
        } else if has("Failed") {
            "Failed"
        } else if is_deleting(j) {
            "Terminating"
        } else if has("Suspended") {
            "Suspended"
        } else if has("FailureTarget") {
            "FailureTarget"
        } else {
            "Running"
        };
        let (names, images) = container_cells(get(j, &["spec", "template", "spec"]));
        vec![
            json!(name(j)),
            json!(status),
            json!(completions),
            json!(duration),
            json!(age_of(j, &["metadata", "creationTimestamp"], now)),
            json!(names),
            json!(images),
            json!(format_label_selector(get(j, &["spec", "selector"]))),
        ]
    },
};

static CRONJOB: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Schedule", "string", "", "The cron schedule.", 0),
        Col("Timezone", "string", "", "The time zone of the schedule.", 0),
        Col("Suspend", "boolean", "", "Whether new runs are suspended.", 0),
        Col("Active", "integer", "", "Jobs running now.", 0),
        Col("Last Schedule", "string", "", "Time since a job was last scheduled.", 0),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ],
    print: |c, now| {
        let last = match get(c, &["status", "lastScheduleTime"]).and_then(Value::as_str) {
            Some(t) => age(parse_time(t), now),
            None => "<none>".into(),
        };
        let suspend = match get(c, &["spec", "suspend"]).and_then(Value::as_bool) {
            Some(b) => go_bool(b),
            // kube-apiserver defaults suspend to false.
            None => "False",
        };
        let pod_spec = get(c, &["spec", "jobTemplate", "spec", "template", "spec"]);
        let (names, images) = container_cells(pod_spec);
        vec![
            json!(name(c)),
            json!(text(c, &["spec", "schedule"])),
            json!(or_none(text(c, &["spec", "timeZone"]))),
            json!(suspend),
            json!(array(c, &["status", "active"]).len()),
            json!(last),
            json!(age_of(c, &["metadata", "creationTimestamp"], now)),
            json!(names),
            json!(images),
            json!(format_label_selector(get(c, &["spec", "jobTemplate", "spec", "selector"]))),
        ]
    },
};

// ---------------------------------------------------------------------------
// Networking.

static SERVICE: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Type", "string", "", "How the service is exposed.", 0),
        Col("Cluster-IP", "string", "", "The service's virtual IP in the cluster.", 0),
        Col("External-IP", "string", "", "Addresses the service is reachable at from outside.", 0),
        Col("Port(s)", "string", "", "Ports the service exposes (port[:nodePort]/protocol).", 0),
        AGE,
        Col("Selector", "string", "", "Labels of the pods the service sends traffic to.", 1),
    ],
    print: print_service,
};

fn print_service(s: &Value, now: SystemTime) -> Vec<Value> {
    let type_ = match text(s, &["spec", "type"]) {
        "" => "ClusterIP",
        t => t,
    };
    let mut cluster_ip = array(s, &["spec", "clusterIPs"]).first().and_then(Value::as_str).unwrap_or("");
    if cluster_ip.is_empty() {
        cluster_ip = text(s, &["spec", "clusterIP"]);
    }
    let external_ips: Vec<&str> = array(s, &["spec", "externalIPs"]).iter().filter_map(Value::as_str).collect();
    let external = match type_ {
        "ClusterIP" | "NodePort" => or_none(&external_ips.join(",")),
        "LoadBalancer" => {
            let lb: BTreeSet<&str> = array(s, &["status", "loadBalancer", "ingress"])
                .iter()
                .filter_map(|i| match (text(i, &["ip"]), text(i, &["hostname"])) {
                    ("", "") => None,
                    ("", host) => Some(host),
                    (ip, _) => Some(ip),
                })
                .collect();
            let mut all: Vec<&str> = lb.into_iter().collect();
            all.extend(external_ips.iter());
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => text(s, &["spec", "externalName"]).to_string(),
        _ => "<unknown>".into(),
    };
    let ports: Vec<String> = array(s, &["spec", "ports"])
        .iter()
        .map(|p| {
            let protocol = match text(p, &["protocol"]) {
                "" => "TCP",
                x => x,
            };
            match int(p, &["nodePort"]) {
                n if n > 0 => format!("{}:{}/{}", int(p, &["port"]), n, protocol),
                _ => format!("{}/{}", int(p, &["port"]), protocol),
            }
        })
        .collect();
    vec![
        json!(name(s)),
        json!(type_),
        json!(or_none(cluster_ip)),
        json!(external),
        json!(or_none(&ports.join(","))),
        json!(age_of(s, &["metadata", "creationTimestamp"], now)),
        json!(format_labels(get(s, &["spec", "selector"]))),
    ]
}

static ENDPOINTS: Builtin = Builtin {
    columns: &[NAME, Col("Endpoints", "string", "", "Ready addresses and ports, the first three.", 0), AGE],
    print: |e, now| {
        vec![json!(name(e)), json!(format_endpoints(e)), json!(age_of(e, &["metadata", "creationTimestamp"], now))]
    },
};

/// Up to three `ip:port` (or bare IPs for subsets without ports), then
/// "+ N more...".
fn format_endpoints(e: &Value) -> String {
    let subsets = array(e, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0usize;
    for subset in subsets {
        let addresses = array(subset, &["addresses"]);
        let ports = array(subset, &["ports"]);
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(text(a, &["ip"]).to_string());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                let ip = text(a, &["ip"]);
                let port = int(port, &["port"]);
                list.push(if ip.contains(':') { format!("[{ip}]:{port}") } else { format!("{ip}:{port}") });
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

static INGRESS: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Class", "string", "", "The IngressClass that implements the ingress.", 0),
        Col("Hosts", "string", "", "Hosts the rules match, the first three.", 0),
        Col("Address", "string", "", "Addresses of the load balancer.", 0),
        Col("Ports", "string", "", "Ports served: 80, and 443 with TLS.", 0),
        AGE,
    ],
    print: |i, now| {
        let rules = array(i, &["spec", "rules"]);
        let mut hosts: Vec<&str> = Vec::new();
        let mut more = false;
        for rule in rules {
            if hosts.len() == 3 {
                more = true;
            }
            let host = text(rule, &["host"]);
            if !more && !host.is_empty() {
                hosts.push(host);
            }
        }
        let hosts = if hosts.is_empty() {
            "*".to_string()
        } else if more {
            format!("{} + {} more...", hosts.join(","), rules.len() - 3)
        } else {
            hosts.join(",")
        };
        let address: BTreeSet<&str> = array(i, &["status", "loadBalancer", "ingress"])
            .iter()
            .filter_map(|a| match (text(a, &["ip"]), text(a, &["hostname"])) {
                ("", "") => None,
                ("", host) => Some(host),
                (ip, _) => Some(ip),
            })
            .collect();
        let ports = if array(i, &["spec", "tls"]).is_empty() { "80" } else { "80, 443" };
        vec![
            json!(name(i)),
            json!(or_none(text(i, &["spec", "ingressClassName"]))),
            json!(hosts),
            json!(address.into_iter().collect::<Vec<_>>().join(",")),
            json!(ports),
            json!(age_of(i, &["metadata", "creationTimestamp"], now)),
        ]
    },
};

// ---------------------------------------------------------------------------
// Cluster.

static NODE: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Status", "string", "", "Ready or NotReady, and SchedulingDisabled when cordoned.", 0),
        Col("Roles", "string", "", "Roles from the node-role.kubernetes.io/ labels.", 0),
        AGE,
        Col("Version", "string", "", "The kubelet's version.", 0),
        Col("Internal-IP", "string", "", "The node's first internal IP.", 1),
        Col("External-IP", "string", "", "The node's first external IP.", 1),
        Col("OS-Image", "string", "", "The operating system image.", 1),
        Col("Kernel-Version", "string", "", "The kernel version.", 1),
        Col("Container-Runtime", "string", "", "The container runtime and its version.", 1),
    ],
    print: print_node,
};

fn print_node(n: &Value, now: SystemTime) -> Vec<Value> {
    // The last Ready condition wins, as kube's map of conditions by type.
    let ready = array(n, &["status", "conditions"]).iter().rfind(|c| text(c, &["type"]) == "Ready");
    let mut status: Vec<&str> = vec![match ready {
        Some(c) if text(c, &["status"]) == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if get(n, &["spec", "unschedulable"]).and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    let mut roles: BTreeSet<&str> = BTreeSet::new();
    if let Some(labels) = get(n, &["metadata", "labels"]).and_then(Value::as_object) {
        for (k, v) in labels {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.insert(role);
                }
            } else if k == "kubernetes.io/role" {
                if let Some(v) = v.as_str().filter(|v| !v.is_empty()) {
                    roles.insert(v);
                }
            }
        }
    }
    let address = |t: &str| {
        array(n, &["status", "addresses"])
            .iter()
            .find(|a| text(a, &["type"]) == t)
            .map(|a| text(a, &["address"]).to_string())
            .unwrap_or_else(|| "<none>".into())
    };
    let info = |k: &str| match text(n, &["status", "nodeInfo", k]) {
        "" => "<unknown>".to_string(),
        v => v.to_string(),
    };
    vec![
        json!(name(n)),
        json!(status.join(",")),
        json!(or_none(&roles.into_iter().collect::<Vec<_>>().join(","))),
        json!(age_of(n, &["metadata", "creationTimestamp"], now)),
        json!(text(n, &["status", "nodeInfo", "kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

static NAMESPACE: Builtin = Builtin {
    columns: &[NAME, Col("Status", "string", "", "Active, or Terminating while being deleted.", 0), AGE],
    print: |n, now| {
        vec![
            json!(name(n)),
            json!(text(n, &["status", "phase"])),
            json!(age_of(n, &["metadata", "creationTimestamp"], now)),
        ]
    },
};

static CONFIGMAP: Builtin = Builtin {
    columns: &[NAME, Col("Data", "string", "", "Number of keys (data and binaryData).", 0), AGE],
    print: |c, now| {
        vec![
            json!(name(c)),
            json!(object_len(c, &["data"]) + object_len(c, &["binaryData"])),
            json!(age_of(c, &["metadata", "creationTimestamp"], now)),
        ]
    },
};

static SECRET: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Type", "string", "", "The kind of secret.", 0),
        Col("Data", "string", "", "Number of keys.", 0),
        AGE,
    ],
    print: |s, now| {
        // kube-apiserver defaults an empty type to Opaque on create.
        let type_ = match text(s, &["type"]) {
            "" => "Opaque",
            t => t,
        };
        vec![
            json!(name(s)),
            json!(type_),
            json!(object_len(s, &["data"])),
            json!(age_of(s, &["metadata", "creationTimestamp"], now)),
        ]
    },
};

static SERVICEACCOUNT: Builtin = Builtin {
    columns: &[NAME, Col("Secrets", "string", "", "Number of secrets listed for the account.", 0), AGE],
    print: |s, now| {
        vec![
            json!(name(s)),
            json!(array(s, &["secrets"]).len()),
            json!(age_of(s, &["metadata", "creationTimestamp"], now)),
        ]
    },
};

static EVENT: Builtin = Builtin {
    columns: &[
        Col("Last Seen", "string", "", "Time since the event was last seen.", 0),
        Col("Type", "string", "", "Normal or Warning.", 0),
        Col("Reason", "string", "", "Short machine-readable reason.", 0),
        Col("Object", "string", "", "The object the event is about (kind/name).", 0),
        Col("Subobject", "string", "", "The part of the object, such as a container.", 1),
        Col("Source", "string", "", "The component (and host) that reported it.", 1),
        Col("Message", "string", "", "What happened.", 0),
        Col("First Seen", "string", "", "Time since the event was first seen.", 1),
        Col("Count", "string", "", "How many times it happened.", 1),
        Col("Name", "string", "name", "Name of the event object.", 1),
    ],
    print: print_event,
};

fn print_event(e: &Value, now: SystemTime) -> Vec<Value> {
    let time_at = |k: &str| get(e, &[k]).and_then(Value::as_str).and_then(parse_time).filter(|t| *t != ZERO_TIME_NANOS);
    let first = match time_at("firstTimestamp") {
        Some(t) => age(Some(t), now),
        None => age(time_at("eventTime"), now),
    };
    let mut last = match time_at("lastTimestamp") {
        Some(t) => age(Some(t), now),
        None => first.clone(),
    };
    let mut count = int(e, &["count"]);
    if let Some(series) = get(e, &["series"]).filter(|s| s.is_object()) {
        last = age_of(series, &["lastObservedTime"], now);
        count = int(series, &["count"]);
    } else if count == 0 {
        count = 1;
    }
    let kind = text(e, &["involvedObject", "kind"]).to_lowercase();
    let target = match text(e, &["involvedObject", "name"]) {
        "" => kind,
        n => format!("{kind}/{n}"),
    };
    let component = match text(e, &["source", "component"]) {
        "" => text(e, &["reportingComponent"]),
        c => c,
    };
    let host = match text(e, &["source", "host"]) {
        "" => text(e, &["reportingInstance"]),
        h => h,
    };
    let source = if host.is_empty() { component.to_string() } else { format!("{component}, {host}") };
    vec![
        json!(last),
        json!(text(e, &["type"])),
        json!(text(e, &["reason"])),
        json!(target),
        json!(text(e, &["involvedObject", "fieldPath"])),
        json!(source),
        json!(text(e, &["message"]).trim()),
        json!(first),
        json!(count),
        json!(name(e)),
    ]
}

// ---------------------------------------------------------------------------
// Storage.

/// Access modes in kube's short form, in its fixed order.
fn access_modes(modes: &[Value]) -> String {
    let has = |m: &str| modes.iter().any(|v| v.as_str() == Some(m));
    [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")]
        .iter()
        .filter(|(m, _)| has(m))
        .map(|(_, short)| *short)
        .collect::<Vec<_>>()
        .join(",")
}

/// The storage class: the beta annotation first, then spec.storageClassName.
fn storage_class(v: &Value) -> String {
    match get(v, &["metadata", "annotations", "volume.beta.kubernetes.io/storage-class"]).and_then(Value::as_str) {
        Some(class) => class.to_string(),
        None => text(v, &["spec", "storageClassName"]).to_string(),
    }
}

/// A string field, or kube-apiserver's default for it when absent or empty.
fn text_or<'a>(v: &'a Value, path: &[&str], default: &'a str) -> &'a str {
    match text(v, path) {
        "" => default,
        t => t,
    }
}

fn unset_or(v: &Value, path: &[&str]) -> String {
    match get(v, path).and_then(Value::as_str) {
        Some(s) => s.to_string(),
        None => "<unset>".into(),
    }
}

static PERSISTENTVOLUME: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Capacity", "string", "", "The volume's storage capacity.", 0),
        Col("Access Modes", "string", "", "How the volume can be mounted (RWO, ROX, RWX, RWOP).", 0),
        Col("Reclaim Policy", "string", "", "What happens to the volume when released.", 0),
        Col("Status", "string", "", "The volume's phase.", 0),
        Col("Claim", "string", "", "The claim bound to the volume (namespace/name).", 0),
        Col("StorageClass", "string", "", "The volume's storage class.", 0),
        Col("VolumeAttributesClass", "string", "", "The volume's attributes class.", 0),
        Col("Reason", "string", "", "Why the volume is in its phase.", 0),
        AGE,
        Col("VolumeMode", "string", "", "Filesystem or Block.", 1),
    ],
    print: |p, now| {
        let claim = match get(p, &["spec", "claimRef"]).filter(|c| c.is_object()) {
            Some(c) => format!("{}/{}", text(c, &["namespace"]), text(c, &["name"])),
            None => String::new(),
        };
        let phase = if is_deleting(p) { "Terminating" } else { text_or(p, &["status", "phase"], "Pending") };
        vec![
            json!(name(p)),
            json!(text(p, &["spec", "capacity", "storage"])),
            json!(access_modes(array(p, &["spec", "accessModes"]))),
            json!(text_or(p, &["spec", "persistentVolumeReclaimPolicy"], "Retain")),
            json!(phase),
            json!(claim),
            json!(storage_class(p)),
            json!(unset_or(p, &["spec", "volumeAttributesClassName"])),
            json!(text(p, &["status", "reason"])),
            json!(age_of(p, &["metadata", "creationTimestamp"], now)),
            json!(text_or(p, &["spec", "volumeMode"], "Filesystem")),
        ]
    },
};

static PERSISTENTVOLUMECLAIM: Builtin = Builtin {
    columns: &[
        NAME,
        Col("Status", "string", "", "The claim's phase.", 0),
        Col("Volume", "string", "", "The volume bound to the claim.", 0),
        Col("Capacity", "string", "", "The bound volume's capacity.", 0),
        Col("Access Modes", "string", "", "How the bound volume can be mounted.", 0),
        Col("StorageClass", "string", "", "The claim's storage class.", 0),
        Col("VolumeAttributesClass", "string", "", "The claim's attributes class.", 0),
        AGE,
        Col("VolumeMode", "string", "", "Filesystem or Block.", 1),
    ],
    print: |p, now| {
        let phase = if is_deleting(p) { "Terminating" } else { text_or(p, &["status", "phase"], "Pending") };
        let volume = text(p, &["spec", "volumeName"]);
        let (capacity, modes) = if volume.is_empty() {
            (String::new(), String::new())
        } else {
            (
                text(p, &["status", "capacity", "storage"]).to_string(),
                access_modes(array(p, &["status", "accessModes"])),
            )
        };
        vec![
            json!(name(p)),
            json!(phase),
            json!(volume),
            json!(capacity),
            json!(modes),
            json!(storage_class(p)),
            json!(unset_or(p, &["spec", "volumeAttributesClassName"])),
            json!(age_of(p, &["metadata", "creationTimestamp"], now)),
            json!(text_or(p, &["spec", "volumeMode"], "Filesystem")),
        ]
    },
};

// ---------------------------------------------------------------------------
// RBAC and coordination.

const BINDING_COLUMNS: &[Col] = &[
    NAME,
    Col("Role", "string", "", "The role granted (Kind/name).", 0),
    AGE,
    Col("Users", "string", "", "Users the binding grants the role to.", 1),
    Col("Groups", "string", "", "Groups the binding grants the role to.", 1),
    Col("ServiceAccounts", "string", "", "Service accounts (namespace/name) it grants the role to.", 1),
];

fn print_binding(b: &Value, now: SystemTime) -> Vec<Value> {
    let mut users = Vec::new();
    let mut groups = Vec::new();
    let mut service_accounts = Vec::new();
    for subject in array(b, &["subjects"]) {
        match text(subject, &["kind"]) {
            "User" => users.push(text(subject, &["name"]).to_string()),
            "Group" => groups.push(text(subject, &["name"]).to_string()),
            "ServiceAccount" => {
                service_accounts.push(format!("{}/{}", text(subject, &["namespace"]), text(subject, &["name"])))
            }
            _ => {}
        }
    }
    vec![
        json!(name(b)),
        json!(format!("{}/{}", text(b, &["roleRef", "kind"]), text(b, &["roleRef", "name"]))),
        json!(age_of(b, &["metadata", "creationTimestamp"], now)),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(service_accounts.join(", ")),
    ]
}

static ROLEBINDING: Builtin = Builtin { columns: BINDING_COLUMNS, print: print_binding };
static CLUSTERROLEBINDING: Builtin = Builtin { columns: BINDING_COLUMNS, print: print_binding };

static LEASE: Builtin = Builtin {
    columns: &[NAME, Col("Holder", "string", "", "Who holds the lease.", 0), AGE],
    print: |l, now| {
        vec![
            json!(name(l)),
            json!(text(l, &["spec", "holderIdentity"])),
            json!(age_of(l, &["metadata", "creationTimestamp"], now)),
        ]
    },
};

#[path = "printers_groups.rs"]
mod groups;

#[cfg(test)]
#[path = "printers_tests.rs"]
mod tests;
