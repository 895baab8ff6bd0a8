//! Validation of the admission policies and their bindings
//! (ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
//! MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding) with
//! kube-apiserver v1.36's words
//! (`pkg/apis/admissionregistration/validation/validation.go`): failure
//! policy, paramKind (apiVersion and kind), match constraints (match policy,
//! selectors, named rules with operations, resource names), match
//! conditions, variables, validations, audit annotations, mutations and
//! reinvocation policy; a binding's policy name, paramRef (name or
//! selector, parameterNotFoundAction), match resources and validation
//! actions.
//!
//! Compared with kube's source at kubernetes/kubernetes afd5df58 (v1.31-era)
//! and unnati2401/kubernetes a5e8298a (a v1.37 development copy): the words
//! are those after kube PR 132513 (v1.34, "must be a valid CEL identifier",
//! "must be non-empty if specified"), the object selector's errors are at
//! `objectSelector` and a binding's at `matchResources`, a validation's
//! reason is Forbidden, Invalid or RequestEntityTooLarge, a mutating policy
//! or binding may match only `*`, CONNECT, CREATE and UPDATE.
//!
//! CEL is parsed, not compiled (`cel.rs`): an expression, message
//! expression, match condition, variable, audit annotation value or mutation
//! that does not parse is refused at kube's path with kube's type and prefix
//! (`compilation failed: `) and the parser's report after it; one that parses
//! but kube's type checker refuses (an undeclared name, a wrong type, a
//! paramKind mismatch, the cost limit) is stored.
//!
//! Invariant: no input panics; a mistyped field reads as absent. Runs after
//! defaulting (failurePolicy, matchPolicy, selectors, reinvocationPolicy and
//! parameterNotFoundAction are normally present).

use super::admissionregistration::rule_with_operations;
use super::cel;
use super::common::*;
use crate::types::validation::{self, go_quote, FieldError};
use serde_json::Value;

/// `maxAuditAnnotations`, `maxAuditAnnotationValueExpressionLength`,
/// the match conditions' bound.
const AUDIT_ANNOTATIONS_MAX: usize = 20;
const AUDIT_VALUE_EXPRESSION_MAX_LEN: usize = 5 * 1024;
const MATCH_CONDITIONS_MAX: usize = 64;

const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

fn name_of(object: &Fields) -> &str {
    object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("")
}

fn qualified_name(value: &str, field: &str) -> Vec<FieldError> {
    validation::is_qualified_name(value).iter().map(|m| FieldError::invalid(field, value, m)).collect()
}

/// The failure policy (`Fail` or `Ignore`, required).
fn failure_policy(spec: &Fields) -> Vec<FieldError> {
    match spec.get("failurePolicy").and_then(Value::as_str) {
        None => vec![FieldError::required("spec.failurePolicy", "")],
        Some(p) if !["Fail", "Ignore"].contains(&p) => {
            vec![not_supported("spec.failurePolicy", p, &["Fail", "Ignore"])]
        }
        Some(_) => Vec::new(),
    }
}

/// `validateParamKind`.
fn param_kind(kind: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let api_version = text(kind, "apiVersion");
    let field = "spec.paramKind.apiVersion";
    if api_version.is_empty() {
        errs.push(FieldError::required(field, ""));
    } else if api_version.matches('/').count() > 1 {
        errs.push(FieldError::invalid(field, api_version, &format!("unexpected GroupVersion string: {api_version}")));
    } else {
        let (group, version) = match api_version.split_once('/') {
            _ if api_version == "/" => ("", ""),
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        if !group.is_empty() {
            let messages = validation::is_dns1123_subdomain(group);
            if !messages.is_empty() {
                errs.push(FieldError::invalid(field, group, &messages.join(",")));
            }
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(field, api_version, "version must be specified"));
        } else {
            let messages = validation::is_dns1035_label(version);
            if !messages.is_empty() {
                errs.push(FieldError::invalid(field, version, &messages.join(",")));
            }
        }
    }
    let kind_name = text(kind, "kind");
    if kind_name.is_empty() {
        errs.push(FieldError::required("spec.paramKind.kind", ""));
    } else {
        let messages = validation::is_dns1035_label(&kind_name.to_lowercase());
        if !messages.is_empty() {
            errs.push(FieldError::invalid(
                "spec.paramKind.kind",
                kind_name,
                &format!("may have mixed case, but should otherwise match: {}", messages.join(",")),
            ));
        }
    }
    errs
}

