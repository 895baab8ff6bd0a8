//! PodSecurity: the Pod Security Standards, as the namespace's
//! `pod-security.kubernetes.io/{enforce,warn,audit}` labels (and their
//! `-version` labels) ask. A pod that violates the enforce level is 403
//! `violates PodSecurity "LEVEL:VERSION": ...`; one that passes but violates
//! the warn level gets a `would violate PodSecurity ...` warning. Workload
//! resources (their pod templates) are never refused, only warned about.
//! Updates of a pod are checked only when an image or a seccomp annotation
//! changed. Audit annotations are not written (Shardline has no audit log).
// staging/src/k8s.io/pod-security-admission/admission/admission.go: ValidatePod,
// ValidatePodController, EvaluatePod, isSignificantPodUpdate, ignoredPodSubresources
// staging/src/k8s.io/pod-security-admission/api/helpers.go: PolicyToEvaluate, ParseLevel, ParseVersion
// staging/src/k8s.io/pod-security-admission/policy/registry.go: checks ordered by ID, baseline first
// staging/src/k8s.io/pod-security-admission/policy/checks.go: ForbiddenDetail
// staging/src/k8s.io/pod-security-admission/policy/check_*.go: each check below

use super::{containers, Attributes, Object, Operation, Rejection};
use crate::types::validation::{go_quote, FieldError};
use serde_json::Value;
use std::collections::BTreeSet;

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";
/// The newest policy version this implementation knows (kube v1.36's
/// checks); `latest` and newer versions evaluate as this one.
const LATEST_MINOR: u32 = 36;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    /// `ParseLevel`: an invalid value fails closed (restricted).
    fn parse(text: &str) -> Option<Level> {
        match text {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }
}

/// A policy version: `latest` or `v1.MINOR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    Latest,
    Minor(u32),
}

impl Version {
    /// `ParseVersion`: an invalid value is `latest`.
    fn parse(text: &str) -> Option<Version> {
        if text == "latest" {
            return Some(Version::Latest);
        }
        let minor = text.strip_prefix("v1.")?;
        // `^v1\.([0-9]|[1-9][0-9]*)$`
        let digits = !minor.is_empty() && minor.len() <= 9 && minor.chars().all(|c| c.is_ascii_digit());
        if !digits || (minor.len() > 1 && minor.starts_with('0')) {
            return None;
        }
        minor.parse().ok().map(Version::Minor)
    }

    fn effective_minor(self) -> u32 {
        match self {
            Version::Latest => LATEST_MINOR,
            Version::Minor(m) => m.min(LATEST_MINOR),
        }
    }

