//! Every limit and tunable of the server, in one place.
//!
//! Each field says what it bounds, what it costs and why its default is what it
//! is. The command line (`src/main.rs`) only fills this struct; nothing else in
//! the crate invents a limit of its own. `docs/limits.md` lists the same table for
//! operators.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Where committed changes are stored and ordered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// The embedded write-ahead log in `--data-dir` (the single-machine default).
    Embedded,
    /// etcd (`--log etcd`): every write an etcd transaction on the key's
    /// mod_revision, etcd's revision the resourceVersion; several instances can
    /// share one etcd cluster. Keys are `key_prefix` + the object key
    /// (`/registry/...`).
    Etcd { endpoints: Vec<String>, key_prefix: String },
}

/// TLS settings for the listener.
#[derive(Clone, Debug)]
pub enum TlsConfig {
    /// Plain HTTP/1.1 and h2c (the default on loopback).
    None,
    /// A PEM certificate chain and private key.
    Files { cert: PathBuf, key: PathBuf },
    /// A certificate generated at start-up for `localhost`/`127.0.0.1`.
    SelfSigned,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    /// Number of shards, one pinned executor each. Default: available cores.
    pub shards: u16,
    pub log: LogKind,
    pub tls: TlsConfig,

    /// Largest request body accepted, in bytes. Larger bodies get 413.
    /// kube-apiserver's default is 3 MiB (its `MaxRequestBodyBytes`).
    pub request_body_bytes_max: usize,
    /// How long superseded versions stay in memory for exact-resourceVersion reads
    /// and watch resumption (their bytes are bounded by `history_bytes_max`).
    /// kube-apiserver's watch cache keeps ~5 minutes of events by default.
    pub history_window: Duration,
    /// Memory glommio registers with io_uring per executor, in bytes. It is
    /// locked memory: with RLIMIT_MEMLOCK at 8 MiB and three rings per executor,
    /// 512 KiB keeps two shards well inside the limit.
    pub io_memory_bytes: usize,
    /// io_uring submission queue depth per ring.
    pub ring_depth: usize,
    /// Capacity (messages) of each cross-shard channel. A full channel makes the
    /// sender wait: this is the backpressure between cores.
    pub mesh_channel_capacity: usize,
    /// Capacity (entries) of each shard's queue of committed log entries.
    pub apply_queue_capacity: usize,

    /// Largest number of records one group commit writes before it syncs.
    pub log_batch_records_max: usize,
    /// Largest number of bytes one group commit writes before it syncs.
    pub log_batch_bytes_max: usize,
    /// A log segment is closed and a new one started past this size.
    pub log_segment_bytes_max: u64,
    /// A snapshot is written after this many records since the last one; older
    /// segments are then deleted.
    pub log_snapshot_every_records: u64,
    /// Largest single record (an object plus its key). kube-apiserver's etcd
    /// limit is 1.5 MiB per value; the request body limit bounds it first.
    pub log_record_bytes_max: usize,
    /// Committed log entries kept in memory until every subscriber has released
    /// them; appends wait (backpressure) while this many are unreleased or
    /// pending. Costs one entry (key, value and previous-value handles) each.
    pub log_tail_entries_max: usize,
    /// Bytes of changed records a snapshot merge holds at once (the log keeps
    /// no values in memory; a snapshot merges the previous one with the
    /// segments since it, from disk). Past it the merge reads the segments
    /// again per key range: more sequential reads, never more memory.
    pub log_snapshot_merge_bytes_max: usize,

