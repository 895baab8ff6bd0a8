//! The official Python `kubernetes` client (installed into .venv by the test
//! command) against the real binary: typed create/replace/delete and
//! `watch.Watch` seeing ADDED, MODIFIED and DELETED in order
//! (tests/python/watch_events.py), and the objects of issue 14's table as
//! kube-apiserver makes them (tests/python/builtin_fidelity.py). Bounded by a timeout; the server is
//! stopped by PID when the test ends.

mod common;

use common::Server;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a script of tests/python against a fresh server with its URL;
/// returns its standard output once it exited 0.
fn run_python(script: &str, launch: common::Launch) -> String {
    let s = Server::start_with(launch);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run the test command (bash scripts/test.sh)", python.display());
    let mut child = Command::new(&python)
        .arg(root.join("tests/python").join(script))
        .arg(format!("http://{}", s.addr))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for python") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the Python client did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().expect("python output");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(status.success(), "python exited {status}\nstdout:\n{stdout}\nstderr:\n{stderr}\nserver:\n{}", s.stderr());
    stdout
}

#[test]
fn python_client_watch_sees_the_expected_events() {
    let stdout = run_python("watch_events.py", common::Launch::default());
    assert_eq!(stdout.lines().collect::<Vec<_>>(), ["ADDED py", "MODIFIED py", "DELETED py"]);
}

/// Issue 14's table with the Python client: defaults, allocation, stringData,
/// the namespace label, malformed bodies refused (400), an immutable
/// ConfigMap (422), and typed lists and watches still working afterwards.
#[test]
fn python_client_gets_kube_apiservers_objects() {
    let stdout = run_python("builtin_fidelity.py", common::Launch::default());
    assert!(!stdout.contains("FAIL"), "{stdout}");
    assert!(stdout.lines().filter(|l| l.starts_with("ok ")).count() >= 28, "{stdout}");
}

/// Metadata-only lists, gets and watches through the Python client's
/// ApiClient with kube's `as=PartialObjectMetadata[List]` Accept.
#[test]
fn python_client_reads_metadata_only() {
    let stdout = run_python("metadata_only.py", common::Launch::default());
    assert!(!stdout.contains("FAIL"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok ")).count(), 8, "{stdout}");
}
