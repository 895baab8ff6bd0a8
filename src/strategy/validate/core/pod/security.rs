//! Security contexts of pods and containers (`ValidateSecurityContext`,
//! `validatePodSpecSecurityContext`, sysctls, seccomp, AppArmor).

use super::*;

pub(super) const MAX_ID: i64 = i32::MAX as i64;

pub(super) fn id_range(field: &str, value: Option<i64>) -> Errs {
    match value {
        Some(id) if !(0..=MAX_ID).contains(&id) => vec![invalid_int(field, id, &inclusive_range_error(0, MAX_ID))],
        _ => Vec::new(),
    }
}

/// kube's `ValidateSecurityContext` of a container; `host_users` is the
/// pod's (`hostUsers` unset or true: the host's user namespace).
pub(super) fn container_security_context(context: Option<&Value>, path: &str, host_users: bool) -> Errs {
    let Some(sc) = context.filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Errs::new();
    errs.extend(id_range(&child(path, "runAsUser"), int(sc, "runAsUser")));
    errs.extend(id_range(&child(path, "runAsGroup"), int(sc, "runAsGroup")));
    if let Some(proc_mount) = sc.get("procMount").and_then(Value::as_str) {
        let field = child(path, "procMount");
        if !["Default", "Unmasked"].contains(&proc_mount) {
            errs.push(FieldError::not_supported(&field, proc_mount, &["Default", "Unmasked"]));
        }
        if host_users && proc_mount == "Unmasked" {
            errs.push(FieldError::invalid(&field, proc_mount, "`hostUsers` must be false to use `Unmasked`"));
        }
    }
    errs.extend(seccomp_profile(sc.get("seccompProfile"), &child(path, "seccompProfile")));
    if sc.get("allowPrivilegeEscalation").and_then(Value::as_bool) == Some(false) {
        let context_text = go_security_context(sc);
        if sc.get("privileged").and_then(Value::as_bool) == Some(true) {
            errs.push(FieldError::invalid_bare(
                path,
                &context_text,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let adds = sc.pointer("/capabilities/add").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        for _ in adds.iter().filter(|c| c.as_str() == Some("CAP_SYS_ADMIN")) {
            errs.push(FieldError::invalid_bare(
                path,
                &context_text,
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ));
        }
    }
    errs.extend(app_armor_profile(sc.get("appArmorProfile"), &child(path, "appArmorProfile")));
    errs
}

/// Go's `%#v` of a `core.SecurityContext` (field.Invalid dereferences the
/// pointer it is given): its pointer fields in Go's struct order, a set one
/// printed `(...)` where Go prints its address.
fn go_security_context(sc: &Value) -> String {
    const FIELDS: &[(&str, &str, &str)] = &[
        ("capabilities", "Capabilities", "core.Capabilities"),
        ("privileged", "Privileged", "bool"),
        ("seLinuxOptions", "SELinuxOptions", "core.SELinuxOptions"),
        ("windowsOptions", "WindowsOptions", "core.WindowsSecurityContextOptions"),
        ("runAsUser", "RunAsUser", "int64"),
        ("runAsGroup", "RunAsGroup", "int64"),
        ("runAsNonRoot", "RunAsNonRoot", "bool"),
        ("readOnlyRootFilesystem", "ReadOnlyRootFilesystem", "bool"),
        ("allowPrivilegeEscalation", "AllowPrivilegeEscalation", "bool"),
        ("procMount", "ProcMount", "core.ProcMountType"),
        ("seccompProfile", "SeccompProfile", "core.SeccompProfile"),
        ("appArmorProfile", "AppArmorProfile", "core.AppArmorProfile"),
    ];
    let fields: Vec<String> = FIELDS
        .iter()
        .map(|(json, go, ty)| {
            let address = if sc.get(*json).is_some_and(|v| !v.is_null()) { "..." } else { "nil" };
            format!("{go}:(*{ty})({address})")
        })
        .collect();
    format!("core.SecurityContext{{{}}}", fields.join(", "))
}

/// kube's `validatePodSpecSecurityContext` (v1's `hostPID`, `hostIPC`,
/// `hostNetwork` and `shareProcessNamespace` live in the spec; kube names
/// them under `securityContext`, as its internal type holds them).
pub(super) fn pod_security_context(spec: &Value, path: &str) -> Errs {
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
pub(super) fn sysctls(spec: &Value, sc: &Value, path: &str) -> Errs {
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
pub(super) fn is_valid_sysctl_name(name: &str) -> bool {
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
pub(super) fn seccomp_profile(profile: Option<&Value>, path: &str) -> Errs {
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
pub(super) fn app_armor_profile(profile: Option<&Value>, path: &str) -> Errs {
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
