//! kube's `ValidatePodSpec` and what it calls (volumes, containers, probes,
//! resources, security contexts, tolerations, affinity, DNS), for Pods and
//! for the pod templates workloads embed
//! (`pkg/apis/core/validation/validation.go`).
//!
//! Fields that kube's defaulting always fills (restartPolicy, dnsPolicy,
//! imagePullPolicy, terminationMessagePolicy, ports' protocol,
//! terminationGracePeriodSeconds, probes' thresholds, ...) are checked when
//! present; when absent they are taken as defaulted, so kube's `Required`
//! for them (unreachable through kube's API) is not raised here.

use super::quantity::nano_value;
use super::util::*;
use crate::types::validation::{
    inclusive_range_error, is_config_map_key, is_relaxed_env_var_name, is_valid_ip, is_valid_label_value,
    is_valid_port_name, is_valid_port_num, regex_error_message, validate_label_name, validate_label_selector,
    validate_labels_at, FieldError, NameRule, INVALID_IP_MSG,
};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

type Errs = Vec<FieldError>;

/// kube's `PodValidationOptions` that matter here.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodOptions {
    /// The spec is a Pod's, not a template's (`ResourceIsPod`).
    pub resource_is_pod: bool,
}

/// The volume sources of `VolumeSource`, in kube's check order: the JSON
/// key and the path kube names in "may not specify more than 1 volume type".
const VOLUME_SOURCES: &[(&str, &str)] = &[
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    // kube's path has this typo.
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
];

/// Sources whose validation is only required fields: (JSON key, the path
/// kube uses for its errors, required string or list fields).
const SIMPLE_SOURCES: &[(&str, &str, &[&str])] = &[
    ("gitRepo", "gitRepo", &["repository"]),
    // kube validates gcePersistentDisk under the path `persistentDisk`.
    ("gcePersistentDisk", "persistentDisk", &["pdName"]),
    ("awsElasticBlockStore", "awsElasticBlockStore", &["volumeID"]),
    ("iscsi", "iscsi", &["targetPortal", "iqn"]),
    ("glusterfs", "glusterfs", &["endpoints", "path"]),
    ("rbd", "rbd", &["monitors", "image"]),
    ("cinder", "cinder", &["volumeID"]),
    ("cephfs", "cephfs", &["monitors"]),
    ("quobyte", "quobyte", &["volume"]),
    ("flexVolume", "flexVolume", &["driver"]),
    ("azureFile", "azureFile", &["secretName", "shareName"]),
    ("vsphereVolume", "vsphereVolume", &["volumePath"]),
    ("photonPersistentDisk", "photonPersistentDisk", &["pdID"]),
    ("portworxVolume", "portworxVolume", &["volumeID"]),
    ("azureDisk", "azureDisk", &["diskName", "diskURI"]),
    ("scaleIO", "scaleIO", &["gateway", "system", "volumeName"]),
];

const FILE_MODE_MSG: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// kube's `ValidatePodSpec` of `spec` at `path` (`spec`,
/// `spec.template.spec`).
pub fn pod_spec(spec: &Value, path: &str, opts: PodOptions) -> Errs {
    let mut errs = Errs::new();
    let grace = int(spec, "terminationGracePeriodSeconds");
    let (volumes, volume_errs) = validate_volumes(list(spec, "volumes"), &child(path, "volumes"), opts);
    errs.extend(volume_errs);
    let restart_policy = text(spec, "restartPolicy");
    errs.extend(containers(spec, &volumes, grace, path, restart_policy));
    errs.extend(init_containers(spec, &volumes, grace, path, restart_policy));
    errs.extend(pod_level_resources(spec, &child(path, "resources")));
    errs.extend(host_network_deps(spec, path, opts));
    errs.extend(supported_if_set(
        spec.get("restartPolicy"),
        &child(path, "restartPolicy"),
        &["Always", "OnFailure", "Never"],
    ));
    errs.extend(supported_if_set(
        spec.get("dnsPolicy"),
        &child(path, "dnsPolicy"),
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    ));
    errs.extend(validate_labels_at(&child(path, "nodeSelector"), string_map(spec, "nodeSelector")));
    errs.extend(pod_security_context(spec, &child(path, "securityContext")));
    errs.extend(affinity(spec.get("affinity"), &child(path, "affinity")));
    errs.extend(dns_config(spec, &child(path, "dnsConfig")));
    for (i, gate) in list(spec, "readinessGates").iter().enumerate() {
        let field = child(&index(&child(path, "readinessGates"), i), "conditionType");
        errs.extend(qualified_name(&field, text(gate, "conditionType")));
    }
    errs.extend(scheduling_gates(list(spec, "schedulingGates"), &child(path, "schedulingGates")));
    errs.extend(topology_spread(list(spec, "topologySpreadConstraints"), &child(path, "topologySpreadConstraints")));
    errs.extend(host_users(spec, path));
    errs.extend(names_and_scalars(spec, path));
    errs.extend(tolerations(list(spec, "tolerations"), &child(path, "tolerations")));
    for (i, alias) in list(spec, "hostAliases").iter().enumerate() {
        let alias_path = index(&child(path, "hostAliases"), i);
        let ip = text(alias, "ip");
        if !is_valid_ip(ip) {
            errs.push(FieldError::invalid(&child(&alias_path, "ip"), ip, INVALID_IP_MSG));
        }
        for (j, host) in list(alias, "hostnames").iter().enumerate() {
            let field = index(&child(&alias_path, "hostnames"), j);
            errs.extend(dns1123_subdomain(&field, host.as_str().unwrap_or("")));
        }
    }
    errs.extend(class_names(spec, path));
    errs.extend(preemption_and_os(spec, path));
    errs
}

/// kube's `validateHostUsers`: a user namespace excludes the host's
/// network, PID and IPC namespaces (kube's paths, capitals included).
fn host_users(spec: &Value, path: &str) -> Errs {
    if spec.get("hostUsers").and_then(Value::as_bool) != Some(false) {
        return Vec::new();
    }
    let msg = "when `pod.Spec.HostUsers` is false";
    [("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")]
        .iter()
        .filter(|(field, _)| flag(spec, field))
        .map(|(_, name)| FieldError::forbidden(&child(path, name), msg))
        .collect()
}

/// kube's `validatePodResources` (PodLevelResources is on): no claims, the
/// resource names and quantities, requests within limits.
fn pod_level_resources(spec: &Value, path: &str) -> Errs {
    let Some(resources) = spec.get("resources").filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    if has(resources, "claims") {
        errs.push(FieldError::forbidden(&child(path, "claims"), "claims cannot be set for Resources at pod-level"));
    }
    let limits = obj(resources, "limits");
    for (field, entries) in [("limits", limits), ("requests", obj(resources, "requests"))] {
        let list_path = child(path, field);
        for (name, quantity) in entries {
            let entry_path = key(&list_path, name);
            if !["cpu", "memory"].contains(&name.as_str()) && !name.starts_with("hugepages-") {
                let qualified = crate::types::validation::is_qualified_name(name);
                let standard = STANDARD_RESOURCES.contains(&name.as_str()) || name.starts_with("requests.hugepages-");
                if !qualified.is_empty() {
                    errs.extend(qualified.iter().map(|m| FieldError::invalid(&entry_path, name, m)));
                } else if !name.contains('/') && !standard {
                    let msg = "must be a standard resource type or fully qualified";
                    errs.push(FieldError::invalid(&entry_path, name, msg));
                } else {
                    errs.push(FieldError::not_supported(&entry_path, name, &["cpu", "hugepages-", "memory"]));
                }
                continue;
            }
            errs.extend(resource_quantity(name, quantity, &entry_path));
            if field == "requests" {
                errs.extend(request_within_limit(name, quantity, limits, &list_path, &child(path, "limits")));
            }
        }
    }
    errs
}

/// The `NotSupported` check of an enum field that defaulting fills.
fn supported_if_set(value: Option<&Value>, field: &str, supported: &[&str]) -> Errs {
    match value.and_then(Value::as_str) {
        Some(v) if !v.is_empty() && !supported.contains(&v) => vec![FieldError::not_supported(field, v, supported)],
        _ => Vec::new(),
    }
}

/// serviceAccountName, nodeName, activeDeadlineSeconds, hostname,
/// subdomain.
fn names_and_scalars(spec: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    // v1's deprecated serviceAccount stands in for an empty serviceAccountName.
    let service_account = match text(spec, "serviceAccountName") {
        "" => text(spec, "serviceAccount"),
        name => name,
    };
    if !service_account.is_empty() {
        errs.extend(dns1123_subdomain(&child(path, "serviceAccountName"), service_account));
    }
    let node = text(spec, "nodeName");
    if !node.is_empty() {
        errs.extend(dns1123_subdomain(&child(path, "nodeName"), node));
    }
    if let Some(deadline) = int(spec, "activeDeadlineSeconds") {
        if !(1..=i64::from(i32::MAX)).contains(&deadline) {
            let msg = inclusive_range_error(1, i64::from(i32::MAX));
            errs.push(invalid_int(&child(path, "activeDeadlineSeconds"), deadline, &msg));
        }
    }
    for field in ["hostname", "subdomain"] {
        let value = text(spec, field);
        if !value.is_empty() {
            errs.extend(dns1123_label(&child(path, field), value));
        }
    }
    errs
}

/// priorityClassName and runtimeClassName.
fn class_names(spec: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    let priority_class = text(spec, "priorityClassName");
    if !priority_class.is_empty() {
        errs.extend(dns1123_subdomain(&child(path, "priorityClassName"), priority_class));
    }
    if has(spec, "runtimeClassName") {
        errs.extend(dns1123_subdomain(&child(path, "runtimeClassName"), text(spec, "runtimeClassName")));
    }
    errs
}

