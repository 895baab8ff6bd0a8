//! The admission plugins of a default kube-apiserver v1.36 that change or
//! refuse objects and need no external component, as pure functions over
//! the objects the API layer reads for them (`api/handlers/admission.rs`).
//!
//! kube-apiserver runs every enabled mutating plugin, in its fixed order,
//! before the registry strategy (prepare, validate), and every validating
//! plugin after it (`pkg/kubeapiserver/options/plugins.go`:
//! `AllOrderedPlugins`; the generic REST handlers call `Admit` before
//! `store.Create`/`Update` and `Validate` inside it). [`mutate`] and
//! [`validate`] are those two passes:
//!
//! - mutating: LimitRanger, ServiceAccount, TaintNodesByCondition, Priority,
//!   DefaultTolerationSeconds, DefaultStorageClass,
//!   StorageObjectInUseProtection, RuntimeClass, DefaultIngressClass,
//!   PodTopologyLabels;
//! - validating: LimitRanger, PodSecurity, Priority (for PriorityClasses),
//!   PersistentVolumeClaimResize, RuntimeClass, ResourceQuota (which also returns the quotas whose
//!   `status.used` the API layer must write before the object).
//!
//! NamespaceLifecycle is the API layer's own check (create.rs). Which plugins
//! run is [`Plugins`], from `--enable-admission-plugins` and
//! `--disable-admission-plugins` (kube's names and semantics).
//!
//! Invariant: no I/O, no clock; every input, however malformed, gives `Ok` or
//! a [`Rejection`], never a panic. What a plugin needs that is absent (no
//! LimitRange, no PriorityClass read) changes nothing unless kube refuses it.

pub mod ingressclass;
pub mod limitranger;
pub mod nodetaint;
pub mod podsecurity;
pub mod policy;
pub mod priority;
pub mod pvcresize;
pub mod quantity;
pub mod quota;
pub mod runtimeclass;
pub mod serviceaccount;
pub mod storageclass;
pub mod storageprotection;
pub mod tolerations;
pub mod topologylabels;
pub mod webhook;

use super::{Object, Rejection};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The admission plugins Shardline implements, by kube's names, in kube's
/// order (`AllOrderedPlugins`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plugin {
    NamespaceLifecycle,
    LimitRanger,
    ServiceAccount,
    TaintNodesByCondition,
    PodSecurity,
    Priority,
    DefaultTolerationSeconds,
    DefaultStorageClass,
    StorageObjectInUseProtection,
    PersistentVolumeClaimResize,
    RuntimeClass,
    DefaultIngressClass,
    PodTopologyLabels,
    /// The admission webhooks (`webhook.rs`; called by `api/handlers/webhooks.rs`).
    MutatingAdmissionWebhook,
    /// ValidatingAdmissionPolicy (`policy.rs`; called by `api/handlers/webhooks.rs`).
    ValidatingAdmissionPolicy,
    ValidatingAdmissionWebhook,
    ResourceQuota,
}

