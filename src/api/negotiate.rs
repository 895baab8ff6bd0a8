//! Content negotiation: which representation of a response the client accepts.
//!
//! The Accept header lists media types with parameters in order of preference
//! (`application/json;as=Table;g=meta.k8s.io;v=v1, application/json`). This
//! file picks the first one the server can produce for the route, or answers
//! 406 NotAcceptable.
//!
//! Invariant: never panics on any header value.

use super::status::ApiError;

/// A representation the server can produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Representation {
    Json,
    /// `as=Table` (meta.k8s.io v1 or v1beta1).
    Table {
        version: String,
    },
    /// `as=APIGroupDiscoveryList` (apidiscovery.k8s.io v2 / v2beta1).
    AggregatedDiscovery {
        version: String,
    },
    /// `application/vnd.kubernetes.protobuf` (built-in kinds).
    Protobuf,
    /// `application/cbor`, `application/cbor-seq` for a watch.
    Cbor,
    /// `application/yaml`.
    Yaml,
    /// `as=PartialObjectMetadata` or `as=PartialObjectMetadataList`
    /// (`g=meta.k8s.io`, `v=v1` or `v1beta1`) in any wire format, for
    /// built-in and custom resources alike (`api/metadata.rs`).
    Metadata(Metadata),
}

/// A metadata-only representation: which kind the client asked for, in
/// which meta.k8s.io version, in which wire format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// `as=PartialObjectMetadataList` (a list's answer); else
    /// `as=PartialObjectMetadata` (an object's, and each watch event's).
    pub list: bool,
    /// `v1` or `v1beta1`.
    pub version: String,
    pub wire: Wire,
}

/// The wire format of a metadata-only representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    Json,
    Protobuf,
    Cbor,
    Yaml,
}

/// One media range of an Accept header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaRange {
    pub media_type: String,
    pub params: Vec<(String, String)>,
}

impl MediaRange {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub fn parse_accept(header: &str) -> Vec<MediaRange> {
    let mut ranges: Vec<(f32, usize, MediaRange)> = Vec::new();
    for (index, part) in header.split(',').enumerate() {
        let mut pieces = part.split(';');
        let media_type = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        if media_type.is_empty() {
            continue;
        }
        let mut params = Vec::new();
        let mut quality = 1.0f32;
        for p in pieces {
            let mut kv = p.splitn(2, '=');
            let k = kv.next().unwrap_or("").trim().to_string();
            let v = kv.next().unwrap_or("").trim().trim_matches('"').to_string();
            if k == "q" {
                quality = v.parse().unwrap_or(0.0);
            } else if !k.is_empty() {
                params.push((k, v));
            }
        }
        if quality > 0.0 {
            ranges.push((quality, index, MediaRange { media_type, params }));
        }
    }
    ranges.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
    ranges.into_iter().map(|(_, _, r)| r).collect()
}

fn is_json(media_type: &str) -> bool {
    matches!(media_type, "application/json" | "application/*" | "*/*")
}

/// The media types kube-apiserver names in a 406 or 415 for a built-in kind.
pub const BUILTIN_MEDIA_TYPES: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";
/// The same for a custom resource (no protobuf).
pub const CUSTOM_MEDIA_TYPES: &str = "application/json, application/yaml, application/cbor";

/// What a route can produce besides JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offer {
    /// `as=Table` (gets and lists).
    pub table: bool,
    /// `application/vnd.kubernetes.protobuf` (built-in kinds only).
    pub protobuf: bool,
    /// `application/cbor` (`application/cbor-seq` for a watch).
    pub cbor: bool,
    /// `application/yaml` (gets and lists, not watches).
    pub yaml: bool,
    /// A watch: `;stream=watch` media types are accepted too.
    pub watch: bool,
    /// `as=PartialObjectMetadata` and `as=PartialObjectMetadataList`, in
    /// JSON, protobuf (custom resources too), CBOR and (not for watches)
    /// YAML.
    pub metadata: bool,
}

