//! The schema facts of the built-in types, for strategic merge patch, field
//! validation and server-side apply: which fields a definition has, each
//! field's shape (object, list, map, scalar), its patch strategy and merge key,
//! its list type and map keys, and each kind's root definition. The table is
//! generated from the OpenAPI documents (`generated/schema.rs`, see
//! docs/types.md); this file is the lookup API over it.
//!
//! Invariant: no I/O and no allocation on lookup; the table is sorted, so
//! lookups are binary searches. Unknown names answer `None`, never panic.

use super::generated::schema::{DEFINITIONS, ROOTS};

/// The shape of a value: what JSON it holds and how to descend into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// An object with named fields: the definition `DEFINITIONS[i]`.
    Object(u16),
    Array(&'static Shape),
    /// An object with arbitrary keys whose values all have this shape.
    Map(&'static Shape),
    String,
    Integer,
    Number,
    Boolean,
    IntOrString,
    Quantity,
    /// Any JSON (RawExtension, FieldsV1, JSON): not descended into.
    Raw,
    /// `x-kubernetes-preserve-unknown-fields: true`: anything is kept.
    PreserveUnknown,
}

impl Shape {
    /// The definition of an object shape.
    pub fn definition(&self) -> Option<&'static Definition> {
        match self {
            Shape::Object(i) => DEFINITIONS.get(usize::from(*i)),
            _ => None,
        }
    }

    /// The shape of a list's items or a map's values.
    pub fn element(&self) -> Option<&'static Shape> {
        match self {
            Shape::Array(s) | Shape::Map(s) => Some(s),
            _ => None,
        }
    }
}

/// One field of a definition with its OpenAPI extensions ("" when absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub shape: &'static Shape,
    /// `x-kubernetes-patch-strategy`: "merge", "retainKeys", "merge,retainKeys".
    pub patch_strategy: &'static str,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: &'static str,
    /// `x-kubernetes-list-type`: "atomic", "set", "map".
    pub list_type: &'static str,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: &'static [&'static str],
    /// `x-kubernetes-map-type`: "atomic", "granular".
    pub map_type: &'static str,
}

impl Field {
    /// The defaults the generated table fills in (`..Field::PLAIN`).
    pub const PLAIN: Field = Field {
        name: "",
        shape: &Shape::Raw,
        patch_strategy: "",
        patch_merge_key: "",
        list_type: "",
        list_map_keys: &[],
        map_type: "",
    };

    /// Strategic merge patch merges this list (by `patch_merge_key` for lists
    /// of objects, as a set for lists of scalars) instead of replacing it.
    pub fn merges(&self) -> bool {
        self.patch_strategy.split(',').any(|s| s == "merge")
    }

    /// The patch strategy includes `retainKeys`.
    pub fn retains_keys(&self) -> bool {
        self.patch_strategy.split(',').any(|s| s == "retainKeys")
    }
}

/// A named definition (`io.k8s.api.core.v1.Pod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: &'static str,
    /// Has named fields (false for scalars and free-form values).
    pub object: bool,
    /// `x-kubernetes-map-type` of the definition ("atomic" or "").
    pub map_type: &'static str,
    pub required: &'static [&'static str],
    /// Sorted by name.
    pub fields: &'static [Field],
}

impl Definition {
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        let fields: &'static [Field] = self.fields;
        fields.binary_search_by(|f| f.name.cmp(name)).ok().map(|i| &fields[i])
    }
}

/// The definition of a (group, version, kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub definition: u16,
}

/// The definition named `name` (`io.k8s.api.core.v1.PodSpec`).
pub fn definition(name: &str) -> Option<&'static Definition> {
    DEFINITIONS.binary_search_by(|d| d.name.cmp(name)).ok().map(|i| &DEFINITIONS[i])
}

/// The root definition of a kind (`("", "v1", "Pod")`).
pub fn root(group: &str, version: &str, kind: &str) -> Option<&'static Definition> {
    ROOTS
        .binary_search_by(|r| (r.group, r.version, r.kind).cmp(&(group, version, kind)))
        .ok()
        .and_then(|i| DEFINITIONS.get(usize::from(ROOTS[i].definition)))
}

/// The shape of a kind's objects (`Shape::Object` of its root definition).
pub fn root_shape(group: &str, version: &str, kind: &str) -> Option<Shape> {
    ROOTS
        .binary_search_by(|r| (r.group, r.version, r.kind).cmp(&(group, version, kind)))
        .ok()
        .map(|i| Shape::Object(ROOTS[i].definition))
}

