//! The chosen representation of objects, list pages and watch events, built
//! from the cached encodings (`cache::Encodings`): JSON as the shard built
//! it, protobuf, CBOR and YAML built at most once per object version and then
//! shared; and gzip of large get and list responses.
//!
//! Invariant: no object is encoded here per request: items come from their
//! cache and only the envelopes around them are built.

use super::negotiate::Representation;
use super::status::ApiError;
use super::{cbor, protobuf_encode, yaml, ResponseBody};
use crate::cache::{CachedObject, Format};
use bytes::Bytes;
use http::{header, HeaderValue, Response, StatusCode};
use std::sync::Arc;

/// kube-apiserver compresses responses larger than this (128 KiB) when the
/// client accepts gzip (`defaultGzipThresholdBytes`).
pub const GZIP_THRESHOLD_BYTES: usize = 128 * 1024;

fn format_of(representation: &Representation) -> Option<Format> {
    match representation {
        Representation::Protobuf => Some(Format::Protobuf),
        Representation::Cbor => Some(Format::Cbor),
        Representation::Yaml => Some(Format::Yaml),
        _ => None,
    }
}

fn build(format: Format, json: &[u8]) -> Result<Bytes, String> {
    match format {
        Format::Protobuf => protobuf_encode::encode_object_json(json).map_err(|e| e.to_string()),
        Format::Cbor => cbor::encode_json(json),
        Format::Yaml => yaml::encode_json(json),
        Format::YamlListItem => yaml::list_item(&yaml::encode_json(json)?),
        Format::MetadataJson | Format::MetadataProtobuf => super::metadata::build(format, json),
    }
}

/// The object's bytes in `representation` (JSON or a cached encoding).
pub fn object(object: &CachedObject, representation: &Representation) -> Result<Bytes, ApiError> {
    if let Representation::Metadata(metadata) = representation {
        return super::metadata::object(object, metadata);
    }
    match format_of(representation) {
        None => Ok(object.json.clone()),
        Some(format) => object
            .encodings
            .get_or_build(format, &object.json, |json| build(format, json))
            .map_err(|e| ApiError::Internal(format!("encoding the object as {}: {e}", format.name()))),
    }
}

/// The object's cached encoding in `format`, built on first use.
fn in_format(object: &CachedObject, format: Format) -> Result<Bytes, ApiError> {
    object
        .encodings
        .get_or_build(format, &object.json, |json| build(format, json))
        .map_err(|e| ApiError::Internal(format!("encoding the object as {}: {e}", format.name())))
}

/// An object that is not cached (a bookmark, a Status), in `representation`.
pub fn uncached(json: &[u8], representation: &Representation) -> Result<Bytes, ApiError> {
    if let Representation::Metadata(metadata) = representation {
        return super::metadata::uncached(json, metadata);
    }
    match format_of(representation) {
        None => Ok(Bytes::copy_from_slice(json)),
        Some(format) => build(format, json).map_err(ApiError::Internal),
    }
}

pub fn content_type(representation: &Representation) -> &'static str {
    match representation {
        Representation::Metadata(metadata) => super::metadata::content_type(metadata),
        Representation::Protobuf => protobuf_encode::MEDIA_TYPE,
        Representation::Cbor => cbor::MEDIA_TYPE,
        Representation::Yaml => yaml::MEDIA_TYPE,
        _ => "application/json",
    }
}

pub fn watch_content_type(representation: &Representation) -> &'static str {
    match representation {
        Representation::Metadata(metadata) => super::metadata::watch_content_type(metadata),
        Representation::Protobuf => protobuf_encode::WATCH_MEDIA_TYPE,
        Representation::Cbor => cbor::WATCH_MEDIA_TYPE,
        _ => "application/json",
    }
}

/// A list page in a non-JSON representation, as body frames. The items of a
/// `typed` list (a built-in kind's) carry no kind/apiVersion, as kube's;
/// a custom resource's list items keep theirs (kube's unstructured lists).
pub fn list_frames(
    representation: &Representation,
    typed: bool,
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    objects: &[Arc<CachedObject>],
) -> Result<Vec<Bytes>, ApiError> {
    if let Representation::Metadata(metadata) = representation {
        let page = super::metadata::Page { revision, continue_token, remaining };
        return super::metadata::list_frames(metadata, page, objects);
    }
    if *representation == Representation::Yaml {
        let mut items = objects.iter().map(|o| in_format(o, Format::YamlListItem)).collect::<Result<Vec<_>, _>>()?;
        if typed {
            items = items.iter().map(yaml::without_type_meta).collect();
        }
        return yaml::list_frames(list_kind, api_version, revision, continue_token, remaining, &items)
            .map_err(ApiError::Internal);
    }
    let items = objects.iter().map(|o| object(o, representation)).collect::<Result<Vec<_>, _>>()?;
    match representation {
        Representation::Protobuf => {
            protobuf_encode::list_frames(list_kind, api_version, revision, continue_token, remaining, &items)
                .map_err(|e| ApiError::Internal(e.to_string()))
        }
        Representation::Cbor => {
            let items = if typed {
                items.iter().map(|item| cbor::without_type_meta(item).unwrap_or_else(|| item.clone())).collect()
            } else {
                items
            };
            Ok(cbor::list_frames(list_kind, api_version, revision, continue_token, remaining, &items))
        }
        _ => Err(ApiError::Internal("list_frames is for non-JSON representations".into())),
    }
}

