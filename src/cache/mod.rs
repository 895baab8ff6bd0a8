//! Objects kept already encoded: what every read and every watcher shares
//! without copying, held as compactly as the bytes allow.
//!
//! A [`CachedObject`] is built once when a shard applies a committed entry: the
//! stored value (the object without its resourceVersion, as etcd stores it for
//! Kubernetes) is read once, its `metadata.resourceVersion` set to the entry's
//! revision, and the result kept as one `Bytes`. The metadata filters need
//! (name, namespace, uid, creationTimestamp, labels, selectable fields) is not
//! copied out: it is a list of spans into those bytes ([`ObjectMeta`]), with a
//! small side buffer only for the rare value whose JSON text is not its value
//! (an escaped string, a number JSON writes differently); the selectable
//! fields' paths are shared by every object of a resource (interned per core).
//!
//! The rarer representations (protobuf, CBOR, YAML) are built from `json`
//! lazily and kept beside it while the derived-encodings budget allows
//! (`encodings.rs`); an object that never had one costs one word for them.
//!
//! Invariants: no I/O; `json` is immutable once built and is the exact body a
//! GET returns; the metadata's resourceVersion is `mod_revision`; every span
//! lies inside `json` (or the side buffer) on character boundaries.

pub mod encodings;

pub use encodings::{
    derived_bytes_held, derived_bytes_max, encodings_built, set_derived_bytes_max, DerivedBudget, Encodings, Format,
};

use crate::log::Revision;
use bytes::Bytes;
use serde_json::Value;
use std::cell::RefCell;
use std::sync::Arc;

/// Where a metadata value's text is: a byte range of the object's JSON, or
/// (high bit of `start` set) of its side buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    const EMPTY: Span = Span { start: 0, len: 0 };
    /// A selectable field whose value is an object or array: no value.
    const ABSENT: Span = Span { start: u32::MAX, len: u32::MAX };
    const SIDE: u32 = 1 << 31;
}

/// The selectable fields' paths of one resource, shared by all its objects.
type FieldPaths = Arc<Vec<String>>;

thread_local! {
    /// This core's interned path lists (a handful: one per resource that has
    /// selectable fields), most recently used first.
    static PATHS: RefCell<Vec<FieldPaths>> = const { RefCell::new(Vec::new()) };
}

/// The shared path list equal to `fields` (interned on this core).
fn intern_paths(fields: &[String]) -> Option<FieldPaths> {
    if fields.is_empty() {
        return None;
    }
    PATHS.with(|paths| {
        let mut paths = paths.borrow_mut();
        if let Some(found) = paths.iter().position(|p| p.as_slice() == fields) {
            let hit = paths[found].clone();
            if found > 0 {
                paths.swap(0, found);
            }
            return Some(hit);
        }
        let made: FieldPaths = Arc::new(fields.to_vec());
        paths.insert(0, made.clone());
        Some(made)
    })
}

/// The metadata a shard needs to filter and order objects without parsing
/// their JSON again: spans into the object's JSON (see [`Meta`] to read it).
///
/// `spans` holds, in order: name, namespace, uid, creationTimestamp, one
/// value per selectable field (in `paths` order), then each label's key and
/// value.
#[derive(Debug)]
pub struct ObjectMeta {
    spans: Box<[Span]>,
    paths: Option<FieldPaths>,
    /// The text of values whose JSON text is not their value (escapes).
    side: Option<Box<str>>,
}

const NAME: usize = 0;
const NAMESPACE: usize = 1;
const UID: usize = 2;
const CREATION_TIMESTAMP: usize = 3;
const FIXED_SPANS: usize = 4;

impl ObjectMeta {
    fn field_count(&self) -> usize {
        self.paths.as_ref().map_or(0, |p| p.len())
    }

    /// Heap bytes this metadata holds (its spans and side buffer; the paths
    /// are shared).
    fn heap_bytes(&self) -> usize {
        self.spans.len() * std::mem::size_of::<Span>() + self.side.as_ref().map_or(0, |s| s.len())
    }
}

/// A value's text while the metadata is being gathered: borrowed from the
/// input (a byte offset of it is known) or decoded.
enum Text<'a> {
    /// A slice of the input text.
    Slice(&'a str),
    /// A value with no text of its own in the input.
    Owned(String),
    /// An object or array: not a selectable value.
    Absent,
}

/// Collects spans; `offset` maps an input slice to its offset in the output
/// JSON (`None`: the value is not in the output, keep it in the side buffer).
struct MetaBuilder {
    spans: Vec<Span>,
    side: String,
}

impl MetaBuilder {
    fn new(capacity: usize) -> MetaBuilder {
        MetaBuilder { spans: Vec::with_capacity(capacity), side: String::new() }
    }

    fn owned(&mut self, text: &str) -> Span {
        if text.is_empty() {
            return Span::EMPTY;
        }
        let start = self.side.len() as u32 | Span::SIDE;
        self.side.push_str(text);
        Span { start, len: text.len() as u32 }
    }

    fn push(&mut self, text: Text<'_>, offset: &dyn Fn(&str) -> Option<usize>) {
        let span = match text {
            Text::Absent => Span::ABSENT,
            Text::Slice("") => Span::EMPTY,
            Text::Slice(slice) => match offset(slice) {
                Some(start) => Span { start: start as u32, len: slice.len() as u32 },
                None => self.owned(slice),
            },
            Text::Owned(text) => self.owned(&text),
        };
        self.spans.push(span);
    }

    fn finish(self, paths: Option<FieldPaths>) -> ObjectMeta {
        let side = (!self.side.is_empty()).then(|| self.side.into_boxed_str());
        ObjectMeta { spans: self.spans.into_boxed_slice(), paths, side }
    }
}

/// A read-only view of an object's metadata.
#[derive(Clone, Copy)]
pub struct Meta<'a> {
    json: &'a [u8],
    meta: &'a ObjectMeta,
}

