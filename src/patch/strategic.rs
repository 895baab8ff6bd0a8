//! Kubernetes strategic merge patch, written from the specification
//! ("Updates to existing resources", "Notes on the strategic merge patch")
//! and driven by the schema facts (`types::schema`): maps merge key by key;
//! a list whose field has patch strategy `merge` merges by its patch merge
//! key (lists of objects) or as a set (lists of scalars); other lists are
//! replaced; `null` deletes. Directives: `$patch: replace | delete | merge`
//! (in a map, or as a list element), `$retainKeys`,
//! `$setElementOrder/<field>` and `$deleteFromPrimitiveList/<field>`.
//!
//! Invariant: pure; the original is never modified; fields the schema does
//! not know merge as plain maps and their lists are replaced (validation
//! reports unknown fields later). Recursion follows the patch, whose depth
//! the JSON parser already bounds.

use super::PatchError;
use crate::types::schema::{Field, Shape};
use serde_json::{Map, Value};

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

// kube's mergepatch error texts.
const BAD_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const BAD_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
const BAD_SET_ELEMENT_ORDER: &str = "invalid patch format of setElementOrder list";
const NOT_MATCH_RETAIN_KEYS: &str = "patch content doesn't match retainKeys list";

fn is_directive(key: &str) -> bool {
    key == PATCH
        || key == RETAIN_KEYS
        || key.starts_with(SET_ELEMENT_ORDER)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
}

/// Applies a strategic merge patch to `original`, an object of `shape`.
pub fn strategic_merge(original: &Value, patch: &Value, shape: Option<Shape>) -> Result<Value, PatchError> {
    let Value::Object(patch) = patch else {
        return Err(PatchError::BadRequest("invalid JSON document: a strategic merge patch must be an object".into()));
    };
    let original = match original {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    merge_map(original, patch, shape).map(Value::Object)
}

/// The shape and field metadata of `key` inside a map of `shape`.
fn child(shape: Option<Shape>, key: &str) -> (Option<Shape>, Option<&'static Field>) {
    match shape {
        Some(Shape::Object(_)) => match shape.as_ref().and_then(Shape::definition).and_then(|d| d.field(key)) {
            Some(field) => (Some(*field.shape), Some(field)),
            None => (None, None),
        },
        Some(Shape::Map(element)) => (Some(*element), None),
        _ => (None, None),
    }
}

fn string_list<'a>(value: &'a Value, error: &str) -> Result<Vec<&'a Value>, PatchError> {
    match value {
        Value::Array(items) => Ok(items.iter().collect()),
        _ => Err(PatchError::BadRequest(error.into())),
    }
}

fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    shape: Option<Shape>,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.get(PATCH) {
        match directive.as_str() {
            Some("replace") => {
                let mut rest = patch.clone();
                rest.shift_remove(PATCH);
                return merge_map(Map::new(), &rest, shape);
            }
            Some("delete") => return Ok(Map::new()),
            Some("merge") => {}
            _ => {
                return Err(PatchError::BadRequest(format!(
                    "unknown patch type: {directive} in map: {}",
                    Value::Object(patch.clone())
                )))
            }
        }
    }
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let keys = string_list(retain, BAD_RETAIN_KEYS)?;
        if keys.iter().any(|k| !k.is_string()) {
            return Err(PatchError::BadRequest(BAD_RETAIN_KEYS.into()));
        }
        let kept = |k: &str| keys.iter().any(|r| r.as_str() == Some(k));
        for (k, v) in patch {
            if !is_directive(k) && !v.is_null() && !kept(k) {
                return Err(PatchError::DoesNotApply(NOT_MATCH_RETAIN_KEYS.into()));
            }
        }
        original.retain(|k, _| kept(k));
    }
    // Deletions from lists of scalars apply before the patch's own values.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let remove = string_list(v, BAD_PRIMITIVE_LIST)?;
            if let Some(Value::Array(items)) = original.get_mut(field) {
                items.retain(|item| !remove.contains(&item));
            }
        }
    }
    for (k, patch_value) in patch {
        if is_directive(k) {
            continue;
        }
        if patch_value.is_null() {
            original.shift_remove(k);
            continue;
        }
        let (child_shape, field) = child(shape, k);
        let order_key = format!("{SET_ELEMENT_ORDER}{k}");
        let order = match patch.get(&order_key) {
            Some(order) => Some(string_list(order, BAD_SET_ELEMENT_ORDER)?),
            None => None,
        };
        let merged = match patch_value {
            Value::Object(p) => {
                let base = match original.shift_remove(k) {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                Value::Object(merge_map(base, p, child_shape)?)
            }
            Value::Array(p) if field.is_some_and(Field::merges) => {
                let base = match original.shift_remove(k) {
                    Some(Value::Array(items)) => items,
                    _ => Vec::new(),
                };
                let element = child_shape.as_ref().and_then(Shape::element).copied();
                let merge_key = field.map(|f| f.patch_merge_key).unwrap_or("");
                Value::Array(merge_list(base, p, element, merge_key, order.as_deref())?)
            }
            other => other.clone(),
        };
        original.insert(k.clone(), merged);
    }
    // `$setElementOrder` for a list the patch does not otherwise change.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix(SET_ELEMENT_ORDER) {
            let order = string_list(v, BAD_SET_ELEMENT_ORDER)?;
            if patch.contains_key(field) {
                continue;
            }
            let (child_shape, meta) = child(shape, field);
            if let Some(Value::Array(items)) = original.shift_remove(field) {
                let element = child_shape.as_ref().and_then(Shape::element).copied();
                let merge_key = meta.map(|f| f.patch_merge_key).unwrap_or("");
                original
                    .insert(field.to_string(), Value::Array(merge_list(items, &[], element, merge_key, Some(&order))?));
            }
        }
    }
    Ok(original)
}

/// The identity of a list element: its merge key's value, or itself.
fn identity<'a>(item: &'a Value, merge_key: &str) -> Option<&'a Value> {
    if merge_key.is_empty() {
        return Some(item);
    }
    item.as_object().and_then(|m| m.get(merge_key))
}

fn no_merge_key(item: &Value, merge_key: &str) -> PatchError {
    PatchError::BadRequest(format!("map: {item} does not contain declared merge key: {merge_key}"))
}