impl Plugin {
    pub const ALL: [Plugin; 17] = [
        Plugin::NamespaceLifecycle,
        Plugin::LimitRanger,
        Plugin::ServiceAccount,
        Plugin::TaintNodesByCondition,
        Plugin::PodSecurity,
        Plugin::Priority,
        Plugin::DefaultTolerationSeconds,
        Plugin::DefaultStorageClass,
        Plugin::StorageObjectInUseProtection,
        Plugin::PersistentVolumeClaimResize,
        Plugin::RuntimeClass,
        Plugin::DefaultIngressClass,
        Plugin::PodTopologyLabels,
        Plugin::MutatingAdmissionWebhook,
        Plugin::ValidatingAdmissionPolicy,
        Plugin::ValidatingAdmissionWebhook,
        Plugin::ResourceQuota,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Plugin::NamespaceLifecycle => "NamespaceLifecycle",
            Plugin::LimitRanger => "LimitRanger",
            Plugin::ServiceAccount => "ServiceAccount",
            Plugin::TaintNodesByCondition => "TaintNodesByCondition",
            Plugin::PodSecurity => "PodSecurity",
            Plugin::Priority => "Priority",
            Plugin::DefaultTolerationSeconds => "DefaultTolerationSeconds",
            Plugin::DefaultStorageClass => "DefaultStorageClass",
            Plugin::StorageObjectInUseProtection => "StorageObjectInUseProtection",
            Plugin::PersistentVolumeClaimResize => "PersistentVolumeClaimResize",
            Plugin::RuntimeClass => "RuntimeClass",
            Plugin::DefaultIngressClass => "DefaultIngressClass",
            Plugin::PodTopologyLabels => "PodTopologyLabels",
            Plugin::MutatingAdmissionWebhook => "MutatingAdmissionWebhook",
            Plugin::ValidatingAdmissionPolicy => "ValidatingAdmissionPolicy",
            Plugin::ValidatingAdmissionWebhook => "ValidatingAdmissionWebhook",
            Plugin::ResourceQuota => "ResourceQuota",
        }
    }

    /// On unless disabled. ServiceAccount is kube's default too, but off
    /// here: it refuses every pod of a namespace without a `default`
    /// ServiceAccount, which only kube-controller-manager creates
    /// (docs/admission.md).
    pub fn default_on(self) -> bool {
        self != Plugin::ServiceAccount
    }
}

/// Every plugin name kube-apiserver v1.36 knows
/// (`pkg/kubeapiserver/options/plugins.go`: `AllOrderedPlugins`). Those
/// Shardline does not implement may be disabled (a no-op) but not enabled.
pub const KUBE_PLUGIN_NAMES: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PodGroupProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "PodGroupWorkloadExists",
    "NodeDeclaredFeatureValidator",
    "JobValidation",
    "PodResizeValidator",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// The enabled plugins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plugins {
    enabled: BTreeSet<Plugin>,
}

impl Default for Plugins {
    fn default() -> Plugins {
        Plugins { enabled: Plugin::ALL.into_iter().filter(|p| p.default_on()).collect() }
    }
}

impl Plugins {
    /// Every plugin off (tests of one plugin at a time).
    pub fn none() -> Plugins {
        Plugins { enabled: BTreeSet::new() }
    }

    pub fn only(plugins: &[Plugin]) -> Plugins {
        Plugins { enabled: plugins.iter().copied().collect() }
    }

    pub fn enabled(&self, plugin: Plugin) -> bool {
        self.enabled.contains(&plugin)
    }

    /// The enabled plugins' names, in kube's order.
    pub fn names(&self) -> Vec<&'static str> {
        Plugin::ALL.into_iter().filter(|p| self.enabled(*p)).map(Plugin::name).collect()
    }

    /// `--enable-admission-plugins` and `--disable-admission-plugins`
    /// (comma-separated; order does not matter): the default set plus the
    /// enabled minus the disabled. A name in both lists, or a name kube does
    /// not know, is an error, as in kube-apiserver; enabling a plugin of
    /// kube's that Shardline does not implement is an error too.
    // staging/src/k8s.io/apiserver/pkg/server/options/admission.go: Validate, enabledPluginNames
    pub fn from_flags(enable: &str, disable: &str) -> Result<Plugins, String> {
        let split = |text: &str| -> Vec<String> {
            text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
        };
        let (enable, disable) = (split(enable), split(disable));
        for name in enable.iter().chain(&disable) {
            if !KUBE_PLUGIN_NAMES.contains(&name.as_str()) {
                return Err(format!("admission plugin {name:?} is unknown"));
            }
        }
        let overlap: Vec<&String> = enable.iter().filter(|n| disable.contains(n)).collect();
        if !overlap.is_empty() {
            let names: Vec<&str> = overlap.iter().map(|s| s.as_str()).collect();
            return Err(format!("{names:?} in enable-admission-plugins and disable-admission-plugins overlapped"));
        }
        let by_name = |name: &str| Plugin::ALL.into_iter().find(|p| p.name() == name);
        let mut plugins = Plugins::default();
        for name in &enable {
            match by_name(name) {
                Some(p) => {
                    plugins.enabled.insert(p);
                }
                None => return Err(format!("admission plugin {name:?} is not implemented by Shardline")),
            }
        }
        for name in &disable {
            if let Some(p) = by_name(name) {
                plugins.enabled.remove(&p);
            }
        }
        Ok(plugins)
    }
}