impl<'a> Meta<'a> {
    fn bytes(&self, span: Span) -> &'a [u8] {
        if span == Span::ABSENT {
            return &[];
        }
        let (buffer, start) = if span.start & Span::SIDE != 0 {
            (self.meta.side.as_deref().map_or(&[][..], str::as_bytes), (span.start & !Span::SIDE) as usize)
        } else {
            (self.json, span.start as usize)
        };
        buffer.get(start..start + span.len as usize).unwrap_or_default()
    }

    fn text(&self, span: Span) -> &'a str {
        std::str::from_utf8(self.bytes(span)).unwrap_or_default()
    }

    pub fn name(&self) -> &'a str {
        self.text(self.meta.spans[NAME])
    }

    pub fn namespace(&self) -> &'a str {
        self.text(self.meta.spans[NAMESPACE])
    }

    pub fn uid(&self) -> &'a str {
        self.text(self.meta.spans[UID])
    }

    pub fn creation_timestamp(&self) -> &'a str {
        self.text(self.meta.spans[CREATION_TIMESTAMP])
    }

    fn label_spans(&self) -> &'a [Span] {
        let meta: &'a ObjectMeta = self.meta;
        &meta.spans[FIXED_SPANS + meta.field_count()..]
    }

    pub fn label(&self, key: &str) -> Option<&'a str> {
        self.label_spans()
            .chunks_exact(2)
            .find(|pair| self.bytes(pair[0]) == key.as_bytes())
            .map(|pair| self.text(pair[1]))
    }

    /// The labels, in the object's order.
    pub fn labels(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let view = *self;
        self.label_spans().chunks_exact(2).map(move |pair| (view.text(pair[0]), view.text(pair[1])))
    }

    /// The value of a selectable field as a field selector compares it.
    pub fn field(&self, path: &str) -> Option<&'a str> {
        match path {
            "metadata.name" => Some(self.name()),
            "metadata.namespace" => Some(self.namespace()),
            _ => {
                let paths = self.meta.paths.as_ref()?;
                let index = paths.iter().position(|p| p == path)?;
                let span = self.meta.spans[FIXED_SPANS + index];
                (span != Span::ABSENT).then(|| self.text(span))
            }
        }
    }

    /// The selectable fields that have a value, with it, in path order.
    pub fn fields(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let view = *self;
        let meta: &'a ObjectMeta = self.meta;
        let paths: &'a [String] = meta.paths.as_deref().map_or(&[], |p| p.as_slice());
        paths
            .iter()
            .zip(&meta.spans[FIXED_SPANS..])
            .filter(|(_, span)| **span != Span::ABSENT)
            .map(move |(path, span)| (path.as_str(), view.text(*span)))
    }

    /// Everything above as owned values (tests and fuzzing compare them).
    pub fn summary(&self) -> MetaSummary {
        MetaSummary {
            name: self.name().to_string(),
            namespace: self.namespace().to_string(),
            uid: self.uid().to_string(),
            creation_timestamp: self.creation_timestamp().to_string(),
            labels: self.labels().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            fields: self.fields().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }
}

/// The metadata of an object as owned values, for comparisons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaSummary {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub creation_timestamp: String,
    pub labels: Vec<(String, String)>,
    pub fields: Vec<(String, String)>,
}

/// One version of one object, encoded.
#[derive(Debug)]
pub struct CachedObject {
    pub key: Bytes,
    /// The object as JSON, exactly as served.
    pub json: Bytes,
    pub mod_revision: Revision,
    pub create_revision: Revision,
    meta: ObjectMeta,
    /// The other representations, each built from `json` on first use and
    /// shared by every request and watcher after that (while the derived
    /// encodings' budget keeps them).
    pub encodings: Encodings,
}

impl CachedObject {
    /// A freshly built object: its served JSON and the metadata found in
    /// it, no derived encodings yet.
    fn built(
        key: Bytes,
        json: Vec<u8>,
        mod_revision: Revision,
        create_revision: Revision,
        meta: ObjectMeta,
    ) -> Arc<Self> {
        Arc::new(CachedObject {
            key,
            json: Bytes::from(json),
            mod_revision,
            create_revision,
            meta,
            encodings: Encodings::default(),
        })
    }

    /// The metadata filters read (spans into `json`).
    pub fn meta(&self) -> Meta<'_> {
        Meta { json: &self.json, meta: &self.meta }
    }

    /// Bytes this version holds besides its JSON and its key: the object
    /// itself with its `Arc` counts, and its metadata spans. Derived
    /// encodings are counted apart (`encodings::derived_bytes_held`).
    pub fn metadata_bytes(&self) -> usize {
        ARC_COUNTS_BYTES + std::mem::size_of::<CachedObject>() + self.meta.heap_bytes()
    }
}

/// The strong and weak counts in front of every `Arc` allocation.
const ARC_COUNTS_BYTES: usize = 2 * std::mem::size_of::<usize>();

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("stored value is not a JSON object: {0}")]
    NotJson(String),
    #[error("stored value has no metadata object")]
    NoMetadata,
    #[error("stored value is too large to cache: {0} bytes")]
    TooLarge(usize),
}

/// The largest JSON a span can address (2 GiB; the log's records are far
/// smaller).
const JSON_BYTES_MAX: usize = (Span::SIDE - 1) as usize;

/// Builds the cached form of a stored value at `mod_revision`.
/// `selectable_fields` are the dotted paths whose values field selectors use.
///
/// The fast path reads the value without building a document: it borrows
/// each member's raw text, finds the metadata filters need, and splices
/// `"resourceVersion"` into the stored bytes at the place kube-apiserver's
/// field order puts it. Anything it does not recognise exactly (escaped keys,
/// duplicate keys, non-string labels) takes the slow path, which decodes and
/// re-encodes the whole object. Numbers are served exactly as stored, never
/// converted: stored values come from the API layer's own encoder, so they
/// are always within what a full decode accepts.
pub fn encode_stored(
    key: Bytes,
    value: &[u8],
    mod_revision: Revision,
    create_revision: Revision,
    selectable_fields: &[String],
) -> Result<Arc<CachedObject>, CacheError> {
    if value.len() >= JSON_BYTES_MAX {
        return Err(CacheError::TooLarge(value.len()));
    }
    let paths = intern_paths(selectable_fields);
    if let Some((json, meta)) = fast::encode(value, mod_revision, selectable_fields, paths.clone()) {
        return Ok(CachedObject::built(key, json, mod_revision, create_revision, meta));
    }
    encode_slow(key, value, mod_revision, create_revision, selectable_fields, paths)
}

/// The reference encoding: decode the whole value, set the resourceVersion,
/// encode it again. Used when the fast path declines, and by tests as the
/// model the fast path must agree with.
pub fn encode_stored_slow(
    key: Bytes,
    value: &[u8],
    mod_revision: Revision,
    create_revision: Revision,
    selectable_fields: &[String],
) -> Result<Arc<CachedObject>, CacheError> {
    let paths = intern_paths(selectable_fields);
    encode_slow(key, value, mod_revision, create_revision, selectable_fields, paths)
}