/// The shape of a dotted path (`spec.template.spec.containers`) under a
/// shape, descending through lists and maps; `None` when a step is unknown.
pub fn shape_at(mut shape: &'static Shape, path: &str) -> Option<&'static Shape> {
    for step in path.split('.').filter(|s| !s.is_empty()) {
        while let Some(element) = shape.element() {
            shape = element;
        }
        shape = shape.definition()?.field(step)?.shape;
    }
    Some(shape)
}

/// The fields of `value` that `shape` does not define (unknown fields), as
/// kube-apiserver's strict decoding names them (`spec.foo`,
/// `spec.containers[0].bar`), in document order; with `prune`, they are
/// also removed. Values of the wrong JSON type are not this function's
/// concern; `Raw` and `PreserveUnknown` values are not descended into.
pub fn unknown_fields(value: &mut serde_json::Value, shape: Shape, prune: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut path = String::new();
    walk_unknown(value, shape, prune, &mut path, &mut found);
    found
}

fn walk_unknown(value: &mut serde_json::Value, shape: Shape, prune: bool, path: &mut String, found: &mut Vec<String>) {
    use serde_json::Value;
    let base = path.len();
    match (shape, value) {
        (Shape::Object(_), Value::Object(map)) => {
            let Some(definition) = shape.definition() else { return };
            let mut unknown = Vec::new();
            for (key, child) in map.iter_mut() {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match definition.field(key) {
                    Some(field) => walk_unknown(child, *field.shape, prune, path, found),
                    None => {
                        found.push(path.clone());
                        unknown.push(key.clone());
                    }
                }
                path.truncate(base);
            }
            if prune {
                for key in unknown {
                    map.shift_remove(&key);
                }
            }
        }
        (Shape::Array(element), Value::Array(items)) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push_str(&format!("[{i}]"));
                walk_unknown(item, *element, prune, path, found);
                path.truncate(base);
            }
        }
        (Shape::Map(element), Value::Object(map)) => {
            for (key, item) in map.iter_mut() {
                path.push('.');
                path.push_str(key);
                walk_unknown(item, *element, prune, path, found);
                path.truncate(base);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(definition_name: &str, name: &str) -> &'static Field {
        definition(definition_name).unwrap_or_else(|| panic!("{definition_name}")).field(name).expect(name)
    }

    #[test]
    fn known_patch_facts() {
        let containers = field("io.k8s.api.core.v1.PodSpec", "containers");
        assert!(containers.merges());
        assert_eq!(containers.patch_merge_key, "name");
        assert_eq!((containers.list_type, containers.list_map_keys), ("map", &["name"][..]));
        let ports = field("io.k8s.api.core.v1.Container", "ports");
        assert_eq!(ports.patch_merge_key, "containerPort");
        assert_eq!(ports.list_map_keys, &["containerPort", "protocol"]);
        let volumes = field("io.k8s.api.core.v1.PodSpec", "volumes");
        assert!(volumes.merges() && volumes.retains_keys());
        let strategy = field("io.k8s.api.apps.v1.DeploymentSpec", "strategy");
        assert!(strategy.retains_keys() && !strategy.merges());
        let finalizers = field("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers");
        assert!(finalizers.merges());
        assert_eq!(*finalizers.shape, Shape::Array(&Shape::String));
        let args = field("io.k8s.api.core.v1.Container", "args");
        assert!(!args.merges());
        assert_eq!(args.list_type, "atomic");
        let env = field("io.k8s.api.core.v1.Container", "env");
        assert_eq!(env.patch_merge_key, "name");
        assert_eq!(definition("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector").unwrap().map_type, "atomic");
        assert_eq!(definition("io.k8s.api.core.v1.Container").unwrap().required, &["name"]);
    }

    #[test]
    fn shapes_and_roots() {
        let pod = root("", "v1", "Pod").expect("Pod");
        assert_eq!(pod.name, "io.k8s.api.core.v1.Pod");
        assert_eq!(root("apps", "v1", "Deployment").unwrap().name, "io.k8s.api.apps.v1.Deployment");
        assert_eq!(root("autoscaling", "v1", "Scale").unwrap().name, "io.k8s.api.autoscaling.v1.Scale");
        assert!(root("", "v1", "Nope").is_none());
        let deployment = root_shape("apps", "v1", "Deployment").unwrap();
        let deployment: &'static Shape = Box::leak(Box::new(deployment));
        let containers = shape_at(deployment, "spec.template.spec.containers").unwrap();
        assert!(matches!(containers, Shape::Array(Shape::Object(_))));
        assert_eq!(
            shape_at(deployment, "spec.template.spec.containers.resources.limits"),
            Some(&Shape::Map(&Shape::Quantity))
        );
        assert_eq!(shape_at(deployment, "spec.template.spec.containers.ports.containerPort"), Some(&Shape::Integer));
        assert_eq!(shape_at(deployment, "spec.strategy.rollingUpdate.maxSurge"), Some(&Shape::IntOrString));
        assert_eq!(shape_at(deployment, "metadata.labels"), Some(&Shape::Map(&Shape::String)));
        assert_eq!(shape_at(deployment, "metadata.creationTimestamp"), Some(&Shape::String));
        assert_eq!(shape_at(deployment, "metadata.managedFields.fieldsV1"), Some(&Shape::Raw));
        assert_eq!(shape_at(deployment, "spec.nope"), None);
        // The table is sorted, so binary searches are right.
        assert!(DEFINITIONS.windows(2).all(|w| w[0].name < w[1].name));
        assert!(DEFINITIONS.iter().all(|d| d.fields.windows(2).all(|w| w[0].name < w[1].name)));
        assert!(ROOTS
            .windows(2)
            .all(|w| (w[0].group, w[0].version, w[0].kind) < (w[1].group, w[1].version, w[1].kind)));
    }
}