/// `admission.Operation` (the plugins here act on create and update).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
}

/// `admission.Attributes`: what is written, where, by whom.
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    pub operation: Operation,
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: Option<&'a str>,
    pub namespace: &'a str,
    pub name: &'a str,
    /// Whether nothing will be stored (`dryRun=All`): quota usage is then
    /// checked but not recorded.
    pub dry_run: bool,
}

impl Attributes<'_> {
    fn is(&self, group: &str, resource: &str) -> bool {
        self.group == group && self.resource == resource && self.subresource.is_none()
    }
}

/// What the plugins read, by kind. The API layer reads exactly what
/// [`needs`] asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// The object's namespace (PodSecurity's labels).
    pub namespace: bool,
    /// Every PriorityClass (cluster-scoped; the default one is found by scan).
    pub priority_classes: bool,
    /// The namespace's LimitRanges.
    pub limit_ranges: bool,
    /// Every StorageClass (the default one is found by scan).
    pub storage_classes: bool,
    /// The namespace's ResourceQuotas.
    pub resource_quotas: bool,
    /// The pod's ServiceAccount, by name (`default` when it names none).
    pub service_account: Option<String>,
    /// The node a new pod is created on (PodTopologyLabels).
    pub node: Option<String>,
    /// The RuntimeClass a new pod names.
    pub runtime_class: Option<String>,
    /// Every IngressClass (the default one is found by scan).
    pub ingress_classes: bool,
    /// The pods of a namespace whose PodSecurity enforce level becomes
    /// stricter (at most `podsecurity::NAMESPACE_PODS_CHECKED_MAX`).
    pub namespace_pods: bool,
}

impl Needs {
    pub fn any(&self) -> bool {
        *self != Needs::default()
    }
}

/// The objects the API layer read, as [`needs`] asked.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub namespace: Option<Object>,
    pub priority_classes: Vec<Object>,
    pub limit_ranges: Vec<Object>,
    pub storage_classes: Vec<Object>,
    pub resource_quotas: Vec<Object>,
    pub service_account: Option<Object>,
    pub node: Option<Object>,
    pub runtime_class: Option<Object>,
    pub ingress_classes: Vec<Object>,
    pub namespace_pods: Vec<Object>,
    /// How many pods the namespace holds (more than were read, past the bound).
    pub namespace_pods_total: usize,
    /// Five random characters for a generated volume name
    /// (ServiceAccount's `kube-api-access-XXXXX`), chosen by the caller.
    pub name_suffix: String,
}

/// What a write needs read, given the enabled plugins.
pub fn needs(plugins: &Plugins, attributes: &Attributes, object: &Object, old: Option<&Object>) -> Needs {
    let pod = attributes.is("", "pods");
    let create = attributes.operation == Operation::Create;
    let mut needs = Needs {
        namespace: plugins.enabled(Plugin::PodSecurity)
            && podsecurity::applies(attributes)
            && !attributes.is("", "namespaces"),
        priority_classes: plugins.enabled(Plugin::Priority)
            && ((pod && create) || attributes.is("scheduling.k8s.io", "priorityclasses")),
        limit_ranges: plugins.enabled(Plugin::LimitRanger) && limitranger::applies(attributes),
        storage_classes: (plugins.enabled(Plugin::DefaultStorageClass) && storageclass::applies(attributes, object))
            || (plugins.enabled(Plugin::PersistentVolumeClaimResize) && pvcresize::applies(attributes, object, old)),
        resource_quotas: plugins.enabled(Plugin::ResourceQuota) && quota::applies(attributes),
        ..Needs::default()
    };
    if plugins.enabled(Plugin::ServiceAccount) && pod && create && serviceaccount::applies(object) {
        needs.service_account = Some(serviceaccount::account_name(object));
    }
    if plugins.enabled(Plugin::PodTopologyLabels) && pod && create {
        needs.node = topologylabels::node_name(object).map(str::to_string);
    }
    if plugins.enabled(Plugin::RuntimeClass) && pod && create {
        needs.runtime_class = runtimeclass::class_name(object).map(str::to_string);
    }
    needs.ingress_classes = plugins.enabled(Plugin::DefaultIngressClass) && ingressclass::applies(attributes, object);
    needs.namespace_pods = plugins.enabled(Plugin::PodSecurity)
        && attributes.is("", "namespaces")
        && old.is_some_and(|old| podsecurity::namespace_pods_check(object, old).is_some());
    needs
}

