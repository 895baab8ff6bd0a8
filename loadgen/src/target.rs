//! The two kinds of target and what each operation means on them.
//!
//! * **Kubernetes** (`kube`): any API server. Writes are POST/PUT/DELETE on
//!   `/api/v1/namespaces/<ns>/pods`, lists are `GET /api/v1/pods` (paginated with `limit` and
//!   `continue`), watches are `GET /api/v1/pods?watch=1` (with `fieldSelector=spec.nodeName=` for
//!   node watchers) read as newline-delimited JSON events.
//! * **etcd**, through its JSON gRPC gateway (`/v3/kv/put`, `/v3/kv/range`, `/v3/kv/deleterange`,
//!   `/v3/watch`; keys and values base64): keys are laid out as Kubernetes lays them out
//!   (`/registry/pods/<ns>/<name>`), values are the same pod JSON. etcd cannot select by field, so a
//!   node watcher watches the whole prefix and drops other nodes' pods itself (the work
//!   kube-apiserver's watch cache does in front of etcd). Why the gateway: loadgen/README.md.
//!
//! Invariant: the pod a writer sends carries its send time (`STAMP_ANNOTATION`, Unix ns) and its
//! node, so any watcher on either kind of target can compute write-to-watch latency.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use bytes::Bytes;
use http::{Method, StatusCode};
use serde::Deserialize;

use crate::http::{read_body, Conn, Endpoint};

/// The annotation holding the writer's send time in Unix nanoseconds.
pub const STAMP_ANNOTATION: &str = "loadgen.shardline.dev/sent-unix-ns";
const PREFIX: &str = "/registry/pods/";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Kube,
    Etcd,
}

impl Flavor {
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Kube => "kube",
            Flavor::Etcd => "etcd",
        }
    }
}

#[derive(Clone)]
pub struct Target {
    pub name: String,
    pub flavor: Flavor,
    pub endpoint: Endpoint,
}

/// One pod a writer touches.
#[derive(Clone, Debug)]
pub struct PodRef {
    pub index: u64,
    pub namespace: String,
    pub name: String,
    pub node: String,
}

impl PodRef {
    pub fn new(index: u64, namespaces: u64, nodes: u64) -> PodRef {
        PodRef {
            index,
            namespace: format!("loadgen-{}", index % namespaces),
            name: format!("pod-{index}"),
            node: node_name(index % nodes),
        }
    }
}

