//! Admission webhooks (kube's MutatingAdmissionWebhook and
//! ValidatingAdmissionWebhook plugins) as pure code: the stored
//! configurations kept per shard ([`WebhookIndex`]), which webhooks a
//! request matches ([`Webhook::matches`]: rules, namespaceSelector,
//! objectSelector, kube's exemptions), the `AdmissionReview` sent
//! ([`review`]), the answer read back ([`read_answer`]: kube's
//! `VerifyAdmissionResponse`), a mutating answer's JSONPatch applied
//! ([`apply_patch`]), and kube's words for a denial or a failed call
//! ([`denial`], [`calling_error`]). The call itself is the runtime's
//! (`runtime/webhook.rs`, through `Backend::call_webhook`), and what is read
//! for it (the namespace, a Service's endpoints) is the API layer's
//! (`api/handlers/webhooks.rs`).
//!
//! Facts from kube-apiserver v1.36's source,
//! `staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/`:
//! `generic/webhook.go` (ShouldCallHook), `predicates/rules`,
//! `predicates/namespace`, `predicates/object`, `request/admissionreview.go`,
//! `errors/statuserror.go`, `mutating/dispatcher.go`,
//! `validating/dispatcher.go`.
//!
//! Shardline serves one version per resource, so `matchPolicy: Equivalent`
//! is `Exact` here (no other version of the same resource exists to match
//! by equivalence). `matchConditions` are CEL expressions, evaluated with
//! the `cel` crate over `object`, `oldObject` and `request` (kube's
//! `matchconditions/matcher.go`): any false skips the webhook, an error
//! skips it under `failurePolicy: Ignore` and is kube's 403 under `Fail`.
//! `authorizer` is not bound (Shardline has no authorizer for CEL): an
//! expression that uses it fails to evaluate.
//!
//! Invariant: no I/O; any stored configuration, however malformed, and any
//! answer, however malformed, gives a value or an error, never a panic.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

pub const GROUP: &str = "admissionregistration.k8s.io";
pub const MUTATING: &str = "mutatingwebhookconfigurations";
pub const VALIDATING: &str = "validatingwebhookconfigurations";
pub const POLICIES: &str = "validatingadmissionpolicies";
pub const BINDINGS: &str = "validatingadmissionpolicybindings";

/// Resources kube never calls webhooks for (`IsExemptAdmissionConfigurationResource`):
/// a broken webhook must not lock its own configuration.
const EXEMPT: [&str; 6] = [
    MUTATING,
    VALIDATING,
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings",
];

/// kube's default and largest `timeoutSeconds`.
pub const TIMEOUT_SECONDS_DEFAULT: u32 = 10;
pub const TIMEOUT_SECONDS_MAX: u32 = 30;

/// The operation a request is admitted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// Where a webhook is reached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientConfig {
    /// `clientConfig.url` (https only, validated when stored).
    pub url: Option<String>,
    /// `clientConfig.service`.
    pub service: Option<ServiceReference>,
    /// `clientConfig.caBundle`, decoded from base64 (PEM).
    pub ca_bundle: Vec<u8>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceReference {
    pub namespace: String,
    pub name: String,
    pub path: String,
    pub port: u16,
}

/// One rule of `rules` (operations and `apiGroups`/`apiVersions`/`resources`/`scope`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub scope: String,
}

/// One webhook of a configuration, with kube's defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct Webhook {
    pub name: String,
    pub configuration: String,
    pub mutating: bool,
    pub client: ClientConfig,
    pub rules: Vec<Rule>,
    /// `failurePolicy: Ignore` (default `Fail`).
    pub ignore_failures: bool,
    pub namespace_selector: Value,
    pub object_selector: Value,
    /// `sideEffects` (`None`, `NoneOnDryRun`, `Some`, `Unknown`; empty when unset).
    pub side_effects: String,
    pub timeout_seconds: u32,
    /// The first of `admissionReviewVersions` kube knows (`v1` or `v1beta1`);
    /// `None` when it lists neither.
    pub review_version: Option<&'static str>,
    /// `reinvocationPolicy: IfNeeded` (mutating only; default `Never`).
    pub reinvoke_if_needed: bool,
    /// `matchConditions`: each condition's name and CEL expression.
    pub match_conditions: Vec<(String, String)>,
}

/// The webhook configurations a shard has applied, each kind in name order
/// (kube sorts configurations by name, and keeps each one's webhooks in
/// their order).
#[derive(Clone, Debug, Default)]
pub struct WebhookIndex {
    mutating: BTreeMap<String, Vec<Webhook>>,
    validating: BTreeMap<String, Vec<Webhook>>,
    /// ValidatingAdmissionPolicies and their bindings, by name
    /// (`policy.rs`; kube evaluates them in that order).
    policies: BTreeMap<String, super::policy::Policy>,
    bindings: BTreeMap<String, super::policy::Binding>,
}

/// Whether a log key holds a webhook configuration.
pub fn is_webhook_key(key: &[u8]) -> bool {
    crate::types::key::group_resource(key).is_some_and(|(group, resource)| {
        group == GROUP && [MUTATING, VALIDATING, POLICIES, BINDINGS].contains(&resource.as_ref())
    })
}

