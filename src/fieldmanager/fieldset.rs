//! Field sets of server-side apply: paths into an object (`f:` field names,
//! `k:` associative-list keys, `v:` set values, `i:` indexes), sets of them,
//! their FieldsV1 encoding, and the walks over objects that the field manager
//! needs, typed by the schema facts of `types::schema`: the set of fields an
//! applied configuration names, the comparison of two versions (added,
//! modified, removed), the merge of a configuration into a live object, and
//! the removal of paths.
//!
//! Lists merge by `x-kubernetes-list-type` (`atomic`, `set`, `map` keyed by
//! `x-kubernetes-list-map-keys`), or, when a list has none, by its patch
//! strategy and merge key as kube-apiserver's schema conversion derives them;
//! objects are atomic when `x-kubernetes-map-type: atomic`. Values of unknown
//! shape are typed by what they hold (objects granular, lists atomic).
//!
//! Invariant: pure functions; no input panics; inputs are never modified.

use crate::types::schema::{Definition, Field, Shape};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathElement {
    /// `f:name`: a field of an object or a key of a map.
    Field(String),
    /// `k:{"name":"x"}`: an item of an associative list, by its keys (JSON, keys sorted).
    Key(String),
    /// `v:"x"`: an item of a set, by its value (JSON).
    Value(String),
    /// `i:3`: an item of a list by position.
    Index(usize),
}

pub type Path = Vec<PathElement>;

/// A set of paths. A path's ancestors are not implied members.
pub type Set = BTreeSet<Path>;

