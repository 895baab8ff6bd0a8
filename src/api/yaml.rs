//! YAML (`application/yaml`) for get and list responses and for request
//! bodies, through the serde-saphyr crate (maintained, no unsafe-code
//! advisories; serde_yaml is deprecated and serde_yml unsound).
//!
//! Output is YAML 1.1-safe: every string a YAML 1.1 reader would take for
//! something else (`yes`, `no`, `on`, `off`, `y`, `~`, `null`, `0755`,
//! `1.10`, `1e3`, `12:30`, timestamps...) is quoted, so kubectl and other
//! YAML 1.1 readers read back the strings that were written. Strings are
//! never written as folded block scalars (folding can change whitespace).
//!
//! A list is the head (`apiVersion`, `items:`), each item's cached YAML
//! list-item encoding (the document indented under `- `, built once per
//! object version like every other encoding), then `kind` and `metadata`:
//! items are shared, neither copied nor re-encoded.
//!
//! Invariant: never panics; a body that is not one YAML mapping is a 400.

use super::status::ApiError;
use bytes::Bytes;
use serde_json::{Map, Value};

pub const MEDIA_TYPE: &str = "application/yaml";

fn options() -> serde_saphyr::SerializerOptions {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = false;
    options.yaml_12 = false;
    options
}

pub fn encode_value(value: &Value) -> Result<String, String> {
    serde_saphyr::to_string_with_options(value, options()).map_err(|e| e.to_string())
}

/// The YAML document of a cached object's JSON.
pub fn encode_json(json: &[u8]) -> Result<Bytes, String> {
    let value: Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
    Ok(Bytes::from(encode_value(&value)?))
}

/// A cached object's YAML document indented as an element of a list's
/// `items:` (`- ` before its first line, two spaces before the others).
pub fn list_item(document: &[u8]) -> Result<Bytes, String> {
    let text = std::str::from_utf8(document).map_err(|e| e.to_string())?;
    let mut out = String::with_capacity(document.len() + 64);
    for (i, line) in text.lines().enumerate() {
        out.push_str(if i == 0 {
            "- "
        } else if line.is_empty() {
            ""
        } else {
            "  "
        });
        out.push_str(line);
        out.push('\n');
    }
    Ok(Bytes::from(out))
}

/// A list item (`list_item`'s form) without its top-level `kind` and
/// `apiVersion` lines: a typed list's items carry no TypeMeta, as kube's.
/// Only a top-level key starts a line with exactly two characters (`- ` or
/// two spaces) before a name; nested keys and continuation lines of block
/// scalars are indented further.
pub fn without_type_meta(item: &Bytes) -> Bytes {
    let Ok(text) = std::str::from_utf8(item) else { return item.clone() };
    let mut out = String::with_capacity(text.len());
    let mut first = true;
    for line in text.split_inclusive('\n') {
        let key = line.get(2..).unwrap_or("");
        let top_level = line.starts_with("- ") || (line.starts_with("  ") && !key.starts_with(' '));
        if top_level && (key.starts_with("kind: ") || key.starts_with("apiVersion: ")) {
            continue;
        }
        if first {
            // The item's first kept line opens the list element.
            out.push_str("- ");
            out.push_str(line.get(2..).unwrap_or(""));
            first = false;
        } else {
            out.push_str(line);
        }
    }
    Bytes::from(out)
}

/// A list page as body frames: `apiVersion` and `items:`, each item's cached
/// list-item bytes (`list_item`, shared, not copied), then `kind` and
/// `metadata`, in the key order kubectl prints.
pub fn list_frames(
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    items: &[Bytes],
) -> Result<Vec<Bytes>, String> {
    let scalar = |v: Value| encode_value(&v).map(|s| s.trim_end().to_string());
    let mut head = format!("apiVersion: {}\n", scalar(Value::String(api_version.into()))?);
    head.push_str(if items.is_empty() { "items: []\n" } else { "items:\n" });
    let mut tail = format!("kind: {}\n", scalar(Value::String(list_kind.into()))?);
    let mut metadata = Map::new();
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), Value::String(token.into()));
    }
    if let Some(n) = remaining {
        metadata.insert("remainingItemCount".into(), Value::from(n as u64));
    }
    metadata.insert("resourceVersion".into(), Value::String(revision.to_string()));
    tail.push_str("metadata:\n");
    for line in encode_value(&Value::Object(metadata))?.lines() {
        tail.push_str("  ");
        tail.push_str(line);
        tail.push('\n');
    }
    let mut frames = Vec::with_capacity(items.len() + 2);
    frames.push(Bytes::from(head));
    frames.extend(items.iter().cloned());
    frames.push(Bytes::from(tail));
    Ok(frames)
}

/// A list of YAML documents as one body (`list_frames` of their list items).
pub fn list_body(
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    documents: &[Bytes],
) -> Result<Bytes, String> {
    let items = documents.iter().map(|d| list_item(d)).collect::<Result<Vec<_>, _>>()?;
    let frames = list_frames(list_kind, api_version, revision, continue_token, remaining, &items)?;
    Ok(Bytes::from(frames.concat()))
}

