//! Validation of the `batch` kinds (Job, CronJob) with kube-apiserver v1.36's
//! rules and words: `pkg/apis/batch/validation/validation.go` (ValidateJob,
//! validateGeneratedSelector, validateJobSpec, ValidateJobSpecUpdate,
//! ValidateCronJobCreate/Update, validateScheduleFormat, validateTimeZone).
//! The CronJob schedule is parsed as robfig/cron v3's `ParseStandard` does,
//! with its error texts (`cron.rs`).

use super::common::*;
use super::cron;
use crate::strategy::validate::core;
use crate::types::validation::{self, go_quote, FieldError};
use serde_json::Value;

/// The Job labels kube generates (`pkg/apis/batch/types.go`; the same
/// names as `rules/others.rs` writes).
const JOB_CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
const LEGACY_JOB_CONTROLLER_UID_LABEL: &str = "controller-uid";
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

/// `maxParallelismForIndexedJob`.
const MAX_PARALLELISM_INDEXED: i64 = 100_000;

pub fn create(kind: &str, object: &Fields) -> Vec<FieldError> {
    match kind {
        "Job" => job(object, true),
        "CronJob" => cron_job(object, None),
        _ => Vec::new(),
    }
}

pub fn update(kind: &str, object: &Fields, old: &Fields, subresource: Option<&str>) -> Vec<FieldError> {
    let empty = Fields::new();
    let (spec, old_spec) = (obj(object, "spec").unwrap_or(&empty), obj(old, "spec").unwrap_or(&empty));
    match (kind, subresource) {
        ("Job", Some("status")) => job_status(object),
        // pkg/registry/batch/job/strategy.go: ValidateUpdate is ValidateJob
        // (the prefixed labels required only if the stored template has
        // them) followed by ValidateJobUpdate, which validates the spec
        // again: kube reports a spec error twice, and so does this.
        ("Job", _) => {
            let old_labels = obj(old_spec, "template").and_then(|t| obj(t, "metadata")).and_then(|m| obj(m, "labels"));
            let prefixed =
                old_labels.is_some_and(|l| l.contains_key(JOB_NAME_LABEL) && l.contains_key(JOB_CONTROLLER_UID_LABEL));
            let mut errs = job(object, prefixed);
            errs.extend(job_spec_with_selector(spec, "spec"));
            errs.extend(job_spec_update(spec, old_spec, old));
            errs
        }
        ("CronJob", Some("status")) => Vec::new(),
        ("CronJob", _) => cron_job(object, Some(old_spec)),
        _ => Vec::new(),
    }
}

fn metadata_text<'a>(object: &'a Fields, key: &str) -> &'a str {
    obj(object, "metadata").map(|m| text(m, key)).unwrap_or("")
}

