//! ValidatingAdmissionPolicy (kube's plugin of that name,
//! `k8s.io/apiserver/pkg/admission/plugin/policy/validating`): the stored
//! policies and their bindings, which of them a request matches, and their
//! CEL validations evaluated with the `cel` crate over `object`,
//! `oldObject`, `request`, `params`, `namespaceObject` and `variables`,
//! turned into kube's decisions and words:
//! - a policy matches by its `matchConstraints` (resource rules with
//!   resourceNames, excludeResourceRules, namespace and object selectors), a
//!   binding further by its own `matchResources`, and both by the policy's
//!   `matchConditions`;
//! - a validation that is not true denies with its `messageExpression`'s
//!   string (trimmed, one line, at most 5,000 bytes), else its `message`,
//!   else `failed expression: EXPR`, and its `reason` (default `Invalid`);
//! - an evaluation error (`expression 'EXPR' resulted in error: ...`), a
//!   missing param (`no params found for policy binding with `Deny`
//!   parameterNotFoundAction`) or a policy that names no params' kind
//!   denies under `failurePolicy: Fail` (the default), is ignored under
//!   `Ignore`;
//! - each denial counts per the binding's `validationActions`: `Deny`
//!   refuses the request (the first denial: `ValidatingAdmissionPolicy 'P'
//!   with binding 'B' denied request: MESSAGE`), `Warn` adds kube's warning,
//!   `Audit` is not acted on (there is no audit log).
//!
//! Not as kube: expressions are not type-checked (a policy whose
//! expressions do not compile is refused at create only for syntax errors,
//! `validate/others/cel.rs`); there is no `authorizer` variable and no cost
//! budget (the bounds of `strategy::cel` hold instead); the CEL library is
//! the `cel` crate's standard one, without Kubernetes' extension functions
//! (quantity, url, regex extensions), so an expression using one is an
//! evaluation error; `matchPolicy: Equivalent` is `Exact` (one version per
//! resource); auditAnnotations are not evaluated.
//!
//! Invariant: no I/O; the params objects and the namespace are given by the
//! caller (`api/handlers/webhooks.rs`); expressions run past
//! `strategy::cel`'s bounds never reach the crate.

use super::webhook::{
    labels_of, parse_rule, rule_matches, selector_is_empty, selector_matches, to_cel, Attributes, Rule,
};
use crate::strategy::cel::{expression_shape, CelLimits};
use serde_json::{json, Map, Value};

/// kube's `celconfig.MaxEvaluatedMessageExpressionSizeBytes`.
const MESSAGE_BYTES_MAX: usize = 5 * 1024;

/// A resource rule with the names it is limited to (none: any name).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedRule {
    pub rule: Rule,
    pub resource_names: Vec<String>,
}

/// `matchConstraints` / `matchResources`.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchResources {
    pub namespace_selector: Value,
    pub object_selector: Value,
    pub resource_rules: Vec<NamedRule>,
    pub exclude_resource_rules: Vec<NamedRule>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    pub expression: String,
    pub message: String,
    pub message_expression: Option<String>,
    pub reason: Option<String>,
}

/// One stored ValidatingAdmissionPolicy.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub name: String,
    pub ignore_failures: bool,
    /// `paramKind`: apiVersion and kind.
    pub param_kind: Option<(String, String)>,
    pub match_constraints: Option<MatchResources>,
    pub match_conditions: Vec<(String, String)>,
    pub variables: Vec<(String, String)>,
    pub validations: Vec<Validation>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamRef {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub selector: Option<Value>,
    /// `parameterNotFoundAction: Deny` (else `Allow`).
    pub deny_when_missing: bool,
}

/// One stored ValidatingAdmissionPolicyBinding.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub name: String,
    pub policy_name: String,
    pub param_ref: Option<ParamRef>,
    pub match_resources: Option<MatchResources>,
    pub actions: Vec<String>,
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect()).unwrap_or_default()
}

fn named_rules(value: &Value) -> Vec<NamedRule> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| NamedRule { rule: parse_rule(r), resource_names: strings(&r["resourceNames"]) })
        .collect()
}

