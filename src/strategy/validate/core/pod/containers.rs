//! Containers (`validateContainers`, `validateInitContainers`,
//! `validateContainerCommon`): names, ports, env (fileKeyRef included:
//! EnvFiles is on in v1.36), mounts, devices, probes, lifecycle hooks, and
//! container restart policies and rules (ContainerRestartRules is on).

use super::*;

/// kube's `validateContainers` (regular containers).
pub(super) fn containers(
    spec: &Value,
    volumes: &HashMap<String, &'static str>,
    grace: Option<i64>,
    path: &str,
    restart_policy: &str,
    host_users: bool,
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
        errs.extend(container_common(container, volumes, &container_path, restart_policy, host_users));
        let name = text(container, "name");
        if !names.insert(name) {
            errs.push(FieldError::duplicate(&child(&container_path, "name"), name));
        }
        errs.extend(lifecycle_and_probes(container, grace, &container_path));
        // ContainerRestartRules is on (beta since v1.35): a regular container
        // may carry its own restartPolicy and rules.
        errs.extend(container_restart_policy(container, &container_path));
    }
    errs.extend(host_port_conflicts(items, &path));
    errs
}

/// kube's `validateInitContainers`.
pub(super) fn init_containers(
    spec: &Value,
    volumes: &HashMap<String, &'static str>,
    grace: Option<i64>,
    path: &str,
    restart_policy: &str,
    host_users: bool,
) -> Errs {
    let path = child(path, "initContainers");
    let mut errs = Errs::new();
    let mut names: HashSet<&str> = list(spec, "containers").iter().map(|c| text(c, "name")).collect();
    for (i, container) in list(spec, "initContainers").iter().enumerate() {
        let container_path = index(&path, i);
        errs.extend(container_common(container, volumes, &container_path, restart_policy, host_users));
        errs.extend(init_container_restart_policy(container, &container_path));
        let restart_always = container.get("restartPolicy").and_then(Value::as_str) == Some("Always");
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

/// The most rules a container's `restartPolicyRules` holds, and the most
/// exit codes one rule lists (kube's `validateContainerRestartPolicy`).
const RESTART_RULES_MAX: usize = 20;
const RESTART_RULE_EXIT_CODES_MAX: usize = 255;

/// kube's `validateContainerRestartPolicy` (ContainerRestartRules on;
/// RestartAllContainersOnContainerExits, alpha, off: the only action is
/// `Restart`): a container's restartPolicy and restartPolicyRules.
pub(super) fn container_restart_policy(container: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    let rules = list(container, "restartPolicyRules");
    let policy_path = child(path, "restartPolicy");
    match container.get("restartPolicy").and_then(Value::as_str) {
        None if rules.is_empty() => return errs,
        None => errs.push(FieldError::required(&policy_path, "must specify restartPolicy when restart rules are used")),
        Some("Always" | "Never" | "OnFailure") => {}
        Some(other) => errs.push(FieldError::not_supported(&policy_path, other, &["Always", "Never", "OnFailure"])),
    }
    let rules_path = child(path, "restartPolicyRules");
    if rules.len() > RESTART_RULES_MAX {
        errs.push(FieldError::too_many(&rules_path, rules.len(), RESTART_RULES_MAX));
    }
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = index(&rules_path, i);
        let action = text(rule, "action");
        if action != "Restart" {
            errs.push(FieldError::not_supported(&child(&rule_path, "action"), action, &["Restart"]));
        }
        match rule.get("exitCodes").filter(|v| v.is_object()) {
            Some(codes) => {
                let codes_path = child(&rule_path, "exitCodes");
                let operator = text(codes, "operator");
                if !["In", "NotIn"].contains(&operator) {
                    errs.push(FieldError::not_supported(&child(&codes_path, "operator"), operator, &["In", "NotIn"]));
                }
                let values = list(codes, "values");
                if values.len() > RESTART_RULE_EXIT_CODES_MAX {
                    errs.push(FieldError::too_many(
                        &child(&codes_path, "values"),
                        values.len(),
                        RESTART_RULE_EXIT_CODES_MAX,
                    ));
                }
            }
            None => errs.push(FieldError::required(&child(&rule_path, "exitCodes"), "must be specified")),
        }
    }
    errs
}

/// kube's `validateInitContainerRestartPolicy` (ContainerRestartRules on):
/// `Always` makes a sidecar, which takes no rules; any other policy is
/// checked as a regular container's.
pub(super) fn init_container_restart_policy(container: &Value, path: &str) -> Errs {
    let rules = list(container, "restartPolicyRules");
    match container.get("restartPolicy").and_then(Value::as_str) {
        None if rules.is_empty() => Vec::new(),
        None => vec![FieldError::required(
            &child(path, "restartPolicy"),
            "must specify restartPolicy when restart rules are used",
        )],
        Some("Always") if !rules.is_empty() => vec![FieldError::forbidden(
            &child(path, "restartPolicyRules"),
            "restartPolicyRules are not allowed for init containers with restart policy Always",
        )],
        Some("Always") => Vec::new(),
        Some(_) => container_restart_policy(container, path),
    }
}

/// lifecycle and the three probes of a container that may have them.
pub(super) fn lifecycle_and_probes(container: &Value, grace: Option<i64>, path: &str) -> Errs {
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
        } else if let Some(threshold) = int(probe, "successThreshold").filter(|t| *t != 1 && *t != 0) {
            // 0 is defaulted to 1 (SetDefaults_Probe).
            errs.push(invalid_int(&child(&probe_path, "successThreshold"), threshold, "must be 1"));
        }
    }
    errs
}