/// One watch event's frames in a non-JSON representation: protobuf
/// (length-prefixed WatchEvent) or CBOR (one data item). `source` is the
/// cached object, whose encoding every watcher shares; `json` is used when
/// there is none (bookmarks).
pub fn watch_event(
    representation: &Representation,
    event_type: &str,
    source: Option<&CachedObject>,
    json: &[u8],
) -> Result<Vec<Bytes>, ApiError> {
    if let Representation::Metadata(metadata) = representation {
        return super::metadata::watch_event_frames(metadata, event_type, source, json);
    }
    let encoded = match source {
        Some(o) => object(o, representation)?,
        None => uncached(json, representation)?,
    };
    Ok(match representation {
        Representation::Protobuf => protobuf_encode::watch_event_frames(event_type, encoded).to_vec(),
        Representation::Cbor => cbor::watch_event_frames(event_type, &encoded).to_vec(),
        _ => return Err(ApiError::Internal("watch_event is for non-JSON representations".into())),
    })
}

/// The representation of a write's response (create, update): JSON, YAML,
/// CBOR or (built-in kinds) protobuf, or a PartialObjectMetadata; no Table.
pub fn for_write(
    head: &super::RequestHead,
    info: &crate::types::registry::ResourceInfo,
) -> Result<Representation, ApiError> {
    let builtin = protobuf_encode::has_schema(&info.api_version(), &info.kind);
    let offer = super::negotiate::Offer { table: false, ..super::negotiate::Offer::objects(builtin) };
    super::negotiate::choose(head.accept.as_deref(), offer)
}

/// A write's JSON response in `representation`: the object is encoded once,
/// for this response (what a write returns is not a cached version). As in
/// kube-apiserver, `as=PartialObjectMetadataList` is refused (406) after the
/// write, when the response is transformed.
pub async fn reencode(
    response: Response<ResponseBody>,
    representation: &Representation,
    info: &crate::types::registry::ResourceInfo,
) -> Result<Response<ResponseBody>, ApiError> {
    use http_body_util::BodyExt;
    if *representation == Representation::Json {
        return Ok(response);
    }
    if matches!(representation, Representation::Metadata(m) if m.list) {
        return Err(super::metadata::not_a_list(info));
    }
    let (mut parts, body) = response.into_parts();
    let json = body.collect().await.map_err(|e| ApiError::Internal(e.to_string()))?.to_bytes();
    let bytes = uncached(&json, representation)?;
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(representation)));
    parts.headers.remove(header::CONTENT_LENGTH);
    Ok(Response::from_parts(parts, super::full(bytes)))
}