fn match_resources(value: &Value) -> Option<MatchResources> {
    let value = value.as_object()?;
    let selector = |field: &str| value.get(field).filter(|s| s.is_object()).cloned().unwrap_or_else(|| json!({}));
    Some(MatchResources {
        namespace_selector: selector("namespaceSelector"),
        object_selector: selector("objectSelector"),
        resource_rules: named_rules(value.get("resourceRules").unwrap_or(&Value::Null)),
        exclude_resource_rules: named_rules(value.get("excludeResourceRules").unwrap_or(&Value::Null)),
    })
}

fn pairs(value: &Value, key: &str, value_key: &str) -> Vec<(String, String)> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (c[key].as_str().unwrap_or("").to_string(), c[value_key].as_str().unwrap_or("").to_string()))
        .collect()
}

pub fn parse_policy(name: &str, object: &Value) -> Policy {
    let spec = &object["spec"];
    Policy {
        name: name.to_string(),
        ignore_failures: spec["failurePolicy"].as_str() == Some("Ignore"),
        param_kind: spec.get("paramKind").filter(|p| p.is_object()).map(|p| {
            (p["apiVersion"].as_str().unwrap_or("").to_string(), p["kind"].as_str().unwrap_or("").to_string())
        }),
        match_constraints: match_resources(&spec["matchConstraints"]),
        match_conditions: pairs(&spec["matchConditions"], "name", "expression"),
        variables: pairs(&spec["variables"], "name", "expression"),
        validations: spec["validations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| Validation {
                expression: v["expression"].as_str().unwrap_or("").to_string(),
                message: v["message"].as_str().unwrap_or("").to_string(),
                message_expression: v["messageExpression"].as_str().filter(|m| !m.is_empty()).map(String::from),
                reason: v["reason"].as_str().filter(|r| !r.is_empty()).map(String::from),
            })
            .collect(),
    }
}

pub fn parse_binding(name: &str, object: &Value) -> Binding {
    let spec = &object["spec"];
    Binding {
        name: name.to_string(),
        policy_name: spec["policyName"].as_str().unwrap_or("").to_string(),
        param_ref: spec.get("paramRef").filter(|p| p.is_object()).map(|p| ParamRef {
            name: p["name"].as_str().filter(|n| !n.is_empty()).map(String::from),
            namespace: p["namespace"].as_str().filter(|n| !n.is_empty()).map(String::from),
            selector: p.get("selector").filter(|s| s.is_object()).cloned(),
            deny_when_missing: p["parameterNotFoundAction"].as_str() != Some("Allow"),
        }),
        match_resources: match_resources(&spec["matchResources"]),
        actions: strings(&spec["validationActions"]),
    }
}

fn rule_and_name_match(rule: &NamedRule, attrs: &Attributes<'_>) -> bool {
    rule_matches(&rule.rule, attrs)
        && (rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == attrs.name))
}

impl MatchResources {
    /// kube's `matching.Matcher`: the namespace and object selectors, then
    /// the rules (an excluded request never matches).
    pub fn matches(&self, attrs: &Attributes<'_>) -> Result<bool, String> {
        if !selector_is_empty(&self.namespace_selector) {
            let is_namespace = attrs.group.is_empty() && attrs.resource == "namespaces";
            if !attrs.namespace.is_empty() || is_namespace {
                let empty = Map::new();
                if !selector_matches(&self.namespace_selector, Some(attrs.namespace_labels.unwrap_or(&empty)))? {
                    return Ok(false);
                }
            }
        }
        if !selector_is_empty(&self.object_selector) {
            let new = attrs.object.and_then(labels_of);
            let old = attrs.old_object.and_then(labels_of);
            let matched = (attrs.object.is_some() && selector_matches(&self.object_selector, new)?)
                || (attrs.old_object.is_some() && selector_matches(&self.object_selector, old)?);
            if !matched {
                return Ok(false);
            }
        }
        if self.exclude_resource_rules.iter().any(|r| rule_and_name_match(r, attrs)) {
            return Ok(false);
        }
        Ok(self.resource_rules.iter().any(|r| rule_and_name_match(r, attrs)))
    }
}