    /// Concurrent connections accepted per shard; more wait in the kernel backlog.
    pub connections_per_shard_max: usize,
    /// Time allowed to read a request's headers (slowloris bound).
    pub header_read_timeout: Duration,
    /// Time allowed for in-flight requests after SIGTERM before the process exits.
    pub shutdown_grace: Duration,
    /// How long a read asking for a resourceVersion the log has not reached
    /// waits for it before answering 504 "Too large resource version"
    /// (kube-apiserver waits 3 s).
    pub resource_version_wait: Duration,
    /// Most items in one list page; a larger `limit` gets pages of this size
    /// (with a continue token), so a page's memory stays bounded.
    pub list_page_objects_max: usize,
    /// Items fetched from each shard per round while streaming a list without
    /// `limit`: the list's extra memory is this many handles per shard,
    /// whatever the collection's size.
    pub list_stream_batch_objects: usize,
    /// Events queued for one watcher; a watcher that falls this far behind is
    /// closed (and counted), never waited for: the client resumes from its
    /// last resourceVersion.
    pub watch_queue_events_max: usize,
    /// Bytes queued for one watcher (each event as its frame would be
    /// written); past it the watcher is closed and counted like a full one.
    /// The objects are shared handles, so this bounds what a slow reader
    /// keeps alive and has yet to receive, not a copy. Above the largest
    /// object (the 3 MiB body limit) so one event always fits; one event is
    /// admitted into an empty queue whatever its size.
    pub watch_queue_bytes_max: usize,
    /// Committed entries each shard keeps for watch resumption (besides the
    /// time bound, `history_window`). Costs one entry (handles) each.
    pub watch_history_entries_max: usize,
    /// A watch without timeoutSeconds ends after a random time in this range,
    /// as kube-apiserver spreads its watches over 30 to 60 minutes.
    pub watch_timeout_min: Duration,
    pub watch_timeout_max: Duration,
    /// How often a watch with `allowWatchBookmarks=true` gets a bookmark at
    /// the current resourceVersion, whether or not anything changed (kube-
    /// apiserver's `defaultBookmarkFrequency`: a minute); besides, it gets one
    /// 2 s before its timeout. Costs one bookmark per watch per interval.
    pub watch_bookmark_interval: Duration,
    /// The longest each shard's wake-up task sleeps: it sleeps until the next
    /// bookmark or watch timeout due, but a watch registered meanwhile with an
    /// earlier one (a timeout closer than this) waits at most this long.
    pub watch_bookmark_check_interval: Duration,
    /// Concurrent HTTP/2 streams per connection (each watch is one stream),
    /// advertised as SETTINGS_MAX_CONCURRENT_STREAMS; a client opening more
    /// gets the extra streams refused (RST_STREAM REFUSED_STREAM). The
    /// per-connection bound on open watches (HTTP/1.1 carries one at a time).
    /// `--http2-max-streams-per-connection`, kube-apiserver's flag; 1000 is
    /// what Kubernetes' recommended options give API servers that serve
    /// multiplexed watches (kube-apiserver itself falls back to 100 when the
    /// flag is 0), and what loadgen and tests/h2_watch.rs multiplex.
    pub http2_max_concurrent_streams: u32,
    /// Watchers whose queued events a shard hands to their connections per
    /// delivery round; between rounds every other ready task (requests, the
    /// log, applying entries) runs. Lower: shorter waits for requests under a
    /// large fan-out, more rounds; higher: fewer rounds, longer waits.
    pub watch_delivery_round_watchers: usize,
    /// Queued events of one watcher written as one body frame (copied into
    /// one buffer: one chunk or HTTP/2 DATA frame instead of three per event).
    pub watch_frame_events_max: usize,
    /// Bytes a plain-TCP connection may have written but not yet sent (its
    /// outbox); past it hyper's writes wait for the socket. Small writes of
    /// many HTTP/2 streams are sent together up to this size.
    pub connection_outbox_bytes_max: usize,
    /// How often a busy shard stops running tasks to reap I/O completions
    /// (glommio's preempt timer): the longest a request's socket read, log
    /// sync or response write waits behind runnable work.
    pub shard_io_poll_interval: Duration,
    /// The longest a shard's executor sleeps without a timer due. glommio
    /// 0.9 may park with runnable tasks when its preempt timer fired before
    /// any task ran, and would then sleep until the next I/O completion;
    /// this timer bounds that stall. Costs one wake-up per interval per idle
    /// core.
    pub shard_park_wakeup_interval: Duration,
    /// Appends in flight at the log at once; more wait at the log's channel.
    pub log_appends_in_flight_max: usize,
    /// How often the log checks whether a snapshot is due.
    pub log_snapshot_check_interval: Duration,