/// Whether the request accepts gzip (`Accept-Encoding: gzip`, not `q=0`).
pub fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    accept_encoding.is_some_and(|header| {
        header.split(',').any(|part| {
            let mut pieces = part.split(';');
            let coding = pieces.next().unwrap_or("").trim();
            let refused = pieces.any(|p| {
                let p = p.trim();
                p.strip_prefix("q=").is_some_and(|q| q.trim().parse::<f32>().map(|q| q <= 0.0).unwrap_or(false))
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
    })
}

/// gzip at a fast level (kube-apiserver uses `gzip.BestSpeed`).
pub fn gzip(frames: &[Bytes]) -> Bytes {
    use std::io::Write;
    let total: usize = frames.iter().map(Bytes::len).sum();
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(total / 4), flate2::Compression::fast());
    for frame in frames {
        // Writing to a Vec cannot fail.
        let _ = encoder.write_all(frame);
    }
    Bytes::from(encoder.finish().unwrap_or_default())
}

/// A streamed body (a list without `limit`) compressed as it streams: each
/// frame goes through one gzip encoder, whose output so far is sent after it.
pub fn gzip_stream<S>(frames: S) -> impl futures_util::Stream<Item = Result<http_body::Frame<Bytes>, super::BodyError>>
where
    S: futures_util::Stream<Item = Result<http_body::Frame<Bytes>, super::BodyError>>,
{
    use futures_util::StreamExt;
    use std::io::Write;
    let encoder = std::rc::Rc::new(std::cell::RefCell::new(Some(flate2::write::GzEncoder::new(
        Vec::with_capacity(64 * 1024),
        flate2::Compression::fast(),
    ))));
    let tail_encoder = encoder.clone();
    let body = frames.filter_map(move |frame| {
        let out = match frame {
            Err(e) => Some(Err(e)),
            Ok(frame) => match frame.into_data() {
                Ok(data) => {
                    let mut slot = encoder.borrow_mut();
                    match slot.as_mut() {
                        Some(gz) => {
                            // Writing to a Vec cannot fail.
                            let _ = gz.write_all(&data);
                            let pending = std::mem::take(gz.get_mut());
                            (!pending.is_empty()).then(|| Ok(http_body::Frame::data(Bytes::from(pending))))
                        }
                        None => None,
                    }
                }
                Err(_) => None,
            },
        };
        std::future::ready(out)
    });
    let tail = futures_util::stream::iter(std::iter::once(())).filter_map(move |()| {
        let rest = tail_encoder.borrow_mut().take().and_then(|gz| gz.finish().ok());
        std::future::ready(rest.filter(|r| !r.is_empty()).map(|r| Ok(http_body::Frame::data(Bytes::from(r)))))
    });
    body.chain(tail)
}

/// A complete get or list body as a response: gzip-compressed when the client
/// accepts it and the body is larger than [`GZIP_THRESHOLD_BYTES`], else sent
/// as the frames themselves (cached bytes, not copied).
pub fn respond_frames(frames: Vec<Bytes>, content_type: &'static str, gzip_ok: bool) -> Response<ResponseBody> {
    let total: usize = frames.iter().map(Bytes::len).sum();
    let mut response = if gzip_ok && total > GZIP_THRESHOLD_BYTES {
        let mut r = Response::new(super::full(gzip(&frames)));
        r.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        r
    } else if frames.len() == 1 {
        Response::new(super::full(frames.into_iter().next().unwrap_or_default()))
    } else {
        Response::new(super::handlers::list::stream_body(frames))
    };
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_negotiation() {
        assert!(accepts_gzip(Some("gzip")));
        assert!(accepts_gzip(Some("deflate, gzip;q=0.5")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(None));
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read;
        let frames = vec![Bytes::from_static(b"hello "), Bytes::from(vec![b'x'; 200_000])];
        let compressed = gzip(&frames);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&compressed[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out.len(), 200_006);
        assert!(compressed.len() < 2_000);
    }

    #[test]
    fn every_request_shares_one_encoding_per_format() {
        let object = crate::cache::encode_stored(
            Bytes::from_static(b"/registry/configmaps/ns/a"),
            br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}"#,
            crate::log::Revision(3),
            crate::log::Revision(3),
            &[],
        )
        .unwrap();
        for representation in [Representation::Protobuf, Representation::Cbor, Representation::Yaml] {
            let first = super::object(&object, &representation).unwrap();
            let second = super::object(&object, &representation).unwrap();
            assert_eq!(first.as_ptr(), second.as_ptr(), "{representation:?}");
            // A custom resource's list (`typed` false) shares each item's
            // cached bytes; a typed CBOR or YAML list copies them without kind/apiVersion.
            let frames = list_frames(
                &representation,
                false,
                "ConfigMapList",
                "v1",
                3,
                None,
                None,
                std::slice::from_ref(&object),
            )
            .unwrap();
            if representation != Representation::Yaml {
                assert!(
                    frames.iter().any(|f| f.as_ptr() >= first.as_ptr() && f.as_ptr() < end_of(&first) && !f.is_empty()),
                    "{representation:?}: the list shares the cached item"
                );
            }
        }
        assert_eq!(super::object(&object, &Representation::Json).unwrap().as_ptr(), object.json.as_ptr());
    }

    #[test]
    fn errors_and_bookmarks_encode_in_every_watch_format() {
        let status = ApiError::Expired { message: "too old resource version: 1 (5)".into(), continue_token: None }
            .to_status_json();
        let bookmark = crate::watch::bookmark_object("ConfigMap", "v1", crate::log::Revision(9), true);
        for representation in [Representation::Protobuf, Representation::Cbor] {
            for (event_type, json, kind) in [("ERROR", &status, "Status"), ("BOOKMARK", &bookmark, "ConfigMap")] {
                let frames = watch_event(&representation, event_type, None, json).unwrap();
                let joined: Vec<u8> = frames.iter().flat_map(|f| f.to_vec()).collect();
                let object = match representation {
                    Representation::Protobuf => {
                        // Skip the length and the WatchEvent's type and object headers: the object's envelope ends the frame.
                        let start = joined.windows(4).rposition(|w| w == b"k8s\x00").unwrap();
                        serde_json::Value::Object(crate::api::protobuf::decode_object(&joined[start..], kind).unwrap())
                    }
                    _ => crate::api::cbor::decode_item(&joined).unwrap().0["object"].clone(),
                };
                let expected: serde_json::Value = serde_json::from_slice(json).unwrap();
                assert_eq!(object["kind"], expected["kind"], "{representation:?} {event_type}");
                assert_eq!(object["metadata"], expected["metadata"], "{representation:?} {event_type}");
                if kind == "Status" {
                    assert_eq!(object["code"], 410);
                    assert_eq!(object["reason"], "Expired");
                }
            }
        }
    }

    /// One past the last byte of `bytes`, as an address to compare with.
    fn end_of(bytes: &Bytes) -> *const u8 {
        bytes.as_ptr().wrapping_add(bytes.len())
    }
}
