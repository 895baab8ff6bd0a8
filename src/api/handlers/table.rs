//! `as=Table` responses (meta.k8s.io v1 and v1beta1) for get, list and watch.
//!
//! The columns and cells come from the resource's printer
//! (`types::printers`: kube-apiserver's columns for built-in types, Name +
//! Created At for the others). Each row carries, by `includeObject`, the
//! object's metadata as a PartialObjectMetadata (`Metadata`, the default),
//! the whole object (`Object`) or nothing (`None`).
//!
//! The Table's metadata carries the list's resourceVersion, continue token
//! and remainingItemCount, or the object's resourceVersion for one object.
//! A watch sends one Table with one row per event, with the column
//! definitions only in the first event's Table (later ones have
//! `columnDefinitions: null`), as kube-apiserver's watch encoder does. Like
//! kube-apiserver, BOOKMARK objects are tabulated too (one row of the
//! bookmark's metadata, its resourceVersion in the Table's metadata); ERROR
//! events keep their Status.
//!
//! Invariant: rows are computed from the cached JSON at request time with the
//! clock passed in (ages change with time, so a row is never cached); an
//! object that is not JSON gives a row of its metadata only, never a panic.

use crate::api::params::Params;
use crate::api::status::ApiError;
use crate::cache::CachedObject;
use crate::log::Revision;
use crate::types::printers::{self, TablePrinter};
use crate::types::registry::ResourceInfo;
use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::SystemTime;

/// What each row carries besides its cells (`includeObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    /// Parses `includeObject`; empty or absent is `Metadata`. An unknown
    /// value is the 400 kube-apiserver gives.
    pub fn parse(value: Option<&str>) -> Result<IncludeObject, ApiError> {
        match value.unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(ApiError::BadRequest(format!(
                "Unable to convert to Table as requested: includeObject: Unsupported value: \"{other}\": \
                 supported values: \"Metadata\", \"None\", \"Object\""
            ))),
        }
    }
}

/// One request's Table settings: the meta.k8s.io version asked for, what
/// rows carry, and the resource's printer.
pub struct TableRequest {
    pub version: String,
    pub include_object: IncludeObject,
    printer: TablePrinter,
    /// The resource, when its rows show objects converted from what is
    /// stored (`versions`): a row's object is the requested version's.
    converted: Option<ResourceInfo>,
}

impl TableRequest {
    pub fn new(version: &str, params: &Params, info: &ResourceInfo) -> Result<TableRequest, ApiError> {
        Ok(TableRequest {
            version: version.to_string(),
            include_object: IncludeObject::parse(params.include_object.as_deref())?,
            printer: match &info.custom {
                // A definition's columns were checked when it was stored.
                Some(custom) => {
                    TablePrinter::for_custom_resource(&custom.printer_columns).unwrap_or(TablePrinter::Default)
                }
                None => printers::for_resource(&info.group, &info.resource),
            },
            converted: super::versions::needs_conversion(info).then(|| info.clone()),
        })
    }

    /// With an explicit printer (custom resources, tests).
    pub fn with_printer(version: &str, include_object: IncludeObject, printer: TablePrinter) -> TableRequest {
        TableRequest { version: version.to_string(), include_object, printer, converted: None }
    }

    /// A list page's Table.
    pub fn list(
        &self,
        objects: &[Arc<CachedObject>],
        revision: Revision,
        continue_token: Option<&str>,
        remaining: Option<usize>,
        now: SystemTime,
    ) -> Bytes {
        let rows = objects.iter().map(|o| self.row(&o.json, now)).collect();
        let mut metadata = Map::new();
        metadata.insert("resourceVersion".into(), json!(revision.0.to_string()));
        if let Some(token) = continue_token {
            metadata.insert("continue".into(), json!(token));
        }
        if let Some(n) = remaining {
            metadata.insert("remainingItemCount".into(), json!(n));
        }
        self.encode(metadata, true, rows)
    }

    /// The Table of objects computed per request, not stored
    /// (componentstatuses): no resourceVersion, as kube's.
    pub fn values(&self, objects: &[Value], now: SystemTime) -> Bytes {
        let rows = objects
            .iter()
            .map(|object| self.row_of(object, &serde_json::to_vec(object).unwrap_or_default(), now))
            .collect();
        self.encode(Map::new(), true, rows)
    }