impl WebhookIndex {
    /// Applies one committed change (`None`: a delete). Other keys, and
    /// values that do not parse, leave the configuration absent.
    pub fn apply(&mut self, key: &[u8], value: Option<&[u8]>) {
        let Some(key) = crate::types::key::ObjectKey::decode(key) else { return };
        if key.group != GROUP {
            return;
        }
        let parsed = value.and_then(|v| serde_json::from_slice::<Value>(v).ok());
        match key.resource.as_str() {
            POLICIES => {
                match parsed {
                    Some(object) => {
                        self.policies.insert(key.name.clone(), super::policy::parse_policy(&key.name, &object))
                    }
                    None => self.policies.remove(&key.name),
                };
                return;
            }
            BINDINGS => {
                match parsed {
                    Some(object) => {
                        self.bindings.insert(key.name.clone(), super::policy::parse_binding(&key.name, &object))
                    }
                    None => self.bindings.remove(&key.name),
                };
                return;
            }
            _ => {}
        }
        let mutating = match key.resource.as_str() {
            MUTATING => true,
            VALIDATING => false,
            _ => return,
        };
        let map = if mutating { &mut self.mutating } else { &mut self.validating };
        match parsed {
            Some(object) => {
                map.insert(key.name.clone(), parse_configuration(&key.name, mutating, &object));
            }
            None => {
                map.remove(&key.name);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.mutating.is_empty() && self.validating.is_empty() && self.bindings.is_empty()
    }

    /// Each binding with its policy, policies in name order and each one's
    /// bindings in name order (kube's dispatch order); a binding whose
    /// policy is not stored binds nothing.
    pub fn policy_bindings(&self) -> Vec<(&super::policy::Policy, &super::policy::Binding)> {
        let mut out = Vec::new();
        for policy in self.policies.values() {
            for binding in self.bindings.values().filter(|b| b.policy_name == policy.name) {
                out.push((policy, binding));
            }
        }
        out
    }

    /// The mutating webhooks, in kube's calling order.
    pub fn mutating(&self) -> impl Iterator<Item = &Webhook> {
        self.mutating.values().flatten()
    }

    /// The validating webhooks (kube calls them in parallel).
    pub fn validating(&self) -> impl Iterator<Item = &Webhook> {
        self.validating.values().flatten()
    }
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect()).unwrap_or_default()
}

/// One `RuleWithOperations` (scope defaulted to `*`, as kube defaults it).
pub(crate) fn parse_rule(r: &Value) -> Rule {
    Rule {
        operations: strings(&r["operations"]),
        api_groups: strings(&r["apiGroups"]),
        api_versions: strings(&r["apiVersions"]),
        resources: strings(&r["resources"]),
        scope: r["scope"].as_str().unwrap_or("*").to_string(),
    }
}

/// A configuration's webhooks, defaulted as kube's `SetDefaults_*Webhook`.
pub fn parse_configuration(configuration: &str, mutating: bool, object: &Value) -> Vec<Webhook> {
    let Some(webhooks) = object.get("webhooks").and_then(Value::as_array) else { return Vec::new() };
    webhooks.iter().map(|w| parse_webhook(configuration, mutating, w)).collect()
}

fn parse_webhook(configuration: &str, mutating: bool, w: &Value) -> Webhook {
    use base64::Engine;
    let client = &w["clientConfig"];
    let service = client.get("service").filter(|s| s.is_object()).map(|s| ServiceReference {
        namespace: s["namespace"].as_str().unwrap_or("").to_string(),
        name: s["name"].as_str().unwrap_or("").to_string(),
        path: s["path"].as_str().unwrap_or("").to_string(),
        port: s["port"].as_u64().and_then(|p| u16::try_from(p).ok()).unwrap_or(443),
    });
    let ca_bundle = client["caBundle"]
        .as_str()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .unwrap_or_default();
    let rules = w["rules"].as_array().map(|rules| rules.iter().map(parse_rule).collect()).unwrap_or_default();
    let review_version =
        w["admissionReviewVersions"].as_array().into_iter().flatten().filter_map(Value::as_str).find_map(|v| match v {
            "v1" => Some("v1"),
            "v1beta1" => Some("v1beta1"),
            _ => None,
        });
    let selector = |field: &str| w.get(field).filter(|s| s.is_object()).cloned().unwrap_or_else(|| json!({}));
    Webhook {
        name: w["name"].as_str().unwrap_or("").to_string(),
        configuration: configuration.to_string(),
        mutating,
        client: ClientConfig { url: client["url"].as_str().map(String::from), service, ca_bundle },
        rules,
        ignore_failures: w["failurePolicy"].as_str() == Some("Ignore"),
        namespace_selector: selector("namespaceSelector"),
        object_selector: selector("objectSelector"),
        side_effects: w["sideEffects"].as_str().unwrap_or("").to_string(),
        timeout_seconds: w["timeoutSeconds"]
            .as_u64()
            .map(|t| t.clamp(1, u64::from(TIMEOUT_SECONDS_MAX)) as u32)
            .unwrap_or(TIMEOUT_SECONDS_DEFAULT),
        review_version,
        reinvoke_if_needed: mutating && w["reinvocationPolicy"].as_str() == Some("IfNeeded"),
        match_conditions: w["matchConditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| (c["name"].as_str().unwrap_or("").to_string(), c["expression"].as_str().unwrap_or("").to_string()))
            .collect(),
    }
}

/// What a webhook is asked about: kube's `admission.Attributes`.
#[derive(Clone, Debug)]
pub struct Attributes<'a> {
    pub operation: Operation,
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    /// Empty for cluster-scoped objects.
    pub namespace: &'a str,
    pub name: &'a str,
    pub object: Option<&'a Value>,
    pub old_object: Option<&'a Value>,
    /// The labels of the request's namespace (for a Namespace, its own);
    /// `None` for cluster-scoped objects other than namespaces.
    pub namespace_labels: Option<&'a Map<String, Value>>,
    pub dry_run: bool,
    pub user: &'a crate::auth::UserInfo,
    /// The request's options object (`CreateOptions`, `UpdateOptions`,
    /// `PatchOptions`, `DeleteOptions`).
    pub options: Value,
    /// The bounds matchConditions are evaluated within.
    pub cel: CelLimits,
}

use crate::strategy::cel::expression_shape;
pub use crate::strategy::cel::CelLimits;

/// Whether a webhook applies, and why not when it cannot tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    Yes,
    No,
    /// kube could not decide (a malformed selector): its 500, whatever the
    /// failure policy (the text is the reason).
    Error(String),
    /// A matchCondition failed to evaluate under `failurePolicy: Fail`:
    /// kube's 403 for the request's resource and name (the text is why).
    Refused(String),
}