/// `validateMatchResources` at `path`.
fn match_resources(resources: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match resources.get("matchPolicy").and_then(Value::as_str) {
        None => errs.push(FieldError::required(&format!("{path}.matchPolicy"), "")),
        Some(p) if !["Equivalent", "Exact"].contains(&p) => {
            errs.push(not_supported(&format!("{path}.matchPolicy"), p, &["Equivalent", "Exact"]));
        }
        Some(_) => {}
    }
    match obj(resources, "namespaceSelector") {
        None => errs.push(FieldError::required(&format!("{path}.namespaceSelector"), "")),
        Some(selector) => errs.extend(validate_label_selector(selector, &format!("{path}.namespaceSelector"))),
    }
    match obj(resources, "objectSelector") {
        None => errs.push(FieldError::required(&format!("{path}.objectSelector"), "")),
        Some(selector) => errs.extend(validate_label_selector(selector, &format!("{path}.objectSelector"))),
    }
    let empty = Fields::new();
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in list(resources, key).iter().enumerate() {
            let rule = rule.as_object().unwrap_or(&empty);
            let at = format!("{path}.{key}[{i}]");
            let mut names: Vec<&str> = Vec::new();
            for (j, name) in strings(rule, "resourceNames").into_iter().enumerate() {
                let field = format!("{at}.resourceNames[{j}]");
                for message in validation::is_valid_path_segment_name(name) {
                    errs.push(FieldError::invalid(&field, name, &message));
                }
                if names.contains(&name) {
                    errs.push(FieldError::duplicate(&field, name));
                } else {
                    names.push(name);
                }
            }
            errs.extend(rule_with_operations(rule, &at));
        }
    }
    errs
}

/// The policy's matchConstraints: required, with at least one resource rule.
fn match_constraints(spec: &Fields) -> Vec<FieldError> {
    match obj(spec, "matchConstraints") {
        None => vec![FieldError::required("spec.matchConstraints", "")],
        Some(constraints) => {
            let mut errs = match_resources(constraints, "spec.matchConstraints");
            if list(constraints, "resourceRules").is_empty() {
                errs.push(FieldError::required("spec.matchConstraints.resourceRules", ""));
            }
            errs
        }
    }
}

/// `validateMatchConditions`: named (qualified names, once) with an expression.
fn match_conditions(spec: &Fields) -> Vec<FieldError> {
    let conditions = list(spec, "matchConditions");
    let mut errs = Vec::new();
    if conditions.len() > MATCH_CONDITIONS_MAX {
        errs.push(FieldError::too_many("spec.matchConditions", conditions.len(), MATCH_CONDITIONS_MAX));
    }
    let empty = Fields::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let condition = condition.as_object().unwrap_or(&empty);
        let at = format!("spec.matchConditions[{i}]");
        let expression = text(condition, "expression").trim();
        if expression.is_empty() {
            errs.push(FieldError::required(&format!("{at}.expression"), ""));
        } else {
            // kube compiles the trimmed expression.
            errs.extend(cel::check(expression, &format!("{at}.expression")));
        }
        let name = text(condition, "name");
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{at}.name"), ""));
        } else {
            errs.extend(qualified_name(name, &format!("{at}.name")));
            if names.contains(&name) {
                errs.push(FieldError::duplicate(&format!("{at}.name"), name));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !CEL_RESERVED.contains(&name)
}

/// `validateVariable`: a CEL identifier and an expression.
fn variables(spec: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Fields::new();
    for (i, variable) in list(spec, "variables").iter().enumerate() {
        let variable = variable.as_object().unwrap_or(&empty);
        let at = format!("spec.variables[{i}]");
        let name = text(variable, "name");
        if name.trim().is_empty() {
            errs.push(FieldError::required(&format!("{at}.name"), "name is not specified"));
        } else if !is_cel_identifier(name) {
            errs.push(FieldError::invalid(&format!("{at}.name"), name, "must be a valid CEL identifier"));
        }
        let expression = text(variable, "expression");
        if expression.trim().is_empty() {
            errs.push(FieldError::required(&format!("{at}.expression"), "expression is not specified"));
        } else {
            errs.extend(cel::check(expression, &format!("{at}.expression")));
        }
    }
    errs
}

/// `validateValidation`.
fn validation_rule(rule: &Fields, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let expression = text(rule, "expression");
    if expression.trim().is_empty() {
        errs.push(FieldError::required(&format!("{at}.expression"), "expression is not specified"));
    } else {
        // kube compiles the expression as written (columns count from it).
        errs.extend(cel::check(expression, &format!("{at}.expression")));
    }
    let message_expression = text(rule, "messageExpression");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errs.push(FieldError::invalid(
            &format!("{at}.messageExpression"),
            message_expression,
            "must be non-empty if specified",
        ));
    } else if !message_expression.is_empty() {
        errs.extend(cel::check(message_expression, &format!("{at}.messageExpression")));
    }
    let message = text(rule, "message");
    let trimmed = message.trim();
    if !message.is_empty() && trimmed.is_empty() {
        errs.push(FieldError::invalid(&format!("{at}.message"), message, "must be non-empty if specified"));
    } else if trimmed.contains(['\n', '\r']) {
        errs.push(FieldError::invalid(&format!("{at}.message"), message, "must not contain line breaks"));
    }
    // `supportedValidationPolicyReason` (Unauthorized is not one).
    const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
    if let Some(reason) = rule.get("reason").and_then(Value::as_str).filter(|r| !REASONS.contains(r)) {
        errs.push(not_supported(&format!("{at}.reason"), reason, REASONS));
    }
    errs
}

