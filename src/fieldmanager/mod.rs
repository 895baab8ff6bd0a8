//! The field manager of server-side apply: `metadata.managedFields`, one
//! entry per manager, operation (Apply or Update), apiVersion (Update only)
//! and subresource, each with the FieldsV1 set of fields it owns and the time
//! of its last change. `update` records a create, update or non-apply patch
//! (the writer takes the fields it changed; others lose them); `apply` merges
//! an applied configuration (conflicts with other managers' fields unless
//! forced, fields dropped from the applier's previous configuration removed
//! unless another manager owns them), including kubectl's upgrade from
//! client-side apply (`kubectl.kubernetes.io/last-applied-configuration`).
//! Field sets and merging are in `fieldset.rs`.
//!
//! Invariant: pure functions, no I/O (time is an argument); inputs are never
//! modified; no input panics; the server-owned metadata (name, namespace, uid,
//! resourceVersion, generation, creationTimestamp, managedFields, selfLink)
//! and `apiVersion`/`kind` are never owned.

pub mod fieldset;

use fieldset::{Path, PathElement, Set, Type};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

pub type Object = Map<String, Value>;

/// kubectl's client-side apply annotation.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Most Update entries an object keeps (kube-apiserver's
/// `DefaultMaxUpdateManagers`): past it the oldest are merged, per
/// apiVersion, into one `ancient-changes` entry, so managedFields stay small
/// however many clients write an object.
pub const UPDATE_MANAGERS_MAX: usize = 10;

/// The entry older Update managers are merged into.
const ANCIENT_CHANGES: &str = "ancient-changes";

/// The manager whose applies upgrade client-side apply's fields (as in kube-apiserver).
const CLIENT_SIDE_APPLY_UPGRADER: &str = "kubectl";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One `managedFields` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    pub time: Option<String>,
    pub subresource: String,
    pub fields: Set,
}

impl Entry {
    /// Entries of the same identity are one manager: an applier's identity
    /// has no apiVersion, so it keeps its fields across versions.
    fn identity(&self) -> (String, Operation, String, String) {
        let version = if self.operation == Operation::Apply { String::new() } else { self.api_version.clone() };
        (self.manager.clone(), self.operation, version, self.subresource.clone())
    }

    /// How kube-apiserver names a manager in a conflict.
    fn display(&self) -> String {
        let mut out = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == Operation::Update {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }
}

/// What a write is: who writes, through which version and subresource, when.
#[derive(Clone, Debug)]
pub struct Write<'a> {
    pub manager: &'a str,
    pub api_version: &'a str,
    /// "" for the main resource, "status" for the status subresource.
    pub subresource: &'a str,
    /// The root shape of the kind (None: typed by the values).
    pub shape: Option<crate::types::schema::Shape>,
    /// The type has a status subresource (its main resource does not own status).
    pub status_subresource: bool,
    /// RFC 3339 time of the write.
    pub now: &'a str,
}

impl Write<'_> {
    fn ty(&self) -> Type {
        Type::root(self.shape)
    }

    /// Whether a path is tracked: server-owned metadata and type fields never
    /// are, and the fields a subresource resets belong to the other side.
    fn tracked(&self, path: &Path) -> bool {
        let field = |i: usize| match path.get(i) {
            Some(PathElement::Field(name)) => Some(name.as_str()),
            _ => None,
        };
        match (field(0), field(1)) {
            (Some("apiVersion" | "kind"), _) if path.len() == 1 => return false,
            (Some("metadata"), None) => return false,
            (
                Some("metadata"),
                Some(
                    "name" | "namespace" | "creationTimestamp" | "selfLink" | "uid" | "generation" | "managedFields"
                    | "resourceVersion",
                ),
            ) => return false,
            _ => {}
        }
        match self.subresource {
            "status" => field(0) == Some("status"),
            _ => !(self.status_subresource && field(0) == Some("status")),
        }
    }

    fn tracked_only(&self, set: Set) -> Set {
        set.into_iter().filter(|p| self.tracked(p)).collect()
    }
}

/// A conflict of an apply: the path and the manager owning it (as printed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub manager: String,
    pub path: String,
}

/// Why an apply or its managedFields could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("{}", conflict_message(.0))]
    Conflicts(Vec<Conflict>),
}

/// kube-apiserver's message for apply conflicts.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!("Apply failed with 1 conflict: conflict with {}: {}", only.manager, only.path);
    }
    let mut by_manager: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for c in conflicts {
        by_manager.entry(&c.manager).or_default().push(&c.path);
    }
    let mut lines = vec![format!("Apply failed with {} conflicts:", conflicts.len())];
    for (manager, paths) in by_manager {
        lines.push(format!("conflicts with {manager}:"));
        lines.extend(paths.into_iter().map(|p| format!("- {p}")));
    }
    lines.join("\n")
}

