//! Table-driven tests of the field manager: merge, conflicts, ownership
//! transfer, removal, shared ownership, resets and the client-side apply upgrade.

use super::*;
use crate::types::schema;
use serde_json::json;

fn write<'a>(manager: &'a str, kind: &str) -> Write<'a> {
    let (group, version) = if kind == "Deployment" { ("apps", "apps/v1") } else { ("", "v1") };
    Write {
        manager,
        api_version: version,
        subresource: "",
        shape: schema::root_shape(group, version.rsplit('/').next().unwrap_or(""), kind),
        status_subresource: kind == "Deployment",
        now: "2026-01-01T00:00:00Z",
    }
}

fn object(value: Value) -> Object {
    value.as_object().cloned().unwrap_or_default()
}

fn cm(data: Value) -> Object {
    object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}, "data": data}))
}

/// Manager name, operation, owned paths.
fn owners(object: &Object) -> Vec<(String, &'static str, Vec<String>)> {
    decode(object)
        .into_iter()
        .map(|e| (e.manager.clone(), e.operation.as_str(), e.fields.iter().map(|p| fieldset::path_string(p)).collect()))
        .collect()
}

fn conflicts_of(result: Result<Object, ApplyError>) -> Vec<(String, String)> {
    match result {
        Err(ApplyError::Conflicts(c)) => c.into_iter().map(|c| (c.manager, c.path)).collect(),
        Ok(o) => panic!("expected conflicts, got {}", Value::Object(o)),
    }
}

#[test]
fn apply_creates_and_owns_the_configuration() {
    let created = apply(None, &cm(json!({"a": "1"})), false, &write("alice", "ConfigMap")).unwrap();
    assert_eq!(created["data"], json!({"a": "1"}));
    assert_eq!(owners(&created), vec![("alice".into(), "Apply", vec![".data.a".into()])]);
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(entry["fieldsV1"], json!({"f:data": {"f:a": {}}}));
    assert_eq!(entry["time"], "2026-01-01T00:00:00Z");
    assert_eq!(entry["apiVersion"], "v1");
}