    fn text(self) -> String {
        match self {
            Version::Latest => "latest".into(),
            Version::Minor(m) => format!("v1.{m}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl LevelVersion {
    pub fn text(self) -> String {
        format!("{}:{}", self.level.name(), self.version.text())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

/// The policy of a namespace's labels over the default (privileged:latest
/// for every mode: kube-apiserver's default configuration), and the labels'
/// errors. An invalid enforce level is restricted (fail closed), an invalid
/// audit or warn level privileged (fail open), an invalid version latest.
/// Warn defaults to a valid enforce level that is stricter (and its
/// version) when the warn label is absent.
pub fn policy(labels: Option<&Object>) -> (Policy, Vec<FieldError>) {
    let default = LevelVersion { level: Level::Privileged, version: Version::Latest };
    let mut p = Policy { enforce: default, audit: default, warn: default };
    let mut errors = Vec::new();
    let label = |mode: &str| -> Option<(String, String)> {
        let key = format!("{LABEL_PREFIX}{mode}");
        let value = labels.and_then(|l| l.get(&key)).and_then(Value::as_str)?;
        Some((key, value.to_string()))
    };
    let enforce = label("enforce");
    let enforce_valid = enforce.as_ref().is_some_and(|(_, v)| Level::parse(v).is_some());
    set_level(&enforce, Level::Restricted, &mut p.enforce.level, &mut errors);
    set_version(&label("enforce-version"), &mut p.enforce.version, &mut errors);
    set_level(&label("audit"), Level::Privileged, &mut p.audit.level, &mut errors);
    set_version(&label("audit-version"), &mut p.audit.version, &mut errors);
    let (warn, warn_version) = (label("warn"), label("warn-version"));
    set_level(&warn, Level::Privileged, &mut p.warn.level, &mut errors);
    set_version(&warn_version, &mut p.warn.version, &mut errors);
    if warn.is_none() && enforce_valid && p.enforce.level > p.warn.level {
        p.warn.level = p.enforce.level;
        if warn_version.is_none() {
            p.warn.version = p.enforce.version;
        }
    }
    (p, errors)
}

/// `ParseLevel` of a label, if present: `invalid` and an error when it is
/// not a level.
fn set_level(found: &Option<(String, String)>, invalid: Level, target: &mut Level, errors: &mut Vec<FieldError>) {
    const LEVELS_MESSAGE: &str = "must be one of privileged, baseline, restricted";
    let Some((key, value)) = found else { return };
    *target = Level::parse(value).unwrap_or_else(|| {
        errors.push(FieldError::invalid(&format!("metadata.labels[{key}]"), value, LEVELS_MESSAGE));
        invalid
    });
}

/// `ParseVersion` of a label, if present: latest and an error when invalid.
fn set_version(found: &Option<(String, String)>, target: &mut Version, errors: &mut Vec<FieldError>) {
    const VERSION_MESSAGE: &str = "must be \"latest\" or \"v1.x\"";
    let Some((key, value)) = found else { return };
    *target = Version::parse(value).unwrap_or_else(|| {
        errors.push(FieldError::invalid(&format!("metadata.labels[{key}]"), value, VERSION_MESSAGE));
        Version::Latest
    });
}

/// A Namespace's PodSecurity labels must be valid when it is created, and
/// when an update changes their errors.
// staging/src/k8s.io/pod-security-admission/admission/admission.go: ValidateNamespace
pub fn validate_namespace(namespace: &Object, old: Option<&Object>) -> Result<(), Rejection> {
    let labels = |o: &Object| super::map(o, &["metadata", "labels"]).cloned();
    let (_, errors) = policy(labels(namespace).as_ref());
    if errors.is_empty() {
        return Ok(());
    }
    if let Some(old) = old {
        let (_, old_errors) = policy(labels(old).as_ref());
        if !old_errors.is_empty() && old_errors == errors {
            return Ok(());
        }
    }
    Err(Rejection::Invalid(errors))
}

/// The enforce level an updated namespace's existing pods are checked
/// against (for warnings only), if its enforce policy became stricter.
// staging/src/k8s.io/pod-security-admission/admission/admission.go: ValidateNamespace
pub fn namespace_pods_check(namespace: &Object, old: &Object) -> Option<LevelVersion> {
    let labels = |o: &Object| super::map(o, &["metadata", "labels"]).cloned();
    let (new, _) = policy(labels(namespace).as_ref());
    let (before, _) = policy(labels(old).as_ref());
    if new.enforce == before.enforce || new.enforce.level == Level::Privileged {
        return None;
    }
    if new.enforce.version == before.enforce.version && new.enforce.level <= before.enforce.level {
        return None;
    }
    Some(new.enforce)
}

/// Pods checked when a namespace's enforce level changes
/// (`namespaceMaxPodsToCheck`).
pub const NAMESPACE_PODS_CHECKED_MAX: usize = 3000;

/// The warnings of a namespace update that makes `pods` (of `total`) violate
/// its new enforce level: one per distinct set of reasons, naming the first
/// pod (by name) and how many others share it.
// staging/src/k8s.io/pod-security-admission/admission/admission.go: EvaluatePodsInNamespace, decoratePodWarnings
pub fn existing_pod_warnings(namespace: &str, lv: LevelVersion, pods: &[Object], total: usize) -> Vec<String> {
    let empty = Object::new();
    let mut by_reason: Vec<(String, String, usize)> = Vec::new();
    for pod in pods {
        let view = PodView {
            meta: super::map(pod, &["metadata"]).unwrap_or(&empty),
            spec: super::map(pod, &["spec"]).unwrap_or(&empty),
        };
        let violations = evaluate(lv, &view);
        if violations.is_empty() {
            continue;
        }
        let reason = violations.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>().join(", ");
        let name = super::text(pod, &["metadata", "name"]).to_string();
        match by_reason.iter_mut().find(|(r, _, _)| *r == reason) {
            Some(entry) => {
                if name < entry.1 {
                    entry.1 = name;
                }
                entry.2 += 1;
            }
            None => by_reason.push((reason, name, 1)),
        }
    }
    let mut warnings = Vec::new();
    if pods.len() < total {
        warnings.push(format!(
            "new PodSecurity enforce level only checked against the first {} of {total} existing pods",
            pods.len()
        ));
    }
    if !by_reason.is_empty() {
        warnings.push(format!(
            "existing pods in namespace {} violate the new PodSecurity enforce level {}",
            go_quote(namespace),
            go_quote(&lv.text())
        ));
    }
    let mut decorated: Vec<String> = by_reason
        .into_iter()
        .map(|(reason, name, count)| match count {
            1 => format!("{name}: {reason}"),
            2 => format!("{name} (and 1 other pod): {reason}"),
            n => format!("{name} (and {} other pods): {reason}", n - 1),
        })
        .collect();
    decorated.sort();
    warnings.extend(decorated);
    warnings
}

/// Pods (not their status, binding, logs...) and the resources that hold
/// a pod template; creates and updates.
pub fn applies(attributes: &Attributes) -> bool {
    if attributes.group.is_empty() && attributes.resource == "namespaces" {
        return attributes.subresource.is_none();
    }
    const IGNORED_POD_SUBRESOURCES: [&str; 8] =
        ["exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"];
    if attributes.group.is_empty() && attributes.resource == "pods" {
        return attributes.subresource.is_none_or(|s| !IGNORED_POD_SUBRESOURCES.contains(&s));
    }
    attributes.subresource.is_none() && template_path(attributes.group, attributes.resource).is_some()
}

/// Where a workload resource keeps its pod template.
// staging/src/k8s.io/pod-security-admission/admission/admission.go: DefaultPodSpecExtractor
fn template_path(group: &str, resource: &str) -> Option<&'static [&'static str]> {
    match (group, resource) {
        ("", "podtemplates") => Some(&["template"]),
        ("", "replicationcontrollers")
        | ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets")
        | ("batch", "jobs") => Some(&["spec", "template"]),
        ("batch", "cronjobs") => Some(&["spec", "jobTemplate", "spec", "template"]),
        _ => None,
    }
}

/// The check's verdict on a pod: its warnings, or a 403.
pub fn validate(
    attributes: &Attributes,
    object: &Object,
    old: Option<&Object>,
    namespace: Option<&Object>,
) -> Result<Vec<String>, Rejection> {
    if attributes.group.is_empty() && attributes.resource == "namespaces" {
        return validate_namespace(object, old).map(|()| Vec::new());
    }
    let labels = namespace.and_then(|ns| super::map(ns, &["metadata", "labels"]));
    let (policy, _) = policy(labels);
    let is_pod = attributes.group.is_empty() && attributes.resource == "pods";
    let (meta, spec) = if is_pod {
        if attributes.operation == Operation::Update && old.is_some_and(|old| !significant_update(object, old)) {
            return Ok(Vec::new());
        }
        (super::map(object, &["metadata"]), super::map(object, &["spec"]))
    } else {
        let Some(path) = template_path(attributes.group, attributes.resource) else { return Ok(Vec::new()) };
        let Some(template) = super::map(object, path) else { return Ok(Vec::new()) };
        (super::map(template, &["metadata"]), super::map(template, &["spec"]))
    };
    let empty = Object::new();
    let pod = PodView { meta: meta.unwrap_or(&empty), spec: spec.unwrap_or(&empty) };
    if is_pod {
        let result = evaluate(policy.enforce, &pod);
        if !result.is_empty() {
            return Err(Rejection::Forbidden(format!(
                "violates PodSecurity {}: {}",
                go_quote(&policy.enforce.text()),
                detail(&result)
            )));
        }
    }
    let warn = evaluate(policy.warn, &pod);
    if warn.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![format!("would violate PodSecurity {}: {}", go_quote(&policy.warn.text()), detail(&warn))])
}

/// `isSignificantPodUpdate`: images, containers added or removed, seccomp
/// annotations.
fn significant_update(pod: &Object, old: &Object) -> bool {
    const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
    const SECCOMP_CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
    let annotation = |o: &Object, key: &str| super::text(o, &["metadata", "annotations", key]).to_string();
    if annotation(pod, SECCOMP_POD) != annotation(old, SECCOMP_POD) {
        return true;
    }
    let changed = |a: &Value, b: &Value| {
        let name = a.get("name").and_then(Value::as_str).unwrap_or("");
        let key = format!("{SECCOMP_CONTAINER}{name}");
        a.get("image") != b.get("image") || annotation(pod, &key) != annotation(old, &key)
    };
    for kind in ["containers", "initContainers"] {
        let (new, before) = (super::list(pod, &["spec", kind]), super::list(old, &["spec", kind]));
        if new.len() != before.len() || new.iter().zip(before).any(|(a, b)| changed(a, b)) {
            return true;
        }
    }
    let before = super::list(old, &["spec", "ephemeralContainers"]);
    super::list(pod, &["spec", "ephemeralContainers"]).iter().any(|c| {
        let name = c.get("name");
        match before.iter().find(|o| o.get("name") == name) {
            None => true,
            Some(o) => changed(c, o),
        }
    })
}

/// A pod's metadata and spec (of a pod, or of a template).
pub struct PodView<'a> {
    pub meta: &'a Object,
    pub spec: &'a Object,
}

impl PodView<'_> {
    fn security_context(&self) -> Option<&Object> {
        self.spec.get("securityContext").and_then(Value::as_object)
    }

    fn containers(&self) -> impl Iterator<Item = (&str, &Object)> + '_ {
        containers(self.spec).map(|(_, c)| (c.get("name").and_then(Value::as_str).unwrap_or(""), c))
    }

