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
    /// A Go `[]string` type that Protobuf carries as a message with one
    /// repeated string field (`ExtraValue` of a CertificateSigningRequest's
    /// requester): a JSON array of strings.
    StringList,
}

#[derive(Debug)]
pub struct Field {
    pub tag: u32,
    pub json: &'static str,
    pub ty: Type,
    pub shape: Shape,
    /// The Go type of the field as Go's reflection prints it in a decoding
    /// error (`[]v1.Container`, `map[string]string`, `v1.ResourceList`,
    /// `int32`); a pointer's `*` is not printed (Go reports the pointee).
    pub go: &'static str,
    /// The Go type of one item of a slice or value of a map (`v1.Container`);
    /// the same as `go` for a singular field.
    pub go_element: &'static str,
    /// [`GO_KNOWN`], [`GO_POINTER`], [`GO_OMITEMPTY`], [`GO_OMITZERO`]: the Go
    /// struct field's facts, when `tools/gen-proto-tables/go_fields.txt` has
    /// them.
    pub go_flags: u8,
}

/// `go_flags`: the Go facts of this field are known (else the other bits are 0).
pub const GO_KNOWN: u8 = 1;
/// `go_flags`: the Go field is a pointer (`*int32`, `*PodSecurityContext`).
pub const GO_POINTER: u8 = 2;
/// `go_flags`: the JSON tag has `omitempty`.
pub const GO_OMITEMPTY: u8 = 4;
/// `go_flags`: the JSON tag has `omitzero`.
pub const GO_OMITZERO: u8 = 8;

impl Field {
    pub fn go_known(&self) -> bool {
        self.go_flags & GO_KNOWN != 0
    }
    pub fn go_pointer(&self) -> bool {
        self.go_flags & GO_POINTER != 0
    }
    pub fn go_omitempty(&self) -> bool {
        self.go_flags & GO_OMITEMPTY != 0
    }
    pub fn go_omitzero(&self) -> bool {
        self.go_flags & GO_OMITZERO != 0
    }
}

/// One JSON field of a message in Go struct order: members of inline
/// (embedded) structs appear in place, owned by the embedded message.
#[derive(Debug)]
pub struct Slot {
    pub name: &'static str,
    /// The message that declares the field (an index into [`MESSAGES`]).
    pub message: u16,
    /// The field's index in that message's `fields`.
    pub field: u16,
}

#[derive(Debug)]
pub struct Message {
    /// The OpenAPI name, e.g. `io.k8s.api.core.v1.Pod`.
    pub name: &'static str,
    pub form: Form,
    /// The Go struct's name (`PodSpec`), as a decoding error names it.
    pub go_name: &'static str,
    /// Whether `go_fields.txt` holds this struct's facts (every field's
    /// `go_flags` then has [`GO_KNOWN`]).
    pub known: bool,
    /// Sorted by tag.
    pub fields: &'static [Field],
    /// The JSON fields in Go struct order, inline members flattened.
    pub json: &'static [Slot],
    /// Indexes into `json`, sorted by JSON name.
    pub by_name: &'static [u16],
}

impl Message {
    pub fn field(&self, tag: u32) -> Option<&'static Field> {
        self.fields.binary_search_by_key(&tag, |f| f.tag).ok().map(|i| &self.fields[i])
    }

    /// The position (in Go order) and field of the JSON field `name`,
    /// looking through inline members.
    pub fn json_field(&self, name: &str) -> Option<(usize, &'static Field)> {
        let by_name: &'static [u16] = self.by_name;
        let json: &'static [Slot] = self.json;
        let i = by_name
            .binary_search_by(|i| json.get(usize::from(*i)).map_or("", |s| s.name).cmp(name))
            .ok()
            .and_then(|i| by_name.get(i))
            .map(|i| usize::from(*i))?;
        let slot = json.get(i)?;
        let field = message(slot.message)?.fields.get(usize::from(slot.field))?;
        Some((i, field))
    }

    /// The field of a JSON slot.
    pub fn slot_field(&self, slot: &Slot) -> Option<&'static Field> {
        message(slot.message)?.fields.get(usize::from(slot.field))
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
    fn json_view_is_go_ordered_indexed_and_closed() {
        for m in MESSAGES {
            assert_eq!(m.by_name.len(), m.json.len(), "{}", m.name);
            let names: Vec<&str> = m.by_name.iter().map(|i| m.json[usize::from(*i)].name).collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{}: by_name sorted and unique", m.name);
            for (i, slot) in m.json.iter().enumerate() {
                let field = m.slot_field(slot).unwrap_or_else(|| panic!("{}.{}", m.name, slot.name));
                assert_eq!(field.json, slot.name);
                assert_ne!(field.shape, Shape::Inline, "inline members are flattened");
                assert_eq!(m.json_field(slot.name).map(|(at, _)| at), Some(i));
                if m.known {
                    assert!(field.go_known(), "{}.{} lacks Go facts", m.name, slot.name);
                }
            }
        }
        let spec = message_of_kind("v1", "Pod").and_then(|pod| pod.json_field("spec")).unwrap().1;
        let Type::Msg(spec) = spec.ty else { panic!("a message") };
        let spec = message(spec).unwrap();
        assert_eq!(spec.go_name, "PodSpec");
        let order: Vec<&str> = spec.json.iter().take(3).map(|s| s.name).collect();
        assert_eq!(order, ["volumes", "initContainers", "containers"], "Go struct order, not tag order");
        let (_, containers) = spec.json_field("containers").unwrap();
        assert_eq!((containers.go, containers.go_element), ("[]v1.Container", "v1.Container"));
        let (_, host_pid) = spec.json_field("hostPID").unwrap();
        assert!(host_pid.go_known() && host_pid.go_omitempty() && !host_pid.go_pointer());
        let (_, grace) = spec.json_field("terminationGracePeriodSeconds").unwrap();
        assert!(grace.go_pointer());
        let volume = MESSAGES.iter().find(|m| m.name == "io.k8s.api.core.v1.Volume").unwrap();
        assert!(volume.json_field("configMap").is_some(), "inline VolumeSource members are Volume's");
        assert!(volume.json_field("volumeSource").is_none());
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
