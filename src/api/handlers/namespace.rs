//! The namespace lifecycle kube's namespace controller
//! (`namespace-controller`) runs: a Terminating namespace's objects are
//! deleted (each as a DELETE with Background propagation would), passes
//! repeat with a growing wait while some remain (held by finalizers or
//! graceful deletion), then the `kubernetes` finalizer leaves
//! `spec.finalizers` (what the controller's `PUT namespaces/NAME/finalize`
//! writes) and, with `spec.finalizers` and `metadata.finalizers` both empty,
//! the namespace is removed. Creating in a Terminating namespace is refused
//! with kube's 403 NamespaceTerminating (`create.rs`), whether this
//! controller runs or not.
//!
//! Runs only when `--controllers` enables it, as a background task started
//! through [`Backend::spawn`] (after a namespace DELETE, and at start-up for
//! namespaces left Terminating); all reads and writes go through the
//! [`Backend`]. Without it a deleted namespace stays Terminating until a
//! real namespace controller finalizes it, as with kube-apiserver alone.

use super::delete::{
    delete_object, list_current, resolved_for, spec_finalizers, DeleteOptions, Outcome, FINALIZER_KUBERNETES,
};
use super::{append_read_modify_write, read_current, Resolved};
use crate::api::object::{metadata, order_fields, storage_value, Object};
use crate::api::status::ApiError;
use crate::api::Backend;
use crate::log::{Operation, Precondition, Proposal};
use crate::types::key::ObjectKey;
use serde_json::{json, Value};
use std::rc::Rc;
use std::time::Duration;

/// The first wait between passes; doubles up to `namespace_finalize_retry_max`.
const FIRST_RETRY: Duration = Duration::from_millis(100);

/// Drives the namespace `name` to removal; returns when it is gone, no
/// longer Terminating, or left to other finalizers.
pub async fn finalize<B: Backend>(backend: Rc<B>, name: String) {
    let mut wait = FIRST_RETRY;
    loop {
        if let Ok(true) = pass(&*backend, &name).await {
            return;
        }
        backend.sleep(wait).await;
        wait = (wait * 2).min(backend.config().namespace_finalize_retry_max);
    }
}

