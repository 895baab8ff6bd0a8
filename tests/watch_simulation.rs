//! A seeded, deterministic simulation of the sharded watch core (no I/O):
//! a model log of random puts and deletes; shards that each receive the
//! committed entries in order but late (random lag); watchers started on
//! random shards from random positions (the current state, an exact
//! revision, a revision older than the history); bounded queues drained at
//! random speeds (stalls close watchers); and shard restarts (a new hub at
//! the shard's applied revision, its watchers lost). Each client resumes
//! from the last resourceVersion it saw, or relists when that is too old.
//!
//! The checker holds every client to the model: its events are exactly the
//! model's events for its filter after its start, in revision order, with no
//! gap and no duplicate, with the right types (ADDED on entering the
//! selection, MODIFIED, DELETED on leaving it or on delete, each carrying the
//! state kube's watch cache sends); bookmarks never go backwards and come
//! only above where the watch started (kube's cache watcher); every watch has
//! a deadline (its timeoutSeconds), after which nothing is offered to it and
//! the client resumes; and when all is delivered each client's view equals the
//! model's state for its filter. Some clients watch one node's pods
//! (`spec.nodeName=N`, a kubelet's watch, indexed by the hub's trigger
//! field) while pods move between nodes and get unscheduled, so entering and
//! leaving a node's selection is checked too. A failure prints its seed; set
//! `SHARDLINE_SIM_SEED` to replay one.

use bytes::Bytes;
use shardline::cache::CachedObject;
use shardline::log::{Entry, Operation, PreviousValue, Revision};
use shardline::types::key::{collection_prefix, ObjectKey};
use shardline::types::registry::Registry;
use shardline::watch::{BookmarkShape, BookmarkSpec, EventSink, EventType, WatchEvent, WatchFilter, WatchHub};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const SHARDS: usize = 3;
const CLIENTS: usize = 12;
const STEPS: usize = 600;
const WINDOW_MS: u64 = 2_000;
const QUEUE: usize = 8;
const BOOKMARK_FREQUENCY_MS: u64 = 300;

/// What a filter looks at in a pod: its `app` label and its node ("" = not scheduled).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pod {
    app: String,
    node: String,
}

type State = BTreeMap<(String, String), (Pod, u64)>;

/// The model: every entry, and each object's state (namespace, name) -> (pod, revision).
struct Model {
    entries: Vec<Entry>,
    state: State,
    /// `states[r]` is the state after revision r.
    states: Vec<State>,
}

impl Default for Model {
    fn default() -> Model {
        Model { entries: Vec::new(), state: BTreeMap::new(), states: vec![BTreeMap::new()] }
    }
}

const NODES: [&str; 3] = ["n1", "n2", ""];