    /// Who a request is from: `--token-auth-file`, `--client-ca-file`,
    /// `--anonymous-auth` (files are read by `main` at start-up).
    pub authentication: crate::auth::authn::AuthenticationConfig,
    /// `--service-account-max-token-expiration`: the longest lifetime a
    /// TokenRequest gets (longer requests are cut to it, as kube does);
    /// `None` (kube's default) leaves kube's own bound of 2^32 s. A shorter
    /// bound limits how long a leaked token is good for.
    pub service_account_max_token_expiration: Option<Duration>,
    /// `--authorization-mode`: AlwaysAllow (the default) or RBAC.
    pub authorization_mode: crate::auth::authz::AuthorizationMode,
    /// The admission plugins that run (`--enable-admission-plugins`,
    /// `--disable-admission-plugins`): kube-apiserver's default set except
    /// ServiceAccount (docs/admission.md).
    pub admission_plugins: crate::strategy::admission::Plugins,
    /// Objects one admission read may list (a namespace's LimitRanges or
    /// ResourceQuotas, the PriorityClasses, the StorageClasses): each is
    /// decoded on every write that needs it, so this bounds the memory and
    /// time an admission check may take. Clusters hold a handful of each;
    /// past the bound the write is refused (503) rather than admitted on a
    /// partial view.
    pub admission_list_objects_max: usize,
    /// Read-only requests (get, list, discovery, ...) served at once across
    /// all shards; past it a request gets 429 with Retry-After instead of
    /// queuing without bound. kube-apiserver's `--max-requests-inflight`
    /// default. Watches are counted apart (`watches_per_user_max`).
    pub max_requests_inflight: usize,
    /// Mutating requests (create, update, patch, delete) served at once
    /// across all shards; past it 429 with Retry-After. kube-apiserver's
    /// `--max-mutating-requests-inflight` default.
    pub max_mutating_requests_inflight: usize,
    /// Open watches one user may hold across the server; past it 429. The
    /// count of a user lives on one shard (a hash of the name), so a watch
    /// opened on another core costs one message each way; cores still share
    /// no map. Each
    /// watch costs a queue (`watch_queue_events_max`/`_bytes_max`), so one
    /// client cannot pin the server's memory by opening watches.
    pub watches_per_user_max: usize,
    /// Seconds a 429 asks the client to wait (`Retry-After`); kube-apiserver
    /// answers 1.
    pub overload_retry_after_seconds: u32,
    /// Attempts of a PATCH without a resourceVersion precondition: each
    /// failed attempt means another writer changed the object between the
    /// read and the conditional append, and the patch is applied again to the
    /// new version. Past this the client gets 409 Conflict. Each attempt
    /// costs one read, one patch application and one append. With N writers
    /// racing on one key a given patch loses a round with odds about
    /// (N-1)/N, so 16 attempts (PUT's bound) fail about 1% of patches at 4
    /// writers; 64 make that about 1e-8 (kube-apiserver retries without a bound).
    pub patch_conflict_attempts_max: usize,
    /// Longest wait between two passes of a Terminating namespace's cleanup
    /// (deleting its contents, then removing the `kubernetes` finalizer and
    /// the namespace). Passes start 100 ms apart and double up to this while
    /// objects remain (held by finalizers or graceful deletion); each pass
    /// lists the namespace's objects once per resource on every shard. The
    /// garbage collector's passes (`orphan` / `foregroundDeletion`) use it too.
    pub namespace_finalize_retry_max: Duration,
    /// Longest time between two passes of kube-apiserver's own controllers
    /// of its bootstrap objects (`api/handlers/apiserver_controllers.rs`: the
    /// `kubernetes` ServiceCIDR, the Priority and Fairness bootstrap
    /// configuration, the FlowSchemas' `Dangling` conditions). A pass also
    /// runs after every write to a FlowSchema, PriorityLevelConfiguration or
    /// ServiceCIDR, so this only bounds how long a failed write waits at
    /// worst (retries start 200 ms apart and double up to it). Each pass
    /// reads one ServiceCIDR and both Priority and Fairness collections
    /// (some twenty objects) and writes nothing when all is current. 10 s, as
    /// kube's default ServiceCIDR controller (its config producer: 1 min).
    pub system_objects_resync_interval: Duration,
    /// `--controllers`: which of Shardline's built-in controllers run
    /// (kube-controller-manager's names and syntax). All by default, so a
    /// Shardline alone behaves like a cluster with a controller manager for
    /// garbage collection and namespace cleanup; `-*` when a real
    /// kube-controller-manager runs beside it.
    pub controllers: Controllers,
    /// The `AllowUnsafeMalformedObjectDeletion` feature gate: DELETE honours
    /// `ignoreStoreReadErrorWithClusterBreakingPotential` for objects whose
    /// stored value does not decode (off by default, as in kube-apiserver).
    pub allow_unsafe_malformed_object_deletion: bool,
    /// How long one etcd request (a write's transaction, a start-up range
    /// page, a connection attempt) may take before the write answers 504 with
    /// Retry-After (`--log etcd`). Bounds how long a client waits when etcd is
    /// unreachable; 5 s is kube-apiserver's order of magnitude for a write.
    pub etcd_request_timeout: Duration,
    /// Largest value sent to etcd, in bytes; larger writes get 413 before
    /// reaching etcd. etcd refuses requests over its `--max-request-bytes`
    /// (default 1.5 MiB); this leaves room for the key and the transaction.
    pub etcd_value_bytes_max: usize,
    /// Keys per range request when an etcd-backed instance loads the state at
    /// start-up (all pages at one revision). Bounds one response's size.
    pub etcd_range_page_objects: i64,
    /// How keys and values are laid out in etcd (`--storage-layout`, with
    /// `--log etcd`): Shardline's own (the default), or kube-apiserver's keys
    /// and storage encodings, to serve a Kubernetes cluster's etcd
    /// (`api::kube_storage`).
    pub storage_layout: crate::api::kube_storage::StorageLayout,
    /// `--log etcd`: the longest this instance may stay behind etcd (its
    /// watch not caught up) and still answer `/readyz` ready (the
    /// `etcd-lag` check): past it a load balancer sends clients to an
    /// instance that is current. Liveness is not affected.
    pub etcd_behind_ready_max: Duration,
    /// Where `componentstatuses` probes kube-scheduler's and
    /// kube-controller-manager's `https://ADDR/healthz` (kube-apiserver's
    /// fixed addresses: 127.0.0.1:10259 and 127.0.0.1:10257).
    pub componentstatus_scheduler_address: std::net::SocketAddr,
    pub componentstatus_controller_manager_address: std::net::SocketAddr,
    /// How long one of those probes may take (kube's `probeTimeOut`, 20 s):
    /// a `componentstatuses` request waits at most this long.
    pub componentstatus_probe_timeout: Duration,
    /// How often an etcd-backed instance compacts etcd's history
    /// (kube-apiserver's `--etcd-compaction-interval`, default 5 min; zero
    /// disables). Each round compacts to a revision recorded at least
    /// `max(etcd_compaction_interval, history_window)` ago, so etcd keeps every
    /// revision this instance still serves from memory; several instances
    /// take turns through a compare-and-swap on `PREFIXcompact_rev_key`, as
    /// kube-apiservers do. Costs one etcd transaction per interval.
    pub etcd_compaction_interval: Duration,
    /// TLS to etcd (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`).
    pub etcd_tls: EtcdTls,
    /// How long a consistent read whose instance is behind etcd's current
    /// revision waits for its watch before writing a fence (one etcd write
    /// per batch of reads). Short: changes of our own keys arrive within a
    /// round-trip; waiting longer only delays reads after a change outside
    /// them, while waiting less makes instances fence for each other's
    /// changes still on their way.
    pub etcd_fence_after: Duration,
    /// `--upstream`: the cluster's kube-apiserver that every mutating
    /// request is forwarded to, as the caller (`api::forward`); `None`
    /// writes locally. Only with `--log etcd` (the instance joins the
    /// cluster's etcd and reads it).
    pub upstream: Option<Upstream>,
    /// The longest a forwarded request may take, from sending it to the
    /// upstream's whole answer (`--upstream-request-timeout`); past it the
    /// client gets 504 with Retry-After (the write's outcome is unknown, as
    /// with kube-apiserver's own request timeout). kube-apiserver's
    /// `--request-timeout` default, 60 s.
    pub upstream_request_timeout: Duration,
    /// Largest upstream answer relayed, in bytes
    /// (`--upstream-response-bytes-max`): the answer is held whole before it
    /// is returned (a deletecollection returns the deleted objects). Past it
    /// the client gets 503.
    pub upstream_response_bytes_max: usize,
    /// With `--upstream`: pieces of a streamed answer (an aggregated API's
    /// read, such as a watch: not held whole, not bounded by
    /// `upstream_response_bytes_max` or `upstream_request_timeout` past
    /// its head) held between the upstream and a client that reads slower
    /// (`--upstream-stream-pieces-max`); the upstream is then not read
    /// until the client takes one.
    pub upstream_stream_pieces_max: usize,
    /// With `--upstream`: how long a TokenReview's answer for a bearer
    /// token no local authenticator accepts is kept (accepted or refused),
    /// per shard (`--authentication-token-webhook-cache-ttl`; the delegating
    /// API servers' default, 10 s). Longer: fewer reviews, a revoked token
    /// works longer. Zero asks every time.
    pub upstream_token_review_ttl: Duration,
    /// With `--upstream`: how long an upstream SubjectAccessReview's "allowed"
    /// is kept, per shard (`--authorization-webhook-cache-authorized-ttl`,
    /// 10 s as delegating API servers); its "denied" likewise
    /// (`--authorization-webhook-cache-unauthorized-ttl`, 10 s).
    pub upstream_authorized_ttl: Duration,
    pub upstream_unauthorized_ttl: Duration,
    /// Entries each shard's token and decision caches hold at most (each is
    /// a user, or a decision keyed by the review's text, a few hundred
    /// bytes); when full, expired entries go, and past that a new answer is
    /// used but not kept.
    pub upstream_cache_entries_max: usize,
    /// Batches of consistent reads waiting for the watch (and perhaps a
    /// fence) at once; past it the next etcd read waits, so more requests
    /// share each batch. Each holds its requests' reply handles.
    pub etcd_consistent_read_batches_max: usize,

