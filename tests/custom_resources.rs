//! Custom resources against the real binary: `kubectl apply` of a
//! CustomResourceDefinition makes its resource served (discovery, the
//! NamesAccepted and Established conditions), kubectl creates, gets, lists
//! (with the definition's printer columns) and deletes custom resources;
//! unknown fields are pruned, schema violations are 422 with kube's field
//! errors; `/status` and `/scale` work as declared; a second served version
//! converts by apiVersion; watches see the changes; Protobuf is refused; and
//! deleting the definition deletes its objects and stops serving them.
//! Definitions are served again after a restart.

mod common;

use common::{assert_status, Server};
use serde_json::{json, Value};
use std::path::PathBuf;

const CRD_YAML: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Color
      type: string
      jsonPath: .spec.color
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              color: {type: string, enum: [red, green, blue]}
              replicas: {type: integer}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              replicas: {type: integer}
              phase: {type: string}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

const WIDGET_YAML: &str = r#"apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
  color: red
  bogus: dropped
  extra:
    anything: kept
"#;

const BAD_WIDGET_YAML: &str = r#"apiVersion: example.com/v1
kind: Widget
metadata:
  name: bad
spec:
  size: 30
  color: pink
"#;

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

fn write(s: &Server, name: &str, text: &str) -> PathBuf {
    let path = s.data_dir().parent().expect("test dir").join(name);
    std::fs::write(&path, text).expect("write manifest");
    path
}

fn condition<'a>(crd: &'a Value, type_: &str) -> &'a Value {
    crd["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .unwrap_or_else(|| panic!("no {type_} condition in {crd}"))
}

/// The events of a watch that ends after one second (timeoutSeconds).
fn watch_events(s: &Server, path: &str) -> Vec<(String, String, Value)> {
    let r = s.get(path);
    assert_eq!(r.status, 200, "{}", r.text());
    r.text()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).expect("watch event"))
        .map(|e| {
            let name = e["object"]["metadata"]["name"].as_str().unwrap_or_default().to_string();
            (e["type"].as_str().unwrap_or_default().to_string(), name, e["object"].clone())
        })
        .collect()
}