/// preemptionPolicy and os.
fn preemption_and_os(spec: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    if let Some(policy) = spec.get("preemptionPolicy").and_then(Value::as_str) {
        let field = child(path, "preemptionPolicy");
        if policy.is_empty() {
            errs.push(FieldError::required(&field, ""));
        } else if !["PreemptLowerPriority", "Never"].contains(&policy) {
            errs.push(FieldError::not_supported(&field, policy, &["PreemptLowerPriority", "Never"]));
        }
    }
    if let Some(os) = spec.get("os").filter(|v| v.is_object()) {
        let name = text(os, "name");
        if name.is_empty() {
            errs.push(FieldError::required(&child(&child(path, "os"), "name"), "cannot be empty"));
        } else if !["linux", "windows"].contains(&name) {
            errs.push(FieldError::not_supported(&child(path, "os"), name, &["linux", "windows"]));
        } else if name == "linux" {
            errs.extend(linux_only(spec, path));
        } else {
            errs.extend(windows_only(spec, path));
        }
    }
    errs
}

/// kube's `validateLinux`: no Windows options in a Linux pod.
fn linux_only(spec: &Value, path: &str) -> Errs {
    let msg = "windows options cannot be set for a linux pod";
    let mut errs = Errs::new();
    if spec.pointer("/securityContext/windowsOptions").is_some_and(|v| !v.is_null()) {
        errs.push(FieldError::forbidden(&child(&child(path, "securityContext"), "windowsOptions"), msg));
    }
    for (container_path, container) in all_containers(spec, path) {
        if container.pointer("/securityContext/windowsOptions").is_some_and(|v| !v.is_null()) {
            errs.push(FieldError::forbidden(&child(&child(&container_path, "securityContext"), "windowsOptions"), msg));
        }
    }
    errs
}

/// `podshelper.VisitContainersWithPath`: init containers, containers, then
/// ephemeral containers, with their paths.
fn all_containers<'a>(spec: &'a Value, path: &str) -> Vec<(String, &'a Value)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|kind| list(spec, kind).iter().enumerate().map(move |(i, c)| (index(&child(path, kind), i), c)))
        .collect()
}

/// kube's `validateWindows`: the Linux-only security settings are refused
/// in a Windows pod.
fn windows_only(spec: &Value, path: &str) -> Errs {
    let msg = "cannot be set for a windows pod";
    let mut errs = Errs::new();
    let sc_path = child(path, "securityContext");
    let sc = spec.get("securityContext").filter(|v| v.is_object());
    let sc_set = |field: &str| sc.and_then(|sc| sc.get(field)).is_some_and(|v| !v.is_null());
    // kube's order; hostUsers, hostPID, hostIPC and shareProcessNamespace
    // live in v1's pod spec (kube's internal security context).
    for field in ["appArmorProfile", "seLinuxOptions"] {
        if sc_set(field) {
            errs.push(FieldError::forbidden(&child(&sc_path, field), msg));
        }
    }
    if has(spec, "hostUsers") {
        errs.push(FieldError::forbidden(&child(path, "hostUsers"), msg));
    }
    for field in ["hostPID", "hostIPC"] {
        if flag(spec, field) {
            errs.push(FieldError::forbidden(&child(path, field), msg));
        }
    }
    for field in ["seccompProfile", "fsGroup", "fsGroupChangePolicy"] {
        if sc_set(field) {
            errs.push(FieldError::forbidden(&child(&sc_path, field), msg));
        }
    }
    if sc.is_some_and(|sc| !list(sc, "sysctls").is_empty()) {
        errs.push(FieldError::forbidden(&child(&sc_path, "sysctls"), msg));
    }
    if has(spec, "shareProcessNamespace") {
        errs.push(FieldError::forbidden(&child(path, "shareProcessNamespace"), msg));
    }
    for field in ["runAsUser", "runAsGroup", "supplementalGroups", "supplementalGroupsPolicy", "seLinuxChangePolicy"] {
        if sc_set(field) {
            errs.push(FieldError::forbidden(&child(&sc_path, field), msg));
        }
    }
    const CONTAINER_FIELDS: &[&str] = &[
        "appArmorProfile",
        "seLinuxOptions",
        "seccompProfile",
        "capabilities",
        "readOnlyRootFilesystem",
        "privileged",
        "allowPrivilegeEscalation",
        "procMount",
        "runAsUser",
        "runAsGroup",
    ];
    for (container_path, container) in all_containers(spec, path) {
        let Some(sc) = container.get("securityContext").filter(|v| v.is_object()) else {
            continue;
        };
        for field in CONTAINER_FIELDS {
            if sc.get(*field).is_some_and(|v| !v.is_null()) {
                errs.push(FieldError::forbidden(&child(&child(&container_path, "securityContext"), field), msg));
            }
        }
    }
    errs
}

// ---------------------------------------------------------------- volumes

/// kube's `ValidateVolumes`: the valid volumes by name (with their source
/// key), and the errors.
fn validate_volumes(volumes: &[Value], path: &str, opts: PodOptions) -> (HashMap<String, &'static str>, Errs) {
    let mut errs = Errs::new();
    let mut valid: HashMap<String, &'static str> = HashMap::new();
    let mut names: HashSet<&str> = HashSet::new();
    for (i, volume) in volumes.iter().enumerate() {
        let volume_path = index(path, i);
        let name = text(volume, "name");
        let (source, mut volume_errs) = volume_source(volume, &volume_path, opts);
        let name_path = child(&volume_path, "name");
        if name.is_empty() {
            volume_errs.push(FieldError::required(&name_path, ""));
        } else {
            volume_errs.extend(dns1123_label(&name_path, name));
        }
        if names.contains(name) {
            volume_errs.push(FieldError::duplicate(&name_path, name));
        }
        if volume_errs.is_empty() {
            names.insert(name);
            valid.insert(name.to_string(), source.unwrap_or(""));
        } else {
            errs.extend(volume_errs);
        }
    }
    (valid, errs)
}

/// kube's `validateVolumeSource`: exactly one source, each validated.
fn volume_source(volume: &Value, path: &str, opts: PodOptions) -> (Option<&'static str>, Errs) {
    let mut errs = Errs::new();
    let mut found: Option<&'static str> = None;
    for (key, forbidden_name) in VOLUME_SOURCES {
        let Some(source) = volume.get(*key).filter(|v| !v.is_null()) else {
            continue;
        };
        if found.is_some() {
            errs.push(FieldError::forbidden(&child(path, forbidden_name), "may not specify more than 1 volume type"));
            continue;
        }
        found = Some(key);
        errs.extend(one_volume_source(key, source, path, opts));
    }
    if found.is_none() {
        errs.push(FieldError::required(path, "must specify a volume type"));
    }
    (found, errs)
}

/// The checks of one volume source.
fn one_volume_source(key: &str, source: &Value, path: &str, opts: PodOptions) -> Errs {
    if let Some((_, error_path, required)) = SIMPLE_SOURCES.iter().find(|(k, _, _)| *k == key) {
        let source_path = child(path, error_path);
        return required
            .iter()
            .filter(|field| match source.get(**field) {
                Some(Value::String(s)) => s.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                _ => true,
            })
            .map(|field| FieldError::required(&child(&source_path, field), ""))
            .collect();
    }
    let source_path = child(path, key);
    match key {
        "emptyDir" => empty_dir(source, &source_path),
        "hostPath" => host_path(source, &source_path),
        "secret" => projected_like(source, &source_path, "secretName"),
        "configMap" => projected_like(source, &source_path, "name"),
        "persistentVolumeClaim" => required_text(source, &source_path, "claimName"),
        "nfs" => nfs(source, &source_path),
        "downwardAPI" => downward_api_volume(source, &source_path),
        "projected" => projected(source, &source_path),
        "csi" => csi_driver(text(source, "driver"), &child(&source_path, "driver")),
        "ephemeral" => {
            if has(source, "volumeClaimTemplate") {
                Vec::new()
            } else {
                vec![FieldError::required(&child(&source_path, "volumeClaimTemplate"), "")]
            }
        }
        "image" => {
            let mut errs = Errs::new();
            if opts.resource_is_pod && text(source, "reference").is_empty() {
                errs.push(FieldError::required(&child(&source_path, "reference"), ""));
            }
            errs.extend(pull_policy(source.get("pullPolicy"), &child(&source_path, "pullPolicy")));
            errs
        }
        _ => Vec::new(),
    }
}

fn required_text(source: &Value, path: &str, field: &str) -> Errs {
    if text(source, field).is_empty() {
        vec![FieldError::required(&child(path, field), "")]
    } else {
        Vec::new()
    }
}

fn empty_dir(source: &Value, path: &str) -> Errs {
    match source.get("sizeLimit").and_then(Value::as_str).and_then(nano_value) {
        Some(v) if v < 0 => {
            vec![FieldError::forbidden(&child(path, "sizeLimit"), "SizeLimit field must be a valid resource quantity")]
        }
        _ => Vec::new(),
    }
}

fn host_path(source: &Value, path: &str) -> Errs {
    let host = text(source, "path");
    if host.is_empty() {
        return vec![FieldError::required(&child(path, "path"), "")];
    }
    let mut errs = no_backsteps(host, &child(path, "path"));
    if let Some(kind) = source.get("type").and_then(Value::as_str) {
        const TYPES: &[&str] =
            &["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"];
        if !TYPES.contains(&kind) {
            errs.push(FieldError::not_supported(&child(path, "type"), kind, TYPES));
        }
    }
    errs
}