/// What kube checks alike in a validating and a mutating policy's spec:
/// failure policy, paramKind, match constraints (a mutating policy's only
/// with operations it can mutate) and conditions, variables.
fn policy_spec_common(spec: &Fields, mutating: bool) -> Vec<FieldError> {
    let mut errs = failure_policy(spec);
    if let Some(kind) = obj(spec, "paramKind") {
        errs.extend(param_kind(kind));
    }
    errs.extend(match_constraints(spec));
    if let Some(constraints) = obj(spec, "matchConstraints").filter(|_| mutating) {
        errs.extend(mutating_operations(constraints, "spec.matchConstraints"));
    }
    errs.extend(match_conditions(spec));
    errs.extend(variables(spec));
    errs
}

pub fn validating_admission_policy(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = policy_spec_common(spec, false);
    let (validations, audits) = (list(spec, "validations"), list(spec, "auditAnnotations"));
    if validations.is_empty() && audits.is_empty() {
        const ONE: &str = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required("spec.validations", ONE));
        errs.push(FieldError::required("spec.auditAnnotations", ONE));
        return errs;
    }
    for (i, rule) in validations.iter().enumerate() {
        errs.extend(validation_rule(rule.as_object().unwrap_or(&empty), &format!("spec.validations[{i}]")));
    }
    if audits.len() > AUDIT_ANNOTATIONS_MAX {
        // kube prints the whole list (`%#v` of the internal type).
        let items: Vec<String> = audits
            .iter()
            .map(|a| {
                let a = a.as_object().unwrap_or(&empty);
                format!(
                    "admissionregistration.AuditAnnotation{{Key:{}, ValueExpression:{}}}",
                    go_quote(text(a, "key")),
                    go_quote(text(a, "valueExpression"))
                )
            })
            .collect();
        errs.push(FieldError::invalid_bare(
            "spec.auditAnnotations",
            &format!("[]admissionregistration.AuditAnnotation{{{}}}", items.join(", ")),
            &format!("must not have more than {AUDIT_ANNOTATIONS_MAX} auditAnnotations"),
        ));
    }
    let name = name_of(object);
    let mut keys: Vec<&str> = Vec::new();
    for (i, audit) in audits.iter().enumerate() {
        let audit = audit.as_object().unwrap_or(&empty);
        let at = format!("spec.auditAnnotations[{i}]");
        let key = text(audit, "key");
        if name.is_empty() {
            errs.push(FieldError::invalid(&format!("{at}.key"), key, "requires metadata.name be non-empty"));
        } else {
            errs.extend(qualified_name(&format!("{name}/{key}"), &format!("{at}.key")));
        }
        let written = text(audit, "valueExpression");
        let value = written.trim();
        if value.is_empty() {
            errs.push(FieldError::required(&format!("{at}.valueExpression"), "valueExpression is not specified"));
        } else if value.len() > AUDIT_VALUE_EXPRESSION_MAX_LEN {
            errs.push(FieldError::required(
                &format!("{at}.valueExpression"),
                &format!("must not exceed {AUDIT_VALUE_EXPRESSION_MAX_LEN} bytes in length"),
            ));
        } else if let Some(report) = cel::syntax_error(value) {
            // kube compiles the trimmed expression but prints it as written.
            errs.push(FieldError::invalid(
                &format!("{at}.valueExpression"),
                written,
                &format!("compilation failed: {report}"),
            ));
        }
        if keys.contains(&key) {
            errs.push(FieldError::duplicate(&format!("{at}.key"), key));
        }
        keys.push(key);
    }
    errs
}