    fn windows(&self) -> bool {
        super::text(self.spec, &["os", "name"]) == "windows"
    }
}

/// A violated check: its reason and detail.
pub type Violation = (String, String);

fn detail(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|(reason, detail)| if detail.is_empty() { reason.clone() } else { format!("{reason} ({detail})") })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One check of the standards.
struct Check {
    id: &'static str,
    level: Level,
    /// The first policy version with this check.
    since: u32,
    /// Baseline checks this restricted check replaces.
    overrides: &'static [&'static str],
    run: fn(&PodView, u32) -> Option<Violation>,
}

/// Every check, baseline ones first, each level sorted by ID (the order of
/// kube's messages).
const CHECKS: &[Check] = &[
    Check { id: "appArmorProfile", level: Level::Baseline, since: 0, overrides: &[], run: app_armor },
    Check { id: "capabilities_baseline", level: Level::Baseline, since: 0, overrides: &[], run: capabilities_baseline },
    Check { id: "hostNamespaces", level: Level::Baseline, since: 0, overrides: &[], run: host_namespaces },
    Check { id: "hostPathVolumes", level: Level::Baseline, since: 0, overrides: &[], run: host_path_volumes },
    Check { id: "hostPorts", level: Level::Baseline, since: 0, overrides: &[], run: host_ports },
    Check { id: "hostProbesAndHostLifecycle", level: Level::Baseline, since: 34, overrides: &[], run: probe_hosts },
    Check { id: "privileged", level: Level::Baseline, since: 0, overrides: &[], run: privileged },
    Check { id: "procMount", level: Level::Baseline, since: 0, overrides: &[], run: proc_mount },
    Check { id: "seLinuxOptions", level: Level::Baseline, since: 0, overrides: &[], run: se_linux },
    Check { id: "seccompProfile_baseline", level: Level::Baseline, since: 0, overrides: &[], run: seccomp_baseline },
    Check { id: "sysctls", level: Level::Baseline, since: 0, overrides: &[], run: sysctls },
    Check { id: "windowsHostProcess", level: Level::Baseline, since: 0, overrides: &[], run: host_process },
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        since: 8,
        overrides: &[],
        run: privilege_escalation,
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        since: 22,
        overrides: &["capabilities_baseline"],
        run: capabilities_restricted,
    },
    Check {
        id: "procMount_restricted",
        level: Level::Restricted,
        since: 35,
        overrides: &["procMount"],
        run: proc_mount,
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        since: 0,
        overrides: &["hostPathVolumes"],
        run: restricted_volumes,
    },
    Check { id: "runAsNonRoot", level: Level::Restricted, since: 0, overrides: &[], run: run_as_non_root },
    Check { id: "runAsUser", level: Level::Restricted, since: 23, overrides: &[], run: run_as_user },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        since: 19,
        overrides: &["seccompProfile_baseline"],
        run: seccomp_restricted,
    },
];