impl Webhook {
    /// kube's `ShouldCallHook`: the rules, then the namespace and object
    /// selectors; configurations themselves are never admitted by webhooks.
    pub fn matches(&self, attrs: &Attributes<'_>) -> Match {
        if attrs.group == GROUP && EXEMPT.contains(&attrs.resource) {
            return Match::No;
        }
        if !self.rules.iter().any(|r| rule_matches(r, attrs)) {
            return Match::No;
        }
        match self.namespace_matches(attrs) {
            Ok(true) => {}
            Ok(false) => return Match::No,
            Err(e) => return Match::Error(e),
        }
        let objects_labels = [attrs.object, attrs.old_object];
        let empty = selector_is_empty(&self.object_selector);
        if !empty {
            let mut any = false;
            for object in objects_labels.into_iter().flatten() {
                match selector_matches(&self.object_selector, labels_of(object)) {
                    Ok(true) => any = true,
                    Ok(false) => {}
                    Err(e) => return Match::Error(e),
                }
            }
            if !any {
                return Match::No;
            }
        }
        if self.match_conditions.is_empty() {
            return Match::Yes;
        }
        match evaluate_conditions(&self.match_conditions, attrs) {
            Ok(true) => Match::Yes,
            Ok(false) => Match::No,
            Err(_) if self.ignore_failures => Match::No,
            Err(e) => Match::Refused(e),
        }
    }

    /// kube's namespace matcher: cluster-scoped objects (other than
    /// namespaces) always match; a namespace is matched by its own labels.
    fn namespace_matches(&self, attrs: &Attributes<'_>) -> Result<bool, String> {
        if selector_is_empty(&self.namespace_selector) {
            return Ok(true);
        }
        let is_namespace = attrs.group.is_empty() && attrs.resource == "namespaces";
        if attrs.namespace.is_empty() && !is_namespace {
            return Ok(true);
        }
        let empty = Map::new();
        selector_matches(&self.namespace_selector, Some(attrs.namespace_labels.unwrap_or(&empty)))
    }
}

/// kube's rule matcher (`predicates/rules`): operation, group, version,
/// resource (with `*`, `RESOURCE/*`, `*/SUBRESOURCE`, `*/*`) and scope.
pub(crate) fn rule_matches(rule: &Rule, attrs: &Attributes<'_>) -> bool {
    let op = attrs.operation.as_str();
    let any_or = |list: &[String], value: &str| list.iter().any(|x| x == "*" || x == value);
    if !any_or(&rule.operations, op) || !any_or(&rule.api_groups, attrs.group) {
        return false;
    }
    if !any_or(&rule.api_versions, attrs.version) {
        return false;
    }
    let resource_ok = rule.resources.iter().any(|r| {
        let (res, sub) = match r.split_once('/') {
            Some((res, sub)) => (res, Some(sub)),
            None => (r.as_str(), None),
        };
        let res_ok = res == "*" || res == attrs.resource;
        let sub_ok = match sub {
            None => attrs.subresource.is_empty(),
            Some("*") => true,
            Some(sub) => sub == attrs.subresource,
        };
        res_ok && sub_ok
    });
    if !resource_ok {
        return false;
    }
    match rule.scope.as_str() {
        "Cluster" => attrs.namespace.is_empty(),
        // kube: a Namespace object is namespace-scoped for "Namespaced" rules.
        "Namespaced" => !attrs.namespace.is_empty() || (attrs.group.is_empty() && attrs.resource == "namespaces"),
        _ => true,
    }
}

pub(crate) fn labels_of(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object)
}

pub(crate) fn selector_is_empty(selector: &Value) -> bool {
    let empty = |field: &str| {
        selector.get(field).is_none_or(|v| {
            v.is_null() || v.as_object().is_some_and(Map::is_empty) || v.as_array().is_some_and(Vec::is_empty)
        })
    };
    empty("matchLabels") && empty("matchExpressions")
}