#[test]
fn apply_cases() {
    // (previous applies in order (manager, data), the apply (manager, data, force),
    //  Ok(expected data, expected owners) or Err(conflicts))
    type Owners = Vec<(&'static str, &'static str, Vec<&'static str>)>;
    #[allow(clippy::type_complexity)]
    let cases: Vec<(Vec<(&str, Value)>, (&str, Value, bool), Result<(Value, Owners), Vec<(&str, &str)>>)> = vec![
        // Merge: a second manager adds a field; both own theirs.
        (
            vec![("alice", json!({"a": "1"}))],
            ("bob", json!({"b": "2"}), false),
            Ok((
                json!({"a": "1", "b": "2"}),
                vec![("alice", "Apply", vec![".data.a"]), ("bob", "Apply", vec![".data.b"])],
            )),
        ),
        // Conflict: another value for a field someone else owns.
        (vec![("alice", json!({"a": "1"}))], ("bob", json!({"a": "2"}), false), Err(vec![("\"alice\"", ".data.a")])),
        // Shared ownership: the same value is no conflict, both own it.
        (
            vec![("alice", json!({"a": "1"}))],
            ("bob", json!({"a": "1"}), false),
            Ok((json!({"a": "1"}), vec![("alice", "Apply", vec![".data.a"]), ("bob", "Apply", vec![".data.a"])])),
        ),
        // Force takes ownership.
        (
            vec![("alice", json!({"a": "1", "x": "1"}))],
            ("bob", json!({"a": "2"}), true),
            Ok((
                json!({"a": "2", "x": "1"}),
                vec![("alice", "Apply", vec![".data.x"]), ("bob", "Apply", vec![".data.a"])],
            )),
        ),
        // Removal: a field dropped from the applier's configuration goes.
        (
            vec![("alice", json!({"a": "1", "b": "2"}))],
            ("alice", json!({"a": "1"}), false),
            Ok((json!({"a": "1"}), vec![("alice", "Apply", vec![".data.a"])])),
        ),
        // ... unless another manager also owns it.
        (
            vec![("alice", json!({"a": "1", "b": "2"})), ("bob", json!({"b": "2"}))],
            ("alice", json!({"a": "1"}), false),
            Ok((
                json!({"a": "1", "b": "2"}),
                vec![("alice", "Apply", vec![".data.a"]), ("bob", "Apply", vec![".data.b"])],
            )),
        ),
        // Re-applying one's own changed value is no conflict.
        (
            vec![("alice", json!({"a": "1"}))],
            ("alice", json!({"a": "3"}), false),
            Ok((json!({"a": "3"}), vec![("alice", "Apply", vec![".data.a"])])),
        ),
        // Several conflicts, several managers.
        (
            vec![("alice", json!({"a": "1"})), ("bob", json!({"b": "1"}))],
            ("carol", json!({"a": "2", "b": "2"}), false),
            Err(vec![("\"alice\"", ".data.a"), ("\"bob\"", ".data.b")]),
        ),
    ];
    for (i, (previous, (manager, data, force), want)) in cases.into_iter().enumerate() {
        let mut live: Option<Object> = None;
        for (m, d) in previous {
            live = Some(apply(live.as_ref(), &cm(d), false, &write(m, "ConfigMap")).unwrap());
        }
        let result = apply(live.as_ref(), &cm(data), force, &write(manager, "ConfigMap"));
        match want {
            Ok((data, want_owners)) => {
                let result = result.unwrap_or_else(|e| panic!("case {i}: {e}"));
                assert_eq!(result["data"], data, "case {i}");
                let want_owners: Vec<(String, &str, Vec<String>)> = want_owners
                    .into_iter()
                    .map(|(m, o, p)| (m.to_string(), o, p.into_iter().map(str::to_string).collect()))
                    .collect();
                assert_eq!(owners(&result), want_owners, "case {i}");
            }
            Err(want) => {
                let want: Vec<(String, String)> = want.into_iter().map(|(m, p)| (m.into(), p.into())).collect();
                assert_eq!(conflicts_of(result), want, "case {i}");
            }
        }
    }
}

#[test]
fn conflict_messages_as_kube_apiserver_words_them() {
    let one = [Conflict { manager: "\"kubectl-edit\" using v1".into(), path: ".data.a".into() }];
    assert_eq!(
        conflict_message(&one),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.a"
    );
    let two = [
        Conflict { manager: "\"b\"".into(), path: ".data.x".into() },
        Conflict { manager: "\"a\"".into(), path: ".data.y".into() },
    ];
    assert_eq!(
        conflict_message(&two),
        "Apply failed with 2 conflicts:\nconflicts with \"a\":\n- .data.y\nconflicts with \"b\":\n- .data.x"
    );
}

#[test]
fn updates_take_what_they_change() {
    let w = write("kubectl-create", "ConfigMap");
    let mut created = cm(json!({"a": "1", "b": "1"}));
    update(None, &mut created, &w);
    assert_eq!(
        owners(&created),
        vec![("kubectl-create".into(), "Update", vec![".data".into(), ".data.a".into(), ".data.b".into()])]
    );
    // An applier conflicts with the updater (named with its apiVersion).
    let conflicts = conflicts_of(apply(Some(&created), &cm(json!({"a": "2"})), false, &write("alice", "ConfigMap")));
    assert_eq!(conflicts, vec![("\"kubectl-create\" using v1".to_string(), ".data.a".to_string())]);
    let applied = apply(Some(&created), &cm(json!({"a": "2"})), true, &write("alice", "ConfigMap")).unwrap();
    // An update changing b takes it from the creator; removing a takes it from alice.
    let mut edited = applied.clone();
    edited["data"] = json!({"b": "9"});
    update(Some(&applied), &mut edited, &write("kubectl-edit", "ConfigMap"));
    assert_eq!(
        owners(&edited),
        vec![
            ("kubectl-create".into(), "Update", vec![".data".into()]),
            ("kubectl-edit".into(), "Update", vec![".data.b".into()]),
        ]
    );
    // A no-op update records nothing new.
    let mut same = edited.clone();
    update(Some(&edited), &mut same, &write("someone", "ConfigMap"));
    assert_eq!(owners(&same), owners(&edited));
}

#[test]
fn managed_fields_reset_by_an_empty_list() {
    let mut created = cm(json!({"a": "1"}));
    update(None, &mut created, &write("creator", "ConfigMap"));
    for reset in [json!([]), json!([{}])] {
        let mut cleared = created.clone();
        cleared["metadata"]["managedFields"] = reset;
        update(Some(&created), &mut cleared, &write("clearer", "ConfigMap"));
        assert!(cleared["metadata"].get("managedFields").is_none(), "{}", Value::Object(cleared));
    }
}

#[test]
fn associative_lists_merge_by_key_and_removal_is_per_item() {
    let w = write("alice", "Deployment");
    let deployment = |containers: Value| {
        object(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"},
            "spec": {"template": {"spec": {"containers": containers}}}}))
    };
    let live =
        apply(None, &deployment(json!([{"name": "a", "image": "1"}, {"name": "b", "image": "1"}])), false, &w).unwrap();
    let fields = &live["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"];
    assert_eq!(fields["k:{\"name\":\"a\"}"], json!({".": {}, "f:image": {}, "f:name": {}}));
    // Bob sets b's image; alice drops b: b stays with bob's field only... and alice's name field is gone.
    let bobbed =
        apply(Some(&live), &deployment(json!([{"name": "b", "image": "2"}])), true, &write("bob", "Deployment"))
            .unwrap();
    let dropped = apply(Some(&bobbed), &deployment(json!([{"name": "a", "image": "1"}])), false, &w).unwrap();
    assert_eq!(
        dropped["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "1"}, {"name": "b", "image": "2"}])
    );
    // Bob drops it too: the item goes.
    let gone =
        apply(Some(&dropped), &deployment(json!([{"name": "a", "image": "1"}])), false, &write("bob", "Deployment"))
            .unwrap();
    assert_eq!(gone["spec"]["template"]["spec"]["containers"], json!([{"name": "a", "image": "1"}]));
}