/// The first byte of a snapshot hint: its layout, changed with it.
const HINT_VERSION: u8 = 1;
/// The first byte of a hint that says the value takes the reference path
/// (followed by the fields' hash only): it is parsed at load, and the
/// snapshot need not be rewritten to find that out again.
const HINT_NONE: u8 = 0;
/// Bytes of a hint before its spans: version, fields hash, splice start
/// and end, splice form, span count.
const HINT_HEADER_BYTES: usize = 1 + 8 + 4 + 4 + 1 + 4;

/// FNV-1a of the selectable fields' paths: a hint is used only with the
/// paths it was made for (a custom resource's may change between a snapshot
/// and a restart).
fn fields_hash(selectable_fields: &[String]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for path in selectable_fields {
        for byte in path.bytes().chain(std::iter::once(0xff)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// What a snapshot keeps beside a stored value so that a restart builds its
/// [`CachedObject`] without parsing it ([`encode_stored_hinted`]): where the
/// resourceVersion goes and the metadata's spans, in the value's own
/// coordinates (they do not depend on the revision). A value that takes the
/// reference path gets a short hint saying so (it is parsed at load, as
/// before).
///
/// Layout (little endian): version `u8` ([`HINT_VERSION`]), the fields'
/// hash `u64`, splice start `u32`, splice end `u32`, splice form `u8` (0
/// replace, 1 first member with a comma, 2 first member alone, 3 after a
/// member), span count `u32`, the spans (`u32` start, `u32` len each), then
/// the side buffer's text; or [`HINT_NONE`] and the fields' hash.
pub fn snapshot_hint(value: &[u8], selectable_fields: &[String]) -> Vec<u8> {
    let hash = fields_hash(selectable_fields).to_le_bytes();
    let none = || [&[HINT_NONE][..], &hash].concat();
    let analysis = match fast::analyze(value, selectable_fields) {
        Some(analysis) if value.len() < JSON_BYTES_MAX && analysis.spans.len() <= u32::MAX as usize => analysis,
        _ => return none(),
    };
    let mut out = Vec::with_capacity(HINT_HEADER_BYTES + analysis.spans.len() * 8 + analysis.side.len());
    out.push(HINT_VERSION);
    out.extend_from_slice(&hash);
    out.extend_from_slice(&analysis.splice_start.to_le_bytes());
    out.extend_from_slice(&analysis.splice_end.to_le_bytes());
    out.push(match analysis.splice {
        fast::Splice::Replace => 0,
        fast::Splice::First { comma: true } => 1,
        fast::Splice::First { comma: false } => 2,
        fast::Splice::After => 3,
    });
    out.extend_from_slice(&(analysis.spans.len() as u32).to_le_bytes());
    for span in &analysis.spans {
        out.extend_from_slice(&span.start.to_le_bytes());
        out.extend_from_slice(&span.len.to_le_bytes());
    }
    out.extend_from_slice(analysis.side.as_bytes());
    out
}

/// Whether `hint` is one [`encode_stored_hinted`] would use with these
/// selectable fields (its layout and the fields it was made for; not that it
/// fits its value, which only the value's own analysis makes it do).
pub fn hint_is_current(hint: &[u8], selectable_fields: &[String]) -> bool {
    hint.len() >= 9
        && matches!(hint[0], HINT_VERSION | HINT_NONE)
        && hint[1..9] == fields_hash(selectable_fields).to_le_bytes()
}

/// The selectable fields of one resource, prepared once for the many objects
/// a restart loads: their interned paths and the hash hints are checked with.
pub struct PreparedFields<'a> {
    fields: &'a [String],
    paths: Option<FieldPaths>,
    hash: [u8; 8],
}

impl<'a> PreparedFields<'a> {
    pub fn new(fields: &'a [String]) -> PreparedFields<'a> {
        PreparedFields { fields, paths: intern_paths(fields), hash: fields_hash(fields).to_le_bytes() }
    }

    pub fn fields(&self) -> &'a [String] {
        self.fields
    }
}

/// The object a hint describes, if its layout checks out for these fields
/// and it fits the value; read in place.
fn build_hinted(
    value: &[u8],
    revision: Revision,
    fields: &PreparedFields<'_>,
    hint: &[u8],
) -> Option<(Vec<u8>, ObjectMeta)> {
    if hint.len() < HINT_HEADER_BYTES || hint[0] != HINT_VERSION || hint[1..9] != fields.hash {
        return None;
    }
    let word = |at: usize| -> u32 { u32::from_le_bytes([hint[at], hint[at + 1], hint[at + 2], hint[at + 3]]) };
    let splice = match hint[17] {
        0 => fast::Splice::Replace,
        1 => fast::Splice::First { comma: true },
        2 => fast::Splice::First { comma: false },
        3 => fast::Splice::After,
        _ => return None,
    };
    let count = word(18) as usize;
    let spans_end = count.checked_mul(8)?.checked_add(HINT_HEADER_BYTES)?;
    // Name, namespace, uid, creationTimestamp, the fields, label pairs.
    let fixed = FIXED_SPANS + fields.fields.len();
    if spans_end > hint.len() || count < fixed || !(count - fixed).is_multiple_of(2) {
        return None;
    }
    let side = std::str::from_utf8(&hint[spans_end..]).ok()?;
    let spans = hint[HINT_HEADER_BYTES..spans_end].chunks_exact(8).map(|pair| Span {
        start: u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]),
        len: u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]),
    });
    fast::build_from(value, revision, (word(9), word(13), splice), spans, side, fields.paths.clone())
}

/// [`encode_stored`], from the value's [`snapshot_hint`] when `hint` is one
/// made for these selectable fields: the served bytes are the value with
/// the resourceVersion spliced in, the metadata the hint's spans; nothing is
/// parsed. Any other hint (empty, another layout, other fields, one that
/// does not fit the value) is ignored and the value encoded as usual.
pub fn encode_stored_hinted(
    key: Bytes,
    value: &[u8],
    mod_revision: Revision,
    create_revision: Revision,
    fields: &PreparedFields<'_>,
    hint: &[u8],
) -> Result<Arc<CachedObject>, CacheError> {
    if value.len() < JSON_BYTES_MAX {
        if let Some((json, meta)) = build_hinted(value, mod_revision, fields, hint) {
            return Ok(CachedObject::built(key, json, mod_revision, create_revision, meta));
        }
    }
    encode_stored(key, value, mod_revision, create_revision, fields.fields)
}