/// A `metav1.LabelSelector` over `labels` (absent labels: none). The empty
/// selector matches everything, as `LabelSelectorAsSelector` makes it; an
/// unknown operator is an error, as it is there.
pub fn selector_matches(selector: &Value, labels: Option<&Map<String, Value>>) -> Result<bool, String> {
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    if let Some(m) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            if label(k) != v.as_str() {
                return Ok(false);
            }
        }
    }
    for e in selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or("");
        let values = strings(&e["values"]);
        let has = |v: &str| values.iter().any(|x| x == v);
        let ok = match e["operator"].as_str().unwrap_or("") {
            "In" => label(key).is_some_and(has),
            "NotIn" => label(key).is_none_or(|v| !has(v)),
            "Exists" => label(key).is_some(),
            "DoesNotExist" => label(key).is_none(),
            other => return Err(format!("{other:?} is not a valid label selector operator")),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// kube's match-condition matcher: every condition true matches; any false
/// does not (whatever the others' errors); otherwise the errors, joined as
/// Go's `utilerrors.NewAggregate` joins them.
fn evaluate_conditions(conditions: &[(String, String)], attrs: &Attributes<'_>) -> Result<bool, String> {
    let limits = attrs.cel;
    let mut errors = Vec::new();
    let mut runnable = Vec::new();
    for (name, expression) in conditions {
        match expression_shape(expression, &limits) {
            Ok(()) => runnable.push((name.clone(), expression.clone())),
            Err(e) => errors.push(format!("compilation failed for match condition {name:?}: {e}")),
        }
    }
    let request = cel_request(attrs);
    let object = attrs.object.cloned().unwrap_or(Value::Null);
    let old = attrs.old_object.cloned().unwrap_or(Value::Null);
    // On a thread of its own: the interpreter's recursion gets a known stack.
    let evaluated = std::thread::Builder::new()
        .name("cel".into())
        .stack_size(limits.stack_bytes)
        .spawn(move || run_conditions(&runnable, &object, &old, &request))
        .map_err(|e| format!("evaluating match conditions: {e}"))?
        .join()
        .map_err(|_| "evaluating match conditions: the CEL interpreter failed".to_string())?;
    match evaluated {
        Evaluated::False => Ok(false),
        Evaluated::True(run_errors) => {
            errors.extend(run_errors);
            match errors.len() {
                0 => Ok(true),
                1 => Err(errors.remove(0)),
                _ => Err(format!("[{}]", errors.join(", "))),
            }
        }
    }
}

/// What the conditions came to: one false, or the errors of those that
/// were not true (none: all true).
enum Evaluated {
    False,
    True(Vec<String>),
}

fn run_conditions(conditions: &[(String, String)], object: &Value, old: &Value, request: &Value) -> Evaluated {
    let mut context = cel::Context::default();
    context.add_variable_from_value("object", to_cel(object));
    context.add_variable_from_value("oldObject", to_cel(old));
    context.add_variable_from_value("request", to_cel(request));
    let mut errors = Vec::new();
    for (name, expression) in conditions {
        let program = match cel::Program::compile(expression) {
            Ok(program) => program,
            Err(e) => {
                errors.push(format!("compilation failed for match condition {name:?}: {e}"));
                continue;
            }
        };
        match program.execute(&context) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => return Evaluated::False,
            Ok(other) => {
                errors.push(format!("match condition {name:?} evaluated to {:?}, not a bool", other.type_of()))
            }
            Err(e) => errors.push(format!("expression '{expression}' resulted in error: {e}")),
        }
    }
    Evaluated::True(errors)
}

/// A JSON value as CEL sees it (integers as `int` where they fit, as
/// kube's unstructured conversion makes them).
pub(crate) fn to_cel(value: &Value) -> cel::Value {
    use std::sync::Arc;
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let entries: std::collections::HashMap<cel::objects::Key, cel::Value> =
                map.iter().map(|(k, v)| (cel::objects::Key::String(Arc::new(k.clone())), to_cel(v))).collect();
            cel::Value::Map(cel::objects::Map { map: Arc::new(entries) })
        }
    }
}

/// kube's `CreateAdmissionRequest` as CEL's `request`: the review's request
/// without the objects and uid (matchConditions and admission policies).
pub(crate) fn cel_request(attrs: &Attributes<'_>) -> Value {
    let mut request = review(attrs, "", "v1")["request"].take();
    if let Some(r) = request.as_object_mut() {
        r.remove("object");
        r.remove("oldObject");
        r.remove("uid");
    }
    request
}

/// The `AdmissionReview` a webhook is sent (kube's `CreateV1AdmissionReview`;
/// v1beta1 has the same request fields under its own apiVersion).
pub fn review(attrs: &Attributes<'_>, uid: &str, version: &str) -> Value {
    let kind = json!({"group": attrs.group, "version": attrs.version, "kind": attrs.kind});
    let resource = json!({"group": attrs.group, "version": attrs.version, "resource": attrs.resource});
    let mut request = Map::new();
    request.insert("uid".into(), json!(uid));
    request.insert("kind".into(), kind.clone());
    request.insert("resource".into(), resource.clone());
    if !attrs.subresource.is_empty() {
        request.insert("subResource".into(), json!(attrs.subresource));
    }
    request.insert("requestKind".into(), kind);
    request.insert("requestResource".into(), resource);
    if !attrs.subresource.is_empty() {
        request.insert("requestSubResource".into(), json!(attrs.subresource));
    }
    if !attrs.name.is_empty() {
        request.insert("name".into(), json!(attrs.name));
    }
    if !attrs.namespace.is_empty() {
        request.insert("namespace".into(), json!(attrs.namespace));
    }
    request.insert("operation".into(), json!(attrs.operation.as_str()));
    let mut user = Map::new();
    user.insert("username".into(), json!(attrs.user.name));
    if !attrs.user.uid.is_empty() {
        user.insert("uid".into(), json!(attrs.user.uid));
    }
    if !attrs.user.groups.is_empty() {
        user.insert("groups".into(), json!(attrs.user.groups));
    }
    if !attrs.user.extra.is_empty() {
        user.insert("extra".into(), json!(attrs.user.extra));
    }
    request.insert("userInfo".into(), Value::Object(user));
    request.insert("object".into(), attrs.object.cloned().unwrap_or(Value::Null));
    request.insert("oldObject".into(), attrs.old_object.cloned().unwrap_or(Value::Null));
    request.insert("dryRun".into(), json!(attrs.dry_run));
    request.insert("options".into(), attrs.options.clone());
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": Value::Object(request),
    })
}

/// The options object of a request, as kube passes it to admission.
pub fn options(kind: &str, dry_run: bool, field_manager: Option<&str>, extra: Map<String, Value>) -> Value {
    let mut options = Map::new();
    options.insert("kind".into(), json!(kind));
    options.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
    if dry_run {
        options.insert("dryRun".into(), json!(["All"]));
    }
    if let Some(manager) = field_manager.filter(|m| !m.is_empty()) {
        options.insert("fieldManager".into(), json!(manager));
    }
    options.extend(extra);
    Value::Object(options)
}