pub fn mutating_admission_policy(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = policy_spec_common(spec, true);
    let mutations = list(spec, "mutations");
    if mutations.is_empty() {
        errs.push(FieldError::required("spec.mutations", "mutations must contain at least one item"));
    }
    for (i, mutation) in mutations.iter().enumerate() {
        let mutation = mutation.as_object().unwrap_or(&empty);
        let at = format!("spec.mutations[{i}]");
        let present = |k: &str| mutation.get(k).is_some_and(|v| !v.is_null());
        let kind = text(mutation, "patchType");
        let (own, other) = match kind {
            "ApplyConfiguration" => ("applyConfiguration", "jsonPatch"),
            "JSONPatch" => ("jsonPatch", "applyConfiguration"),
            "" => {
                errs.push(FieldError::required(&format!("{at}.patchType"), ""));
                continue;
            }
            _ => {
                errs.push(not_supported(&format!("{at}.patchType"), kind, &["ApplyConfiguration", "JSONPatch"]));
                continue;
            }
        };
        match obj(mutation, own) {
            None => errs.push(FieldError::required(
                &format!("{at}.{own}"),
                &format!("must be specified when patchType is {kind}"),
            )),
            Some(patch) if text(patch, "expression").trim().is_empty() => {
                errs.push(FieldError::required(&format!("{at}.{own}.expression"), ""));
            }
            Some(patch) => errs.extend(cel::check(text(patch, "expression").trim(), &format!("{at}.{own}.expression"))),
        }
        if present(other) {
            // kube's value is the literal text `{jsonPatch}` / `{applyConfiguration}`.
            errs.push(FieldError::invalid(
                &format!("{at}.{other}"),
                &format!("{{{other}}}"),
                &format!("must not be specified when patchType is {kind}"),
            ));
        }
    }
    match spec.get("reinvocationPolicy").and_then(Value::as_str).unwrap_or("") {
        "IfNeeded" | "Never" => {}
        "" => errs.push(FieldError::required("spec.reinvocationPolicy", "")),
        other => errs.push(not_supported("spec.reinvocationPolicy", other, &["IfNeeded", "Never"])),
    }
    errs
}

/// A mutating policy (or binding) matches only operations it can mutate:
/// each operation of each resource rule is one of
/// `supportedMutatingOperations` (kube's path has no index).
fn mutating_operations(resources: &Fields, path: &str) -> Vec<FieldError> {
    const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "UPDATE"];
    let mut errs = Vec::new();
    for rule in list(resources, "resourceRules") {
        for operation in rule.as_object().map(|r| strings(r, "operations")).unwrap_or_default() {
            if !OPERATIONS.contains(&operation) {
                errs.push(not_supported(&format!("{path}.resourceRules.operations"), operation, OPERATIONS));
            }
        }
    }
    errs
}

/// `validateParamRef`.
fn param_ref(reference: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(reference, "name");
    let selector = obj(reference, "selector");
    const EXCLUSIVE: &str = "name and selector are mutually exclusive";
    if !name.is_empty() {
        for message in validation::is_valid_path_segment_name(name) {
            errs.push(FieldError::invalid("spec.paramRef.name", name, &message));
        }
        if selector.is_some() {
            errs.push(FieldError::forbidden("spec.paramRef.name", EXCLUSIVE));
        }
    }
    if let Some(selector) = selector {
        errs.extend(validate_label_selector(selector, "spec.paramRef.selector"));
        if !name.is_empty() {
            errs.push(FieldError::forbidden("spec.paramRef.selector", EXCLUSIVE));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required("spec.paramRef", "one of name or selector must be specified"));
    }
    match reference.get("parameterNotFoundAction").and_then(Value::as_str) {
        None | Some("") => errs.push(FieldError::required("spec.paramRef.parameterNotFoundAction", "")),
        Some("Deny" | "Allow") => {}
        Some(action) => errs.push(not_supported("spec.paramRef.parameterNotFoundAction", action, &["Deny", "Allow"])),
    }
    errs
}