/// The path as kube-apiserver prints it in conflicts: `.spec.containers[name="x"].image`.
pub fn path_string(path: &[PathElement]) -> String {
    let mut out = String::new();
    for element in path {
        match element {
            PathElement::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            PathElement::Key(json) => {
                let fields: Vec<String> = match serde_json::from_str::<Map<String, Value>>(json) {
                    Ok(map) => map.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                    Err(_) => vec![json.clone()],
                };
                out.push_str(&format!("[{}]", fields.join(",")));
            }
            PathElement::Value(json) => out.push_str(&format!("[={json}]")),
            PathElement::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn element_key(element: &PathElement) -> String {
    match element {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Key(json) => format!("k:{json}"),
        PathElement::Value(json) => format!("v:{json}"),
        PathElement::Index(i) => format!("i:{i}"),
    }
}

/// Canonical JSON of a value: object keys sorted at every level.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let ordered: BTreeMap<&String, Value> = map.iter().map(|(k, v)| (k, sorted(v))).collect();
                let mut out = Map::new();
                for (k, v) in ordered {
                    out.insert(k.clone(), v);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[derive(Default)]
struct Tree {
    member: bool,
    children: BTreeMap<PathElement, Tree>,
}

/// The FieldsV1 encoding of a set: nested objects keyed `f:`/`k:`/`v:`/`i:`,
/// `".": {}` marking a member that also has members below it.
pub fn to_fields_v1(set: &Set) -> Value {
    let mut root = Tree::default();
    for path in set {
        let mut node = &mut root;
        for element in path {
            node = node.children.entry(element.clone()).or_default();
        }
        node.member = true;
    }
    fn encode(tree: &Tree) -> Value {
        let mut out = Map::new();
        if tree.member && !tree.children.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for (element, child) in &tree.children {
            out.insert(element_key(element), encode(child));
        }
        Value::Object(out)
    }
    encode(&root)
}

/// Decodes FieldsV1; an invalid encoding is an error message.
pub fn from_fields_v1(value: &Value) -> Result<Set, String> {
    fn decode(value: &Value, prefix: &mut Path, set: &mut Set, depth: usize) -> Result<(), String> {
        if depth > 128 {
            return Err("fieldsV1 is nested too deeply".into());
        }
        let Value::Object(map) = value else { return Err("fieldsV1 entries must be objects".into()) };
        for (key, child) in map {
            if key == "." {
                set.insert(prefix.clone());
                continue;
            }
            let element = match key.split_at_checked(2) {
                Some(("f:", name)) => PathElement::Field(name.to_string()),
                Some(("k:", json)) => {
                    let parsed: Value = serde_json::from_str(json).map_err(|e| format!("invalid key {key}: {e}"))?;
                    if !parsed.is_object() {
                        return Err(format!("invalid key {key}: not an object"));
                    }
                    PathElement::Key(canonical(&parsed))
                }
                Some(("v:", json)) => {
                    let parsed: Value = serde_json::from_str(json).map_err(|e| format!("invalid value {key}: {e}"))?;
                    PathElement::Value(canonical(&parsed))
                }
                Some(("i:", n)) => PathElement::Index(n.parse().map_err(|_| format!("invalid index {key}"))?),
                _ => return Err(format!("unknown path element {key:?}")),
            };
            prefix.push(element);
            if child.as_object().is_some_and(Map::is_empty) {
                set.insert(prefix.clone());
            } else {
                decode(child, prefix, set, depth + 1)?;
            }
            prefix.pop();
        }
        Ok(())
    }
    let mut set = Set::new();
    decode(value, &mut Vec::new(), &mut set, 0)?;
    Ok(set)
}

/// How a value merges, from its shape and the field holding it.
#[derive(Clone, Copy, Debug)]
enum Node {
    /// Named fields (`None`: of unknown shape, every key a field).
    Struct(Option<&'static Definition>),
    /// Arbitrary keys, values of one shape.
    Map(&'static Shape),
    /// Replaced as a whole.
    Atomic,
    Scalar,
    SetList(&'static Shape),
    MapList(&'static Shape, &'static [&'static str]),
}

/// The type of a value's children: shape and field extensions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Type {
    shape: Option<Shape>,
    field: Option<&'static Field>,
}

impl Type {
    pub fn root(shape: Option<Shape>) -> Type {
        Type { shape, field: None }
    }
}

fn node(ty: Type, value: &Value) -> Node {
    let deduced = || match value {
        Value::Object(_) => Node::Struct(None),
        Value::Array(_) => Node::Atomic,
        _ => Node::Scalar,
    };
    let field_atomic_map = ty.field.is_some_and(|f| f.map_type == "atomic");
    match ty.shape {
        None | Some(Shape::PreserveUnknown) => deduced(),
        Some(Shape::Object(_)) => match ty.shape.as_ref().and_then(Shape::definition) {
            Some(def) if def.object && def.map_type != "atomic" && !field_atomic_map && value.is_object() => {
                Node::Struct(Some(def))
            }
            _ => Node::Atomic,
        },
        Some(Shape::Map(element)) if !field_atomic_map && value.is_object() => Node::Map(element),
        Some(Shape::Array(element)) if value.is_array() => {
            let Some(field) = ty.field else { return Node::Atomic };
            match field.list_type {
                "set" => Node::SetList(element),
                "map" if !field.list_map_keys.is_empty() => Node::MapList(element, field.list_map_keys),
                "" if field.merges() && !field.patch_merge_key.is_empty() => {
                    Node::MapList(element, std::slice::from_ref(&field.patch_merge_key))
                }
                "" if field.merges() => Node::SetList(element),
                _ => Node::Atomic,
            }
        }
        Some(Shape::Raw) | Some(Shape::Map(_)) | Some(Shape::Array(_)) => Node::Atomic,
        Some(_) => Node::Scalar,
    }
}

fn child_type(parent: Node, key: &str) -> Type {
    match parent {
        Node::Struct(Some(def)) => match def.field(key) {
            Some(field) => Type { shape: Some(*field.shape), field: Some(field) },
            None => Type::default(),
        },
        Node::Map(element) => Type { shape: Some(*element), field: None },
        Node::SetList(element) | Node::MapList(element, _) => Type { shape: Some(*element), field: None },
        _ => Type::default(),
    }
}

/// Whether `key` is a named field of the struct (map keys and unknown fields are not).
fn is_named_field(parent: Node, key: &str) -> bool {
    matches!(parent, Node::Struct(Some(def)) if def.field(key).is_some())
}

/// The path element of an associative list's item; `None` when it is not an object.
fn item_key(item: &Value, shape: &Shape, keys: &[&str]) -> Option<PathElement> {
    let object = item.as_object()?;
    let mut fields = Map::new();
    let mut sorted: Vec<&str> = keys.to_vec();
    sorted.sort_unstable();
    for key in sorted {
        match object.get(key) {
            Some(value) => {
                fields.insert(key.to_string(), value.clone());
            }
            None => {
                if let Some(default) = key_default(shape, key) {
                    fields.insert(key.to_string(), Value::String(default.to_string()));
                }
            }
        }
    }
    Some(PathElement::Key(canonical(&Value::Object(fields))))
}

/// The schema default of an associative list's key field, which
/// structured-merge-diff uses when an item leaves the key out (so a port
/// applied without `protocol` is the stored `protocol: TCP` port). The
/// OpenAPI documents' only non-empty defaults of list-map keys: ports'
/// `protocol` (`"default": "TCP"` on ContainerPort and ServicePort).
fn key_default(shape: &Shape, key: &str) -> Option<&'static str> {
    let name = shape.definition()?.name;
    match (name, key) {
        ("io.k8s.api.core.v1.ContainerPort" | "io.k8s.api.core.v1.ServicePort", "protocol") => Some("TCP"),
        _ => None,
    }
}

/// The items of a list by their path element (first of duplicates wins).
fn list_items(node: Node, items: &[Value]) -> Vec<(PathElement, &Value)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let element = match node {
            Node::SetList(_) => PathElement::Value(canonical(item)),
            Node::MapList(shape, keys) => item_key(item, shape, keys).unwrap_or(PathElement::Index(i)),
            _ => PathElement::Index(i),
        };
        if seen.insert(element.clone()) {
            out.push((element, item));
        }
    }
    out
}

/// The fields an applied configuration sets (kube's `ToFieldSet`): its
/// leaves, atomic values, map keys, list items, and empty or null fields.
pub fn field_set(value: &Value, ty: Type) -> Set {
    fn walk(value: &Value, ty: Type, path: &mut Path, set: &mut Set, depth: usize) {
        let node = node(ty, value);
        if depth > 128 {
            set.insert(path.clone());
            return;
        }
        match (node, value) {
            (Node::Struct(_) | Node::Map(_), Value::Object(map)) => {
                for (key, child) in map {
                    path.push(PathElement::Field(key.clone()));
                    walk(child, child_type(node, key), path, set, depth + 1);
                    let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                    if empty || !is_named_field(node, key) {
                        set.insert(path.clone());
                    }
                    path.pop();
                }
            }
            (Node::SetList(_), Value::Array(items)) => {
                for (element, _) in list_items(node, items) {
                    path.push(element);
                    set.insert(path.clone());
                    path.pop();
                }
            }
            (Node::MapList(..), Value::Array(items)) => {
                for (element, item) in list_items(node, items) {
                    path.push(element);
                    set.insert(path.clone());
                    walk(item, child_type(node, ""), path, set, depth + 1);
                    path.pop();
                }
            }
            _ => {
                if !path.is_empty() {
                    set.insert(path.clone());
                }
            }
        }
    }
    let mut set = Set::new();
    walk(value, ty, &mut Vec::new(), &mut set, 0);
    set
}

/// What changed from one version to the next: every node that appeared,
/// every leaf whose value changed, every node that disappeared.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

impl Comparison {
    pub fn changed(&self) -> Set {
        self.added.union(&self.modified).cloned().collect()
    }
}

pub fn compare(old: &Value, new: &Value, ty: Type) -> Comparison {
    fn all(value: &Value, ty: Type, path: &mut Path, out: &mut Set, depth: usize) {
        out.insert(path.clone());
        if depth > 128 {
            return;
        }
        let node = node(ty, value);
        match (node, value) {
            (Node::Struct(_) | Node::Map(_), Value::Object(map)) => {
                for (key, child) in map {
                    path.push(PathElement::Field(key.clone()));
                    all(child, child_type(node, key), path, out, depth + 1);
                    path.pop();
                }
            }
            (Node::SetList(_) | Node::MapList(..), Value::Array(items)) => {
                for (element, item) in list_items(node, items) {
                    path.push(element);
                    all(item, child_type(node, ""), path, out, depth + 1);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    fn walk(old: &Value, new: &Value, ty: Type, path: &mut Path, c: &mut Comparison, depth: usize) {
        // A null list or map (a Go nil slice or map without omitempty) is an
        // empty one: what the new version puts in it is added item by item.
        let empty = match (old, new) {
            (Value::Null, Value::Array(_)) => Some(Value::Array(Vec::new())),
            (Value::Null, Value::Object(_)) => Some(Value::Object(serde_json::Map::new())),
            _ => None,
        };
        let old = empty.as_ref().unwrap_or(old);
        let (old_node, new_node) = (node(ty, old), node(ty, new));
        let same_kind = std::mem::discriminant(&old_node) == std::mem::discriminant(&new_node);
        match (new_node, old, new) {
            (Node::Struct(_) | Node::Map(_), Value::Object(a), Value::Object(b)) if same_kind && depth <= 128 => {
                for (key, child) in b {
                    path.push(PathElement::Field(key.clone()));
                    let ty = child_type(new_node, key);
                    match a.get(key) {
                        Some(before) => walk(before, child, ty, path, c, depth + 1),
                        None => all(child, ty, path, &mut c.added, depth + 1),
                    }
                    path.pop();
                }
                for (key, child) in a {
                    if !b.contains_key(key) {
                        path.push(PathElement::Field(key.clone()));
                        all(child, child_type(new_node, key), path, &mut c.removed, depth + 1);
                        path.pop();
                    }
                }
            }
            (Node::SetList(_) | Node::MapList(..), Value::Array(a), Value::Array(b)) if same_kind && depth <= 128 => {
                let before: BTreeMap<PathElement, &Value> = list_items(new_node, a).into_iter().collect();
                let after = list_items(new_node, b);
                let after_keys: BTreeSet<&PathElement> = after.iter().map(|(e, _)| e).collect();
                let ty = child_type(new_node, "");
                for (element, item) in &after {
                    path.push(element.clone());
                    match before.get(element) {
                        Some(old_item) => walk(old_item, item, ty, path, c, depth + 1),
                        None => all(item, ty, path, &mut c.added, depth + 1),
                    }
                    path.pop();
                }
                for (element, item) in &before {
                    if !after_keys.contains(element) {
                        path.push(element.clone());
                        all(item, ty, path, &mut c.removed, depth + 1);
                        path.pop();
                    }
                }
            }
            _ => {
                if old != new && !path.is_empty() {
                    c.modified.insert(path.clone());
                }
            }
        }
    }
    let mut comparison = Comparison::default();
    walk(old, new, ty, &mut Vec::new(), &mut comparison, 0);
    comparison
}

/// The configuration merged into the live object: fields merge one by one,
/// associative lists and sets item by item (the configuration's order, live
/// items it does not name kept in place), atomic values and scalars replaced.
pub fn merge(live: &Value, config: &Value, ty: Type) -> Value {
    fn walk(live: &Value, config: &Value, ty: Type, depth: usize) -> Value {
        let live_node = node(ty, live);
        let node = node(ty, config);
        let same_kind = std::mem::discriminant(&live_node) == std::mem::discriminant(&node);
        match (node, live, config) {
            (Node::Struct(_) | Node::Map(_), Value::Object(a), Value::Object(b)) if same_kind && depth <= 128 => {
                let mut out = a.clone();
                for (key, child) in b {
                    let merged = match a.get(key) {
                        Some(before) => walk(before, child, child_type(node, key), depth + 1),
                        None => child.clone(),
                    };
                    out.insert(key.clone(), merged);
                }
                Value::Object(out)
            }
            (Node::SetList(_) | Node::MapList(..), Value::Array(a), Value::Array(b)) if same_kind && depth <= 128 => {
                let ty = child_type(node, "");
                let wanted = list_items(node, b);
                let wanted_keys: BTreeMap<&PathElement, &Value> = wanted.iter().map(|(e, v)| (e, *v)).collect();
                let live_items = list_items(node, a);
                let live_keys: BTreeMap<&PathElement, &Value> = live_items.iter().map(|(e, v)| (e, *v)).collect();
                let mut out = Vec::new();
                let mut next = 0;
                let emit = |upto: Option<&PathElement>, out: &mut Vec<Value>, next: &mut usize| {
                    while *next < wanted.len() {
                        let (element, item) = &wanted[*next];
                        *next += 1;
                        out.push(match live_keys.get(element) {
                            Some(before) => walk(before, item, ty, depth + 1),
                            None => (*item).clone(),
                        });
                        if Some(element) == upto {
                            break;
                        }
                    }
                };
                for (element, item) in &live_items {
                    if wanted_keys.contains_key(element) {
                        if !wanted[..next].iter().any(|(e, _)| e == element) {
                            emit(Some(element), &mut out, &mut next);
                        }
                    } else {
                        out.push((*item).clone());
                    }
                }
                emit(None, &mut out, &mut next);
                Value::Array(out)
            }
            _ => config.clone(),
        }
    }
    walk(live, config, ty, 0)
}

/// The value with the node at each path removed (paths that are absent are
/// ignored).
pub fn remove(value: &Value, paths: &Set, ty: Type) -> Value {
    fn walk(value: &Value, ty: Type, path: &mut Path, paths: &Set, depth: usize) -> Value {
        let node = node(ty, value);
        match (node, value) {
            (Node::Struct(_) | Node::Map(_), Value::Object(map)) if depth <= 128 => {
                let mut out = Map::new();
                for (key, child) in map {
                    path.push(PathElement::Field(key.clone()));
                    if !paths.contains(path) {
                        out.insert(key.clone(), walk(child, child_type(node, key), path, paths, depth + 1));
                    }
                    path.pop();
                }
                Value::Object(out)
            }
            (Node::SetList(_) | Node::MapList(..), Value::Array(items)) if depth <= 128 => {
                let mut out = Vec::new();
                for (element, item) in list_items(node, items) {
                    path.push(element);
                    if !paths.contains(path) {
                        out.push(walk(item, child_type(node, ""), path, paths, depth + 1));
                    }
                    path.pop();
                }
                Value::Array(out)
            }
            _ => value.clone(),
        }
    }
    walk(value, ty, &mut Vec::new(), paths, 0)
}

/// Whether `set` holds `path` or a path below it.
pub fn holds_or_below(set: &Set, path: &[PathElement]) -> bool {
    set.range(path.to_vec()..).next().is_some_and(|p| p.starts_with(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::schema;
    use serde_json::json;

    fn pod() -> Type {
        Type::root(schema::root_shape("", "v1", "Pod"))
    }

    fn paths(set: &Set) -> Vec<String> {
        set.iter().map(|p| path_string(p)).collect()
    }

    #[test]
    fn fields_v1_round_trip() {
        let encoded = json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}}}},
            "f:x": {"v:\"b\"": {}, "i:2": {}}});
        let set = from_fields_v1(&encoded).unwrap();
        assert_eq!(
            paths(&set),
            vec![
                ".metadata.labels",
                ".metadata.labels.app",
                ".spec.containers[name=\"a\"]",
                ".spec.containers[name=\"a\"].image",
                ".x[=\"b\"]",
                ".x[2]"
            ]
        );
        assert_eq!(to_fields_v1(&set), encoded);
        for bad in [json!({"z:a": {}}), json!({"k:[1]": {}}), json!({"f:a": 1}), json!({"i:x": {}})] {
            assert!(from_fields_v1(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn field_set_of_a_configuration() {
        let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "a", "image": "i", "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
                     "nodeSelector": {"disk": "ssd"}, "tolerations": [{"key": "k"}], "securityContext": {}}});
        let set = field_set(&config, pod());
        assert_eq!(
            paths(&set),
            vec![
                ".apiVersion",
                ".kind",
                ".metadata.labels.app",
                ".metadata.name",
                ".spec.containers[name=\"a\"]",
                ".spec.containers[name=\"a\"].image",
                ".spec.containers[name=\"a\"].name",
                ".spec.containers[name=\"a\"].ports[containerPort=80,protocol=\"TCP\"]",
                ".spec.containers[name=\"a\"].ports[containerPort=80,protocol=\"TCP\"].containerPort",
                ".spec.containers[name=\"a\"].ports[containerPort=80,protocol=\"TCP\"].protocol",
                // x-kubernetes-map-type: atomic
                ".spec.nodeSelector",
                ".spec.securityContext",
                ".spec.tolerations",
            ]
        );
    }

    #[test]
    fn compare_reports_added_modified_removed() {
        let old = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"containers": [{"name": "a", "image": "1"}]}});
        let new = json!({"metadata": {"labels": {"a": "9", "c": "3"}}, "spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}]}});
        let c = compare(&old, &new, pod());
        assert_eq!(
            paths(&c.added),
            vec![".metadata.labels.c", ".spec.containers[name=\"b\"]", ".spec.containers[name=\"b\"].name"]
        );
        assert_eq!(paths(&c.modified), vec![".metadata.labels.a"]);
        assert_eq!(paths(&c.removed), vec![".metadata.labels.b"]);
        assert_eq!(compare(&new, &new, pod()), Comparison::default());
    }

    #[test]
    fn merge_by_list_type() {
        // containers: map keyed by name; tolerations: atomic; finalizers: set.
        let cases = [
            (
                json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}}),
                json!({"spec": {"containers": [{"name": "b", "image": "2"}, {"name": "c"}]}}),
                json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}, {"name": "c"}]}}),
            ),
            (
                json!({"spec": {"tolerations": [{"key": "a"}]}}),
                json!({"spec": {"tolerations": [{"key": "b"}]}}),
                json!({"spec": {"tolerations": [{"key": "b"}]}}),
            ),
            (
                json!({"metadata": {"finalizers": ["x", "y"]}}),
                json!({"metadata": {"finalizers": ["z", "x"]}}),
                json!({"metadata": {"finalizers": ["z", "x", "y"]}}),
            ),
            (
                // labels: a granular map; nodeSelector: x-kubernetes-map-type atomic.
                json!({"metadata": {"labels": {"a": "1"}}, "spec": {"nodeSelector": {"x": "1"}}}),
                json!({"metadata": {"labels": {"b": "2"}}, "spec": {"nodeSelector": {"y": "2"}}}),
                json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"nodeSelector": {"y": "2"}}}),
            ),
        ];
        for (live, config, want) in cases {
            assert_eq!(merge(&live, &config, pod()), want, "{live} + {config}");
        }
    }

    #[test]
    fn remove_paths() {
        let value = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let set: Set = [
            vec![
                PathElement::Field("metadata".into()),
                PathElement::Field("labels".into()),
                PathElement::Field("b".into()),
            ],
            vec![
                PathElement::Field("spec".into()),
                PathElement::Field("containers".into()),
                PathElement::Key("{\"name\":\"a\"}".into()),
            ],
        ]
        .into_iter()
        .collect();
        assert_eq!(
            remove(&value, &set, pod()),
            json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "b"}]}})
        );
        assert!(holds_or_below(&set, &[PathElement::Field("spec".into())]));
        assert!(!holds_or_below(&set, &[PathElement::Field("status".into())]));
    }
}
