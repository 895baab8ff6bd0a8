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
//! indented under `- `, then `kind` and `metadata`: items are copied, not
//! re-encoded.
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

/// A list: `apiVersion`, `items` (each cached item indented as a sequence
/// entry), `kind`, `metadata`, in the key order kubectl prints.
pub fn list_body(
    list_kind: &str,
    api_version: &str,
    revision: u64,
    continue_token: Option<&str>,
    remaining: Option<usize>,
    items: &[Bytes],
) -> Result<Bytes, String> {
    let scalar = |v: Value| encode_value(&v).map(|s| s.trim_end().to_string());
    let mut out = String::with_capacity(64 + items.iter().map(|i| i.len() + 16).sum::<usize>());
    out.push_str(&format!("apiVersion: {}\n", scalar(Value::String(api_version.into()))?));
    if items.is_empty() {
        out.push_str("items: []\n");
    } else {
        out.push_str("items:\n");
    }
    for item in items {
        let text = std::str::from_utf8(item).map_err(|e| e.to_string())?;
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
    }
    out.push_str(&format!("kind: {}\n", scalar(Value::String(list_kind.into()))?));
    let mut metadata = Map::new();
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), Value::String(token.into()));
    }
    if let Some(n) = remaining {
        metadata.insert("remainingItemCount".into(), Value::from(n as u64));
    }
    metadata.insert("resourceVersion".into(), Value::String(revision.to_string()));
    out.push_str("metadata:\n");
    for line in encode_value(&Value::Object(metadata))?.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    Ok(Bytes::from(out))
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