fn encode_slow(
    key: Bytes,
    value: &[u8],
    mod_revision: Revision,
    create_revision: Revision,
    selectable_fields: &[String],
    paths: Option<FieldPaths>,
) -> Result<Arc<CachedObject>, CacheError> {
    let mut object: Value = serde_json::from_slice(value).map_err(|e| CacheError::NotJson(e.to_string()))?;
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return Err(CacheError::NoMetadata);
    };
    set_resource_version(metadata, mod_revision);
    let json = serde_json::to_vec(&object).map_err(|e| CacheError::NotJson(e.to_string()))?;
    if json.len() >= JSON_BYTES_MAX {
        return Err(CacheError::TooLarge(json.len()));
    }
    let meta = parse_meta(&object, selectable_fields, paths);
    Ok(CachedObject::built(key, json, mod_revision, create_revision, meta))
}

/// Sets `metadata.resourceVersion`, keeping kube-apiserver's field order
/// (after name, generateName, namespace and uid).
pub fn set_resource_version(metadata: &mut serde_json::Map<String, Value>, revision: Revision) {
    let value = Value::String(revision.0.to_string());
    if let Some(slot) = metadata.get_mut("resourceVersion") {
        *slot = value;
        return;
    }
    let position = resource_version_position(metadata.keys().map(String::as_str));
    metadata.shift_insert(position, "resourceVersion".to_string(), value);
}

/// Where `resourceVersion` goes among metadata members that lack it. A typed
/// object's metadata is in ObjectMeta's field order (`name`, `generateName`,
/// `namespace`, `selfLink`, `uid`, then `resourceVersion`); a custom
/// resource's, as kube-apiserver stores and serves it (an unstructured Go map),
/// in ascending key order, where it goes after the keys that sort before it.
/// The two are told apart by the first key: typed order starts with `name`
/// whenever it is present, ascending order starts with a key before it
/// (`creationTimestamp` is on every stored object).
fn resource_version_position<'a>(keys: impl Iterator<Item = &'a str> + Clone) -> usize {
    let mut sorted = keys.clone().zip(keys.clone().skip(1)).all(|(a, b)| a < b);
    sorted &= keys.clone().next().is_some_and(|first| first < "name");
    if sorted {
        keys.filter(|k| *k < "resourceVersion").count()
    } else {
        keys.filter(|k| ["name", "generateName", "namespace", "selfLink", "uid"].contains(k)).count()
    }
}

/// The reference metadata: every value decoded, kept in the side buffer.
fn parse_meta(object: &Value, selectable_fields: &[String], paths: Option<FieldPaths>) -> ObjectMeta {
    let metadata = &object["metadata"];
    let text = |v: &Value| Text::Owned(v.as_str().unwrap_or_default().to_string());
    let labels = metadata["labels"].as_object();
    let mut builder =
        MetaBuilder::new(FIXED_SPANS + selectable_fields.len() + 2 * labels.map_or(0, serde_json::Map::len));
    let nowhere = |_: &str| None;
    for name in ["name", "namespace", "uid", "creationTimestamp"] {
        builder.push(text(&metadata[name]), &nowhere);
    }
    for path in selectable_fields {
        builder.push(field_value(object, path).map_or(Text::Absent, Text::Owned), &nowhere);
    }
    for (k, v) in labels.into_iter().flatten() {
        builder.push(Text::Owned(k.clone()), &nowhere);
        builder.push(text(v), &nowhere);
    }
    builder.finish(paths)
}

/// The one field label whose value is not at its own path: a core Event's
/// `source` selects `source.component` (kube's event strategy,
/// `ToSelectableFields`). Where `source` is a string (a custom resource's
/// selectable field), it is its own value.
const EVENT_SOURCE: &str = "source";