/// The violations of a pod at a level and version, in kube's order.
pub fn evaluate(lv: LevelVersion, pod: &PodView) -> Vec<Violation> {
    if lv.level == Level::Privileged {
        return Vec::new();
    }
    let minor = lv.version.effective_minor();
    let active: Vec<&Check> = CHECKS.iter().filter(|c| c.since <= minor && c.level <= lv.level).collect();
    let overridden: BTreeSet<&str> = active.iter().flat_map(|c| c.overrides.iter().copied()).collect();
    active.into_iter().filter(|c| !overridden.contains(c.id)).filter_map(|c| (c.run)(pod, minor)).collect()
}

// --- message helpers (policy/helpers.go)

fn join_quote(items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    format!("\"{}\"", items.join("\", \""))
}

fn pluralize<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    if count == 1 {
        singular
    } else {
        plural
    }
}

fn containers_phrase(names: &[String]) -> String {
    format!("{} {}", pluralize("container", "containers", names.len()), join_quote(names))
}

fn violation(reason: &str, detail: String) -> Option<Violation> {
    Some((reason.to_string(), detail))
}

fn sc(container: &Object) -> Option<&Object> {
    container.get("securityContext").and_then(Value::as_object)
}

fn sc_text<'a>(container: &'a Object, path: &[&str]) -> Option<&'a str> {
    super::field(sc(container)?, path).and_then(Value::as_str)
}

fn sc_bool(container: &Object, path: &[&str]) -> Option<bool> {
    super::field(sc(container)?, path).and_then(Value::as_bool)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
}

// --- baseline checks

// check_appArmorProfile.go
fn app_armor(pod: &PodView, _: u32) -> Option<Violation> {
    const ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
    let allowed_type = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(t) = pod.security_context().and_then(|s| super::text_opt(s, &["appArmorProfile", "type"])) {
        if !allowed_type(t) {
            setters.push("pod".to_string());
            values.insert(t.to_string());
        }
    }
    let mut bad = Vec::new();
    for (name, c) in pod.containers() {
        if let Some(t) = sc_text(c, &["appArmorProfile", "type"]) {
            if !allowed_type(t) {
                bad.push(name.to_string());
                values.insert(t.to_string());
            }
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    let mut annotations: Vec<String> = pod
        .meta
        .get("annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k, v.as_str()?)))
        .filter(|(k, v)| {
            k.starts_with(ANNOTATION_PREFIX)
                && !(v.is_empty() || *v == "runtime/default" || v.starts_with("localhost/"))
        })
        .map(|(k, v)| format!("{k}={}", go_quote(v)))
        .collect();
    annotations.sort();
    let mut value_list: Vec<String> = values.into_iter().collect();
    if !annotations.is_empty() {
        setters.push(pluralize("annotation", "annotations", annotations.len()).to_string());
        value_list.extend(annotations);
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", value_list.len()),
        format!("{} must not set AppArmor profile type to {}", setters.join(" and "), join_quote(&value_list)),
    )
}

// check_capabilities_baseline.go
fn capabilities_baseline(pod: &PodView, _: u32) -> Option<Violation> {
    const ALLOWED: [&str; 13] = [
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    ];
    let mut bad = Vec::new();
    let mut caps = BTreeSet::new();
    for (name, c) in pod.containers() {
        let added = strings(sc(c).and_then(|s| super::field(s, &["capabilities", "add"])));
        let forbidden: Vec<String> = added.into_iter().filter(|a| !ALLOWED.contains(&a.as_str())).collect();
        if !forbidden.is_empty() {
            bad.push(name.to_string());
            caps.extend(forbidden);
        }
    }
    if bad.is_empty() {
        return None;
    }
    let caps: Vec<String> = caps.into_iter().collect();
    violation(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad),
            join_quote(&caps)
        ),
    )
}

// check_hostNamespaces.go
fn host_namespaces(pod: &PodView, _: u32) -> Option<Violation> {
    let set: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .filter(|f| pod.spec.get(*f).and_then(Value::as_bool) == Some(true))
        .map(|f| format!("{f}=true"))
        .collect();
    if set.is_empty() {
        return None;
    }
    violation("host namespaces", set.join(", "))
}

fn volumes<'a>(pod: &'a PodView) -> impl Iterator<Item = (&'a str, &'a Object)> + 'a {
    super::list(pod.spec, &["volumes"])
        .iter()
        .filter_map(Value::as_object)
        .map(|v| (v.get("name").and_then(Value::as_str).unwrap_or(""), v))
}

// check_hostPathVolumes.go
fn host_path_volumes(pod: &PodView, _: u32) -> Option<Violation> {
    let names: Vec<String> =
        volumes(pod).filter(|(_, v)| v.contains_key("hostPath")).map(|(n, _)| n.to_string()).collect();
    if names.is_empty() {
        return None;
    }
    violation("hostPath volumes", format!("{} {}", pluralize("volume", "volumes", names.len()), join_quote(&names)))
}

// check_hostPorts.go
fn host_ports(pod: &PodView, _: u32) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut ports = BTreeSet::new();
    for (name, c) in pod.containers() {
        let used: Vec<String> = super::list(c, &["ports"])
            .iter()
            .filter_map(|p| p.get("hostPort").and_then(Value::as_i64))
            .filter(|p| *p != 0)
            .map(|p| p.to_string())
            .collect();
        if !used.is_empty() {
            bad.push(name.to_string());
            ports.extend(used);
        }
    }
    if bad.is_empty() {
        return None;
    }
    let ports: Vec<String> = ports.into_iter().collect();
    violation(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    )
}

