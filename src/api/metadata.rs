//! Metadata-only representations: `PartialObjectMetadata` and
//! `PartialObjectMetadataList` (meta.k8s.io v1 and v1beta1), which
//! client-go's metadata informers and kube-rs' `metadata_watcher` ask for with
//! `Accept: ...;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`, for
//! built-in and custom resources alike, as kube-apiserver's response
//! transform (`endpoints/handlers/response.go`) builds them:
//!
//! - an object: `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
//!   "metadata":{...}}`, the metadata being the object's own, byte for byte;
//! - a list: `PartialObjectMetadataList` with the page's `resourceVersion`,
//!   `continue` and `remainingItemCount`, each item a PartialObjectMetadata
//!   *with* its kind and apiVersion (kube sets them on every item), and
//!   `items: null` when empty (Go's nil slice);
//! - a watch: each event's object a PartialObjectMetadata (bookmarks too,
//!   their annotations kept); ERROR events keep their Status.
//!
//! In protobuf the object is the `k8s\0` envelope of a `PartialObjectMetadata`
//! message (field 1, `ObjectMeta`), encoded from the metadata's JSON by the
//! schema table, so custom resources have it too; a v1 list is `ListMeta` = 1,
//! `items` = 2, a v1beta1 list `items` = 1, `ListMeta` = 2 (its .proto), items
//! without TypeMeta. YAML and CBOR are those of the JSON.
//!
//! Cost: the v1 JSON and protobuf of an object version are built at most once
//! (cache slots `MetadataJson` and `MetadataProtobuf`) from the cached JSON:
//! one scan to find `metadata` and a copy of it behind a fixed head (JSON),
//! or an encoding of the metadata alone (protobuf); every later request, list
//! page and watcher shares those bytes. v1beta1, YAML and CBOR are built per
//! request from the same JSON.
//!
//! Invariant: no I/O; never panics on any stored value (an object that is not
//! JSON, or whose metadata its schema refuses, is an `ApiError::Internal`).

use super::negotiate::{Metadata, Representation, Wire};
use super::status::ApiError;
use super::{cbor, protobuf_encode, yaml};
use crate::cache::{CachedObject, Format};
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;

pub const KIND: &str = "PartialObjectMetadata";
pub const LIST_KIND: &str = "PartialObjectMetadataList";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

impl Metadata {
    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
    pub fn api_version(&self) -> String {
        format!("meta.k8s.io/{}", self.version)
    }

    /// The same wire format without the conversion: what a Status (an
    /// error, an ERROR event) is written in, since kube never converts one.
    pub fn plain(&self) -> Representation {
        match self.wire {
            Wire::Json => Representation::Json,
            Wire::Protobuf => Representation::Protobuf,
            Wire::Cbor => Representation::Cbor,
            Wire::Yaml => Representation::Yaml,
        }
    }

    fn cached_format(&self) -> Option<Format> {
        match (self.version.as_str(), self.wire) {
            ("v1", Wire::Json) => Some(Format::MetadataJson),
            ("v1", Wire::Protobuf) => Some(Format::MetadataProtobuf),
            _ => None,
        }
    }
}

/// The response's `Content-Type`.
pub fn content_type(metadata: &Metadata) -> &'static str {
    super::encode::content_type(&metadata.plain())
}

/// A watch response's `Content-Type`.
pub fn watch_content_type(metadata: &Metadata) -> &'static str {
    super::encode::watch_content_type(&metadata.plain())
}

/// The `metadata` member of an object's JSON, as it is (`{}` when there is
/// none: Go's ObjectMeta is not a pointer).
fn metadata_text(json: &[u8]) -> Result<&str, String> {
    #[derive(serde::Deserialize)]
    struct Outer<'a> {
        #[serde(borrow, default)]
        metadata: Option<&'a RawValue>,
    }
    let outer: Outer<'_> = serde_json::from_slice(json).map_err(|e| format!("the object is not JSON: {e}"))?;
    Ok(outer.metadata.map(RawValue::get).unwrap_or("{}"))
}

