//! The `shardline` command line: `shardline serve ...` starts the server.
//!
//! Every flag fills a field of `config::Config`; defaults and the meaning of
//! each limit live there (and in docs/limits.md), not here.

use clap::{Args, Parser, Subcommand};
use shardline::config::{Config, TlsConfig};
use shardline::strategy::allocate;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Counts the heap in use for `/metrics` (`shardline::memory`).
#[global_allocator]
static ALLOCATOR: shardline::memory::CountingAllocator = shardline::memory::CountingAllocator;

#[derive(Parser)]
#[command(name = "shardline", version, about = "A thread-per-core Kubernetes list/watch API server")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API server.
    Serve(ServeArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on (every shard binds it with SO_REUSEPORT).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Directory of the embedded log.
    #[arg(long, default_value = "shardline-data")]
    data_dir: PathBuf,
    /// Number of shards (pinned executors). Default: available cores.
    #[arg(long)]
    shards: Option<u16>,
    /// PEM certificate chain for TLS (with --tls-key).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for TLS (with --tls-cert).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve TLS with a certificate generated at start-up.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    tls_self_signed: bool,
    /// How long superseded versions stay in memory (e.g. 300s, 5m).
    #[arg(long, value_parser = parse_duration)]
    history_window: Option<Duration>,
    /// Largest request body in bytes (413 above it).
    #[arg(long)]
    request_body_bytes_max: Option<usize>,
    /// Locked memory glommio registers with io_uring, per shard, in bytes.
    #[arg(long)]
    io_memory_bytes: Option<usize>,
    /// Time in-flight requests get after SIGTERM (e.g. 10s).
    #[arg(long, value_parser = parse_duration)]
    shutdown_grace: Option<Duration>,
    /// How long a read for a resourceVersion not reached yet waits before 504 (e.g. 3s).
    #[arg(long, value_parser = parse_duration)]
    resource_version_wait: Option<Duration>,
    /// How often watches with allowWatchBookmarks get a bookmark (e.g. 60s).
    #[arg(long, value_parser = parse_duration)]
    watch_bookmark_interval: Option<Duration>,
    /// Records between log snapshots.
    #[arg(long)]
    log_snapshot_every_records: Option<u64>,
    /// Log segment size in bytes before rotation.
    #[arg(long)]
    log_segment_bytes_max: Option<u64>,
    /// Bytes queued for one watcher before it is closed as too slow.
    #[arg(long)]
    watch_queue_bytes_max: Option<usize>,
    /// Static bearer tokens, kube-apiserver's CSV: token,user,uid,"group1,group2".
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
    /// PEM CA bundle that client certificates are verified against (needs TLS);
    /// a certificate's CN is the user and each O a group.
    #[arg(long)]
    client_ca_file: Option<PathBuf>,
    /// Serve requests without credentials as system:anonymous (false: 401).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    anonymous_auth: bool,
    /// PEM private key (RSA, or P-256 in PKCS#8) that signs service account
    /// tokens (TokenRequest). Without it a P-256 key is generated at start-up
    /// (its tokens stop working when the server restarts).
    #[arg(long)]
    service_account_signing_key_file: Option<PathBuf>,
    /// PEM public keys, certificates or private keys that service account
    /// tokens may be signed with (besides the signing key); repeatable.
    #[arg(long)]
    service_account_key_file: Vec<PathBuf>,
    /// The `iss` of service account tokens, and the only issuer accepted.
    #[arg(long, default_value = shardline::auth::serviceaccount::DEFAULT_ISSUER)]
    service_account_issuer: String,
    /// Audiences of the API, comma-separated: a TokenRequest's default and
    /// what bearer tokens must be meant for (default: the issuer).
    #[arg(long, default_value = "")]
    api_audiences: String,
    /// The longest lifetime of a requested service account token (e.g. 24h);
    /// longer requests are cut to it.
    #[arg(long, value_parser = parse_duration)]
    service_account_max_token_expiration: Option<Duration>,
    /// AlwaysAllow or RBAC (Roles and bindings stored in Shardline itself).
    #[arg(long, default_value = "AlwaysAllow")]
    authorization_mode: shardline::auth::authz::AuthorizationMode,
    /// Admission plugins to enable besides the default ones, comma-separated
    /// (kube-apiserver's names, e.g. ServiceAccount).
    #[arg(long, default_value = "")]
    enable_admission_plugins: String,
    /// Default admission plugins to disable, comma-separated (e.g. PodSecurity,Priority).
    #[arg(long, default_value = "")]
    disable_admission_plugins: String,
    /// Read-only requests in flight before 429 (watches are counted apart).
    #[arg(long)]
    max_requests_inflight: Option<usize>,
    /// Mutating requests in flight before 429.
    #[arg(long)]
    max_mutating_requests_inflight: Option<usize>,
    /// Open watches per user (across all shards) before 429.
    #[arg(long)]
    watches_per_user_max: Option<usize>,
    /// Concurrent HTTP/2 streams (watches, requests) per connection, as
    /// SETTINGS_MAX_CONCURRENT_STREAMS; 0 keeps the default (1000).
    #[arg(long)]
    http2_max_streams_per_connection: Option<u32>,
    /// Attempts of a PATCH without a resourceVersion before 409 Conflict.
    #[arg(long)]
    patch_conflict_attempts_max: Option<usize>,
    /// Longest wait between passes of a Terminating namespace's cleanup (e.g. 5s).
    #[arg(long, value_parser = parse_duration)]
    namespace_finalize_retry_max: Option<Duration>,
    /// Longest time between passes of kube-apiserver's own controllers of
    /// its bootstrap objects (e.g. 10s); they also run after every write to
    /// the objects they keep.
    #[arg(long, value_parser = parse_duration)]
    system_objects_resync_interval: Option<Duration>,
    /// Built-in controllers to run, kube-controller-manager's syntax and names
    /// (`*`, `-name`, `name`): garbage-collector-controller and
    /// namespace-controller. `-*` beside a real kube-controller-manager.
    /// Default `*`; with --upstream, `-*` (the cluster's
    /// kube-controller-manager runs them; an instance that forwards writes
    /// writes nothing of its own).
    #[arg(long)]
    controllers: Option<String>,
    /// Feature gates, kube-apiserver's syntax (`AllowUnsafeMalformedObjectDeletion=true`).
    #[arg(long)]
    feature_gates: Option<String>,
    /// API group/versions and resources to serve, kube-apiserver's syntax
    /// (`api/all=false,apps/v1=true,batch/v1=false`).
    #[arg(long)]
    runtime_config: Option<String>,
    /// Where committed changes go: `embedded` (the WAL in --data-dir) or `etcd`.
    #[arg(long, default_value = "embedded", value_parser = ["embedded", "etcd"])]
    log: String,
    /// etcd client URLs, comma-separated (with --log etcd), e.g. http://127.0.0.1:2379.
    #[arg(long, value_delimiter = ',')]
    etcd_endpoints: Vec<String>,
    /// Prefix put before every key in etcd (with --log etcd); keys are PREFIX/registry/...
    #[arg(long, default_value = "")]
    etcd_prefix: String,
    /// How keys and values are laid out in etcd (with --log etcd): `shardline`
    /// (JSON under /registry/GROUP/RESOURCE/...) or `kubernetes` (kube-apiserver's
    /// keys and storage encodings: serve a Kubernetes cluster's etcd).
    #[arg(long, default_value = "shardline", value_parser = ["shardline", "kubernetes"])]
    storage_layout: String,
    /// How long an etcd-backed instance may stay behind etcd and still be ready (/readyz `etcd-lag`), e.g. 10s.
    #[arg(long, value_parser = parse_duration)]
    etcd_behind_ready_max: Option<Duration>,
    /// Where componentstatuses probes kube-scheduler's /healthz over HTTPS (kube's: 127.0.0.1:10259).
    #[arg(long)]
    componentstatus_scheduler_address: Option<std::net::SocketAddr>,
    /// Where componentstatuses probes kube-controller-manager's /healthz over HTTPS (kube's: 127.0.0.1:10257).
    #[arg(long)]
    componentstatus_controller_manager_address: Option<std::net::SocketAddr>,
    /// How long one etcd request may take before a write answers 504 (e.g. 5s).
    #[arg(long, value_parser = parse_duration)]
    etcd_request_timeout: Option<Duration>,
    /// Largest value written to etcd in bytes (413 above it).
    #[arg(long)]
    etcd_value_bytes_max: Option<usize>,
    /// How often to compact etcd's history (e.g. 5m; 0 disables), as kube-apiserver's flag.
    #[arg(long, value_parser = parse_duration)]
    etcd_compaction_interval: Option<Duration>,
    /// PEM CA bundle that verifies etcd's serving certificate (https etcd endpoints).
    #[arg(long)]
    etcd_cafile: Option<std::path::PathBuf>,
    /// PEM client certificate for etcd (with --etcd-keyfile).
    #[arg(long)]
    etcd_certfile: Option<std::path::PathBuf>,
    /// PEM private key of --etcd-certfile.
    #[arg(long)]
    etcd_keyfile: Option<std::path::PathBuf>,
    /// CIDR Service cluster IPs are allocated from, as kube-apiserver's flag.
    #[arg(long, default_value = allocate::DEFAULT_SERVICE_CLUSTER_IP_RANGE)]
    service_cluster_ip_range: allocate::ServiceIpRange,
    /// Ports NodePort and LoadBalancer Services' node ports are allocated
    /// from (`30000-32767` or `30000+2767`), as kube-apiserver's flag.
    #[arg(long, default_value = allocate::DEFAULT_SERVICE_NODE_PORT_RANGE)]
    service_node_port_range: allocate::NodePortRange,
    /// The cluster's kube-apiserver (https://HOST:PORT): every mutating request
    /// is forwarded there as the caller (Impersonate-* headers); reads are
    /// served here. Needs --log etcd on the cluster's etcd.
    #[arg(long)]
    upstream: Option<String>,
    /// A bearer token for --upstream (the file's first line).
    #[arg(long, requires = "upstream")]
    upstream_token_file: Option<PathBuf>,
    /// PEM CA bundle verifying --upstream's serving certificate.
    #[arg(long, requires = "upstream")]
    upstream_ca_file: Option<PathBuf>,
    /// PEM client certificate for --upstream (with --upstream-client-key-file).
    #[arg(long, requires_all = ["upstream", "upstream_client_key_file"])]
    upstream_client_cert_file: Option<PathBuf>,
    /// PEM private key of --upstream-client-cert-file.
    #[arg(long, requires_all = ["upstream", "upstream_client_cert_file"])]
    upstream_client_key_file: Option<PathBuf>,
    /// The longest a forwarded request may take before 504 (e.g. 60s).
    #[arg(long, value_parser = parse_duration)]
    upstream_request_timeout: Option<Duration>,
    /// Largest upstream answer relayed, in bytes (503 above it).
    #[arg(long)]
    upstream_response_bytes_max: Option<usize>,
    /// Pieces of a streamed upstream answer (an aggregated API's watch) held while the client reads.
    #[arg(long)]
    upstream_stream_pieces_max: Option<usize>,
    /// With --upstream: how long a delegated TokenReview's answer is kept (e.g. 10s).
    #[arg(long, value_parser = parse_duration)]
    authentication_token_webhook_cache_ttl: Option<Duration>,
    /// With --upstream: how long a delegated SubjectAccessReview's "allowed" is kept (e.g. 10s).
    #[arg(long, value_parser = parse_duration)]
    authorization_webhook_cache_authorized_ttl: Option<Duration>,
    /// With --upstream: how long a delegated SubjectAccessReview's "denied" is kept (e.g. 10s).
    #[arg(long, value_parser = parse_duration)]
    authorization_webhook_cache_unauthorized_ttl: Option<Duration>,
    /// Bytes of superseded versions (and, apart, of watch history) kept in
    /// memory; past it the oldest go first (reads that needed them get 410).
    #[arg(long)]
    history_bytes_max: Option<usize>,
    /// Bytes the protobuf, CBOR and YAML encodings of cached objects may keep.
    #[arg(long)]
    derived_encodings_bytes_max: Option<usize>,
}