impl Offer {
    /// The representations of a get or list of a resource.
    pub fn objects(builtin: bool) -> Offer {
        Offer { table: true, protobuf: builtin, cbor: true, yaml: true, watch: false, metadata: true }
    }

    /// The representations of a watch of a resource (`kubectl get -w` asks
    /// for Tables: each event then carries a one-row Table).
    pub fn watch(builtin: bool) -> Offer {
        Offer { table: true, protobuf: builtin, cbor: true, yaml: false, watch: true, metadata: true }
    }

    fn accepted(&self) -> &'static str {
        if self.protobuf {
            BUILTIN_MEDIA_TYPES
        } else {
            CUSTOM_MEDIA_TYPES
        }
    }
}

/// Chooses the representation for an object or list response: JSON or a
/// Table only (the representations every route has).
pub fn for_objects(accept: Option<&str>, table_allowed: bool) -> Result<Representation, ApiError> {
    choose(accept, Offer { table: table_allowed, ..Offer::default() })
}

/// Chooses the first representation in the Accept header's order of
/// preference that `offer` can produce; 406 NotAcceptable naming what the
/// server can produce when there is none.
pub fn choose(accept: Option<&str>, offer: Offer) -> Result<Representation, ApiError> {
    let Some(header) = accept.filter(|h| !h.trim().is_empty()) else {
        return Ok(Representation::Json);
    };
    let ranges = parse_accept(header);
    for range in &ranges {
        let stream = range.param("stream");
        if stream.is_some() && (!offer.watch || stream != Some("watch")) {
            continue;
        }
        let media = range.media_type.as_str();
        // `as`, `g` and `v` ask for another kind (kube's `Convert`): any one
        // of them, as kube-apiserver reads them.
        let converting = ["as", "g", "v"].iter().any(|p| range.param(p).is_some());
        if converting {
            if let Some(metadata) = metadata_of(range, offer) {
                return Ok(Representation::Metadata(metadata));
            }
        }
        if is_json(media) {
            match range.param("as") {
                None if !converting => return Ok(Representation::Json),
                Some("Table") if offer.table => {
                    let group_ok = range.param("g").is_none_or(|g| g == "meta.k8s.io");
                    let version = range.param("v").unwrap_or("v1");
                    if group_ok && (version == "v1" || version == "v1beta1") {
                        return Ok(Representation::Table { version: version.to_string() });
                    }
                }
                _ => {}
            }
            continue;
        }
        if converting {
            // Tables are served as JSON only; other `as=` kinds not at all.
            continue;
        }
        match media {
            "application/vnd.kubernetes.protobuf" if offer.protobuf => return Ok(Representation::Protobuf),
            "application/cbor" if offer.cbor => return Ok(Representation::Cbor),
            "application/cbor-seq" if offer.cbor && offer.watch => return Ok(Representation::Cbor),
            "application/yaml" if offer.yaml => return Ok(Representation::Yaml),
            _ => {}
        }
    }
    Err(ApiError::NotAcceptable(offer.accepted().to_string()))
}

/// The metadata-only representation a media range asks for, if the route
/// offers it: kube-apiserver's `AllowsMediaTypeTransform` allows
/// `PartialObjectMetadata` and `PartialObjectMetadataList` of group
/// `meta.k8s.io`, version `v1` or `v1beta1`, in every media type its
/// meta.k8s.io codecs have (protobuf included, for custom resources too);
/// both kinds pass negotiation on every endpoint (a list asked for one object
/// is refused later, by the handler, as kube refuses it in the transform).
fn metadata_of(range: &MediaRange, offer: Offer) -> Option<Metadata> {
    if !offer.metadata {
        return None;
    }
    let list = match range.param("as") {
        Some("PartialObjectMetadata") => false,
        Some("PartialObjectMetadataList") => true,
        _ => return None,
    };
    if range.param("g") != Some("meta.k8s.io") {
        return None;
    }
    let version = range.param("v").filter(|v| *v == "v1" || *v == "v1beta1")?;
    let wire = match range.media_type.as_str() {
        m if is_json(m) => Wire::Json,
        "application/vnd.kubernetes.protobuf" => Wire::Protobuf,
        "application/cbor" if offer.cbor => Wire::Cbor,
        "application/cbor-seq" if offer.cbor && offer.watch => Wire::Cbor,
        "application/yaml" if offer.yaml => Wire::Yaml,
        _ => return None,
    };
    Some(Metadata { list, version: version.to_string(), wire })
}