/// An object's PartialObjectMetadata as JSON, in meta.k8s.io `version`.
pub fn object_json(json: &[u8], version: &str) -> Result<Bytes, String> {
    let metadata = metadata_text(json)?;
    let head = "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/";
    let mut out = Vec::with_capacity(head.len() + version.len() + metadata.len() + 16);
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(version.as_bytes());
    out.extend_from_slice(b"\",\"metadata\":");
    out.extend_from_slice(metadata.as_bytes());
    out.push(b'}');
    Ok(Bytes::from(out))
}

/// An object's PartialObjectMetadata as a protobuf envelope, in meta.k8s.io
/// `version`: `PartialObjectMetadata{metadata = 1: ObjectMeta}`.
pub fn object_protobuf(json: &[u8], version: &str) -> Result<Bytes, String> {
    let metadata: Map<String, Value> = match serde_json::from_str(metadata_text(json)?) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err("the object's metadata is not an object".into()),
        Err(e) => return Err(e.to_string()),
    };
    let object_meta = protobuf_encode::encode_message_json(OBJECT_META, &metadata).map_err(|e| e.to_string())?;
    let mut raw = Vec::with_capacity(object_meta.len() + 6);
    raw.push(0x0a); // field 1, length-delimited
    let mut len = object_meta.len() as u64;
    while len >= 0x80 {
        raw.push((len as u8) | 0x80);
        len >>= 7;
    }
    raw.push(len as u8);
    raw.extend_from_slice(&object_meta);
    Ok(Bytes::from(protobuf_encode::envelope(&format!("meta.k8s.io/{version}"), KIND, &raw)))
}

/// Builds a cache slot's bytes (`encode::build`).
pub fn build(format: Format, json: &[u8]) -> Result<Bytes, String> {
    match format {
        Format::MetadataProtobuf => object_protobuf(json, "v1"),
        _ => object_json(json, "v1"),
    }
}

fn internal(e: String) -> ApiError {
    ApiError::Internal(format!("encoding the object's metadata: {e}"))
}

/// An object (from a response that is not cached: a bookmark, a write's
/// result, a custom resource read in another version) in `metadata`.
pub fn uncached(json: &[u8], metadata: &Metadata) -> Result<Bytes, ApiError> {
    match metadata.wire {
        Wire::Json => object_json(json, &metadata.version),
        Wire::Protobuf => object_protobuf(json, &metadata.version),
        Wire::Cbor => object_json(json, &metadata.version).and_then(|j| cbor::encode_json(&j)),
        Wire::Yaml => object_json(json, &metadata.version).and_then(|j| yaml::encode_json(&j)),
    }
    .map_err(internal)
}

/// A cached object in `metadata`: v1 JSON and protobuf from its cache slots
/// (built at most once per object version), the others built now.
pub fn object(object: &CachedObject, metadata: &Metadata) -> Result<Bytes, ApiError> {
    match metadata.cached_format() {
        Some(format) => {
            object.encodings.get_or_build(format, &object.json, |json| build(format, json)).map_err(internal)
        }
        None => uncached(&object.json, metadata),
    }
}

/// A list page's metadata (`ListMeta`).
#[derive(Clone, Copy, Debug)]
pub struct Page<'a> {
    pub revision: u64,
    pub continue_token: Option<&'a str>,
    pub remaining: Option<usize>,
}