/// kube's `validateProbe`.
pub(super) fn validate_probe(probe: &Value, grace: Option<i64>, path: &str) -> Errs {
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
pub(super) fn validate_handler(handler: &Value, grace: Option<i64>, path: &str, lifecycle: bool) -> Errs {
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

pub(super) fn http_get(action: &Value, path: &str) -> Errs {
    // An empty path is defaulted to "/" (SetDefaults_HTTPGetAction).
    let mut errs = Errs::new();
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

pub(super) fn sleep_action(action: &Value, grace: Option<i64>, path: &str) -> Errs {
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
pub(super) fn container_common(
    container: &Value,
    volumes: &HashMap<String, &'static str>,
    path: &str,
    restart_policy: &str,
    host_users: bool,
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
    errs.extend(container_security_context(
        container.get("securityContext"),
        &child(path, "securityContext"),
        host_users,
    ));
    errs
}

pub(super) fn pull_policy(policy: Option<&Value>, field: &str) -> Errs {
    supported_if_set(policy, field, &["Always", "IfNotPresent", "Never"])
}

/// kube's `validateContainerPorts`.
pub(super) fn container_ports(ports: &[Value], path: &str) -> Errs {
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
pub(super) fn host_port_conflicts(containers: &[Value], path: &str) -> Errs {
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
pub(super) fn host_network_deps(spec: &Value, path: &str, opts: PodOptions<'_>) -> Errs {
    if !flag(spec, "hostNetwork") {
        return Vec::new();
    }
    let mut errs = Errs::new();
    for (i, container) in list(spec, "containers").iter().enumerate() {
        for (j, port) in list(container, "ports").iter().enumerate() {
            let container_port = int(port, "containerPort").unwrap_or(0);
            // An absent or 0 hostPort is defaulted to containerPort when
            // hostNetwork is set (SetDefaults_PodSpec).
            let Some(host_port) = int(port, "hostPort").filter(|h| *h != 0) else {
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
pub(super) fn env(vars: &[Value], path: &str) -> Errs {
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
pub(super) fn env_value_from(var: &Value, path: &str) -> Errs {
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
    if let Some(selector) = from.get("fileKeyRef").filter(|v| v.is_object()) {
        sources += 1;
        errs.extend(file_key_selector(selector, &child(path, "fileKeyRef")));
    }
    if sources == 0 {
        // EnvFiles is on (beta since v1.35), so kube names fileKeyRef too.
        errs.push(FieldError::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`",
        ));
    } else if !text(var, "value").is_empty() {
        errs.push(FieldError::invalid(path, "", "may not be specified when `value` is not empty"));
    } else if sources > 1 {
        errs.push(FieldError::invalid(path, "", "may not have more than one field specified at a time"));
    }
    errs
}

/// kube's `validateFileKeySelector`: the key is an environment variable
/// name, the volume a DNS-1123 label, the path without backsteps.
pub(super) fn file_key_selector(selector: &Value, path: &str) -> Errs {
    let mut errs = Errs::new();
    let key = text(selector, "key");
    let key_path = child(path, "key");
    if key.is_empty() {
        errs.push(FieldError::required(&key_path, ""));
    } else {
        errs.extend(is_relaxed_env_var_name(key).iter().map(|m| FieldError::invalid(&key_path, key, m)));
    }
    let volume = text(selector, "volumeName");
    let volume_path = child(path, "volumeName");
    if volume.is_empty() {
        errs.push(FieldError::required(&volume_path, ""));
    } else {
        errs.extend(dns1123_label(&volume_path, volume));
    }
    let file = text(selector, "path");
    let file_path = child(path, "path");
    if file.is_empty() {
        errs.push(FieldError::required(&file_path, ""));
    } else {
        errs.extend(no_backsteps(file, &file_path));
    }
    errs
}

/// The field paths kube's v1 downward API converts
/// (`ConvertDownwardAPIFieldLabel`), besides subscripted labels/annotations.
pub(super) const DOWNWARD_API_FIELDS: &[&str] = &[
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
pub(super) fn object_field_selector(selector: &Value, allowed: &[&str], path: &str) -> Errs {
    // An empty apiVersion is defaulted to v1 (SetDefaults_ObjectFieldSelector).
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
pub(super) fn split_subscript(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (base, subscript) = inner.split_once("['")?;
    Some((base, subscript))
}

/// kube's `validateContainerResourceFieldSelector`.
pub(super) fn resource_field_selector(selector: &Value, path: &str, volume: bool) -> Errs {
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
pub(super) fn key_selector(selector: &Value, path: &str) -> Errs {
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
pub(super) fn env_from(sources: &[Value], path: &str) -> Errs {
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
pub(super) fn volume_mounts(container: &Value, volumes: &HashMap<String, &'static str>, path: &str) -> Errs {
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
pub(super) fn mount_sub_paths(mount: &Value, source: Option<&str>, mount_path: &str, list_path: &str) -> Errs {
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
pub(super) fn recursive_read_only(mount: &Value, field: &str) -> Errs {
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
pub(super) fn volume_devices(container: &Value, volumes: &HashMap<String, &'static str>, path: &str) -> Errs {
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
pub(super) fn resize_policy(policies: &[Value], path: &str, restart_policy: &str) -> Errs {
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