/// The value at a dotted path, as a field selector sees it: strings as they
/// are, booleans and numbers in their JSON text, missing as empty string.
fn field_value(object: &Value, path: &str) -> Option<String> {
    let mut cursor = object;
    for part in path.split('.') {
        match cursor.get(part) {
            Some(next) => cursor = next,
            None => return Some(String::new()),
        }
    }
    if path == EVENT_SOURCE && cursor.is_object() {
        return field_value(cursor, "component");
    }
    match cursor {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

mod fast {
    //! The splice encoder: borrowed raw members, no document built.
    use super::{FieldPaths, MetaBuilder, ObjectMeta, Revision, Span, Text, FIXED_SPANS};
    use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
    use serde_json::value::RawValue;
    use std::fmt;

    /// An object's members in order, keys and values borrowed from the input.
    struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

    impl<'de> Deserialize<'de> for Members<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct MembersVisitor;
            impl<'de> Visitor<'de> for MembersVisitor {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                    let mut members = Vec::new();
                    while let Some(entry) = map.next_entry::<&'de str, &'de RawValue>()? {
                        members.push(entry);
                    }
                    Ok(Members(members))
                }
            }
            deserializer.deserialize_map(MembersVisitor)
        }
    }

    impl<'a> Members<'a> {
        fn parse(text: &'a str) -> Option<Members<'a>> {
            let members: Members<'a> = serde_json::from_str(text).ok()?;
            // Duplicate keys: the reference decoder keeps the last; decline.
            let mut keys: Vec<&str> = members.0.iter().map(|(k, _)| *k).collect();
            keys.sort_unstable();
            keys.dedup();
            (keys.len() == members.0.len()).then_some(members)
        }

        fn get(&self, key: &str) -> Option<&'a RawValue> {
            self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
        }
    }

    /// A string member's value: its text inside the quotes when it has no
    /// escapes, else decoded; a non-string reads as empty (as the reference
    /// reads it). `None` when an escaped string does not decode.
    fn string<'a>(raw: Option<&'a RawValue>) -> Option<Text<'a>> {
        let Some(raw) = raw else { return Some(Text::Slice("")) };
        let text = raw.get();
        if !text.starts_with('"') {
            return Some(Text::Slice(""));
        }
        if !text.contains('\\') {
            return Some(Text::Slice(&text[1..text.len() - 1]));
        }
        serde_json::from_str::<String>(text).ok().map(Text::Owned)
    }

    /// The members of first-level objects (`spec`, `status`, ...), parsed once
    /// per value however many selectable fields look into them.
    struct Containers<'a> {
        parsed: Vec<(&'a str, Option<Members<'a>>)>,
    }

    impl<'a> Containers<'a> {
        fn get(&mut self, top: &Members<'a>, name: &'a str) -> Option<&Members<'a>> {
            let index = match self.parsed.iter().position(|(n, _)| *n == name) {
                Some(index) => index,
                None => {
                    let members = top.get(name).and_then(|raw| Members::parse(raw.get()));
                    self.parsed.push((name, members));
                    self.parsed.len() - 1
                }
            };
            self.parsed[index].1.as_ref()
        }
    }

    /// A field selector's view of the value at a dotted path (see
    /// `field_value`); `Absent` for objects and arrays (not selectable),
    /// `None` when the value does not parse.
    fn field<'a>(top: &Members<'a>, containers: &mut Containers<'a>, path: &'a str) -> Option<Text<'a>> {
        let mut parts = path.split('.');
        let Some(first) = parts.next() else { return Some(Text::Slice("")) };
        let Some(second) = parts.next() else {
            let value = top.get(first);
            if first == super::EVENT_SOURCE && value.is_some_and(|v| v.get().starts_with('{')) {
                return Members::parse(value?.get()).map_or(Some(Text::Slice("")), |m| scalar(m.get("component")));
            }
            return scalar(value);
        };
        if top.get(first).is_none() {
            return Some(Text::Slice(""));
        }
        let Some(container) = containers.get(top, first) else {
            // Not an object: the reference finds nothing below a scalar.
            return Some(Text::Slice(""));
        };
        let mut cursor = match container.get(second) {
            Some(raw) => raw,
            None => return Some(Text::Slice("")),
        };
        for part in parts {
            let Some(members) = Members::parse(cursor.get()) else {
                return Some(Text::Slice(""));
            };
            match members.get(part) {
                Some(next) => cursor = next,
                None => return Some(Text::Slice("")),
            }
        }
        scalar(Some(cursor))
    }

    /// A selectable value: strings as they are, booleans and numbers in their
    /// JSON text, null or missing as empty; `Absent` for objects and arrays.
    /// The input's own text is used whenever it is the value's text.
    fn scalar(raw: Option<&RawValue>) -> Option<Text<'_>> {
        let Some(raw) = raw else { return Some(Text::Slice("")) };
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') => string(Some(raw)),
            Some(b'{') | Some(b'[') => Some(Text::Absent),
            Some(b'n') => Some(Text::Slice("")),
            Some(b't') | Some(b'f') => Some(Text::Slice(text)),
            // A number as the reference writes it; one it cannot read (beyond
            // f64) has no value, as the reference's parse of it fails.
            _ => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::Number(n)) => {
                    let written = n.to_string();
                    Some(if written == text { Text::Slice(text) } else { Text::Owned(written) })
                }
                _ => Some(Text::Absent),
            },
        }
    }

    /// Offset of `inner` (a slice of `outer`) within `outer`.
    fn offset_in(outer: &str, inner: &str) -> Option<usize> {
        let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
        (start + inner.len() <= outer.len()).then_some(start)
    }

    /// Where the resourceVersion goes in a stored value.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Splice {
        /// `value[start..end]` is the old resourceVersion's value: replaced.
        Replace,
        /// Inserted as the first member of metadata, followed by a comma
        /// unless metadata is empty.
        First { comma: bool },
        /// Inserted after the member ending at `start`.
        After,
    }

    /// What the splice encoder learns from a stored value, whatever the
    /// revision: where the resourceVersion goes, and the metadata's spans in
    /// the value's own coordinates (`Span::SIDE`: in `side`). Built by
    /// [`analyze`]; [`build`] turns it and a revision into the served bytes
    /// and their [`ObjectMeta`], with no scan of the value. A snapshot keeps
    /// it beside the value (`super::snapshot_hint`), so a restart builds
    /// objects without parsing them.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub(super) struct Analysis {
        pub splice_start: u32,
        pub splice_end: u32,
        pub splice: Splice,
        pub spans: Vec<Span>,
        pub side: String,
    }

    impl Splice {
        /// The text spliced in (written without `format!`: a restart makes
        /// one per object).
        fn insert(self, revision: Revision) -> Insert {
            let mut insert = Insert { bytes: [0; Insert::BYTES_MAX], len: 0 };
            let (before, after): (&[u8], &[u8]) = match self {
                Splice::Replace => (b"\"", b"\""),
                Splice::First { comma: true } => (b"\"resourceVersion\":\"", b"\","),
                Splice::First { comma: false } => (b"\"resourceVersion\":\"", b"\""),
                Splice::After => (b",\"resourceVersion\":\"", b"\""),
            };
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            let mut n = revision.0;
            loop {
                at -= 1;
                digits[at] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            for part in [before, &digits[at..], after] {
                insert.bytes[insert.len..insert.len + part.len()].copy_from_slice(part);
                insert.len += part.len();
            }
            insert
        }
    }

    /// The resourceVersion text of one splice: a prefix and a suffix of 21
    /// bytes together at most, and up to 20 digits.
    pub(super) struct Insert {
        bytes: [u8; Insert::BYTES_MAX],
        len: usize,
    }

    impl Insert {
        const BYTES_MAX: usize = 19 + 20 + 2;

        fn len(&self) -> usize {
            self.len
        }

        fn as_bytes(&self) -> &[u8] {
            &self.bytes[..self.len]
        }
    }

    /// Reads a stored value once: the splice and the metadata spans. `None`
    /// when the value is not what the API layer writes (the reference path
    /// then decodes it).
    pub(super) fn analyze(value: &[u8], selectable_fields: &[String]) -> Option<Analysis> {
        let text = std::str::from_utf8(value).ok()?;
        let top = Members::parse(text)?;
        let metadata_raw = top.get("metadata")?;
        let metadata_text = metadata_raw.get();
        if !metadata_text.starts_with('{') {
            return None;
        }
        let metadata = Members::parse(metadata_text)?;
        // Where the resourceVersion goes (and what it replaces, if present).
        let (splice_start, splice_end, splice) = match metadata.get("resourceVersion") {
            Some(existing) => {
                let start = offset_in(text, existing.get())?;
                (start, start + existing.get().len(), Splice::Replace)
            }
            None => {
                let position = super::resource_version_position(metadata.0.iter().map(|(k, _)| *k));
                if position == 0 {
                    let start = offset_in(text, metadata_text)? + 1;
                    (start, start, Splice::First { comma: !metadata.0.is_empty() })
                } else {
                    let (_, before) = metadata.0.get(position - 1)?;
                    let end = offset_in(text, before.get())? + before.get().len();
                    (end, end, Splice::After)
                }
            }
        };
        let offset = |slice: &str| offset_in(text, slice);
        let labels = match metadata.get("labels") {
            // The reference reads labels only from an object.
            Some(raw) if raw.get().starts_with('{') => Some(Members::parse(raw.get())?),
            _ => None,
        };
        let label_count = labels.as_ref().map_or(0, |l| l.0.len());
        let mut builder = MetaBuilder::new(FIXED_SPANS + selectable_fields.len() + 2 * label_count);
        for name in ["name", "namespace", "uid", "creationTimestamp"] {
            builder.push(string(metadata.get(name))?, &offset);
        }
        let mut containers = Containers { parsed: Vec::new() };
        for path in selectable_fields {
            builder.push(field(&top, &mut containers, path)?, &offset);
        }
        for (k, v) in labels.iter().flat_map(|l| l.0.iter()) {
            builder.push(Text::Slice(k), &offset);
            builder.push(string(Some(*v))?, &offset);
        }
        Some(Analysis {
            splice_start: u32::try_from(splice_start).ok()?,
            splice_end: u32::try_from(splice_end).ok()?,
            splice,
            spans: builder.spans,
            side: builder.side,
        })
    }

    /// The served bytes of `value` at `revision` and their metadata, from its
    /// analysis. `None` when the analysis does not fit the value (a span or
    /// the splice out of bounds): never from an analysis of the same value.
    pub(super) fn build(
        value: &[u8],
        revision: Revision,
        analysis: &Analysis,
        paths: Option<FieldPaths>,
    ) -> Option<(Vec<u8>, ObjectMeta)> {
        let splice = (analysis.splice_start, analysis.splice_end, analysis.splice);
        build_from(value, revision, splice, analysis.spans.iter().copied(), &analysis.side, paths)
    }

    /// [`build`] from an analysis' parts (a snapshot hint's, read in place).
    pub(super) fn build_from(
        value: &[u8],
        revision: Revision,
        (splice_start, splice_end, splice): (u32, u32, Splice),
        input_spans: impl ExactSizeIterator<Item = Span>,
        input_side: &str,
        paths: Option<FieldPaths>,
    ) -> Option<(Vec<u8>, ObjectMeta)> {
        let (splice_start, splice_end) = (splice_start as usize, splice_end as usize);
        if splice_start > splice_end || splice_end > value.len() {
            return None;
        }
        let insert = splice.insert(revision);
        let mut side = String::from(input_side);
        let mut spans = Vec::with_capacity(input_spans.len());
        for span in input_spans {
            let span = &span;
            let (start, len) = (span.start as usize, span.len as usize);
            let mapped = if *span == Span::ABSENT || span.len == 0 {
                *span
            } else if span.start & Span::SIDE != 0 {
                if ((span.start & !Span::SIDE) as usize).checked_add(len)? > input_side.len() {
                    return None;
                }
                *span
            } else if start.checked_add(len)? > value.len() {
                return None;
            } else if start + len <= splice_start {
                *span
            } else if start >= splice_end {
                Span { start: u32::try_from(start - splice_end + splice_start + insert.len()).ok()?, len: span.len }
            } else {
                // Inside what the splice replaces: not in the output; keep
                // its text in the side buffer.
                let text = std::str::from_utf8(&value[start..start + len]).ok()?;
                let at = side.len() as u32 | Span::SIDE;
                side.push_str(text);
                Span { start: at, len: span.len }
            };
            spans.push(mapped);
        }
        let mut out = Vec::with_capacity(value.len() - (splice_end - splice_start) + insert.len());
        out.extend_from_slice(&value[..splice_start]);
        out.extend_from_slice(insert.as_bytes());
        out.extend_from_slice(&value[splice_end..]);
        let side = (!side.is_empty()).then(|| side.into_boxed_str());
        Some((out, ObjectMeta { spans: spans.into_boxed_slice(), paths, side }))
    }

    pub(super) fn encode(
        value: &[u8],
        revision: Revision,
        selectable_fields: &[String],
        paths: Option<FieldPaths>,
    ) -> Option<(Vec<u8>, ObjectMeta)> {
        build(value, revision, &analyze(value, selectable_fields)?, paths)
    }
}