// ValidateJob (RequirePrefixedLabels: `prefixed`)
fn job(object: &Fields, prefixed: bool) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = generated_selector(object, spec, prefixed);
    errs.extend(job_spec_with_selector(spec, "spec"));
    let indexed = text(spec, "completionMode") == "Indexed";
    if let Some(completions) = int(spec, "completions").filter(|c| indexed && *c > 0) {
        let name = metadata_text(object, "name");
        let hostname = format!("{name}-{}", completions - 1);
        if !validation::is_dns1123_label(&hostname).is_empty() {
            errs.push(FieldError::invalid(
                "metadata.name",
                name,
                &format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errs
}

// validateGeneratedSelector (RequirePrefixedLabels: true on create)
fn generated_selector(object: &Fields, spec: &Fields, prefixed: bool) -> Vec<FieldError> {
    let manual = spec.get("manualSelector").and_then(Value::as_bool).unwrap_or(false);
    let Some(selector) = obj(spec, "selector").filter(|_| !manual) else { return Vec::new() };
    let (name, uid) = (metadata_text(object, "name"), metadata_text(object, "uid"));
    let mut errs = Vec::new();
    if uid.is_empty() {
        errs.push(FieldError::required("metadata.uid", ""));
    }
    let labels = obj(spec, "template").and_then(|t| obj(t, "metadata")).and_then(|m| obj(m, "labels"));
    let all = [
        (LEGACY_JOB_CONTROLLER_UID_LABEL, uid),
        (LEGACY_JOB_NAME_LABEL, name),
        (JOB_CONTROLLER_UID_LABEL, uid),
        (JOB_NAME_LABEL, name),
    ];
    let expected = if prefixed { &all[..] } else { &all[..2] };
    for &(key, value) in expected {
        // ValidateHasLabel
        let path = format!("spec.template.metadata.labels[{key}]");
        match labels.and_then(|l| l.get(key)).and_then(Value::as_str) {
            None => errs.push(FieldError::required(&path, &format!("must be '{value}'"))),
            Some(actual) if actual != value => {
                errs.push(invalid_raw(&path, &go_string_map(labels), &format!("must be '{value}'")))
            }
            Some(_) => {}
        }
    }
    let expected_labels: Fields = expected.iter().map(|(k, v)| (k.to_string(), Value::from(*v))).collect();
    let parsed = Selector::of(Some(selector), "spec.selector");
    if parsed != Selector::Invalid && !parsed.matches(Some(&expected_labels)) {
        errs.push(invalid_raw("spec.selector", &go_label_selector(Some(selector)), "`selector` not auto-generated"));
    }
    errs
}

// ValidateJobSpec: validateJobSpec plus the selector.
fn job_spec_with_selector(spec: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = job_spec(spec, path);
    let selector = obj(spec, "selector");
    match selector {
        None => errs.push(FieldError::required(&format!("{path}.selector"), "")),
        Some(s) => errs.extend(validate_label_selector(s, &format!("{path}.selector"))),
    }
    let parsed = Selector::of(selector, "spec.selector");
    let labels = obj(spec, "template").and_then(|t| obj(t, "metadata")).and_then(|m| obj(m, "labels"));
    if parsed != Selector::Invalid && !parsed.matches(labels) {
        errs.push(invalid_raw(&format!("{path}.template.metadata.labels"), &go_string_map(labels), SELECTOR_MISMATCH));
    }
    errs
}

// validateJobSpec
fn job_spec(spec: &Fields, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ] {
        errs.extend(non_negative(int(spec, key), &format!("{path}.{key}")));
    }
    let per_index = int(spec, "backoffLimitPerIndex");
    let max_failed = int(spec, "maxFailedIndexes");
    if max_failed.is_some() {
        errs.extend(non_negative(max_failed, &format!("{path}.maxFailedIndexes")));
        if per_index.is_none() {
            errs.push(FieldError::required(
                &format!("{path}.backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    if let Some(mode) = mode {
        if !matches!(mode, "NonIndexed" | "Indexed") {
            errs.push(not_supported(&format!("{path}.completionMode"), mode, &["NonIndexed", "Indexed"]));
        }
    }
    if mode == Some("Indexed") {
        if int(spec, "completions").is_none() {
            errs.push(FieldError::required(&format!("{path}.completions"), "when completion mode is Indexed"));
        }
        if let Some(p) = int(spec, "parallelism").filter(|p| *p > MAX_PARALLELISM_INDEXED) {
            errs.push(invalid_raw(
                &format!("{path}.parallelism"),
                &p.to_string(),
                &format!("must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed"),
            ));
        }
    } else {
        if let Some(v) = per_index {
            errs.push(invalid_raw(
                &format!("{path}.backoffLimitPerIndex"),
                &v.to_string(),
                "requires indexed completion mode",
            ));
        }
        if let Some(v) = max_failed {
            errs.push(invalid_raw(
                &format!("{path}.maxFailedIndexes"),
                &v.to_string(),
                "requires indexed completion mode",
            ));
        }
    }
    let failure_policy = spec.get("podFailurePolicy").is_some_and(|p| !p.is_null());
    if let Some(policy) = obj(spec, "podFailurePolicy") {
        errs.extend(pod_failure_policy(spec, policy, &format!("{path}.podFailurePolicy")));
    }
    if let Some(policy) = obj(spec, "successPolicy") {
        let policy_path = format!("{path}.successPolicy");
        if mode != Some("Indexed") {
            errs.push(invalid_raw(&policy_path, &go_success_policy(policy), "requires indexed completion mode"));
        } else {
            errs.extend(success_policy(policy, int(spec, "completions"), &policy_path));
        }
    }
    // validatePodReplacementPolicy
    if let Some(policy) = spec.get("podReplacementPolicy").and_then(Value::as_str) {
        let field = format!("{path}.podReplacementPolicy");
        if failure_policy && policy != "Failed" {
            errs.push(not_supported(&field, policy, &["Failed"]));
        } else if !failure_policy && !matches!(policy, "Failed" | "TerminatingOrFailed") {
            errs.push(not_supported(&field, policy, &["Failed", "TerminatingOrFailed"]));
        }
    }
    let template = spec.get("template").cloned().unwrap_or_else(|| Value::Object(Fields::new()));
    errs.extend(core::pod_template_spec(&template, &format!("{path}.template")));
    let restart = template.get("spec").and_then(|s| s.get("restartPolicy")).and_then(Value::as_str).unwrap_or("");
    let field = format!("{path}.template.spec.restartPolicy");
    match restart {
        "" | "Always" => errs.push(FieldError::required(&field, r#"valid values: "OnFailure", "Never""#)),
        "OnFailure" if failure_policy => errs.push(FieldError::invalid(
            &field,
            restart,
            r#"only "Never" is supported when podFailurePolicy is specified"#,
        )),
        "OnFailure" | "Never" => {}
        other => errs.push(not_supported(&field, other, &["OnFailure", "Never"])),
    }
    errs
}

/// `field.Invalid` with kube's `field.OmitValueType{}`: no value printed.
fn invalid_omitted(field: &str, message: &str) -> FieldError {
    FieldError::new(field, validation::FieldErrorType::Invalid, None, message)
}

// validatePodFailurePolicy, validatePodFailurePolicyRule (the rule count
// limits are left out).
fn pod_failure_policy(spec: &Fields, policy: &Fields, path: &str) -> Vec<FieldError> {
    let empty = Fields::new();
    let pod_spec = obj(spec, "template").and_then(|t| obj(t, "spec")).unwrap_or(&empty);
    let container_names: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|k| list(pod_spec, k).iter().filter_map(|c| c.get("name").and_then(Value::as_str)))
        .collect();
    let mut errs = Vec::new();
    for (i, rule) in list(policy, "rules").iter().enumerate() {
        let rule = rule.as_object().unwrap_or(&empty);
        let rule_path = format!("{path}.rules[{i}]");
        let action_path = format!("{rule_path}.action");
        match text(rule, "action") {
            "" => errs
                .push(FieldError::required(&action_path, r#"valid values: ["Count" "FailIndex" "FailJob" "Ignore"]"#)),
            "FailIndex" if int(spec, "backoffLimitPerIndex").is_none() => {
                errs.push(FieldError::invalid(&action_path, "FailIndex", "requires the backoffLimitPerIndex to be set"))
            }
            "Count" | "FailIndex" | "FailJob" | "Ignore" => {}
            other => errs.push(not_supported(&action_path, other, &["Count", "FailIndex", "FailJob", "Ignore"])),
        }
        let exit_codes = obj(rule, "onExitCodes");
        let conditions = list(rule, "onPodConditions");
        if let Some(codes) = exit_codes {
            errs.extend(on_exit_codes(codes, &format!("{rule_path}.onExitCodes"), &container_names));
        }
        for (j, pattern) in conditions.iter().enumerate() {
            let pattern = pattern.as_object().unwrap_or(&empty);
            let pattern_path = format!("{rule_path}.onPodConditions[{j}]");
            let kind = text(pattern, "type");
            for msg in validation::is_qualified_name(kind) {
                errs.push(FieldError::invalid(&format!("{pattern_path}.type"), kind, &msg));
            }
            let status_path = format!("{pattern_path}.status");
            match text(pattern, "status") {
                "" => errs.push(FieldError::required(&status_path, r#"valid values: ["False" "True" "Unknown"]"#)),
                "False" | "True" | "Unknown" => {}
                other => errs.push(not_supported(&status_path, other, &["False", "True", "Unknown"])),
            }
        }
        if exit_codes.is_some() && !conditions.is_empty() {
            errs.push(invalid_omitted(&rule_path, "specifying both OnExitCodes and OnPodConditions is not supported"));
        }
        if exit_codes.is_none() && conditions.is_empty() {
            errs.push(invalid_omitted(&rule_path, "specifying one of OnExitCodes and OnPodConditions is required"));
        }
    }
    errs
}

// validatePodFailurePolicyRuleOnExitCodes
fn on_exit_codes(codes: &Fields, path: &str, container_names: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let operator = text(codes, "operator");
    match operator {
        "" => errs.push(FieldError::required(&format!("{path}.operator"), r#"valid values: ["In" "NotIn"]"#)),
        "In" | "NotIn" => {}
        other => errs.push(not_supported(&format!("{path}.operator"), other, &["In", "NotIn"])),
    }
    if let Some(name) = codes.get("containerName").and_then(Value::as_str) {
        if !container_names.contains(&name) {
            errs.push(FieldError::invalid(
                &format!("{path}.containerName"),
                name,
                "must be one of the container or initContainer names in the pod template",
            ));
        }
    }
    let values: Vec<i64> = list(codes, "values").iter().filter_map(Value::as_i64).collect();
    let render = |v: &[i64]| {
        let items: Vec<String> = v.iter().map(i64::to_string).collect();
        format!("[]int32{{{}}}", items.join(", "))
    };
    let values_path = format!("{path}.values");
    if values.is_empty() {
        let rendered = if codes.contains_key("values") { "[]int32{}".to_string() } else { "[]int32(nil)".to_string() };
        errs.push(invalid_raw(&values_path, &rendered, "at least one value is required"));
    }
    let mut seen = Vec::new();
    for (j, value) in values.iter().enumerate() {
        let value_path = format!("{values_path}[{j}]");
        if operator == "In" && *value == 0 {
            errs.push(invalid_raw(&value_path, "0", "must not be 0 for the In operator"));
        }
        if seen.contains(value) {
            errs.push(FieldError::new(&value_path, validation::FieldErrorType::Duplicate, None, &value.to_string()));
        } else {
            seen.push(*value);
        }
    }
    if values.windows(2).any(|w| w.first() > w.get(1)) {
        errs.push(invalid_raw(&values_path, &render(&values), "must be ordered"));
    }
    errs
}

/// `maxSuccessPolicyRule`: the most rules a successPolicy holds.
const SUCCESS_POLICY_RULES_MAX: usize = 20;

/// Go's `%#v` of a `batch.SuccessPolicy` (the rules' pointer fields are
/// printed `(...)` where Go prints their addresses).
fn go_success_policy(policy: &Fields) -> String {
    let rules = match policy.get("rules").and_then(Value::as_array) {
        None => "[]batch.SuccessPolicyRule(nil)".to_string(),
        Some(rules) => {
            let pointer = |rule: &Value, field: &str, ty: &str| match rule.get(field) {
                Some(v) if !v.is_null() => format!("(*{ty})(...)"),
                _ => format!("(*{ty})(nil)"),
            };
            let items: Vec<String> = rules
                .iter()
                .map(|r| {
                    format!(
                        "batch.SuccessPolicyRule{{SucceededIndexes:{}, SucceededCount:{}}}",
                        pointer(r, "succeededIndexes", "string"),
                        pointer(r, "succeededCount", "int32")
                    )
                })
                .collect();
            format!("[]batch.SuccessPolicyRule{{{}}}", items.join(", "))
        }
    };
    format!("batch.SuccessPolicy{{Rules:{rules}}}")
}

/// `maxJobSuccessPolicySucceededIndexesLimit`: the longest succeededIndexes.
const SUCCEEDED_INDEXES_BYTES_MAX: usize = 64 * 1024;

/// kube's `parseIndexInterval`: `x` or `x-y` with `x < y < completions`.
fn parse_index_interval(interval: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = interval.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            go_quote(interval)
        ));
    }
    // strconv.Atoi: an optional sign and decimal digits, within int64.
    let number = |text: &str| -> Result<i64, String> {
        text.parse::<i64>().map_err(|_| format!("cannot convert string to integer for index: {}", go_quote(text)))
    };
    let x = number(limits[0])?;
    if x >= completions {
        return Err(format!("too large index: {}", go_quote(limits[0])));
    }
    let Some(upper) = limits.get(1) else { return Ok((x, x)) };
    let y = number(upper)?;
    if y >= completions {
        return Err(format!("too large index: {}", go_quote(upper)));
    }
    if x >= y {
        return Err(format!("non-increasing order, previous: {x}, current: {y}"));
    }
    Ok((x, y))
}

/// kube's `validateIndexesFormat`: comma-separated intervals in increasing
/// order; the number of indexes they hold.
fn indexes_format(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total: i64 = 0;
    for interval in indexes.split(',') {
        let (x, y) = parse_index_interval(interval, completions)?;
        if let Some(last) = last.filter(|l| *l >= x) {
            return Err(format!("non-increasing order, previous: {last}, current: {x}"));
        }
        total = total.saturating_add(y - x + 1);
        last = Some(y);
    }
    Ok(total)
}

// validateSuccessPolicy and validateSuccessPolicyRule.
fn success_policy(policy: &Fields, completions: Option<i64>, path: &str) -> Vec<FieldError> {
    let rules = list(policy, "rules");
    let rules_path = format!("{path}.rules");
    let mut errs = Vec::new();
    if rules.is_empty() {
        errs.push(FieldError::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() > SUCCESS_POLICY_RULES_MAX {
        errs.push(FieldError::too_many(&rules_path, rules.len(), SUCCESS_POLICY_RULES_MAX));
    }
    let empty = Fields::new();
    for (i, rule) in rules.iter().enumerate() {
        let rule = rule.as_object().unwrap_or(&empty);
        let rule_path = format!("{rules_path}[{i}]");
        if !rule.contains_key("succeededCount") && !rule.contains_key("succeededIndexes") {
            errs.push(FieldError::required(
                &rule_path,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total_indexes = 0;
        let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
        if let Some(indexes) = indexes {
            let indexes_path = format!("{rule_path}.succeededIndexes");
            if indexes.len() > SUCCEEDED_INDEXES_BYTES_MAX {
                errs.push(FieldError::too_long(&indexes_path, SUCCEEDED_INDEXES_BYTES_MAX));
            }
            // kube dereferences spec.completions here; an Indexed Job without
            // completions has its Required error already.
            if let Some(completions) = completions {
                match indexes_format(indexes, completions) {
                    Ok(total) => total_indexes = total,
                    Err(e) => errs.push(FieldError::invalid(
                        &indexes_path,
                        indexes,
                        &format!("error parsing succeededIndexes: {e}"),
                    )),
                }
            }
        }
        if let Some(count) = int(rule, "succeededCount") {
            let count_path = format!("{rule_path}.succeededCount");
            errs.extend(non_negative(Some(count), &count_path));
            if let Some(completions) = completions.filter(|c| count > *c) {
                errs.push(invalid_raw(
                    &count_path,
                    &count.to_string(),
                    &format!("must be less than or equal to {completions} (the number of specified completions)"),
                ));
            }
            if indexes.is_some() && count > total_indexes {
                errs.push(invalid_raw(
                    &count_path,
                    &count.to_string(),
                    &format!(
                        "must be less than or equal to {total_indexes} (the number of indexes in the specified succeededIndexes field)"
                    ),
                ));
            }
        }
    }
    errs
}

/// Go's `%#v` of a `*int32` field as field.Error prints it.
fn go_int_pointer(value: Option<i64>) -> String {
    value.map_or_else(|| "null".to_string(), |v| v.to_string())
}

// ValidateJobSpecUpdate
fn job_spec_update(spec: &Fields, old_spec: &Fields, old: &Fields) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // validateCompletions (ElasticIndexedJob is GA)
    let (completions, old_completions) = (int(spec, "completions"), int(old_spec, "completions"));
    if completions != old_completions {
        if text(spec, "completionMode") != "Indexed" {
            errs.push(invalid_raw("spec.completions", &go_int_pointer(completions), IMMUTABLE));
        } else if let Some(c) = completions.filter(|c| Some(*c) != int(spec, "parallelism")) {
            errs.push(invalid_raw(
                "spec.completions",
                &c.to_string(),
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    }
    if spec.get("selector") != old_spec.get("selector") {
        errs.push(invalid_raw("spec.selector", &go_label_selector(obj(spec, "selector")), IMMUTABLE));
    }
    if template_for_comparison(spec, old_spec, old) != old_spec.get("template").cloned() {
        // kube prints the whole Go core.PodTemplateSpec value here.
        errs.push(invalid_raw("spec.template", "core.PodTemplateSpec{...}", IMMUTABLE));
    }
    if spec.get("completionMode") != old_spec.get("completionMode") {
        errs.push(FieldError::invalid("spec.completionMode", text(spec, "completionMode"), IMMUTABLE));
    }
    for key in ["podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"] {
        if spec.get(key) != old_spec.get(key) {
            let rendered = match spec.get(key) {
                Some(Value::String(s)) => validation::go_quote(s),
                Some(Value::Number(n)) => n.to_string(),
                None | Some(Value::Null) => "null".to_string(),
                Some(_) => format!("batch.{}{{...}}", upper_first(key)),
            };
            errs.push(invalid_raw(&format!("spec.{key}"), &rendered, IMMUTABLE));
        }
    }
    errs
}

fn upper_first(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// The new template as compared with the old one: a Job suspended and never
/// started may change its scheduling directives (validatePodTemplateUpdate
/// with AllowMutableSchedulingDirectives), which are then taken from the old
/// template for the comparison.
fn template_for_comparison(spec: &Fields, old_spec: &Fields, old: &Fields) -> Option<Value> {
    let mut template = spec.get("template").cloned();
    let suspended = old_spec.get("suspend").and_then(Value::as_bool).unwrap_or(false);
    let started = obj(old, "status").is_some_and(|s| s.get("startTime").is_some_and(|t| !t.is_null()));
    let (Some(Value::Object(new)), Some(Value::Object(old_template))) = (template.as_mut(), old_spec.get("template"))
    else {
        return template;
    };
    if !suspended || started {
        return template;
    }
    let copy = |into: &mut Fields, from: &Fields, key: &str| match from.get(key) {
        Some(v) => {
            into.insert(key.to_string(), v.clone());
        }
        None => {
            into.shift_remove(key);
        }
    };
    let empty = Fields::new();
    let old_meta = obj(old_template, "metadata").unwrap_or(&empty).clone();
    let old_pod = obj(old_template, "spec").unwrap_or(&empty).clone();
    if let Some(Value::Object(meta)) = new.get_mut("metadata") {
        copy(meta, &old_meta, "labels");
        copy(meta, &old_meta, "annotations");
    }
    if let Some(Value::Object(pod)) = new.get_mut("spec") {
        for key in ["nodeSelector", "tolerations", "schedulingGates"] {
            copy(pod, &old_pod, key);
        }
        let old_node_affinity = obj(&old_pod, "affinity").and_then(|a| a.get("nodeAffinity")).cloned();
        if let Some(Value::Object(affinity)) = pod.get_mut("affinity") {
            match old_node_affinity {
                Some(v) => affinity.insert("nodeAffinity".into(), v),
                None => affinity.shift_remove("nodeAffinity"),
            };
            if affinity.is_empty() && !old_pod.contains_key("affinity") {
                pod.shift_remove("affinity");
            }
        } else if let Some(Value::Object(old_affinity)) = old_pod.get("affinity") {
            if old_affinity.keys().all(|k| k == "nodeAffinity") {
                pod.insert("affinity".into(), Value::Object(old_affinity.clone()));
            }
        }
    }
    template
}

// validateJobStatus: the counters.
fn job_status(object: &Fields) -> Vec<FieldError> {
    let empty = Fields::new();
    let status = obj(object, "status").unwrap_or(&empty);
    ["active", "succeeded", "failed", "ready", "terminating"]
        .iter()
        .flat_map(|c| non_negative(int(status, c), &format!("status.{c}")))
        .collect()
}

// ValidateCronJobCreate / ValidateCronJobUpdate: validateCronJobSpec
fn cron_job(object: &Fields, old_spec: Option<&Fields>) -> Vec<FieldError> {
    let empty = Fields::new();
    let spec = obj(object, "spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    let schedule = text(spec, "schedule");
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else {
        let allow_tz = old_spec.is_some_and(|o| text(o, "schedule").contains("TZ"));
        errs.extend(schedule_format(schedule, allow_tz, spec.get("timeZone").and_then(Value::as_str).is_some()));
    }
    errs.extend(non_negative(int(spec, "startingDeadlineSeconds"), "spec.startingDeadlineSeconds"));
    let time_zone = spec.get("timeZone").and_then(Value::as_str);
    if old_spec.is_none_or(|o| o.get("timeZone").and_then(Value::as_str) != time_zone) {
        errs.extend(time_zone.map(validate_time_zone).unwrap_or_default());
    }
    match text(spec, "concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required("spec.concurrencyPolicy", "")),
        other => errs.push(not_supported("spec.concurrencyPolicy", other, &["Allow", "Forbid", "Replace"])),
    }
    // ValidateJobTemplateSpec
    let job_spec_fields = obj(spec, "jobTemplate").and_then(|t| obj(t, "spec")).unwrap_or(&empty);
    errs.extend(job_spec(job_spec_fields, "spec.jobTemplate.spec"));
    if let Some(selector) = obj(job_spec_fields, "selector") {
        errs.push(invalid_raw(
            "spec.jobTemplate.spec.selector",
            &go_label_selector(Some(selector)),
            "`selector` will be auto-generated",
        ));
    }
    if job_spec_fields.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        errs.push(not_supported_raw("spec.jobTemplate.spec.manualSelector", "true", &["nil", "false"]));
    }
    errs.extend(non_negative(int(spec, "successfulJobsHistoryLimit"), "spec.successfulJobsHistoryLimit"));
    errs.extend(non_negative(int(spec, "failedJobsHistoryLimit"), "spec.failedJobsHistoryLimit"));
    errs
}

// validateScheduleFormat
fn schedule_format(schedule: &str, allow_tz: bool, has_time_zone: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Err(message) = cron::parse_standard(schedule) {
        errs.push(FieldError::invalid("spec.schedule", schedule, &message));
    }
    if allow_tz && schedule.contains("TZ") && has_time_zone {
        errs.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    } else if !allow_tz && schedule.contains("TZ") {
        errs.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
    errs
}

// validateTimeZone. kube also loads the zone from the time zone database
// (`time.LoadLocation`); without I/O here, a well-formed name is accepted.
fn validate_time_zone(time_zone: &str) -> Vec<FieldError> {
    let field = "spec.timeZone";
    if time_zone.is_empty() {
        return vec![FieldError::invalid(field, time_zone, "timeZone must be nil or non-empty string")];
    }
    // `^[A-Za-z\.\-_0-9+]{1,14}$` per part, not `.`/`..`, not starting with `-`.
    let part_ok = |p: &str| {
        !matches!(p, "." | "..")
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+'))
    };
    if !time_zone.split('/').all(part_ok) {
        return vec![FieldError::invalid(field, time_zone, &format!("unknown time zone {time_zone}"))];
    }
    if time_zone.eq_ignore_ascii_case("Local") {
        return vec![FieldError::invalid(
            field,
            time_zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        )];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::super::common::tests::pod;
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Fields {
        v.as_object().cloned().unwrap_or_default()
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn job_object(spec: Value) -> Fields {
        let labels = json!({"controller-uid": "u", "job-name": "j", "batch.kubernetes.io/controller-uid": "u", "batch.kubernetes.io/job-name": "j"});
        let mut base = json!({
            "parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
            "manualSelector": false, "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
            "template": {"metadata": {"labels": labels}, "spec": pod("Never")}
        });
        if let (Some(b), Some(s)) = (base.as_object_mut(), spec.as_object()) {
            for (k, v) in s {
                b.insert(k.clone(), v.clone());
            }
        }
        fields(json!({"metadata": {"name": "j", "uid": "u"}, "spec": base}))
    }

    #[test]
    fn valid_job_passes() {
        assert_eq!(messages(&create("Job", &job_object(json!({})))), Vec::<String>::new());
    }

    // validateJobSpec, validateGeneratedSelector
    #[test]
    fn job_errors_in_kubes_words() {
        let cases: Vec<(Value, &str)> = vec![
            (json!({"backoffLimit": -1}), "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
            (
                json!({"template": {"metadata": {"labels": {"controller-uid": "u", "job-name": "j", "batch.kubernetes.io/controller-uid": "u", "batch.kubernetes.io/job-name": "j"}}, "spec": pod("Always")}}),
                r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#,
            ),
            (
                json!({"completionMode": "Sometimes"}),
                r#"spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed""#,
            ),
            (
                json!({"backoffLimitPerIndex": 1}),
                "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
            ),
            (
                json!({"selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "other"}}}),
                r#"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"batch.kubernetes.io/controller-uid":"other"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated"#,
            ),
            (
                json!({"podReplacementPolicy": "Sometimes"}),
                r#"spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: "Failed", "TerminatingOrFailed""#,
            ),
        ];
        for (spec, expected) in cases {
            let errs = messages(&create("Job", &job_object(spec.clone())));
            assert!(errs.contains(&expected.to_string()), "{spec}: {errs:?}");
        }
        let missing = job_object(
            json!({"template": {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "u"}}, "spec": pod("Never")}}),
        );
        let errs = messages(&create("Job", &missing));
        assert!(
            errs.contains(&"spec.template.metadata.labels[controller-uid]: Required value: must be 'u'".to_string()),
            "{errs:?}"
        );
    }

    // validatePodFailurePolicyRule, validatePodFailurePolicyRuleOnExitCodes
    #[test]
    fn pod_failure_policy_rules() {
        let policy = json!({"rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 3, 3, 1]}},
            {"action": "Bogus", "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}]},
            {"action": "Ignore"}
        ]});
        let errs = messages(&create(
            "Job",
            &job_object(json!({"podFailurePolicy": policy, "podReplacementPolicy": "Failed"})),
        ));
        assert_eq!(errs, vec![
            "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
            "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 3, 1}: must be ordered",
            r#"spec.podFailurePolicy.rules[1].action: Unsupported value: "Bogus": supported values: "Count", "FailIndex", "FailJob", "Ignore""#,
            r#"spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown""#,
            "spec.podFailurePolicy.rules[2]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
        ]);
    }

    // validateJobSpec's successPolicy: only for Indexed jobs;
    // validateSuccessPolicy, validateSuccessPolicyRule.
    #[test]
    fn success_policy_rules() {
        let policy = json!({"rules": [{"succeededCount": 1}, {"succeededIndexes": "0"}]});
        let errs = messages(&create("Job", &job_object(json!({"successPolicy": policy}))));
        assert_eq!(errs, vec![
            "spec.successPolicy: Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{batch.SuccessPolicyRule{SucceededIndexes:(*string)(nil), SucceededCount:(*int32)(...)}, batch.SuccessPolicyRule{SucceededIndexes:(*string)(...), SucceededCount:(*int32)(nil)}}}: requires indexed completion mode",
        ]);
        let indexed = |policy: Value| {
            messages(&create(
                "Job",
                &job_object(
                    json!({"completionMode": "Indexed", "completions": 3, "parallelism": 3, "successPolicy": policy}),
                ),
            ))
        };
        assert_eq!(indexed(json!({"rules": [{"succeededIndexes": "0-2", "succeededCount": 2}]})), Vec::<String>::new());
        assert_eq!(indexed(json!({"rules": [{}, {"succeededCount": 4}]})), vec![
            "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
            "spec.successPolicy.rules[1].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of specified completions)",
        ]);
        assert_eq!(
            indexed(json!({"rules": [
                {"succeededIndexes": "0-1,1", "succeededCount": 1},
                {"succeededIndexes": "1-0"},
                {"succeededIndexes": "0-1-2"},
                {"succeededIndexes": "x"},
                {"succeededIndexes": "3"},
                {"succeededIndexes": "0,2", "succeededCount": 3},
            ]})),
            vec![
                "spec.successPolicy.rules[0].succeededIndexes: Invalid value: \"0-1,1\": error parsing succeededIndexes: non-increasing order, previous: 1, current: 1",
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 1: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
                "spec.successPolicy.rules[1].succeededIndexes: Invalid value: \"1-0\": error parsing succeededIndexes: non-increasing order, previous: 1, current: 0",
                "spec.successPolicy.rules[2].succeededIndexes: Invalid value: \"0-1-2\": error parsing succeededIndexes: the fragment \"0-1-2\" violates the requirement that an index interval can have at most two parts separated by '-'",
                "spec.successPolicy.rules[3].succeededIndexes: Invalid value: \"x\": error parsing succeededIndexes: cannot convert string to integer for index: \"x\"",
                "spec.successPolicy.rules[4].succeededIndexes: Invalid value: \"3\": error parsing succeededIndexes: too large index: \"3\"",
                "spec.successPolicy.rules[5].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
            ]
        );
        let many: Vec<Value> = (0..21).map(|_| json!({"succeededCount": 1})).collect();
        assert_eq!(
            indexed(json!({"rules": many})),
            vec!["spec.successPolicy.rules: Too many: 21: must have at most 20 items"]
        );
        assert_eq!(indexed(json!({"rules": []})), vec![
            "spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified",
        ]);
    }

    // ValidateJobSpecUpdate
    #[test]
    fn job_update_immutables() {
        let old = job_object(json!({}));
        assert!(update("Job", &old, &old, None).is_empty());
        let new = job_object(
            json!({"completions": 2, "template": {"metadata": {"labels": {"controller-uid": "u", "job-name": "j", "batch.kubernetes.io/controller-uid": "u", "batch.kubernetes.io/job-name": "j"}}, "spec": pod("OnFailure")}}),
        );
        let errs = messages(&update("Job", &new, &old, None));
        assert!(errs.contains(&"spec.completions: Invalid value: 2: field is immutable".to_string()), "{errs:?}");
        // The spec is validated twice on update, as kube does.
        let negative = job_object(json!({"backoffLimit": -1}));
        let twice = messages(&update("Job", &negative, &old, None));
        let expected = "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0".to_string();
        assert_eq!(twice.iter().filter(|e| **e == expected).count(), 2, "{twice:?}");
        assert!(
            errs.iter().any(|e| e.starts_with("spec.template: Invalid value:") && e.ends_with("field is immutable")),
            "{errs:?}"
        );
        // A suspended Job that never started may change its node selector.
        let suspended = job_object(json!({"suspend": true}));
        let mut moved_pod = pod("Never");
        moved_pod["nodeSelector"] = json!({"zone": "a"});
        let labels = json!({"controller-uid": "u", "job-name": "j", "batch.kubernetes.io/controller-uid": "u", "batch.kubernetes.io/job-name": "j"});
        let moved =
            job_object(json!({"suspend": true, "template": {"metadata": {"labels": labels}, "spec": moved_pod}}));
        assert_eq!(messages(&update("Job", &moved, &suspended, None)), Vec::<String>::new());
        // Not once it is running.
        let running = job_object(json!({"suspend": false}));
        let mut moved_running = moved.clone();
        if let Some(Value::Object(spec)) = moved_running.get_mut("spec") {
            spec.insert("suspend".into(), json!(false));
        }
        assert_eq!(update("Job", &moved_running, &running, None).len(), 1);
    }

    // validateCronJobSpec
    #[test]
    fn cron_job_rules() {
        let cron = |spec: Value| fields(json!({"spec": spec}));
        let good = json!({"schedule": "0 3 * * *", "concurrencyPolicy": "Allow", "jobTemplate": {"spec": {"template": {"spec": pod("OnFailure")}}}});
        assert!(create("CronJob", &cron(good)).is_empty());
        let bad = json!({"schedule": "0 3 * *", "concurrencyPolicy": "Sometimes", "timeZone": "Local",
            "jobTemplate": {"spec": {"selector": {}, "template": {"spec": pod("OnFailure")}}}, "successfulJobsHistoryLimit": -1});
        let errs = messages(&create("CronJob", &cron(bad)));
        assert_eq!(errs, vec![
            r#"spec.schedule: Invalid value: "0 3 * *": expected exactly 5 fields, found 4: [0 3 * *]"#,
            r#"spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"#,
            r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#,
            "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated",
            "spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
        ]);
        let tz = messages(&create(
            "CronJob",
            &cron(
                json!({"schedule": "TZ=UTC 0 3 * * *", "concurrencyPolicy": "Allow", "jobTemplate": {"spec": {"template": {"spec": pod("Never")}}}}),
            ),
        ));
        assert_eq!(
            tz,
            vec![
                r#"spec.schedule: Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#
            ]
        );
    }
}