/// A PartialObjectMetadataList page as body frames, the items' cached bytes
/// shared where they are cached (JSON, protobuf).
pub fn list_frames(metadata: &Metadata, page: Page<'_>, objects: &[Arc<CachedObject>]) -> Result<Vec<Bytes>, ApiError> {
    let api_version = metadata.api_version();
    match metadata.wire {
        Wire::Json => {
            let items = objects.iter().map(|o| object(o, metadata)).collect::<Result<Vec<_>, _>>()?;
            Ok(json_list_frames(&api_version, page, items))
        }
        Wire::Protobuf => {
            let items = objects.iter().map(|o| object(o, metadata)).collect::<Result<Vec<_>, _>>()?;
            let list_page = protobuf_encode::ListPage {
                revision: page.revision,
                continue_token: page.continue_token,
                remaining: page.remaining,
            };
            protobuf_encode::frames_of_list(LIST_KIND, &api_version, list_page, &items, metadata.version == "v1beta1")
                .map_err(|e| internal(e.to_string()))
        }
        Wire::Cbor => {
            let items = objects
                .iter()
                .map(|o| object_json(&o.json, &metadata.version).and_then(|j| cbor::encode_json(&j)))
                .collect::<Result<Vec<_>, _>>()
                .map_err(internal)?;
            let mut frames =
                cbor::list_frames(LIST_KIND, &api_version, page.revision, page.continue_token, page.remaining, &items);
            if items.is_empty() {
                // Go's nil slice: `items` is null, not an empty array (0x80 -> 0xf6).
                if let Some(head) = frames.first_mut() {
                    let mut bytes = head.to_vec();
                    if bytes.last() == Some(&0x80) {
                        bytes.pop();
                        bytes.push(0xf6);
                    }
                    *head = Bytes::from(bytes);
                }
            }
            Ok(frames)
        }
        Wire::Yaml => {
            let items = objects
                .iter()
                .map(|o| {
                    object_json(&o.json, &metadata.version)
                        .and_then(|j| yaml::encode_json(&j))
                        .and_then(|d| yaml::list_item(&d))
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(internal)?;
            let mut frames =
                yaml::list_frames(LIST_KIND, &api_version, page.revision, page.continue_token, page.remaining, &items)
                    .map_err(internal)?;
            if items.is_empty() {
                if let Some(head) = frames.first_mut() {
                    let text = String::from_utf8_lossy(head).replace("items: []\n", "items: null\n");
                    *head = Bytes::from(text);
                }
            }
            Ok(frames)
        }
    }
}

/// `{"kind":"PartialObjectMetadataList","apiVersion":..,"metadata":{..},"items":[..]}`,
/// `"items":null` when there are none.
fn json_list_frames(api_version: &str, page: Page<'_>, items: Vec<Bytes>) -> Vec<Bytes> {
    let mut head = format!(
        "{{\"kind\":\"{LIST_KIND}\",\"apiVersion\":\"{api_version}\",\"metadata\":{{\"resourceVersion\":\"{}\"",
        page.revision
    );
    if let Some(token) = page.continue_token {
        head.push_str(",\"continue\":");
        head.push_str(&serde_json::to_string(token).unwrap_or_default());
    }
    if let Some(n) = page.remaining {
        head.push_str(&format!(",\"remainingItemCount\":{n}"));
    }
    if items.is_empty() {
        head.push_str("},\"items\":null}");
        return vec![Bytes::from(head)];
    }
    head.push_str("},\"items\":[");
    let mut frames = Vec::with_capacity(items.len() * 2 + 2);
    frames.push(Bytes::from(head));
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            frames.push(Bytes::from_static(b","));
        }
        frames.push(item);
    }
    frames.push(Bytes::from_static(b"]}"));
    frames
}

/// One watch event's frames: its object as a PartialObjectMetadata (from
/// the cache when the event has its cached object), an ERROR's Status as it
/// is.
pub fn watch_event_frames(
    metadata: &Metadata,
    event_type: &str,
    source: Option<&CachedObject>,
    json: &[u8],
) -> Result<Vec<Bytes>, ApiError> {
    if event_type == "ERROR" {
        return watch_frames(&metadata.plain(), event_type, super::encode::uncached(json, &metadata.plain())?);
    }
    let encoded = match source {
        Some(o) => object(o, metadata)?,
        None => uncached(json, metadata)?,
    };
    watch_frames(&metadata.plain(), event_type, encoded)
}