/// Decodes a YAML request body (one document, a mapping) into a JSON object.
pub fn decode_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let text = std::str::from_utf8(body).map_err(|_| ApiError::BadRequest("the YAML body is not UTF-8".into()))?;
    let value: Value = serde_saphyr::from_str(text)
        .map_err(|e| ApiError::BadRequest(format!("error converting YAML to JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::BadRequest("couldn't get version/kind; the YAML body is not a mapping".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The strings YAML 1.1 readers would misread come out quoted.
    #[test]
    fn yaml_1_1_ambiguous_strings_are_quoted() {
        let risky = [
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "Yes",
            "NO",
            "true",
            "False",
            "~",
            "null",
            "Null",
            "0755",
            "1.10",
            "1e3",
            "12:30",
            "0x1f",
            ".inf",
            "-.inf",
            ".nan",
            "2026-01-02",
            "",
            " x",
            "- a",
            "a: b",
            "#c",
            "@x",
        ];
        for s in risky {
            let text = encode_value(&json!({ "v": s })).unwrap();
            let value = text.trim_end().strip_prefix("v: ").unwrap_or_else(|| panic!("{text}"));
            assert!(value.starts_with('"') || value.starts_with('\''), "{s:?} written unquoted: {text}");
        }
        let text = encode_value(&json!({"plain": "nginx", "count": 3, "b": true, "n": "x"})).unwrap();
        assert!(text.contains("plain: nginx"), "{text}");
        assert!(text.contains("count: 3") && text.contains("b: true"), "{text}");
        // Keys too: `n` is a YAML 1.1 boolean.
        assert!(text.contains("\"n\": x") || text.contains("'n': x"), "{text}");
    }

    #[test]
    fn objects_round_trip() {
        let object = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "c", "labels": {"a": "yes"}, "annotations": {"multi": "line one\nline two\n"}},
            "data": {"mode": "0755", "version": "1.10", "empty": "", "e": "1e3", "tilde": "~"},
            "list": [1, -2.5, true, null, {"x": []}, {}]});
        let text = encode_value(&object).unwrap();
        assert_eq!(Value::Object(decode_object(text.as_bytes()).unwrap()), object, "{text}");
    }

    #[test]
    fn typed_list_items_lose_only_their_top_level_kind_and_api_version() {
        let document = encode_json(
            br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","labels":{"kind":"x"}},"data":{"apiVersion":"v\n  kind: y"}}"#,
        )
        .unwrap();
        let item = list_item(&document).unwrap();
        let typed = without_type_meta(&item);
        let text = std::str::from_utf8(&typed).unwrap();
        assert!(text.starts_with("- metadata:\n"), "{text}");
        assert!(!text.contains("\n  kind: ") && !text.contains("\n  apiVersion: "), "{text}");
        let list = list_body("ConfigMapList", "v1", 7, None, None, &[document]).unwrap();
        let mut decoded = decode_object(&list).unwrap();
        let frames = list_frames("ConfigMapList", "v1", 7, None, None, &[typed]).unwrap();
        let body: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
        let typed_list = decode_object(&body).unwrap();
        let item = decoded.get_mut("items").unwrap().as_array_mut().unwrap()[0].as_object_mut().unwrap();
        item.shift_remove("kind");
        item.shift_remove("apiVersion");
        assert_eq!(typed_list["items"], decoded["items"]);
        assert_eq!(typed_list["items"][0]["metadata"]["labels"]["kind"], "x");
        assert_eq!(typed_list["items"][0]["data"]["apiVersion"], "v\n  kind: y");
    }

    #[test]
    fn lists_indent_cached_items() {
        let a = encode_json(br#"{"metadata":{"name":"a","annotations":{"m":"x\ny"}},"data":{"k":"no"}}"#).unwrap();
        let b = encode_json(br#"{"metadata":{"name":"b"},"spec":{"list":[{"p":1},{"q":[2]}]}}"#).unwrap();
        let body = list_body("ConfigMapList", "v1", 4, Some("tok"), Some(1), &[a, b]).unwrap();
        let text = std::str::from_utf8(&body).unwrap();
        let list = decode_object(&body).unwrap();
        assert_eq!(
            Value::Object(list),
            json!({"apiVersion": "v1", "kind": "ConfigMapList",
                "metadata": {"continue": "tok", "remainingItemCount": 1, "resourceVersion": "4"},
                "items": [{"metadata": {"name": "a", "annotations": {"m": "x\ny"}}, "data": {"k": "no"}},
                    {"metadata": {"name": "b"}, "spec": {"list": [{"p": 1}, {"q": [2]}]}}]}),
            "{text}"
        );
        let empty = list_body("ConfigMapList", "v1", 4, None, None, &[]).unwrap();
        assert_eq!(decode_object(&empty).unwrap()["items"], json!([]));
    }

    #[test]
    fn bad_bodies_are_400() {
        for body in [&b"- a\n- b\n"[..], b"a: [", b"\xff\xfe", b"a: 1\na: 2\n", b"just text"] {
            assert_eq!(decode_object(body).unwrap_err().code(), 400, "{:?}", String::from_utf8_lossy(body));
        }
    }
}