    /// Where Service cluster IPs and node ports come from
    /// (`--service-cluster-ip-range`, default 10.0.0.0/24, and
    /// `--service-node-port-range`, default 30000-32767: kube-apiserver's
    /// flags and defaults). Each allocated value is one claim key in the log.
    pub service_ranges: crate::strategy::allocate::Ranges,
    /// How old a claim (an IPAddress or a node port) whose Service does not
    /// hold it must be before another Service may take it over. Such a claim
    /// is what a crash (or a lost connection to etcd) between a claim and the
    /// Service's write leaves behind; younger ones may still belong to a write
    /// in flight on this or another instance, so the bound must exceed the
    /// longest write (a few `etcd_request_timeout`s). Costs nothing until a
    /// requested value is found taken or a range is full.
    pub allocation_claim_grace: Duration,
    /// Batches of committed entries each shard remembers the commit instant
    /// of, to time watch events from their commit
    /// (`shardline_watch_delivery_duration_seconds`). 24 bytes each: 96 KiB
    /// per shard; at one batch per group commit this covers seconds even
    /// under thousands of writes a second, longer than a watcher that keeps
    /// its queue takes. An event older than that is timed from the oldest
    /// batch remembered (a lower bound).
    pub metrics_commit_times_max: usize,
    /// Bytes of history the server keeps besides `history_window`'s age bound
    /// (`--history-bytes-max`): the JSON of superseded versions in the
    /// stores (each shard keeps `history_bytes_max / shards` of its own), and
    /// separately the entries kept for watch resumption (keys, values and
    /// previous values, counted once per shard's hub; the hubs share those
    /// buffers, so they hold this much once). Past it the oldest versions go
    /// first, the compacted revision rises, and reads and watches that needed
    /// them get 410. At 6,500 updates/s of 1.8 KB objects, 256 MiB keeps about
    /// 20 s of superseded versions and 10 s of watch history (an update's
    /// entry counts its value and its previous value); history memory is at
    /// most about twice this.
    pub history_bytes_max: usize,
    /// Bytes the other encodings of cached objects (protobuf, CBOR, YAML,
    /// built on first use from the JSON) may keep, process-wide
    /// (`--derived-encodings-bytes-max`). Past it an encoding is served but
    /// not kept (built again on the next request); kept ones are released
    /// with their object version. 256 MiB holds the protobuf of ~200,000
    /// pods of 1.8 KB JSON.
    pub derived_encodings_bytes_max: usize,
}