/// Starts [`finalize`] for every namespace left Terminating (a restart
/// during a namespace deletion).
pub async fn resume_terminating<B: Backend + 'static>(backend: Rc<B>) {
    let Some(info) = backend.registry().lookup("", "v1", "namespaces").cloned() else { return };
    let Ok(namespaces) = list_current(&*backend, &info, Some(""), None).await else { return };
    for namespace in namespaces {
        let terminating = serde_json::from_slice::<Value>(&namespace.json)
            .is_ok_and(|v| v["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null()));
        if terminating {
            let name = namespace.meta().name().to_string();
            let task_backend = backend.clone();
            backend.spawn(Box::pin(async move { finalize(task_backend, name).await }));
        }
    }
}

/// One pass: `Ok(true)` when there is nothing left to do.
async fn pass(backend: &impl Backend, name: &str) -> Result<bool, ApiError> {
    let Some(info) = backend.registry().lookup("", "v1", "namespaces").cloned() else { return Ok(true) };
    let resolved = Resolved { info, namespace: Some(String::new()), name: Some(name.to_string()), subresource: None };
    let key = ObjectKey::new("", "namespaces", "", name);
    let Some(current) = read_current(backend, &key, backend.committed_revision()).await? else { return Ok(true) };
    let stored: Object =
        serde_json::from_slice(&current.json).map_err(|e| ApiError::Internal(format!("stored namespace: {e}")))?;
    if metadata(&stored).get("deletionTimestamp").is_none_or(|t| t.is_null()) {
        return Ok(true);
    }
    let spec = spec_finalizers(&stored);
    if !spec.is_empty() && !spec.iter().any(|f| f == FINALIZER_KUBERNETES) {
        // Another controller's finalizer: its owner finishes the job.
        return Ok(true);
    }
    if delete_contents(backend, name).await? > 0 {
        return Ok(false);
    }
    let mut finalized = stored.clone();
    let remaining: Vec<&String> = spec.iter().filter(|f| *f != FINALIZER_KUBERNETES).collect();
    if let Some(Value::Object(spec)) = finalized.get_mut("spec") {
        if remaining.is_empty() {
            spec.shift_remove("finalizers");
        } else {
            spec.insert("finalizers".into(), json!(remaining));
        }
    }
    let finalized = order_fields(finalized);
    let metadata_finalizers =
        metadata(&finalized).get("finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
    let operation = if remaining.is_empty() && !metadata_finalizers {
        Operation::Delete
    } else {
        Operation::Put(storage_value(&finalized)?)
    };
    let proposal =
        Proposal { key: key.encode(), precondition: Precondition::ModRevision(current.mod_revision), operation };
    Ok(append_read_modify_write(backend, proposal, true, &resolved).await?.is_some())
}

/// Deletes every namespaced object in `namespace`; returns how many remain.
async fn delete_contents(backend: &impl Backend, namespace: &str) -> Result<usize, ApiError> {
    let mut seen = std::collections::BTreeSet::new();
    let resources: Vec<_> = backend
        .registry()
        .iter()
        // One pass per store: a resource kept in another's store
        // (events.k8s.io/v1 Events) has no objects of its own.
        .filter(|r| {
            let (group, resource) = r.storage_group_resource();
            r.namespaced && seen.insert((group.to_string(), resource.to_string()))
        })
        .cloned()
        .collect();
    let options = DeleteOptions::background();
    let mut remaining = 0;
    for info in resources {
        for object in list_current(backend, &info, Some(namespace), None).await? {
            match delete_object(backend, None, &resolved_for(&info, &object), &options).await {
                Ok(Outcome::Removed(_)) | Err(ApiError::NotFound(_)) => {}
                Ok(Outcome::Kept(_)) => remaining += 1,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(remaining)
}

#[cfg(test)]
mod tests {
    use crate::api::testing::MemoryBackend;
    use crate::config::Config;
    use serde_json::{json, Value};
    use std::rc::Rc;

    fn request(backend: &Rc<MemoryBackend>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let answer = crate::api::testing::send_json(backend, method, path, body);
        (answer.code, answer.body)
    }

    #[test]
    fn a_terminating_namespace_is_emptied_then_removed() {
        let config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        let backend = Rc::new(MemoryBackend::new(config, 2));
        let cms = "/api/v1/namespaces/demo/configmaps";
        assert_eq!(request(&backend, "POST", "/api/v1/namespaces", Some(json!({"metadata": {"name": "demo"}}))).0, 201);
        for name in ["a", "b"] {
            assert_eq!(request(&backend, "POST", cms, Some(json!({"metadata": {"name": name}}))).0, 201);
        }
        let held = json!({"metadata": {"name": "held", "finalizers": ["example.com/x"]}});
        assert_eq!(request(&backend, "POST", cms, Some(held)).0, 201);

        let (code, ns) = request(&backend, "DELETE", "/api/v1/namespaces/demo", None);
        assert_eq!((code, &ns["status"]["phase"]), (200, &json!("Terminating")), "{ns}");
        // Nothing is deleted until the background task runs.
        assert_eq!(request(&backend, "GET", cms, None).1["items"].as_array().unwrap().len(), 3);
        let (code, refused) = request(&backend, "POST", cms, Some(json!({"metadata": {"name": "new"}})));
        assert_eq!(code, 403, "{refused}");

        // One pass: the free objects go, the held one is marked; the task waits.
        assert_eq!(backend.poll_spawned(), 1);
        let left = request(&backend, "GET", cms, None).1;
        let items = left["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{left}");
        assert!(items[0]["metadata"]["deletionTimestamp"].is_string(), "{left}");
        assert_eq!(request(&backend, "GET", "/api/v1/namespaces/demo", None).0, 200);

        // The finalizer removed, the object goes; the next pass removes the namespace.
        let patch = json!({"metadata": {"finalizers": null}});
        assert_eq!(request(&backend, "PATCH", &format!("{cms}/held"), Some(patch)).0, 200);
        assert_eq!(request(&backend, "GET", &format!("{cms}/held"), None).0, 404);
        // A second DELETE starts another pass (this backend's timers never fire).
        assert_eq!(request(&backend, "DELETE", "/api/v1/namespaces/demo", None).0, 200);
        assert_eq!(backend.poll_spawned(), 1, "the first task still sleeps");
        assert_eq!(request(&backend, "GET", "/api/v1/namespaces/demo", None).0, 404);
    }
}
