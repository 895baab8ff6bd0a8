//! ServiceAccount (off by default in Shardline, see docs/admission.md): a new
//! pod runs as `default` unless it names a ServiceAccount, which must exist
//! (403 otherwise); unless the pod or the account opts out
//! (`automountServiceAccountToken: false`), every container mounts the
//! projected `kube-api-access-XXXXX` volume (a bound token, the cluster CA
//! and the namespace) at /var/run/secrets/kubernetes.io/serviceaccount; a pod
//! without imagePullSecrets gets the account's. Mirror pods are left alone.
// plugin/pkg/admission/serviceaccount/admission.go: Admit, shouldAutomount,
// mountServiceAccountToken, TokenVolumeSource

use super::{Attributes, Object, Rejection};
use serde_json::{json, Value};

pub const DEFAULT_SERVICE_ACCOUNT_NAME: &str = "default";
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
const TOKEN_VOLUME_PREFIX: &str = "kube-api-access-";
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The bound token's lifetime: an hour plus seven seconds (kube's `Expiry`).
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;
/// `corev1.ProjectedVolumeSourceDefaultMode` (0644).
const PROJECTED_DEFAULT_MODE: i64 = 420;

/// Mirror pods (static pods a kubelet reports) are not admitted here.
pub fn applies(pod: &Object) -> bool {
    super::field(pod, &["metadata", "annotations", MIRROR_POD_ANNOTATION]).is_none()
}

/// The account a pod runs as.
pub fn account_name(pod: &Object) -> String {
    match super::text(pod, &["spec", "serviceAccountName"]) {
        "" => DEFAULT_SERVICE_ACCOUNT_NAME.to_string(),
        name => name.to_string(),
    }
}

pub fn admit(
    attributes: &Attributes,
    pod: &mut Object,
    account: Option<&Object>,
    suffix: &str,
) -> Result<(), Rejection> {
    if !applies(pod) {
        return Ok(());
    }
    let name = account_name(pod);
    let Some(account) = account else {
        return Err(Rejection::Forbidden(format!(
            "error looking up service account {}/{name}: serviceaccount \"{name}\" not found",
            attributes.namespace
        )));
    };
    let Some(spec) = super::map_mut(pod, &["spec"]) else { return Ok(()) };
    spec.insert("serviceAccountName".into(), json!(name));
    let automount = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| account.get("automountServiceAccountToken").and_then(Value::as_bool))
        .unwrap_or(true);
    if automount {
        mount_token(spec, suffix);
    }
    let pull_secrets = super::list(spec, &["imagePullSecrets"]).len();
    let account_secrets: Vec<Value> = super::list(account, &["imagePullSecrets"])
        .iter()
        .filter_map(|s| Some(json!({"name": s.get("name")?.as_str()?})))
        .collect();
    if pull_secrets == 0 && !account_secrets.is_empty() {
        spec.insert("imagePullSecrets".into(), Value::Array(account_secrets));
    }
    Ok(())
}

fn mount_token(spec: &mut Object, suffix: &str) {
    let existing = super::list(spec, &["volumes"])
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .find(|n| n.starts_with(TOKEN_VOLUME_PREFIX))
        .map(str::to_string);
    let volume_name = existing.clone().unwrap_or_else(|| format!("{TOKEN_VOLUME_PREFIX}{suffix}"));
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut needs_volume = false;
    for kind in ["initContainers", "containers"] {
        let Some(list) = spec.get_mut(kind).and_then(Value::as_array_mut) else { continue };
        for container in list.iter_mut().filter_map(Value::as_object_mut) {
            let mounted = super::list(container, &["volumeMounts"])
                .iter()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH));
            if mounted {
                continue;
            }
            let mut mounts = super::list(container, &["volumeMounts"]).to_vec();
            mounts.push(mount.clone());
            container.insert("volumeMounts".into(), Value::Array(mounts));
            needs_volume = true;
        }
    }
    if existing.is_none() && needs_volume {
        let mut volumes = super::list(spec, &["volumes"]).to_vec();
        volumes.push(json!({
            "name": volume_name,
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ],
                "defaultMode": PROJECTED_DEFAULT_MODE
            }
        }));
        spec.insert("volumes".into(), Value::Array(volumes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::admission::Operation;

    fn attributes() -> Attributes<'static> {
        Attributes {
            operation: Operation::Create,
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

    #[test]
    fn a_pod_runs_as_default_and_mounts_the_token() {
        let mut pod = object(json!({"spec": {"containers": [{"name": "c"}]}}));
        let account = object(json!({"metadata": {"name": "default"}, "imagePullSecrets": [{"name": "reg"}]}));
        admit(&attributes(), &mut pod, Some(&account), "abcde").unwrap();
        assert_eq!(pod["spec"]["serviceAccountName"], "default");
        assert_eq!(
            pod["spec"]["containers"][0]["volumeMounts"],
            json!([{"name": "kube-api-access-abcde", "readOnly": true, "mountPath": TOKEN_MOUNT_PATH}])
        );
        assert_eq!(
            pod["spec"]["volumes"][0]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3607
        );
        assert_eq!(pod["spec"]["imagePullSecrets"], json!([{"name": "reg"}]));
    }

    #[test]
    fn opting_out_and_missing_accounts() {
        let mut pod = object(json!({"spec": {"serviceAccountName": "builder", "containers": [{"name": "c"}]}}));
        // tests/fixtures/kube-v1.36/lists/core_v1_serviceaccounts.json: builder opts out.
        let builder = object(json!({"metadata": {"name": "builder"}, "automountServiceAccountToken": false}));
        admit(&attributes(), &mut pod, Some(&builder), "abcde").unwrap();
        assert!(pod["spec"].get("volumes").is_none());
        let mut pod = object(json!({"spec": {"containers": [{"name": "c"}]}}));
        assert_eq!(
            admit(&attributes(), &mut pod, None, "abcde").unwrap_err(),
            Rejection::Forbidden(
                "error looking up service account ns/default: serviceaccount \"default\" not found".into()
            )
        );
        let mut mirror = object(json!({"metadata": {"annotations": {MIRROR_POD_ANNOTATION: "x"}}, "spec": {}}));
        assert!(admit(&attributes(), &mut mirror, None, "abcde").is_ok());
    }
}