/// A webhook's answer, checked (kube's `VerifyAdmissionResponse`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answer {
    pub allowed: bool,
    /// `response.status` (a `metav1.Status`), when given.
    pub status: Option<Value>,
    /// The decoded JSONPatch (mutating webhooks only).
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
}

/// Reads an `AdmissionReview` answer; the error is kube's reason for a bad
/// response (worded as kube's, which the caller wraps in `failed calling
/// webhook`).
pub fn read_answer(body: &[u8], uid: &str, mutating: bool, version: &str) -> Result<Answer, String> {
    use base64::Engine;
    let review: Value = serde_json::from_slice(body).map_err(|e| format!("failed to call webhook: {e}"))?;
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("received invalid webhook response: webhook response was absent".into());
    };
    let invalid = |m: String| format!("received invalid webhook response: {m}");
    let got_uid = response["uid"].as_str().unwrap_or("");
    if version == "v1" {
        if got_uid != uid {
            return Err(invalid(format!("expected response.uid={uid:?}, got {got_uid:?}")));
        }
        let api_version = review["apiVersion"].as_str().unwrap_or("");
        let kind = review["kind"].as_str().unwrap_or("");
        if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let got = match api_version.split_once('/') {
                Some((group, version)) => format!("{group}/{version}, Kind={kind}"),
                None => format!("/{api_version}, Kind={kind}"),
            };
            return Err(invalid(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}"
            )));
        }
    }
    let patch_text = response.get("patch").and_then(Value::as_str).filter(|p| !p.is_empty());
    let patch_type = response.get("patchType").filter(|t| !t.is_null());
    let mut patch = None;
    if mutating {
        if version == "v1" {
            if patch_text.is_some() && patch_type.is_none() {
                return Err(invalid("webhook returned response.patch but not response.patchType".into()));
            }
            if patch_text.is_none() && patch_type.is_some() {
                return Err(invalid("webhook returned response.patchType but not response.patch".into()));
            }
            if let Some(t) = patch_type {
                let t = t.as_str().unwrap_or("");
                if t.is_empty() {
                    return Err(invalid(format!("webhook returned invalid response.patchType of {t:?}")));
                }
                if t != "JSONPatch" {
                    return Err(format!("unsupported patch type {t:?}"));
                }
            }
        }
        if let Some(text) = patch_text {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("received undecodable patch in webhook response: {e}"))?;
            patch = Some(decoded);
        }
    } else if version == "v1" {
        if patch_text.is_some() {
            return Err(invalid("validating webhook may not return response.patch".into()));
        }
        if patch_type.is_some() {
            return Err(invalid("validating webhook may not return response.patchType".into()));
        }
    }
    Ok(Answer {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        status: response.get("status").filter(|s| s.is_object()).cloned(),
        patch,
        warnings: strings(&response["warnings"]),
    })
}

/// Applies a mutating webhook's JSONPatch to `object`; `Ok(true)` when the
/// object changed. A patch that does not decode is kube's bad response; one
/// that does not apply is its internal error (the `Err` says which).
pub fn apply_patch(object: &mut Value, patch: &[u8]) -> Result<bool, PatchFailure> {
    let operations: json_patch::Patch = serde_json::from_slice(patch)
        .map_err(|e| PatchFailure::Undecodable(format!("received undecodable patch in webhook response: {e}")))?;
    if operations.0.is_empty() {
        return Ok(false);
    }
    let mut patched = object.clone();
    json_patch::patch(&mut patched, &operations).map_err(|e| PatchFailure::DoesNotApply(e.to_string()))?;
    if !patched.is_object() {
        return Err(PatchFailure::DoesNotApply("the patched object is not a JSON object".into()));
    }
    let changed = patched != *object;
    *object = patched;
    Ok(changed)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchFailure {
    /// kube: a calling error (the failure policy applies).
    Undecodable(String),
    /// kube: an internal error (refused whatever the failure policy).
    DoesNotApply(String),
}

/// A refusal by a webhook, as kube's `ToStatusErr` builds it: the webhook's
/// Status with its code (at least 400), `status: Failure`, and the message
/// `admission webhook "NAME" denied the request: ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Denial {
    pub code: u16,
    pub reason: String,
    pub message: String,
    pub details: Option<Value>,
}

