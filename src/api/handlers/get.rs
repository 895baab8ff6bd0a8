//! GET of one object: a consistent read from the owner shard (at the log's
//! commit point, or with etcd at its current revision:
//! `Backend::consistent_revision`), answered with the cached encoding (no
//! re-serialization).

use super::table;
use super::{read_current, Resolved};
use crate::api::encode;
use crate::api::negotiate::{self, Representation};
use crate::api::status::ApiError;
use crate::api::{respond, Backend, RequestHead, ResponseBody};
use http::{Response, StatusCode};

/// The representation a read of one object is answered in (kube's Accept
/// negotiation for the resource), and the Table request when it is a Table.
pub fn object_representation(
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<(Representation, Option<table::TableRequest>), ApiError> {
    let builtin = crate::api::protobuf_encode::has_schema(&resolved.info.api_version(), &resolved.info.kind);
    let representation = negotiate::choose(head.accept.as_deref(), negotiate::Offer::objects(builtin))?;
    let table = match &representation {
        Representation::Table { version } => Some(table::TableRequest::new(version, &head.params, &resolved.info)?),
        _ => None,
    };
    Ok((representation, table))
}

pub async fn serve(
    backend: &impl Backend,
    head: &RequestHead,
    resolved: &Resolved,
) -> Result<Response<ResponseBody>, ApiError> {
    let (representation, table) = object_representation(head, resolved)?;
    let name = resolved.name.as_deref().unwrap_or("");
    let key = resolved.key(name);
    // The get table: unset = most recent (a consistent read: the log's
    // current revision, see `Backend::consistent_revision`), "0" = any (the
    // owner's current state), N = not older than N (waiting for the log to
    // reach it, then 504).
    let at = match head.params.resource_version.as_deref().filter(|v| !v.is_empty()) {
        None => backend.consistent_revision().await.map_err(super::backend_error)?,
        Some("0") => crate::log::Revision::ZERO,
        Some(text) => {
            let wanted = crate::list::parse_resource_version(text).map_err(ApiError::BadRequest)?;
            super::list::wait_for(backend, wanted).await?;
            wanted
        }
    };
    let object = read_current(backend, &key, at).await?.ok_or_else(|| ApiError::NotFound(resolved.target()))?;
    match table {
        Some(table) => Ok(respond(StatusCode::OK, "application/json", table.object(&object, backend.now()))),
        None if matches!(&representation, Representation::Metadata(m) if m.list) => {
            // As kube-apiserver's transform answers, once the object is read.
            Err(crate::api::metadata::not_a_list(&resolved.info))
        }
        None => {
            let bytes = if super::versions::needs_conversion(&resolved.info)
                && !matches!(representation, Representation::Metadata(_))
            {
                encode::uncached(&super::versions::convert(&resolved.info, &object.json), &representation)?
            } else {
                encode::object(&object, &representation)?
            };
            let gzip_ok = encode::accepts_gzip(head.accept_encoding.as_deref());
            Ok(encode::respond_frames(vec![bytes], encode::content_type(&representation), gzip_ok))
        }
    }
}
