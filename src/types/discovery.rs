//! Discovery documents, built from the [`Registry`]: `/api` (APIVersions),
//! `/apis` (APIGroupList), `/apis/{group}` (APIGroup), `/api/v1` and
//! `/apis/{group}/{version}` (APIResourceList), the aggregated discovery
//! documents (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList) that kubectl and
//! client-go ask for first, and `/version`.
//!
//! Invariant: pure functions of the registry; no I/O, no HTTP. The API layer
//! chooses the document from the path and the `Accept` header, and must answer
//! an aggregated request with the content type
//! [`AGGREGATED_DISCOVERY_V2_CONTENT_TYPE`], which is how client-go tells the
//! two shapes apart.
//! Invariant: groups, versions, resources and subresources are listed in the
//! same order in every document (the registry's discovery order, resources by
//! name), so the documents are deterministic and cacheable.

use super::registry::{compare_groups, review_resources, GroupVersion, Registry, ResourceInfo};
use serde_json::{json, Map, Value};

/// The `Accept` media type (and the response `Content-Type`) of aggregated
/// discovery. client-go checks the response's `g`, `v` and `as` parameters.
pub const AGGREGATED_DISCOVERY_V2_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The Kubernetes version Shardline presents itself as.
pub const KUBERNETES_MAJOR: &str = "1";
pub const KUBERNETES_MINOR: &str = "36";
/// `gitVersion` of `/version`: a valid semantic version, with build metadata
/// naming the implementation.
pub const GIT_VERSION: &str = "v1.36.0+shardline";

/// `/api`: the legacy group's versions. `server_address` is the `host:port`
/// clients should use (kube lists it for the client CIDR `0.0.0.0/0`).
pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            { "clientCIDR": "0.0.0.0/0", "serverAddress": server_address }
        ],
    })
}

/// The distinct non-core groups, in discovery order, each with its versions
/// (most preferred first): the registry's, and the review APIs'.
fn groups(registry: &Registry) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut all = registry.group_versions();
    for review in review_resources() {
        if !all.iter().any(|gv| gv.group == review.group && gv.version == review.version) {
            all.push(GroupVersion { group: review.group.clone(), version: review.version.clone() });
        }
    }
    all.sort_by(|a, b| compare_groups(&a.group, &b.group));
    for GroupVersion { group, version } in all {
        if group.is_empty() {
            continue;
        }
        match out.iter_mut().find(|(g, _)| *g == group) {
            Some((_, versions)) => versions.push(version),
            None => out.push((group, vec![version])),
        }
    }
    out
}

fn api_group_value(group: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({ "groupVersion": format!("{group}/{v}"), "version": v });
    let mut value = json!({
        "name": group,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
    });
    if let Some(preferred) = versions.first() {
        value["preferredVersion"] = gv(preferred);
    }
    value
}

/// `/apis`: every non-core group.
pub fn api_group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = groups(registry).iter().map(|(g, versions)| api_group_value(g, versions)).collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// `/apis/{group}`, or `None` if the group is not served.
pub fn api_group(registry: &Registry, group: &str) -> Option<Value> {
    let (_, versions) = groups(registry).into_iter().find(|(g, _)| g == group)?;
    let mut value = api_group_value(group, &versions);
    let fields = value.as_object_mut()?;
    let mut out = Map::new();
    out.insert("kind".into(), json!("APIGroup"));
    out.insert("apiVersion".into(), json!("v1"));
    out.append(fields);
    Some(Value::Object(out))
}

fn sorted_resources<'a>(registry: &'a Registry, group: &str, version: &str) -> Vec<&'a ResourceInfo> {
    let mut resources: Vec<&ResourceInfo> =
        registry.iter().chain(review_resources().iter()).filter(|r| r.group == group && r.version == version).collect();
    resources.sort_by(|a, b| a.resource.cmp(&b.resource));
    resources
}