fn watch_frames(plain: &Representation, event_type: &str, encoded: Bytes) -> Result<Vec<Bytes>, ApiError> {
    Ok(match plain {
        Representation::Protobuf => protobuf_encode::watch_event_frames(event_type, encoded).to_vec(),
        Representation::Cbor => cbor::watch_event_frames(event_type, &encoded).to_vec(),
        _ => vec![
            Bytes::from(format!("{{\"type\":\"{event_type}\",\"object\":")),
            encoded,
            Bytes::from_static(crate::watch::FRAME_SUFFIX),
        ],
    })
}

/// The Go type kube-apiserver names in its 406s: the internal type of a
/// built-in resource (`*core.Pod`, `*apps.DeploymentList`), unstructured for
/// custom resources.
pub fn go_type(info: &ResourceInfo, list: bool) -> String {
    if info.custom.is_some() {
        return if list { "*unstructured.UnstructuredList" } else { "*unstructured.Unstructured" }.to_string();
    }
    let package = match info.group.as_str() {
        // events.k8s.io's Event is the core Event inside kube-apiserver.
        "" | "events.k8s.io" => "core",
        "internal.apiserver.k8s.io" => "apiserverinternal",
        group => group.split('.').next().unwrap_or(group),
    };
    let kind = if list { &info.list_kind } else { &info.kind };
    format!("*{package}.{kind}")
}

/// The 406 of `as=PartialObjectMetadataList` on one object (get, write
/// responses), in kube-apiserver's words.
pub fn not_a_list(info: &ResourceInfo) -> ApiError {
    ApiError::NotAcceptableConversion(format!(
        "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
        go_type(info, false)
    ))
}