fn nfs(source: &Value, path: &str) -> Errs {
    let mut errs = required_text(source, path, "server");
    let nfs_path = text(source, "path");
    if nfs_path.is_empty() {
        errs.push(FieldError::required(&child(path, "path"), ""));
    }
    if !nfs_path.starts_with('/') {
        errs.push(FieldError::invalid(&child(path, "path"), nfs_path, "must be an absolute path"));
    }
    errs
}

/// Secret and ConfigMap volumes: the name, `defaultMode`, `items`.
fn projected_like(source: &Value, path: &str, name_field: &str) -> Errs {
    let mut errs = required_text(source, path, name_field);
    errs.extend(file_mode(source, "defaultMode", path));
    for (i, item) in list(source, "items").iter().enumerate() {
        errs.extend(key_to_path(item, &index(&child(path, "items"), i)));
    }
    errs
}

fn file_mode(source: &Value, field: &str, path: &str) -> Errs {
    match int(source, field) {
        Some(mode) if !(0..=0o777).contains(&mode) => vec![invalid_int(&child(path, field), mode, FILE_MODE_MSG)],
        _ => Vec::new(),
    }
}

/// kube's `validateKeyToPath`.
fn key_to_path(item: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    if text(item, "key").is_empty() {
        errs.push(FieldError::required(&child(path, "key"), ""));
    }
    let target = text(item, "path");
    if target.is_empty() {
        errs.push(FieldError::required(&child(path, "path"), ""));
    }
    errs.extend(local_non_reserved_path(target, &child(path, "path")));
    errs.extend(file_mode(item, "mode", path));
    errs
}

fn downward_api_volume(source: &Value, path: &str) -> Errs {
    let mut errs = file_mode(source, "defaultMode", path);
    for item in list(source, "items") {
        errs.extend(downward_api_file(item, path));
    }
    errs
}

/// kube's `validateDownwardAPIVolumeFile` (errors at the volume's path).
fn downward_api_file(item: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    let target = text(item, "path");
    if target.is_empty() {
        errs.push(FieldError::required(&child(path, "path"), ""));
    }
    errs.extend(local_non_reserved_path(target, &child(path, "path")));
    if let Some(field_ref) = item.get("fieldRef").filter(|v| v.is_object()) {
        const VOLUME_FIELDS: &[&str] =
            &["metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"];
        errs.extend(object_field_selector(field_ref, VOLUME_FIELDS, &child(path, "fieldRef")));
        if has(item, "resourceFieldRef") {
            errs.push(FieldError::invalid(
                path,
                "resource",
                "fieldRef and resourceFieldRef can not be specified simultaneously",
            ));
        }
    } else if let Some(resource_ref) = item.get("resourceFieldRef").filter(|v| v.is_object()) {
        errs.extend(resource_field_selector(resource_ref, &child(path, "resourceFieldRef"), true));
    } else {
        errs.push(FieldError::required(path, "one of fieldRef and resourceFieldRef is required"));
    }
    errs.extend(file_mode(item, "mode", path));
    errs
}

/// kube's `validateProjectedVolumeSource` (the common source kinds).
fn projected(source: &Value, path: &str) -> Errs {
    let mut errs = file_mode(source, "defaultMode", path);
    let mut paths: HashSet<String> = HashSet::new();
    for (i, one) in list(source, "sources").iter().enumerate() {
        let source_path = index(&child(path, "sources"), i);
        let mut count = 0;
        for kind in ["secret", "configMap"] {
            let Some(inner) = one.get(kind).filter(|v| v.is_object()) else {
                continue;
            };
            count += 1;
            let inner_path = child(&source_path, kind);
            errs.extend(required_text(inner, &inner_path, "name"));
            for (j, item) in list(inner, "items").iter().enumerate() {
                errs.extend(key_to_path(item, &index(&child(&inner_path, "items"), j)));
                let target = text(item, "path");
                if !target.is_empty() && !paths.insert(target.to_string()) {
                    errs.push(FieldError::invalid(path, text(inner, "name"), "conflicting duplicate paths"));
                }
            }
        }
        if let Some(inner) = one.get("downwardAPI").filter(|v| v.is_object()) {
            count += 1;
            let inner_path = child(&source_path, "downwardAPI");
            for item in list(inner, "items") {
                errs.extend(downward_api_file(item, &inner_path));
                let target = text(item, "path");
                if !target.is_empty() && !paths.insert(target.to_string()) {
                    errs.push(FieldError::invalid(path, target, "conflicting duplicate paths"));
                }
            }
        }
        if let Some(token) = one.get("serviceAccountToken").filter(|v| v.is_object()) {
            count += 1;
            errs.extend(service_account_token(token, &child(&source_path, "serviceAccountToken"), path));
        }
        if one.get("clusterTrustBundle").is_some_and(Value::is_object) {
            count += 1;
        }
        if count > 1 {
            errs.push(FieldError::forbidden(&source_path, "may not specify more than 1 volume type per source"));
        }
    }
    errs
}

fn service_account_token(token: &Value, token_path: &str, volume_path: &str) -> Errs {
    let mut errs = Errs::new();
    if let Some(seconds) = int(token, "expirationSeconds") {
        let field = child(token_path, "expirationSeconds");
        if seconds < 600 {
            errs.push(invalid_int(&field, seconds, "may not specify a duration less than 10 minutes"));
        }
        if seconds > 1 << 32 {
            errs.push(invalid_int(&field, seconds, "may not specify a duration larger than 2^32 seconds"));
        }
    }
    let target = text(token, "path");
    if target.is_empty() {
        errs.push(FieldError::required(&child(volume_path, "path"), ""));
    } else {
        errs.extend(local_non_reserved_path(target, &child(volume_path, "path")));
    }
    errs
}

/// kube's `ValidateCSIDriverName`.
pub fn csi_driver(driver: &str, field: &str) -> Errs {
    let mut errs = Errs::new();
    if driver.is_empty() {
        errs.push(FieldError::required(field, ""));
    }
    if driver.len() > 63 {
        errs.push(FieldError::new(
            field,
            crate::types::validation::FieldErrorType::TooLong,
            None,
            "may not be more than 63 bytes",
        ));
    }
    for msg in crate::types::validation::is_dns1123_subdomain(&driver.to_lowercase()) {
        errs.push(FieldError::invalid(field, driver, &msg));
    }
    errs
}

/// kube's `validatePathNoBacksteps`.
fn no_backsteps(target: &str, field: &str) -> Errs {
    if target.replace('\\', "/").split('/').any(|part| part == "..") {
        vec![FieldError::invalid(field, target, "must not contain '..'")]
    } else {
        Vec::new()
    }
}

/// kube's `validateLocalDescendingPath`.
fn local_descending_path(target: &str, field: &str) -> Errs {
    let mut errs = Errs::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(field, target, "must be a relative path"));
    }
    errs.extend(no_backsteps(target, field));
    errs
}

/// kube's `ValidateLocalNonReservedPath`.
fn local_non_reserved_path(target: &str, field: &str) -> Errs {
    let mut errs = local_descending_path(target, field);
    if target.starts_with("..") && !target.starts_with("../") {
        errs.push(FieldError::invalid(field, target, "must not start with '..'"));
    }
    errs
}

// ------------------------------------------------------------- containers