fn value(namespace: &str, name: &str, pod: &Pod) -> Bytes {
    let (app, node) = (&pod.app, &pod.node);
    // An unscheduled pod has no spec.nodeName (the field is then empty).
    let spec = if node.is_empty() { String::new() } else { format!(r#","spec":{{"nodeName":"{node}"}}"#) };
    Bytes::from(format!(
        r#"{{"metadata":{{"name":"{name}","namespace":"{namespace}","labels":{{"app":"{app}"}}}}{spec}}}"#
    ))
}

impl Model {
    fn revision(&self) -> u64 {
        self.entries.len() as u64
    }

    fn write(&mut self, rng: &mut Rng) {
        let namespace = ["a", "b"][rng.below(2) as usize].to_string();
        let name = format!("o{}", rng.below(6));
        let key = ObjectKey::new("", "pods", &namespace, &name).encode();
        let revision = Revision(self.revision() + 1);
        let current = self.state.get(&(namespace.clone(), name.clone())).cloned();
        let previous = current.as_ref().map(|(pod, rv)| PreviousValue {
            mod_revision: Revision(*rv),
            create_revision: Revision(1),
            value: value(&namespace, &name, pod),
        });
        let entry = if current.is_some() && rng.below(4) == 0 {
            self.state.remove(&(namespace.clone(), name.clone()));
            Entry { revision, key, operation: Operation::Delete, create_revision: Revision(1), previous }
        } else {
            let app = ["web", "db"][rng.below(2) as usize].to_string();
            let node = NODES[rng.below(NODES.len() as u64) as usize].to_string();
            let pod = Pod { app, node };
            let operation = Operation::Put(value(&namespace, &name, &pod));
            self.state.insert((namespace.clone(), name.clone()), (pod, revision.0));
            Entry { revision, key, operation, create_revision: Revision(1), previous }
        };
        self.entries.push(entry);
        self.states.push(self.state.clone());
    }

    /// The state at `revision` for a filter: (namespace, name) -> (pod, rv).
    fn state_at(&self, revision: u64, filter: &Filter) -> State {
        let mut state = self.states[revision as usize].clone();
        state.retain(|(ns, _), (pod, _)| filter.accepts(ns, pod));
        state
    }
}

/// A client's filter: a namespace (or all), an optional `app=web` selector
/// and an optional `spec.nodeName=N` field selector.
#[derive(Clone, Debug)]
struct Filter {
    namespace: Option<String>,
    web_only: bool,
    node: Option<String>,
}

impl Filter {
    fn accepts(&self, namespace: &str, pod: &Pod) -> bool {
        self.namespace.as_deref().is_none_or(|n| n == namespace)
            && (!self.web_only || pod.app == "web")
            && self.node.as_ref().is_none_or(|n| *n == pod.node)
    }

    fn watch_filter(&self) -> WatchFilter {
        let web_only = self.web_only;
        let node = self.node.clone();
        WatchFilter {
            prefix: Bytes::from(collection_prefix("", "pods", self.namespace.as_deref())),
            matches: Some(Box::new(move |o: &CachedObject| {
                (!web_only || o.meta().label("app") == Some("web"))
                    && node.as_deref().is_none_or(|n| o.meta().field("spec.nodeName") == Some(n))
            })),
            bookmarks: Some(BookmarkSpec { shape: std::sync::Arc::new(BookmarkShape::bare("Pod", "v1")) }),
            name: None,
            trigger: self.node.clone(),
        }
    }
}

type Queue = Rc<RefCell<VecDeque<WatchEvent>>>;

/// A watch's queue, which checks that nothing is offered at or after the
/// watch's deadline (the simulation's clock).
struct Sink {
    queue: Queue,
    clock: Rc<Cell<u64>>,
    deadline: u64,
    seed: u64,
}
impl EventSink for Sink {
    fn offer(&mut self, event: WatchEvent) -> bool {
        assert!(
            self.clock.get() < self.deadline,
            "seed {:#x}: offered at {} to a watch whose deadline was {}",
            self.seed,
            self.clock.get(),
            self.deadline
        );
        let mut queue = self.queue.borrow_mut();
        if queue.len() >= QUEUE {
            return false;
        }
        queue.push_back(event);
        true
    }
}

struct Client {
    filter: Filter,
    /// What the client believes: (namespace, name) -> (pod, rv).
    view: State,
    /// The last resourceVersion the client saw (event or bookmark).
    position: u64,
    last_bookmark: u64,
    /// The position its current watch started from: bookmarks come above it.
    watch_from: u64,
    /// When its current watch's time is up.
    deadline: u64,
    queue: Queue,
    /// Which shard it is watching on, and the watch's id there (None = not watching).
    shard: Option<(usize, shardline::watch::WatchId)>,
    drain_per_step: u64,
}

struct Shard {
    hub: WatchHub,
    applied: u64,
}

fn run(seed: u64) {
    let registry = Registry::builtin();
    let mut rng = Rng(seed | 1);
    let mut model = Model::default();
    let clock = Rc::new(Cell::new(0u64));
    let mut now = 0u64;
    let new_hub = |applied: u64| {
        WatchHub::new(Revision(applied), WINDOW_MS, 10_000).with_bookmark_frequency_ms(BOOKMARK_FREQUENCY_MS)
    };
    let mut shards: Vec<Shard> = (0..SHARDS).map(|_| Shard { hub: new_hub(0), applied: 0 }).collect();
    let mut clients: Vec<Client> = (0..CLIENTS)
        .map(|i| Client {
            filter: Filter {
                namespace: if i % 3 == 0 { None } else { Some(["a", "b"][i % 2].to_string()) },
                web_only: i % 2 == 0,
                // A third of the clients watch one node's pods (kubelets, and the scheduler's "").
                node: (i % 3 == 1).then(|| NODES[(i / 3) % NODES.len()].to_string()),
            },
            view: BTreeMap::new(),
            position: 0,
            last_bookmark: 0,
            watch_from: 0,
            deadline: 0,
            queue: Rc::default(),
            shard: None,
            drain_per_step: rng.below(4),
        })
        .collect();

    for step in 0..STEPS {
        now += rng.below(40);
        clock.set(now);
        for _ in 0..rng.below(3) {
            model.write(&mut rng);
        }
        // Shards run their due bookmarks and deadlines, then catch up, each
        // by its own random lag.
        for shard in shards.iter_mut() {
            shard.hub.tick(now);
            let target = model.revision().saturating_sub(rng.below(4));
            if target > shard.applied {
                let batch = &model.entries[shard.applied as usize..target as usize];
                shard.hub.dispatch(batch, now, &registry);
                shard.applied = target;
            }
        }
        // Now and then a shard restarts: its watchers are gone.
        if rng.below(60) == 0 {
            let s = rng.below(SHARDS as u64) as usize;
            shards[s].hub = new_hub(shards[s].applied);
            for c in clients.iter_mut() {
                if c.shard.is_some_and(|(cs, _)| cs == s) {
                    c.shard = None;
                }
            }
        }
        for (n, c) in clients.iter_mut().enumerate() {
            // Drain: apply events to the view, checking each against the model.
            let budget = if step + 1 == STEPS { u64::MAX } else { c.drain_per_step };
            for _ in 0..budget {
                let Some(event) = c.queue.borrow_mut().pop_front() else { break };
                check_event(seed, n, c, &model, &event);
            }
            // A watch past its deadline has ended: the client resumes.
            if c.shard.is_none() || c.deadline <= now || rng.below(80) == 0 {
                restart_watch(seed, n, c, &mut shards, &model, &mut rng, &registry, &clock);
            }
        }
    }
    // Let every shard catch up fully and every client drain fully; views must equal the model.
    for shard in shards.iter_mut() {
        shard.hub.tick(now);
        let batch = &model.entries[shard.applied as usize..];
        shard.hub.dispatch(batch, now, &registry);
        shard.applied = model.revision();
    }
    for (n, c) in clients.iter_mut().enumerate() {
        loop {
            let Some(event) = c.queue.borrow_mut().pop_front() else { break };
            check_event(seed, n, c, &model, &event);
        }
        if c.position == model.revision() {
            let expected = model.state_at(c.position, &c.filter);
            assert_eq!(c.view, expected, "seed {seed:#x}: client {n} view at {}", c.position);
        }
    }
}

/// One event against the model: it must be the next event the model has for
/// this filter after the client's position.
fn check_event(seed: u64, n: usize, c: &mut Client, model: &Model, event: &WatchEvent) {
    let r = event.revision.0;
    if event.event_type == EventType::Bookmark {
        assert!(r >= c.last_bookmark, "seed {seed:#x}: client {n} bookmark went back {r} < {}", c.last_bookmark);
        assert!(
            r > c.watch_from,
            "seed {seed:#x}: client {n} bookmark {r} not above its watch's start {}",
            c.watch_from
        );
        // Nothing the filter selects may be pending between position and the bookmark.
        let before = model.state_at(c.position, &c.filter);
        let at = model.state_at(r.max(c.position), &c.filter);
        if r > c.position {
            assert_eq!(before, at, "seed {seed:#x}: client {n} bookmark {r} skips events after {}", c.position);
            c.position = r;
        }
        c.last_bookmark = r;
        return;
    }
    assert!(
        r > c.position,
        "seed {seed:#x}: client {n} got revision {r} at position {} (duplicate or out of order)",
        c.position
    );
    // No selected change may lie strictly between the position and r.
    let before = model.state_at(c.position, &c.filter);
    let just_before = model.state_at(r - 1, &c.filter);
    assert_eq!(before, just_before, "seed {seed:#x}: client {n} missed an event between {} and {r}", c.position);
    let after = model.state_at(r, &c.filter);
    let entry = &model.entries[r as usize - 1];
    let k = ObjectKey::decode(&entry.key).unwrap();
    let id = (k.namespace.clone(), k.name.clone());
    let expected_type = match (just_before.contains_key(&id), after.contains_key(&id)) {
        (false, true) => EventType::Added,
        (true, true) => EventType::Modified,
        (true, false) => EventType::Deleted,
        (false, false) => panic!("seed {seed:#x}: client {n} got an event for an unselected change at {r}"),
    };
    assert_eq!(event.event_type, expected_type, "seed {seed:#x}: client {n} event type at {r}");
    // The object is at the event's resourceVersion, in its new state, except
    // a DELETED one, which carries the state it was selected in (the last
    // state of a deleted object, the previous one of an object that left the
    // selection), as kube's cache watcher sends them.
    let object: serde_json::Value = serde_json::from_slice(&event.object).unwrap();
    assert_eq!(object["metadata"]["resourceVersion"], r.to_string(), "seed {seed:#x}: client {n} at {r}: {object}");
    let shown = if expected_type == EventType::Deleted { &just_before[&id].0 } else { &after[&id].0 };
    assert_eq!(object["metadata"]["labels"]["app"], shown.app.as_str(), "seed {seed:#x}: client {n} at {r}: {object}");
    assert_eq!(object["spec"]["nodeName"].as_str().unwrap_or(""), shown.node, "seed {seed:#x}: client {n} at {r}");
    match after.get(&id) {
        Some(v) => c.view.insert(id, v.clone()),
        None => c.view.remove(&id),
    };
    c.position = r;
    assert_eq!(c.view, after, "seed {seed:#x}: client {n} view after {r}");
}

/// (Re)starts a client's watch on a random shard from its position; when
/// that is too old, it relists (state from the model at the shard's applied
/// revision) and watches from there.
fn restart_watch(
    seed: u64,
    n: usize,
    c: &mut Client,
    shards: &mut [Shard],
    model: &Model,
    rng: &mut Rng,
    registry: &Registry,
    clock: &Rc<Cell<u64>>,
) {
    if let Some((s, id)) = c.shard.take() {
        shards[s].hub.stop(id);
    }
    // Events already queued belong to the old watch: deliver them first.
    loop {
        let Some(event) = c.queue.borrow_mut().pop_front() else { break };
        check_event(seed, n, c, model, &event);
    }
    let s = rng.below(SHARDS as u64) as usize;
    let now = clock.get();
    // Its timeoutSeconds: short enough that many watches reach it.
    let deadline = now + 500 + rng.below(3_000);
    c.deadline = deadline;
    let sink = |queue: &Queue| Box::new(Sink { queue: queue.clone(), clock: clock.clone(), deadline, seed });
    let queue: Queue = Rc::default();
    c.watch_from = c.position;
    let started = shards[s].hub.start(c.filter.watch_filter(), sink(&queue), Revision(c.position), now, registry);
    match started {
        Ok(Some(id)) => {
            shards[s].hub.close_at(id, deadline, now);
            c.queue = queue;
            c.shard = Some((s, id));
        }
        Ok(None) => {
            // The backlog overflowed the queue during replay: deliver what came, retry later.
            c.queue = queue;
        }
        Err(_) => {
            // Too old: relist at the shard's applied revision, watch from there.
            let at = shards[s].applied;
            c.view = model.state_at(at, &c.filter);
            c.position = at;
            c.last_bookmark = c.last_bookmark.min(at);
            c.watch_from = at;
            let queue: Queue = Rc::default();
            if let Ok(Some(id)) =
                shards[s].hub.start(c.filter.watch_filter(), sink(&queue), Revision(at), now, registry)
            {
                shards[s].hub.close_at(id, deadline, now);
                c.queue = queue;
                c.shard = Some((s, id));
            }
        }
    }
}

#[test]
fn watch_guarantees_hold_under_random_schedules() {
    let seeds: Vec<u64> = match std::env::var("SHARDLINE_SIM_SEED") {
        Ok(seed) => vec![u64::from_str_radix(seed.trim_start_matches("0x"), 16).expect("a hex seed")],
        Err(_) => (1..=40u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect(),
    };
    for seed in seeds {
        run(seed);
    }
}