pub fn denial(webhook: &str, status: Option<&Value>) -> Denial {
    let empty = json!({});
    let status = status.unwrap_or(&empty);
    let code =
        status["code"].as_u64().and_then(|c| u16::try_from(c).ok()).filter(|c| *c >= 400 && *c < 600).unwrap_or(400);
    let reason = status["reason"].as_str().unwrap_or("").to_string();
    let given = status["message"].as_str().unwrap_or("");
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = if !given.is_empty() {
        format!("{denied_by}: {given}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    Denial { code, reason, message, details: status.get("details").filter(|d| d.is_object()).cloned() }
}

/// kube's `ErrCallingWebhook` text.
pub fn calling_error(webhook: &str, reason: &str) -> String {
    format!("failed calling webhook {webhook:?}: {reason}")
}

/// kube's `NewDryRunUnsupportedErr` message (a 400 BadRequest).
pub fn dry_run_unsupported(webhook: &str) -> String {
    format!("admission webhook {webhook:?} does not support dry run")
}

/// Whether a dry-run request may call this webhook (`sideEffects` None or
/// NoneOnDryRun); `Err(true)` when sideEffects is unset (kube: a calling
/// error), `Err(false)` when it is Some/Unknown (kube: a 400 whatever the
/// failure policy).
pub fn dry_run_allowed(webhook: &Webhook) -> Result<(), bool> {
    match webhook.side_effects.as_str() {
        "None" | "NoneOnDryRun" => Ok(()),
        "" => Err(true),
        _ => Err(false),
    }
}

/// The URL kube sends a webhook's request to (with `?timeout=Ns`, as
/// client-go adds it), and the host for a Service reference
/// (`NAME.NAMESPACE.svc:PORT`).
pub fn request_url(webhook: &Webhook) -> Option<String> {
    let timeout = webhook.timeout_seconds;
    let base = match (&webhook.client.url, &webhook.client.service) {
        (Some(url), _) => url.clone(),
        (None, Some(s)) => {
            let path = if s.path.is_empty() { "/".to_string() } else { s.path.clone() };
            format!("https://{}.{}.svc:{}{}", s.name, s.namespace, s.port, path)
        }
        (None, None) => return None,
    };
    let separator = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{separator}timeout={timeout}s"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::UserInfo;

    fn webhook(extra: Value) -> Webhook {
        let mut w = json!({
            "name": "check.example.com",
            "clientConfig": {"url": "https://127.0.0.1:9443/validate", "caBundle": "Y2E="},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        });
        for (k, v) in extra.as_object().unwrap() {
            w[k] = v.clone();
        }
        parse_webhook("config", false, &w)
    }

    fn attrs<'a>(user: &'a UserInfo, object: &'a Value, labels: Option<&'a Map<String, Value>>) -> Attributes<'a> {
        Attributes {
            operation: Operation::Create,
            group: "",
            version: "v1",
            kind: "ConfigMap",
            resource: "configmaps",
            subresource: "",
            namespace: "default",
            name: "one",
            object: Some(object),
            old_object: None,
            namespace_labels: labels,
            dry_run: false,
            user,
            options: options("CreateOptions", false, Some("kubectl"), Map::new()),
            cel: CelLimits::default(),
        }
    }

    #[test]
    fn configurations_are_defaulted_as_kube() {
        let w = webhook(json!({}));
        assert_eq!(w.client.ca_bundle, b"ca");
        assert!(!w.ignore_failures);
        assert_eq!(w.timeout_seconds, 10);
        assert_eq!(w.review_version, Some("v1"));
        assert_eq!(w.rules[0].scope, "*");
        let w = webhook(
            json!({"failurePolicy": "Ignore", "timeoutSeconds": 99, "admissionReviewVersions": ["v9", "v1beta1"]}),
        );
        assert!(w.ignore_failures);
        assert_eq!(w.timeout_seconds, TIMEOUT_SECONDS_MAX);
        assert_eq!(w.review_version, Some("v1beta1"));
        assert_eq!(webhook(json!({"admissionReviewVersions": ["v2"]})).review_version, None);
    }

    #[test]
    fn index_follows_puts_and_deletes_in_name_order() {
        let mut index = WebhookIndex::default();
        let key = |name: &str| crate::types::key::ObjectKey::new(GROUP, VALIDATING, "", name).encode();
        let config = |hook: &str| serde_json::to_vec(&json!({"webhooks": [{"name": hook}]})).unwrap();
        index.apply(&key("b"), Some(&config("second")));
        index.apply(&key("a"), Some(&config("first")));
        assert!(is_webhook_key(&key("a")));
        let names: Vec<_> = index.validating().map(|w| w.name.clone()).collect();
        assert_eq!(names, ["first", "second"]);
        index.apply(&key("a"), None);
        assert_eq!(index.validating().count(), 1);
        assert_eq!(index.mutating().count(), 0);
        let other = crate::types::key::ObjectKey::new("", "configmaps", "default", "x").encode();
        assert!(!is_webhook_key(&other));
        index.apply(&other, Some(b"{}"));
        assert_eq!(index.validating().count(), 1);
    }

    #[test]
    fn rules_match_operations_groups_resources_subresources_and_scope() {
        let user = UserInfo::default();
        let object = json!({"metadata": {"name": "one"}});
        let w = webhook(json!({}));
        assert_eq!(w.matches(&attrs(&user, &object, None)), Match::Yes);
        let mut a = attrs(&user, &object, None);
        a.operation = Operation::Delete;
        assert_eq!(w.matches(&a), Match::No, "operation not listed");
        let mut a = attrs(&user, &object, None);
        a.resource = "secrets";
        assert_eq!(w.matches(&a), Match::No);
        let mut a = attrs(&user, &object, None);
        a.subresource = "status";
        assert_eq!(w.matches(&a), Match::No, "a subresource needs RESOURCE/SUB");
        let pods_status = webhook(
            json!({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["pods/status"]}]}),
        );
        let mut a = attrs(&user, &object, None);
        a.resource = "pods";
        a.subresource = "status";
        assert_eq!(pods_status.matches(&a), Match::Yes);
        a.subresource = "";
        assert_eq!(pods_status.matches(&a), Match::No);
        let all = webhook(
            json!({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"], "scope": "Cluster"}]}),
        );
        let mut a = attrs(&user, &object, None);
        a.subresource = "status";
        assert_eq!(all.matches(&a), Match::No, "namespaced object, Cluster scope");
        a.namespace = "";
        assert_eq!(all.matches(&a), Match::Yes);
        // Webhook configurations are never admitted by webhooks.
        a.group = GROUP;
        a.resource = VALIDATING;
        a.subresource = "";
        assert_eq!(all.matches(&a), Match::No);
    }

    #[test]
    fn selectors_match_namespace_and_object_labels() {
        let user = UserInfo::default();
        let labelled = json!({"metadata": {"name": "one", "labels": {"team": "a"}}});
        let plain = json!({"metadata": {"name": "one"}});
        let ns_labels: Map<String, Value> = serde_json::from_value(json!({"env": "prod"})).unwrap();
        let by_ns = webhook(json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}}));
        assert_eq!(by_ns.matches(&attrs(&user, &plain, Some(&ns_labels))), Match::Yes);
        assert_eq!(by_ns.matches(&attrs(&user, &plain, None)), Match::No);
        let by_expr = webhook(
            json!({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}}),
        );
        assert_eq!(by_expr.matches(&attrs(&user, &plain, Some(&ns_labels))), Match::No);
        let bad = webhook(json!({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "Near"}]}}));
        assert!(matches!(bad.matches(&attrs(&user, &plain, Some(&ns_labels))), Match::Error(_)));
        let by_object = webhook(json!({"objectSelector": {"matchLabels": {"team": "a"}}}));
        assert_eq!(by_object.matches(&attrs(&user, &labelled, None)), Match::Yes);
        assert_eq!(by_object.matches(&attrs(&user, &plain, None)), Match::No);
        // Either the new or the old object's labels match.
        let mut a = attrs(&user, &plain, None);
        a.operation = Operation::Update;
        a.old_object = Some(&labelled);
        assert_eq!(by_object.matches(&a), Match::Yes);
        // A cluster-scoped object always matches a namespace selector; a Namespace by its own labels.
        let mut a = attrs(&user, &plain, None);
        a.namespace = "";
        assert_eq!(by_ns.matches(&a), Match::Yes);
        let all = webhook(
            json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}, "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"]}]}),
        );
        let mut a = attrs(&user, &plain, None);
        a.namespace = "";
        a.resource = "namespaces";
        assert_eq!(all.matches(&a), Match::No);
        a.namespace_labels = Some(&ns_labels);
        assert_eq!(all.matches(&a), Match::Yes);
    }

    #[test]
    fn match_conditions_are_evaluated_as_kube() {
        let user = UserInfo { name: "alice".into(), ..UserInfo::default() };
        let object = json!({"metadata": {"name": "one", "labels": {"team": "a"}}, "data": {"n": "1"}});
        let with =
            |conditions: Value, policy: &str| webhook(json!({"matchConditions": conditions, "failurePolicy": policy}));
        let a = attrs(&user, &object, None);
        let yes = json!([
            {"name": "team", "expression": "object.metadata.labels.team == 'a'"},
            {"name": "user", "expression": "request.userInfo.username == 'alice' && request.operation == 'CREATE'"},
            {"name": "no-old", "expression": "oldObject == null"},
        ]);
        assert_eq!(with(yes, "Fail").matches(&a), Match::Yes);
        let no = json!([{"name": "other", "expression": "has(object.metadata.annotations)"}]);
        assert_eq!(with(no, "Fail").matches(&a), Match::No);
        // A false condition wins over another's error.
        let mixed = json!([{"name": "err", "expression": "object.nothing.here"}, {"name": "f", "expression": "false"}]);
        assert_eq!(with(mixed, "Fail").matches(&a), Match::No);
        let error = json!([{"name": "err", "expression": "object.nothing.here == 1"}]);
        assert!(matches!(with(error.clone(), "Fail").matches(&a), Match::Refused(_)));
        assert_eq!(with(error, "Ignore").matches(&a), Match::No);
        let not_bool = json!([{"name": "n", "expression": "1 + 1"}]);
        assert!(matches!(with(not_bool, "Fail").matches(&a), Match::Refused(m) if m.contains("not a bool")));
        // Past the bounds: refused before the interpreter sees it (it would overflow its stack).
        let deep = json!([{"name": "deep", "expression": format!("{}true{}", "(".repeat(300), ")".repeat(300))}]);
        assert!(matches!(with(deep, "Fail").matches(&a), Match::Refused(m) if m.contains("more than 256 operators")));
        let chain = json!([{"name": "chain", "expression": vec!["1"; 300].join("+") + " > 0"}]);
        assert!(matches!(with(chain, "Fail").matches(&a), Match::Refused(m) if m.contains("more than 256 operators")));
        let long = json!([{"name": "long", "expression": format!("'{}' != ''", "x".repeat(5000))}]);
        assert!(matches!(with(long, "Fail").matches(&a), Match::Refused(m) if m.contains("longer than 4096")));
        let nested_in_text = json!([{"name": "text", "expression": format!("'{}' != ''", "(".repeat(100))}]);
        assert_eq!(with(nested_in_text, "Fail").matches(&a), Match::Yes, "brackets in a string literal");
        let at_bound = json!([{"name": "bound", "expression": format!("{}true{}", "(".repeat(64), ")".repeat(64))}]);
        assert_eq!(with(at_bound, "Fail").matches(&a), Match::Yes);
        let chain = json!([{"name": "chain", "expression": vec!["1"; 255].join("+") + " > 0"}]);
        assert_eq!(with(chain, "Fail").matches(&a), Match::Yes, "a chain at the bound");
        let authorizer =
            json!([{"name": "a", "expression": "authorizer.group('').resource('pods').check('get').allowed()"}]);
        assert!(matches!(with(authorizer, "Fail").matches(&a), Match::Refused(_)), "authorizer is not bound");
    }

    #[test]
    fn reviews_carry_kubes_request_fields() {
        let user =
            UserInfo { name: "alice".into(), uid: "u-1".into(), groups: vec!["devs".into()], ..UserInfo::default() };
        let object = json!({"metadata": {"name": "one"}});
        let mut a = attrs(&user, &object, None);
        a.dry_run = true;
        a.subresource = "status";
        let review = review(&a, "abc", "v1");
        assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
        let r = &review["request"];
        assert_eq!(r["uid"], "abc");
        assert_eq!(r["kind"], json!({"group": "", "version": "v1", "kind": "ConfigMap"}));
        assert_eq!(r["resource"], json!({"group": "", "version": "v1", "resource": "configmaps"}));
        assert_eq!(r["requestKind"], r["kind"]);
        assert_eq!(r["subResource"], "status");
        assert_eq!(r["requestSubResource"], "status");
        assert_eq!(
            (r["name"].as_str(), r["namespace"].as_str(), r["operation"].as_str()),
            (Some("one"), Some("default"), Some("CREATE"))
        );
        assert_eq!(r["userInfo"], json!({"username": "alice", "uid": "u-1", "groups": ["devs"]}));
        assert_eq!(r["object"], object);
        assert_eq!(r["oldObject"], Value::Null);
        assert_eq!(r["dryRun"], true);
        assert_eq!(r["options"]["kind"], "CreateOptions");
        assert_eq!(r["options"]["fieldManager"], "kubectl");
        assert_eq!(options("UpdateOptions", true, None, Map::new())["dryRun"], json!(["All"]));
    }

    fn answer(response: Value) -> Vec<u8> {
        serde_json::to_vec(
            &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
        )
        .unwrap()
    }

    #[test]
    fn answers_are_checked_as_kube_checks_them() {
        use base64::Engine;
        let ok =
            read_answer(&answer(json!({"uid": "u", "allowed": true, "warnings": ["w1"]})), "u", false, "v1").unwrap();
        assert!(ok.allowed);
        assert_eq!(ok.warnings, ["w1"]);
        let e = read_answer(&answer(json!({"uid": "other", "allowed": true})), "u", false, "v1").unwrap_err();
        assert_eq!(e, "received invalid webhook response: expected response.uid=\"u\", got \"other\"");
        let e = read_answer(b"{\"apiVersion\":\"admission.k8s.io/v1\"}", "u", false, "v1").unwrap_err();
        assert!(e.ends_with("webhook response was absent"), "{e}");
        let patch = base64::engine::general_purpose::STANDARD.encode(b"[]");
        let e =
            read_answer(&answer(json!({"uid": "u", "allowed": true, "patch": patch})), "u", false, "v1").unwrap_err();
        assert!(e.ends_with("validating webhook may not return response.patch"), "{e}");
        let e =
            read_answer(&answer(json!({"uid": "u", "allowed": true, "patch": patch})), "u", true, "v1").unwrap_err();
        assert!(e.ends_with("webhook returned response.patch but not response.patchType"), "{e}");
        let m = read_answer(
            &answer(json!({"uid": "u", "allowed": true, "patch": patch, "patchType": "JSONPatch"})),
            "u",
            true,
            "v1",
        )
        .unwrap();
        assert_eq!(m.patch.as_deref(), Some(&b"[]"[..]));
        // v1beta1 answers are not checked for uid or kind.
        let beta = serde_json::to_vec(&json!({"response": {"allowed": false}})).unwrap();
        assert!(!read_answer(&beta, "u", false, "v1beta1").unwrap().allowed);
        assert!(read_answer(b"not json", "u", false, "v1").is_err());
    }

    #[test]
    fn patches_apply_and_report_changes() {
        let mut object = json!({"metadata": {"name": "one"}, "data": {"a": "1"}});
        let add = br#"[{"op":"add","path":"/data/b","value":"2"}]"#;
        assert_eq!(apply_patch(&mut object, add), Ok(true));
        assert_eq!(object["data"]["b"], "2");
        let same = br#"[{"op":"replace","path":"/data/b","value":"2"}]"#;
        assert_eq!(apply_patch(&mut object, same), Ok(false));
        assert!(matches!(apply_patch(&mut object, b"{"), Err(PatchFailure::Undecodable(_))));
        let missing = br#"[{"op":"remove","path":"/spec/x"}]"#;
        assert!(matches!(apply_patch(&mut object, missing), Err(PatchFailure::DoesNotApply(_))));
        assert_eq!(object["data"]["b"], "2", "a failed patch leaves the object");
        let replace_root = br#"[{"op":"replace","path":"","value":3}]"#;
        assert!(matches!(apply_patch(&mut object, replace_root), Err(PatchFailure::DoesNotApply(_))));
    }

    #[test]
    fn denials_and_failures_are_worded_as_kube() {
        let d = denial("deny.example.com", Some(&json!({"code": 403, "reason": "Forbidden", "message": "no way"})));
        assert_eq!((d.code, d.reason.as_str()), (403, "Forbidden"));
        assert_eq!(d.message, "admission webhook \"deny.example.com\" denied the request: no way");
        let d = denial("deny.example.com", Some(&json!({"code": 200, "reason": "NotAllowed"})));
        assert_eq!(d.code, 400, "a rejection is at least 400");
        assert_eq!(d.message, "admission webhook \"deny.example.com\" denied the request: NotAllowed");
        let d = denial("deny.example.com", None);
        assert_eq!(d.message, "admission webhook \"deny.example.com\" denied the request without explanation");
        assert_eq!(
            calling_error("w", "failed to call webhook: x"),
            "failed calling webhook \"w\": failed to call webhook: x"
        );
        assert_eq!(dry_run_unsupported("w"), "admission webhook \"w\" does not support dry run");
        let mut w = webhook(json!({}));
        assert_eq!(dry_run_allowed(&w), Ok(()));
        w.side_effects = "Unknown".into();
        assert_eq!(dry_run_allowed(&w), Err(false));
        w.side_effects = String::new();
        assert_eq!(dry_run_allowed(&w), Err(true));
    }

    #[test]
    fn request_urls_carry_the_timeout() {
        let w = webhook(json!({"timeoutSeconds": 5}));
        assert_eq!(request_url(&w).unwrap(), "https://127.0.0.1:9443/validate?timeout=5s");
        let s = webhook(json!({"clientConfig": {"service": {"namespace": "ns", "name": "hook", "path": "/m"}}}));
        assert_eq!(request_url(&s).unwrap(), "https://hook.ns.svc:443/m?timeout=10s");
    }
}