pub fn node_name(i: u64) -> String {
    format!("node-{i}")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOp {
    Create,
    Update,
    Delete,
}

/// Now, in Unix nanoseconds (the clock writers stamp and watchers compare against).
pub fn unix_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// A pod of about `bytes` bytes of JSON, stamped with `stamp_ns`.
pub fn pod_json(pod: &PodRef, stamp_ns: u64, bytes: u64) -> Bytes {
    let head = format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"{}","labels":{{"app":"loadgen","node":"{}"}},"annotations":{{"{STAMP_ANNOTATION}":"{stamp_ns}","loadgen.shardline.dev/padding":""#,
        pod.name, pod.namespace, pod.node
    );
    let tail = format!(
        r#""}}}},"spec":{{"nodeName":"{}","containers":[{{"name":"app","image":"registry.k8s.io/pause:3.10"}}]}}}}"#,
        pod.node
    );
    let pad = (bytes as usize).saturating_sub(head.len() + tail.len());
    let mut s = String::with_capacity(head.len() + pad + tail.len());
    s.push_str(&head);
    s.extend(std::iter::repeat_n('x', pad));
    s.push_str(&tail);
    Bytes::from(s)
}

/// What a watcher found in one event.
#[derive(Debug, Default, PartialEq)]
pub struct Seen {
    /// ADDED/MODIFIED (a PUT on etcd) of a pod matching the watcher, with its stamp.
    pub stamp_ns: Option<u64>,
    /// The event counts for this watcher (etcd node watchers drop other nodes' pods).
    pub mine: bool,
    /// The revision to resume from.
    pub revision: Option<u64>,
    /// An ERROR event (Kubernetes) or a canceled watch (etcd).
    pub error: Option<String>,
}

#[derive(Deserialize)]
struct KubeEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    object: PodView,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PodView {
    metadata: MetaView,
    spec: SpecView,
    code: Option<u16>,
    reason: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MetaView {
    #[serde(rename = "resourceVersion")]
    resource_version: Option<String>,
    #[serde(rename = "deletionTimestamp")]
    deletion_timestamp: Option<String>,
    annotations: AnnotationsView,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AnnotationsView {
    #[serde(rename = "loadgen.shardline.dev/sent-unix-ns")]
    stamp: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SpecView {
    #[serde(rename = "nodeName")]
    node_name: Option<String>,
}

/// Parses one line of a Kubernetes watch stream: by scanning its structure
/// (`decode::scan_kube_event`), else, when the scan finds it unusual, by decoding it fully.
pub fn parse_kube_event(line: &[u8]) -> Result<Seen> {
    if let Ok(seen) = crate::decode::scan_kube_event(line) {
        return Ok(seen);
    }
    decode_kube_event(line)
}

/// Decodes one line of a Kubernetes watch stream fully (serde).
pub fn decode_kube_event(line: &[u8]) -> Result<Seen> {
    let ev: KubeEvent = serde_json::from_slice(line).context("watch event is not JSON")?;
    let revision = ev.object.metadata.resource_version.as_deref().and_then(|v| v.parse().ok());
    match ev.kind {
        "ADDED" | "MODIFIED" => Ok(Seen {
            stamp_ns: match ev.object.metadata.deletion_timestamp {
                Some(_) => None,
                None => ev.object.metadata.annotations.stamp.and_then(|s| s.parse().ok()),
            },
            mine: true,
            revision,
            error: None,
        }),
        "DELETED" => Ok(Seen { stamp_ns: None, mine: true, revision, error: None }),
        "BOOKMARK" => Ok(Seen { revision, ..Default::default() }),
        "ERROR" => Ok(Seen {
            error: Some(ev.object.code.map_or_else(|| ev.object.reason.clone().unwrap_or_default(), |c| c.to_string())),
            ..Default::default()
        }),
        other => bail!("unknown watch event type {other:?}"),
    }
}

#[derive(Deserialize)]
struct EtcdWatchLine {
    result: Option<EtcdWatchResult>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EtcdWatchResult {
    header: EtcdHeader,
    events: Vec<EtcdEvent>,
    canceled: bool,
    cancel_reason: Option<String>,
    compact_revision: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EtcdHeader {
    revision: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EtcdEvent {
    #[serde(rename = "type")]
    kind: Option<String>,
    kv: EtcdKv,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EtcdKv {
    value: Option<String>,
    mod_revision: Option<String>,
}

/// Parses one line of an etcd gateway watch stream: one `Seen` per event. `node` filters pods
/// by `spec.nodeName` (node watchers).
pub fn parse_etcd_watch(line: &[u8], node: Option<&str>) -> Result<Vec<Seen>> {
    let l: EtcdWatchLine = serde_json::from_slice(line).context("etcd watch response is not JSON")?;
    if let Some(e) = l.error {
        return Ok(vec![Seen { error: Some(format!("etcd: {e}")), ..Default::default() }]);
    }
    let r = l.result.unwrap_or_default();
    if r.canceled {
        let why = r.cancel_reason.or(r.compact_revision.map(|c| format!("compacted at {c}"))).unwrap_or_default();
        return Ok(vec![Seen { error: Some(format!("canceled: {why}")), ..Default::default() }]);
    }
    let mut out = Vec::with_capacity(r.events.len().max(1));
    for ev in r.events {
        let revision = ev.kv.mod_revision.as_deref().and_then(|v| v.parse().ok());
        let deleted = ev.kind.as_deref() == Some("DELETE");
        let mut seen = Seen { revision, mine: node.is_none(), ..Default::default() };
        if let Some(v) = ev.kv.value.filter(|_| !deleted) {
            let json = B64.decode(v).context("etcd value is not base64")?;
            let pod: PodView = serde_json::from_slice(&json).context("etcd value is not a pod")?;
            if let Some(n) = node {
                seen.mine = pod.spec.node_name.as_deref() == Some(n);
            }
            seen.stamp_ns = pod.metadata.annotations.stamp.and_then(|s| s.parse().ok());
        } else if node.is_some() {
            // A delete carries no value, so its node is unknown: node watchers ignore deletes.
            seen.mine = false;
        }
        out.push(seen);
    }
    if out.is_empty() {
        // Progress notifications and the "created" response carry only the header.
        out.push(Seen { revision: r.header.revision.and_then(|v| v.parse().ok()), ..Default::default() });
    }
    Ok(out)
}

fn etcd_key(ns: &str, name: &str) -> String {
    format!("{PREFIX}{ns}/{name}")
}

fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    *end.last_mut().expect("non-empty prefix") += 1;
    end
}

/// Why a write failed: the error key it is counted under (a status code, `connection`, `body`)
/// and, for 429 or a 5xx with `Retry-After`, the seconds the server asked the client to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub what: String,
    pub asked_wait_s: Option<u64>,
}

impl Failure {
    fn new(what: &str) -> Failure {
        Failure { what: what.to_string(), asked_wait_s: None }
    }
}

/// A status that is not success, as the error key it is counted under.
pub fn status_error(s: StatusCode) -> String {
    s.as_u16().to_string()
}

impl Target {
    /// One write. Fails with the status code for an HTTP error status (and the server's
    /// `Retry-After` when it asks to wait), `connection` or `body` for transport errors.
    pub async fn write(&self, conn: &mut Conn, op: WriteOp, pod: &PodRef, pod_bytes: u64) -> Result<(), Failure> {
        let e = &self.endpoint;
        let req = match self.flavor {
            Flavor::Kube => {
                let coll = format!("/api/v1/namespaces/{}/pods", pod.namespace);
                let json = "application/json";
                match op {
                    WriteOp::Create => {
                        e.request(Method::POST, &coll, json, Some((pod_json(pod, unix_ns(), pod_bytes), json)))
                    }
                    WriteOp::Update => e.request(
                        Method::PUT,
                        &format!("{coll}/{}", pod.name),
                        json,
                        Some((pod_json(pod, unix_ns(), pod_bytes), json)),
                    ),
                    // gracePeriodSeconds=0: gone at once, as etcd's delete is. A graceful
                    // delete of a scheduled pod would only set its deletionTimestamp (a
                    // MODIFIED event still carrying the previous write's stamp) and leave
                    // it for a kubelet to finish.
                    WriteOp::Delete => {
                        e.request(Method::DELETE, &format!("{coll}/{}?gracePeriodSeconds=0", pod.name), json, None)
                    }
                }
            }
            Flavor::Etcd => {
                let key = B64.encode(etcd_key(&pod.namespace, &pod.name));
                let (path, body) = match op {
                    WriteOp::Create | WriteOp::Update => {
                        let value = B64.encode(pod_json(pod, unix_ns(), pod_bytes));
                        ("/v3/kv/put", serde_json::json!({ "key": key, "value": value }))
                    }
                    WriteOp::Delete => ("/v3/kv/deleterange", serde_json::json!({ "key": key })),
                };
                e.request(
                    Method::POST,
                    path,
                    "application/json",
                    Some((Bytes::from(body.to_string()), "application/json")),
                )
            }
        };
        let resp = conn.send(req).await.map_err(|_| Failure::new("connection"))?;
        let status = resp.status();
        let asked_wait_s = crate::retry::asked_wait(status, resp.headers());
        read_body(resp).await.map_err(|_| Failure::new("body"))?;
        if status.is_success() {
            Ok(())
        } else {
            Err(Failure { what: status_error(status), asked_wait_s })
        }
    }

    /// The current revision (`resourceVersion` of the pods collection, etcd's header revision).
    pub async fn revision(&self, conn: &mut Conn) -> Result<u64> {
        let (req, pick): (_, fn(&serde_json::Value) -> Option<&str>) = match self.flavor {
            Flavor::Kube => {
                (self.endpoint.request(Method::GET, "/api/v1/pods?limit=1", "application/json", None), |v| {
                    v.pointer("/metadata/resourceVersion").and_then(|v| v.as_str())
                })
            }
            Flavor::Etcd => (
                self.endpoint.request(
                    Method::POST,
                    "/v3/kv/range",
                    "application/json",
                    Some((
                        Bytes::from(
                            serde_json::json!({"key": B64.encode("/"), "limit": 1, "keys_only": true}).to_string(),
                        ),
                        "application/json",
                    )),
                ),
                |v| v.pointer("/header/revision").and_then(|v| v.as_str()),
            ),
        };
        let resp = conn.send(req).await?;
        let status = resp.status();
        let body = read_body(resp).await?;
        if !status.is_success() {
            bail!("reading the current revision: {status}: {}", String::from_utf8_lossy(&body));
        }
        let v: serde_json::Value = serde_json::from_slice(&body)?;
        pick(&v)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| anyhow!("no revision in {}", String::from_utf8_lossy(&body)))
    }

    /// Deletes the namespaces an earlier run left (`loadgen-<n>`, whatever their count) and
    /// waits until they are gone (at most `CLEAN_TIMEOUT`): their pods first, with
    /// `gracePeriodSeconds=0` (a scheduled pod deleted gracefully waits for a kubelet that
    /// never comes), then each namespace. Returns the names deleted. Kubernetes only.
    pub async fn clean_namespaces(&self, conn: &mut Conn) -> Result<Vec<String>> {
        if self.flavor == Flavor::Etcd {
            return Ok(Vec::new());
        }
        let left = self.loadgen_namespaces(conn).await?;
        for ns in &left {
            for path in
                [format!("/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0"), format!("/api/v1/namespaces/{ns}")]
            {
                let resp = conn.send(self.endpoint.request(Method::DELETE, &path, "application/json", None)).await?;
                let status = resp.status();
                let body = read_body(resp).await?;
                // 404: gone already; 409: already being deleted.
                if !status.is_success() && status != StatusCode::NOT_FOUND && status != StatusCode::CONFLICT {
                    bail!(
                        "namespace {ns} is left from an earlier run and could not be deleted: DELETE {path}: {status}: {}",
                        String::from_utf8_lossy(&body)
                    );
                }
            }
        }
        let deadline = tokio::time::Instant::now() + CLEAN_TIMEOUT;
        loop {
            let still = self.loadgen_namespaces(conn).await?;
            if still.is_empty() {
                return Ok(left);
            }
            if tokio::time::Instant::now() >= deadline {
                bail!(
                    "namespaces {} are left from an earlier run and were still being deleted after {CLEAN_TIMEOUT:?}; delete them (kubectl delete namespace ...) and run again",
                    still.join(", ")
                );
            }
            tokio::time::sleep(CLEAN_POLL).await;
        }
    }

    /// The namespaces named as loadgen names its own (`loadgen-<n>`).
    async fn loadgen_namespaces(&self, conn: &mut Conn) -> Result<Vec<String>> {
        let resp =
            conn.send(self.endpoint.request(Method::GET, "/api/v1/namespaces", "application/json", None)).await?;
        let status = resp.status();
        let body = read_body(resp).await?;
        if !status.is_success() {
            bail!("listing namespaces: {status}: {}", String::from_utf8_lossy(&body));
        }
        loadgen_namespaces_in(&body)
    }

    /// Creates the namespaces pods go into (Kubernetes only; etcd has no namespaces to create).
    pub async fn ensure_namespaces(&self, conn: &mut Conn, count: u64) -> Result<()> {
        if self.flavor == Flavor::Etcd {
            return Ok(());
        }
        for i in 0..count {
            let body = format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"loadgen-{i}"}}}}"#);
            let req = self.endpoint.request(
                Method::POST,
                "/api/v1/namespaces",
                "application/json",
                Some((Bytes::from(body), "application/json")),
            );
            let resp = conn.send(req).await?;
            let status = resp.status();
            read_body(resp).await?;
            if !status.is_success() && status != StatusCode::CONFLICT {
                bail!("creating namespace loadgen-{i}: {status}");
            }
        }
        Ok(())
    }

    /// The request of one list page. `cont` is the continue token (Kubernetes) or the next
    /// key (etcd, base64); `limit` 0 lists everything in one response.
    pub fn list_request(
        &self,
        limit: u64,
        accept: &str,
        cont: Option<&str>,
    ) -> http::Request<http_body_util::Full<Bytes>> {
        match self.flavor {
            Flavor::Kube => {
                let mut q = String::from("/api/v1/pods");
                let mut sep = '?';
                if limit > 0 {
                    q.push_str(&format!("{sep}limit={limit}"));
                    sep = '&';
                }
                if let Some(c) = cont {
                    q.push_str(&format!("{sep}continue={}", url_escape(c)));
                }
                self.endpoint.request(Method::GET, &q, accept, None)
            }
            Flavor::Etcd => {
                let key = cont.map(str::to_string).unwrap_or_else(|| B64.encode(PREFIX));
                let body =
                    serde_json::json!({ "key": key, "range_end": B64.encode(prefix_end(PREFIX)), "limit": limit });
                self.endpoint.request(
                    Method::POST,
                    "/v3/kv/range",
                    "application/json",
                    Some((Bytes::from(body.to_string()), "application/json")),
                )
            }
        }
    }

    /// From a list page's body: (items, next continue). Protobuf pages are counted by bytes only
    /// and must be unpaginated or carry no continue (the protobuf list is not parsed here).
    pub fn parse_list_page(&self, body: &[u8], accept: &str) -> Result<(u64, Option<String>)> {
        match self.flavor {
            Flavor::Kube => {
                if !accept.contains("json") {
                    return Ok((0, None));
                }
                #[derive(Deserialize)]
                struct Page {
                    metadata: ListMeta,
                    items: Vec<serde::de::IgnoredAny>,
                }
                #[derive(Deserialize)]
                struct ListMeta {
                    #[serde(rename = "continue", default)]
                    cont: Option<String>,
                }
                let p: Page = serde_json::from_slice(body).context("list page is not a JSON list")?;
                Ok((p.items.len() as u64, p.metadata.cont.filter(|c| !c.is_empty())))
            }
            Flavor::Etcd => {
                #[derive(Deserialize)]
                struct Range {
                    #[serde(default)]
                    kvs: Vec<Kv>,
                    #[serde(default)]
                    more: bool,
                }
                #[derive(Deserialize)]
                struct Kv {
                    key: String,
                }
                let r: Range = serde_json::from_slice(body).context("range response is not JSON")?;
                let next = match (r.more, r.kvs.last()) {
                    (true, Some(kv)) => {
                        let mut k = B64.decode(&kv.key)?;
                        k.push(0);
                        Some(B64.encode(k))
                    }
                    _ => None,
                };
                Ok((r.kvs.len() as u64, next))
            }
        }
    }

    /// The watch request for all pods (`node` None) or one node's pods, from `revision`.
    pub fn watch_request(&self, node: Option<&str>, revision: u64) -> http::Request<http_body_util::Full<Bytes>> {
        match self.flavor {
            Flavor::Kube => {
                let mut q = format!("/api/v1/pods?watch=1&resourceVersion={revision}");
                if let Some(n) = node {
                    q.push_str(&format!("&fieldSelector=spec.nodeName%3D{n}"));
                }
                self.endpoint.request(Method::GET, &q, "application/json", None)
            }
            Flavor::Etcd => {
                let body = serde_json::json!({ "create_request": {
                    "key": B64.encode(PREFIX),
                    "range_end": B64.encode(prefix_end(PREFIX)),
                    "start_revision": revision + 1,
                }});
                self.endpoint.request(
                    Method::POST,
                    "/v3/watch",
                    "application/json",
                    Some((Bytes::from(body.to_string()), "application/json")),
                )
            }
        }
    }

    /// Parses one line of a watch stream.
    pub fn parse_watch_line(&self, line: &[u8], node: Option<&str>) -> Result<Vec<Seen>> {
        match self.flavor {
            Flavor::Kube => Ok(vec![parse_kube_event(line)?]),
            Flavor::Etcd => parse_etcd_watch(line, node),
        }
    }
}

/// How long loadgen waits for an earlier run's namespaces to be deleted before it refuses to run.
const CLEAN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
/// How often it looks meanwhile.
const CLEAN_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// The `loadgen-<n>` names in a NamespaceList.
fn loadgen_namespaces_in(list: &[u8]) -> Result<Vec<String>> {
    #[derive(Deserialize)]
    struct List {
        #[serde(default)]
        items: Vec<Item>,
    }
    #[derive(Deserialize)]
    struct Item {
        metadata: Meta,
    }
    #[derive(Deserialize)]
    struct Meta {
        name: String,
    }
    let l: List = serde_json::from_slice(list).context("the namespace list is not JSON")?;
    Ok(l.items
        .into_iter()
        .map(|i| i.metadata.name)
        .filter(|n| n.strip_prefix("loadgen-").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())))
        .collect())
}

