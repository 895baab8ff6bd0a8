//! `as=Table` responses with the default columns kube-apiserver uses for
//! resources without printer columns: Name and Created At. Each row carries
//! the object's metadata as a PartialObjectMetadata (includeObject=Metadata).
//! Type-specific columns arrive with the representations issue.

use crate::cache::CachedObject;
use crate::log::Revision;
use bytes::Bytes;
use serde_json::{json, Value};
use std::sync::Arc;

pub fn build(version: &str, objects: &[Arc<CachedObject>], revision: Revision, continue_token: Option<&str>) -> Bytes {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let metadata = serde_json::from_slice::<Value>(&o.json)
                .ok()
                .and_then(|v| v.get("metadata").cloned())
                .unwrap_or_else(|| json!({}));
            json!({
                "cells": [o.meta.name, o.meta.creation_timestamp],
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": format!("meta.k8s.io/{version}"),
                    "metadata": metadata,
                },
            })
        })
        .collect();
    let mut metadata = serde_json::Map::new();
    metadata.insert("resourceVersion".into(), json!(revision.0.to_string()));
    if let Some(token) = continue_token {
        metadata.insert("continue".into(), json!(token));
    }
    let table = json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": Value::Object(metadata),
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0},
            {"name": "Created At", "type": "date", "format": "", "description": "", "priority": 0},
        ],
        "rows": rows,
    });
    Bytes::from(serde_json::to_vec(&table).unwrap_or_default())
}