fn sorted_subresources(info: &ResourceInfo) -> Vec<&str> {
    let mut subs: Vec<&str> = info.subresources.iter().map(String::as_str).collect();
    subs.sort_unstable();
    subs
}

/// Inserts `key: [..]` only when the list is non-empty, as Go's `omitempty`.
fn insert_list(map: &mut Map<String, Value>, key: &str, items: &[String]) {
    if !items.is_empty() {
        map.insert(key.into(), json!(items));
    }
}

/// `/api/v1` or `/apis/{group}/{version}`: an APIResourceList with one entry
/// per resource and one per subresource (`pods/status`), or `None` if the
/// group-version is not served.
pub fn api_resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let resources = sorted_resources(registry, group, version);
    if resources.is_empty() {
        return None;
    }
    let mut entries = Vec::new();
    for info in resources {
        let mut entry = Map::new();
        entry.insert("name".into(), json!(info.resource));
        entry.insert("singularName".into(), json!(info.singular));
        entry.insert("namespaced".into(), json!(info.namespaced));
        entry.insert("kind".into(), json!(info.kind));
        entry.insert("verbs".into(), json!(info.verbs));
        insert_list(&mut entry, "shortNames", &info.short_names);
        insert_list(&mut entry, "categories", &info.categories);
        entries.push(Value::Object(entry));
        for sub in sorted_subresources(info) {
            let Some((sub_group, sub_version, sub_kind)) = info.subresource_response_kind(sub) else {
                continue;
            };
            let mut entry = Map::new();
            entry.insert("name".into(), json!(format!("{}/{sub}", info.resource)));
            entry.insert("singularName".into(), json!(""));
            entry.insert("namespaced".into(), json!(info.namespaced));
            if (sub_group, sub_version) != (info.group.as_str(), info.version.as_str()) {
                entry.insert("group".into(), json!(sub_group));
                entry.insert("version".into(), json!(sub_version));
            }
            entry.insert("kind".into(), json!(sub_kind));
            entry.insert("verbs".into(), json!(info.subresource_verbs(sub)));
            entries.push(Value::Object(entry));
        }
    }
    let group_version = GroupVersion { group: group.into(), version: version.into() }.api_version();
    let mut out = Map::new();
    out.insert("kind".into(), json!("APIResourceList"));
    if !group.is_empty() {
        // kube-apiserver omits apiVersion on /api/v1 and sets it on groups.
        out.insert("apiVersion".into(), json!("v1"));
    }
    out.insert("groupVersion".into(), json!(group_version));
    out.insert("resources".into(), Value::Array(entries));
    Some(Value::Object(out))
}

fn gvk_value(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "version": version, "kind": kind })
}

fn aggregated_resource(info: &ResourceInfo) -> Value {
    let mut entry = Map::new();
    entry.insert("resource".into(), json!(info.resource));
    entry.insert("responseKind".into(), gvk_value(&info.group, &info.version, &info.kind));
    entry.insert("scope".into(), json!(if info.namespaced { "Namespaced" } else { "Cluster" }));
    entry.insert("singularResource".into(), json!(info.singular));
    entry.insert("verbs".into(), json!(info.verbs));
    insert_list(&mut entry, "shortNames", &info.short_names);
    insert_list(&mut entry, "categories", &info.categories);
    let subresources: Vec<Value> = sorted_subresources(info)
        .into_iter()
        .filter_map(|sub| {
            let (g, v, k) = info.subresource_response_kind(sub)?;
            Some(json!({
                "subresource": sub,
                "responseKind": gvk_value(g, v, k),
                "verbs": info.subresource_verbs(sub),
            }))
        })
        .collect();
    if !subresources.is_empty() {
        entry.insert("subresources".into(), Value::Array(subresources));
    }
    Value::Object(entry)
}