/// The entries of `metadata.managedFields`; entries that do not decode are
/// skipped (as kube-apiserver falls back rather than fail a write).
pub fn decode(object: &Object) -> Vec<Entry> {
    let Some(Value::Array(items)) = object.get("metadata").and_then(|m| m.get("managedFields")) else {
        return Vec::new();
    };
    let mut entries: Vec<Entry> = Vec::new();
    for item in items {
        let text = |name: &str| item.get(name).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = match text("operation").as_str() {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => continue,
        };
        let fields = match item.get("fieldsV1") {
            Some(v) => match fieldset::from_fields_v1(v) {
                Ok(set) => set,
                Err(_) => continue,
            },
            None => Set::new(),
        };
        let entry = Entry {
            manager: text("manager"),
            operation,
            api_version: text("apiVersion"),
            time: item.get("time").and_then(Value::as_str).map(str::to_string),
            subresource: text("subresource"),
            fields,
        };
        match entries.iter_mut().find(|e| e.identity() == entry.identity()) {
            Some(existing) => existing.fields.extend(entry.fields),
            None => entries.push(entry),
        }
    }
    entries
}

/// `managedFields` set to `[]` or `[{}]`: the client resets them.
pub fn is_reset(object: &Object) -> bool {
    match object.get("metadata").and_then(|m| m.get("managedFields")) {
        Some(Value::Array(items)) => {
            items.is_empty() || (items.len() == 1 && items[0].as_object().is_some_and(Map::is_empty))
        }
        _ => false,
    }
}

/// Merges the oldest Update entries (by time, then name) into one
/// `ancient-changes` entry per apiVersion until at most
/// `UPDATE_MANAGERS_MAX` remain.
fn cap_update_managers(entries: &mut Vec<Entry>) {
    entries.retain(|e| !e.fields.is_empty());
    let mut updaters: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].operation == Operation::Update).collect();
    if updaters.len() <= UPDATE_MANAGERS_MAX {
        return;
    }
    updaters.sort_by(|&a, &b| (&entries[a].time, &entries[a].manager).cmp(&(&entries[b].time, &entries[b].manager)));
    let mut count = updaters.len();
    let mut bucket_of_version: BTreeMap<String, usize> = BTreeMap::new();
    let mut merged = Vec::new();
    for i in updaters {
        if count <= UPDATE_MANAGERS_MAX {
            break;
        }
        let version = entries[i].api_version.clone();
        let existing = (0..entries.len()).find(|&j| {
            j != i
                && entries[j].manager == ANCIENT_CHANGES
                && entries[j].operation == Operation::Update
                && entries[j].api_version == version
                && !merged.contains(&j)
        });
        let bucket = match bucket_of_version.get(&version).copied().or(existing) {
            Some(bucket) => bucket,
            None => {
                bucket_of_version.insert(version, i);
                continue;
            }
        };
        let fields = std::mem::take(&mut entries[i].fields);
        let time = entries[i].time.clone();
        let target = &mut entries[bucket];
        target.fields.extend(fields);
        target.manager = ANCIENT_CHANGES.to_string();
        target.subresource = String::new();
        target.time = time.max(target.time.clone());
        bucket_of_version.insert(version, bucket);
        merged.push(i);
        count -= 1;
    }
    merged.sort_unstable();
    for i in merged.into_iter().rev() {
        entries.remove(i);
    }
}

/// Writes the entries into the object's metadata, in kube-apiserver's order
/// (Apply before Update, then by time, manager, apiVersion, subresource);
/// no entries means no `managedFields`.
pub fn encode(object: &mut Object, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.fields.is_empty());
    entries.sort_by(|a, b| {
        (a.operation, &a.time, &a.manager, &a.api_version, &a.subresource).cmp(&(
            b.operation,
            &b.time,
            &b.manager,
            &b.api_version,
            &b.subresource,
        ))
    });
    let meta = object.entry("metadata").or_insert_with(|| json!({}));
    let Value::Object(meta) = meta else { return };
    if entries.is_empty() {
        meta.shift_remove("managedFields");
        return;
    }
    let items: Vec<Value> = entries
        .into_iter()
        .map(|e| {
            // Every field of ManagedFieldsEntry is `omitempty`.
            let mut item = Map::new();
            if !e.manager.is_empty() {
                item.insert("manager".into(), json!(e.manager));
            }
            item.insert("operation".into(), json!(e.operation.as_str()));
            if !e.api_version.is_empty() {
                item.insert("apiVersion".into(), json!(e.api_version));
            }
            if let Some(time) = e.time {
                item.insert("time".into(), json!(time));
            }
            item.insert("fieldsType".into(), json!("FieldsV1"));
            item.insert("fieldsV1".into(), fieldset::to_fields_v1(&e.fields));
            if !e.subresource.is_empty() {
                item.insert("subresource".into(), json!(e.subresource));
            }
            Value::Object(item)
        })
        .collect();
    meta.insert("managedFields".into(), Value::Array(items));
}