/// kube's `validateContainers` (regular containers).
fn containers(
    spec: &Value,
    volumes: &HashMap<String, &'static str>,
    grace: Option<i64>,
    path: &str,
    restart_policy: &str,
) -> Errs {
    let path = child(path, "containers");
    let items = list(spec, "containers");
    if items.is_empty() {
        return vec![FieldError::required(&path, "")];
    }
    let mut errs = Errs::new();
    let mut names: HashSet<&str> = HashSet::new();
    for (i, container) in items.iter().enumerate() {
        let container_path = index(&path, i);
        errs.extend(container_common(container, volumes, &container_path, restart_policy));
        let name = text(container, "name");
        if !names.insert(name) {
            errs.push(FieldError::duplicate(&child(&container_path, "name"), name));
        }
        errs.extend(lifecycle_and_probes(container, grace, &container_path));
        if has(container, "restartPolicy") {
            errs.push(FieldError::forbidden(
                &child(&container_path, "restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    errs.extend(host_port_conflicts(items, &path));
    errs
}

/// kube's `validateInitContainers`.
fn init_containers(
    spec: &Value,
    volumes: &HashMap<String, &'static str>,
    grace: Option<i64>,
    path: &str,
    restart_policy: &str,
) -> Errs {
    let path = child(path, "initContainers");
    let mut errs = Errs::new();
    let mut names: HashSet<&str> = list(spec, "containers").iter().map(|c| text(c, "name")).collect();
    for (i, container) in list(spec, "initContainers").iter().enumerate() {
        let container_path = index(&path, i);
        errs.extend(container_common(container, volumes, &container_path, restart_policy));
        let mut restart_always = false;
        if let Some(policy) = container.get("restartPolicy").and_then(Value::as_str) {
            if policy != "Always" {
                errs.push(FieldError::not_supported(&child(&container_path, "restartPolicy"), policy, &["Always"]));
            }
            restart_always = policy == "Always";
        }
        let name = text(container, "name");
        if names.contains(name) {
            errs.push(FieldError::duplicate(&child(&container_path, "name"), name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        errs.extend(host_port_conflicts(std::slice::from_ref(container), &path));
        if restart_always {
            errs.extend(lifecycle_and_probes(container, grace, &container_path));
        } else {
            for field in ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"] {
                if has(container, field) {
                    errs.push(FieldError::forbidden(
                        &child(&container_path, field),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    errs
}

/// lifecycle and the three probes of a container that may have them.
fn lifecycle_and_probes(container: &Value, grace: Option<i64>, path: &str) -> Errs {
    let mut errs = Errs::new();
    if let Some(lifecycle) = container.get("lifecycle").filter(|v| v.is_object()) {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = lifecycle.get(hook).filter(|v| v.is_object()) {
                errs.extend(validate_handler(handler, grace, &child(&child(path, "lifecycle"), hook), true));
            }
        }
    }
    for (field, kind) in [("livenessProbe", 'l'), ("readinessProbe", 'r'), ("startupProbe", 's')] {
        let Some(probe) = container.get(field).filter(|v| v.is_object()) else {
            continue;
        };
        let probe_path = child(path, field);
        errs.extend(validate_probe(probe, grace, &probe_path));
        if kind == 'r' {
            if let Some(seconds) = int(probe, "terminationGracePeriodSeconds") {
                errs.push(invalid_int(
                    &child(&probe_path, "terminationGracePeriodSeconds"),
                    seconds,
                    "must not be set for readinessProbes",
                ));
            }
        } else if let Some(threshold) = int(probe, "successThreshold").filter(|t| *t != 1) {
            errs.push(invalid_int(&child(&probe_path, "successThreshold"), threshold, "must be 1"));
        }
    }
    errs
}

/// kube's `validateProbe`.
fn validate_probe(probe: &Value, grace: Option<i64>, path: &str) -> Errs {
    let mut errs = validate_handler(probe, grace, path, false);
    for field in ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"] {
        errs.extend(nonnegative(&child(path, field), int(probe, field)));
    }
    if let Some(seconds) = int(probe, "terminationGracePeriodSeconds").filter(|s| *s <= 0) {
        errs.push(invalid_int(&child(path, "terminationGracePeriodSeconds"), seconds, "must be greater than 0"));
    }
    errs
}

/// kube's `validateHandler`: exactly one of exec, httpGet, tcpSocket, grpc
/// (probes) or sleep (lifecycle hooks).
fn validate_handler(handler: &Value, grace: Option<i64>, path: &str, lifecycle: bool) -> Errs {
    let kinds: &[&str] =
        if lifecycle { &["exec", "httpGet", "tcpSocket", "sleep"] } else { &["exec", "httpGet", "tcpSocket", "grpc"] };
    let mut errs = Errs::new();
    let mut count = 0;
    for kind in kinds {
        let Some(action) = handler.get(*kind).filter(|v| v.is_object()) else {
            continue;
        };
        let action_path = child(path, kind);
        if count > 0 {
            errs.push(FieldError::forbidden(&action_path, "may not specify more than 1 handler type"));
            continue;
        }
        count += 1;
        errs.extend(match *kind {
            "exec" if list(action, "command").is_empty() => {
                vec![FieldError::required(&child(&action_path, "command"), "")]
            }
            "httpGet" => http_get(action, &action_path),
            "tcpSocket" | "grpc" => port_num_or_name(action.get("port"), &child(&action_path, "port")),
            "sleep" => sleep_action(action, grace, &action_path),
            _ => Vec::new(),
        });
    }
    if count == 0 {
        errs.push(FieldError::required(path, "must specify a handler type"));
    }
    errs
}

fn http_get(action: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    if action.get("path").is_some_and(|p| p.as_str() == Some("")) {
        errs.push(FieldError::required(&child(path, "path"), ""));
    }
    errs.extend(port_num_or_name(action.get("port"), &child(path, "port")));
    errs.extend(supported_if_set(action.get("scheme"), &child(path, "scheme"), &["HTTP", "HTTPS"]));
    for header in list(action, "httpHeaders") {
        let name = text(header, "name");
        let ok = !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-');
        if !ok {
            let msg = regex_error_message(
                "a valid HTTP header must consist of alphanumeric characters or '-'",
                "[-A-Za-z0-9]+",
                &["X-Header-Name"],
            );
            errs.push(FieldError::invalid(&child(path, "httpHeaders"), name, &msg));
        }
    }
    errs
}

fn sleep_action(action: &Value, grace: Option<i64>, path: &str) -> Errs {
    // PodLifecycleSleepActionAllowZero is on: zero seconds are allowed.
    match (int(action, "seconds"), grace) {
        (Some(seconds), Some(grace)) if seconds < 0 || seconds > grace => vec![invalid_int(
            path,
            seconds,
            &format!("must be non-negative and less than terminationGracePeriodSeconds ({grace})"),
        )],
        _ => Vec::new(),
    }
}

/// kube's `ValidatePortNumOrName` of an IntOrString.
pub fn port_num_or_name(port: Option<&Value>, field: &str) -> Errs {
    match port {
        Some(Value::String(name)) => {
            is_valid_port_name(name).into_iter().map(|m| FieldError::invalid(field, name, &m)).collect()
        }
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            is_valid_port_num(n).into_iter().map(|m| invalid_int(field, n, &m)).collect()
        }
        _ => is_valid_port_num(0).into_iter().map(|m| invalid_int(field, 0, &m)).collect(),
    }
}

/// kube's `validateContainerCommon`.
fn container_common(
    container: &Value,
    volumes: &HashMap<String, &'static str>,
    path: &str,
    restart_policy: &str,
) -> Errs {
    let mut errs = Errs::new();
    let name = text(container, "name");
    let name_path = child(path, "name");
    if name.is_empty() {
        errs.push(FieldError::required(&name_path, ""));
    } else {
        errs.extend(dns1123_label(&name_path, name));
    }
    let image = text(container, "image");
    if image.is_empty() {
        errs.push(FieldError::required(&child(path, "image"), ""));
    }
    errs.extend(supported_if_set(
        container.get("terminationMessagePolicy"),
        &child(path, "terminationMessagePolicy"),
        &["File", "FallbackToLogsOnError"],
    ));
    errs.extend(container_ports(list(container, "ports"), &child(path, "ports")));
    errs.extend(env(list(container, "env"), &child(path, "env")));
    errs.extend(env_from(list(container, "envFrom"), &child(path, "envFrom")));
    errs.extend(volume_mounts(container, volumes, &child(path, "volumeMounts")));
    errs.extend(volume_devices(container, volumes, &child(path, "volumeDevices")));
    errs.extend(pull_policy(container.get("imagePullPolicy"), &child(path, "imagePullPolicy")));
    errs.extend(resource_requirements(container.get("resources"), &child(path, "resources")));
    errs.extend(resize_policy(list(container, "resizePolicy"), &child(path, "resizePolicy"), restart_policy));
    errs.extend(container_security_context(container.get("securityContext"), &child(path, "securityContext")));
    errs
}

fn pull_policy(policy: Option<&Value>, field: &str) -> Errs {
    supported_if_set(policy, field, &["Always", "IfNotPresent", "Never"])
}

/// kube's `validateContainerPorts`.
fn container_ports(ports: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    let mut names: HashSet<&str> = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let port_path = index(path, i);
        let name = text(port, "name");
        if !name.is_empty() {
            let msgs = is_valid_port_name(name);
            if !msgs.is_empty() {
                errs.extend(msgs.iter().map(|m| FieldError::invalid(&child(&port_path, "name"), name, m)));
            } else if !names.insert(name) {
                errs.push(FieldError::duplicate(&child(&port_path, "name"), name));
            }
        }
        match int(port, "containerPort").unwrap_or(0) {
            0 => errs.push(FieldError::required(&child(&port_path, "containerPort"), "")),
            n => {
                errs.extend(is_valid_port_num(n).iter().map(|m| invalid_int(&child(&port_path, "containerPort"), n, m)))
            }
        }
        if let Some(host) = int(port, "hostPort").filter(|h| *h != 0) {
            errs.extend(is_valid_port_num(host).iter().map(|m| invalid_int(&child(&port_path, "hostPort"), host, m)));
        }
        errs.extend(supported_if_set(port.get("protocol"), &child(&port_path, "protocol"), &["SCTP", "TCP", "UDP"]));
    }
    errs
}

/// kube's `checkHostPortConflicts`: `protocol/hostIP/hostPort` unique.
fn host_port_conflicts(containers: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (ci, container) in containers.iter().enumerate() {
        for (pi, port) in list(container, "ports").iter().enumerate() {
            let host = int(port, "hostPort").unwrap_or(0);
            if host == 0 {
                continue;
            }
            let protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            let key = format!("{protocol}/{}/{host}", text(port, "hostIP"));
            if !seen.insert(key.clone()) {
                let field = child(&index(&child(&index(path, ci), "ports"), pi), "hostPort");
                errs.push(FieldError::duplicate(&field, &key));
            }
        }
    }
    errs
}

/// kube's `validatePodHostNetworkDeps`.
fn host_network_deps(spec: &Value, path: &str, opts: PodOptions) -> Errs {
    if !flag(spec, "hostNetwork") {
        return Vec::new();
    }
    let mut errs = Errs::new();
    for (i, container) in list(spec, "containers").iter().enumerate() {
        for (j, port) in list(container, "ports").iter().enumerate() {
            let container_port = int(port, "containerPort").unwrap_or(0);
            // An absent hostPort is defaulted to containerPort in a Pod.
            let Some(host_port) = int(port, "hostPort") else {
                continue;
            };
            if (opts.resource_is_pod || host_port != 0) && host_port != container_port {
                let field = child(&index(&child(&index(&child(path, "containers"), i), "ports"), j), "hostPort");
                errs.push(invalid_int(&field, host_port, "must match `containerPort` when `hostNetwork` is true"));
            }
        }
    }
    errs
}

/// kube's `ValidateEnv` (relaxed names: RelaxedEnvironmentVariableValidation
/// is on in 1.36).
fn env(vars: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    for (i, var) in vars.iter().enumerate() {
        let var_path = index(path, i);
        let name = text(var, "name");
        if name.is_empty() {
            errs.push(FieldError::required(&child(&var_path, "name"), ""));
        } else {
            errs.extend(
                is_relaxed_env_var_name(name).iter().map(|m| FieldError::invalid(&child(&var_path, "name"), name, m)),
            );
        }
        errs.extend(env_value_from(var, &child(&var_path, "valueFrom")));
    }
    errs
}

/// kube's `validateEnvVarValueFrom`.
fn env_value_from(var: &Value, path: &str) -> Errs {
    let Some(from) = var.get("valueFrom").filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    let mut sources = 0;
    if let Some(field_ref) = from.get("fieldRef").filter(|v| v.is_object()) {
        sources += 1;
        const ENV_FIELDS: &[&str] = &[
            "metadata.name",
            "metadata.namespace",
            "metadata.uid",
            "spec.nodeName",
            "spec.serviceAccountName",
            "status.hostIP",
            "status.hostIPs",
            "status.podIP",
            "status.podIPs",
        ];
        errs.extend(object_field_selector(field_ref, ENV_FIELDS, &child(path, "fieldRef")));
    }
    if let Some(resource_ref) = from.get("resourceFieldRef").filter(|v| v.is_object()) {
        sources += 1;
        errs.extend(resource_field_selector(resource_ref, &child(path, "resourceFieldRef"), false));
    }
    for kind in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(selector) = from.get(kind).filter(|v| v.is_object()) {
            sources += 1;
            errs.extend(key_selector(selector, &child(path, kind)));
        }
    }
    if sources == 0 {
        errs.push(FieldError::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if !text(var, "value").is_empty() {
        errs.push(FieldError::invalid(path, "", "may not be specified when `value` is not empty"));
    } else if sources > 1 {
        errs.push(FieldError::invalid(path, "", "may not have more than one field specified at a time"));
    }
    errs
}

/// The field paths kube's v1 downward API converts
/// (`ConvertDownwardAPIFieldLabel`), besides subscripted labels/annotations.
const DOWNWARD_API_FIELDS: &[&str] = &[
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// kube's `validateObjectFieldSelector`.
fn object_field_selector(selector: &Value, allowed: &[&str], path: &str) -> Errs {
    if selector.get("apiVersion").is_some_and(|v| v.as_str() == Some("")) {
        return vec![FieldError::required(&child(path, "apiVersion"), "")];
    }
    let field_path = text(selector, "fieldPath");
    if field_path.is_empty() {
        return vec![FieldError::required(&child(path, "fieldPath"), "")];
    }
    if let Some((base, subscript)) = split_subscript(field_path) {
        return match base {
            "metadata.annotations" => qualified_name(path, &subscript.to_lowercase()),
            "metadata.labels" => qualified_name(path, subscript),
            // The v1 conversion refuses other subscripts before validation sees them.
            _ => {
                let msg = format!("error converting fieldPath: field label does not support subscript: {field_path}");
                vec![FieldError::invalid(&child(path, "fieldPath"), field_path, &msg)]
            }
        };
    }
    if !DOWNWARD_API_FIELDS.contains(&field_path) {
        let msg = format!("error converting fieldPath: field label not supported: {field_path}");
        return vec![FieldError::invalid(&child(path, "fieldPath"), field_path, &msg)];
    }
    if !allowed.contains(&field_path) {
        return vec![FieldError::not_supported(&child(path, "fieldPath"), field_path, allowed)];
    }
    Vec::new()
}

/// `fieldpath.SplitMaybeSubscriptedPath`: `metadata.labels['key']`.
fn split_subscript(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (base, subscript) = inner.split_once("['")?;
    Some((base, subscript))
}

/// kube's `validateContainerResourceFieldSelector`.
fn resource_field_selector(selector: &Value, path: &str, volume: bool) -> Errs {
    const RESOURCES: &[&str] = &[
        "limits.cpu",
        "limits.ephemeral-storage",
        "limits.memory",
        "requests.cpu",
        "requests.ephemeral-storage",
        "requests.memory",
    ];
    let resource = text(selector, "resource");
    if volume && text(selector, "containerName").is_empty() {
        vec![FieldError::required(&child(path, "containerName"), "")]
    } else if resource.is_empty() {
        vec![FieldError::required(&child(path, "resource"), "")]
    } else if !RESOURCES.contains(&resource)
        && !resource.starts_with("requests.hugepages-")
        && !resource.starts_with("limits.hugepages-")
    {
        vec![FieldError::not_supported(&child(path, "resource"), resource, RESOURCES)]
    } else {
        Vec::new()
    }
}

/// kube's `validateConfigMapKeySelector` / `validateSecretKeySelector`.
fn key_selector(selector: &Value, path: &str) -> Errs {
    let name = text(selector, "name");
    let mut errs: Errs = NameRule::Dns1123Subdomain
        .check(name, false)
        .into_iter()
        .map(|m| FieldError::invalid(&child(path, "name"), name, &m))
        .collect();
    let key = text(selector, "key");
    if key.is_empty() {
        errs.push(FieldError::required(&child(path, "key"), ""));
    } else {
        errs.extend(is_config_map_key(key).iter().map(|m| FieldError::invalid(&child(path, "key"), key, m)));
    }
    errs
}

/// kube's `ValidateEnvFrom`.
fn env_from(sources: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    for (i, source) in sources.iter().enumerate() {
        let source_path = index(path, i);
        let prefix = text(source, "prefix");
        if !prefix.is_empty() {
            errs.extend(
                is_relaxed_env_var_name(prefix)
                    .iter()
                    .map(|m| FieldError::invalid(&child(&source_path, "prefix"), prefix, m)),
            );
        }
        let mut count = 0;
        for kind in ["configMapRef", "secretRef"] {
            let Some(reference) = source.get(kind).filter(|v| v.is_object()) else {
                continue;
            };
            count += 1;
            let name_path = child(&child(&source_path, kind), "name");
            let name = text(reference, "name");
            if name.is_empty() {
                errs.push(FieldError::required(&name_path, ""));
            } else {
                errs.extend(
                    NameRule::Dns1123Subdomain
                        .check(name, true)
                        .iter()
                        .map(|m| FieldError::invalid(&name_path, name, m)),
                );
            }
        }
        if count == 0 {
            errs.push(FieldError::invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"));
        } else if count > 1 {
            errs.push(FieldError::invalid(path, "", "may not have more than one field specified at a time"));
        }
    }
    errs
}

/// kube's `ValidateVolumeMounts`.
fn volume_mounts(container: &Value, volumes: &HashMap<String, &'static str>, path: &str) -> Errs {
    let devices: Vec<(&str, &str)> =
        list(container, "volumeDevices").iter().map(|d| (text(d, "name"), text(d, "devicePath"))).collect();
    let privileged = container.pointer("/securityContext/privileged").and_then(Value::as_bool) == Some(true);
    let mut errs = Errs::new();
    let mut mount_points: HashSet<&str> = HashSet::new();
    for (i, mount) in list(container, "volumeMounts").iter().enumerate() {
        let mount_path = index(path, i);
        let name = text(mount, "name");
        let target = text(mount, "mountPath");
        if name.is_empty() {
            errs.push(FieldError::required(&child(&mount_path, "name"), ""));
        }
        if !volumes.contains_key(name) {
            errs.push(FieldError::not_found(&child(&mount_path, "name"), name));
        }
        if target.is_empty() {
            errs.push(FieldError::required(&child(&mount_path, "mountPath"), ""));
        }
        if !mount_points.insert(target) {
            errs.push(FieldError::invalid(&child(&mount_path, "mountPath"), target, "must be unique"));
        }
        if devices.iter().any(|(n, _)| *n == name) {
            errs.push(FieldError::invalid(
                &child(&mount_path, "name"),
                name,
                "must not already exist in volumeDevices",
            ));
        }
        if devices.iter().any(|(_, p)| *p == target) {
            errs.push(FieldError::invalid(
                &child(&mount_path, "mountPath"),
                target,
                "must not already exist as a path in volumeDevices",
            ));
        }
        errs.extend(mount_sub_paths(mount, volumes.get(name).copied(), &mount_path, path));
        if let Some(propagation) = mount.get("mountPropagation").and_then(Value::as_str) {
            let field = child(path, "mountPropagation");
            const MODES: &[&str] = &["Bidirectional", "HostToContainer", "None"];
            if !MODES.contains(&propagation) {
                errs.push(FieldError::not_supported(&field, propagation, MODES));
            }
            if propagation == "Bidirectional" && !privileged {
                errs.push(FieldError::forbidden(
                    &field,
                    "Bidirectional mount propagation is available only to privileged containers",
                ));
            }
        }
        errs.extend(recursive_read_only(mount, &child(path, "recursiveReadOnly")));
    }
    errs
}

/// subPath and subPathExpr of a mount (kube reports the descending-path
/// errors at the list's path, not the item's).
fn mount_sub_paths(mount: &Value, source: Option<&str>, mount_path: &str, list_path: &str) -> Errs {
    let mut errs = Errs::new();
    let sub_path = text(mount, "subPath");
    let sub_path_expr = text(mount, "subPathExpr");
    if source == Some("image") {
        if !sub_path.is_empty() {
            errs.push(FieldError::invalid(
                &child(mount_path, "subPath"),
                sub_path,
                "not allowed in image volume sources",
            ));
        }
        if !sub_path_expr.is_empty() {
            errs.push(FieldError::invalid(
                &child(mount_path, "subPathExpr"),
                sub_path_expr,
                "not allowed in image volume sources",
            ));
        }
    }
    if !sub_path.is_empty() {
        errs.extend(local_descending_path(sub_path, &child(list_path, "subPath")));
    }
    if !sub_path_expr.is_empty() {
        if !sub_path.is_empty() {
            errs.push(FieldError::invalid(
                &child(mount_path, "subPathExpr"),
                sub_path_expr,
                "subPathExpr and subPath are mutually exclusive",
            ));
        }
        errs.extend(local_descending_path(sub_path_expr, &child(list_path, "subPathExpr")));
    }
    errs
}

/// kube's `validateMountRecursiveReadOnly`.
fn recursive_read_only(mount: &Value, field: &str) -> Errs {
    let Some(mode) = mount.get("recursiveReadOnly").and_then(Value::as_str) else {
        return Vec::new();
    };
    match mode {
        "Disabled" => Vec::new(),
        "Enabled" | "IfPossible" => {
            let mut errs = Errs::new();
            if !flag(mount, "readOnly") {
                errs.push(FieldError::forbidden(field, "may only be specified when readOnly is true"));
            }
            if mount.get("mountPropagation").and_then(Value::as_str).is_some_and(|p| p != "None") {
                errs.push(FieldError::forbidden(
                    field,
                    "may only be specified when mountPropagation is None or not specified",
                ));
            }
            errs
        }
        other => vec![FieldError::not_supported(field, other, &["Disabled", "Enabled", "IfPossible"])],
    }
}

/// kube's `ValidateVolumeDevices`.
fn volume_devices(container: &Value, volumes: &HashMap<String, &'static str>, path: &str) -> Errs {
    let mounts: Vec<(&str, &str)> =
        list(container, "volumeMounts").iter().map(|m| (text(m, "name"), text(m, "mountPath"))).collect();
    let mut errs = Errs::new();
    let mut names: HashSet<&str> = HashSet::new();
    let mut paths: HashSet<&str> = HashSet::new();
    for (i, device) in list(container, "volumeDevices").iter().enumerate() {
        let device_path = index(path, i);
        let name = text(device, "name");
        let target = text(device, "devicePath");
        let source = volumes.get(name).copied();
        if name.is_empty() {
            errs.push(FieldError::required(&child(&device_path, "name"), ""));
        }
        if names.contains(name) {
            errs.push(FieldError::invalid(&child(&device_path, "name"), name, "must be unique"));
        }
        match source {
            Some("persistentVolumeClaim" | "ephemeral") => {}
            Some(_) => errs.push(FieldError::invalid(
                &child(&device_path, "name"),
                name,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            None => errs.push(FieldError::not_found(&child(&device_path, "name"), name)),
        }
        if target.is_empty() {
            errs.push(FieldError::required(&child(&device_path, "devicePath"), ""));
        }
        if paths.contains(target) {
            errs.push(FieldError::invalid(&child(&device_path, "devicePath"), target, "must be unique"));
        }
        if !target.is_empty() && target.split('/').any(|p| p == "..") {
            errs.push(FieldError::invalid(
                &child(&device_path, "devicePath"),
                target,
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(target);
        }
        if mounts.iter().any(|(n, _)| *n == name) {
            errs.push(FieldError::invalid(
                &child(&device_path, "name"),
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.iter().any(|(_, p)| *p == target) {
            errs.push(FieldError::invalid(
                &child(&device_path, "devicePath"),
                target,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            names.insert(name);
        }
    }
    errs
}

/// kube's `validateResizePolicy`.
fn resize_policy(policies: &[Value], path: &str, restart_policy: &str) -> Errs {
    let mut errs = Errs::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, policy) in policies.iter().enumerate() {
        let resource = text(policy, "resourceName");
        if !seen.insert(resource) {
            errs.push(FieldError::duplicate(&index(path, i), resource));
        }
        match resource {
            "cpu" | "memory" => {}
            "" => errs.push(FieldError::required(path, "")),
            other => errs.push(FieldError::not_supported(path, other, &["cpu", "memory"])),
        }
        let restart = text(policy, "restartPolicy");
        match restart {
            "NotRequired" | "RestartContainer" => {}
            "" => errs.push(FieldError::required(path, "")),
            other => errs.push(FieldError::not_supported(path, other, &["NotRequired", "RestartContainer"])),
        }
        if restart_policy == "Never" && restart != "NotRequired" {
            errs.push(FieldError::invalid(path, restart, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
        }
    }
    errs
}

// -------------------------------------------------------------- resources

/// Whether a resource name is native (no domain, or `kubernetes.io/`).
fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// kube's `IsOvercommitAllowed`.
fn overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !name.starts_with("hugepages-")
}

/// kube's `IsExtendedResourceName`.
fn is_extended_resource(name: &str) -> bool {
    !is_native_resource(name)
        && !name.starts_with("requests.")
        && crate::types::validation::is_qualified_name(&format!("requests.{name}")).is_empty()
}

const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// kube's `validateContainerResourceName`.
fn container_resource_name(name: &str, field: &str) -> Errs {
    let qualified = crate::types::validation::is_qualified_name(name);
    if !qualified.is_empty() {
        return qualified.iter().map(|m| FieldError::invalid(field, name, m)).collect();
    }
    let mut errs = Errs::new();
    if !name.contains('/') {
        let standard = STANDARD_RESOURCES.contains(&name)
            || name.starts_with("hugepages-")
            || name.starts_with("requests.hugepages-");
        if !standard {
            errs.push(FieldError::invalid(field, name, "must be a standard resource type or fully qualified"));
        }
        if !["cpu", "memory", "ephemeral-storage"].contains(&name) && !name.starts_with("hugepages-") {
            errs.push(FieldError::invalid(field, name, "must be a standard resource for containers"));
        }
    } else if !is_native_resource(name) && !is_extended_resource(name) {
        errs.push(FieldError::invalid(field, name, "doesn't follow extended resource name standard"));
    }
    errs
}

/// kube's `ValidateContainerResourceRequirements`.
pub fn resource_requirements(resources: Option<&Value>, path: &str) -> Errs {
    let Some(resources) = resources.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let limits = obj(resources, "limits");
    let requests = obj(resources, "requests");
    let limits_path = child(path, "limits");
    let requests_path = child(path, "requests");
    let mut errs = Errs::new();
    let mut cpu_or_memory = false;
    let mut huge_pages = false;
    for (name, quantity) in limits {
        let field = key(&limits_path, name);
        errs.extend(container_resource_name(name, &field));
        errs.extend(resource_quantity(name, quantity, &field));
        huge_pages |= name.starts_with("hugepages-");
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    for (name, quantity) in requests {
        let field = key(&requests_path, name);
        errs.extend(container_resource_name(name, &field));
        errs.extend(resource_quantity(name, quantity, &field));
        errs.extend(request_within_limit(name, quantity, limits, &requests_path, &limits_path));
        huge_pages |= name.starts_with("hugepages-");
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    if huge_pages && !cpu_or_memory {
        errs.push(FieldError::forbidden(path, "HugePages require cpu or memory"));
    }
    errs
}

/// A request against its limit.
fn request_within_limit(
    name: &str,
    request: &Value,
    limits: &Map<String, Value>,
    requests_path: &str,
    limits_path: &str,
) -> Errs {
    let request_text = request.as_str().unwrap_or("");
    let Some(limit) = limits.get(name) else {
        if overcommit_allowed(name) {
            return Vec::new();
        }
        return vec![FieldError::required(limits_path, "Limit must be set for non overcommitable resources")];
    };
    let limit_text = limit.as_str().unwrap_or("");
    let (Some(r), Some(l)) = (nano_value(request_text), nano_value(limit_text)) else {
        return Vec::new();
    };
    if r != l && !overcommit_allowed(name) {
        vec![FieldError::invalid(
            requests_path,
            request_text,
            &format!("must be equal to {name} limit of {limit_text}"),
        )]
    } else if r > l {
        vec![FieldError::invalid(
            requests_path,
            request_text,
            &format!("must be less than or equal to {name} limit of {limit_text}"),
        )]
    } else {
        Vec::new()
    }
}

/// kube's `ValidateResourceQuantityValue`: not negative; whole numbers for
/// integer resources.
pub fn resource_quantity(name: &str, quantity: &Value, field: &str) -> Errs {
    let text = quantity.as_str().unwrap_or("");
    let Some(value) = nano_value(text) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    if value < 0 {
        errs.push(FieldError::invalid(field, text, "must be greater than or equal to 0"));
    }
    const INTEGER_RESOURCES: &[&str] = &[
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    ];
    let integer = INTEGER_RESOURCES.contains(&name) || is_extended_resource(name);
    if integer && value % 1_000_000_000 != 0 {
        // A Quantity prints through its String(), unquoted.
        errs.push(FieldError::invalid_bare(field, text, "must be an integer"));
    }
    errs
}

// -------------------------------------------------------- security context

const MAX_ID: i64 = i32::MAX as i64;

fn id_range(field: &str, value: Option<i64>) -> Errs {
    match value {
        Some(id) if !(0..=MAX_ID).contains(&id) => vec![invalid_int(field, id, &inclusive_range_error(0, MAX_ID))],
        _ => Vec::new(),
    }
}

/// kube's `ValidateSecurityContext` of a container.
fn container_security_context(context: Option<&Value>, path: &str) -> Errs {
    let Some(sc) = context.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    errs.extend(id_range(&child(path, "runAsUser"), int(sc, "runAsUser")));
    errs.extend(id_range(&child(path, "runAsGroup"), int(sc, "runAsGroup")));
    if let Some(proc_mount) = sc.get("procMount").and_then(Value::as_str) {
        if !["Default", "Unmasked"].contains(&proc_mount) {
            errs.push(FieldError::not_supported(&child(path, "procMount"), proc_mount, &["Default", "Unmasked"]));
        }
    }
    errs.extend(seccomp_profile(sc.get("seccompProfile"), &child(path, "seccompProfile")));
    if sc.get("allowPrivilegeEscalation").and_then(Value::as_bool) == Some(false) {
        let context_text = sc.to_string();
        if sc.get("privileged").and_then(Value::as_bool) == Some(true) {
            errs.push(FieldError::invalid(
                path,
                &context_text,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let adds = sc.pointer("/capabilities/add").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        for _ in adds.iter().filter(|c| c.as_str() == Some("CAP_SYS_ADMIN")) {
            errs.push(FieldError::invalid(
                path,
                &context_text,
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ));
        }
    }
    errs.extend(app_armor_profile(sc.get("appArmorProfile"), &child(path, "appArmorProfile")));
    errs
}

/// kube's `validatePodSpecSecurityContext` (v1's `hostPID`, `hostIPC`,
/// `hostNetwork` and `shareProcessNamespace` live in the spec; kube names
/// them under `securityContext`, as its internal type holds them).
fn pod_security_context(spec: &Value, path: &str) -> Errs {
    let Some(sc) = spec.get("securityContext").filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    errs.extend(id_range(&child(path, "fsGroup"), int(sc, "fsGroup")));
    errs.extend(id_range(&child(path, "runAsUser"), int(sc, "runAsUser")));
    errs.extend(id_range(&child(path, "runAsGroup"), int(sc, "runAsGroup")));
    for (i, gid) in list(sc, "supplementalGroups").iter().enumerate() {
        errs.extend(id_range(&index(&child(path, "supplementalGroups"), i), gid.as_i64()));
    }
    if flag(spec, "hostPID") && flag(spec, "shareProcessNamespace") {
        errs.push(FieldError::invalid_bare(
            &child(path, "shareProcessNamespace"),
            "true",
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    errs.extend(sysctls(spec, sc, &child(path, "sysctls")));
    if let Some(policy) = sc.get("fsGroupChangePolicy").and_then(Value::as_str) {
        if !["Always", "OnRootMismatch"].contains(&policy) {
            errs.push(FieldError::not_supported(
                &child(path, "fsGroupChangePolicy"),
                policy,
                &["Always", "OnRootMismatch"],
            ));
        }
    }
    errs.extend(seccomp_profile(sc.get("seccompProfile"), &child(path, "seccompProfile")));
    errs.extend(app_armor_profile(sc.get("appArmorProfile"), &child(path, "appArmorProfile")));
    errs.extend(supported_if_set(
        sc.get("supplementalGroupsPolicy"),
        &child(path, "supplementalGroupsPolicy"),
        &["Merge", "Strict"],
    ));
    errs.extend(supported_if_set(
        sc.get("seLinuxChangePolicy"),
        &child(path, "seLinuxChangePolicy"),
        &["MountOption", "Recursive"],
    ));
    errs
}

/// kube's `validateSysctls`.
fn sysctls(spec: &Value, sc: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    let mut names: HashSet<&str> = HashSet::new();
    for (i, sysctl) in list(sc, "sysctls").iter().enumerate() {
        let field = child(&index(path, i), "name");
        let name = text(sysctl, "name");
        if name.is_empty() {
            errs.push(FieldError::required(&field, ""));
        } else if !is_valid_sysctl_name(name) {
            let msg = "must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";
            errs.push(FieldError::invalid(&field, name, msg));
        } else if names.contains(name) {
            errs.push(FieldError::duplicate(&field, name));
        }
        let net = name.starts_with("net.") || name.starts_with("net/");
        let ipc = ["kernel.shm", "kernel.msg", "kernel/shm", "kernel/msg", "fs.mqueue.", "fs/mqueue/"]
            .iter()
            .any(|p| name.starts_with(p))
            || name == "kernel.sem"
            || name == "kernel/sem";
        if flag(spec, "hostNetwork") && net {
            errs.push(FieldError::invalid(&field, name, "may not be specified when 'hostNetwork' is true"));
        } else if flag(spec, "hostIPC") && ipc {
            errs.push(FieldError::invalid(&field, name, "may not be specified when 'hostIPC' is true"));
        }
        names.insert(name);
    }
    errs
}

/// `SysctlContainSlashFmt`: segments of `[a-z0-9]([-_a-z0-9]*[a-z0-9])?`
/// joined by `.` or `/`, at most 253 bytes.
fn is_valid_sysctl_name(name: &str) -> bool {
    name.len() <= 253
        && name.split(['.', '/']).all(|segment| {
            let b = segment.as_bytes();
            match (b.first(), b.last()) {
                (Some(f), Some(l)) => {
                    (f.is_ascii_lowercase() || f.is_ascii_digit())
                        && (l.is_ascii_lowercase() || l.is_ascii_digit())
                        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'_')
                }
                _ => false,
            }
        })
}

/// kube's `validateSeccompProfileField`.
fn seccomp_profile(profile: Option<&Value>, path: &str) -> Errs {
    let Some(profile) = profile.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    let kind = text(profile, "type");
    const TYPES: &[&str] = &["Localhost", "RuntimeDefault", "Unconfined"];
    if kind.is_empty() {
        errs.push(FieldError::required(&child(path, "type"), "type is required when seccompProfile is set"));
    } else if !TYPES.contains(&kind) {
        errs.push(FieldError::not_supported(&child(path, "type"), kind, TYPES));
    }
    let local = profile.get("localhostProfile").and_then(Value::as_str);
    match (kind, local) {
        ("Localhost", None) => errs
            .push(FieldError::required(&child(path, "localhostProfile"), "must be set when seccomp type is Localhost")),
        ("Localhost", Some(p)) => errs.extend(local_descending_path(p, &child(path, "localhostProfile"))),
        (_, Some(_)) => errs.push(FieldError::invalid(
            &child(path, "localhostProfile"),
            &profile.to_string(),
            "can only be set when seccomp type is Localhost",
        )),
        _ => {}
    }
    errs
}

/// kube's `ValidateAppArmorProfileField`.
fn app_armor_profile(profile: Option<&Value>, path: &str) -> Errs {
    let Some(profile) = profile.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let local = profile.get("localhostProfile").and_then(Value::as_str);
    let local_path = child(path, "localhostProfile");
    match text(profile, "type") {
        "Localhost" => match local {
            None => vec![FieldError::required(&local_path, "must be set when AppArmor type is Localhost")],
            Some(p) if p.trim() != p => vec![FieldError::invalid(&local_path, p, "must not be padded with whitespace")],
            Some("") => vec![FieldError::required(&local_path, "must be set when AppArmor type is Localhost")],
            Some(p) if p.len() > 4095 => vec![FieldError::too_long(&local_path, 4095)],
            Some(_) => Vec::new(),
        },
        "RuntimeDefault" | "Unconfined" => match local {
            Some(p) => vec![FieldError::invalid(&local_path, p, "can only be set when AppArmor type is Localhost")],
            None => Vec::new(),
        },
        "" => vec![FieldError::required(&child(path, "type"), "type is required when appArmorProfile is set")],
        other => {
            vec![FieldError::not_supported(&child(path, "type"), other, &["Localhost", "RuntimeDefault", "Unconfined"])]
        }
    }
}

// ------------------------------------------------------- scheduling, DNS

/// kube's `ValidateTolerations`.
pub fn tolerations(items: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    for (i, toleration) in items.iter().enumerate() {
        let item_path = index(path, i);
        let operator_path = child(&item_path, "operator");
        let key_text = text(toleration, "key");
        let operator = text(toleration, "operator");
        let value = text(toleration, "value");
        let effect = text(toleration, "effect");
        if !key_text.is_empty() {
            errs.extend(validate_label_name(&child(&item_path, "key"), key_text));
        }
        if key_text.is_empty() && operator != "Exists" {
            errs.push(FieldError::invalid(
                &operator_path,
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if has(toleration, "tolerationSeconds") && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                &child(&item_path, "effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "Equal" | "" => {
                let msgs = is_valid_label_value(value);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(&operator_path, value, &msgs.join(";")));
                }
            }
            "Exists" if !value.is_empty() => {
                errs.push(FieldError::invalid(
                    &operator_path,
                    value,
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
            "Exists" => {}
            other => errs.push(FieldError::not_supported(&operator_path, other, &["Equal", "Exists"])),
        }
        if !effect.is_empty() {
            errs.extend(taint_effect(effect, &child(&item_path, "effect")));
        }
    }
    errs
}

/// kube's `validateTaintEffect` of a non-empty effect.
pub fn taint_effect(effect: &str, field: &str) -> Errs {
    const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
    if EFFECTS.contains(&effect) {
        Vec::new()
    } else {
        vec![FieldError::not_supported(field, effect, EFFECTS)]
    }
}

/// kube's `validateAffinity`.
fn affinity(affinity: Option<&Value>, path: &str) -> Errs {
    let Some(affinity) = affinity.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    if let Some(node) = affinity.get("nodeAffinity").filter(|v| v.is_object()) {
        let node_path = child(path, "nodeAffinity");
        if let Some(required) = node.get("requiredDuringSchedulingIgnoredDuringExecution").filter(|v| v.is_object()) {
            errs.extend(node_selector(required, &child(&node_path, "requiredDuringSchedulingIgnoredDuringExecution")));
        }
        let preferred_path = child(&node_path, "preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in list(node, "preferredDuringSchedulingIgnoredDuringExecution").iter().enumerate() {
            errs.extend(weight(term, &index(&preferred_path, i)));
            errs.extend(node_selector_term(
                obj_value(term, "preference"),
                &child(&index(&preferred_path, i), "preference"),
                true,
            ));
        }
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(pod) = affinity.get(kind).filter(|v| v.is_object()) else {
            continue;
        };
        let kind_path = child(path, kind);
        let required_path = child(&kind_path, "requiredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in list(pod, "requiredDuringSchedulingIgnoredDuringExecution").iter().enumerate() {
            errs.extend(pod_affinity_term(term, &index(&required_path, i)));
        }
        let preferred_path = child(&kind_path, "preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in list(pod, "preferredDuringSchedulingIgnoredDuringExecution").iter().enumerate() {
            let term_path = index(&preferred_path, i);
            errs.extend(weight(term, &term_path));
            errs.extend(pod_affinity_term(obj_value(term, "podAffinityTerm"), &child(&term_path, "podAffinityTerm")));
        }
    }
    errs
}

fn obj_value<'a>(v: &'a Value, key: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    v.get(key).unwrap_or(&NULL)
}

fn weight(term: &Value, path: &str) -> Errs {
    let w = int(term, "weight").unwrap_or(0);
    if w <= 0 || w > 100 {
        vec![invalid_int(&child(path, "weight"), w, "must be in the range 1-100")]
    } else {
        Vec::new()
    }
}

/// kube's `validatePodAffinityTerm`.
fn pod_affinity_term(term: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    for selector in ["labelSelector", "namespaceSelector"] {
        if let Some(s) = term.get(selector) {
            errs.extend(validate_label_selector(s, &child(path, selector)));
        }
    }
    for name in list(term, "namespaces") {
        let name = name.as_str().unwrap_or("");
        errs.extend(dns1123_label(&child(path, "namespace"), name));
    }
    let topology_key = text(term, "topologyKey");
    if topology_key.is_empty() {
        errs.push(FieldError::required(&child(path, "topologyKey"), "can not be empty"));
    }
    errs.extend(validate_label_name(&child(path, "topologyKey"), topology_key));
    errs
}

/// kube's `ValidateNodeSelector`.
pub fn node_selector(selector: &Value, path: &str) -> Errs {
    let terms_path = child(path, "nodeSelectorTerms");
    let terms = list(selector, "nodeSelectorTerms");
    if terms.is_empty() {
        return vec![FieldError::required(&terms_path, "must have at least one node selector term")];
    }
    terms.iter().enumerate().flat_map(|(i, term)| node_selector_term(term, &index(&terms_path, i), false)).collect()
}

/// kube's `ValidateNodeSelectorTerm`.
fn node_selector_term(term: &Value, path: &str, allow_invalid_values: bool) -> Errs {
    let mut errs = Errs::new();
    for (j, req) in list(term, "matchExpressions").iter().enumerate() {
        let req_path = index(&child(path, "matchExpressions"), j);
        let values = list(req, "values");
        match text(req, "operator") {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                &child(&req_path, "values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                &child(&req_path, "values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "Gt" | "Lt" if values.len() != 1 => errs.push(FieldError::required(
                &child(&req_path, "values"),
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
            other => {
                errs.push(FieldError::invalid(&child(&req_path, "operator"), other, "not a valid selector operator"))
            }
        }
        errs.extend(validate_label_name(&child(&req_path, "key"), text(req, "key")));
        if !allow_invalid_values {
            for (k, value) in values.iter().enumerate() {
                let value = value.as_str().unwrap_or("");
                let field = index(&child(&req_path, "values"), k);
                errs.extend(is_valid_label_value(value).iter().map(|m| FieldError::invalid(&field, value, m)));
            }
        }
    }
    for (j, req) in list(term, "matchFields").iter().enumerate() {
        let req_path = index(&child(path, "matchFields"), j);
        let values = list(req, "values");
        match text(req, "operator") {
            "In" | "NotIn" if values.len() != 1 => errs.push(FieldError::required(
                &child(&req_path, "values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )),
            "In" | "NotIn" => {}
            other => {
                errs.push(FieldError::invalid(&child(&req_path, "operator"), other, "not a valid selector operator"))
            }
        }
        let field_key = text(req, "key");
        if field_key != "metadata.name" {
            errs.push(FieldError::invalid(&child(&req_path, "key"), field_key, "not a valid field selector key"));
        } else {
            for (k, value) in values.iter().enumerate() {
                errs.extend(dns1123_subdomain(&index(&child(&req_path, "values"), k), value.as_str().unwrap_or("")));
            }
        }
    }
    errs
}

/// kube's `validatePodDNSConfig` (RelaxedDNSSearchValidation is on).
fn dns_config(spec: &Value, path: &str) -> Errs {
    let config = spec.get("dnsConfig").filter(|v| v.is_object());
    if text(spec, "dnsPolicy") == "None" {
        let Some(config) = config else {
            return vec![FieldError::required(path, "must provide `dnsConfig` when `dnsPolicy` is None")];
        };
        if list(config, "nameservers").is_empty() {
            return vec![FieldError::required(
                &child(path, "nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            )];
        }
    }
    let Some(config) = config else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    let nameservers = list(config, "nameservers");
    if nameservers.len() > 3 {
        errs.push(FieldError::invalid_bare(
            &child(path, "nameservers"),
            &go_string_slice(nameservers),
            "must not have more than 3 nameservers",
        ));
    }
    for (i, ns) in nameservers.iter().enumerate() {
        let ns = ns.as_str().unwrap_or("");
        if !is_valid_ip(ns) {
            errs.push(FieldError::invalid(&index(&child(path, "nameservers"), i), ns, INVALID_IP_MSG));
        }
    }
    let searches = list(config, "searches");
    if searches.len() > 32 {
        errs.push(FieldError::invalid_bare(
            &child(path, "searches"),
            &go_string_slice(searches),
            "must not have more than 32 search paths",
        ));
    }
    let joined: Vec<&str> = searches.iter().map(|s| s.as_str().unwrap_or("")).collect();
    if joined.join(" ").len() > 2048 {
        errs.push(FieldError::invalid_bare(
            &child(path, "searches"),
            &go_string_slice(searches),
            "must not have more than 2048 characters (including spaces) in the search list",
        ));
    }
    for (i, search) in joined.iter().enumerate() {
        if *search == "." {
            continue;
        }
        let trimmed = search.strip_suffix('.').unwrap_or(search);
        let field = index(&child(path, "searches"), i);
        errs.extend(subdomain_with_underscore(trimmed).iter().map(|m| FieldError::invalid(&field, trimmed, m)));
    }
    for (i, option) in list(config, "options").iter().enumerate() {
        if text(option, "name").is_empty() {
            errs.push(FieldError::required(&index(&child(path, "options"), i), "must not be empty"));
        }
    }
    errs
}

/// kube's `IsDNS1123SubdomainWithUnderscore`: labels of
/// `_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?` joined by dots.
fn subdomain_with_underscore(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(crate::types::validation::max_len_error(253));
    }
    let label_ok = |label: &str| {
        let b = label.strip_prefix('_').unwrap_or(label).as_bytes();
        let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        match (b.first(), b.last()) {
            (Some(f), Some(l)) => alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || *c == b'-' || *c == b'_'),
            _ => false,
        }
    };
    if !value.split('.').all(label_ok) {
        errs.push(regex_error_message(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
            "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    errs
}

/// kube's `validateSchedulingGates`.
fn scheduling_gates(gates: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, gate) in gates.iter().enumerate() {
        let name = text(gate, "name");
        errs.extend(qualified_name(&index(path, i), name));
        if !seen.insert(name) {
            errs.push(FieldError::duplicate(&index(path, i), name));
        }
    }
    errs
}

/// kube's `validateTopologySpreadConstraints` (the common rules).
fn topology_spread(constraints: &[Value], path: &str) -> Errs {
    let mut errs = Errs::new();
    for (i, constraint) in constraints.iter().enumerate() {
        let item_path = index(path, i);
        let skew = int(constraint, "maxSkew").unwrap_or(0);
        if skew <= 0 {
            errs.push(invalid_int(&child(&item_path, "maxSkew"), skew, "must be greater than zero"));
        }
        let topology_key = text(constraint, "topologyKey");
        if topology_key.is_empty() {
            errs.push(FieldError::required(&child(&item_path, "topologyKey"), "can not be empty"));
        }
        let action = text(constraint, "whenUnsatisfiable");
        const ACTIONS: &[&str] = &["DoNotSchedule", "ScheduleAnyway"];
        if !ACTIONS.contains(&action) {
            errs.push(FieldError::not_supported(&child(&item_path, "whenUnsatisfiable"), action, ACTIONS));
        }
        let repeated = constraints
            .iter()
            .skip(i + 1)
            .any(|other| text(other, "topologyKey") == topology_key && text(other, "whenUnsatisfiable") == action);
        if repeated {
            errs.push(FieldError::duplicate(
                &child(&item_path, "{topologyKey, whenUnsatisfiable}"),
                &format!("{{{topology_key}, {action}}}"),
            ));
        }
        if let Some(min) = int(constraint, "minDomains") {
            let field = child(&item_path, "minDomains");
            if min <= 0 {
                errs.push(invalid_int(&field, min, "must be greater than zero"));
            }
            if action != "DoNotSchedule" {
                let msg = format!("can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}");
                errs.push(invalid_int(&field, min, &msg));
            }
        }
        for policy in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            errs.extend(supported_if_set(constraint.get(policy), &child(&item_path, policy), &["Honor", "Ignore"]));
        }
        if let Some(selector) = constraint.get("labelSelector") {
            errs.extend(validate_label_selector(selector, &child(&item_path, "labelSelector")));
        }
    }
    errs
}
