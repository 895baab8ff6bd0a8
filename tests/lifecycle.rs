//! Process lifecycle of a real `shardline` binary: start-up report, clean
//! shutdown, durability across SIGTERM and SIGKILL, and running unprivileged
//! with an 8 MiB RLIMIT_MEMLOCK.
//!
//! Owns: the promises an operator relies on. The server prints its limits and
//! then `listening on`; SIGTERM and SIGINT exit 0; every write acknowledged
//! before a stop (clean or SIGKILL) is there, unchanged, after a restart on the
//! same `--data-dir`; and a non-root user with the common 8 MiB memlock limit
//! can run it.

mod common;

use common::{
    assert_status, configmap, describe, get_rlimit, resource_version, running_as_root, Launch, Server, NOBODY,
};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const MEMLOCK_8_MIB: u64 = 8 * 1024 * 1024;

#[test]
fn startup_reports_limits_then_listening() {
    let s = Server::start();
    let stderr = s.stderr();
    let lines: Vec<&str> = stderr.lines().collect();
    let listening = lines
        .iter()
        .position(|l| l.contains("listening on"))
        .unwrap_or_else(|| panic!("no \"listening on\" line in stderr:\n{stderr}"));
    assert!(
        lines[listening].contains(&s.addr.port().to_string()),
        "the listening line names the port: {}",
        lines[listening]
    );
    let memlock = lines.iter().position(|l| l.to_ascii_lowercase().contains("memlock"));
    let nofile = lines.iter().position(|l| is_open_files_line(l));
    assert!(memlock.is_some_and(|i| i < listening), "memlock limit must be printed before \"listening on\":\n{stderr}");
    assert!(
        nofile.is_some_and(|i| i < listening),
        "open-files limit must be printed before \"listening on\":\n{stderr}"
    );
}