    /// One object's Table (GET): its resourceVersion in the Table's metadata.
    pub fn object(&self, object: &CachedObject, now: SystemTime) -> Bytes {
        self.single(&object.json, true, now)
    }

    /// A watch event's Table: one row; the column definitions only when
    /// `with_columns` (the first event of the watch).
    pub fn watch_event(&self, object_json: &[u8], with_columns: bool, now: SystemTime) -> Bytes {
        self.single(object_json, with_columns, now)
    }

    /// The object as the request's version shows it.
    fn served(&self, object_json: &[u8]) -> Option<Bytes> {
        let info = self.converted.as_ref()?;
        Some(super::versions::convert(info, &Bytes::copy_from_slice(object_json)))
    }

    fn single(&self, object_json: &[u8], with_columns: bool, now: SystemTime) -> Bytes {
        let served = self.served(object_json);
        let object_json = served.as_deref().unwrap_or(object_json);
        let object: Value = serde_json::from_slice(object_json).unwrap_or(Value::Null);
        let mut metadata = Map::new();
        if let Some(rv) = object.get("metadata").and_then(|m| m.get("resourceVersion")).filter(|v| v.is_string()) {
            metadata.insert("resourceVersion".into(), rv.clone());
        }
        let row = self.row_of(&object, object_json, now);
        self.encode(metadata, with_columns, vec![row])
    }

    fn row(&self, object_json: &[u8], now: SystemTime) -> Value {
        let served = self.served(object_json);
        let object_json = served.as_deref().unwrap_or(object_json);
        let object: Value = serde_json::from_slice(object_json).unwrap_or(Value::Null);
        self.row_of(&object, object_json, now)
    }