/// The bindings' policy name, paramRef and match resources; `validating`
/// adds the validation actions, a mutating binding the operations it may
/// match.
fn binding(object: &Fields, validating: bool) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    let policy = text(spec, "policyName");
    if policy.is_empty() {
        errs.push(FieldError::required("spec.policyName", ""));
    } else {
        for message in validation::is_dns1123_subdomain(policy) {
            errs.push(FieldError::invalid("spec.policyName", policy, &message));
        }
    }
    if let Some(reference) = obj(spec, "paramRef") {
        errs.extend(param_ref(reference));
    }
    if let Some(resources) = obj(spec, "matchResources") {
        errs.extend(match_resources(resources, "spec.matchResources"));
        if !validating {
            errs.extend(mutating_operations(resources, "spec.matchResources"));
        }
    }
    if validating {
        errs.extend(validation_actions(spec));
    }
    errs
}

/// `validateValidationActions`.
fn validation_actions(spec: &Fields) -> Vec<FieldError> {
    const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
    let actions = strings(spec, "validationActions");
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let field = format!("spec.validationActions[{i}]");
        if !ACTIONS.contains(action) {
            errs.push(not_supported(&field, action, ACTIONS));
        }
        if seen.contains(action) {
            errs.push(FieldError::duplicate(&field, action));
        }
        seen.push(action);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        let rendered: Vec<String> = actions.iter().map(|a| go_quote(a)).collect();
        errs.push(FieldError::invalid_bare(
            "spec.validationActions",
            &format!("[]admissionregistration.ValidationAction{{{}}}", rendered.join(", ")),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required("spec.validationActions", "at least one validation action is required"));
    }
    errs
}

pub fn validating_admission_policy_binding(object: &Fields) -> Vec<FieldError> {
    binding(object, true)
}