/// `--feature-gates`: the gates Shardline knows; returns
/// AllowUnsafeMalformedObjectDeletion.
fn parse_feature_gates(text: &str) -> Result<bool, String> {
    let mut unsafe_delete = false;
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').ok_or_else(|| format!("missing bool value for {pair}"))?;
        let value: bool = value.trim().parse().map_err(|_| format!("invalid value of {name}={value}"))?;
        match name.trim() {
            "AllowUnsafeMalformedObjectDeletion" => unsafe_delete = value,
            other => return Err(format!("unrecognized feature gate: {other}")),
        }
    }
    Ok(unsafe_delete)
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = number.parse().map_err(|_| format!("invalid duration {text:?}"))?;
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        _ => Err(format!("invalid duration unit in {text:?} (use ms, s, m or h)")),
    }
}

fn config_from(args: ServeArgs) -> Config {
    let shards = args.shards.unwrap_or_else(shardline::runtime::default_shard_count).max(1);
    let mut config = Config::with_defaults(args.listen, args.data_dir, shards);
    config.tls = match (args.tls_cert, args.tls_key, args.tls_self_signed) {
        (Some(cert), Some(key), _) => TlsConfig::Files { cert, key },
        (_, _, true) => TlsConfig::SelfSigned,
        _ => TlsConfig::None,
    };
    if let Some(v) = args.history_window {
        config.history_window = v;
    }
    if let Some(v) = args.request_body_bytes_max {
        config.request_body_bytes_max = v;
    }
    if let Some(v) = args.io_memory_bytes {
        config.io_memory_bytes = v;
    }
    if let Some(v) = args.shutdown_grace {
        config.shutdown_grace = v;
    }
    if let Some(v) = args.resource_version_wait {
        config.resource_version_wait = v;
    }
    if let Some(v) = args.watch_bookmark_interval {
        config.watch_bookmark_interval = v;
        config.watch_bookmark_check_interval = config.watch_bookmark_check_interval.min(v);
    }
    if let Some(v) = args.log_snapshot_every_records {
        config.log_snapshot_every_records = v.max(1);
    }
    if let Some(v) = args.patch_conflict_attempts_max {
        config.patch_conflict_attempts_max = v.max(1);
    }
    if let Some(v) = args.namespace_finalize_retry_max {
        config.namespace_finalize_retry_max = v.max(Duration::from_millis(100));
    }
    if let Some(v) = args.system_objects_resync_interval {
        config.system_objects_resync_interval = v.max(Duration::from_millis(200));
    }
    if let Some(v) = args.log_segment_bytes_max {
        config.log_segment_bytes_max = v.max(64 * 1024);
    }
    if let Some(v) = args.watch_queue_bytes_max {
        config.watch_queue_bytes_max = v.max(1);
    }
    config.authentication.client_ca_file = args.client_ca_file;
    config.authentication.anonymous = args.anonymous_auth;
    config.authorization_mode = args.authorization_mode;
    config.service_account_max_token_expiration = args.service_account_max_token_expiration;
    if let Some(v) = args.max_requests_inflight {
        config.max_requests_inflight = v.max(1);
    }
    if let Some(v) = args.max_mutating_requests_inflight {
        config.max_mutating_requests_inflight = v.max(1);
    }
    if let Some(v) = args.watches_per_user_max {
        config.watches_per_user_max = v.max(1);
    }
    if let Some(v) = args.http2_max_streams_per_connection.filter(|&v| v > 0) {
        config.http2_max_concurrent_streams = v;
    }
    config.service_ranges =
        allocate::Ranges { cluster_ip: args.service_cluster_ip_range, node_port: args.service_node_port_range };
    if args.log == "etcd" {
        config.log = shardline::config::LogKind::Etcd { endpoints: args.etcd_endpoints, key_prefix: args.etcd_prefix };
    }
    // clap allows only the two names.
    config.storage_layout =
        shardline::api::kube_storage::StorageLayout::parse(&args.storage_layout).unwrap_or_default();
    if let Some(v) = args.etcd_behind_ready_max {
        config.etcd_behind_ready_max = v;
    }
    if let Some(v) = args.componentstatus_scheduler_address {
        config.componentstatus_scheduler_address = v;
    }
    if let Some(v) = args.componentstatus_controller_manager_address {
        config.componentstatus_controller_manager_address = v;
    }
    if let Some(v) = args.etcd_request_timeout {
        config.etcd_request_timeout = v;
    }
    if let Some(v) = args.etcd_value_bytes_max {
        config.etcd_value_bytes_max = v.max(1);
    }
    if let Some(v) = args.etcd_compaction_interval {
        config.etcd_compaction_interval = v;
    }
    config.etcd_tls = shardline::config::EtcdTls {
        ca_file: args.etcd_cafile,
        cert_file: args.etcd_certfile,
        key_file: args.etcd_keyfile,
    };
    if let Some(url) = args.upstream {
        config.upstream = Some(shardline::config::Upstream {
            url,
            token_file: args.upstream_token_file,
            ca_file: args.upstream_ca_file,
            client_cert_file: args.upstream_client_cert_file,
            client_key_file: args.upstream_client_key_file,
        });
        // The cluster's kube-apiserver compacts its etcd; an instance that
        // forwards writes writes nothing there unless told to.
        if args.etcd_compaction_interval.is_none() {
            config.etcd_compaction_interval = Duration::ZERO;
        }
    }
    if let Some(v) = args.upstream_request_timeout {
        config.upstream_request_timeout = v.max(Duration::from_millis(1));
    }
    if let Some(v) = args.upstream_response_bytes_max {
        config.upstream_response_bytes_max = v.max(1);
    }
    if let Some(v) = args.upstream_stream_pieces_max {
        config.upstream_stream_pieces_max = v.max(1);
    }
    if let Some(v) = args.authentication_token_webhook_cache_ttl {
        config.upstream_token_review_ttl = v;
    }
    if let Some(v) = args.authorization_webhook_cache_authorized_ttl {
        config.upstream_authorized_ttl = v;
    }
    if let Some(v) = args.authorization_webhook_cache_unauthorized_ttl {
        config.upstream_unauthorized_ttl = v;
    }
    if let Some(v) = args.history_bytes_max {
        config.history_bytes_max = v;
    }
    if let Some(v) = args.derived_encodings_bytes_max {
        config.derived_encodings_bytes_max = v;
    }
    config
}

