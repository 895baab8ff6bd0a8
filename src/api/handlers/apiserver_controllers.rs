//! kube-apiserver's own controllers of its bootstrap objects, run in
//! process: the default ServiceCIDR controller
//! (`kubernetes-service-cidr-controller`), Priority and Fairness' config
//! producer (the bootstrap configuration ensurer) and its config consumer
//! (each FlowSchema's `Dangling` condition). What each decides is the pure
//! functions of `api/system_objects.rs`; this file reads, decides and writes.
//!
//! One [`pass`] runs the three in turn, as a client of the server would:
//! reads at the commit point, creates and updates through the typed layer
//! (`create_object`, `replace_current`, conditional on what was read),
//! status as a forced server-side apply of `/status`, deletes through
//! `delete_object`, each with the field manager kube records for that
//! controller. [`run`] repeats it whenever a FlowSchema,
//! PriorityLevelConfiguration or ServiceCIDR is written ([`Trigger`], fired
//! by the runtime's apply loop for each such committed entry, however the
//! write came) and at least every `system_objects_resync_interval`, as kube's
//! controllers resync (the ensurer each minute, the ServiceCIDR controller
//! every 10 s); after a failed write, after a back-off from 200 ms (kube's
//! work queue's first delay) doubling up to that interval, whatever is
//! written meanwhile.
//!
//! These are kube-apiserver's controllers, not kube-controller-manager's:
//! `--controllers` does not switch them (kube's has no name for them); they
//! run wherever Shardline is the cluster's apiserver, and not with
//! `--upstream`, where the upstream's apiserver runs them and this instance
//! writes nothing. kube-controller-manager's `service-cidr-controller`
//! (the other ServiceCIDRs, the `networking.k8s.io/service-cidr-finalizer`)
//! is not done here.
//!
//! Bounded: one pending trigger (writes coalesce into the next pass, as kube's
//! single-key work queue), a pass reads the two Priority and Fairness
//! collections and one ServiceCIDR, and a FlowSchema's status is written at
//! most six times a minute (`StatusWrites`).

use super::delete::{delete_object, list_current, resolved_for, DeleteOptions};
use super::garbage::resolved_for_key;
use super::{read_current, Resolved};
use crate::api::status::ApiError;
use crate::api::system_objects::{
    flow_schema_status, level_usable, objects, revise_configuration, service_cidr_status, system_request,
    unwanted_configuration, Facts, StatusWrites, FLOW_CONTROL_PRODUCER, FLOW_SCHEMA_MANAGER, MANDATORY,
    SERVICE_CIDR_MANAGER,
};
use crate::api::{Backend, RequestHead};
use crate::types::key::ObjectKey;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

const FLOWCONTROL: &str = "flowcontrol.apiserver.k8s.io";
const FLOW_SCHEMAS: &str = "flowschemas";
const PRIORITY_LEVELS: &str = "prioritylevelconfigurations";
/// The first wait after a pass that could not write everything.
const FIRST_RETRY: Duration = Duration::from_millis(200);

/// Whether a committed entry at `key` is one these controllers react to.
pub fn is_watched_key(key: &[u8]) -> bool {
    crate::types::key::group_resource(key).is_some_and(|(group, resource)| {
        (group == FLOWCONTROL && (resource == FLOW_SCHEMAS || resource == PRIORITY_LEVELS))
            || (group == "networking.k8s.io" && resource == "servicecidrs")
    })
}