// check_hostProbesAndhostLifecycle.go
fn probe_hosts(pod: &PodView, _: u32) -> Option<Violation> {
    let mut bad = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for (name, c) in pod.containers() {
        let handlers = [
            c.get("livenessProbe"),
            c.get("readinessProbe"),
            c.get("startupProbe"),
            super::field(c, &["lifecycle", "postStart"]),
            super::field(c, &["lifecycle", "preStop"]),
        ];
        for handler in handlers.into_iter().flatten().filter_map(Value::as_object) {
            for kind in ["httpGet", "tcpSocket"] {
                let host = super::text(handler, &[kind, "host"]);
                if !host.is_empty() {
                    bad.insert(name.to_string());
                    hosts.insert(host.to_string());
                }
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    let (bad, hosts): (Vec<String>, Vec<String>) = (bad.into_iter().collect(), hosts.into_iter().collect());
    violation(
        "probe or lifecycle host",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("probe or lifecycle host", "probe or lifecycle hosts", hosts.len()),
            join_quote(&hosts)
        ),
    )
}

// check_privileged.go
fn privileged(pod: &PodView, _: u32) -> Option<Violation> {
    let bad: Vec<String> = pod
        .containers()
        .filter(|(_, c)| sc_bool(c, &["privileged"]) == Some(true))
        .map(|(n, _)| n.to_string())
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation("privileged", format!("{} must not set securityContext.privileged=true", containers_phrase(&bad)))
}

// check_procMount_baseline.go, check_procMount_restricted.go (the user
// namespace relaxation is behind a feature gate that is off by default).
fn proc_mount(pod: &PodView, _: u32) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for (name, c) in pod.containers() {
        if let Some(t) = sc_text(c, &["procMount"]) {
            if t != "Default" {
                bad.push(name.to_string());
                types.insert(t.to_string());
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    let types: Vec<String> = types.into_iter().collect();
    violation(
        "procMount",
        format!("{} must not set securityContext.procMount to {}", containers_phrase(&bad), join_quote(&types)),
    )
}

// check_seLinuxOptions.go
fn se_linux(pod: &PodView, _: u32) -> Option<Violation> {
    const ALLOWED_TYPES: [&str; 4] = ["", "container_t", "container_init_t", "container_kvm_t"];
    let mut bad_types = BTreeSet::new();
    let (mut set_user, mut set_role) = (false, false);
    let mut valid = |options: &Object| {
        let mut ok = true;
        let t = super::text(options, &["type"]);
        if !ALLOWED_TYPES.contains(&t) {
            ok = false;
            bad_types.insert(t.to_string());
        }
        if !super::text(options, &["user"]).is_empty() {
            ok = false;
            set_user = true;
        }
        if !super::text(options, &["role"]).is_empty() {
            ok = false;
            set_role = true;
        }
        ok
    };
    let mut setters = Vec::new();
    if let Some(options) = pod.security_context().and_then(|s| super::map(s, &["seLinuxOptions"])) {
        if !valid(options) {
            setters.push("pod".to_string());
        }
    }
    let mut bad = Vec::new();
    for (name, c) in pod.containers() {
        if let Some(options) = sc(c).and_then(|s| super::map(s, &["seLinuxOptions"])) {
            if !valid(options) {
                bad.push(name.to_string());
            }
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    // As kube words it: user and role are named only next to a bad type.
    let mut data = Vec::new();
    if !bad_types.is_empty() {
        let types: Vec<String> = bad_types.into_iter().collect();
        data.push(format!("{} {}", pluralize("type", "types", types.len()), join_quote(&types)));
        if set_user {
            data.push("user may not be set".to_string());
        }
        if set_role {
            data.push("role may not be set".to_string());
        }
    }
    violation(
        "seLinuxOptions",
        format!("{} set forbidden securityContext.seLinuxOptions: {}", setters.join(" and "), data.join("; ")),
    )
}

fn valid_seccomp(t: &str) -> bool {
    t == "RuntimeDefault" || t == "Localhost"
}

/// Setters (pod, containers) of a seccomp profile type that is not
/// allowed, their values, and the containers with no profile of their own.
struct Seccomp {
    setters: Vec<String>,
    values: Vec<String>,
    pod_valid: bool,
    unset: Vec<String>,
}

fn seccomp(pod: &PodView) -> Seccomp {
    let mut values = BTreeSet::new();
    let mut setters = Vec::new();
    let mut pod_valid = false;
    if let Some(profile) = pod.security_context().and_then(|s| super::map(s, &["seccompProfile"])) {
        let t = super::text(profile, &["type"]);
        if valid_seccomp(t) {
            pod_valid = true;
        } else {
            setters.push("pod".to_string());
            values.insert(t.to_string());
        }
    }
    let (mut bad, mut unset) = (Vec::new(), Vec::new());
    for (name, c) in pod.containers() {
        match sc(c).and_then(|s| super::map(s, &["seccompProfile"])) {
            Some(profile) => {
                let t = super::text(profile, &["type"]);
                if !valid_seccomp(t) {
                    bad.push(name.to_string());
                    values.insert(t.to_string());
                }
            }
            None => unset.push(name.to_string()),
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    Seccomp { setters, values: values.into_iter().collect(), pod_valid, unset }
}

// check_seccompProfile_baseline.go (the v1.19+ fields)
fn seccomp_baseline(pod: &PodView, _: u32) -> Option<Violation> {
    let s = seccomp(pod);
    if s.setters.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            s.setters.join(" and "),
            join_quote(&s.values)
        ),
    )
}

// check_sysctls.go: the safe set, by the version that added each.
fn sysctls(pod: &PodView, minor: u32) -> Option<Violation> {
    const SAFE: [(&str, u32); 12] = [
        ("kernel.shm_rmid_forced", 0),
        ("net.ipv4.ip_local_port_range", 0),
        ("net.ipv4.tcp_syncookies", 0),
        ("net.ipv4.ping_group_range", 0),
        ("net.ipv4.ip_unprivileged_port_start", 0),
        ("net.ipv4.ip_local_reserved_ports", 27),
        ("net.ipv4.tcp_keepalive_time", 29),
        ("net.ipv4.tcp_fin_timeout", 29),
        ("net.ipv4.tcp_keepalive_intvl", 29),
        ("net.ipv4.tcp_keepalive_probes", 29),
        ("net.ipv4.tcp_rmem", 32),
        ("net.ipv4.tcp_wmem", 32),
    ];
    let forbidden: Vec<String> = pod
        .security_context()
        .map(|s| super::list(s, &["sysctls"]))
        .unwrap_or(&[])
        .iter()
        .filter_map(|s| s.get("name").and_then(Value::as_str))
        .filter(|name| !SAFE.iter().any(|(safe, since)| safe == name && *since <= minor))
        .map(str::to_string)
        .collect();
    if forbidden.is_empty() {
        return None;
    }
    violation("forbidden sysctls", forbidden.join(", "))
}

// check_windowsHostProcess.go
fn host_process(pod: &PodView, _: u32) -> Option<Violation> {
    let mut setters = Vec::new();
    if pod.security_context().and_then(|s| super::field(s, &["windowsOptions", "hostProcess"])).and_then(Value::as_bool)
        == Some(true)
    {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = pod
        .containers()
        .filter(|(_, c)| sc_bool(c, &["windowsOptions", "hostProcess"]) == Some(true))
        .map(|(n, _)| n.to_string())
        .collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation(
        "hostProcess",
        format!("{} must not set securityContext.windowsOptions.hostProcess=true", setters.join(" and ")),
    )
}

// --- restricted checks (those of v1.25+ exempt pods whose spec.os.name is windows)

// check_allowPrivilegeEscalation.go
fn privilege_escalation(pod: &PodView, minor: u32) -> Option<Violation> {
    if minor >= 25 && pod.windows() {
        return None;
    }
    let bad: Vec<String> = pod
        .containers()
        .filter(|(_, c)| sc_bool(c, &["allowPrivilegeEscalation"]) != Some(false))
        .map(|(n, _)| n.to_string())
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation(
        "allowPrivilegeEscalation != false",
        format!("{} must set securityContext.allowPrivilegeEscalation=false", containers_phrase(&bad)),
    )
}

// check_capabilities_restricted.go
fn capabilities_restricted(pod: &PodView, minor: u32) -> Option<Violation> {
    if minor >= 25 && pod.windows() {
        return None;
    }
    let (mut missing_drop, mut adding) = (Vec::new(), Vec::new());
    let mut forbidden = BTreeSet::new();
    for (name, c) in pod.containers() {
        let Some(capabilities) = sc(c).and_then(|s| super::map(s, &["capabilities"])) else {
            missing_drop.push(name.to_string());
            continue;
        };
        if !strings(capabilities.get("drop")).iter().any(|d| d == "ALL") {
            missing_drop.push(name.to_string());
        }
        let added: Vec<String> =
            strings(capabilities.get("add")).into_iter().filter(|a| a != "NET_BIND_SERVICE").collect();
        if !added.is_empty() {
            adding.push(name.to_string());
            forbidden.extend(added);
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details
            .push(format!("{} must set securityContext.capabilities.drop=[\"ALL\"]", containers_phrase(&missing_drop)));
    }
    if !adding.is_empty() {
        let caps: Vec<String> = forbidden.into_iter().collect();
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&caps)
        ));
    }
    if details.is_empty() {
        return None;
    }
    violation("unrestricted capabilities", details.join("; "))
}

/// A volume's source, as kube names it in restrictedVolumes (allowed
/// sources are `None`).
fn restricted_volume_type(volume: &Object) -> Option<&'static str> {
    const ALLOWED: [&str; 8] =
        ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];
    const RESTRICTED: [&str; 20] = [
        "hostPath",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "gitRepo",
        "nfs",
        "iscsi",
        "glusterfs",
        "rbd",
        "flexVolume",
        "cinder",
        "cephfs",
        "flocker",
        "fc",
        "azureFile",
        "vsphereVolume",
        "quobyte",
        "azureDisk",
        "photonPersistentDisk",
        "portworxVolume",
        "scaleIO",
    ];
    if ALLOWED.iter().any(|k| volume.contains_key(*k)) {
        return None;
    }
    if volume.contains_key("storageos") {
        return Some("storageos");
    }
    Some(RESTRICTED.iter().copied().find(|k| volume.contains_key(*k)).unwrap_or("unknown"))
}

// check_restrictedVolumes.go
fn restricted_volumes(pod: &PodView, _: u32) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for (name, volume) in volumes(pod) {
        if let Some(t) = restricted_volume_type(volume) {
            bad.push(name.to_string());
            types.insert(t.to_string());
        }
    }
    if bad.is_empty() {
        return None;
    }
    let types: Vec<String> = types.into_iter().collect();
    violation(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("restricted volume type", "restricted volume types", types.len()),
            join_quote(&types)
        ),
    )
}

// check_runAsNonRoot.go
fn run_as_non_root(pod: &PodView, _: u32) -> Option<Violation> {
    let mut setters = Vec::new();
    let mut pod_non_root = false;
    match pod.security_context().and_then(|s| s.get("runAsNonRoot")).and_then(Value::as_bool) {
        Some(false) => setters.push("pod".to_string()),
        Some(true) => pod_non_root = true,
        None => {}
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for (name, c) in pod.containers() {
        match sc_bool(c, &["runAsNonRoot"]) {
            Some(false) => explicit.push(name.to_string()),
            Some(true) => {}
            None if !pod_non_root => implicit.push(name.to_string()),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return violation(
            "runAsNonRoot != true",
            format!("{} must not set securityContext.runAsNonRoot=false", setters.join(" and ")),
        );
    }
    if implicit.is_empty() {
        return None;
    }
    violation(
        "runAsNonRoot != true",
        format!("pod or {} must set securityContext.runAsNonRoot=true", containers_phrase(&implicit)),
    )
}

// check_runAsUser.go
fn run_as_user(pod: &PodView, _: u32) -> Option<Violation> {
    let mut setters = Vec::new();
    if pod.security_context().and_then(|s| s.get("runAsUser")).and_then(Value::as_i64) == Some(0) {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = pod
        .containers()
        .filter(|(_, c)| sc(c).and_then(|s| s.get("runAsUser")).and_then(Value::as_i64) == Some(0))
        .map(|(n, _)| n.to_string())
        .collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    violation("runAsUser=0", format!("{} must not set runAsUser=0", setters.join(" and ")))
}

// check_seccompProfile_restricted.go
fn seccomp_restricted(pod: &PodView, minor: u32) -> Option<Violation> {
    if minor >= 25 && pod.windows() {
        return None;
    }
    let s = seccomp(pod);
    if !s.setters.is_empty() {
        return violation(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                s.setters.join(" and "),
                join_quote(&s.values)
            ),
        );
    }
    let implicit: Vec<String> = if s.pod_valid { Vec::new() } else { s.unset };
    if implicit.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&implicit)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    fn namespace(labels: Value) -> Object {
        object(json!({"metadata": {"name": "ns", "labels": labels}}))
    }

    fn attributes(group: &'static str, resource: &'static str) -> Attributes<'static> {
        Attributes {
            operation: Operation::Create,
            group,
            resource,
            subresource: None,
            namespace: "ns",
            name: "p",
            dry_run: false,
        }
    }

    fn nginx() -> Object {
        object(json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}))
    }

    #[test]
    fn restricted_refuses_a_plain_pod_with_kubes_message() {
        let ns = namespace(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
        let err = validate(&attributes("", "pods"), &nginx(), None, Some(&ns)).unwrap_err();
        assert_eq!(
            err,
            Rejection::Forbidden(
                "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"nginx\" \
                 must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \
                 \"nginx\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or \
                 container \"nginx\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \
                 \"nginx\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
                    .into()
            )
        );
    }

    #[test]
    fn a_compliant_pod_passes_restricted() {
        let ns = namespace(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
        let pod = object(json!({"spec": {
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
            "volumes": [{"name": "v", "emptyDir": {}}]
        }}));
        assert_eq!(validate(&attributes("", "pods"), &pod, None, Some(&ns)), Ok(Vec::new()));
    }

    #[test]
    fn baseline_lists_every_violation_in_order() {
        let ns = namespace(
            json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.30"}),
        );
        let pod = object(json!({"spec": {
            "hostNetwork": true, "hostPID": true,
            "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]},
            "containers": [
                {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 443}],
                 "securityContext": {"privileged": true, "capabilities": {"add": ["NET_ADMIN", "CHOWN"]}}},
                {"name": "b", "securityContext": {"privileged": true}}
            ],
            "volumes": [{"name": "host", "hostPath": {"path": "/"}}]
        }}));
        let err = validate(&attributes("", "pods"), &pod, None, Some(&ns)).unwrap_err();
        assert_eq!(
            err,
            Rejection::Forbidden(
                "violates PodSecurity \"baseline:v1.30\": non-default capabilities (container \"a\" must not include \
                 \"NET_ADMIN\" in securityContext.capabilities.add), host namespaces (hostNetwork=true, \
                 hostPID=true), hostPath volumes (volume \"host\"), hostPort (container \"a\" uses hostPorts 443, \
                 8080), privileged (containers \"a\", \"b\" must not set securityContext.privileged=true), forbidden \
                 sysctls (kernel.msgmax)"
                    .into()
            )
        );
    }

    #[test]
    fn warn_mode_warns_and_workloads_are_only_warned_about() {
        let ns = namespace(json!({"pod-security.kubernetes.io/warn": "baseline"}));
        let pod = object(json!({"spec": {"hostIPC": true, "containers": [{"name": "c"}]}}));
        assert_eq!(
            validate(&attributes("", "pods"), &pod, None, Some(&ns)).unwrap(),
            ["would violate PodSecurity \"baseline:latest\": host namespaces (hostIPC=true)"]
        );
        let enforce = namespace(json!({"pod-security.kubernetes.io/enforce": "baseline"}));
        let deployment =
            object(json!({"spec": {"template": {"spec": {"hostIPC": true, "containers": [{"name": "c"}]}}}}));
        assert_eq!(
            validate(&attributes("apps", "deployments"), &deployment, None, Some(&enforce)).unwrap(),
            ["would violate PodSecurity \"baseline:latest\": host namespaces (hostIPC=true)"],
            "warn follows a stricter enforce level"
        );
        let cronjob = object(json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"hostPID": true}}}}}}));
        assert_eq!(validate(&attributes("batch", "cronjobs"), &cronjob, None, Some(&enforce)).unwrap().len(), 1);
        assert_eq!(validate(&attributes("", "pods"), &pod, None, None), Ok(Vec::new()), "no labels: privileged");
    }

    #[test]
    fn labels_parse_as_kube_parses_them() {
        let (p, errors) = policy(Some(&object(
            json!({"pod-security.kubernetes.io/enforce": "bogus", "pod-security.kubernetes.io/audit": "bogus"}),
        )));
        assert_eq!(p.enforce.level, Level::Restricted, "invalid enforce levels fail closed");
        assert_eq!(p.audit.level, Level::Privileged, "invalid audit levels fail open");
        assert_eq!(p.warn.level, Level::Privileged, "an invalid enforce level does not default warn");
        assert_eq!(errors.len(), 2);
        let (p, _) = policy(Some(&object(json!({
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/enforce-version": "v1.99",
            "pod-security.kubernetes.io/audit-version": "v1.01"
        }))));
        assert_eq!(p.enforce.text(), "baseline:v1.99");
        assert_eq!(p.warn.text(), "baseline:v1.99");
        assert_eq!(p.audit.text(), "privileged:latest");
    }

    #[test]
    fn namespaces_need_valid_labels() {
        let bad = namespace(
            json!({"pod-security.kubernetes.io/enforce": "strict", "pod-security.kubernetes.io/warn-version": "1.30"}),
        );
        let err = validate(&attributes("", "namespaces"), &bad, None, None).unwrap_err();
        let Rejection::Invalid(errors) = err else { panic!("422 expected") };
        assert_eq!(
            errors.iter().map(|e| format!("{}: {}", e.field, e.body())).collect::<Vec<_>>(),
            [
                "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted",
                "metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: \"1.30\": must be \"latest\" or \"v1.x\""
            ]
        );
        let update = Attributes { operation: Operation::Update, ..attributes("", "namespaces") };
        assert!(validate(&update, &bad, Some(&bad), None).is_ok(), "unchanged errors are let through");
        let baseline = namespace(json!({"pod-security.kubernetes.io/enforce": "baseline"}));
        let restricted = namespace(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
        assert!(namespace_pods_check(&baseline, &restricted).is_none(), "relaxed");
        let lv = namespace_pods_check(&restricted, &baseline).unwrap();
        let host =
            |name: &str| object(json!({"metadata": {"name": name}, "spec": {"hostNetwork": true, "containers": []}}));
        let compliant = object(
            json!({"metadata": {"name": "ok"}, "spec": {"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}}}),
        );
        assert_eq!(
            existing_pod_warnings("ns", lv, &[host("b"), host("a"), host("c"), compliant], 5),
            [
                "new PodSecurity enforce level only checked against the first 4 of 5 existing pods",
                "existing pods in namespace \"ns\" violate the new PodSecurity enforce level \"restricted:latest\"",
                "a (and 2 other pods): host namespaces"
            ]
        );
        assert!(validate(&update, &bad, Some(&namespace(json!({}))), None).is_err());
    }

    #[test]
    fn versions_select_checks() {
        let pod_spec = object(
            json!({"containers": [{"name": "c", "securityContext": {"runAsUser": 0, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}}]}),
        );
        let meta = Object::new();
        let pod = PodView { meta: &meta, spec: &pod_spec };
        let at = |minor| evaluate(LevelVersion { level: Level::Restricted, version: Version::Minor(minor) }, &pod);
        assert_eq!(at(22).len(), 0, "runAsUser is checked from v1.23");
        assert_eq!(at(23), vec![("runAsUser=0".to_string(), "container \"c\" must not set runAsUser=0".to_string())]);
        let windows_spec = object(
            json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true}, "containers": [{"name": "c"}]}),
        );
        let windows = PodView { meta: &meta, spec: &windows_spec };
        assert!(evaluate(LevelVersion { level: Level::Restricted, version: Version::Latest }, &windows).is_empty());
    }

    #[test]
    fn only_significant_pod_updates_are_checked() {
        let ns = namespace(json!({"pod-security.kubernetes.io/enforce": "baseline"}));
        let old = object(json!({"spec": {"hostPID": true, "containers": [{"name": "c", "image": "a"}]}}));
        let relabeled = object(
            json!({"metadata": {"labels": {"x": "y"}}, "spec": {"hostPID": true, "containers": [{"name": "c", "image": "a"}]}}),
        );
        let update = Attributes { operation: Operation::Update, ..attributes("", "pods") };
        assert!(validate(&update, &relabeled, Some(&old), Some(&ns)).is_ok());
        let new_image = object(json!({"spec": {"hostPID": true, "containers": [{"name": "c", "image": "b"}]}}));
        assert!(validate(&update, &new_image, Some(&old), Some(&ns)).is_err());
        let status = Attributes { subresource: Some("status"), ..attributes("", "pods") };
        assert!(!applies(&status));
    }

    #[test]
    fn other_baseline_checks_word_their_details() {
        let meta = object(json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}}));
        let spec = object(json!({
            "securityContext": {"seLinuxOptions": {"type": "spc_t", "user": "root"}, "seccompProfile": {"type": "Unconfined"}, "windowsOptions": {"hostProcess": true}},
            "containers": [{"name": "c", "securityContext": {"procMount": "Unmasked", "appArmorProfile": {"type": "Unconfined"}},
                            "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}}]
        }));
        let pod = PodView { meta: &meta, spec: &spec };
        let found = evaluate(LevelVersion { level: Level::Baseline, version: Version::Latest }, &pod);
        let text = detail(&found);
        assert_eq!(
            text,
            "forbidden AppArmor profiles (container \"c\" and annotation must not set AppArmor profile type to \
             \"Unconfined\", \"container.apparmor.security.beta.kubernetes.io/c=\"unconfined\"\"), probe or \
             lifecycle host (container \"c\" uses probe or lifecycle host \"10.0.0.1\"), procMount (container \"c\" \
             must not set securityContext.procMount to \"Unmasked\"), seLinuxOptions (pod set forbidden \
             securityContext.seLinuxOptions: type \"spc_t\"; user may not be set), seccompProfile (pod must not set \
             securityContext.seccompProfile.type to \"Unconfined\"), hostProcess (pod must not set \
             securityContext.windowsOptions.hostProcess=true)"
        );
    }
}