/// Chooses the representation for `/api` and `/apis`.
pub fn for_discovery(accept: Option<&str>) -> Result<Representation, ApiError> {
    let Some(header) = accept.filter(|h| !h.trim().is_empty()) else {
        return Ok(Representation::Json);
    };
    for range in parse_accept(header) {
        if !is_json(&range.media_type) {
            continue;
        }
        match range.param("as") {
            None => return Ok(Representation::Json),
            Some("APIGroupDiscoveryList") => {
                let group_ok = range.param("g") == Some("apidiscovery.k8s.io");
                let version = range.param("v").unwrap_or("");
                if group_ok && (version == "v2" || version == "v2beta1") {
                    return Ok(Representation::AggregatedDiscovery { version: version.to_string() });
                }
            }
            Some(_) => {}
        }
    }
    Err(ApiError::NotAcceptable("application/json".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_table_request() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(for_objects(Some(accept), true).unwrap(), Representation::Table { version: "v1".into() });
        assert_eq!(for_objects(Some(accept), false).unwrap(), Representation::Json);
    }

    #[test]
    fn plain_and_wildcards() {
        assert_eq!(for_objects(None, true).unwrap(), Representation::Json);
        assert_eq!(for_objects(Some("*/*"), true).unwrap(), Representation::Json);
        assert_eq!(for_objects(Some("application/json, */*"), true).unwrap(), Representation::Json);
        assert_eq!(for_objects(Some("text/html"), true).unwrap_err().code(), 406);
        assert_eq!(for_objects(Some("application/json;q=0"), true).unwrap_err().code(), 406);
    }

    #[test]
    fn formats_in_order_of_preference() {
        let builtin = Offer::objects(true);
        let custom = Offer::objects(false);
        let pb = "application/vnd.kubernetes.protobuf, application/json";
        assert_eq!(choose(Some(pb), builtin).unwrap(), Representation::Protobuf);
        assert_eq!(choose(Some(pb), custom).unwrap(), Representation::Json, "custom resources fall back to JSON");
        assert_eq!(choose(Some("application/yaml"), builtin).unwrap(), Representation::Yaml);
        assert_eq!(choose(Some("application/cbor"), custom).unwrap(), Representation::Cbor);
        assert_eq!(choose(Some("application/json;q=0.5, application/cbor"), builtin).unwrap(), Representation::Cbor);
        // kubectl's protobuf Table request falls to its JSON Table.
        let table = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
        assert_eq!(choose(Some(table), builtin).unwrap(), Representation::Table { version: "v1".into() });
        let error = choose(Some("application/vnd.kubernetes.protobuf"), custom).unwrap_err();
        assert_eq!(error.code(), 406);
        assert!(matches!(error, ApiError::NotAcceptable(ref t) if t == CUSTOM_MEDIA_TYPES));
        // Watches: stream=watch variants, cbor-seq; no YAML.
        let watch = Offer::watch(true);
        let pb_watch = "application/vnd.kubernetes.protobuf;stream=watch";
        assert_eq!(choose(Some(pb_watch), watch).unwrap(), Representation::Protobuf);
        assert_eq!(choose(Some("application/json;stream=watch"), watch).unwrap(), Representation::Json);
        assert_eq!(choose(Some("application/cbor-seq"), watch).unwrap(), Representation::Cbor);
        assert_eq!(choose(Some("application/yaml"), watch).unwrap_err().code(), 406);
        assert_eq!(choose(Some(pb_watch), builtin).unwrap_err().code(), 406, "stream=watch is for watches");
    }

    /// Each metadata-only Accept form and what it gets, as kube-apiserver's
    /// negotiation (`negotiation/negotiate.go`, `RequestScope.AllowsMediaTypeTransform`)
    /// answers it.
    #[test]
    fn metadata_only_accept_forms() {
        let meta = |list: bool, version: &str, wire: Wire| {
            Some(Representation::Metadata(Metadata { list, version: version.into(), wire }))
        };
        let client_go_list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        let client_go_object = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
        let cases: &[(&str, Offer, Option<Representation>)] = &[
            // kube-rs' list_metadata / get_metadata / watch_metadata.
            (
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                Offer::objects(true),
                meta(true, "v1", Wire::Json),
            ),
            (
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                Offer::objects(false),
                meta(false, "v1", Wire::Json),
            ),
            (
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                Offer::watch(false),
                meta(false, "v1", Wire::Json),
            ),
            // client-go's metadata client: protobuf first, for custom resources too.
            (client_go_list, Offer::objects(true), meta(true, "v1", Wire::Protobuf)),
            (client_go_list, Offer::objects(false), meta(true, "v1", Wire::Protobuf)),
            (client_go_object, Offer::watch(false), meta(false, "v1", Wire::Protobuf)),
            (
                "application/vnd.kubernetes.protobuf;stream=watch;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                Offer::watch(true),
                meta(false, "v1", Wire::Protobuf),
            ),
            // Parameter order does not matter; v1beta1 is served too.
            (
                "application/json;v=v1beta1;g=meta.k8s.io;as=PartialObjectMetadataList",
                Offer::objects(true),
                meta(true, "v1beta1", Wire::Json),
            ),
            (
                "application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                Offer::objects(true),
                meta(false, "v1", Wire::Yaml),
            ),
            (
                "application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                Offer::objects(false),
                meta(true, "v1", Wire::Cbor),
            ),
            ("*/*;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", Offer::objects(true), meta(false, "v1", Wire::Json)),
            // Both kinds pass negotiation on every endpoint: the handler refuses the wrong one.
            (
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                Offer::watch(true),
                meta(true, "v1", Wire::Json),
            ),
            // Without g and v (or with another group or version) the conversion is not allowed: 406...
            ("application/json;as=PartialObjectMetadataList", Offer::objects(true), None),
            ("application/json;as=PartialObjectMetadataList;v=v1", Offer::objects(true), None),
            ("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v2", Offer::objects(true), None),
            ("application/json;as=PartialObjectMetadataList;g=apps;v=v1", Offer::objects(true), None),
            ("application/json;as=PartialObjectMeta;g=meta.k8s.io;v=v1", Offer::objects(true), None),
            ("application/json;g=meta.k8s.io;v=v1", Offer::objects(true), None),
            // ...unless a later range is acceptable.
            (
                "application/json;as=PartialObjectMetadataList,application/json",
                Offer::objects(true),
                Some(Representation::Json),
            ),
            // No YAML stream; a route without metadata (discovery-like) skips it.
            ("application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", Offer::watch(true), None),
            (
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                Offer { table: true, ..Offer::default() },
                None,
            ),
            // q-values order the ranges.
            (
                "application/json;q=0.5,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                Offer::objects(true),
                meta(false, "v1", Wire::Json),
            ),
        ];
        for (accept, offer, expected) in cases {
            let got = choose(Some(accept), *offer);
            match expected {
                Some(representation) => assert_eq!(got.as_ref().ok(), Some(representation), "{accept} {offer:?}"),
                None => assert_eq!(got.map_err(|e| e.code()), Err(406), "{accept} {offer:?}"),
            }
        }
    }

    #[test]
    fn discovery_prefers_aggregated() {
        let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(for_discovery(Some(accept)).unwrap(), Representation::AggregatedDiscovery { version: "v2".into() });
        assert_eq!(for_discovery(Some("application/json")).unwrap(), Representation::Json);
    }
}
