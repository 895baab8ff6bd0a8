//! The shape of the Kubernetes protobuf schema table: one [`Message`] per
//! protobuf message reachable from a served kind, its fields by number with
//! their JSON names, and the message of each group/version/kind. The facts
//! themselves are in `generated/proto_schema.rs`, produced by
//! `tools/gen-proto-tables` from the k8s-pb crate (see docs/protobuf.md).
//!
//! Invariant: `MESSAGES` is sorted by name and each message's fields by tag,
//! so lookups are binary searches; every `Msg(i)` indexes `MESSAGES`. No I/O.

pub use super::generated::proto_schema::{KINDS, MESSAGES};

/// The protobuf type of a field (of a map's value for `Shape::Map`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Double,
    Float,
    /// A message: an index into [`MESSAGES`].
    Msg(u16),
}

/// Singular, repeated, a map with string keys, or a singular message whose
/// fields JSON flattens into the parent (a Go struct embedded `json:",inline"`,
/// e.g. `Volume.volumeSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    One,
    Repeated,
    Map,
    Inline,
}

/// How a message appears in JSON: an object of its fields, or one of
/// Kubernetes' custom JSON forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Object,
    /// `metav1.Time`: RFC 3339 at second precision.
    Time,
    /// `metav1.MicroTime`: RFC 3339 with six fractional digits.
    MicroTime,
    /// `metav1.Duration`: a Go duration string.
    Duration,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `resource.Quantity`: its canonical string.
    Quantity,
    /// Embedded JSON bytes (`RawExtension`, `FieldsV1`, apiextensions `JSON`).
    RawJson,
    /// apiextensions `JSONSchemaPropsOrArray`: a schema or an array of schemas.
    SchemaOrArray,
    /// apiextensions `JSONSchemaPropsOrBool`: a schema or a boolean.
    SchemaOrBool,
    /// apiextensions `JSONSchemaPropsOrStringArray`: a schema or an array of strings.
    SchemaOrStringArray,
}

#[derive(Debug)]
pub struct Field {
    pub tag: u32,
    pub json: &'static str,
    pub ty: Type,
    pub shape: Shape,
}

#[derive(Debug)]
pub struct Message {
    /// The OpenAPI name, e.g. `io.k8s.api.core.v1.Pod`.
    pub name: &'static str,
    pub form: Form,
    pub fields: &'static [Field],
}

impl Message {
    pub fn field(&self, tag: u32) -> Option<&'static Field> {
        self.fields.binary_search_by_key(&tag, |f| f.tag).ok().map(|i| &self.fields[i])
    }
}

/// The message of a group/version/kind.
#[derive(Debug)]
pub struct Kind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub message: u16,
}

pub fn message(id: u16) -> Option<&'static Message> {
    MESSAGES.get(usize::from(id))
}

/// The message of `kind`, preferring the entry of `api_version` when given.
pub fn message_of_kind(api_version: &str, kind: &str) -> Option<&'static Message> {
    let exact = KINDS.iter().find(|k| k.kind == kind && k.api_version == api_version);
    exact.or_else(|| KINDS.iter().find(|k| k.kind == kind)).and_then(|k| message(k.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_closed() {
        for pair in MESSAGES.windows(2) {
            assert!(pair[0].name < pair[1].name, "{} before {}", pair[0].name, pair[1].name);
        }
        for m in MESSAGES {
            for pair in m.fields.windows(2) {
                assert!(pair[0].tag < pair[1].tag, "{}", m.name);
            }
            for f in m.fields {
                if let Type::Msg(i) = f.ty {
                    assert!(message(i).is_some(), "{}.{}", m.name, f.json);
                }
            }
        }
        for k in KINDS {
            assert!(message(k.message).is_some());
        }
    }

    #[test]
    fn json_names_come_from_openapi() {
        let ebs = MESSAGES.iter().find(|m| m.name == "io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource").unwrap();
        assert!(ebs.fields.iter().any(|f| f.json == "volumeID"));
        let pv = message_of_kind("v1", "PersistentVolume").unwrap();
        let Type::Msg(spec) = pv.fields.iter().find(|f| f.json == "spec").unwrap().ty else { panic!("a message") };
        assert!(
            message(spec).unwrap().fields.iter().any(|f| f.shape == Shape::Inline),
            "persistentVolumeSource is inline"
        );
        let deployment = message_of_kind("apps/v1", "Deployment").unwrap();
        assert_eq!(deployment.name, "io.k8s.api.apps.v1.Deployment");
        assert_eq!(deployment.field(1).unwrap().json, "metadata");
        assert!(message_of_kind("v1", "Widget").is_none());
    }
}