/// PEM files for TLS to etcd: the CA that signed etcd's serving certificate
/// and, optionally, a client certificate and key (etcd's
/// `--client-cert-auth`). Read once at start-up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EtcdTls {
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

/// The upstream kube-apiserver (`--upstream` and its credentials); the files
/// are read once at start-up by `runtime/upstream.rs`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Upstream {
    /// `https://HOST:PORT` (or `http://`), optionally with a path prefix.
    pub url: String,
    /// A bearer token (`--upstream-token-file`, the file's first line).
    pub token_file: Option<PathBuf>,
    /// PEM CA bundle verifying the upstream's serving certificate
    /// (`--upstream-ca-file`; required for https).
    pub ca_file: Option<PathBuf>,
    /// A client certificate and key (`--upstream-client-cert-file`,
    /// `--upstream-client-key-file`).
    pub client_cert_file: Option<PathBuf>,
    pub client_key_file: Option<PathBuf>,
}

impl Config {
    pub fn with_defaults(listen: SocketAddr, data_dir: PathBuf, shards: u16) -> Config {
        Config {
            listen,
            data_dir,
            shards,
            log: LogKind::Embedded,
            tls: TlsConfig::None,
            request_body_bytes_max: 3 * 1024 * 1024,
            history_window: Duration::from_secs(5 * 60),
            io_memory_bytes: 512 * 1024,
            ring_depth: 128,
            mesh_channel_capacity: 1024,
            apply_queue_capacity: 4096,
            log_batch_records_max: 4096,
            log_batch_bytes_max: 8 * 1024 * 1024,
            log_segment_bytes_max: 64 * 1024 * 1024,
            log_snapshot_every_records: 100_000,
            log_record_bytes_max: 4 * 1024 * 1024,
            log_tail_entries_max: 16_384,
            log_snapshot_merge_bytes_max: 64 * 1024 * 1024,
            connections_per_shard_max: 10_000,
            header_read_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(10),
            resource_version_wait: Duration::from_secs(3),
            list_page_objects_max: 10_000,
            list_stream_batch_objects: 500,
            watch_queue_events_max: 1024,
            watch_queue_bytes_max: 16 << 20,
            watch_history_entries_max: 100_000,
            watch_timeout_min: Duration::from_secs(30 * 60),
            watch_timeout_max: Duration::from_secs(60 * 60),
            watch_bookmark_interval: Duration::from_secs(60),
            watch_bookmark_check_interval: Duration::from_secs(1),
            http2_max_concurrent_streams: 1000,
            watch_delivery_round_watchers: 256,
            watch_frame_events_max: 64,
            shard_io_poll_interval: Duration::from_millis(2),
            shard_park_wakeup_interval: Duration::from_millis(50),
            connection_outbox_bytes_max: 256 * 1024,
            log_appends_in_flight_max: 4096,
            log_snapshot_check_interval: Duration::from_secs(1),
            authentication: crate::auth::authn::AuthenticationConfig::default(),
            service_account_max_token_expiration: None,
            authorization_mode: crate::auth::authz::AuthorizationMode::AlwaysAllow,
            admission_plugins: crate::strategy::admission::Plugins::default(),
            admission_list_objects_max: 1000,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            watches_per_user_max: 10_000,
            overload_retry_after_seconds: 1,
            patch_conflict_attempts_max: 64,
            namespace_finalize_retry_max: Duration::from_secs(5),
            system_objects_resync_interval: Duration::from_secs(10),
            controllers: Controllers::default(),
            allow_unsafe_malformed_object_deletion: false,
            etcd_request_timeout: Duration::from_secs(5),
            etcd_value_bytes_max: 1536 * 1024 - 16 * 1024,
            etcd_range_page_objects: 1000,
            storage_layout: crate::api::kube_storage::StorageLayout::Shardline,
            etcd_behind_ready_max: Duration::from_secs(10),
            componentstatus_scheduler_address: std::net::SocketAddr::from(([127, 0, 0, 1], 10259)),
            componentstatus_controller_manager_address: std::net::SocketAddr::from(([127, 0, 0, 1], 10257)),
            componentstatus_probe_timeout: Duration::from_secs(20),
            etcd_compaction_interval: Duration::from_secs(5 * 60),
            etcd_tls: EtcdTls::default(),
            etcd_fence_after: Duration::from_millis(20),
            etcd_consistent_read_batches_max: 64,
            upstream: None,
            upstream_request_timeout: Duration::from_secs(60),
            upstream_response_bytes_max: 64 << 20,
            upstream_stream_pieces_max: 16,
            upstream_token_review_ttl: Duration::from_secs(10),
            upstream_authorized_ttl: Duration::from_secs(10),
            upstream_unauthorized_ttl: Duration::from_secs(10),
            upstream_cache_entries_max: 10_000,
            service_ranges: crate::strategy::allocate::Ranges::default(),
            allocation_claim_grace: Duration::from_secs(60),
            metrics_commit_times_max: 4096,
            history_bytes_max: 256 << 20,
            derived_encodings_bytes_max: 256 << 20,
        }
    }
}