fn without_managed_fields(object: &Object) -> Value {
    let mut copy = object.clone();
    if let Some(Value::Object(meta)) = copy.get_mut("metadata") {
        meta.shift_remove("managedFields");
    }
    Value::Object(copy)
}

/// Removes `metadata.managedFields` from `object`: its position in the
/// metadata and its value, for `shift_insert` to put back.
fn take_managed_fields(object: &mut Object) -> Option<(usize, Value)> {
    let Some(Value::Object(meta)) = object.get_mut("metadata") else { return None };
    let index = meta.keys().position(|key| key == "managedFields")?;
    meta.shift_remove("managedFields").map(|value| (index, value))
}

/// The managers a write starts from: the new object's entries when the
/// client sent some (or reset them), else the live object's.
fn base_entries(live: Option<&Object>, new: &Object) -> Vec<Entry> {
    if is_reset(new) {
        return Vec::new();
    }
    let given = decode(new);
    if !given.is_empty() {
        return given;
    }
    live.map(decode).unwrap_or_default()
}

/// Records a create (`live` None), update or non-apply patch by
/// `write.manager`: it takes the fields it added or changed, others lose
/// them and the fields it removed. Sets `new`'s `managedFields`.
pub fn update(live: Option<&Object>, new: &mut Object, write: &Write) {
    let mut entries = base_entries(live, new);
    let before = live.map(without_managed_fields).unwrap_or_else(|| json!({}));
    // `new` without its managedFields, compared in place rather than copied:
    // the entry is taken out and put back at its position afterwards.
    let taken = take_managed_fields(new);
    let after = Value::Object(std::mem::take(new));
    let comparison = fieldset::compare(&before, &after, write.ty());
    if let Value::Object(object) = after {
        *new = object;
    }
    if let Some((index, value)) = taken {
        if let Some(Value::Object(meta)) = new.get_mut("metadata") {
            meta.shift_insert(index, "managedFields".into(), value);
        }
    }
    let changed = write.tracked_only(comparison.changed());
    let removed = comparison.removed;
    let me = Entry {
        manager: write.manager.to_string(),
        operation: Operation::Update,
        api_version: write.api_version.to_string(),
        time: None,
        subresource: write.subresource.to_string(),
        fields: Set::new(),
    };
    for entry in entries.iter_mut() {
        if entry.identity() != me.identity() {
            entry.fields.retain(|p| !changed.contains(p) && !removed.contains(p));
        }
    }
    let position = entries.iter().position(|e| e.identity() == me.identity());
    let mine = match position {
        Some(i) => &mut entries[i],
        None => {
            entries.push(me);
            entries.last_mut().expect("just pushed")
        }
    };
    mine.fields.retain(|p| !removed.contains(p));
    if !changed.is_empty() {
        mine.fields.extend(changed);
        mine.time = Some(write.now.to_string());
        mine.api_version = write.api_version.to_string();
    }
    cap_update_managers(&mut entries);
    encode(new, entries);
}

/// Applies `config` (the decoded apply patch, without managedFields) over
/// `live` (None: the object is created) for `write.manager`. Returns the new
/// object with its `managedFields`, or the conflicts with other managers
/// when not forced.
pub fn apply(live: Option<&Object>, config: &Object, force: bool, write: &Write) -> Result<Object, ApplyError> {
    match apply_once(live, config, force, write) {
        Err(ApplyError::Conflicts(conflicts)) if write.manager == CLIENT_SIDE_APPLY_UPGRADER && !force => {
            // Upgrading from client-side apply: conflicts on fields the last
            // applied configuration set (to their live values) are taken over.
            let allowed = live.map(|l| client_side_applied(l, write)).unwrap_or_default();
            let remaining: Vec<Conflict> = conflicts
                .iter()
                .filter(|c| !allowed.iter().any(|p| fieldset::path_string(p) == c.path))
                .cloned()
                .collect();
            if remaining.is_empty() {
                apply_once(live, config, true, write)
            } else {
                Err(ApplyError::Conflicts(remaining))
            }
        }
        other => other,
    }
    .map(|mut object| {
        keep_last_applied_in_sync(live, config, &mut object, write);
        object
    })
}