#[cfg(test)]
mod tests {

    /// A custom resource's metadata is in ascending key order (kube stores
    /// and serves an unstructured map): the resourceVersion goes where that
    /// order puts it, on both paths; a typed object's goes after `uid`.
    #[test]
    fn resource_version_follows_the_metadata_order() {
        let custom = br#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"creationTimestamp":"t","generation":1,"labels":{"a":"b"},"name":"w","namespace":"n","uid":"u"},"spec":{}}"#;
        let typed = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"n","uid":"u","creationTimestamp":"t"}}"#;
        for (value, after, before) in
            [(&custom[..], "\"namespace\":\"n\"", "\"uid\""), (&typed[..], "\"uid\":\"u\"", "\"creationTimestamp\"")]
        {
            for encoded in [
                encode_stored(Bytes::from_static(b"/k"), value, Revision(9), Revision(1), &[]).unwrap(),
                encode_stored_slow(Bytes::from_static(b"/k"), value, Revision(9), Revision(1), &[]).unwrap(),
            ] {
                let text = std::str::from_utf8(&encoded.json).unwrap();
                assert!(text.contains(&format!("{after},\"resourceVersion\":\"9\",{before}")), "{text}");
            }
        }
    }
    use super::*;

    /// A core Event's `source` selects its component, on both paths; a
    /// `source` that is a string is its own value.
    #[test]
    fn an_events_source_is_its_component() {
        let fields = vec!["source".to_string(), "reason".to_string()];
        for (case, source) in [
            (
                r#"{"kind":"Event","metadata":{"name":"e"},"reason":"Pulled","source":{"component":"kubelet","host":"n1"}}"#,
                "kubelet",
            ),
            (r#"{"kind":"Event","metadata":{"name":"e"},"reason":"Pulled","source":{}}"#, ""),
            (r#"{"kind":"Widget","metadata":{"name":"w"},"source":"git"}"#, "git"),
        ] {
            let fast = encode_stored(Bytes::new(), case.as_bytes(), Revision(2), Revision(1), &fields).unwrap();
            let slow = encode_stored_slow(Bytes::new(), case.as_bytes(), Revision(2), Revision(1), &fields).unwrap();
            for encoded in [fast, slow] {
                assert_eq!(encoded.meta().field("source"), Some(source), "{case}");
            }
        }
    }

    /// The fast path agrees with the reference encoding on canonical input
    /// (what the API layer stores): same bytes, same metadata.
    #[test]
    fn fast_path_matches_the_reference() {
        let fields: Vec<String> =
            ["spec.nodeName", "status.phase", "spec.hostNetwork", "spec.replicas", "involvedObject.kind", "spec"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let cases = [
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web","t":"x"}},"spec":{"nodeName":"n1","hostNetwork":true},"status":{"phase":"Running"}}"#,
            r#"{"kind":"Pod","metadata":{}}"#,
            r#"{"metadata":{"labels":{"a":"b"}}}"#,
            r#"{"metadata":{"generateName":"x-","name":"x-abcde"},"spec":{"replicas":3}}"#,
            r#"{"metadata":{"name":"a","resourceVersion":"12","uid":"u"}}"#,
            r#"{"metadata":{"name":"é\"q","namespace":"n"},"involvedObject":{"kind":"Pod"},"spec":5}"#,
            r#"{"metadata":{"name":"a","labels":{"x":1}},"spec":{"nodeName":null}}"#,
            r#"{"metadata":{"name":"a","labels":[1]},"status":"odd"}"#,
            r#"{"metadata":{"uid":"u","name":"late"}}"#,
            // Spans after a replaced resourceVersion move; escaped values go
            // to the side buffer.
            r#"{"metadata":{"name":"a","namespace":"n","resourceVersion":"123456","uid":"u\"x","creationTimestamp":"t","labels":{"k":"v\"q","l":"w"}},"spec":{"nodeName":"n1","hostNetwork":false,"replicas":100.5}}"#,
            r#"{"metadata":{"labels":{"a":"b"},"name":"after"},"spec":{"nodeName":{"x":1},"replicas":[1]},"status":{"phase":null}}"#,
        ];
        for case in cases {
            let value = case.as_bytes();
            let fast = fast::encode(value, Revision(42), &fields, intern_paths(&fields));
            let slow = encode_stored_slow(Bytes::new(), value, Revision(42), Revision(1), &fields).unwrap();
            match fast {
                Some((json, meta)) => {
                    assert_eq!(
                        String::from_utf8(json.clone()).unwrap(),
                        String::from_utf8(slow.json.to_vec()).unwrap(),
                        "{case}"
                    );
                    let view = Meta { json: &json, meta: &meta };
                    assert_eq!(view.summary(), slow.meta().summary(), "{case}");
                }
                None => panic!("fast path declined canonical input {case}"),
            }
        }
        // Not as the API layer writes it (escapes it would not write, numbers
        // it writes differently): the bytes are served as stored, the
        // metadata is still the reference's.
        for case in [
            r#"{"metadata":{"name":"\u0061b","uid":"u\u00e9","labels":{"k":"\u0076"}},"spec":{"replicas":1.0e2,"nodeName":"\/n"}}"#,
        ] {
            let (json, meta) = fast::encode(case.as_bytes(), Revision(3), &fields, intern_paths(&fields)).unwrap();
            let slow = encode_stored_slow(Bytes::new(), case.as_bytes(), Revision(3), Revision(1), &fields).unwrap();
            let view = Meta { json: &json, meta: &meta };
            assert_eq!(view.summary(), slow.meta().summary(), "{case}");
            assert_eq!((view.name(), view.uid(), view.label("k")), ("ab", "ué", Some("v")));
            assert_eq!((view.field("spec.replicas"), view.field("spec.nodeName")), (Some("100.0"), Some("/n")));
        }
        // Declined: duplicate keys, escaped keys; the reference still answers.
        for case in [r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#, r#"{"metadata":{"n\u0061me":"a"}}"#] {
            assert!(fast::encode(case.as_bytes(), Revision(1), &fields, None).is_none(), "{case}");
            assert!(encode_stored(Bytes::new(), case.as_bytes(), Revision(1), Revision(1), &fields).is_ok());
        }
    }

    /// A snapshot hint builds the same object as a scan of the value, at any
    /// revision (the resourceVersion's length moves the later spans), and is
    /// ignored, never misused, when made for other fields or damaged.
    #[test]
    fn hinted_encoding_matches_the_scan() {
        let fields: Vec<String> =
            ["spec.nodeName", "status.phase", "spec.hostNetwork", "spec.replicas", "metadata.resourceVersion"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let cases = [
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web","t":"x"}},"spec":{"nodeName":"n1","hostNetwork":true},"status":{"phase":"Running"}}"#,
            r#"{"kind":"Pod","metadata":{}}"#,
            r#"{"metadata":{"labels":{"a":"b"}}}"#,
            r#"{"metadata":{"creationTimestamp":"t","labels":{"a":"b"},"name":"w","namespace":"n","uid":"u"},"spec":{}}"#,
            r#"{"metadata":{"name":"a","namespace":"n","resourceVersion":"123456","uid":"u\"x","creationTimestamp":"t","labels":{"k":"v\"q","l":"w"}},"spec":{"nodeName":"n1","hostNetwork":false,"replicas":100.5}}"#,
            r#"{"metadata":{"name":"\u0061b","uid":"u\u00e9","labels":{"k":"\u0076"}},"spec":{"replicas":1.0e2,"nodeName":"\/n"}}"#,
        ];
        let prepared = PreparedFields::new(&fields);
        for case in cases {
            let value = case.as_bytes();
            let hint = snapshot_hint(value, &fields);
            assert_eq!(hint[0], HINT_VERSION, "{case}");
            assert!(hint_is_current(&hint, &fields));
            assert!(!hint_is_current(&hint, &fields[..2]));
            for revision in [Revision(7), Revision(1_234_567_890_123)] {
                let scanned = encode_stored(Bytes::from_static(b"/k"), value, revision, Revision(1), &fields).unwrap();
                for (used, fields) in [(&hint[..], &fields[..]), (&[][..], &fields[..]), (&hint[..], &fields[..2])] {
                    let hinted = encode_stored_hinted(
                        Bytes::from_static(b"/k"),
                        value,
                        revision,
                        Revision(1),
                        &PreparedFields::new(fields),
                        used,
                    )
                    .unwrap();
                    let expected =
                        encode_stored(Bytes::from_static(b"/k"), value, revision, Revision(1), fields).unwrap();
                    assert_eq!(hinted.json, expected.json, "{case}");
                    assert_eq!(hinted.meta().summary(), expected.meta().summary(), "{case}");
                }
                let hinted =
                    encode_stored_hinted(Bytes::from_static(b"/k"), value, revision, Revision(1), &prepared, &hint)
                        .unwrap();
                assert_eq!(hinted.metadata_bytes(), scanned.metadata_bytes(), "{case}");
            }
            // A damaged hint, or another value's, never panics.
            for cut in 0..hint.len() {
                let _ = encode_stored_hinted(Bytes::new(), value, Revision(3), Revision(1), &prepared, &hint[..cut]);
                let mut bad = hint.clone();
                bad[cut] ^= 0x81;
                let _ = encode_stored_hinted(Bytes::new(), value, Revision(3), Revision(1), &prepared, &bad);
                let _ = encode_stored_hinted(
                    Bytes::new(),
                    br#"{"metadata":{}}"#,
                    Revision(3),
                    Revision(1),
                    &prepared,
                    &hint,
                );
            }
        }
        // Values the scan declines get a hint saying so: decoded at load.
        let declined = br#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#;
        let hint = snapshot_hint(declined, &fields);
        assert_eq!((hint[0], hint.len(), hint_is_current(&hint, &fields)), (HINT_NONE, 9, true));
        let hinted = encode_stored_hinted(Bytes::new(), declined, Revision(5), Revision(1), &prepared, &hint).unwrap();
        let expected = encode_stored(Bytes::new(), declined, Revision(5), Revision(1), &fields).unwrap();
        assert_eq!((hinted.json.clone(), hinted.meta().summary()), (expected.json.clone(), expected.meta().summary()));
    }

    #[test]
    fn encode_sets_resource_version_in_kube_order() {
        let value = br#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web"}},"spec":{"nodeName":"n1"}}"#;
        let fields = vec!["spec.nodeName".to_string(), "status.phase".to_string()];
        let object = encode_stored(Bytes::from_static(b"k"), value, Revision(7), Revision(5), &fields).unwrap();
        let text = std::str::from_utf8(&object.json).unwrap();
        assert!(text.contains(r#""uid":"u","resourceVersion":"7","creationTimestamp""#), "{text}");
        assert_eq!(object.meta().label("app"), Some("web"));
        assert_eq!(object.meta().field("spec.nodeName"), Some("n1"));
        assert_eq!(object.meta().field("status.phase"), Some(""));
        assert_eq!(object.meta().field("metadata.namespace"), Some("ns"));
        assert_eq!(object.meta().name(), "a");
        assert_eq!(object.meta().uid(), "u");
        assert_eq!(object.meta().creation_timestamp(), "2026-01-01T00:00:00Z");
    }

    /// Found by the `encode_stored` fuzz target: without serde_json's
    /// `float_roundtrip`, a number was parsed to a neighbour of its value,
    /// so the served bytes, stored again, served a different number. The
    /// reference encoding now round-trips; the fast path does not even parse
    /// the number, so it serves it exactly as stored.
    #[test]
    fn served_numbers_survive_a_second_encoding() {
        let value = br#"{"metadata":{"name":"a"},"spec":55555555557777777777777777777777777777755}"#;
        let slow = encode_stored_slow(Bytes::new(), value, Revision(4), Revision(4), &[]).unwrap();
        let again = encode_stored_slow(Bytes::new(), &slow.json, Revision(4), Revision(4), &[]).unwrap();
        assert_eq!(again.json, slow.json);
        assert!(
            std::str::from_utf8(&slow.json).unwrap().contains(r#""spec":5.555555555777778e+40"#),
            "{:?}",
            slow.json
        );
        let first = encode_stored(Bytes::new(), value, Revision(4), Revision(4), &[]).unwrap();
        let again = encode_stored(Bytes::new(), &first.json, Revision(4), Revision(4), &[]).unwrap();
        assert_eq!(again.json, first.json);
        assert!(std::str::from_utf8(&first.json)
            .unwrap()
            .contains(r#""spec":55555555557777777777777777777777777777755"#));
    }

    /// What a pod costs besides its JSON (the table in docs/limits.md): the
    /// object, its `Arc` counts, one 8-byte span per metadata value, no
    /// copy of any string, an empty slot for the other encodings.
    #[test]
    fn an_object_costs_little_besides_its_json() {
        use std::mem::size_of;
        assert_eq!(size_of::<Encodings>(), 16);
        assert_eq!(size_of::<ObjectMeta>(), 40);
        assert_eq!(size_of::<CachedObject>(), 136);
        let fields: Vec<String> = [
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let value = br#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"ns","uid":"0b7c","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web","tier":"front","pod-template-hash":"7d4b9c"}},"spec":{"nodeName":"node-17","restartPolicy":"Always"},"status":{"phase":"Running"}}"#;
        let object = encode_stored(Bytes::from_static(b"k"), value, Revision(7), Revision(7), &fields).unwrap();
        assert_eq!(object.metadata_bytes(), 16 + 136 + (4 + 8 + 2 * 3) * 8);
        assert_eq!(object.meta().label("pod-template-hash"), Some("7d4b9c"));
        assert_eq!(object.meta().field("spec.hostNetwork"), Some(""));
        // Every object of the resource shares one list of paths.
        let other = encode_stored(Bytes::from_static(b"l"), value, Revision(8), Revision(8), &fields).unwrap();
        assert!(Arc::ptr_eq(object.meta.paths.as_ref().unwrap(), other.meta.paths.as_ref().unwrap()));
    }

    #[test]
    fn encode_rejects_non_objects() {
        let fields = Vec::new();
        assert!(encode_stored(Bytes::new(), b"[1]", Revision(1), Revision(1), &fields).is_err());
        assert!(encode_stored(Bytes::new(), b"{", Revision(1), Revision(1), &fields).is_err());
    }
}