/// Which built-in controllers run (`--controllers`), as kube-controller-manager's
/// `--controllers` selects them: a list of names, `*` (every controller on by
/// default), `-name` (not this one); the first entry naming a controller
/// decides, and without `*` only the controllers named run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Controllers {
    /// `garbage-collector-controller`: `orphan` and `foregroundDeletion`
    /// finalizers, and dependents whose owners are gone.
    pub garbage_collector: bool,
    /// `namespace-controller`: a Terminating namespace's contents, then its
    /// `kubernetes` finalizer.
    pub namespace: bool,
}

impl Default for Controllers {
    fn default() -> Controllers {
        Controllers { garbage_collector: true, namespace: true }
    }
}

/// The controllers Shardline runs, by kube-controller-manager's name.
pub const CONTROLLERS_RUN: [&str; 2] = ["garbage-collector-controller", "namespace-controller"];

/// kube-controller-manager v1.36's controller names (and the old names it
/// still accepts as aliases); `--controllers` accepts every one of them, so
/// the flag kube-controller-manager is given can be given here.
const CONTROLLERS_KNOWN: &[&str] = &[
    "serviceaccount-token-controller",
    "endpoints-controller",
    "endpointslice-controller",
    "endpointslice-mirroring-controller",
    "replicationcontroller-controller",
    "pod-garbage-collector-controller",
    "resourcequota-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "garbage-collector-controller",
    "daemonset-controller",
    "job-controller",
    "deployment-controller",
    "replicaset-controller",
    "horizontal-pod-autoscaler-controller",
    "disruption-controller",
    "statefulset-controller",
    "cronjob-controller",
    "certificatesigningrequest-signing-controller",
    "certificatesigningrequest-approving-controller",
    "certificatesigningrequest-cleaner-controller",
    "ttl-controller",
    "bootstrap-signer-controller",
    "token-cleaner-controller",
    "node-ipam-controller",
    "node-lifecycle-controller",
    "taint-eviction-controller",
    "persistentvolume-binder-controller",
    "persistentvolume-attach-detach-controller",
    "persistentvolume-expander-controller",
    "clusterrole-aggregation-controller",
    "persistentvolumeclaim-protection-controller",
    "persistentvolume-protection-controller",
    "ttl-after-finished-controller",
    "root-ca-certificate-publisher-controller",
    "ephemeral-volume-controller",
    "storageversion-garbage-collector-controller",
    "resourceclaim-controller",
    "legacy-serviceaccount-token-cleaner-controller",
    "validatingadmissionpolicy-status-controller",
    "service-cidr-controller",
    "storage-version-migrator-controller",
    "volumeattributesclass-protection-controller",
    "kube-apiserver-serving-clustertrustbundle-publisher-controller",
    "podcertificaterequest-cleaner-controller",
    "device-taint-eviction-controller",
    "selinux-warning-controller",
    "cloud-node-lifecycle-controller",
    "service-lb-controller",
    "node-route-controller",
    // Aliases (the names before kube 1.28) of the two Shardline runs.
    "garbagecollector",
    "namespace",
];