/// The result of the mutating pass, carried to the validating pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admitted {
    /// `Warning` headers for the response (PodSecurity's warn mode).
    pub warnings: Vec<String>,
    /// ResourceQuotas with their new `status.used`, to be written (each
    /// conditional on the version read) before the object is stored.
    pub quota_updates: Vec<Object>,
}

/// The mutating pass, in kube's order. `old` is the stored version on update.
pub fn mutate(
    plugins: &Plugins,
    attributes: &Attributes,
    object: &mut Object,
    old: Option<&Object>,
    inputs: &Inputs,
) -> Result<(), Rejection> {
    if plugins.enabled(Plugin::LimitRanger) && limitranger::applies(attributes) {
        limitranger::admit(attributes, object, &inputs.limit_ranges);
    }
    if plugins.enabled(Plugin::ServiceAccount) && attributes.is("", "pods") && attributes.operation == Operation::Create
    {
        serviceaccount::admit(attributes, object, inputs.service_account.as_ref(), &inputs.name_suffix)?;
    }
    if plugins.enabled(Plugin::TaintNodesByCondition)
        && attributes.is("", "nodes")
        && attributes.operation == Operation::Create
    {
        nodetaint::admit(object);
    }
    if plugins.enabled(Plugin::Priority) && attributes.is("", "pods") {
        priority::admit_pod(attributes, object, old, &inputs.priority_classes)?;
    }
    if plugins.enabled(Plugin::DefaultTolerationSeconds) && attributes.is("", "pods") {
        tolerations::admit(object);
    }
    if plugins.enabled(Plugin::DefaultStorageClass) && storageclass::applies(attributes, object) {
        storageclass::admit(object, &inputs.storage_classes);
    }
    let create = attributes.operation == Operation::Create;
    if plugins.enabled(Plugin::StorageObjectInUseProtection) && create && attributes.group.is_empty() {
        if let Some(finalizer) =
            storageprotection::finalizer_for(attributes.resource).filter(|_| attributes.subresource.is_none())
        {
            storageprotection::admit(object, finalizer);
        }
    }
    let new_pod = create && attributes.is("", "pods");
    if plugins.enabled(Plugin::RuntimeClass) && new_pod {
        runtimeclass::admit(object, inputs.runtime_class.as_ref())?;
    }
    if plugins.enabled(Plugin::DefaultIngressClass) && ingressclass::applies(attributes, object) {
        ingressclass::admit(object, &inputs.ingress_classes);
    }
    if plugins.enabled(Plugin::PodTopologyLabels) && new_pod {
        topologylabels::admit(object, inputs.node.as_ref());
    }
    Ok(())
}