#[test]
fn kubectl_serves_validates_and_deletes_custom_resources() {
    let s = Server::start();
    let crd_path = write(&s, "crd.yaml", CRD_YAML);
    let crd_file = crd_path.to_str().unwrap();
    s.kubectl_ok(&["apply", "-f", crd_file]);

    // The definition's status, as kube-apiserver's controllers set it.
    let crd = s.kubectl_ok(&["get", "crd", "widgets.example.com", "-o", "json"]).json();
    assert_eq!(condition(&crd, "NamesAccepted")["status"], "True");
    assert_eq!(condition(&crd, "NamesAccepted")["reason"], "NoConflicts");
    assert_eq!(condition(&crd, "Established")["status"], "True");
    assert_eq!(condition(&crd, "Established")["reason"], "InitialNamesAccepted");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");
    assert_eq!(crd["status"]["acceptedNames"]["listKind"], "WidgetList");
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    let since_crd = crd["metadata"]["resourceVersion"].as_str().unwrap().to_string();

    // Discovery: the group, both served versions, the subresources.
    let group = s.get_ok("/apis/example.com");
    assert_eq!(group["preferredVersion"]["version"], "v1");
    let versions: Vec<&str> =
        group["versions"].as_array().unwrap().iter().filter_map(|v| v["version"].as_str()).collect();
    assert_eq!(versions, ["v1", "v1beta1"]);
    let resources = s.get_ok("/apis/example.com/v1");
    let names: Vec<&str> =
        resources["resources"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, ["widgets", "widgets/scale", "widgets/status"]);
    assert_eq!(resources["resources"][0]["shortNames"], json!(["wd"]));
    assert!(s.get_ok("/apis").to_string().contains("example.com/v1beta1"));

    // kubectl: list, create (an unknown field pruned), get, printer columns.
    let empty = s.kubectl_ok(&["get", "widgets"]);
    assert!(empty.stdout.trim().is_empty() && empty.stderr.contains("No resources found"), "{empty:?}");
    let widget_path = write(&s, "widget.yaml", WIDGET_YAML);
    // kubectl's default --validate=strict would refuse the unknown field (fieldValidation=Strict).
    s.kubectl_ok(&["create", "--validate=false", "-f", widget_path.to_str().unwrap()]);
    let widget = s.kubectl_ok(&["get", "widget", "w1", "-o", "yaml"]).stdout;
    assert!(widget.contains("apiVersion: example.com/v1\n"), "{widget}");
    assert!(widget.contains("size: 3") && widget.contains("anything: kept"), "{widget}");
    assert!(!widget.contains("bogus"), "unknown field not pruned:\n{widget}");
    assert!(!widget.contains("status:"), "a create keeps no status:\n{widget}");
    let table = s.kubectl_ok(&["get", "wd"]).stdout;
    let header: Vec<&str> = table.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "SIZE", "COLOR", "AGE"], "{table}");
    let row: Vec<&str> = table.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    assert_eq!(&row[..3], ["w1", "3", "red"], "{table}");

    // A schema violation: 422 Invalid with kube's field paths and messages.
    let bad_path = write(&s, "bad.yaml", BAD_WIDGET_YAML);
    let bad = s.kubectl(&["create", "-f", bad_path.to_str().unwrap()]);
    assert!(!bad.status.success());
    assert!(
        bad.stderr.contains("spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10"),
        "{}",
        bad.stderr
    );
    assert!(
        bad.stderr.contains(r#"spec.color: Unsupported value: "pink": supported values: "red", "green", "blue""#),
        "{}",
        bad.stderr
    );
    let r = s.post_json(
        WIDGETS,
        &json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bad"}, "spec": {"color": 3}}),
    );
    let status = assert_status(&r, 422, "Invalid");
    let causes: Vec<(&str, &str)> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["field"].as_str().unwrap_or(""), c["reason"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(causes, [("spec.size", "FieldValueRequired"), ("spec.color", "FieldValueInvalid")], "{status}");
    assert!(status["message"].as_str().unwrap().starts_with("Widget.example.com \"bad\" is invalid"), "{status}");

    // PUT: an unknown field alone changes nothing; a content change bumps the generation.
    let mut same = s.get_ok(&format!("{WIDGETS}/w1"));
    let revision = same["metadata"]["resourceVersion"].clone();
    same["spec"]["bogus"] = json!(1);
    let r = s.put_json(&format!("{WIDGETS}/w1"), &same);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!((&r.json()["metadata"]["resourceVersion"], &r.json()["metadata"]["generation"]), (&revision, &json!(1)));
    same["spec"]["size"] = json!(4);
    let r = s.put_json(&format!("{WIDGETS}/w1"), &same);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["metadata"]["generation"], 2);
    assert!(r.json()["spec"].get("bogus").is_none());
    same["spec"]["size"] = json!(0);
    same["metadata"].as_object_mut().unwrap().remove("resourceVersion");
    assert_status(&s.put_json(&format!("{WIDGETS}/w1"), &same), 422, "Invalid");

    // /status changes only status (pruned too); /scale reads and writes the declared paths.
    let mut current = s.get_ok(&format!("{WIDGETS}/w1"));
    current["status"] = json!({"replicas": 2, "phase": "Ready", "junk": true});
    current["spec"]["size"] = json!(9);
    let r = s.put_json(&format!("{WIDGETS}/w1/status"), &current);
    assert_eq!(r.status, 200, "{}", r.text());
    let updated = r.json();
    assert_eq!(updated["status"], json!({"replicas": 2, "phase": "Ready"}));
    assert_eq!(updated["spec"]["size"], 4);
    assert_eq!(updated["metadata"]["generation"], 2);
    let r = s.put_json(
        &format!("{WIDGETS}/w1/scale"),
        &json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "w1"}, "spec": {"replicas": 4}}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["spec"]["replicas"], 4);
    assert_eq!(r.json()["status"]["replicas"], 2);
    assert_eq!(s.get_ok(&format!("{WIDGETS}/w1"))["spec"]["replicas"], 4);

    // The other served version: the same object, with its apiVersion.
    let beta = s.get_ok("/apis/example.com/v1beta1/namespaces/default/widgets/w1");
    assert_eq!(beta["apiVersion"], "example.com/v1beta1");
    assert_eq!(beta["spec"]["replicas"], 4);
    let beta_list = s.get_ok("/apis/example.com/v1beta1/widgets");
    assert_eq!(beta_list["kind"], "WidgetList");
    assert_eq!(beta_list["items"][0]["apiVersion"], "example.com/v1beta1");

    // No Protobuf for custom resources.
    let r = s.request("GET", &format!("{WIDGETS}/w1"), &[("Accept", "application/vnd.kubernetes.protobuf")], None);
    assert_status(&r, 406, "NotAcceptable");
    let r = s.request(
        "GET",
        &format!("{WIDGETS}/w1"),
        &[("Accept", "application/vnd.kubernetes.protobuf, application/json")],
        None,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["kind"], "Widget");
    let r = s.request(
        "POST",
        WIDGETS,
        &[("Content-Type", "application/vnd.kubernetes.protobuf")],
        Some(b"k8s\x00\x0a\x00".as_slice()),
    );
    assert_status(&r, 415, "UnsupportedMediaType");

    // Delete one; the watch from the definition's revision saw it all.
    s.kubectl_ok(&["delete", "widget", "w1"]);
    let gone = s.kubectl(&["get", "widget", "w1"]);
    assert!(!gone.status.success() && gone.stderr.contains("NotFound"), "{gone:?}");
    let events = watch_events(&s, &format!("{WIDGETS}?watch=1&resourceVersion={since_crd}&timeoutSeconds=1"));
    let kinds: Vec<(&str, &str)> = events.iter().map(|(t, n, _)| (t.as_str(), n.as_str())).collect();
    assert_eq!(kinds, [("ADDED", "w1"), ("MODIFIED", "w1"), ("MODIFIED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]);
    assert!(events.iter().all(|(_, _, o)| o["apiVersion"] == "example.com/v1"));

    // Deleting the definition deletes its objects and stops serving them.
    s.kubectl_ok(&["create", "--validate=false", "-f", widget_path.to_str().unwrap()]);
    s.kubectl_ok(&["delete", "crd", "widgets.example.com"]);
    assert_status(&s.get(WIDGETS), 404, "NotFound");
    assert_status(&s.get("/apis/example.com"), 404, "NotFound");
    s.kubectl_ok(&["apply", "-f", crd_file]);
    assert_eq!(s.get_ok(WIDGETS)["items"], json!([]));
}

/// kubectl's patching verbs on a custom resource (kubectl falls back to
/// merge patch for types it does not know): client-side `apply` twice,
/// `patch --type=merge|json`, `label`, `scale`, a status patch; a strategic
/// merge patch is 415 with kube's message; fieldValidation reports unknown
/// fields against the definition's schema (preserved subtrees excepted).
#[test]
fn kubectl_patches_custom_resources_and_validates_fields() {
    let s = Server::start();
    let crd_path = write(&s, "crd.yaml", CRD_YAML);
    s.kubectl_ok(&["apply", "-f", crd_path.to_str().unwrap()]);
    let widget_path = write(&s, "widget.yaml", WIDGET_YAML);
    let widget_file = widget_path.to_str().unwrap();
    // kubectl's default --validate=strict refuses the unknown field; warn sends it with a warning.
    let strict = s.kubectl(&["apply", "-f", widget_file]);
    assert!(!strict.status.success(), "{strict:?}");
    assert!(strict.stderr.contains(r#"strict decoding error: unknown field "spec.bogus""#), "{strict:?}");
    let warned = s.kubectl_ok(&["apply", "--validate=warn", "-f", widget_file]);
    assert!(warned.stderr.contains(r#"unknown field "spec.bogus""#), "{warned:?}");
    write(&s, "widget.yaml", &WIDGET_YAML.replace("size: 3", "size: 5").replace("  color: red\n", ""));
    let out = s.kubectl_ok(&["apply", "--validate=warn", "-f", widget_file]);
    assert!(out.stdout.contains("widget.example.com/w1 configured"), "{out:?}");
    let w = s.get_ok(&format!("{WIDGETS}/w1"));
    assert_eq!((&w["spec"]["size"], w["spec"].get("color")), (&json!(5), None), "{w}");
    assert_eq!(w["metadata"]["generation"], 2);

    s.kubectl_ok(&["patch", "widget", "w1", "--type=merge", "-p", r#"{"spec":{"color":"blue"}}"#]);
    s.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/size","value":6}]"#,
    ]);
    s.kubectl_ok(&["label", "widget", "w1", "tier=gold"]);
    s.kubectl_ok(&["scale", "widget", "w1", "--replicas=3"]);
    s.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":3}}"#,
    ]);
    let w = s.get_ok(&format!("{WIDGETS}/w1"));
    assert_eq!(
        (&w["spec"]["color"], &w["spec"]["size"], &w["spec"]["replicas"], &w["metadata"]["labels"]["tier"]),
        (&json!("blue"), &json!(6), &json!(3), &json!("gold")),
        "{w}"
    );
    assert_eq!(w["status"], json!({"replicas": 3}));
    // The definition's schema still applies to a patched object.
    let bad = s.kubectl(&["patch", "widget", "w1", "--type=merge", "-p", r#"{"spec":{"size":11}}"#]);
    assert!(!bad.status.success() && bad.stderr.contains("spec.size: Invalid value: 11"), "{bad:?}");

    // kubectl's default patch type is strategic: 415, in kube's words.
    let strategic = s.kubectl(&["patch", "widget", "w1", "-p", r#"{"spec":{"size":2}}"#]);
    assert!(!strategic.status.success());
    assert!(
        strategic.stderr.contains(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json"
        ),
        "{strategic:?}"
    );
    let r = s.request(
        "PATCH",
        &format!("{WIDGETS}/w1"),
        &[("Content-Type", "application/strategic-merge-patch+json")],
        Some(br#"{"spec":{"size":2}}"#.as_slice()),
    );
    assert_status(&r, 415, "UnsupportedMediaType");

    // fieldValidation: Warn (the default) warns and prunes; Strict refuses;
    // the preserved `spec.extra` subtree has no unknown fields.
    let body = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"},
                      "spec": {"size": 1, "bogus": 1, "extra": {"free": {"form": true}}}});
    let text = body.to_string();
    let r = s.request(
        "POST",
        &format!("{WIDGETS}?fieldValidation=Strict"),
        &[("Content-Type", "application/json")],
        Some(text.as_bytes()),
    );
    let status = assert_status(&r, 400, "BadRequest");
    assert_eq!(
        status["message"],
        r#"Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus""#
    );
    let r = s.post_json(WIDGETS, &body);
    assert_eq!(r.status, 201, "{}", r.text());
    let warnings: Vec<&str> =
        r.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("warning")).map(|(_, v)| v.as_str()).collect();
    assert_eq!(warnings, [r#"299 - "unknown field \"spec.bogus\"""#]);
    assert_eq!(r.json()["spec"], json!({"size": 1, "extra": {"free": {"form": true}}}));
    let warned = s.kubectl_ok(&["patch", "widget", "w2", "--type=merge", "-p", r#"{"spec":{"nope":1}}"#]);
    assert!(warned.stderr.contains(r#"unknown field "spec.nope""#), "{warned:?}");
}

fn crd(name: &str, plural: &str, kind: &str, scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {"plural": plural, "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    })
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

#[test]
fn cluster_scope_name_conflicts_and_invalid_definitions() {
    let s = Server::start();
    let r = s.post_json(CRDS, &crd("gizmos.example.com", "gizmos", "Gizmo", "Cluster"));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(condition(&r.json(), "Established")["status"], "True");
    let r = s.post_json(
        "/apis/example.com/v1/gizmos",
        &json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {"free": [1]}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["spec"]["free"], json!([1]), "x-kubernetes-preserve-unknown-fields keeps everything");
    assert!(r.json()["metadata"].get("namespace").is_none());
    assert_status(&s.get("/apis/example.com/v1/namespaces/default/gizmos/g"), 404, "NotFound");
    let listed = s.kubectl_ok(&["get", "gizmos"]).stdout;
    assert!(listed.lines().any(|l| l.starts_with("g ")), "{listed}");

    // Another definition wanting the kind Gizmo: names not accepted, not served.
    let r = s.post_json(CRDS, &crd("gadgets.example.com", "gadgets", "Gizmo", "Namespaced"));
    assert_eq!(r.status, 201, "{}", r.text());
    let names = condition(&r.json(), "NamesAccepted").clone();
    assert_eq!((names["status"].as_str(), names["reason"].as_str()), (Some("False"), Some("KindConflict")));
    assert_eq!(condition(&r.json(), "Established")["status"], "False");
    assert_status(&s.get("/apis/example.com/v1/namespaces/default/gadgets"), 404, "NotFound");

    // A definition kube-apiserver would refuse: 422 with field errors.
    let mut wrong = crd("wrong.example.com", "things", "Thing", "Galaxy");
    wrong["spec"]["versions"][0]["storage"] = json!(false);
    let status = assert_status(&s.post_json(CRDS, &wrong), 422, "Invalid");
    let fields: Vec<&str> =
        status["details"]["causes"].as_array().unwrap().iter().filter_map(|c| c["field"].as_str()).collect();
    assert_eq!(fields, ["metadata.name", "spec.scope", "spec.versions"], "{status}");
    assert_status(&s.get("/apis/example.com/v1/things"), 404, "NotFound");

    // After a restart the recovered definitions are served again.
    let mut s = s;
    s.terminate();
    s.restart();
    assert_eq!(s.get_ok("/apis/example.com/v1/gizmos/g")["spec"]["free"], json!([1]));
    assert_status(&s.get("/apis/example.com/v1/namespaces/default/gadgets"), 404, "NotFound");
}

/// The definition kube-apiserver v1.36 stored for `kubectl apply` of
/// widgets.example.com (tests/fixtures/kube-v1.36/lists): the same create
/// (the body kubectl sent, as its last-applied annotation shows, under
/// kubectl's field manager) stores the same defaulted spec, the status its
/// strategy and controllers write, and the same managedFields: the creator's
/// fields by Go's omitempty/pointer facts (no `.` under `f:spec` or
/// `f:names`), and `kube-apiserver`'s status entry.
#[test]
fn a_definition_is_stored_as_kube_apiserver_stores_it() {
    let list: Value = serde_json::from_str(include_str!(
        "fixtures/kube-v1.36/lists/apiextensions.k8s.io_v1_customresourcedefinitions.json"
    ))
    .unwrap();
    let kube = &list["items"][0];
    let annotation = "kubectl.kubernetes.io/last-applied-configuration";
    let applied = kube["metadata"]["annotations"][annotation].as_str().unwrap();
    let mut body: Value = serde_json::from_str(applied).unwrap();
    body["metadata"]["annotations"] = json!({ annotation: applied });
    let s = Server::start();
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let r = s.post_json(&format!("{path}?fieldManager=kubectl-client-side-apply"), &body);
    assert_eq!(r.status, 201, "{}", r.text());
    let ours = s.get_ok(&format!("{path}/widgets.example.com"));
    let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    assert_eq!(ours["spec"], kube["spec"]);
    assert_eq!(keys(&ours["spec"]), keys(&kube["spec"]), "spec in Go order");
    assert_eq!(keys(&ours["spec"]["names"]), keys(&kube["spec"]["names"]));
    assert_eq!(keys(&ours["status"]), keys(&kube["status"]), "status in Go order");
    assert_eq!(ours["status"]["acceptedNames"], kube["status"]["acceptedNames"]);
    assert_eq!(ours["status"]["storedVersions"], kube["status"]["storedVersions"]);
    let conditions = |crd: &Value| -> Vec<Value> {
        let mut list = crd["status"]["conditions"].as_array().cloned().unwrap_or_default();
        for c in &mut list {
            c.as_object_mut().unwrap().shift_remove("lastTransitionTime");
        }
        list
    };
    assert_eq!(conditions(&ours), conditions(&kube));
    let entries = |crd: &Value| -> Vec<Value> {
        let mut list = crd["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
        for e in &mut list {
            e.as_object_mut().unwrap().shift_remove("time");
        }
        list
    };
    assert_eq!(entries(&ours), entries(&kube));
}