impl Controllers {
    /// Parses `--controllers` (comma-separated). Unknown names are refused
    /// with kube-controller-manager's message.
    pub fn parse(flag: &str) -> Result<Controllers, String> {
        let names: Vec<&str> = flag.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
        for name in &names {
            let bare = name.strip_prefix('-').unwrap_or(name);
            if bare != "*" && !CONTROLLERS_KNOWN.contains(&bare) {
                return Err(format!(
                    "{name:?} is not in the list of known controllers (Shardline runs {})",
                    CONTROLLERS_RUN.join(", ")
                ));
            }
        }
        let enabled = |canonical: &str, alias: &str| {
            for name in &names {
                if *name == canonical || *name == alias {
                    return true;
                }
                if name.strip_prefix('-').is_some_and(|n| n == canonical || n == alias) {
                    return false;
                }
            }
            names.contains(&"*")
        };
        Ok(Controllers {
            garbage_collector: enabled("garbage-collector-controller", "garbagecollector"),
            namespace: enabled("namespace-controller", "namespace"),
        })
    }

    /// The names of the controllers that run, for the start-up report.
    pub fn running(&self) -> Vec<&'static str> {
        let on = [self.garbage_collector, self.namespace];
        CONTROLLERS_RUN.iter().zip(on).filter(|(_, on)| *on).map(|(name, _)| *name).collect()
    }
}