/// A wake-up for [`run`]: one pending flag, so any number of writes between
/// two passes cost one more pass.
#[derive(Default)]
pub struct Trigger {
    pending: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Trigger {
    /// Asks for a pass.
    pub fn fire(&self) {
        self.pending.set(true);
        if let Some(waker) = self.waker.borrow_mut().take() {
            waker.wake();
        }
    }

    /// Resolves once a pass was asked for since the last one resolved.
    fn fired(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx: &mut Context<'_>| {
            if self.pending.replace(false) {
                Poll::Ready(())
            } else {
                *self.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
    }
}

/// What one [`pass`] could not do.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Writes refused or failed, each with why (the next pass tries again).
    pub failed: Vec<String>,
    /// Status writes held back by the per-FlowSchema rate limit: the pass to
    /// write them is due after this.
    pub held_back: Option<Duration>,
}

/// Runs [`pass`] whenever `trigger` fires and at least every
/// `system_objects_resync_interval`; never returns (the task ends with its
/// shard). `writes` carries over from the start-up pass.
pub async fn run<B: Backend>(backend: Rc<B>, facts: Facts, trigger: Rc<Trigger>, mut writes: StatusWrites) {
    let resync = backend.config().system_objects_resync_interval;
    let mut retry = FIRST_RETRY;
    loop {
        let outcome = pass(&*backend, &facts, &mut writes).await;
        for failed in &outcome.failed {
            eprintln!("shardline: kube-apiserver's controllers: {failed}");
        }
        if outcome.failed.is_empty() {
            retry = FIRST_RETRY;
            let wait = outcome.held_back.map_or(resync, |held| held.min(resync));
            let fired = std::pin::pin!(trigger.fired());
            futures_util::future::select(fired, backend.sleep(wait)).await;
        } else {
            // After a failure the back-off is waited out whatever is written
            // meanwhile (the next pass reads everything again).
            backend.sleep(retry.min(resync)).await;
            retry = (retry * 2).min(resync);
        }
    }
}

/// One pass of the three controllers (the module doc).
pub async fn pass(backend: &impl Backend, facts: &Facts, writes: &mut StatusWrites) -> Outcome {
    let mut outcome = Outcome::default();
    if let Err(e) = service_cidr(backend, facts).await {
        outcome.failed.push(format!("the default ServiceCIDR: {e}"));
    }
    if let Err(e) = ensure_configuration(backend, facts).await {
        outcome.failed.push(format!("the Priority and Fairness bootstrap configuration: {e}"));
    }
    match flow_schema_conditions(backend, writes).await {
        Ok((failed, held_back)) => {
            outcome.failed.extend(failed);
            outcome.held_back = held_back;
        }
        Err(e) => outcome.failed.push(format!("FlowSchema conditions: {e}")),
    }
    outcome
}

/// The head of a write made as `system:apiserver` with `manager`.
fn head(method: http::Method, content_type: &str, manager: &str) -> RequestHead {
    let mut head = system_request(method, content_type);
    head.params.field_manager = Some(manager.into());
    head
}

fn parse(json: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(json).map_err(|e| format!("a stored object does not decode: {e}"))
}

fn resolved(backend: &impl Backend, key: &ObjectKey) -> Option<Resolved> {
    resolved_for_key(&backend.registry(), &key.encode())
}

/// The default ServiceCIDR controller's sync: the `kubernetes` ServiceCIDR
/// created when absent, then its `Ready` condition.
async fn service_cidr(backend: &impl Backend, facts: &Facts) -> Result<(), String> {
    let Some((key, object)) = objects(facts).into_iter().find(|(k, _)| k.resource == "servicecidrs") else {
        return Ok(());
    };
    let Some(target) = resolved(backend, &key) else { return Ok(()) };
    let current = match read_current(backend, &key, backend.committed_revision()).await.map_err(|e| e.message())? {
        Some(current) => parse(&current.json)?,
        None => {
            // Created as kube's controller creates it: by the loopback
            // client, whose user agent names the manager.
            let head = system_request(http::Method::POST, "application/json");
            let Value::Object(object) = object else { return Ok(()) };
            match super::create::create_object(backend, &head, &target, object).await {
                Ok(created) => parse(&created)?,
                // Another writer was first: the next pass looks at it.
                Err(ApiError::AlreadyExists(_)) => return Ok(()),
                Err(e) => return Err(e.message()),
            }
        }
    };
    let now = crate::api::object::timestamp(backend.now());
    match service_cidr_status(&current, &facts.service_cidr, &now) {
        Some(status) => apply_status(backend, &target, SERVICE_CIDR_MANAGER, &status).await,
        None => Ok(()),
    }
}

/// The config producer's `ensure`: the suggested levels and schemas, then
/// the mandatory ones (kube's order), each created when absent or revised,
/// stopping at the first failure as kube does; then the unwanted ones
/// deleted.
async fn ensure_configuration(backend: &impl Backend, facts: &Facts) -> Result<(), String> {
    let bootstrap: Vec<(ObjectKey, Value)> =
        objects(facts).into_iter().filter(|(k, _)| k.group == FLOWCONTROL).collect();
    let mandatory = |k: &ObjectKey| MANDATORY.contains(&k.name.as_str());
    let ordered = [(PRIORITY_LEVELS, false), (FLOW_SCHEMAS, false), (PRIORITY_LEVELS, true), (FLOW_SCHEMAS, true)]
        .into_iter()
        .flat_map(|(resource, is_mandatory)| {
            bootstrap.iter().filter(move |(k, _)| k.resource == resource && mandatory(k) == is_mandatory)
        });
    let create_head = head(http::Method::POST, "application/json", FLOW_CONTROL_PRODUCER);
    let update_head = head(http::Method::PUT, "application/json", FLOW_CONTROL_PRODUCER);
    for (key, object) in ordered {
        let Some(target) = resolved(backend, key) else { continue };
        let Value::Object(object) = object.clone() else { continue };
        let Some(current) = read_current(backend, key, backend.committed_revision()).await.map_err(|e| e.message())?
        else {
            match super::create::create_object(backend, &create_head, &target, object).await {
                Ok(_) | Err(ApiError::AlreadyExists(_)) => continue,
                Err(e) => return Err(format!("creating {} {}: {}", key.resource, key.name, e.message())),
            }
        };
        // Compared with the bootstrap object as the server defaults it, as
        // kube defaults its own copy before comparing.
        let mut defaulted = object;
        if crate::strategy::decode_and_default(&target.info, &mut defaulted).is_err() {
            continue;
        }
        let stored = parse(&current.json)?;
        let Some(Value::Object(revised)) = revise_configuration(&stored, &Value::Object(defaulted), mandatory(key))
        else {
            continue;
        };
        match super::update::replace_current(backend, &update_head, &target, &current, revised, true).await {
            // Written, or another writer was first: the next pass looks again.
            Ok(_) | Err(ApiError::Conflict { .. }) => {}
            Err(e) => return Err(format!("updating {} {}: {}", key.resource, key.name, e.message())),
        }
    }
    for resource in [FLOW_SCHEMAS, PRIORITY_LEVELS] {
        let Some(info) = backend.registry().iter().find(|r| r.group == FLOWCONTROL && r.resource == resource).cloned()
        else {
            continue;
        };
        let own: Vec<&str> =
            bootstrap.iter().filter(|(k, _)| k.resource == resource).map(|(k, _)| k.name.as_str()).collect();
        for object in list_current(backend, &info, Some(""), None).await.map_err(|e| e.message())? {
            if !unwanted_configuration(&parse(&object.json)?, &own) {
                continue;
            }
            match delete_object(backend, None, &resolved_for(&info, &object), &DeleteOptions::background()).await {
                Ok(_) | Err(ApiError::NotFound(_)) => {}
                Err(e) => return Err(format!("deleting {resource} {}: {}", object.meta().name(), e.message())),
            }
        }
    }
    Ok(())
}

/// The config consumer's status sync: each FlowSchema's `Dangling`
/// condition from the levels it can use. Returns the writes that failed and,
/// when the rate limit held some back, when to try them again.
async fn flow_schema_conditions(
    backend: &impl Backend,
    writes: &mut StatusWrites,
) -> Result<(Vec<String>, Option<Duration>), ApiError> {
    let registry = backend.registry();
    let info = |resource: &str| registry.iter().find(|r| r.group == FLOWCONTROL && r.resource == resource).cloned();
    let (Some(levels_info), Some(schemas_info)) = (info(PRIORITY_LEVELS), info(FLOW_SCHEMAS)) else {
        return Ok((Vec::new(), None));
    };
    let mut usable: HashSet<String> = MANDATORY.iter().map(|n| n.to_string()).collect();
    for level in list_current(backend, &levels_info, Some(""), None).await? {
        if serde_json::from_slice::<Value>(&level.json).is_ok_and(|v| level_usable(&v)) {
            usable.insert(level.meta().name().to_string());
        }
    }
    let schemas = list_current(backend, &schemas_info, Some(""), None).await?;
    let now = backend.now();
    let now_text = crate::api::object::timestamp(now);
    let (mut failed, mut held_back) = (Vec::new(), None);
    for schema in &schemas {
        let Ok(current) = serde_json::from_slice::<Value>(&schema.json) else { continue };
        let level = current["spec"]["priorityLevelConfiguration"]["name"].as_str().unwrap_or_default();
        let Some(status) = flow_schema_status(&current, usable.contains(level), &now_text) else { continue };
        let name = schema.meta().name();
        if writes.must_wait(name, now) {
            // kube waits 30 to 75 s (a random part spreads the retries of
            // several servers).
            held_back.get_or_insert(Duration::from_secs(30 + rand::random::<u64>() % 45));
            continue;
        }
        writes.record(name, now);
        if let Err(e) = apply_status(backend, &resolved_for(&schemas_info, schema), FLOW_SCHEMA_MANAGER, &status).await
        {
            failed.push(format!("the status of FlowSchema {name}: {e}"));
        }
    }
    writes.retain(&schemas.iter().map(|s| s.meta().name()).collect());
    Ok((failed, held_back))
}

/// Applies `status` to `/status` of `target` as `manager` (server-side
/// apply, forced, as kube's controllers apply their statuses). An object
/// deleted meanwhile is not an error (its deletion triggers the next pass).
async fn apply_status(backend: &impl Backend, target: &Resolved, manager: &str, status: &Value) -> Result<(), String> {
    let mut target = target.clone();
    target.subresource = Some("status".into());
    let mut head = head(http::Method::PATCH, "application/apply-patch+yaml", manager);
    head.params.force = Some(true);
    let body = status.to_string();
    let patch: Pin<Box<dyn Future<Output = _> + '_>> =
        Box::pin(super::patch::serve(backend, &head, &target, body.as_bytes()));
    match patch.await {
        Ok(_) | Err(ApiError::NotFound(_)) => Ok(()),
        Err(e) => Err(e.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::testing::MemoryBackend;
    use crate::config::Config;
    use futures_lite::future::block_on;
    use serde_json::json;

    fn request(backend: &Rc<MemoryBackend>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let answer = crate::api::testing::send_json(backend, method, path, body);
        (answer.code, answer.body)
    }

    fn facts() -> Facts {
        Facts {
            service_cidr: "10.0.0.0/24".into(),
            service_ip: "10.0.0.1".into(),
            port: 6443,
            today: "2026-12-04".into(),
        }
    }

    const FS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
    const PLC: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";

    fn dangling(backend: &Rc<MemoryBackend>, name: &str) -> Value {
        let (code, schema) = request(backend, "GET", &format!("{FS}/{name}"), None);
        assert_eq!(code, 200, "{schema}");
        schema["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Dangling"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    #[test]
    fn a_pass_creates_revises_and_gives_conditions() {
        let config = Config::with_defaults("127.0.0.1:0".parse().unwrap(), "/nonexistent".into(), 2);
        let backend = Rc::new(MemoryBackend::new(config, 2));
        let mut writes = StatusWrites::default();
        // On an empty store the pass creates what the controllers keep.
        let outcome = block_on(pass(&*backend, &facts(), &mut writes));
        assert!(outcome.failed.is_empty(), "{outcome:?}");
        assert_eq!(request(&backend, "GET", PLC, None).1["items"].as_array().unwrap().len(), 8);
        let (_, cidr) = request(&backend, "GET", "/apis/networking.k8s.io/v1/servicecidrs/kubernetes", None);
        assert_eq!(cidr["status"]["conditions"][0]["status"], "True", "{cidr}");
        assert_eq!(dangling(&backend, "exempt")["reason"], "Found");

        // A schema naming a level that does not exist is dangling; the level
        // made, it is not.
        let schema = json!({"metadata": {"name": "mine"}, "spec": {"priorityLevelConfiguration": {"name": "mine"},
                            "matchingPrecedence": 5000, "rules": []}});
        assert_eq!(request(&backend, "POST", FS, Some(schema)).0, 201);
        block_on(pass(&*backend, &facts(), &mut writes));
        assert_eq!(dangling(&backend, "mine")["status"], "True");
        let level = json!({"metadata": {"name": "mine"}, "spec": {"type": "Limited", "limited": {
                           "nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject"}}}});
        assert_eq!(request(&backend, "POST", PLC, Some(level)).0, 201);
        block_on(pass(&*backend, &facts(), &mut writes));
        assert_eq!(dangling(&backend, "mine")["status"], "False");

        // The mandatory level deleted comes back; the schemas naming it
        // never dangle (the consumer imagines it meanwhile).
        assert_eq!(request(&backend, "DELETE", &format!("{PLC}/exempt"), None).0, 200);
        assert_eq!(dangling(&backend, "exempt")["status"], "False");
        block_on(pass(&*backend, &facts(), &mut writes));
        assert_eq!(request(&backend, "GET", &format!("{PLC}/exempt"), None).0, 200);

        // A suggested level the operator owns keeps its spec; one the
        // servers own is put back.
        let patch = |name: &str, owner: &str| {
            json!({"metadata": {"name": name, "annotations": {"apf.kubernetes.io/autoupdate-spec": owner}},
                   "spec": {"limited": {"nominalConcurrencyShares": 77}}})
        };
        let shares = |name: &str| {
            request(&backend, "GET", &format!("{PLC}/{name}"), None).1["spec"]["limited"]["nominalConcurrencyShares"]
                .clone()
        };
        assert_eq!(
            request(&backend, "PATCH", &format!("{PLC}/workload-low"), Some(patch("workload-low", "false"))).0,
            200
        );
        assert_eq!(
            request(&backend, "PATCH", &format!("{PLC}/global-default"), Some(patch("global-default", "true"))).0,
            200
        );
        block_on(pass(&*backend, &facts(), &mut writes));
        assert_eq!(shares("workload-low"), 77);
        assert_eq!(shares("global-default"), 20);
    }
}