/// The 406 of `as=PartialObjectMetadata` on a list, in kube-apiserver's words.
pub fn is_a_list(info: &ResourceInfo) -> ApiError {
    ApiError::NotAcceptableConversion(format!(
        "you requested PartialObjectMetadata, but the requested object is a list ({})",
        go_type(info, true)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cached(json: &str) -> Arc<CachedObject> {
        crate::cache::encode_stored(
            Bytes::from_static(b"/registry/widgets/ns/a"),
            json.as_bytes(),
            crate::log::Revision(7),
            crate::log::Revision(5),
            &[],
        )
        .unwrap()
    }

    fn meta(list: bool, version: &str, wire: Wire) -> Metadata {
        Metadata { list, version: version.into(), wire }
    }

    const POD: &str = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u1","labels":{"app":"web"},"annotations":{"n":"1"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"u0","controller":true}],"creationTimestamp":"2026-01-02T03:04:05Z"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}"#;

    #[test]
    fn object_json_is_the_metadata_behind_a_fixed_head() {
        let object = cached(POD);
        let bytes = super::object(&object, &meta(false, "v1", Wire::Json)).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        let stored: Value = serde_json::from_slice(&object.json).unwrap();
        assert_eq!(value["kind"], "PartialObjectMetadata");
        assert_eq!(value["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(value["metadata"], stored["metadata"]);
        assert_eq!(value.as_object().unwrap().len(), 3, "nothing but kind, apiVersion and metadata");
        // Byte for byte the stored metadata, in its order.
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(
            text.contains(r#""metadata":{"name":"a","namespace":"ns","uid":"u1","resourceVersion":"7","#),
            "{text}"
        );
        // Built once, shared.
        let again = super::object(&object, &meta(false, "v1", Wire::Json)).unwrap();
        assert_eq!(again.as_ptr(), bytes.as_ptr());
        // v1beta1: another apiVersion, built per request.
        let beta: Value =
            serde_json::from_slice(&super::object(&object, &meta(false, "v1beta1", Wire::Json)).unwrap()).unwrap();
        assert_eq!(beta["apiVersion"], "meta.k8s.io/v1beta1");
        // No metadata: `{}`; not JSON: an error, not a panic.
        assert_eq!(
            &object_json(br#"{"kind":"X"}"#, "v1").unwrap()[..],
            br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{}}"#
        );
        assert!(object_json(b"\xff", "v1").is_err());
        assert!(object_protobuf(br#"{"metadata":{"name":5}}"#, "v1").is_err());
    }

    #[test]
    fn protobuf_object_decodes_with_k8s_pb_shape() {
        let object = cached(POD);
        let bytes = super::object(&object, &meta(false, "v1", Wire::Protobuf)).unwrap();
        assert!(bytes.starts_with(b"k8s\0"));
        // The envelope's raw is PartialObjectMetadata{1: ObjectMeta}: the
        // ObjectMeta decodes to the object's metadata.
        let raw = protobuf_encode::raw_of(&bytes).unwrap();
        assert_eq!(raw[0], 0x0a);
        let stored: Value = serde_json::from_slice(&object.json).unwrap();
        let expected =
            protobuf_encode::encode_message_json(OBJECT_META, stored["metadata"].as_object().unwrap()).unwrap();
        assert!(raw.ends_with(&expected));
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("meta.k8s.io/v1") && text.contains("PartialObjectMetadata"));
        let again = super::object(&object, &meta(false, "v1", Wire::Protobuf)).unwrap();
        assert_eq!(again.as_ptr(), bytes.as_ptr(), "built once per object version");
        // A custom resource (no schema of its own) has its metadata in protobuf too.
        let widget =
            cached(r#"{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w"},"spec":{"size":3}}"#);
        assert!(super::object(&widget, &meta(false, "v1", Wire::Protobuf)).is_ok());
    }

    #[test]
    fn json_lists_carry_item_kinds_and_null_for_no_items() {
        let objects = vec![cached(POD)];
        let page = Page { revision: 9, continue_token: Some("tok"), remaining: Some(4) };
        let frames = list_frames(&meta(true, "v1", Wire::Json), page, &objects).unwrap();
        let list: Value = serde_json::from_slice(&frames.concat()).unwrap();
        assert_eq!(list["kind"], "PartialObjectMetadataList");
        assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(list["metadata"], json!({"resourceVersion": "9", "continue": "tok", "remainingItemCount": 4}));
        assert_eq!(list["items"][0]["kind"], "PartialObjectMetadata");
        assert_eq!(list["items"][0]["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(list["items"][0]["metadata"]["name"], "a");
        assert!(list["items"][0].get("spec").is_none());
        let empty = Page { revision: 9, continue_token: None, remaining: None };
        let frames = list_frames(&meta(true, "v1", Wire::Json), empty, &[]).unwrap();
        assert_eq!(
            &frames.concat()[..],
            br#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},"items":null}"#
        );
        let yaml = list_frames(&meta(true, "v1", Wire::Yaml), empty, &[]).unwrap().concat();
        assert!(String::from_utf8_lossy(&yaml).contains("items: null\n"));
        let cbor = list_frames(&meta(true, "v1", Wire::Cbor), empty, &[]).unwrap().concat();
        assert_eq!(cbor::decode_item(&cbor).unwrap().0["items"], Value::Null);
    }

    #[test]
    fn yaml_and_cbor_lists_decode_to_the_json_list() {
        let objects = vec![cached(POD), cached(&POD.replace("\"name\":\"a\"", "\"name\":\"b\""))];
        let page = Page { revision: 9, continue_token: None, remaining: None };
        let json: Value =
            serde_json::from_slice(&list_frames(&meta(true, "v1", Wire::Json), page, &objects).unwrap().concat())
                .unwrap();
        let yaml = list_frames(&meta(true, "v1", Wire::Yaml), page, &objects).unwrap().concat();
        assert_eq!(Value::Object(yaml::decode_object(&yaml).unwrap()), json);
        let cbor = list_frames(&meta(true, "v1", Wire::Cbor), page, &objects).unwrap().concat();
        assert_eq!(cbor::decode_item(&cbor).unwrap().0, json);
    }

    #[test]
    fn protobuf_lists_put_fields_in_each_versions_order() {
        let objects = vec![cached(POD)];
        let page = Page { revision: 9, continue_token: None, remaining: None };
        let v1 = list_frames(&meta(true, "v1", Wire::Protobuf), page, &objects).unwrap().concat();
        let beta = list_frames(&meta(true, "v1beta1", Wire::Protobuf), page, &objects).unwrap().concat();
        let v1_raw = protobuf_encode::raw_of(&Bytes::from(v1)).unwrap();
        let beta_raw = protobuf_encode::raw_of(&Bytes::from(beta)).unwrap();
        // v1: ListMeta (field 1) first; v1beta1: items (field 1) first, ListMeta (2) last.
        assert_eq!(v1_raw[0], 0x0a);
        assert_eq!(&v1_raw[2..4], b"\x12\x01", "ListMeta: resourceVersion is its field 2");
        assert_eq!(beta_raw[0], 0x0a);
        assert!(beta_raw.ends_with(b"\x12\x03\x12\x019"), "{beta_raw:?}");
        assert_eq!(v1_raw.len(), beta_raw.len());
    }

    #[test]
    fn watch_events_convert_objects_and_bookmarks_but_not_errors() {
        let m = meta(false, "v1", Wire::Json);
        let object = cached(POD);
        let frames = watch_event_frames(&m, "ADDED", Some(&object), &object.json).unwrap();
        let event: Value = serde_json::from_slice(&frames.concat()).unwrap();
        assert_eq!(event["type"], "ADDED");
        assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
        let bookmark = crate::watch::bookmark_object("Pod", "v1", crate::log::Revision(12), true);
        let frames = watch_event_frames(&m, "BOOKMARK", None, &bookmark).unwrap();
        let event: Value = serde_json::from_slice(&frames.concat()).unwrap();
        assert_eq!(
            event["object"],
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": {"resourceVersion": "12", "annotations": {"k8s.io/initial-events-end": "true"}}})
        );
        let status = ApiError::Expired { message: "too old resource version: 1 (5)".into(), continue_token: None }
            .to_status_json();
        let frames = watch_event_frames(&m, "ERROR", None, &status).unwrap();
        let event: Value = serde_json::from_slice(&frames.concat()).unwrap();
        assert_eq!(event["object"]["kind"], "Status");
        assert_eq!(event["object"]["code"], 410);
        // Protobuf: a length-prefixed WatchEvent whose object is the cached envelope.
        let pb = meta(false, "v1", Wire::Protobuf);
        let frames = watch_event_frames(&pb, "MODIFIED", Some(&object), &object.json).unwrap();
        assert_eq!(frames[1].as_ptr(), super::object(&object, &pb).unwrap().as_ptr());
    }

    #[test]
    fn go_type_names_as_kube_apiserver_prints_them() {
        let registry = crate::types::registry::Registry::builtin();
        let mut pods = registry.lookup("", "v1", "pods").unwrap().clone();
        assert_eq!(go_type(&pods, false), "*core.Pod");
        assert_eq!(go_type(&pods, true), "*core.PodList");
        let deployments = registry.lookup("apps", "v1", "deployments").unwrap();
        assert_eq!(go_type(deployments, true), "*apps.DeploymentList");
        pods.group = "rbac.authorization.k8s.io".into();
        pods.kind = "Role".into();
        assert_eq!(go_type(&pods, false), "*rbac.Role");
        assert_eq!(
            not_a_list(registry.lookup("", "v1", "pods").unwrap()).to_string(),
            "not acceptable: you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)"
        );
    }
}