pub fn mutating_admission_policy_binding(object: &Fields) -> Vec<FieldError> {
    binding(object, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(f: fn(&Fields) -> Vec<FieldError>, v: Value) -> Vec<String> {
        f(v.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    /// What defaulting leaves in matchConstraints.
    fn constraints() -> Value {
        json!({"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
            "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                "resources": ["deployments"], "scope": "*"}]})
    }

    #[test]
    fn validating_policies() {
        let valid = json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Fail", "matchConstraints": constraints(),
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConditions": [{"name": "not-system", "expression": "true"}],
            "variables": [{"name": "replicas", "expression": "object.spec.replicas"}],
            "validations": [{"expression": "variables.replicas < 5", "reason": "Invalid", "message": "too many"}],
            "auditAnnotations": [{"key": "high-replicas", "valueExpression": "'x'"}]}});
        assert_eq!(check(validating_admission_policy, valid), Vec::<String>::new());
        assert_eq!(
            check(validating_admission_policy, json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Sometimes",
                "paramKind": {"apiVersion": "example.com/v1/x", "kind": ""}}})),
            [
                "spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\"",
                "spec.paramKind.apiVersion: Invalid value: \"example.com/v1/x\": unexpected GroupVersion string: example.com/v1/x",
                "spec.paramKind.kind: Required value",
                "spec.matchConstraints: Required value",
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
                "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
            ]
        );
        let mut rules = constraints();
        rules["resourceRules"][0]["resourceNames"] = json!(["a", "a", "b/c"]);
        rules["resourceRules"][0]["operations"] = json!(["PATCH"]);
        assert_eq!(
            check(validating_admission_policy, json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Fail",
                "matchConstraints": rules, "matchConditions": [{"name": "c", "expression": " "}, {"name": "c", "expression": "true"}],
                "variables": [{"name": "in", "expression": "1"}, {"name": "", "expression": ""}],
                "validations": [{"expression": "", "message": "a\nb", "reason": "Teapot"}],
                "auditAnnotations": [{"key": "bad key", "valueExpression": ""}]}})),
            [
                "spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: \"a\"".to_string(),
                "spec.matchConstraints.resourceRules[0].resourceNames[2]: Invalid value: \"b/c\": may not contain '/'".into(),
                "spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"".into(),
                "spec.matchConditions[0].expression: Required value".into(),
                "spec.matchConditions[1].name: Duplicate value: \"c\"".into(),
                "spec.variables[0].name: Invalid value: \"in\": must be a valid CEL identifier".into(),
                "spec.variables[1].name: Required value: name is not specified".into(),
                "spec.variables[1].expression: Required value: expression is not specified".into(),
                "spec.validations[0].expression: Required value: expression is not specified".into(),
                "spec.validations[0].message: Invalid value: \"a\\nb\": must not contain line breaks".into(),
                "spec.validations[0].reason: Unsupported value: \"Teapot\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\"".into(),
                "spec.auditAnnotations[0].key: Invalid value: \"p/bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into(),
                "spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified".into(),
            ]
        );
        let mut no_rules = constraints();
        no_rules["resourceRules"] = json!([]);
        no_rules.as_object_mut().unwrap().remove("objectSelector");
        assert_eq!(
            check(
                validating_admission_policy,
                json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Ignore",
                "matchConstraints": no_rules, "validations": [{"expression": "true"}]}})
            ),
            [
                "spec.matchConstraints.objectSelector: Required value",
                "spec.matchConstraints.resourceRules: Required value"
            ]
        );
    }

    #[test]
    fn expressions_that_do_not_parse_are_refused_where_kube_refuses_them() {
        let errs = check(
            validating_admission_policy,
            json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Fail",
            "matchConstraints": constraints(), "matchConditions": [{"name": "c", "expression": "  1 +  "}],
            "variables": [{"name": "v", "expression": "a..b"}],
            "validations": [{"expression": "object.x <", "messageExpression": "'a' +"}],
            "auditAnnotations": [{"key": "k", "valueExpression": " ( "}]}}),
        );
        let want = [
            ("spec.matchConditions[0].expression", "\"1 +\""),
            ("spec.variables[0].expression", "\"a..b\""),
            ("spec.validations[0].expression", "\"object.x <\""),
            ("spec.validations[0].messageExpression", "\"'a' +\""),
            ("spec.auditAnnotations[0].valueExpression", "\" ( \""),
        ];
        assert_eq!(errs.len(), want.len(), "{errs:#?}");
        for (err, (field, value)) in errs.iter().zip(want) {
            let prefix = format!("{field}: Invalid value: {value}: compilation failed: ERROR: <input>:1:");
            assert!(err.starts_with(&prefix), "{err} does not start with {prefix}");
        }
        let errs = check(
            mutating_admission_policy,
            json!({"metadata": {"name": "m"}, "spec": {"failurePolicy": "Fail",
            "matchConstraints": constraints(), "reinvocationPolicy": "Never",
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": " [JSONPatch{op: 'add'} "}}]}}),
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("spec.mutations[0].jsonPatch.expression: Invalid value: \"[JSONPatch{op: 'add'}\": compilation failed: ERROR: <input>:1:"),
            "{errs:?}"
        );
    }

    #[test]
    fn mutating_policies() {
        let valid = json!({"metadata": {"name": "m"}, "spec": {"failurePolicy": "Fail", "matchConstraints": constraints(),
            "reinvocationPolicy": "Never",
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}]}});
        assert_eq!(check(mutating_admission_policy, valid), Vec::<String>::new());
        assert_eq!(
            check(mutating_admission_policy, json!({"metadata": {"name": "m"}, "spec": {"failurePolicy": "Fail",
                "matchConstraints": constraints(), "reinvocationPolicy": "Always", "mutations": [
                    {"patchType": "ApplyConfiguration", "jsonPatch": {"expression": "[]"}}, {"patchType": "Merge"},
                    {"patchType": "JSONPatch", "jsonPatch": {}}, {}]}})),
            [
                "spec.mutations[0].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration",
                "spec.mutations[0].jsonPatch: Invalid value: \"{jsonPatch}\": must not be specified when patchType is ApplyConfiguration",
                "spec.mutations[1].patchType: Unsupported value: \"Merge\": supported values: \"ApplyConfiguration\", \"JSONPatch\"",
                "spec.mutations[2].jsonPatch.expression: Required value",
                "spec.mutations[3].patchType: Required value",
                "spec.reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\"",
            ]
        );
        // A mutating policy matches only what it can mutate (kube's path has
        // no index), before its match conditions; an empty policy is required.
        let mut deleting = constraints();
        deleting["resourceRules"][0]["operations"] = json!(["CREATE", "DELETE"]);
        assert_eq!(
            check(mutating_admission_policy, json!({"metadata": {"name": "m"}, "spec": {"failurePolicy": "Fail",
                "matchConstraints": deleting, "matchConditions": [{"name": "c", "expression": ""}],
                "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}]}})),
            [
                "spec.matchConstraints.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"UPDATE\"",
                "spec.matchConditions[0].expression: Required value",
                "spec.reinvocationPolicy: Required value",
            ]
        );
        assert_eq!(
            check(
                mutating_admission_policy,
                json!({"spec": {"failurePolicy": "Fail", "matchConstraints": constraints(),
                "reinvocationPolicy": "IfNeeded"}})
            ),
            ["spec.mutations: Required value: mutations must contain at least one item"]
        );
    }

    #[test]
    fn bindings() {
        assert!(check(
            validating_admission_policy_binding,
            json!({"spec": {"policyName": "p",
            "validationActions": ["Deny", "Audit"], "paramRef": {"name": "cm", "parameterNotFoundAction": "Deny"}}})
        )
        .is_empty());
        assert_eq!(
            check(validating_admission_policy_binding, json!({"spec": {"validationActions": ["Deny", "Warn", "Deny", "Shout"],
                "paramRef": {"name": "cm", "selector": {}, "parameterNotFoundAction": "Ignore"},
                "matchResources": {"matchPolicy": "Equivalent", "namespaceSelector": {}}}})),
            [
                "spec.policyName: Required value",
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.parameterNotFoundAction: Unsupported value: \"Ignore\": supported values: \"Deny\", \"Allow\"",
                "spec.matchResources.objectSelector: Required value",
                "spec.validationActions[2]: Duplicate value: \"Deny\"",
                "spec.validationActions[3]: Unsupported value: \"Shout\": supported values: \"Audit\", \"Deny\", \"Warn\"",
                "spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\", \"Deny\", \"Shout\"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
            ]
        );
        assert_eq!(
            check(validating_admission_policy_binding, json!({"spec": {"policyName": "P", "paramRef": {}}})),
            [
                "spec.policyName: Invalid value: \"P\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.paramRef: Required value: one of name or selector must be specified",
                "spec.paramRef.parameterNotFoundAction: Required value",
                "spec.validationActions: Required value: at least one validation action is required",
            ]
        );
        assert!(check(mutating_admission_policy_binding, json!({"spec": {"policyName": "m"}})).is_empty());
        assert_eq!(
            check(
                mutating_admission_policy_binding,
                json!({"spec": {"matchResources": {"namespaceSelector": {}, "objectSelector": {}}}})
            ),
            ["spec.policyName: Required value", "spec.matchResources.matchPolicy: Required value"]
        );
        let mut deleting = constraints();
        deleting["resourceRules"][0]["operations"] = json!(["DELETE"]);
        assert_eq!(
            check(mutating_admission_policy_binding, json!({"spec": {"policyName": "m", "matchResources": deleting}})),
            ["spec.matchResources.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"UPDATE\""]
        );
        // More than 20 audit annotations: kube prints the list.
        let audits: Vec<Value> = (0..21).map(|i| json!({"key": format!("k{i}"), "valueExpression": "'v'"})).collect();
        let errs = check(
            validating_admission_policy,
            json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Fail",
            "matchConstraints": constraints(), "auditAnnotations": audits}}),
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with("spec.auditAnnotations: Invalid value: []admissionregistration.AuditAnnotation{admissionregistration.AuditAnnotation{Key:\"k0\", ValueExpression:\"'v'\"}, "), "{errs:?}");
        assert!(
            errs[0].ends_with("ValueExpression:\"'v'\"}}: must not have more than 20 auditAnnotations"),
            "{errs:?}"
        );
    }
}