fn aggregated_group(registry: &Registry, group: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|version| {
            let resources: Vec<Value> =
                sorted_resources(registry, group, version).into_iter().map(aggregated_resource).collect();
            json!({ "version": version, "resources": resources, "freshness": "Current" })
        })
        .collect();
    let metadata = if group.is_empty() {
        json!({ "creationTimestamp": null })
    } else {
        json!({ "name": group, "creationTimestamp": null })
    };
    json!({ "metadata": metadata, "versions": versions })
}

fn aggregated_list(items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// Aggregated discovery for `/api`: one item, the legacy core group.
pub fn aggregated_discovery_api(registry: &Registry) -> Value {
    let versions: Vec<String> =
        registry.group_versions().into_iter().filter(|gv| gv.group.is_empty()).map(|gv| gv.version).collect();
    aggregated_list(vec![aggregated_group(registry, "", &versions)])
}

/// Aggregated discovery for `/apis`: every other group, in priority order.
pub fn aggregated_discovery_apis(registry: &Registry) -> Value {
    let items = groups(registry).iter().map(|(g, versions)| aggregated_group(registry, g, versions)).collect();
    aggregated_list(items)
}

/// Go's name for the architecture this binary runs on.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// `/version`: every field client-go's and k8s-openapi's `version.Info`
/// declare (kube-rs rejects a document missing any of them).
pub fn version_info() -> Value {
    json!({
        "major": KUBERNETES_MAJOR,
        "minor": KUBERNETES_MINOR,
        "emulationMajor": KUBERNETES_MAJOR,
        "emulationMinor": KUBERNETES_MINOR,
        "minCompatibilityMajor": KUBERNETES_MAJOR,
        "minCompatibilityMinor": "35",
        "gitVersion": GIT_VERSION,
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "none (shardline is written in Rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, go_arch()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::builtin()
    }

    fn strings(v: &Value) -> Vec<&str> {
        v.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
    }

    #[test]
    fn api_versions_shape() {
        let v = api_versions("10.0.0.1:6443");
        assert_eq!(v["kind"], "APIVersions");
        assert_eq!(strings(&v["versions"]), ["v1"]);
        assert_eq!(v["serverAddressByClientCIDRs"][0]["clientCIDR"], "0.0.0.0/0");
        assert_eq!(v["serverAddressByClientCIDRs"][0]["serverAddress"], "10.0.0.1:6443");
    }

    #[test]
    fn api_group_list_shape_and_order() {
        let v = api_group_list(&registry());
        assert_eq!(v["kind"], "APIGroupList");
        assert_eq!(v["apiVersion"], "v1");
        let names: Vec<&str> =
            v["groups"].as_array().expect("groups").iter().filter_map(|g| g["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "apiregistration.k8s.io",
                "apps",
                "events.k8s.io",
                "authentication.k8s.io",
                "authorization.k8s.io",
                "autoscaling",
                "batch",
                "certificates.k8s.io",
                "networking.k8s.io",
                "policy",
                "rbac.authorization.k8s.io",
                "storage.k8s.io",
                "admissionregistration.k8s.io",
                "apiextensions.k8s.io",
                "scheduling.k8s.io",
                "coordination.k8s.io",
                "node.k8s.io",
                "discovery.k8s.io",
                "flowcontrol.apiserver.k8s.io",
                "resource.k8s.io",
            ]
        );
        let apps = &v["groups"][1];
        assert_eq!(apps["versions"][0]["groupVersion"], "apps/v1");
        assert_eq!(apps["versions"][0]["version"], "v1");
        assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
        let group = api_group(&registry(), "batch").expect("batch");
        assert_eq!(group["kind"], "APIGroup");
        assert_eq!(group["name"], "batch");
        assert!(api_group(&registry(), "").is_none());
        assert!(api_group(&registry(), "example.com").is_none());
    }

    #[test]
    fn core_resource_list() {
        let v = api_resource_list(&registry(), "", "v1").expect("core");
        assert_eq!(v["kind"], "APIResourceList");
        assert_eq!(v["groupVersion"], "v1");
        let resources = v["resources"].as_array().expect("resources");
        let names: Vec<&str> = resources.iter().filter_map(|r| r["name"].as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert!(names.contains(&"pods/status"));
        // The control plane's subresources, with kube's kinds and verbs.
        let exec = resources.iter().find(|r| r["name"] == "pods/exec").expect("pods/exec");
        assert_eq!((exec["kind"].as_str(), strings(&exec["verbs"])), (Some("PodExecOptions"), vec!["create", "get"]));
        let eviction = resources.iter().find(|r| r["name"] == "pods/eviction").expect("pods/eviction");
        assert_eq!((eviction["group"].as_str(), eviction["version"].as_str()), (Some("policy"), Some("v1")));
        let token = resources.iter().find(|r| r["name"] == "serviceaccounts/token").expect("token");
        assert_eq!(
            (token["group"].as_str(), token["kind"].as_str()),
            (Some("authentication.k8s.io"), Some("TokenRequest"))
        );
        assert!(!names.contains(&"configmaps/status"));
        let pods = resources.iter().find(|r| r["name"] == "pods").expect("pods");
        assert_eq!(pods["singularName"], "pod");
        assert_eq!(pods["namespaced"], true);
        assert_eq!(pods["kind"], "Pod");
        assert_eq!(strings(&pods["shortNames"]), ["po"]);
        assert_eq!(strings(&pods["categories"]), ["all"]);
        assert!(strings(&pods["verbs"]).contains(&"watch"));
        let status = resources.iter().find(|r| r["name"] == "pods/status").expect("status");
        assert_eq!(status["singularName"], "");
        assert_eq!(status["kind"], "Pod");
        assert_eq!(strings(&status["verbs"]), ["get", "patch", "update"]);
        let ns = resources.iter().find(|r| r["name"] == "namespaces").expect("ns");
        assert_eq!(ns["namespaced"], false);
        // omitempty: secrets have no short names or categories.
        let secrets = resources.iter().find(|r| r["name"] == "secrets").expect("secrets");
        assert!(secrets.get("shortNames").is_none() && secrets.get("categories").is_none());
    }

    #[test]
    fn group_resource_list_with_scale() {
        let v = api_resource_list(&registry(), "apps", "v1").expect("apps");
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["groupVersion"], "apps/v1");
        let resources = v["resources"].as_array().expect("resources");
        let scale = resources.iter().find(|r| r["name"] == "deployments/scale").expect("scale");
        assert_eq!(scale["group"], "autoscaling");
        assert_eq!(scale["version"], "v1");
        assert_eq!(scale["kind"], "Scale");
        assert!(api_resource_list(&registry(), "apps", "v2").is_none());
        assert!(api_resource_list(&registry(), "example.com", "v1").is_none());
    }

    #[test]
    fn aggregated_core() {
        let v = aggregated_discovery_api(&registry());
        assert_eq!(v["kind"], "APIGroupDiscoveryList");
        assert_eq!(v["apiVersion"], "apidiscovery.k8s.io/v2");
        let items = v["items"].as_array().expect("items");
        assert_eq!(items.len(), 1);
        assert!(items[0]["metadata"].get("name").is_none());
        let version = &items[0]["versions"][0];
        assert_eq!(version["version"], "v1");
        assert_eq!(version["freshness"], "Current");
        let pods =
            version["resources"].as_array().expect("resources").iter().find(|r| r["resource"] == "pods").expect("pods");
        assert_eq!(pods["responseKind"], json!({ "group": "", "version": "v1", "kind": "Pod" }));
        assert_eq!(pods["scope"], "Namespaced");
        assert_eq!(pods["singularResource"], "pod");
        assert_eq!(strings(&pods["shortNames"]), ["po"]);
        assert_eq!(strings(&pods["categories"]), ["all"]);
        let subresources = pods["subresources"].as_array().expect("subresources");
        let names: Vec<&str> = subresources.iter().filter_map(|s| s["subresource"].as_str()).collect();
        assert_eq!(
            names,
            [
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "proxy",
                "resize",
                "status"
            ]
        );
        let status = &subresources[9];
        assert_eq!(status["responseKind"]["kind"], "Pod");
        assert_eq!(strings(&status["verbs"]), ["get", "patch", "update"]);
        assert_eq!(subresources[3]["responseKind"], json!({"group": "policy", "version": "v1", "kind": "Eviction"}));
        assert_eq!(strings(&subresources[1]["verbs"]), ["create"]);
        let nodes = version["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["resource"] == "nodes")
            .expect("nodes");
        assert_eq!(nodes["scope"], "Cluster");
    }

    #[test]
    fn aggregated_groups() {
        let v = aggregated_discovery_apis(&registry());
        let items = v["items"].as_array().expect("items");
        let names: Vec<&str> = items.iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
        assert_eq!(
            names,
            [
                "apiregistration.k8s.io",
                "apps",
                "events.k8s.io",
                "authentication.k8s.io",
                "authorization.k8s.io",
                "autoscaling",
                "batch",
                "certificates.k8s.io",
                "networking.k8s.io",
                "policy",
                "rbac.authorization.k8s.io",
                "storage.k8s.io",
                "admissionregistration.k8s.io",
                "apiextensions.k8s.io",
                "scheduling.k8s.io",
                "coordination.k8s.io",
                "node.k8s.io",
                "discovery.k8s.io",
                "flowcontrol.apiserver.k8s.io",
                "resource.k8s.io",
            ]
        );
        let deploy = items[1]["versions"][0]["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["resource"] == "deployments")
            .expect("deployments");
        assert_eq!(strings(&deploy["shortNames"]), ["deploy"]);
        let scale = &deploy["subresources"][0];
        assert_eq!(scale["subresource"], "scale");
        assert_eq!(scale["responseKind"], json!({ "group": "autoscaling", "version": "v1", "kind": "Scale" }));
        // Every resource names its kind: client-go rejects entries without one.
        for item in items {
            for version in item["versions"].as_array().expect("versions") {
                for r in version["resources"].as_array().expect("resources") {
                    assert!(r["responseKind"]["kind"].as_str().is_some_and(|k| !k.is_empty()));
                    assert!(matches!(r["scope"].as_str(), Some("Namespaced" | "Cluster")));
                }
            }
        }
    }

    #[test]
    fn custom_resources_appear_after_builtins() {
        let mut r = registry();
        let info = ResourceInfo {
            group: "example.com".into(),
            version: "v1".into(),
            resource: "widgets".into(),
            singular: "widget".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            namespaced: true,
            short_names: vec![],
            categories: vec![],
            verbs: vec!["get".into(), "list".into(), "watch".into()],
            selectable_fields: vec![],
            allow_create_on_update: false,
            has_generation: true,
            subresources: vec!["status".into(), "scale".into()],
            custom: None,
        };
        assert!(r.insert(info).is_ok());
        let v = aggregated_discovery_apis(&r);
        let last = v["items"].as_array().and_then(|a| a.last()).expect("items");
        assert_eq!(last["metadata"]["name"], "example.com");
        let subs = &last["versions"][0]["resources"][0]["subresources"];
        assert_eq!(subs[0]["subresource"], "scale");
        assert_eq!(subs[1]["subresource"], "status");
        let list = api_group_list(&r);
        assert_eq!(list["groups"].as_array().and_then(|g| g.last()).map(|g| &g["name"]), Some(&json!("example.com")));
    }

    #[test]
    fn version_shape() {
        let v = version_info();
        for key in [
            "major",
            "minor",
            "gitVersion",
            "gitCommit",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform",
        ] {
            assert!(v[key].is_string(), "{key}");
        }
        assert_eq!(v["major"], "1");
        assert_eq!(v["minor"], "36");
        assert!(v["gitVersion"].as_str().is_some_and(|g| g.starts_with("v1.36.0")));
        assert!(v["platform"].as_str().is_some_and(|p| p.contains('/')));
    }
}
