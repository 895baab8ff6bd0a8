//! Validation of the kinds outside the core group, one file per API group
//! (`apps.rs`, `batch.rs`, `rbac.rs`, `coordination.rs`, `certificates.rs`,
//! `apiregistration.rs`, `storage.rs` (CSINode, CSIStorageCapacity),
//! `flowcontrol.rs`, `resource.rs` (resource.k8s.io), `admission_policies.rs`
//! (the admission policies and bindings, their CEL parsed by `cel.rs`), and
//! `admissionregistration.rs` for the webhook configurations) and what they
//! share (`common.rs`, `cron.rs`); the kinds served since issue 15 are in
//! `groups.rs` (what it leaves out is listed in docs/types.md).

mod admission_policies;
mod admissionregistration;
mod apiregistration;
mod apps;
mod batch;
mod cel;
mod certificates;
mod common;
mod coordination;
mod cron;
#[cfg(test)]
mod fixtures;
mod flowcontrol;
mod groups;
mod rbac;
mod resource;
mod storage;

use crate::strategy::Object;
use crate::types::validation::FieldError;

pub fn create(group: &str, kind: &str, object: &Object) -> Vec<FieldError> {
    match group {
        "apps" => apps::create(kind, object),
        "batch" => batch::create(kind, object),
        "rbac.authorization.k8s.io" => rbac::create(kind, object),
        "coordination.k8s.io" => coordination::create(kind, object),
        "certificates.k8s.io" if kind == "CertificateSigningRequest" => {
            certificates::certificate_signing_request(object)
        }
        "apiregistration.k8s.io" if kind == "APIService" => apiregistration::api_service(object),
        "admissionregistration.k8s.io" if kind == "ValidatingAdmissionPolicy" => {
            admission_policies::validating_admission_policy(object)
        }
        "admissionregistration.k8s.io" if kind == "ValidatingAdmissionPolicyBinding" => {
            admission_policies::validating_admission_policy_binding(object)
        }
        "admissionregistration.k8s.io" if kind == "MutatingAdmissionPolicy" => {
            admission_policies::mutating_admission_policy(object)
        }
        "admissionregistration.k8s.io" if kind == "MutatingAdmissionPolicyBinding" => {
            admission_policies::mutating_admission_policy_binding(object)
        }
        "storage.k8s.io" if kind == "CSINode" => storage::csi_node(object),
        "resource.k8s.io" => match kind {
            "DeviceClass" => resource::device_class(object),
            "ResourceClaim" => resource::resource_claim(object),
            "ResourceClaimTemplate" => resource::resource_claim_template(object),
            "ResourceSlice" => resource::resource_slice(object),
            _ => Vec::new(),
        },
        "flowcontrol.apiserver.k8s.io" if kind == "FlowSchema" => flowcontrol::flow_schema(object),
        "flowcontrol.apiserver.k8s.io" if kind == "PriorityLevelConfiguration" => {
            flowcontrol::priority_level_configuration(object)
        }
        "storage.k8s.io" if kind == "CSIStorageCapacity" => storage::csi_storage_capacity(object),
        "admissionregistration.k8s.io" if kind.ends_with("WebhookConfiguration") => {
            let mutating = kind == "MutatingWebhookConfiguration";
            admissionregistration::webhook_configuration(object, mutating, admissionregistration::Strictness::CREATE)
        }
        _ => groups::create(group, kind, object),
    }
}

pub fn update(group: &str, kind: &str, object: &Object, old: &Object, subresource: Option<&str>) -> Vec<FieldError> {
    match group {
        "apps" => apps::update(kind, object, old, subresource),
        "batch" => batch::update(kind, object, old, subresource),
        "rbac.authorization.k8s.io" => rbac::update(kind, object, old),
        "coordination.k8s.io" => coordination::create(kind, object),
        // ValidateCertificateSigningRequestUpdate and StatusUpdate (approval
        // has its own rules: strategy/subresources.rs).
        "certificates.k8s.io" if kind == "CertificateSigningRequest" => {
            certificates::certificate_signing_request_update(object, old, subresource == Some("status"))
        }
        "apiregistration.k8s.io" if kind == "APIService" => match subresource {
            None => apiregistration::api_service(object),
            // ValidateAPIServiceStatusUpdate checks only the status.
            Some(_) => apiregistration::api_service_status(object),
        },
        "resource.k8s.io" => match (kind, subresource) {
            ("DeviceClass", _) => resource::device_class(object),
            // The claim's status (its allocation) is not checked.
            ("ResourceClaim", Some(_)) => Vec::new(),
            // ValidateResourceClaimUpdate and ValidateResourceClaimTemplateUpdate
            // check only that the spec is unchanged (not its rules again).
            ("ResourceClaim" | "ResourceClaimTemplate", None) => resource::spec_immutable(object, old, kind),
            ("ResourceSlice", _) => resource::resource_slice_update(object, old),
            _ => Vec::new(),
        },
        // The policies' status (type checking results) is not checked.
        "admissionregistration.k8s.io" if kind == "ValidatingAdmissionPolicy" && subresource.is_none() => {
            admission_policies::validating_admission_policy(object)
        }
        "admissionregistration.k8s.io" if kind == "ValidatingAdmissionPolicyBinding" => {
            admission_policies::validating_admission_policy_binding(object)
        }
        "admissionregistration.k8s.io" if kind == "MutatingAdmissionPolicy" => {
            admission_policies::mutating_admission_policy(object)
        }
        "admissionregistration.k8s.io" if kind == "MutatingAdmissionPolicyBinding" => {
            admission_policies::mutating_admission_policy_binding(object)
        }
        // ValidateFlowSchemaUpdate and the status update validate the whole new object.
        "flowcontrol.apiserver.k8s.io" if kind == "FlowSchema" => flowcontrol::flow_schema(object),
        "flowcontrol.apiserver.k8s.io" if kind == "PriorityLevelConfiguration" => {
            flowcontrol::priority_level_configuration(object)
        }
        "storage.k8s.io" if kind == "CSINode" => {
            let mut errs = storage::csi_node(object);
            errs.extend(storage::csi_node_update(object, old));
            errs
        }
        "storage.k8s.io" if kind == "CSIStorageCapacity" => {
            let mut errs = storage::csi_storage_capacity(object);
            errs.extend(storage::csi_storage_capacity_update(object, old));
            errs
        }
        "admissionregistration.k8s.io" if kind.ends_with("WebhookConfiguration") && subresource.is_none() => {
            let mutating = kind == "MutatingWebhookConfiguration";
            admissionregistration::webhook_configuration(
                object,
                mutating,
                admissionregistration::Strictness::for_update(old),
            )
        }
        _ => groups::update(group, kind, object, old, subresource),
    }
}