    fn row_of(&self, object: &Value, object_json: &[u8], now: SystemTime) -> Value {
        let printed = self.printer.row(object, now);
        let mut row = Map::new();
        row.insert("cells".into(), Value::Array(printed.cells));
        if !printed.conditions.is_empty() {
            row.insert("conditions".into(), Value::Array(printed.conditions));
        }
        let embedded = match self.include_object {
            IncludeObject::None => Value::Null,
            IncludeObject::Metadata => json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": format!("meta.k8s.io/{}", self.version),
                "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
            }),
            IncludeObject::Object => match serde_json::from_slice::<&serde_json::value::RawValue>(object_json) {
                Ok(raw) => serde_json::to_value(raw).unwrap_or(Value::Null),
                Err(_) => Value::Null,
            },
        };
        row.insert("object".into(), embedded);
        Value::Object(row)
    }

    fn encode(&self, metadata: Map<String, Value>, with_columns: bool, rows: Vec<Value>) -> Bytes {
        let columns = if with_columns {
            Value::Array(self.printer.columns().iter().map(|c| c.to_json()).collect())
        } else {
            Value::Null
        };
        let table = json!({
            "kind": "Table",
            "apiVersion": format!("meta.k8s.io/{}", self.version),
            "metadata": Value::Object(metadata),
            "columnDefinitions": columns,
            "rows": rows,
        });
        Bytes::from(serde_json::to_vec(&table).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// 2024-01-02T12:00:00Z.
    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_704_196_800)
    }

    fn cached(object: Value, revision: u64) -> Arc<CachedObject> {
        let bytes = serde_json::to_vec(&object).unwrap();
        crate::cache::encode_stored_slow(Bytes::from_static(b"k"), &bytes, Revision(revision), Revision(revision), &[])
            .unwrap()
    }

    fn pod(name: &str) -> Value {
        json!({
            "kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "default", "uid": "u-1", "creationTimestamp": "2024-01-02T11:55:00Z"},
            "spec": {"nodeName": "node-a", "containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.5",
                "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "state": {"running": {}}}]},
        })
    }

    fn pods_request(include: IncludeObject) -> TableRequest {
        TableRequest::with_printer("v1", include, printers::for_resource("", "pods"))
    }

    #[test]
    fn list_table_golden() {
        let objects = vec![cached(pod("web-1"), 7)];
        let body = pods_request(IncludeObject::Metadata).list(&objects, Revision(9), Some("tok"), Some(4), now());
        let table: Value = serde_json::from_slice(&body).unwrap();
        let columns: Vec<Value> = table["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| json!([c["name"], c["type"], c["format"], c["priority"]]))
            .collect();
        assert_eq!(
            columns,
            vec![
                json!(["Name", "string", "name", 0]),
                json!(["Ready", "string", "", 0]),
                json!(["Status", "string", "", 0]),
                json!(["Restarts", "string", "", 0]),
                json!(["Age", "string", "", 0]),
                json!(["IP", "string", "", 1]),
                json!(["Node", "string", "", 1]),
                json!(["Nominated Node", "string", "", 1]),
                json!(["Readiness Gates", "string", "", 1]),
            ]
        );
        assert!(table["columnDefinitions"][0]["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(table["kind"], "Table");
        assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(table["metadata"], json!({"resourceVersion": "9", "continue": "tok", "remainingItemCount": 4}));
        assert_eq!(
            table["rows"],
            json!([{
                "cells": ["web-1", "1/1", "Running", "0", "5m", "10.0.0.5", "node-a", "<none>", "<none>"],
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": {"name": "web-1", "namespace": "default", "uid": "u-1",
                                 "creationTimestamp": "2024-01-02T11:55:00Z", "resourceVersion": "7"},
                },
            }])
        );
    }

    #[test]
    fn include_object_none_object_and_v1beta1() {
        let objects = vec![cached(pod("web-1"), 7)];
        let none: Value =
            serde_json::from_slice(&pods_request(IncludeObject::None).list(&objects, Revision(9), None, None, now()))
                .unwrap();
        assert_eq!(none["rows"][0]["object"], Value::Null);
        assert_eq!(none["metadata"], json!({"resourceVersion": "9"}));
        let full: Value =
            serde_json::from_slice(&pods_request(IncludeObject::Object).list(&objects, Revision(9), None, None, now()))
                .unwrap();
        let mut expected = pod("web-1");
        expected["metadata"]["resourceVersion"] = json!("7");
        assert_eq!(full["rows"][0]["object"], expected);
        let beta = TableRequest::with_printer("v1beta1", IncludeObject::Metadata, printers::for_resource("", "pods"));
        let beta: Value = serde_json::from_slice(&beta.object(&objects[0], now())).unwrap();
        assert_eq!(beta["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(beta["rows"][0]["object"]["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(beta["metadata"], json!({"resourceVersion": "7"}));
    }

    #[test]
    fn include_object_values() {
        assert_eq!(IncludeObject::parse(None).unwrap(), IncludeObject::Metadata);
        assert_eq!(IncludeObject::parse(Some("")).unwrap(), IncludeObject::Metadata);
        assert_eq!(IncludeObject::parse(Some("None")).unwrap(), IncludeObject::None);
        assert_eq!(IncludeObject::parse(Some("Object")).unwrap(), IncludeObject::Object);
        assert!(
            matches!(IncludeObject::parse(Some("object")), Err(ApiError::BadRequest(m)) if m.contains("includeObject"))
        );
    }

    #[test]
    fn watch_event_tables_carry_columns_only_when_asked() {
        let request = pods_request(IncludeObject::Metadata);
        let json = cached(pod("web-1"), 12).json.clone();
        let first: Value = serde_json::from_slice(&request.watch_event(&json, true, now())).unwrap();
        let later: Value = serde_json::from_slice(&request.watch_event(&json, false, now())).unwrap();
        assert_eq!(first["columnDefinitions"].as_array().map(Vec::len), Some(9));
        assert_eq!(later["columnDefinitions"], Value::Null);
        assert_eq!(later["metadata"], json!({"resourceVersion": "12"}));
        assert_eq!(later["rows"].as_array().map(Vec::len), Some(1));
        assert_eq!(later["rows"][0]["cells"][0], "web-1");
        // Not JSON: a row all the same, never a panic.
        let odd: Value = serde_json::from_slice(&request.watch_event(b"\xff", false, now())).unwrap();
        assert_eq!(odd["rows"][0]["cells"][0], "");
    }

    #[test]
    fn default_table_for_other_types() {
        let request = TableRequest::with_printer(
            "v1",
            IncludeObject::Metadata,
            printers::for_resource("rbac.authorization.k8s.io", "clusterroles"),
        );
        let role = cached(json!({"metadata": {"name": "view", "creationTimestamp": "2024-01-01T00:00:00Z"}}), 3);
        let table: Value = serde_json::from_slice(&request.object(&role, now())).unwrap();
        assert_eq!(
            table["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].clone()).collect::<Vec<_>>(),
            vec![json!("Name"), json!("Created At")]
        );
        assert_eq!(table["rows"][0]["cells"], json!(["view", "2024-01-01T00:00:00Z"]));
    }
}
