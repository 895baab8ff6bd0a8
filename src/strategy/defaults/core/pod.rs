//! Defaults of a Pod and of the pod spec every template embeds, as kube's
//! generated `SetObjectDefaults_Pod` and `SetObjectDefaults_PodTemplate` run
//! them (pkg/apis/core/v1/zz_generated.defaults.go): the Pod-only step
//! (`SetDefaults_Pod`), the spec (`SetDefaults_PodSpec`), every volume and
//! every container (init, regular, ephemeral) with their ports, env, probes
//! and lifecycle handlers, plus the v1 -> internal conversion's
//! `serviceAccount` alias (pkg/apis/core/v1/conversion.go).

use super::fields::{default_int, default_ptr, default_str, each_mut, object_entry, object_mut, str_of};
use super::image::pull_policy;
use crate::strategy::Object;
use serde_json::{json, Value};

/// The container lists of a pod spec, in the order kube's defaulter visits them.
const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// The annotations of kube < 1.8 init containers, which the v1 conversions
/// of a Pod and of a PodTemplateSpec drop (pkg/apis/core/v1/conversion.go:
/// dropInitContainerAnnotations).
const INIT_CONTAINER_ANNOTATIONS: [&str; 4] = [
    "pod.beta.kubernetes.io/init-containers",
    "pod.alpha.kubernetes.io/init-containers",
    "pod.beta.kubernetes.io/init-container-statuses",
    "pod.alpha.kubernetes.io/init-container-statuses",
];

/// kube's defaults of a Pod object (`SetObjectDefaults_Pod`), and its v1
/// conversion's visible effects.
pub fn pod(object: &mut Object) {
    drop_init_container_annotations(object);
    if let Some(status) = object_mut(object, "status") {
        primary_and_list(status, "podIP", "podIPs");
        primary_and_list(status, "hostIP", "hostIPs");
    }
    let Some(spec) = object_entry(object, "spec") else {
        return;
    };
    pod_only(spec);
    pod_spec(spec);
}

/// Removes [`INIT_CONTAINER_ANNOTATIONS`] from `object`'s metadata (a Pod,
/// or a PodTemplateSpec).
pub fn drop_init_container_annotations(object: &mut Object) {
    let Some(annotations) = object_mut(object, "metadata").and_then(|m| object_mut(m, "annotations")) else {
        return;
    };
    for key in INIT_CONTAINER_ANNOTATIONS {
        annotations.shift_remove(key);
    }
}

/// pkg/apis/core/v1/conversion.go: Convert_v1_PodStatus_To_core_PodStatus
/// and back, for podIP/podIPs and hostIP/hostIPs: the single field is
/// authoritative when both are set and differ, fills the list when the list
/// is empty, and is always written back as the list's first IP.
fn primary_and_list(status: &mut Object, single: &str, list: &str) {
    let primary = str_of(status, single).to_string();
    let first = status
        .get(list)
        .and_then(Value::as_array)
        .and_then(|l| l.first())
        .and_then(|ip| ip.get("ip"))
        .and_then(Value::as_str)
        .map(str::to_string);
    match first {
        Some(first) if primary.is_empty() || first == primary => {
            status.insert(single.into(), json!(first));
        }
        _ if !primary.is_empty() => {
            status.insert(list.into(), json!([{"ip": primary}]));
        }
        _ => {}
    }
}

/// kube's defaults of a pod template's spec (a PodTemplateSpec's `spec`):
/// what `SetObjectDefaults_PodTemplate` and the workloads' generated
/// defaulters run, without the Pod-only step.
pub fn template_spec(spec: &mut Object) {
    pod_spec(spec);
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_Pod (Pods only, not templates).
/// Pod-level resources defaulting (PodLevelResources, only when
/// `spec.resources` is set) is not done here.
fn pod_only(spec: &mut Object) {
    for list in ["containers", "initContainers"] {
        for container in each_mut(spec, list) {
            requests_from_limits(container);
        }
    }
    default_ptr(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for list in ["containers", "initContainers"] {
            for container in each_mut(spec, list) {
                for port in each_mut(container, "ports") {
                    // defaultHostNetworkPorts: hostPort = containerPort when 0.
                    let container_port = port.get("containerPort").cloned().unwrap_or(Value::Null);
                    if port.get("hostPort").is_none_or(|v| v.is_null() || v.as_i64() == Some(0))
                        && !container_port.is_null()
                    {
                        port.insert("hostPort".into(), container_port);
                    }
                }
            }
        }
    }
}

/// Requests default to limits for every resource with a limit and no request.
fn requests_from_limits(container: &mut Object) {
    let Some(resources) = object_mut(container, "resources") else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).filter(|l| !l.is_empty()).cloned() else {
        return;
    };
    let Some(requests) = object_entry(resources, "requests") else {
        return;
    };
    for (name, quantity) in limits {
        if !requests.contains_key(&name) {
            requests.insert(name, quantity);
        }
    }
}