#[test]
fn sigterm_exits_zero_and_keeps_acknowledged_writes() {
    let mut s = Server::start();
    let r = s.post_json(CM, &configmap("before-term", &[("k", "v")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    let mut updated = created.clone();
    updated["data"]["k"] = "v2".into();
    let r = s.put_json(&format!("{CM}/before-term"), &updated);
    assert_eq!(r.status, 200, "{}", r.text());
    let updated = r.json();

    let status = s.terminate();
    assert_eq!(status.code(), Some(0), "SIGTERM must exit 0, got {}; stderr:\n{}", describe(status), s.stderr());
    assert!(!s.readyz_ok(), "nothing may answer on the port after exit");

    s.restart();
    assert_eq!(s.get_ok(&format!("{CM}/before-term")), updated, "acknowledged update lost or changed across SIGTERM");

    // SIGINT is a clean shutdown too.
    let status = s.interrupt();
    assert_eq!(status.code(), Some(0), "SIGINT must exit 0, got {}; stderr:\n{}", describe(status), s.stderr());
    s.restart();
    assert_eq!(s.get_ok(&format!("{CM}/before-term")), updated);
}

#[test]
fn sigkill_loses_nothing_acknowledged() {
    let mut s = Server::start();
    const N: usize = 40;
    let mut expected: Vec<(String, Value)> = Vec::new();
    for i in 0..N {
        let name = format!("cm-{i:03}");
        let r = s.post_json(CM, &configmap(&name, &[("i", &i.to_string())]));
        assert_eq!(r.status, 201, "{}", r.text());
        expected.push((name, r.json()));
    }
    // Update every third, delete every fifth: the last acknowledged state is what counts.
    for (i, (name, obj)) in expected.iter_mut().enumerate() {
        if i % 3 == 0 {
            let mut next = obj.clone();
            next["data"]["updated"] = "yes".into();
            let r = s.put_json(&format!("{CM}/{name}"), &next);
            assert_eq!(r.status, 200, "{}", r.text());
            *obj = r.json();
        }
    }
    let mut deleted = Vec::new();
    for (i, (name, _)) in expected.iter().enumerate() {
        if i % 5 == 0 {
            let r = s.delete(&format!("{CM}/{name}"));
            assert_eq!(r.status, 200, "{}", r.text());
            deleted.push(name.clone());
        }
    }
    expected.retain(|(name, _)| !deleted.contains(name));
    let max_rv_before: u64 = expected.iter().map(|(_, o)| rv_number(o)).max().unwrap();

    // SIGKILL right after the last acknowledgement.
    s.kill();
    s.restart();

    for (name, obj) in &expected {
        assert_eq!(&s.get_ok(&format!("{CM}/{name}")), obj, "{name} changed across SIGKILL + restart");
    }
    for name in &deleted {
        assert_status(&s.get(&format!("{CM}/{name}")), 404, "NotFound");
    }
    let list = s.get_ok(CM);
    let mut names: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
        .filter(|n| n.starts_with("cm-"))
        .collect();
    names.sort();
    let want: Vec<String> = expected.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, want, "list after restart");

    // New writes after the restart get resourceVersions above every acknowledged one.
    let r = s.post_json(CM, &configmap("after-restart", &[]));
    assert_eq!(r.status, 201, "{}", r.text());
    let rv_after = rv_number(&r.json());
    assert!(rv_after > max_rv_before, "resourceVersion went back after restart: {rv_after} <= {max_rv_before}");
}

/// The resourceVersion of an object as a number. Kubernetes clients must treat
/// it as opaque, but Shardline's is a decimal revision (like etcd's): the
/// restart test needs to see that revisions never go backwards.
fn rv_number(obj: &Value) -> u64 {
    let rv = resource_version(obj);
    rv.parse().unwrap_or_else(|_| panic!("resourceVersion {rv:?} is not a decimal revision"))
}

/// True when `line` says 8388608 or "8 MiB"/"8MiB" as a whole number (not "128 MiB").
fn reports_8_mib(line: &str) -> bool {
    let bytes = line.as_bytes();
    ["8388608", "8 MiB", "8MiB"].iter().any(|needle| {
        line.match_indices(needle).any(|(i, _)| {
            let before_ok = i == 0 || !bytes[i - 1].is_ascii_digit();
            let after = i + needle.len();
            let after_ok = after == bytes.len() || !bytes[after].is_ascii_digit();
            before_ok && after_ok
        })
    })
}

#[test]
fn reports_8_mib_matches_whole_numbers_only() {
    assert!(reports_8_mib("limits: memlock 8388608 bytes"));
    assert!(reports_8_mib("memlock=8 MiB (hard 8 MiB)"));
    assert!(!reports_8_mib("memlock 128 MiB"));
    assert!(!reports_8_mib("memlock 83886080"));
}

fn is_open_files_line(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    l.contains("open files") || l.contains("nofile") || l.contains("open_files")
}

/// As root: runs the server as `nobody` with RLIMIT_MEMLOCK = 8 MiB (the
/// common default for unprivileged users, and what glommio's io_uring rings
/// must fit in). As a non-root user: runs it as that user with the same limit.
#[test]
fn runs_unprivileged_with_8_mib_memlock() {
    let (_, nofile_hard) = get_rlimit(libc::RLIMIT_NOFILE);
    // A distinctive open-files limit the server must report back.
    let nofile = nofile_hard.min(16_000);
    let root = running_as_root();
    if !root {
        let (_, memlock_hard) = get_rlimit(libc::RLIMIT_MEMLOCK);
        assert!(
            memlock_hard >= MEMLOCK_8_MIB,
            "this test needs to set RLIMIT_MEMLOCK to 8 MiB but the hard limit is {memlock_hard} bytes"
        );
    }

    // The binary is copied into a world-readable directory: a fresh clone may
    // live under a home directory that `nobody` cannot traverse.
    let stage = tempfile::Builder::new().prefix("shardline-bin-").tempdir().expect("tempdir for binary");
    fs::set_permissions(stage.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let binary = stage.path().join("shardline");
    fs::copy(common::shardline_bin(), &binary).expect("copy shardline binary");
    fs::set_permissions(&binary, fs::Permissions::from_mode(0o755)).unwrap();

    let launch = Launch {
        memlock_bytes: Some(MEMLOCK_8_MIB),
        nofile: Some(nofile),
        run_as: root.then_some((NOBODY, NOBODY)),
        binary: Some(binary),
        ..Launch::default()
    };
    // The data dir (inside the server's 0700 tempdir) must belong to that user.
    let s = start_prepared(launch, root);

    let stderr = s.stderr();
    let memlock_line = stderr
        .lines()
        .find(|l| l.to_ascii_lowercase().contains("memlock"))
        .unwrap_or_else(|| panic!("no memlock line in stderr:\n{stderr}"));
    assert!(reports_8_mib(memlock_line), "memlock must be reported as 8388608 bytes (8 MiB): {memlock_line}");
    let nofile_line = stderr
        .lines()
        .find(|l| is_open_files_line(l))
        .unwrap_or_else(|| panic!("no open-files line in stderr:\n{stderr}"));
    assert!(nofile_line.contains(&nofile.to_string()), "open-files limit must be reported as {nofile}: {nofile_line}");

    // It serves: create then get.
    let r = s.post_json(CM, &configmap("unprivileged", &[("who", "nobody")]));
    assert_eq!(r.status, 201, "create as unprivileged server: {}\nstderr:\n{}", r.text(), s.stderr());
    let created = r.json();
    assert_eq!(s.get_ok(&format!("{CM}/unprivileged")), created);

    // And really is unprivileged with the limit applied.
    let pid = s.pid().expect("running");
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).expect("Uid line");
    let want_uid = if root { NOBODY } else { unsafe { libc::geteuid() } };
    assert!(
        uid_line.split_whitespace().skip(1).all(|u| u == want_uid.to_string()),
        "server runs as {uid_line}, expected uid {want_uid}"
    );
    let limits = fs::read_to_string(format!("/proc/{pid}/limits")).expect("read /proc/PID/limits");
    let locked = limits.lines().find(|l| l.starts_with("Max locked memory")).expect("Max locked memory");
    assert!(locked.contains("8388608"), "{locked}");
}

/// Starts a server whose data dir is first handed to `nobody` when `chown` is set.
fn start_prepared(launch: Launch, chown: bool) -> Server {
    if !chown {
        return Server::start_with(launch);
    }
    Server::start_with_setup(launch, |dir, data_dir| {
        for path in [dir, data_dir] {
            chown_nobody(path);
        }
    })
}

fn chown_nobody(path: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: chown with a valid NUL-terminated path.
    let rc = unsafe { libc::chown(c.as_ptr(), NOBODY, NOBODY) };
    assert_eq!(rc, 0, "chown {} to nobody: {}", path.display(), std::io::Error::last_os_error());
}

/// `--data-dir` given as a relative path (the README's quick start uses the
/// default, relative `shardline-data`): the server starts, and what it
/// acknowledged is there after a restart.
#[test]
fn relative_data_dir_works_and_survives_restart() {
    let mut s = Server::start_with(Launch { relative_data_dir: true, ..Launch::default() });
    let r = s.post_json("/api/v1/namespaces/default/configmaps", &configmap("relative", &[("a", "b")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    assert!(s.data_dir.join("log").is_dir(), "the log is not under the relative data dir");
    s.kill();
    s.restart();
    assert_eq!(s.get_ok("/api/v1/namespaces/default/configmaps/relative"), created);
}

/// Revisions of the snapshots in the data dir's log.
fn snapshot_revisions(s: &Server) -> Vec<u64> {
    let mut revisions: Vec<u64> = fs::read_dir(s.data_dir().join("log"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter_map(|n| n.strip_prefix("snapshot-")?.strip_suffix(".snap")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    revisions.sort();
    revisions
}

/// Waits (bounded) until the log has written a snapshot after `revision`.
fn wait_for_snapshot_after(s: &Server, revision: u64) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if let Some(newest) = snapshot_revisions(s).last().filter(|r| **r > revision) {
            return *newest;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no snapshot after {revision}: {:?}; stderr:\n{}", snapshot_revisions(s), s.stderr());
}

/// Every configmap (all namespaces) and the list's revision.
fn all_configmaps(s: &Server) -> (String, Vec<Value>) {
    let list = s.get_ok("/api/v1/configmaps");
    let revision = list["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let mut items = list["items"].as_array().unwrap().clone();
    items.sort_by_key(|i| format!("{}/{}", i["metadata"]["namespace"], i["metadata"]["name"]));
    (revision, items)
}

#[test]
fn every_object_and_revision_comes_back_after_several_snapshots() {
    // Snapshots every 20 records: each merges the previous one with the
    // segments since it (the log keeps no values in memory).
    let mut s = Server::start_with(Launch {
        extra_args: vec!["--log-snapshot-every-records".into(), "20".into()],
        ..Launch::default()
    });
    let mut snapshot = 0;
    for phase in 0..4 {
        for i in 0..30 {
            let name = format!("cm-{phase}-{i:02}");
            let r = s.post_json(CM, &configmap(&name, &[("i", &"x".repeat(i * 37))]));
            assert_eq!(r.status, 201, "{}", r.text());
        }
        // Replace and delete some of every earlier phase, so that merges see
        // keys changed, deleted and untouched since the previous snapshot.
        for earlier in 0..=phase {
            for i in (phase % 3..30).step_by(4) {
                let path = format!("{CM}/cm-{earlier}-{i:02}");
                let r = s.get(&path);
                if r.status != 200 {
                    continue;
                }
                let mut object = r.json();
                if (i + phase) % 3 == 0 {
                    let r = s.delete(&path);
                    assert_eq!(r.status, 200, "{}", r.text());
                } else {
                    object["data"]["phase"] = phase.to_string().into();
                    let r = s.put_json(&path, &object);
                    assert_eq!(r.status, 200, "{}", r.text());
                }
            }
        }
        // Each phase writes more than 20 records: a snapshot falls due.
        snapshot = wait_for_snapshot_after(&s, snapshot);
    }
    assert!(snapshot_revisions(&s).len() <= 2, "older snapshots are removed: {:?}", snapshot_revisions(&s));
    let before = all_configmaps(&s);
    assert!(before.1.len() > 60, "{} configmaps", before.1.len());

    // A clean stop: the newest snapshot plus the segments after it.
    assert_eq!(s.terminate().code(), Some(0), "{}", s.stderr());
    s.restart();
    assert_eq!(all_configmaps(&s), before, "objects or revisions changed across a restart from a snapshot");

    // Writes after the snapshot, then SIGKILL: the snapshot plus segments.
    let r = s.post_json(CM, &configmap("after-snapshot", &[("k", "v")]));
    assert_eq!(r.status, 201, "{}", r.text());
    let r = s.delete(&format!("{CM}/cm-3-01"));
    assert_eq!(r.status, 200, "{}", r.text());
    let before = all_configmaps(&s);
    s.kill();
    s.restart();
    assert_eq!(all_configmaps(&s), before, "objects or revisions changed across SIGKILL + restart");

    // Watch events after the restart carry the states they replace: a
    // delete's event holds the object's last state.
    let (revision, _) = all_configmaps(&s);
    let mut watch =
        common::watch::Watch::open(&s, &format!("{CM}?watch=true&resourceVersion={revision}&labelSelector=!gone"));
    let path = format!("{CM}/cm-0-02");
    let stored = s.get_ok(&path);
    let mut object = stored.clone();
    object["metadata"]["labels"] = serde_json::json!({"gone": "yes"});
    let r = s.put_json(&path, &object);
    assert_eq!(r.status, 200, "{}", r.text());
    let updated = r.json();
    // Leaving the selector is a DELETED event with the previous state at
    // the update's resourceVersion (kube's cache watcher).
    let event = watch.next();
    assert_eq!(event["type"], "DELETED", "{event}");
    let mut expected = stored.clone();
    expected["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"].clone();
    assert_eq!(event["object"], expected);
    let path = format!("{CM}/cm-0-03");
    let last = s.get_ok(&path);
    let r = s.delete(&path);
    assert_eq!(r.status, 200, "{}", r.text());
    let event = watch.next();
    assert_eq!(event["type"], "DELETED", "{event}");
    let mut expected = last.clone();
    expected["metadata"]["resourceVersion"] = event["object"]["metadata"]["resourceVersion"].clone();
    assert_eq!(event["object"], expected, "a deleted object's event holds its last state");
    assert!(rv_number(&event["object"]) > rv_number(&last));
}

/// The shards' listeners use SO_REUSEPORT; without a check a second server of
/// the same user could bind the same port and the kernel would split new
/// connections between the two (a write answered by one, then a 404 from the
/// other). A port in use must be refused at start-up, as kube-apiserver
/// refuses it, and the first server keeps every connection.
#[test]
fn a_port_in_use_is_refused_not_shared() {
    let first = Server::start();
    assert_eq!(first.post_json(CM, &configmap("mine", &[])).status, 201);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut second = std::process::Command::new(common::shardline_bin())
        .args(["serve", "--listen", &first.addr.to_string(), "--data-dir"])
        .arg(dir.path().join("data"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the second server");
    let status = common::wait_timeout(&mut second, common::TERMINATE_TIMEOUT).unwrap_or_else(|| {
        let _ = second.kill();
        let _ = second.wait();
        panic!("a second server on {} kept running: the port was shared", first.addr)
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(second.stderr.as_mut().expect("stderr"), &mut stderr).expect("read stderr");
    assert!(!status.success(), "the second server exited with {}; stderr:\n{stderr}", describe(status));
    assert!(stderr.contains("Address already in use"), "stderr:\n{stderr}");
    // Every new connection still reaches the first server.
    for _ in 0..20 {
        assert_eq!(first.get(&format!("{CM}/mine")).status, 200);
    }
}

/// A restart builds objects from the hints its snapshot keeps beside each
/// value, without parsing them (issue 17): what it serves afterwards is byte
/// for byte what it served before the stop, for each object and for lists
/// filtered by the labels and fields the hints locate.
#[test]
fn objects_built_from_snapshot_hints_are_served_byte_for_byte() {
    let mut s = Server::start();
    for i in 0..24 {
        let pod = serde_json::json!({
            "metadata": {"name": format!("pod-{i:02}"), "labels": {"app": format!("a{}", i % 3), "tier": "web"}},
            "spec": {"nodeName": format!("node-{}", i % 2), "containers": [{"name": "c", "image": "registry.example/c:1"}]}
        });
        let r = s.post_json("/api/v1/namespaces/default/pods", &pod);
        assert_eq!(r.status, 201, "{}", r.text());
        let r = s.post_json(CM, &configmap(&format!("cm-{i:02}"), &[("k", &"v".repeat(i))]));
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let paths = [
        "/api/v1/namespaces/default/pods/pod-00",
        "/api/v1/namespaces/default/pods/pod-17",
        "/api/v1/namespaces/default/configmaps/cm-05",
        "/api/v1/pods",
        "/api/v1/pods?labelSelector=app%3Da1",
        "/api/v1/pods?labelSelector=app+in+(a0,a2),tier%3Dweb&fieldSelector=metadata.name!%3Dpod-03",
        "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1",
        "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dnode-0,status.phase%3DPending&limit=5",
        "/api/v1/configmaps?fieldSelector=metadata.name%3Dcm-07",
        "/api/v1/namespaces",
    ];
    let served =
        |s: &Server| -> Vec<(u16, Vec<u8>)> { paths.iter().map(|p| s.get(p)).map(|r| (r.status, r.body)).collect() };
    let before = served(&s);
    // What the selectors must find (app: i % 3, node: i % 2): the bytes
    // compared below are right, not only unchanged.
    let listed: Vec<Option<usize>> = before
        .iter()
        .map(|(status, body)| {
            assert_eq!(*status, 200);
            serde_json::from_slice::<Value>(body).unwrap()["items"].as_array().map(Vec::len)
        })
        .collect();
    assert_eq!(listed, [None, None, None, Some(24), Some(8), Some(15), Some(12), Some(5), Some(1), Some(4)]);
    // The stop writes a snapshot whose records carry hints; the next start
    // builds every object from them.
    for round in 0..2 {
        assert_eq!(s.terminate().code(), Some(0), "{}", s.stderr());
        s.restart();
        for ((path, (status, body)), (_, expected)) in paths.iter().zip(served(&s)).zip(&before) {
            assert_eq!(status, 200, "{path}");
            assert_eq!(
                String::from_utf8_lossy(&body),
                String::from_utf8_lossy(expected),
                "{path} changed across restart {round}"
            );
        }
    }
}