/// The validating pass, in kube's order, over the object as it will be
/// stored.
pub fn validate(
    plugins: &Plugins,
    attributes: &Attributes,
    object: &Object,
    old: Option<&Object>,
    inputs: &Inputs,
) -> Result<Admitted, Rejection> {
    let mut admitted = Admitted::default();
    if plugins.enabled(Plugin::LimitRanger) && limitranger::applies(attributes) {
        limitranger::validate(attributes, object, &inputs.limit_ranges)?;
    }
    if plugins.enabled(Plugin::PodSecurity) && podsecurity::applies(attributes) {
        admitted.warnings.extend(podsecurity::validate(attributes, object, old, inputs.namespace.as_ref())?);
        let namespace_update = attributes.is("", "namespaces") && attributes.operation == Operation::Update;
        if let Some(lv) =
            old.filter(|_| namespace_update).and_then(|old| podsecurity::namespace_pods_check(object, old))
        {
            let pods = &inputs.namespace_pods;
            let total = inputs.namespace_pods_total.max(pods.len());
            admitted.warnings.extend(podsecurity::existing_pod_warnings(attributes.name, lv, pods, total));
        }
    }
    if plugins.enabled(Plugin::Priority) && attributes.is("scheduling.k8s.io", "priorityclasses") {
        priority::validate_class(attributes, object, &inputs.priority_classes)?;
    }
    if plugins.enabled(Plugin::PersistentVolumeClaimResize) && pvcresize::applies(attributes, object, old) {
        if let Some(old) = old {
            pvcresize::validate(object, old, &inputs.storage_classes)?;
        }
    }
    let new_pod = attributes.operation == Operation::Create && attributes.is("", "pods");
    if plugins.enabled(Plugin::RuntimeClass) && new_pod {
        runtimeclass::validate(object, inputs.runtime_class.as_ref())?;
    }
    if plugins.enabled(Plugin::ResourceQuota) && quota::applies(attributes) {
        admitted.quota_updates = quota::admit(attributes, object, old, &inputs.resource_quotas)?;
    }
    Ok(admitted)
}

// --- JSON helpers shared by the plugins (a missing or mistyped field reads as absent).

pub(crate) fn field<'a>(object: &'a Object, path: &[&str]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut map = object;
    for key in parents {
        map = map.get(*key)?.as_object()?;
    }
    map.get(*last)
}

pub(crate) fn text<'a>(object: &'a Object, path: &[&str]) -> &'a str {
    field(object, path).and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn text_opt<'a>(object: &'a Object, path: &[&str]) -> Option<&'a str> {
    field(object, path).and_then(Value::as_str)
}

pub(crate) fn map<'a>(object: &'a Object, path: &[&str]) -> Option<&'a Object> {
    field(object, path).and_then(Value::as_object)
}

pub(crate) fn list<'a>(object: &'a Object, path: &[&str]) -> &'a [Value] {
    field(object, path).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// The map at `path`, created (replacing a non-object) when absent; `None`
/// never happens in practice but keeps this free of panics.
pub(crate) fn map_mut<'a>(object: &'a mut Object, path: &[&str]) -> Option<&'a mut Object> {
    let mut map = object;
    for key in path {
        let entry = map.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        map = entry.as_object_mut()?;
    }
    Some(map)
}