/// The fields client-side apply set, per the live object's annotation, whose
/// values are still the live ones.
fn client_side_applied(live: &Object, write: &Write) -> Set {
    let Some(text) = annotation(live, LAST_APPLIED_ANNOTATION) else { return Set::new() };
    let Ok(last) = serde_json::from_str::<Value>(&text) else { return Set::new() };
    let set = fieldset::field_set(&last, write.ty());
    let merged = fieldset::merge(&without_managed_fields(live), &last, write.ty());
    let differs = fieldset::compare(&without_managed_fields(live), &merged, write.ty()).changed();
    set.into_iter().filter(|p| !differs.contains(p)).collect()
}

fn annotation(object: &Object, name: &str) -> Option<String> {
    object.get("metadata")?.get("annotations")?.get(name)?.as_str().map(str::to_string)
}

/// kubectl's applies keep an existing client-side apply annotation up to
/// date (the applied configuration), so client-side apply still works after.
fn keep_last_applied_in_sync(live: Option<&Object>, config: &Object, object: &mut Object, write: &Write) {
    if write.manager != CLIENT_SIDE_APPLY_UPGRADER
        || live.and_then(|l| annotation(l, LAST_APPLIED_ANNOTATION)).is_none()
    {
        return;
    }
    let mut applied = config.clone();
    if let Some(Value::Object(meta)) = applied.get_mut("metadata") {
        if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
            annotations.shift_remove(LAST_APPLIED_ANNOTATION);
            if annotations.is_empty() {
                meta.shift_remove("annotations");
            }
        }
    }
    let text = format!("{}\n", Value::Object(applied));
    if let Some(Value::Object(meta)) = object.get_mut("metadata") {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Value::Object(annotations) = annotations {
            annotations.insert(LAST_APPLIED_ANNOTATION.into(), json!(text));
        }
    }
}

fn apply_once(live: Option<&Object>, config: &Object, force: bool, write: &Write) -> Result<Object, ApplyError> {
    let ty = write.ty();
    let mut entries = live.map(decode).unwrap_or_default();
    let live_value = live.map(without_managed_fields).unwrap_or_else(|| json!({}));
    let config_value = Value::Object(config.clone());
    let merged = fieldset::merge(&live_value, &config_value, ty);
    let me = Entry {
        manager: write.manager.to_string(),
        operation: Operation::Apply,
        api_version: write.api_version.to_string(),
        time: None,
        subresource: write.subresource.to_string(),
        fields: write.tracked_only(fieldset::field_set(&config_value, ty)),
    };
    let previous = entries.iter().position(|e| e.identity() == me.identity()).map(|i| entries.remove(i));
    // Fields the applier set before and no longer does are removed, unless
    // another manager owns them (or something below them).
    let pruned = match &previous {
        Some(previous) => {
            let dropped: Set = previous
                .fields
                .iter()
                .filter(|p| !fieldset::holds_or_below(&me.fields, p))
                .filter(|p| !entries.iter().any(|e| fieldset::holds_or_below(&e.fields, p)))
                .cloned()
                .collect();
            fieldset::remove(&merged, &dropped, ty)
        }
        None => merged,
    };
    let comparison = fieldset::compare(&live_value, &pruned, ty);
    let changed = write.tracked_only(comparison.changed());
    let mut conflicts = Vec::new();
    for entry in entries.iter_mut() {
        let taken: Vec<&Path> = entry.fields.intersection(&changed).collect();
        conflicts.extend(taken.iter().map(|p| Conflict { manager: entry.display(), path: fieldset::path_string(p) }));
        entry.fields.retain(|p| !changed.contains(p) && !comparison.removed.contains(p));
    }
    if !force && !conflicts.is_empty() {
        return Err(ApplyError::Conflicts(conflicts));
    }
    let object_changed = pruned != live_value;
    let time = match &previous {
        Some(previous) if !object_changed => previous.time.clone(),
        _ => Some(write.now.to_string()),
    };
    entries.push(Entry { time, ..me });
    cap_update_managers(&mut entries);
    // Merging and pruning objects yields an object.
    let mut object = match pruned {
        Value::Object(object) => object,
        _ => config.clone(),
    };
    encode(&mut object, entries);
    Ok(object)
}

#[cfg(test)]
mod tests;
