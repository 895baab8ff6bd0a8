//! Service cluster IPs and node ports against the real binary
//! (`--service-cluster-ip-range`, `--service-node-port-range`).
//!
//! Owns: two Services get distinct IPs in the range with kube's IP family
//! fields; a requested IP or node port in use, or out of range, is 422 in
//! kube's words; a full range is kube's 500; deleting a Service frees its IP
//! and ports; an update to ClusterIP frees node ports and back to NodePort
//! allocates; a PUT without `clusterIP` keeps the allocated one; headless
//! and ExternalName Services get none; dry-run claims nothing; a restart keeps
//! the claims; two instances over one etcd never hand out one value twice.

mod common;

use common::etcd::*;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const SVC: &str = "/api/v1/namespaces/default/services";

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

fn cluster_ip(name: &str) -> Value {
    service(name, json!({"ports": [{"port": 80}], "selector": {"app": name}}))
}

fn with_ip(name: &str, ip: &str) -> Value {
    service(name, json!({"ports": [{"port": 80}], "selector": {"app": name}, "clusterIP": ip}))
}

fn node_port(name: &str, node_port: Option<u16>) -> Value {
    let mut port = json!({"port": 80});
    if let Some(p) = node_port {
        port["nodePort"] = json!(p);
    }
    service(name, json!({"type": "NodePort", "ports": [port], "selector": {"app": name}}))
}

#[track_caller]
fn created(s: &Server, body: &Value) -> Value {
    let r = s.post_json(SVC, body);
    assert_eq!(r.status, 201, "create {}: {}", body["metadata"]["name"], r.text());
    r.json()
}

/// The 422 a taken or out-of-range value gets; returns its single cause's message.
#[track_caller]
fn refused(s: &Server, body: &Value, field: &str) -> String {
    let r = s.post_json(SVC, body);
    let status = assert_status(&r, 422, "Invalid");
    let causes = status["details"]["causes"].as_array().cloned().unwrap_or_default();
    assert_eq!(causes.len(), 1, "{status}");
    assert_eq!(causes[0]["field"], field, "{status}");
    assert_eq!(causes[0]["reason"], "FieldValueInvalid", "{status}");
    causes[0]["message"].as_str().unwrap_or_default().to_string()
}

fn ip_of(svc: &Value) -> String {
    svc["spec"]["clusterIP"].as_str().unwrap_or_default().to_string()
}

fn in_default_range(ip: &str) -> bool {
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    octets.len() == 4 && octets[..3] == [10, 0, 0] && (2..=254).contains(&octets[3])
}