/// Which params a binding asks for, for the caller to read.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamsWanted {
    /// The policy has no `paramKind`: evaluated once, `params` null.
    None,
    /// The object named, in that namespace (empty: cluster-scoped or the
    /// request's, per the kind's scope, for the caller to decide).
    Named { name: String, namespace: Option<String> },
    /// Every object the selector matches (in the namespace, if given).
    Selected { selector: Value, namespace: Option<String> },
    /// A `paramKind` but no usable `paramRef`.
    Misconfigured(String),
}

pub fn params_wanted(policy: &Policy, binding: &Binding) -> ParamsWanted {
    if policy.param_kind.is_none() {
        return ParamsWanted::None;
    }
    match &binding.param_ref {
        None => ParamsWanted::Misconfigured("paramRef is required when policy has paramKind".into()),
        Some(ParamRef { name: Some(name), namespace, .. }) => {
            ParamsWanted::Named { name: name.clone(), namespace: namespace.clone() }
        }
        Some(ParamRef { selector: Some(selector), namespace, .. }) => {
            ParamsWanted::Selected { selector: selector.clone(), namespace: namespace.clone() }
        }
        Some(_) => ParamsWanted::Misconfigured("one of name or selector must be specified".into()),
    }
}

/// What one validation came to (kube's `PolicyDecision`).
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub deny: bool,
    pub message: String,
    /// `Invalid` unless the validation gave another.
    pub reason: String,
}

impl Decision {
    fn denial(message: String, reason: &str) -> Decision {
        Decision { deny: true, message, reason: reason.to_string() }
    }
}

/// The variables an evaluation sees, as JSON.
pub struct Inputs<'a> {
    pub object: &'a Value,
    pub old_object: &'a Value,
    pub request: &'a Value,
    pub params: &'a Value,
    pub namespace_object: &'a Value,
}

/// kube's `CreateAdmissionRequest` as CEL's `request`.
pub fn request_variable(attrs: &Attributes<'_>) -> Value {
    super::webhook::cel_request(attrs)
}