fn url_escape(s: &str) -> String {
    form_escape(s)
}

/// Percent-encodes everything but unreserved characters.
fn form_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_have_the_asked_size_and_stamp() {
        let p = PodRef::new(12, 10, 5);
        assert_eq!((p.namespace.as_str(), p.name.as_str(), p.node.as_str()), ("loadgen-2", "pod-12", "node-2"));
        let json = pod_json(&p, 42, 1500);
        assert_eq!(json.len(), 1500);
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["metadata"]["annotations"][STAMP_ANNOTATION], "42");
        assert_eq!(v["spec"]["nodeName"], "node-2");
    }

    #[test]
    fn parses_kube_watch_events() {
        let p = PodRef::new(1, 1, 1);
        let line =
            format!(r#"{{"type":"MODIFIED","object":{}}}"#, String::from_utf8(pod_json(&p, 7, 300).to_vec()).unwrap());
        let seen = parse_kube_event(line.as_bytes()).unwrap();
        assert_eq!(seen.stamp_ns, Some(7));
        assert!(seen.mine);
        let bm =
            parse_kube_event(br#"{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}}"#)
                .unwrap();
        assert_eq!((bm.mine, bm.revision), (false, Some(12)));
        let err =
            parse_kube_event(br#"{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}"#).unwrap();
        assert_eq!(err.error.as_deref(), Some("410"));
        assert!(parse_kube_event(b"{").is_err());
        // A graceful deletion's MODIFIED event carries the previous write's stamp: not timed,
        // by the scan or by the decode.
        let deleting = String::from_utf8(pod_json(&p, 7, 300).to_vec())
            .unwrap()
            .replace(r#""metadata":{"#, r#""metadata":{"deletionTimestamp":"2026-11-23T15:00:00Z","#);
        let scanned = parse_kube_event(format!(r#"{{"type":"MODIFIED","object":{deleting}}}"#).as_bytes()).unwrap();
        assert_eq!((scanned.stamp_ns, scanned.mine), (None, true));
        let decoded = parse_kube_event(format!(r#"{{"object":{deleting},"type":"MODIFIED"}}"#).as_bytes()).unwrap();
        assert_eq!((decoded.stamp_ns, decoded.mine), (None, true));
        // The scan and the decode agree, whatever the field order.
        let reordered =
            format!(r#"{{"object":{},"type":"ADDED"}}"#, String::from_utf8(pod_json(&p, 7, 300).to_vec()).unwrap());
        assert_eq!(
            parse_kube_event(reordered.as_bytes()).unwrap(),
            crate::decode::scan_kube_event(line.as_bytes()).unwrap()
        );
        assert_eq!(decode_kube_event(reordered.as_bytes()).unwrap(), parse_kube_event(line.as_bytes()).unwrap());
    }

    #[test]
    fn parses_etcd_watch_responses_and_filters_by_node() {
        let p = PodRef::new(3, 1, 2); // node-1
        let value = B64.encode(pod_json(&p, 99, 300));
        let line = format!(
            r#"{{"result":{{"header":{{"revision":"5"}},"events":[{{"kv":{{"key":"x","value":"{value}","mod_revision":"5"}}}},{{"type":"DELETE","kv":{{"key":"x","mod_revision":"6"}}}}]}}}}"#
        );
        let all = parse_etcd_watch(line.as_bytes(), None).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].stamp_ns, all[0].mine, all[0].revision), (Some(99), true, Some(5)));
        assert_eq!((all[1].stamp_ns, all[1].mine), (None, true));
        let mine = parse_etcd_watch(line.as_bytes(), Some("node-1")).unwrap();
        assert!(mine[0].mine);
        let other = parse_etcd_watch(line.as_bytes(), Some("node-0")).unwrap();
        assert!(!other[0].mine);
        let created = parse_etcd_watch(br#"{"result":{"header":{"revision":"9"},"created":true}}"#, None).unwrap();
        assert_eq!((created[0].mine, created[0].revision), (false, Some(9)));
        let canceled = parse_etcd_watch(br#"{"result":{"canceled":true,"compact_revision":"3"}}"#, None).unwrap();
        assert!(canceled[0].error.as_deref().unwrap().contains("compacted"));
    }

    #[test]
    fn finds_only_loadgens_own_namespaces() {
        let list = br#"{"kind":"NamespaceList","items":[{"metadata":{"name":"default"}},{"metadata":{"name":"loadgen-0"}},
            {"metadata":{"name":"loadgen-12","deletionTimestamp":"2026-11-25T10:00:00Z"}},{"metadata":{"name":"loadgen-x"}},
            {"metadata":{"name":"loadgen-"}},{"metadata":{"name":"my-loadgen-1"}}]}"#;
        assert_eq!(loadgen_namespaces_in(list).unwrap(), ["loadgen-0", "loadgen-12"]);
        assert!(loadgen_namespaces_in(br#"{"kind":"NamespaceList"}"#).unwrap().is_empty());
        assert!(loadgen_namespaces_in(b"nope").is_err());
    }

    #[test]
    fn escapes_continue_tokens() {
        assert_eq!(form_escape("a+b/c=="), "a%2Bb%2Fc%3D%3D");
    }
}
