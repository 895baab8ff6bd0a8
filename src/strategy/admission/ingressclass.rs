//! DefaultIngressClass: a new Ingress that names no class (neither
//! `spec.ingressClassName` nor the `kubernetes.io/ingress.class` annotation)
//! gets the default IngressClass: the one annotated
//! `ingressclass.kubernetes.io/is-default-class: "true"`; of several, the
//! newest (then the first by name).
// plugin/pkg/admission/network/defaultingressclass/admission.go: Admit, getDefaultClass

use super::{Attributes, Object, Operation};
use serde_json::json;

const IS_DEFAULT_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

pub fn applies(attributes: &Attributes, ingress: &Object) -> bool {
    attributes.operation == Operation::Create
        && attributes.group == "networking.k8s.io"
        && attributes.resource == "ingresses"
        && attributes.subresource.is_none()
        && super::field(ingress, &["spec", "ingressClassName"]).is_none()
        && super::field(ingress, &["metadata", "annotations", CLASS_ANNOTATION]).is_none()
}

pub fn admit(ingress: &mut Object, classes: &[Object]) {
    let Some(name) = super::storageclass::newest_default(classes, &[IS_DEFAULT_CLASS]) else { return };
    if let Some(spec) = super::map_mut(ingress, &["spec"]) {
        spec.insert("ingressClassName".into(), json!(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, created: &str, default: bool) -> Object {
        let annotations = if default { json!({ IS_DEFAULT_CLASS: "true" }) } else { json!({}) };
        json!({"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations}})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn an_ingress_without_a_class_gets_the_newest_default() {
        let attributes = Attributes {
            operation: Operation::Create,
            group: "networking.k8s.io",
            resource: "ingresses",
            subresource: None,
            namespace: "ns",
            name: "web",
            dry_run: false,
        };
        let mut ingress = json!({"spec": {"rules": []}}).as_object().cloned().unwrap();
        assert!(applies(&attributes, &ingress));
        let classes = [
            class("b", "2026-01-01T00:00:00Z", true),
            class("a", "2026-01-01T00:00:00Z", true),
            class("nginx", "2026-02-01T00:00:00Z", false),
        ];
        admit(&mut ingress, &classes);
        assert_eq!(ingress["spec"]["ingressClassName"], "a", "same age: first by name");
        let annotated =
            json!({"metadata": {"annotations": {CLASS_ANNOTATION: "x"}}, "spec": {}}).as_object().cloned().unwrap();
        assert!(!applies(&attributes, &annotated));
    }
}