/// kube's `CreateNamespaceObject`: the namespace's name, labels,
/// annotations, uid and creation time, its spec and status.
pub fn namespace_variable(namespace: Option<&Value>) -> Value {
    let Some(ns) = namespace else { return Value::Null };
    let meta = &ns["metadata"];
    let mut m = Map::new();
    for key in ["name", "generateName", "namespace", "labels", "annotations", "uid", "creationTimestamp"] {
        if let Some(v) = meta.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    json!({"metadata": m, "spec": ns.get("spec").cloned().unwrap_or(json!({})), "status": ns.get("status").cloned().unwrap_or(json!({}))})
}

/// The policy's decisions for one set of params: the match conditions
/// (false: no decision), then each validation. A failure to evaluate is a
/// denial under `Fail` and nothing under `Ignore`.
pub fn evaluate(policy: &Policy, inputs: &Inputs<'_>, limits: &CelLimits) -> Vec<Decision> {
    let mut expressions: Vec<&str> = Vec::new();
    expressions.extend(policy.variables.iter().map(|(_, e)| e.as_str()));
    expressions.extend(policy.match_conditions.iter().map(|(_, e)| e.as_str()));
    expressions.extend(policy.validations.iter().map(|v| v.expression.as_str()));
    expressions.extend(policy.validations.iter().filter_map(|v| v.message_expression.as_deref()));
    for e in &expressions {
        if let Err(why) = expression_shape(e, limits) {
            return error_decision(policy, format!("expression '{e}' resulted in error: {why}"));
        }
    }
    let policy_owned = policy.clone();
    let values =
        [inputs.object, inputs.old_object, inputs.request, inputs.params, inputs.namespace_object].map(|v| v.clone());
    // On a thread of its own: the interpreter's recursion gets a known stack.
    let run = std::thread::Builder::new()
        .name("cel-policy".into())
        .stack_size(limits.stack_bytes)
        .spawn(move || run(&policy_owned, &values))
        .map_err(|e| e.to_string())
        .and_then(|h| h.join().map_err(|_| "the CEL interpreter failed".to_string()));
    match run {
        Ok(decisions) => decisions,
        Err(e) => error_decision(policy, e),
    }
}

fn error_decision(policy: &Policy, message: String) -> Vec<Decision> {
    if policy.ignore_failures {
        Vec::new()
    } else {
        vec![Decision::denial(message, "")]
    }
}

fn run(policy: &Policy, values: &[Value; 5]) -> Vec<Decision> {
    let mut context = cel::Context::default();
    for (name, value) in ["object", "oldObject", "request", "params", "namespaceObject"].iter().zip(values) {
        context.add_variable_from_value(*name, to_cel(value));
    }
    let evaluate = |context: &cel::Context, expression: &str| -> Result<cel::Value, String> {
        let program = cel::Program::compile(expression).map_err(|e| format!("compilation failed: {e}"))?;
        program.execute(context).map_err(|e| format!("expression '{expression}' resulted in error: {e}"))
    };
    // Variables, in order, each seeing those before it (kube evaluates them
    // lazily; an unused one that fails is then an error here too).
    let mut variables: std::collections::HashMap<cel::objects::Key, cel::Value> = Default::default();
    for (name, expression) in &policy.variables {
        context.add_variable_from_value(
            "variables",
            cel::Value::Map(cel::objects::Map { map: std::sync::Arc::new(variables.clone()) }),
        );
        match evaluate(&context, expression) {
            Ok(value) => {
                variables.insert(cel::objects::Key::String(std::sync::Arc::new(name.clone())), value);
            }
            Err(e) => return error_decision(policy, e),
        }
    }
    context.add_variable_from_value(
        "variables",
        cel::Value::Map(cel::objects::Map { map: std::sync::Arc::new(variables) }),
    );
    // Match conditions: any false, no decision; an error, the failure policy.
    let mut condition_errors = Vec::new();
    for (_, expression) in &policy.match_conditions {
        match evaluate(&context, expression) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => return Vec::new(),
            Ok(_) => condition_errors.push(format!("expression '{expression}' resulted in a non-bool")),
            Err(e) => condition_errors.push(e),
        }
    }
    if !condition_errors.is_empty() {
        let message = if condition_errors.len() == 1 {
            condition_errors.remove(0)
        } else {
            format!("[{}]", condition_errors.join(", "))
        };
        return error_decision(policy, message);
    }
    let mut decisions = Vec::new();
    for v in &policy.validations {
        match evaluate(&context, &v.expression) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(_) => {
                let from_expression = v.message_expression.as_deref().and_then(|m| match evaluate(&context, m) {
                    Ok(cel::Value::String(s)) => {
                        let s = s.trim();
                        (!s.is_empty() && s.len() <= MESSAGE_BYTES_MAX && !s.contains('\n')).then(|| s.to_string())
                    }
                    _ => None,
                });
                let message = from_expression
                    .or_else(|| (!v.message.trim().is_empty()).then(|| v.message.trim().to_string()))
                    .unwrap_or_else(|| format!("failed expression: {}", v.expression.trim()));
                decisions.push(Decision::denial(message, v.reason.as_deref().unwrap_or("Invalid")));
            }
            Err(_) if policy.ignore_failures => {}
            Err(e) => decisions.push(Decision::denial(e, "")),
        }
    }
    decisions
}

/// kube's denial message for the request.
pub fn denial_message(policy: &str, binding: &str, message: &str) -> String {
    format!("ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {message}")
}

/// kube's warning for a `Warn` action.
pub fn warning(policy: &str, binding: &str, message: &str) -> String {
    format!("Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': {message}")
}

