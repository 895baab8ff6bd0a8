//! Volumes and their sources (`ValidateVolumes`, `validateVolumeSource` and
//! the per-source checks), and the path rules volumes use.

use super::*;

/// kube's `ValidateVolumes`: the valid volumes by name (with their source
/// key), and the errors.
pub(super) fn validate_volumes(
    volumes: &[Value],
    path: &str,
    opts: PodOptions<'_>,
) -> (HashMap<String, &'static str>, Errs) {
    let mut errs = Errs::new();
    let mut valid: HashMap<String, &'static str> = HashMap::new();
    let mut names: HashSet<&str> = HashSet::new();
    // The claims a Pod's ephemeral volumes create (`<pod>-<volume>`), which
    // a persistentVolumeClaim volume may not name; only known for a Pod.
    let created_claims: HashSet<String> = if opts.pod_name.is_empty() {
        HashSet::new()
    } else {
        volumes
            .iter()
            .filter(|v| v.get("ephemeral").is_some_and(|e| !e.is_null()))
            .map(|v| format!("{}-{}", opts.pod_name, text(v, "name")))
            .collect()
    };
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
        let claim = volume.pointer("/persistentVolumeClaim/claimName").and_then(Value::as_str).unwrap_or("");
        if !claim.is_empty() && created_claims.contains(claim) {
            errs.push(FieldError::invalid(
                &format!("{volume_path}.persistentVolumeClaim.claimName"),
                claim,
                "must not reference a PVC that gets created for an ephemeral volume",
            ));
        }
    }
    (valid, errs)
}

/// kube's `validateVolumeSource`: exactly one source, each validated.
pub(super) fn volume_source(volume: &Value, path: &str, opts: PodOptions<'_>) -> (Option<&'static str>, Errs) {
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
        // The claim an ephemeral volume of a Pod creates must have a valid
        // name (`ValidatePersistentVolumeName`).
        let volume_name = text(volume, "name");
        if *key == "ephemeral" && !opts.pod_name.is_empty() && !volume_name.is_empty() {
            let claim = format!("{}-{volume_name}", opts.pod_name);
            for msg in crate::types::validation::is_dns1123_subdomain(&claim) {
                errs.push(FieldError::invalid(
                    &child(path, "name"),
                    volume_name,
                    &format!("PVC name {}: {msg}", crate::types::validation::go_quote(&claim)),
                ));
            }
        }
    }
    if found.is_none() {
        errs.push(FieldError::required(path, "must specify a volume type"));
    }
    (found, errs)
}

/// The checks of one volume source.
pub(super) fn one_volume_source(key: &str, source: &Value, path: &str, opts: PodOptions<'_>) -> Errs {
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
        "ephemeral" => match source.get("volumeClaimTemplate").filter(|v| !v.is_null()) {
            Some(template) => claim_template(template, &child(&source_path, "volumeClaimTemplate")),
            None => vec![FieldError::required(&child(&source_path, "volumeClaimTemplate"), "")],
        },
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

/// ObjectMeta's fields in Go's struct order, as `validateFieldAllowList`
/// names them (the Go name with its first letter lower-cased: `uID`).
const OBJECT_META_FIELDS: &[(&str, &str)] = &[
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("labels", "labels"),
    ("annotations", "annotations"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
];

/// kube's `ValidatePersistentVolumeClaimTemplate` of an ephemeral volume:
/// `ValidateTemplateObjectMeta` (annotations, labels, and no other metadata
/// field set) and `ValidatePersistentVolumeClaimSpec` at `<path>.spec`.
pub(super) fn claim_template(template: &Value, path: &str) -> Errs {
    let meta_path = child(path, "metadata");
    let metadata = template.get("metadata").filter(|v| v.is_object()).unwrap_or(&Value::Null);
    let annotations = crate::types::validation::validate_annotations(string_map(metadata, "annotations"));
    let mut errs = reroot(annotations, "metadata.annotations", &child(&meta_path, "annotations"));
    errs.extend(validate_labels_at(&child(&meta_path, "labels"), string_map(metadata, "labels")));
    for (json, go_name) in OBJECT_META_FIELDS {
        if matches!(*json, "labels" | "annotations") {
            continue;
        }
        // Go compares with the zero value: "", 0 and null are unset; an
        // empty list is not nil, so it is set.
        let set = match metadata.get(*json) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Number(n)) => n.as_f64() != Some(0.0),
            Some(_) => true,
        };
        if set {
            errs.push(FieldError::forbidden(&child(&meta_path, go_name), "cannot be set"));
        }
    }
    let spec = template.get("spec").filter(|v| v.is_object()).cloned().unwrap_or_else(|| Value::Object(Map::new()));
    errs.extend(reroot(super::super::storage::claim_spec(&spec), "spec", &child(path, "spec")));
    errs
}