/// Merges a list whose field has the `merge` strategy.
fn merge_list(
    original: Vec<Value>,
    patch: &[Value],
    element: Option<Shape>,
    merge_key: &str,
    order: Option<&[&Value]>,
) -> Result<Vec<Value>, PatchError> {
    let objects = original.iter().chain(patch).any(Value::is_object);
    let mut merged = original.clone();
    let mut patch_items: Vec<&Value> = Vec::new();
    if !objects {
        // A set of scalars: union, original order first.
        for p in patch {
            if !merged.contains(p) {
                merged.push(p.clone());
            }
            patch_items.push(p);
        }
        return Ok(ordered(merged, &original, order.unwrap_or(&patch_items), ""));
    }
    if merge_key.is_empty() {
        return Err(PatchError::BadRequest("cannot merge lists without merge key".into()));
    }
    // Special elements first: `$patch: replace` replaces the whole list with
    // the patch's other elements; `$patch: delete` removes by merge key.
    let plain: Vec<&Value> = patch.iter().filter(|p| p.get(PATCH).is_none()).collect();
    for special in patch.iter().filter(|p| p.get(PATCH).is_some()) {
        match special.get(PATCH).and_then(Value::as_str) {
            Some("replace") => {
                let mut out = Vec::new();
                for p in &plain {
                    out.push(match p {
                        Value::Object(m) => Value::Object(merge_map(Map::new(), m, element)?),
                        other => (*other).clone(),
                    });
                }
                return Ok(out);
            }
            Some("delete") => {
                let key = identity(special, merge_key).ok_or_else(|| no_merge_key(special, merge_key))?;
                merged.retain(|item| identity(item, merge_key) != Some(key));
            }
            _ => {
                return Err(PatchError::BadRequest(format!(
                    "unknown patch type: {} in map: {special}",
                    special.get(PATCH).cloned().unwrap_or(Value::Null)
                )))
            }
        }
    }
    for p in &plain {
        let Value::Object(p_map) = p else {
            return Err(PatchError::BadRequest(format!("invalid list element {p}: lists of objects only")));
        };
        let key = identity(p, merge_key).ok_or_else(|| no_merge_key(p, merge_key))?;
        match merged.iter().position(|item| identity(item, merge_key) == Some(key)) {
            Some(i) => {
                let base = match std::mem::take(&mut merged[i]) {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                merged[i] = Value::Object(merge_map(base, p_map, element)?);
            }
            None => merged.push(Value::Object(merge_map(Map::new(), p_map, element)?)),
        }
        patch_items.push(key);
    }
    let order: Vec<&Value> = match order {
        Some(order) => {
            order.iter().filter_map(|o| if o.is_object() { identity(o, merge_key) } else { Some(*o) }).collect()
        }
        None => patch_items,
    };
    Ok(ordered(merged, &original, &order, merge_key))
}

/// kube's element order: the items the patch names (or `$setElementOrder`
/// lists) in that order, interleaved with the items only the server has, in
/// their original order, each placed where the original list had it.
fn ordered(merged: Vec<Value>, original: &[Value], order: &[&Value], merge_key: &str) -> Vec<Value> {
    let position_in =
        |list: &[&Value], item: &Value| identity(item, merge_key).and_then(|k| list.iter().position(|o| *o == k));
    let original_ids: Vec<&Value> = original.iter().filter_map(|o| identity(o, merge_key)).collect();
    let (mut named, server_only): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|item| position_in(order, item).is_some());
    named.sort_by_key(|item| position_in(order, item));
    let mut out = Vec::with_capacity(named.len() + server_only.len());
    let (mut named, mut server_only) = (named.into_iter().peekable(), server_only.into_iter().peekable());
    loop {
        match (named.peek(), server_only.peek()) {
            (Some(n), Some(s)) => {
                let n_at = position_in(&original_ids, n);
                let s_at = position_in(&original_ids, s);
                let named_first = matches!((n_at, s_at), (Some(a), Some(b)) if a < b);
                out.push(if named_first { named.next() } else { server_only.next() }.unwrap_or(Value::Null));
            }
            (Some(_), None) => out.extend(named.by_ref()),
            (None, Some(_)) => out.extend(server_only.by_ref()),
            (None, None) => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::schema::root_shape;
    use serde_json::json;

    fn pod_shape() -> Shape {
        root_shape("", "v1", "Pod").expect("Pod")
    }

    fn deployment_shape() -> Shape {
        root_shape("apps", "v1", "Deployment").expect("Deployment")
    }

    struct Case {
        name: &'static str,
        original: Value,
        patch: Value,
        want: Result<Value, &'static str>,
    }

    fn run(shape: Shape, cases: Vec<Case>) {
        for case in cases {
            let got = strategic_merge(&case.original, &case.patch, Some(shape));
            match (&got, &case.want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{}", case.name),
                (Err(e), Err(want)) => assert!(e.to_string().contains(want), "{}: {e}", case.name),
                _ => panic!("{}: got {got:?}, want {:?}", case.name, case.want),
            }
        }
    }

    fn spec(containers: Value) -> Value {
        json!({"spec": {"containers": containers}})
    }

    #[test]
    fn pod_lists_and_maps() {
        run(
            pod_shape(),
            vec![
                Case {
                    name: "maps merge, null deletes",
                    original: json!({"metadata": {"labels": {"a": "1", "b": "2"}}}),
                    patch: json!({"metadata": {"labels": {"b": null, "c": "3"}}}),
                    want: Ok(json!({"metadata": {"labels": {"a": "1", "c": "3"}}})),
                },
                Case {
                    name: "containers merge by name, new ones appended",
                    original: spec(json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}])),
                    patch: spec(json!([{"name": "b", "image": "z"}, {"name": "c", "image": "w"}])),
                    want: Ok(spec(
                        json!([{"name": "a", "image": "x"}, {"name": "b", "image": "z"}, {"name": "c", "image": "w"}]),
                    )),
                },
                Case {
                    name: "ports merge by containerPort inside a merged container",
                    original: spec(json!([{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}])),
                    patch: spec(
                        json!([{"name": "a", "ports": [{"containerPort": 80, "name": "web"}, {"containerPort": 443}]}]),
                    ),
                    want: Ok(spec(
                        json!([{"name": "a", "ports": [{"containerPort": 80, "name": "web"}, {"containerPort": 443}]}]),
                    )),
                },
                Case {
                    name: "lists without a merge strategy are replaced",
                    original: spec(json!([{"name": "a", "args": ["1", "2"]}])),
                    patch: spec(json!([{"name": "a", "args": ["3"]}])),
                    want: Ok(spec(json!([{"name": "a", "args": ["3"]}]))),
                },
                Case {
                    name: "$patch: delete in a list removes by merge key",
                    original: spec(json!([{"name": "a"}, {"name": "b"}])),
                    patch: spec(json!([{"name": "a", "$patch": "delete"}])),
                    want: Ok(spec(json!([{"name": "b"}]))),
                },
                Case {
                    name: "$patch: replace in a list replaces it",
                    original: spec(json!([{"name": "a", "image": "x"}, {"name": "b"}])),
                    patch: spec(json!([{"$patch": "replace"}, {"name": "c"}])),
                    want: Ok(spec(json!([{"name": "c"}]))),
                },
                Case {
                    name: "$patch: replace in a map replaces it",
                    original: json!({"metadata": {"labels": {"a": "1"}}}),
                    patch: json!({"metadata": {"labels": {"$patch": "replace", "b": "2"}}}),
                    want: Ok(json!({"metadata": {"labels": {"b": "2"}}})),
                },
                Case {
                    name: "$patch: delete in a map empties it",
                    original: json!({"metadata": {"labels": {"a": "1"}}}),
                    patch: json!({"metadata": {"labels": {"$patch": "delete"}}}),
                    want: Ok(json!({"metadata": {"labels": {}}})),
                },
                Case {
                    name: "$patch: merge is the default",
                    original: json!({"metadata": {"labels": {"a": "1"}}}),
                    patch: json!({"metadata": {"labels": {"$patch": "merge", "b": "2"}}}),
                    want: Ok(json!({"metadata": {"labels": {"a": "1", "b": "2"}}})),
                },
                Case {
                    name: "unknown $patch",
                    original: json!({}),
                    patch: json!({"metadata": {"$patch": "shuffle"}}),
                    want: Err("unknown patch type"),
                },
                Case {
                    name: "finalizers merge as a set",
                    original: json!({"metadata": {"finalizers": ["a", "b"]}}),
                    patch: json!({"metadata": {"finalizers": ["b", "c"]}}),
                    want: Ok(json!({"metadata": {"finalizers": ["a", "b", "c"]}})),
                },
                Case {
                    name: "$deleteFromPrimitiveList",
                    original: json!({"metadata": {"finalizers": ["a", "b", "c"]}}),
                    patch: json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
                    want: Ok(json!({"metadata": {"finalizers": ["a", "c"]}})),
                },
                Case {
                    name: "$deleteFromPrimitiveList must be a list",
                    original: json!({"metadata": {"finalizers": ["a"]}}),
                    patch: json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}),
                    want: Err(BAD_PRIMITIVE_LIST),
                },
                Case {
                    name: "$setElementOrder orders the merged list",
                    original: spec(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}])),
                    patch: json!({"spec": {
                        "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
                        "containers": [{"name": "a", "image": "x"}]
                    }}),
                    want: Ok(spec(json!([{"name": "c"}, {"name": "a", "image": "x"}, {"name": "b"}]))),
                },
                Case {
                    name: "$setElementOrder alone reorders",
                    original: json!({"metadata": {"finalizers": ["a", "b"]}}),
                    patch: json!({"metadata": {"$setElementOrder/finalizers": ["b", "a"]}}),
                    want: Ok(json!({"metadata": {"finalizers": ["b", "a"]}})),
                },
                Case {
                    name: "$setElementOrder must be a list",
                    original: json!({}),
                    patch: json!({"metadata": {"$setElementOrder/finalizers": {}}}),
                    want: Err(BAD_SET_ELEMENT_ORDER),
                },
                Case {
                    name: "a merge list element without its merge key",
                    original: spec(json!([{"name": "a"}])),
                    patch: spec(json!([{"image": "x"}])),
                    want: Err("does not contain declared merge key: name"),
                },
                Case {
                    name: "unknown fields merge as maps",
                    original: json!({"spec": {"extra": {"a": 1}}}),
                    patch: json!({"spec": {"extra": {"b": 2}}}),
                    want: Ok(json!({"spec": {"extra": {"a": 1, "b": 2}}})),
                },
                Case {
                    name: "volumes merge by name; $retainKeys drops the old source",
                    original: json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}}),
                    patch: json!({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]}}),
                    want: Ok(json!({"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/x"}}]}})),
                },
            ],
        );
    }

    #[test]
    fn deployment_retain_keys() {
        run(
            deployment_shape(),
            vec![
                Case {
                    name: "retainKeys strategy: switching to Recreate drops rollingUpdate",
                    original: json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}),
                    patch: json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
                    want: Ok(json!({"spec": {"strategy": {"type": "Recreate"}}})),
                },
                Case {
                    name: "$retainKeys must list the patch's keys",
                    original: json!({"spec": {"strategy": {}}}),
                    patch: json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}),
                    want: Err(NOT_MATCH_RETAIN_KEYS),
                },
                Case {
                    name: "$retainKeys must be a list",
                    original: json!({}),
                    patch: json!({"spec": {"strategy": {"$retainKeys": "type"}}}),
                    want: Err(BAD_RETAIN_KEYS),
                },
                Case {
                    name: "template containers merge by name, env by name",
                    original: json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}]}}}}),
                    patch: json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "3"}]}]}}}}),
                    want: Ok(
                        json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "3"}]}]}}}}),
                    ),
                },
                Case {
                    name: "scalars are replaced",
                    original: json!({"spec": {"replicas": 1}}),
                    patch: json!({"spec": {"replicas": 3}}),
                    want: Ok(json!({"spec": {"replicas": 3}})),
                },
            ],
        );
    }

    #[test]
    fn the_original_is_not_modified_and_non_objects_are_refused() {
        let original = json!({"metadata": {"labels": {"a": "1"}}});
        let copy = original.clone();
        strategic_merge(&original, &json!({"metadata": {"labels": null}}), Some(pod_shape())).unwrap();
        assert_eq!(original, copy);
        assert!(matches!(strategic_merge(&original, &json!([1]), Some(pod_shape())), Err(PatchError::BadRequest(_))));
    }

    /// JSON values built from the words strategic merge patch reacts to.
    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let key = prop::sample::select(vec![
            "metadata",
            "labels",
            "finalizers",
            "spec",
            "containers",
            "name",
            "image",
            "ports",
            "containerPort",
            "volumes",
            "env",
            "$patch",
            "$retainKeys",
            "$setElementOrder/containers",
            "$setElementOrder/finalizers",
            "$deleteFromPrimitiveList/finalizers",
            "replace",
            "delete",
            "merge",
            "x",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0i64..5).prop_map(Value::from),
            key.clone().prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..5)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any patch against any object answers a result or an error, never
        /// a panic, and leaves the original as it was.
        #[test]
        fn never_panics(original in json_value(), patch in json_value()) {
            let copy = original.clone();
            let _ = strategic_merge(&original, &patch, Some(pod_shape()));
            let _ = strategic_merge(&original, &patch, None);
            proptest::prop_assert_eq!(original, copy);
        }
    }
}