#[test]
fn upgrade_from_client_side_apply() {
    let last = r#"{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"c","namespace":"d"}}"#;
    let mut created = cm(json!({"a": "1", "b": "1"}));
    created["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: last});
    update(None, &mut created, &write("kubectl-client-side-apply", "ConfigMap"));
    // kubectl takes over what the annotation names (a), not the rest (b).
    let upgraded = apply(Some(&created), &cm(json!({"a": "2"})), false, &write("kubectl", "ConfigMap")).unwrap();
    assert_eq!(upgraded["data"], json!({"a": "2", "b": "1"}));
    let annotation = upgraded["metadata"]["annotations"][LAST_APPLIED_ANNOTATION].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(annotation).unwrap()["data"], json!({"a": "2"}));
    let conflicts = conflicts_of(apply(Some(&created), &cm(json!({"b": "2"})), false, &write("kubectl", "ConfigMap")));
    assert_eq!(conflicts, vec![("\"kubectl-client-side-apply\" using v1".to_string(), ".data.b".to_string())]);
    // Another manager gets no such upgrade.
    let conflicts = conflicts_of(apply(Some(&created), &cm(json!({"a": "2"})), false, &write("other", "ConfigMap")));
    assert_eq!(conflicts.len(), 1);
}

#[test]
fn server_owned_fields_are_never_owned() {
    let mut created = object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n", "uid": "u", "generation": 1, "creationTimestamp": "t"},
        "spec": {"replicas": 1}, "status": {"replicas": 1}}));
    update(None, &mut created, &write("m", "Deployment"));
    assert_eq!(owners(&created), vec![("m".into(), "Update", vec![".spec".into(), ".spec.replicas".into()])]);
}

#[test]
fn update_managers_are_capped_into_ancient_changes() {
    let mut live = cm(json!({}));
    update(None, &mut live, &write("creator", "ConfigMap"));
    for i in 0..12 {
        let mut next = live.clone();
        next["data"][format!("k{i:02}")] = json!("v");
        let name = format!("m{i:02}");
        let mut w = write(&name, "ConfigMap");
        let now = format!("2026-01-01T00:00:{i:02}Z");
        w.now = &now;
        update(Some(&live), &mut next, &w);
        live = next;
    }
    let names: Vec<String> = owners(&live).into_iter().map(|(m, _, _)| m).collect();
    assert_eq!(names.len(), UPDATE_MANAGERS_MAX, "{names:?}");
    let ancient = owners(&live).into_iter().find(|(m, _, _)| m == "ancient-changes").expect("a bucket");
    assert_eq!(ancient.2, vec![".data", ".data.k00", ".data.k01", ".data.k02"]);
    assert!(!names.contains(&"m02".to_string()) && names.contains(&"m03".to_string()), "{names:?}");
}