/// Errors found at `from...` moved to `to...`.
fn reroot(errors: Errs, from: &str, to: &str) -> Errs {
    errors
        .into_iter()
        .map(|mut e| {
            if let Some(rest) = e.field.strip_prefix(from) {
                e.field = format!("{to}{rest}");
            }
            e
        })
        .collect()
}

pub(super) fn required_text(source: &Value, path: &str, field: &str) -> Errs {
    if text(source, field).is_empty() {
        vec![FieldError::required(&child(path, field), "")]
    } else {
        Vec::new()
    }
}

pub(super) fn empty_dir(source: &Value, path: &str) -> Errs {
    match source.get("sizeLimit").and_then(Value::as_str).and_then(nano_value) {
        Some(v) if v < 0 => {
            vec![FieldError::forbidden(&child(path, "sizeLimit"), "SizeLimit field must be a valid resource quantity")]
        }
        _ => Vec::new(),
    }
}

pub(super) fn host_path(source: &Value, path: &str) -> Errs {
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

pub(super) fn nfs(source: &Value, path: &str) -> Errs {
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
pub(super) fn projected_like(source: &Value, path: &str, name_field: &str) -> Errs {
    let mut errs = required_text(source, path, name_field);
    errs.extend(file_mode(source, "defaultMode", path));
    for (i, item) in list(source, "items").iter().enumerate() {
        errs.extend(key_to_path(item, &index(&child(path, "items"), i)));
    }
    errs
}

pub(super) fn file_mode(source: &Value, field: &str, path: &str) -> Errs {
    match int(source, field) {
        Some(mode) if !(0..=0o777).contains(&mode) => vec![invalid_int(&child(path, field), mode, FILE_MODE_MSG)],
        _ => Vec::new(),
    }
}

/// kube's `validateKeyToPath`.
pub(super) fn key_to_path(item: &Value, path: &str) -> Errs {
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

pub(super) fn downward_api_volume(source: &Value, path: &str) -> Errs {
    let mut errs = file_mode(source, "defaultMode", path);
    for item in list(source, "items") {
        errs.extend(downward_api_file(item, path));
    }
    errs
}

/// kube's `validateDownwardAPIVolumeFile` (errors at the volume's path).
pub(super) fn downward_api_file(item: &Value, path: &str) -> Errs {
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
pub(super) fn projected(source: &Value, path: &str) -> Errs {
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

pub(super) fn service_account_token(token: &Value, token_path: &str, volume_path: &str) -> Errs {
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
pub(super) fn no_backsteps(target: &str, field: &str) -> Errs {
    if target.replace('\\', "/").split('/').any(|part| part == "..") {
        vec![FieldError::invalid(field, target, "must not contain '..'")]
    } else {
        Vec::new()
    }
}

/// kube's `validateLocalDescendingPath`.
pub(super) fn local_descending_path(target: &str, field: &str) -> Errs {
    let mut errs = Errs::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(field, target, "must be a relative path"));
    }
    errs.extend(no_backsteps(target, field));
    errs
}

/// kube's `ValidateLocalNonReservedPath`.
pub(super) fn local_non_reserved_path(target: &str, field: &str) -> Errs {
    let mut errs = local_descending_path(target, field);
    if target.starts_with("..") && !target.starts_with("../") {
        errs.push(FieldError::invalid(field, target, "must not start with '..'"));
    }
    errs
}
