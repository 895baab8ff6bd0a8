//! kube's `ValidatePodSpec` and what it calls (volumes, containers, probes,
//! resources, security contexts, tolerations, affinity, DNS), for Pods and
//! for the pod templates workloads embed
//! (`pkg/apis/core/validation/validation.go`). This file holds the spec's
//! own fields; `volumes.rs`, `containers.rs`, `resources.rs`,
//! `security.rs` and `scheduling.rs` the parts they name.
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

mod containers;
mod resources;
mod scheduling;
mod security;
mod volumes;

pub use containers::port_num_or_name;
use containers::*;
use resources::*;
pub(crate) use resources::{container_resource_name, overcommit_allowed, STANDARD_RESOURCES};
pub use resources::{resource_quantity, resource_requirements};
use scheduling::*;
pub use scheduling::{node_selector, taint_effect, tolerations};
use security::*;
pub use volumes::csi_driver;
use volumes::*;

type Errs = Vec<FieldError>;

/// kube's `PodValidationOptions` that matter here, and the pod's name
/// (kube's `podMeta`, given for a Pod and not for a template).
#[derive(Clone, Copy, Debug, Default)]
pub struct PodOptions<'a> {
    /// The spec is a Pod's, not a template's (`ResourceIsPod`).
    pub resource_is_pod: bool,
    /// The Pod's name; empty for a template.
    pub pod_name: &'a str,
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
pub fn pod_spec(spec: &Value, path: &str, opts: PodOptions<'_>) -> Errs {
    let mut errs = Errs::new();
    let grace = int(spec, "terminationGracePeriodSeconds");
    let (volumes, volume_errs) = validate_volumes(list(spec, "volumes"), &child(path, "volumes"), opts);
    errs.extend(volume_errs);
    let restart_policy = text(spec, "restartPolicy");
    // The default for hostUsers is true: no hostUsers is the host's user
    // namespace.
    let in_host_users = spec.get("hostUsers").and_then(Value::as_bool) != Some(false);
    errs.extend(containers(spec, &volumes, grace, path, restart_policy, in_host_users));
    errs.extend(init_containers(spec, &volumes, grace, path, restart_policy, in_host_users));
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
    errs.extend(hostname_override(spec, path));
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
    errs.extend(file_key_ref_volumes(spec, path));
    errs
}

/// kube's `validateHostUsers`: a user namespace excludes the host's
/// network, PID and IPC namespaces (kube's paths, capitals included) and
/// volumeDevices (kube PR 132868, v1.34, which also gave the message its
/// `hostUsers` wording; UserNamespacesHostNetworkSupport is alpha and off).
fn host_users(spec: &Value, path: &str) -> Errs {
    if spec.get("hostUsers").and_then(Value::as_bool) != Some(false) {
        return Vec::new();
    }
    let msg = "when `hostUsers` is false";
    let mut errs: Errs = [("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")]
        .iter()
        .filter(|(field, _)| flag(spec, field))
        .map(|(_, name)| FieldError::forbidden(&child(path, name), msg))
        .collect();
    for (container_path, container) in all_containers(spec, path) {
        if !list(container, "volumeDevices").is_empty() {
            errs.push(FieldError::forbidden(&child(&container_path, "volumeDevices"), msg));
        }
    }
    errs
}

/// The longest `hostnameOverride` kube accepts (`validatePodHostName`).
const HOSTNAME_OVERRIDE_MAX: usize = 64;

/// kube's `validatePodHostName` (HostnameOverride is on, beta since v1.35):
/// not with setHostnameAsFQDN or hostNetwork, at most 64 bytes, a DNS-1123
/// subdomain.
fn hostname_override(spec: &Value, path: &str) -> Errs {
    let Some(name) = spec.get("hostnameOverride").and_then(Value::as_str) else {
        return Vec::new();
    };
    let field = child(path, "hostnameOverride");
    let mut errs = Errs::new();
    if flag(spec, "setHostnameAsFQDN") {
        errs.push(FieldError::forbidden(&field, "may not be specified when setHostnameAsFQDN is true"));
    }
    if flag(spec, "hostNetwork") {
        errs.push(FieldError::forbidden(&field, "may not be specified when hostNetwork is true"));
    }
    if name.len() > HOSTNAME_OVERRIDE_MAX {
        errs.push(FieldError::too_long(&field, HOSTNAME_OVERRIDE_MAX));
    }
    errs.extend(dns1123_subdomain(&field, name));
    errs
}

/// kube's `validateFileKeyRefVolumes` (EnvFiles is on, beta since v1.35):
/// the volume an env var's fileKeyRef names exists and is an emptyDir.
fn file_key_ref_volumes(spec: &Value, path: &str) -> Errs {
    let volumes: HashMap<&str, &Value> = list(spec, "volumes").iter().map(|v| (text(v, "name"), v)).collect();
    let mut errs = Errs::new();
    for (container_path, container) in all_containers(spec, path) {
        for (j, var) in list(container, "env").iter().enumerate() {
            let Some(file_key_ref) = var.pointer("/valueFrom/fileKeyRef").filter(|v| v.is_object()) else {
                continue;
            };
            let volume_name = text(file_key_ref, "volumeName");
            let field = format!("{}.valueFrom.fileKeyRef.volumeName", index(&child(&container_path, "env"), j));
            match volumes.get(volume_name) {
                None => errs.push(FieldError::not_found(&field, volume_name)),
                Some(volume) if volume.get("emptyDir").is_none_or(Value::is_null) => {
                    errs.push(FieldError::invalid(&field, volume_name, "referenced volume must be of type emptyDir"))
                }
                Some(_) => {}
            }
        }
    }
    errs
}

/// kube's `validatePodResources` (PodLevelResources is on): not in a
/// Windows pod, no claims, the resource names and quantities, requests
/// within limits.
fn pod_level_resources(spec: &Value, path: &str) -> Errs {
    let Some(resources) = spec.get("resources").filter(|v| v.is_object()) else {
        return Vec::new();
    };
    // kube PR 133046 (v1.34): pod-level resources are refused in a Windows
    // pod, without looking further.
    if spec.pointer("/os/name").and_then(Value::as_str) == Some("windows") {
        return vec![FieldError::forbidden(path, "may not be set for a windows pod")];
    }
    let mut errs = Errs::new();
    if has(resources, "claims") {
        errs.push(FieldError::forbidden(&child(path, "claims"), "claims may not be set for Resources at pod-level"));
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