#[cfg(test)]
mod controllers_tests {
    use super::Controllers;

    #[test]
    fn controllers_follow_kube_controller_managers_syntax() {
        let all = Controllers { garbage_collector: true, namespace: true };
        let none = Controllers { garbage_collector: false, namespace: false };
        assert_eq!(Controllers::parse("*"), Ok(all));
        assert_eq!(Controllers::parse("-*"), Ok(none));
        assert_eq!(Controllers::parse(""), Ok(none), "without * only the named ones run");
        assert_eq!(
            Controllers::parse("*,-garbage-collector-controller"),
            Ok(Controllers { garbage_collector: false, namespace: true })
        );
        assert_eq!(
            Controllers::parse("namespace-controller"),
            Ok(Controllers { garbage_collector: false, namespace: true })
        );
        // The first entry naming a controller decides.
        assert_eq!(Controllers::parse("-namespace-controller,*,namespace-controller").map(|c| c.namespace), Ok(false));
        // Old aliases and kube's names Shardline does not run are accepted.
        assert_eq!(
            Controllers::parse("*,-garbagecollector,bootstrap-signer-controller").map(|c| c.garbage_collector),
            Ok(false)
        );
        let err = Controllers::parse("*,-gc").unwrap_err();
        assert!(err.starts_with("\"-gc\" is not in the list of known controllers"), "{err}");
        assert_eq!(
            Controllers::parse("*").unwrap().running(),
            ["garbage-collector-controller", "namespace-controller"]
        );
    }
}