/// kube's `reasonToCode` (an unknown reason is 422).
pub fn reason_code(reason: &str) -> u16 {
    match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::admission::webhook::Operation;

    fn attrs<'a>(object: &'a Value, user: &'a crate::auth::UserInfo) -> Attributes<'a> {
        Attributes {
            operation: Operation::Create,
            group: "apps",
            version: "v1",
            kind: "Deployment",
            resource: "deployments",
            subresource: "",
            namespace: "default",
            name: "web",
            object: Some(object),
            old_object: None,
            namespace_labels: None,
            dry_run: false,
            user,
            options: json!({}),
            cel: CelLimits::default(),
        }
    }

    fn policy(spec: Value) -> Policy {
        parse_policy("replicas", &json!({"spec": spec}))
    }

    #[test]
    fn constraints_match_rules_names_and_exclusions() {
        let user = crate::auth::UserInfo::default();
        let object = json!({"metadata": {"name": "web", "labels": {"tier": "x"}}, "spec": {"replicas": 9}});
        let a = attrs(&object, &user);
        let rules = json!([{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]);
        let m = match_resources(&json!({"resourceRules": rules})).unwrap();
        assert!(m.matches(&a).unwrap());
        let named = match_resources(&json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["*"], "resources": ["deployments"], "resourceNames": ["other"]}]})).unwrap();
        assert!(!named.matches(&a).unwrap());
        let excluded = match_resources(&json!({"resourceRules": rules, "excludeResourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"], "resourceNames": ["web"]}]})).unwrap();
        assert!(!excluded.matches(&a).unwrap());
        let selected =
            match_resources(&json!({"resourceRules": rules, "objectSelector": {"matchLabels": {"tier": "y"}}}))
                .unwrap();
        assert!(!selected.matches(&a).unwrap());
    }

    #[test]
    fn validations_decide_with_kubes_messages() {
        let object = json!({"metadata": {"name": "web"}, "spec": {"replicas": 9}});
        let null = Value::Null;
        let inputs = Inputs {
            object: &object,
            old_object: &null,
            request: &json!({"operation": "CREATE"}),
            params: &json!({"max": 5}),
            namespace_object: &null,
        };
        let limits = CelLimits::default();
        let p = policy(json!({"validations": [
            {"expression": "object.spec.replicas <= params.max"},
            {"expression": "object.spec.replicas < 3", "message": " too many "},
            {"expression": "object.spec.replicas < 2", "messageExpression": "'replicas: ' + string(object.spec.replicas)", "reason": "Forbidden"},
            {"expression": "object.spec.replicas > 0"},
        ]}));
        let decisions = evaluate(&p, &inputs, &limits);
        assert_eq!(
            decisions,
            vec![
                Decision::denial("failed expression: object.spec.replicas <= params.max".into(), "Invalid"),
                Decision::denial("too many".into(), "Invalid"),
                Decision::denial("replicas: 9".into(), "Forbidden"),
            ]
        );
        // Variables see those before them; a false match condition decides nothing.
        let p = policy(json!({
            "variables": [{"name": "r", "expression": "object.spec.replicas"}, {"name": "twice", "expression": "variables.r * 2"}],
            "validations": [{"expression": "variables.twice == 18"}],
        }));
        assert_eq!(evaluate(&p, &inputs, &limits), vec![]);
        let p = policy(
            json!({"matchConditions": [{"name": "never", "expression": "false"}], "validations": [{"expression": "false"}]}),
        );
        assert_eq!(evaluate(&p, &inputs, &limits), vec![]);
        // An evaluation error: denied under Fail, nothing under Ignore.
        let p = policy(json!({"validations": [{"expression": "object.spec.missing == 1"}]}));
        let d = evaluate(&p, &inputs, &limits);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].message.starts_with("expression 'object.spec.missing == 1' resulted in error: "),
            "{}",
            d[0].message
        );
        let p = policy(json!({"failurePolicy": "Ignore", "validations": [{"expression": "object.spec.missing == 1"}]}));
        assert_eq!(evaluate(&p, &inputs, &limits), vec![]);
        assert_eq!(
            denial_message("replicas", "replicas-binding", "too many"),
            "ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: too many"
        );
    }
}