/// Reads and parses `--token-auth-file` (start-up I/O stays here).
fn read_token_file(path: &std::path::Path) -> Result<shardline::auth::authn::TokenFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    shardline::auth::authn::TokenFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The service account token issuer from `--service-account-signing-key-file`,
/// `--service-account-key-file`, `--service-account-issuer` and
/// `--api-audiences` (start-up I/O stays here); a generated key without a file.
fn service_account_tokens(args: &ServeArgs) -> Result<shardline::auth::serviceaccount::ServiceAccountTokens, String> {
    use shardline::auth::serviceaccount::ServiceAccountTokens;
    let audiences: Vec<String> =
        args.api_audiences.split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_string).collect();
    let issuer = args.service_account_issuer.clone();
    let mut keys = Vec::new();
    for path in &args.service_account_key_file {
        keys.push(
            std::fs::read(path).map_err(|e| format!("--service-account-key-file: reading {}: {e}", path.display()))?,
        );
    }
    match &args.service_account_signing_key_file {
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| format!("--service-account-signing-key-file: reading {}: {e}", path.display()))?;
            ServiceAccountTokens::from_pem(&pem, &keys, issuer, audiences)
                .map_err(|e| format!("--service-account-signing-key-file/--service-account-key-file: {e}"))
        }
        None => ServiceAccountTokens::generated_with(&keys, issuer, audiences)
            .map_err(|e| format!("--service-account-key-file: {e}")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => {
            let feature_gates = args.feature_gates.clone();
            let runtime_config = args.runtime_config.clone();
            let token_file = args.token_auth_file.clone();
            let service_accounts = service_account_tokens(&args);
            let admission = shardline::strategy::admission::Plugins::from_flags(
                &args.enable_admission_plugins,
                &args.disable_admission_plugins,
            );
            let upstream = args.upstream.is_some();
            if upstream && args.log != "etcd" {
                eprintln!("shardline: --upstream joins a cluster's etcd: it needs --log etcd");
                return ExitCode::FAILURE;
            }
            let controllers = match &args.controllers {
                Some(flag) => shardline::config::Controllers::parse(flag),
                None => shardline::config::Controllers::parse(if upstream { "-*" } else { "*" }),
            };
            if let Ok(c) = &controllers {
                if upstream && !c.running().is_empty() {
                    eprintln!(
                        "shardline: --controllers: {} would write, and an instance with --upstream writes nothing \
                         itself: run them in the cluster's kube-controller-manager",
                        c.running().join(", ")
                    );
                    return ExitCode::FAILURE;
                }
            }
            let mut config = config_from(args);
            match controllers {
                Ok(controllers) => config.controllers = controllers,
                Err(e) => {
                    eprintln!("shardline: --controllers: {e}");
                    return ExitCode::FAILURE;
                }
            }
            match admission {
                Ok(plugins) => config.admission_plugins = plugins,
                Err(e) => {
                    eprintln!("shardline: --enable-admission-plugins/--disable-admission-plugins: {e}");
                    return ExitCode::FAILURE;
                }
            }
            if let Some(path) = token_file {
                match read_token_file(&path) {
                    Ok(tokens) => config.authentication.tokens = Some(std::sync::Arc::new(tokens)),
                    Err(e) => {
                        eprintln!("shardline: --token-auth-file: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            match service_accounts {
                Ok(tokens) => config.authentication.service_accounts = Some(std::sync::Arc::new(tokens)),
                Err(e) => {
                    eprintln!("shardline: {e}");
                    return ExitCode::FAILURE;
                }
            }
            if let Some(gates) = feature_gates {
                match parse_feature_gates(&gates) {
                    Ok(unsafe_delete) => config.allow_unsafe_malformed_object_deletion = unsafe_delete,
                    Err(e) => {
                        eprintln!("shardline: --feature-gates: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            let runtime_config =
                shardline::types::runtime_config::RuntimeConfig::parse(runtime_config.as_deref().unwrap_or(""))
                    .and_then(|c| c.apply(shardline::types::registry::Registry::builtin()));
            let registry = match runtime_config {
                Ok(registry) => registry,
                Err(e) => {
                    eprintln!("shardline: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match shardline::runtime::serve(config, registry) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("shardline: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