/// The defaults every pod spec gets, in a Pod or in a template.
fn pod_spec(spec: &mut Object) {
    // pkg/apis/core/v1/defaults.go: SetDefaults_PodSpec
    default_str(spec, "dnsPolicy", "ClusterFirst");
    default_str(spec, "restartPolicy", "Always");
    default_ptr(spec, "securityContext", json!({}));
    // v1.DefaultTerminationGracePeriodSeconds
    default_ptr(spec, "terminationGracePeriodSeconds", json!(30));
    // v1.DefaultSchedulerName
    default_str(spec, "schedulerName", "default-scheduler");
    // pkg/apis/core/v1/conversion.go: Convert_v1_PodSpec_To_core_PodSpec takes
    // serviceAccount when serviceAccountName is empty, and the way back
    // always writes serviceAccount = serviceAccountName.
    let account = match str_of(spec, "serviceAccountName") {
        "" => str_of(spec, "serviceAccount").to_string(),
        name => name.to_string(),
    };
    if account.is_empty() {
        spec.shift_remove("serviceAccountName");
        spec.shift_remove("serviceAccount");
    } else {
        spec.insert("serviceAccountName".into(), json!(account));
        spec.insert("serviceAccount".into(), json!(account));
    }
    for volume in each_mut(spec, "volumes") {
        super::volume::pod_volume(volume);
    }
    // SetDefaults_ResourceList on the pod's overhead and pod-level resources.
    super::resources::round_up_list(spec, "overhead");
    super::resources::round_up_requirements(spec, "resources");
    for list in CONTAINER_LISTS {
        for container in each_mut(spec, list) {
            container_defaults(container);
        }
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_Container (and
/// SetDefaults_EphemeralContainer, the same), with what the generated
/// defaulter runs on a container's parts.
fn container_defaults(container: &mut Object) {
    if str_of(container, "imagePullPolicy").is_empty() {
        let policy = pull_policy(str_of(container, "image"));
        container.insert("imagePullPolicy".into(), json!(policy));
    }
    // v1.TerminationMessagePathDefault, v1.TerminationMessageReadFile
    default_str(container, "terminationMessagePath", "/dev/termination-log");
    default_str(container, "terminationMessagePolicy", "File");
    // `resources` is a struct, not a pointer: kube always writes it, `{}` when empty.
    default_ptr(container, "resources", json!({}));
    super::resources::round_up_requirements(container, "resources");
    for port in each_mut(container, "ports") {
        // staging/src/k8s.io/api/core/v1/types.go: ContainerPort.Protocol +default="TCP"
        default_str(port, "protocol", "TCP");
    }
    for env in each_mut(container, "env") {
        let Some(value_from) = object_mut(env, "valueFrom") else {
            continue;
        };
        if let Some(field_ref) = object_mut(value_from, "fieldRef") {
            object_field_selector(field_ref);
        }
        if let Some(file_key_ref) = object_mut(value_from, "fileKeyRef") {
            // staging/src/k8s.io/api/core/v1/types.go: FileKeySelector.Optional +default=false
            default_ptr(file_key_ref, "optional", json!(false));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = object_mut(container, probe) {
            probe_defaults(probe);
        }
    }
    if let Some(lifecycle) = object_mut(container, "lifecycle") {
        for handler in ["postStart", "preStop"] {
            if let Some(http_get) = object_mut(lifecycle, handler).and_then(|h| object_mut(h, "httpGet")) {
                http_get_action(http_get);
            }
        }
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_Probe (zero values replaced),
/// then SetDefaults_HTTPGetAction on its httpGet.
fn probe_defaults(probe: &mut Object) {
    default_int(probe, "timeoutSeconds", 1);
    default_int(probe, "periodSeconds", 10);
    default_int(probe, "successThreshold", 1);
    default_int(probe, "failureThreshold", 3);
    if let Some(http_get) = object_mut(probe, "httpGet") {
        http_get_action(http_get);
    }
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_HTTPGetAction
fn http_get_action(http_get: &mut Object) {
    default_str(http_get, "path", "/");
    default_str(http_get, "scheme", "HTTP");
}

/// pkg/apis/core/v1/defaults.go: SetDefaults_ObjectFieldSelector
pub fn object_field_selector(field_ref: &mut Object) {
    default_str(field_ref, "apiVersion", "v1");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted_pod(spec: Value) -> Value {
        let mut object = json!({"spec": spec}).as_object().cloned().unwrap_or_default();
        pod(&mut object);
        object.get("spec").cloned().unwrap_or(Value::Null)
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_PodSpec and SetDefaults_Pod
    #[test]
    fn pod_spec_defaults() {
        let spec = defaulted_pod(json!({"containers": [{"name": "c", "image": "busybox"}]}));
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["securityContext"], json!({}));
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        assert_eq!(spec["schedulerName"], "default-scheduler");
        assert_eq!(spec["enableServiceLinks"], true);
    }

    // Set values are kept, including a pointer set to its zero value.
    #[test]
    fn set_values_are_kept() {
        let spec = defaulted_pod(json!({
            "restartPolicy": "Never", "enableServiceLinks": false, "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "x", "imagePullPolicy": "Never",
                "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 5}}]
        }));
        assert_eq!(spec["restartPolicy"], "Never");
        assert_eq!(spec["enableServiceLinks"], false);
        assert_eq!(spec["terminationGracePeriodSeconds"], 0);
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "Never");
        assert_eq!(spec["containers"][0]["readinessProbe"]["periodSeconds"], 5);
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Container, SetDefaults_Probe,
    // SetDefaults_HTTPGetAction, SetDefaults_ObjectFieldSelector; ports'
    // protocol from ContainerPort's +default="TCP".
    #[test]
    fn container_defaults_in_every_list() {
        let container = json!({
            "name": "c", "image": "web:1",
            "ports": [{"containerPort": 80}],
            "env": [{"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
            "livenessProbe": {"httpGet": {"port": 80}},
            "lifecycle": {"preStop": {"httpGet": {"port": 80}}}
        });
        let spec = defaulted_pod(json!({
            "containers": [container.clone()], "initContainers": [container.clone()],
            "ephemeralContainers": [container]
        }));
        for list in CONTAINER_LISTS {
            let c = &spec[list][0];
            assert_eq!(c["imagePullPolicy"], "IfNotPresent", "{list}");
            assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
            assert_eq!(c["terminationMessagePolicy"], "File");
            assert_eq!(c["resources"], json!({}));
            assert_eq!(c["ports"][0]["protocol"], "TCP");
            assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
            assert_eq!(
                c["livenessProbe"],
                json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                    "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
            );
            assert_eq!(c["lifecycle"]["preStop"]["httpGet"]["scheme"], "HTTP");
        }
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Pod copies limits into
    // missing requests, for containers and init containers only.
    #[test]
    fn requests_default_to_limits() {
        let spec = defaulted_pod(json!({"containers": [{"name": "c", "image": "x",
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}]}));
        assert_eq!(spec["containers"][0]["resources"]["requests"], json!({"cpu": "500m", "memory": "1Gi"}));
        let mut template = json!({"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}}}]})
            .as_object()
            .cloned()
            .unwrap_or_default();
        template_spec(&mut template);
        assert!(template["containers"][0]["resources"].get("requests").is_none(), "templates keep requests unset");
        assert!(template.get("enableServiceLinks").is_none(), "enableServiceLinks is Pod-only");
    }

    // pkg/apis/core/v1/defaults.go: SetDefaults_Pod, defaultHostNetworkPorts
    #[test]
    fn host_network_ports() {
        let spec = defaulted_pod(json!({"hostNetwork": true,
            "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 1}]}]}));
        assert_eq!(spec["containers"][0]["ports"][0]["hostPort"], 8080);
        assert_eq!(spec["containers"][0]["ports"][1]["hostPort"], 1);
        let spec =
            defaulted_pod(json!({"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 8080}]}]}));
        assert!(spec["containers"][0]["ports"][0].get("hostPort").is_none());
    }

    // pkg/apis/core/v1/conversion.go: Convert_v1_PodSpec_To_core_PodSpec and back.
    // pkg/apis/core/v1/conversion.go: PodStatus IPs, dropInitContainerAnnotations.
    #[test]
    fn status_ips_and_legacy_annotations() {
        let mut object = json!({
            "metadata": {"annotations": {"a": "b", "pod.beta.kubernetes.io/init-containers": "[]"}},
            "status": {"podIP": "10.0.0.1", "hostIPs": [{"ip": "192.168.0.1"}, {"ip": "fd00::1"}]}
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        pod(&mut object);
        assert_eq!(object["metadata"]["annotations"], json!({"a": "b"}));
        assert_eq!(object["status"]["podIPs"], json!([{"ip": "10.0.0.1"}]));
        assert_eq!(object["status"]["hostIP"], "192.168.0.1");
        // The single field wins when both are set and differ.
        let mut object = json!({"status": {"podIP": "10.0.0.2", "podIPs": [{"ip": "10.0.0.1"}]}})
            .as_object()
            .cloned()
            .unwrap_or_default();
        pod(&mut object);
        assert_eq!(object["status"]["podIPs"], json!([{"ip": "10.0.0.2"}]));
    }

    #[test]
    fn service_account_alias() {
        let spec = defaulted_pod(json!({"serviceAccount": "old", "containers": []}));
        assert_eq!((spec["serviceAccountName"].as_str(), spec["serviceAccount"].as_str()), (Some("old"), Some("old")));
        let spec = defaulted_pod(json!({"serviceAccount": "old", "serviceAccountName": "new", "containers": []}));
        assert_eq!((spec["serviceAccountName"].as_str(), spec["serviceAccount"].as_str()), (Some("new"), Some("new")));
        let spec = defaulted_pod(json!({"containers": []}));
        assert!(spec.get("serviceAccount").is_none());
    }
}