/// The containers of a pod spec, in kube's visiting order (init containers,
/// containers, ephemeral containers), each with the list it came from.
pub(crate) fn containers(spec: &Object) -> impl Iterator<Item = (&'static str, &Object)> {
    ["initContainers", "containers", "ephemeralContainers"].into_iter().flat_map(move |kind| {
        spec.get(kind).and_then(Value::as_array).into_iter().flatten().filter_map(move |c| Some((kind, c.as_object()?)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_plugins_are_kubes_minus_service_account() {
        let plugins = Plugins::default();
        assert!(plugins.enabled(Plugin::Priority));
        assert!(plugins.enabled(Plugin::PodSecurity));
        assert!(!plugins.enabled(Plugin::ServiceAccount));
        assert_eq!(plugins.names().first(), Some(&"NamespaceLifecycle"));
    }

    #[test]
    fn flags_enable_and_disable_by_kubes_names() {
        let plugins = Plugins::from_flags("ServiceAccount", "Priority,AlwaysPullImages").unwrap();
        assert!(plugins.enabled(Plugin::ServiceAccount));
        assert!(!plugins.enabled(Plugin::Priority));
        assert!(Plugins::from_flags("Nope", "").unwrap_err().contains("unknown"));
        assert!(Plugins::from_flags("Priority", "Priority").unwrap_err().contains("overlapped"));
        assert!(Plugins::from_flags("AlwaysPullImages", "").unwrap_err().contains("not implemented"));
        assert_eq!(Plugins::from_flags("", "").unwrap(), Plugins::default());
    }

    /// Arbitrary JSON built from the field names the plugins read.
    fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let keys = prop::sample::select(vec![
            "metadata",
            "spec",
            "status",
            "name",
            "labels",
            "annotations",
            "containers",
            "initContainers",
            "ephemeralContainers",
            "resources",
            "requests",
            "limits",
            "cpu",
            "memory",
            "securityContext",
            "capabilities",
            "add",
            "drop",
            "tolerations",
            "key",
            "effect",
            "priority",
            "priorityClassName",
            "preemptionPolicy",
            "volumes",
            "hostPath",
            "ports",
            "hostPort",
            "runAsUser",
            "seccompProfile",
            "type",
            "taints",
            "finalizers",
            "nodeName",
            "overhead",
            "runtimeClassName",
            "hard",
            "used",
            "template",
            "limits",
            "default",
            "defaultRequest",
            "min",
            "max",
            "maxLimitRequestRatio",
            "value",
            "globalDefault",
            "storageClassName",
            "pod-security.kubernetes.io/enforce",
            "scopes",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[0-9a-zA-Z.+-]{0,6}".prop_map(Value::from),
            prop::sample::select(vec![
                "restricted",
                "baseline",
                "Container",
                "Pod",
                "1Gi",
                "100m",
                "NoExecute",
                "Exists",
                "true"
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec((keys.clone(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    fn as_object(value: Value) -> Object {
        match value {
            Value::Object(map) => map,
            other => [("spec".to_string(), other)].into_iter().collect(),
        }
    }

    proptest::proptest! {
        /// Whatever the object and the objects read for it, every plugin
        /// answers (Ok or a Rejection) without panicking.
        #[test]
        fn any_object_is_admitted_or_refused_without_panicking(object in arb_json(), other in arb_json(), old in arb_json()) {
            let mut all = Plugins::default();
            all.enabled.insert(Plugin::ServiceAccount);
            let other = as_object(other);
            let inputs = Inputs {
                namespace: Some(other.clone()),
                priority_classes: vec![other.clone()],
                limit_ranges: vec![other.clone()],
                storage_classes: vec![other.clone()],
                resource_quotas: vec![other.clone()],
                service_account: Some(other.clone()),
                node: Some(other.clone()),
                runtime_class: Some(other.clone()),
                ingress_classes: vec![other.clone()],
                namespace_pods: vec![other.clone()],
                namespace_pods_total: 3,
                name_suffix: "abcde".into(),
            };
            let old = as_object(old);
            for (group, resource) in [("", "pods"), ("", "nodes"), ("", "namespaces"), ("", "persistentvolumeclaims"),
                ("apps", "deployments"), ("scheduling.k8s.io", "priorityclasses"), ("networking.k8s.io", "ingresses"), ("", "services")] {
                for operation in [Operation::Create, Operation::Update] {
                    let attributes = Attributes { operation, group, resource, subresource: None, namespace: "ns", name: "x", dry_run: false };
                    let mut object = as_object(object.clone());
                    let previous = (operation == Operation::Update).then_some(&old);
                    let _ = needs(&all, &attributes, &object, previous);
                    if mutate(&all, &attributes, &mut object, previous, &inputs).is_ok() {
                        let _ = validate(&all, &attributes, &object, previous, &inputs);
                    }
                }
            }
        }
    }

    #[test]
    fn needs_follow_the_resource() {
        let plugins = Plugins::default();
        let pod = Attributes {
            operation: Operation::Create,
            group: "",
            resource: "pods",
            subresource: None,
            namespace: "ns",
            name: "p",
            dry_run: false,
        };
        let needs = needs(&plugins, &pod, &Object::new(), None);
        assert!(needs.namespace && needs.priority_classes && needs.limit_ranges && needs.resource_quotas);
        assert!(!needs.storage_classes);
        let configmap = Attributes { resource: "configmaps", ..pod };
        let needs = super::needs(&plugins, &configmap, &Object::new(), None);
        assert!(!needs.namespace && !needs.priority_classes && !needs.limit_ranges);
        assert!(needs.resource_quotas, "object counts");
    }
}