#[test]
fn services_get_distinct_cluster_ips_with_kube_s_family_fields() {
    let s = Server::start();
    let a = created(&s, &cluster_ip("a"));
    let b = created(&s, &cluster_ip("b"));
    for svc in [&a, &b] {
        let ip = ip_of(svc);
        assert!(in_default_range(&ip), "{ip} is in 10.0.0.0/24, not .0, .1 or .255");
        assert_eq!(svc["spec"]["clusterIPs"], json!([ip]));
        assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(svc["spec"]["ipFamilyPolicy"], json!("SingleStack"));
    }
    assert_ne!(ip_of(&a), ip_of(&b));
    // What GET serves is what was answered.
    assert_eq!(s.get_ok(&format!("{SVC}/a"))["spec"], a["spec"]);

    // Headless: no IP, kube's families; selectorless headless: dual-stack policy.
    let headless = created(&s, &with_ip("headless", "None"));
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    assert_eq!(headless["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], json!("SingleStack"));
    let bare = created(&s, &service("bare", json!({"clusterIP": "None", "ports": [{"port": 80}]})));
    assert_eq!(bare["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert_eq!(bare["spec"]["ipFamilyPolicy"], json!("RequireDualStack"));
    let external = created(&s, &service("ext", json!({"type": "ExternalName", "externalName": "db.example.com"})));
    assert!(external["spec"].get("clusterIP").is_none(), "{external}");
    assert!(external["spec"].get("ipFamilies").is_none(), "{external}");

    // A PUT without clusterIP keeps the allocated one (kube's patchAllocatedValues).
    let mut again = cluster_ip("a");
    again["spec"]["ports"][0]["port"] = json!(8080);
    let r = s.put_json(&format!("{SVC}/a"), &again);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(ip_of(&r.json()), ip_of(&a));
    assert_eq!(r.json()["spec"]["clusterIPs"], a["spec"]["clusterIPs"]);
}

#[test]
fn kubectl_apply_twice_keeps_the_allocated_values() {
    let s = Server::start();
    let manifest = s.dir.path().join("svc.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: NodePort\n  selector:\n    app: web\n  ports:\n  - port: 80\n",
    )
    .expect("write manifest");
    let path = manifest.display().to_string();
    for args in [&["apply", "-f", &path][..], &["apply", "-f", &path], &["apply", "--server-side", "-f", &path]] {
        s.kubectl_ok(args);
    }
    let first = s.get_ok(&format!("{SVC}/web"));
    assert!(in_default_range(&ip_of(&first)), "{first}");
    let port = first["spec"]["ports"][0]["nodePort"].clone();
    // Again, and once more server-side: nothing moves.
    s.kubectl_ok(&["apply", "-f", &path]);
    s.kubectl_ok(&["apply", "--server-side", "-f", &path]);
    let again = s.get_ok(&format!("{SVC}/web"));
    assert_eq!(ip_of(&again), ip_of(&first));
    assert_eq!(again["spec"]["ports"][0]["nodePort"], port);
    assert_eq!(again["spec"]["clusterIPs"], first["spec"]["clusterIPs"]);
}

#[test]
fn a_requested_ip_in_use_or_out_of_range_is_422_and_a_deleted_service_frees_it() {
    let s = Server::start();
    created(&s, &with_ip("first", "10.0.0.5"));
    let message = refused(&s, &with_ip("second", "10.0.0.5"), "spec.clusterIPs");
    assert_eq!(
        message,
        "Invalid value: []string{\"10.0.0.5\"}: failed to allocate IP 10.0.0.5: provided IP is already allocated"
    );
    let message = refused(&s, &with_ip("second", "10.1.0.5"), "spec.clusterIPs");
    assert!(
        message.ends_with("failed to allocate IP 10.1.0.5: the provided network does not match the current range"),
        "{message}"
    );
    // The kubernetes Service's address is held for it.
    let message = refused(&s, &with_ip("second", "10.0.0.1"), "spec.clusterIPs");
    assert!(message.ends_with("provided IP is already allocated"), "{message}");
    assert_eq!(s.get(&format!("{SVC}/second")).status, 404, "nothing stored");

    // Deleting the Service frees its IP: another Service gets it.
    let r = s.delete(&format!("{SVC}/first"));
    assert_eq!(r.status, 200, "{}", r.text());
    let second = created(&s, &with_ip("second", "10.0.0.5"));
    assert_eq!(ip_of(&second), "10.0.0.5");
}

#[test]
fn deleting_a_namespace_or_a_collection_frees_its_services_values() {
    let s = Server::start();
    let r = s.post_json("/api/v1/namespaces", &json!({"metadata": {"name": "team"}}));
    assert_eq!(r.status, 201, "{}", r.text());
    let r = s.post_json("/api/v1/namespaces/team/services", &with_ip("web", "10.0.0.77"));
    assert_eq!(r.status, 201, "{}", r.text());
    for i in 0..2 {
        created(&s, &node_port(&format!("np{i}"), Some(30100 + i)));
    }
    refused(&s, &with_ip("web", "10.0.0.77"), "spec.clusterIPs");
    assert_eq!(s.delete("/api/v1/namespaces/team").status, 200);
    // The namespace's contents go in the background.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while s.get("/api/v1/namespaces/team").status != 404 {
        assert!(std::time::Instant::now() < deadline, "namespace team still there");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    created(&s, &with_ip("web", "10.0.0.77"));
    // deletecollection releases every Service it deletes.
    assert_eq!(s.delete(&format!("{SVC}?labelSelector=")).status, 200);
    for i in 0..2 {
        created(&s, &node_port(&format!("again{i}"), Some(30100 + i)));
    }
}

#[test]
fn node_ports_are_allocated_refused_when_taken_and_freed() {
    let s = Server::start();
    let dynamic = created(&s, &node_port("dynamic", None));
    let port = dynamic["spec"]["ports"][0]["nodePort"].as_u64().unwrap_or(0);
    assert!((30000..=32767).contains(&port), "node port {port} in 30000-32767: {dynamic}");
    assert!(in_default_range(&ip_of(&dynamic)));

    created(&s, &node_port("fixed", Some(30080)));
    let message = refused(&s, &node_port("other", Some(30080)), "spec.ports[0].nodePort");
    assert_eq!(message, "Invalid value: 30080: provided port is already allocated");
    let message = refused(&s, &node_port("other", Some(40000)), "spec.ports[0].nodePort");
    assert_eq!(
        message,
        "Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767"
    );

    // Changing type to ClusterIP releases the node port...
    let mut fixed = s.get_ok(&format!("{SVC}/fixed"));
    fixed["spec"]["type"] = json!("ClusterIP");
    if let Some(p) = fixed["spec"]["ports"][0].as_object_mut() {
        p.remove("nodePort");
    }
    if let Some(spec) = fixed["spec"].as_object_mut() {
        spec.remove("externalTrafficPolicy");
    }
    let r = s.put_json(&format!("{SVC}/fixed"), &fixed);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["spec"]["ports"][0].get("nodePort").is_none(), "{}", r.text());
    let other = created(&s, &node_port("other", Some(30080)));
    assert_eq!(other["spec"]["ports"][0]["nodePort"], 30080);

    // ...and back to NodePort allocates a new one.
    let mut fixed = s.get_ok(&format!("{SVC}/fixed"));
    fixed["spec"]["type"] = json!("NodePort");
    let r = s.put_json(&format!("{SVC}/fixed"), &fixed);
    assert_eq!(r.status, 200, "{}", r.text());
    let new_port = r.json()["spec"]["ports"][0]["nodePort"].as_u64().unwrap_or(0);
    assert!((30000..=32767).contains(&new_port) && new_port != 30080, "{}", r.text());

    // Deleting a NodePort Service frees its port.
    assert_eq!(s.delete(&format!("{SVC}/other")).status, 200);
    created(&s, &node_port("again", Some(30080)));

    // A LoadBalancer with externalTrafficPolicy Local also gets a health check node port.
    let lb = created(
        &s,
        &service(
            "lb",
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "selector": {"app": "lb"},
                "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}),
        ),
    );
    let mut ports: Vec<u64> = (0..2).map(|i| lb["spec"]["ports"][i]["nodePort"].as_u64().unwrap_or(0)).collect();
    ports.push(lb["spec"]["healthCheckNodePort"].as_u64().unwrap_or(0));
    assert!(ports.iter().all(|p| (30000..=32767).contains(p)), "{lb}");
    assert_eq!(ports.iter().collect::<BTreeSet<_>>().len(), 3, "three distinct ports: {lb}");
}

#[test]
fn dry_run_claims_nothing() {
    let s = Server::start();
    let r = s.post_json(&format!("{SVC}?dryRun=All"), &with_ip("dry", "10.0.0.60"));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(ip_of(&r.json()), "10.0.0.60");
    // A dynamic dry-run answers kube's placeholder values.
    let r = s.post_json(&format!("{SVC}?dryRun=All"), &node_port("dry", None));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(ip_of(&r.json()), "10.0.0.0");
    assert_eq!(r.json()["spec"]["ports"][0]["nodePort"], 32769);
    let r = s.post_json(&format!("{SVC}?dryRun=All"), &node_port("dry", Some(30090)));
    assert_eq!(r.status, 201, "{}", r.text());
    // Nothing was claimed: the same values are free for real writes.
    assert_eq!(ip_of(&created(&s, &with_ip("real", "10.0.0.60"))), "10.0.0.60");
    created(&s, &node_port("real-np", Some(30090)));
    // A dry-run delete frees nothing.
    let r = s.request("DELETE", &format!("{SVC}/real?dryRun=All"), &[("Accept", "application/json")], None);
    assert_eq!(r.status, 200, "{}", r.text());
    refused(&s, &with_ip("taken", "10.0.0.60"), "spec.clusterIPs");
}

#[test]
fn a_full_range_is_kube_s_500_and_a_restart_keeps_the_claims() {
    // A /29 holds .1 to .6; .1 is the kubernetes Service's: five Services fit.
    let mut s = Server::start_with(Launch {
        // Snapshots every few records: the claims go through them too.
        extra_args: ["--service-cluster-ip-range", "10.9.0.0/29", "--log-snapshot-every-records", "3"]
            .map(String::from)
            .to_vec(),
        ..Launch::default()
    });
    let mut ips = BTreeSet::new();
    for i in 0..5 {
        ips.insert(ip_of(&created(&s, &cluster_ip(&format!("s{i}")))));
    }
    let expected: BTreeSet<String> = (2..=6).map(|i| format!("10.9.0.{i}")).collect();
    assert_eq!(ips, expected);
    let r = s.post_json(SVC, &cluster_ip("full"));
    let status = assert_status(&r, 500, "InternalError");
    assert_eq!(status["message"], "Internal error occurred: failed to allocate a serviceIP: range is full");

    // After a restart the claims are still there (they are in the log and
    // in its snapshots).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let has_snapshot = |dir: &std::path::Path| {
        std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.starts_with("snapshot-") && name.ends_with(".snap")
        })
    };
    while !has_snapshot(&s.data_dir.join("log")) && !has_snapshot(&s.data_dir) {
        assert!(std::time::Instant::now() < deadline, "no snapshot written");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    s.kill();
    s.restart();
    let r = s.post_json(SVC, &cluster_ip("full"));
    assert_status(&r, 500, "InternalError");
    assert_eq!(s.delete(&format!("{SVC}/s3")).status, 200);
    let freed = ip_of(&created(&s, &cluster_ip("full")));
    assert!(expected.contains(&freed), "{freed}");
}

#[test]
fn two_instances_over_one_etcd_never_hand_out_one_value_twice() {
    let etcd = Etcd::start();
    let range = ["--service-cluster-ip-range", "10.8.0.0/28"];
    let a = shardline_on(&etcd, &range);
    let b = shardline_on(&etcd, &range);
    // A requested value taken through one instance is refused by the other.
    let np = created(&a, &node_port("np-a", Some(31000)));
    let message = refused(&b, &node_port("np-b", Some(31000)), "spec.ports[0].nodePort");
    assert_eq!(message, "Invalid value: 31000: provided port is already allocated");
    // A /28 has 14 addresses, one held for the kubernetes Service: 13 fit,
    // whichever instance allocates them.
    let mut ips = BTreeSet::from([ip_of(&np)]);
    for i in 0..12 {
        let server = if i % 2 == 0 { &a } else { &b };
        let ip = ip_of(&created(server, &cluster_ip(&format!("s{i}"))));
        assert!(ips.insert(ip.clone()), "{ip} handed out twice");
    }
    for server in [&a, &b] {
        let r = server.post_json(SVC, &cluster_ip("full"));
        assert_status(&r, 500, "InternalError");
    }
    // Freed through B, reused through A.
    let taken = ip_of(&b.get_ok(&format!("{SVC}/s0")));
    assert_eq!(b.delete(&format!("{SVC}/s0")).status, 200);
    let reused = created(&a, &with_ip("reuse", &taken));
    assert_eq!(ip_of(&reused), taken);
}
