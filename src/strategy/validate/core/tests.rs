//! Table-driven tests of the core kinds: for each rule a minimal valid
//! object passes and the broken one gives exactly kube's causes (field,
//! reason, message), as kube-apiserver v1.36 prints them
//! (`pkg/apis/core/validation/validation.go` and `events.go`).
//! Every object kube-apiserver stored in the reference fixtures passes.

use super::{create, pod_template_spec, update};
use crate::strategy::Object;
use serde_json::{json, Value};

const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

fn object(v: Value) -> Object {
    match v {
        Value::Object(m) => m,
        _ => Object::new(),
    }
}

/// Sets the value at a JSON pointer, creating objects on the way;
/// `null` removes the field.
fn set(target: &mut Value, pointer: &str, value: Value) {
    let mut parts: Vec<&str> = pointer.split('/').skip(1).collect();
    let Some(last) = parts.pop() else { return };
    let mut cur = target;
    for part in parts {
        cur = match cur {
            Value::Array(a) => match part.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(v) => v,
                None => return,
            },
            Value::Object(o) => o.entry(part.to_string()).or_insert_with(|| json!({})),
            _ => return,
        };
    }
    match cur {
        Value::Object(o) if value.is_null() => {
            o.remove(last);
        }
        Value::Object(o) => {
            o.insert(last.to_string(), value);
        }
        Value::Array(a) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *slot = value;
            }
        }
        _ => {}
    }
}

/// The causes as the Status shows them: (reason, "field: message").
fn causes(errs: &[crate::types::validation::FieldError]) -> Vec<(String, String)> {
    errs.iter().map(|e| (e.reason.cause_reason().to_string(), e.to_string())).collect()
}

fn expect(label: &str, errs: Vec<crate::types::validation::FieldError>, want: &[(&str, &str)]) {
    let got = causes(&errs);
    let want: Vec<(String, String)> = want.iter().map(|(r, m)| (r.to_string(), m.to_string())).collect();
    assert_eq!(got, want, "{label}");
}

fn pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

/// One case: a label, the edits (JSON pointer, value), the causes.
type Case<'a> = (&'a str, Vec<(&'a str, Value)>, Vec<(&'a str, &'a str)>);

fn run_create(kind: &str, base: fn() -> Value, cases: Vec<Case>) {
    expect(&format!("{kind} base"), create(kind, &object(base())), &[]);
    for (label, edits, want) in cases {
        let mut v = base();
        for (pointer, value) in edits {
            set(&mut v, pointer, value);
        }
        expect(label, create(kind, &object(v)), &want);
    }
}

const REQ: &str = "FieldValueRequired";
const INV: &str = "FieldValueInvalid";
const DUP: &str = "FieldValueDuplicate";
const UNS: &str = "FieldValueNotSupported";
const FOR: &str = "FieldValueForbidden";
const NF: &str = "FieldValueNotFound";

#[test]
fn pod_spec_rules() {
    let cases = vec![
        // validateContainers: at least one container.
        ("no containers", vec![("/spec/containers", json!([]))], vec![(REQ, "spec.containers: Required value")]),
        // validateContainerCommon: DNS-1123 label names, image required.
        (
            "bad container name",
            vec![("/spec/containers/0/name", json!("Web_1"))],
            vec![(INV, "spec.containers[0].name: Invalid value: \"Web_1\": LABEL")],
        ),
        ("no image", vec![("/spec/containers/0/image", Value::Null)], vec![(REQ, "spec.containers[0].image: Required value")]),
        // validateInitContainers: names unique across containers and init containers.
        (
            "init container reuses a name",
            vec![("/spec/initContainers", json!([{"name": "c", "image": "busybox"}]))],
            vec![(DUP, "spec.initContainers[0].name: Duplicate value: \"c\"")],
        ),
        (
            "two containers, one name",
            vec![("/spec/containers/1", json!(null)), ("/spec/containers", json!([{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]))],
            vec![(DUP, "spec.containers[1].name: Duplicate value: \"c\"")],
        ),
        // validateContainerPorts.
        (
            "containerPort 0",
            vec![("/spec/containers/0/ports", json!([{"containerPort": 0}]))],
            vec![(REQ, "spec.containers[0].ports[0].containerPort: Required value")],
        ),
        (
            "containerPort out of range",
            vec![("/spec/containers/0/ports", json!([{"containerPort": 70000, "protocol": "TCP"}]))],
            vec![(INV, "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive")],
        ),
        (
            "hostPort out of range",
            vec![("/spec/containers/0/ports", json!([{"containerPort": 80, "hostPort": -1}]))],
            vec![(INV, "spec.containers[0].ports[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive")],
        ),
        (
            "unsupported protocol",
            vec![("/spec/containers/0/ports", json!([{"containerPort": 80, "protocol": "HTTP"}]))],
            vec![(UNS, "spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"")],
        ),
        (
            "port name not IANA_SVC_NAME",
            vec![("/spec/containers/0/ports", json!([{"name": "http_1", "containerPort": 80}]))],
            vec![(INV, "spec.containers[0].ports[0].name: Invalid value: \"http_1\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")],
        ),
        (
            "port names unique",
            vec![("/spec/containers/0/ports", json!([{"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}]))],
            vec![(DUP, "spec.containers[0].ports[1].name: Duplicate value: \"http\"")],
        ),
        (
            "host ports unique across containers",
            vec![("/spec/containers", json!([
                {"name": "a", "image": "a", "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]},
                {"name": "b", "image": "b", "ports": [{"containerPort": 81, "hostPort": 8080, "protocol": "TCP"}]}]))],
            vec![(DUP, "spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\"")],
        ),
        (
            "hostNetwork needs hostPort == containerPort",
            vec![("/spec/hostNetwork", json!(true)), ("/spec/containers/0/ports", json!([{"containerPort": 80, "hostPort": 81}]))],
            vec![(INV, "spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is true")],
        ),
        (
            "hostNetwork with hostPort 0 (defaulted)",
            vec![("/spec/hostNetwork", json!(true)), ("/spec/containers/0/ports", json!([{"containerPort": 80, "hostPort": 0}]))],
            vec![],
        ),
        // ValidateEnv, validateEnvVarValueFrom, ValidateEnvFrom.
        (
            "env name with =",
            vec![("/spec/containers/0/env", json!([{"name": "A=B", "value": "x"}]))],
            vec![(INV, "spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='")],
        ),
        ("env without name", vec![("/spec/containers/0/env", json!([{"value": "x"}]))], vec![(REQ, "spec.containers[0].env[0].name: Required value")]),
        (
            "env valueFrom empty",
            vec![("/spec/containers/0/env", json!([{"name": "A", "valueFrom": {}}]))],
            vec![(INV, "spec.containers[0].env[0].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`")],
        ),
        // validateFileKeySelector and validateFileKeyRefVolumes (EnvFiles is
        // on, beta since v1.35).
        (
            "env fileKeyRef fields and volume",
            vec![
                ("/spec/volumes", json!([{"name": "cfg", "configMap": {"name": "m"}}])),
                ("/spec/containers/0/env", json!([
                    {"name": "A", "valueFrom": {"fileKeyRef": {"key": "A=B", "volumeName": "Cfg", "path": "../x"}}},
                    {"name": "B", "valueFrom": {"fileKeyRef": {"key": "B", "volumeName": "missing", "path": "env"}}},
                    {"name": "C", "valueFrom": {"fileKeyRef": {"key": "C", "volumeName": "cfg", "path": "env"}}},
                ])),
            ],
            vec![
                (INV, "spec.containers[0].env[0].valueFrom.fileKeyRef.key: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='"),
                (INV, "spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Invalid value: \"Cfg\": LABEL"),
                (INV, "spec.containers[0].env[0].valueFrom.fileKeyRef.path: Invalid value: \"../x\": must not contain '..'"),
                (NF, "spec.containers[0].env[0].valueFrom.fileKeyRef.volumeName: Not found: \"Cfg\""),
                (NF, "spec.containers[0].env[1].valueFrom.fileKeyRef.volumeName: Not found: \"missing\""),
                (INV, "spec.containers[0].env[2].valueFrom.fileKeyRef.volumeName: Invalid value: \"cfg\": referenced volume must be of type emptyDir"),
            ],
        ),
        (
            "env fieldRef unsupported",
            vec![("/spec/containers/0/env", json!([{"name": "A", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.restartPolicy"}}}]))],
            vec![(UNS, "spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: \"spec.restartPolicy\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\"")],
        ),
        (
            "env fieldRef subscripts",
            vec![("/spec/containers/0/env", json!([
                {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName['x']"}}}]))],
            vec![(INV, "spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: Invalid value: \"spec.nodeName['x']\": error converting fieldPath: field label does not support subscript: spec.nodeName['x']")],
        ),
        (
            "envFrom without source",
            vec![("/spec/containers/0/envFrom", json!([{"prefix": "P_"}]))],
            vec![(INV, "spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`")],
        ),
        // ValidateVolumeMounts.
        (
            "mount of an unknown volume",
            vec![("/spec/containers/0/volumeMounts", json!([{"name": "data", "mountPath": "/d"}]))],
            vec![(NF, "spec.containers[0].volumeMounts[0].name: Not found: \"data\"")],
        ),
        (
            "mountPath required and unique",
            vec![
                ("/spec/volumes", json!([{"name": "data", "emptyDir": {}}])),
                ("/spec/containers/0/volumeMounts", json!([{"name": "data", "mountPath": "/d"}, {"name": "data", "mountPath": "/d"}, {"name": "data"}])),
            ],
            vec![
                (INV, "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/d\": must be unique"),
                (REQ, "spec.containers[0].volumeMounts[2].mountPath: Required value"),
            ],
        ),
        // ValidateVolumes / validateVolumeSource.
        (
            "two volume sources",
            vec![("/spec/volumes", json!([{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]))],
            vec![(FOR, "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type")],
        ),
        (
            "no volume source",
            vec![("/spec/volumes", json!([{"name": "v"}]))],
            vec![(REQ, "spec.volumes[0]: Required value: must specify a volume type")],
        ),
        (
            "volume names unique",
            vec![("/spec/volumes", json!([{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]))],
            vec![(DUP, "spec.volumes[1].name: Duplicate value: \"v\"")],
        ),
        (
            "secret volume without secretName, bad mode",
            vec![("/spec/volumes", json!([{"name": "v", "secret": {"defaultMode": 1024}}]))],
            vec![
                (REQ, "spec.volumes[0].secret.secretName: Required value"),
                (INV, "spec.volumes[0].secret.defaultMode: Invalid value: 1024: must be a number between 0 and 0777 (octal), both inclusive"),
            ],
        ),
        // validateRestartPolicy, validateDNSPolicy.
        (
            "restartPolicy",
            vec![("/spec/restartPolicy", json!("Sometimes"))],
            vec![(UNS, "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"")],
        ),
        (
            "dnsPolicy",
            vec![("/spec/dnsPolicy", json!("Cluster"))],
            vec![(UNS, "spec.dnsPolicy: Unsupported value: \"Cluster\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"")],
        ),
        (
            "dns searches and nameservers",
            vec![("/spec/dnsConfig", json!({"nameservers": ["1.1.1.1", "8.8.8.x"], "searches": ["_srv.example.com.", "Bad.example", "."]}))],
            vec![
                (INV, "spec.dnsConfig.nameservers[1]: Invalid value: \"8.8.8.x\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
                (INV, "spec.dnsConfig.searches[1]: Invalid value: \"Bad.example\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')"),
            ],
        ),
        (
            "dnsPolicy None needs dnsConfig",
            vec![("/spec/dnsPolicy", json!("None"))],
            vec![(REQ, "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None")],
        ),
        // validateResourceRequirements.
        (
            "request above limit",
            vec![("/spec/containers/0/resources", json!({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}))],
            vec![(INV, "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1")],
        ),
        (
            "negative quantity",
            vec![("/spec/containers/0/resources", json!({"requests": {"memory": "-1"}}))],
            vec![(INV, "spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or equal to 0")],
        ),
        (
            "non-standard resource",
            vec![("/spec/containers/0/resources", json!({"limits": {"foo": "1"}}))],
            vec![
                (INV, "spec.containers[0].resources.limits[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified"),
                (INV, "spec.containers[0].resources.limits[foo]: Invalid value: \"foo\": must be a standard resource for containers"),
            ],
        ),
        (
            "extended resources are whole numbers",
            vec![("/spec/containers/0/resources", json!({"requests": {"example.com/gpu": "500m"}, "limits": {"example.com/gpu": "500m"}}))],
            vec![
                (INV, "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"500m\", Format:\"DecimalSI\"}: must be an integer"),
                (INV, "spec.containers[0].resources.requests[example.com/gpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"500m\", Format:\"DecimalSI\"}: must be an integer"),
            ],
        ),
        (
            "extended resource without limit",
            vec![("/spec/containers/0/resources", json!({"requests": {"example.com/gpu": "1"}}))],
            vec![(REQ, "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources")],
        ),
        // validateProbe / validateHandler / validateLivenessProbe.
        (
            "probe without handler",
            vec![("/spec/containers/0/livenessProbe", json!({"periodSeconds": 5}))],
            vec![(REQ, "spec.containers[0].livenessProbe: Required value: must specify a handler type")],
        ),
        (
            "probe with two handlers, negative delay, successThreshold 2",
            vec![("/spec/containers/0/livenessProbe", json!({"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}, "initialDelaySeconds": -1, "successThreshold": 2}))],
            vec![
                (FOR, "spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"),
                (INV, "spec.containers[0].livenessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0"),
                (INV, "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"),
            ],
        ),
        (
            "httpGet port name",
            vec![("/spec/containers/0/readinessProbe", json!({"httpGet": {"path": "/", "port": "Web"}}))],
            vec![(INV, "spec.containers[0].readinessProbe.httpGet.port: Invalid value: \"Web\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")],
        ),
        (
            "init container probes need restartPolicy Always",
            vec![("/spec/initContainers", json!([{"name": "i", "image": "b", "livenessProbe": {"exec": {"command": ["x"]}}}]))],
            vec![(FOR, "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always")],
        ),
        // validateContainerRestartPolicy, validateInitContainerRestartPolicy
        // (ContainerRestartRules is on, beta since v1.35).
        ("restartPolicy on a regular container", vec![("/spec/containers/0/restartPolicy", json!("Never"))], vec![]),
        (
            "container restart rules",
            vec![
                ("/spec/containers/0/restartPolicy", json!("Sometimes")),
                ("/spec/containers/0/restartPolicyRules", json!([
                    {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}},
                    {"action": "Explode", "exitCodes": {"operator": "Above", "values": [1]}},
                    {"action": "Restart"},
                ])),
            ],
            vec![
                (UNS, "spec.containers[0].restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\", \"OnFailure\""),
                (UNS, "spec.containers[0].restartPolicyRules[1].action: Unsupported value: \"Explode\": supported values: \"Restart\""),
                (UNS, "spec.containers[0].restartPolicyRules[1].exitCodes.operator: Unsupported value: \"Above\": supported values: \"In\", \"NotIn\""),
                (REQ, "spec.containers[0].restartPolicyRules[2].exitCodes: Required value: must be specified"),
            ],
        ),
        (
            "restart rules without a restartPolicy",
            vec![("/spec/containers/0/restartPolicyRules", json!([{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}]))],
            vec![(REQ, "spec.containers[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used")],
        ),
        (
            "init containers' restart policies",
            vec![("/spec/initContainers", json!([
                {"name": "once", "image": "b", "restartPolicy": "OnFailure"},
                {"name": "side", "image": "b", "restartPolicy": "Always",
                 "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}]},
                {"name": "odd", "image": "b", "restartPolicy": "Sometimes"},
            ]))],
            vec![
                (FOR, "spec.initContainers[1].restartPolicyRules: Forbidden: restartPolicyRules are not allowed for init containers with restart policy Always"),
                (UNS, "spec.initContainers[2].restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\", \"OnFailure\""),
            ],
        ),
        // ValidateSecurityContext: no privilege escalation with privileged
        // or CAP_SYS_ADMIN; the context printed as Go prints the struct.
        (
            "allowPrivilegeEscalation false with privileged and CAP_SYS_ADMIN",
            vec![("/spec/containers/0/securityContext", json!({
                "allowPrivilegeEscalation": false, "privileged": true, "capabilities": {"add": ["CAP_SYS_ADMIN"]}}))],
            vec![
                (INV, "spec.containers[0].securityContext: Invalid value: core.SecurityContext{Capabilities:(*core.Capabilities)(...), Privileged:(*bool)(...), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(...), ProcMount:(*core.ProcMountType)(nil), SeccompProfile:(*core.SeccompProfile)(nil), AppArmorProfile:(*core.AppArmorProfile)(nil)}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"),
                (INV, "spec.containers[0].securityContext: Invalid value: core.SecurityContext{Capabilities:(*core.Capabilities)(...), Privileged:(*bool)(...), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(...), ProcMount:(*core.ProcMountType)(nil), SeccompProfile:(*core.SeccompProfile)(nil), AppArmorProfile:(*core.AppArmorProfile)(nil)}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"),
            ],
        ),
        // ValidateSecurityContext: Unmasked /proc needs a user namespace.
        (
            "procMount Unmasked in the host's user namespace",
            vec![("/spec/containers/0/securityContext", json!({"procMount": "Unmasked"}))],
            vec![(INV, "spec.containers[0].securityContext.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`")],
        ),
        (
            "procMount Unmasked in a user namespace",
            vec![("/spec/hostUsers", json!(false)), ("/spec/containers/0/securityContext", json!({"procMount": "Unmasked"}))],
            vec![],
        ),
        // ValidateVolumes: a Pod's ephemeral volume creates the claim
        // `<pod>-<volume>`, which no persistentVolumeClaim volume may name,
        // and whose name must be valid.
        (
            "claim created by an ephemeral volume",
            vec![("/spec/volumes", json!([
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "p-scratch"}},
            ]))],
            vec![(INV, "spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: \"p-scratch\": must not reference a PVC that gets created for an ephemeral volume")],
        ),
        (
            "ephemeral claim name too long",
            vec![
                ("/metadata/name", json!("p".repeat(250))),
                ("/spec/volumes", json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}])),
            ],
            vec![(INV, &*Box::leak(format!("spec.volumes[0].name: Invalid value: \"scratch\": PVC name \"{}-scratch\": must be no more than 253 characters", "p".repeat(250)).into_boxed_str()))],
        ),
        // ValidatePersistentVolumeClaimTemplate: the template's metadata
        // (annotations, labels, nothing else) and its claim spec.
        (
            "ephemeral volume claim template",
            vec![("/spec/volumes", json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
                "metadata": {"name": "x", "uid": "u", "labels": {"a": "b c"}, "finalizers": []},
                "spec": {"accessModes": ["ReadWriteSometimes"]},
            }}}]))],
            vec![
                (INV, "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.labels: Invalid value: \"b c\": LABELVALUE"),
                (FOR, "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set"),
                (FOR, "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.uID: Forbidden: cannot be set"),
                (FOR, "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.finalizers: Forbidden: cannot be set"),
                (UNS, "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""),
                (REQ, "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value"),
            ],
        ),
        // validatePodHostName (HostnameOverride is on, beta since v1.35).
        (
            "hostnameOverride",
            vec![
                ("/spec/hostnameOverride", json!(format!("Host{}", "a".repeat(61)))),
                ("/spec/setHostnameAsFQDN", json!(true)),
                ("/spec/hostNetwork", json!(true)),
            ],
            vec![
                (FOR, "spec.hostnameOverride: Forbidden: may not be specified when setHostnameAsFQDN is true"),
                (FOR, "spec.hostnameOverride: Forbidden: may not be specified when hostNetwork is true"),
                ("FieldValueTooLong", "spec.hostnameOverride: Too long: may not be more than 64 bytes"),
                (INV, &*Box::leak(format!("spec.hostnameOverride: Invalid value: \"Host{}\": {}", "a".repeat(61), crate::types::validation::is_dns1123_subdomain(&format!("Host{}", "a".repeat(61)))[0]).into_boxed_str())),
            ],
        ),
        // ValidateLabels on nodeSelector.
        (
            "nodeSelector value",
            vec![("/spec/nodeSelector", json!({"disk": "-ssd"}))],
            vec![(INV, "spec.nodeSelector: Invalid value: \"-ssd\": LABELVALUE")],
        ),
        // ValidateTolerations.
        (
            "toleration operator",
            vec![("/spec/tolerations", json!([{"key": "k", "operator": "Foo"}]))],
            vec![(UNS, "spec.tolerations[0].operator: Unsupported value: \"Foo\": supported values: \"Equal\", \"Exists\"")],
        ),
        (
            "toleration without key must be Exists",
            vec![("/spec/tolerations", json!([{"operator": "Equal", "value": "v"}]))],
            vec![(INV, "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"")],
        ),
        (
            "tolerationSeconds needs NoExecute; Exists takes no value; effect values",
            vec![("/spec/tolerations", json!([
                {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule", "tolerationSeconds": 5},
                {"key": "k", "operator": "Exists", "value": "v"},
                {"key": "k", "operator": "Exists", "effect": "Never"}]))],
            vec![
                (INV, "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"),
                (INV, "spec.tolerations[1].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"),
                (UNS, "spec.tolerations[2].effect: Unsupported value: \"Never\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""),
            ],
        ),
        // ValidateSecurityContext, validatePodSpecSecurityContext.
        (
            "runAsUser out of range",
            vec![("/spec/containers/0/securityContext", json!({"runAsUser": -1})), ("/spec/securityContext", json!({"fsGroup": -2}))],
            vec![
                (INV, "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive"),
                (INV, "spec.securityContext.fsGroup: Invalid value: -2: must be between 0 and 2147483647, inclusive"),
            ],
        ),
        // ValidatePodSpec scalars, ValidatePodCreate.
        (
            "activeDeadlineSeconds",
            vec![("/spec/activeDeadlineSeconds", json!(0))],
            vec![(INV, "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive")],
        ),
        (
            "ephemeral containers on create",
            vec![("/spec/ephemeralContainers", json!([{"name": "debug", "image": "busybox"}]))],
            vec![(FOR, "spec.ephemeralContainers: Forbidden: cannot be set on create")],
        ),
        // ValidatePodSpecificAnnotations.
        (
            "deletion cost",
            vec![("/metadata/annotations", json!({"controller.kubernetes.io/pod-deletion-cost": "+10"}))],
            vec![(INV, "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: \"+10\": must be a 32bit integer")],
        ),
        (
            "mirror pod without node",
            vec![("/metadata/annotations", json!({"kubernetes.io/config.mirror": "x"}))],
            vec![(INV, "metadata.annotations[kubernetes.io/config.mirror]: Invalid value: \"x\": must set spec.nodeName if mirror pod annotation is set")],
        ),
        // validateHostUsers, validatePodResources, validateLinux.
        (
            "user namespace with host network",
            vec![("/spec/hostNetwork", json!(true)), ("/spec/hostUsers", json!(false))],
            vec![(FOR, "spec.hostNetwork: Forbidden: when `hostUsers` is false")],
        ),
        (
            "user namespace with a volume device",
            vec![
                ("/spec/hostUsers", json!(false)),
                ("/spec/volumes", json!([{"name": "blk", "persistentVolumeClaim": {"claimName": "b"}}])),
                ("/spec/containers/0/volumeDevices", json!([{"name": "blk", "devicePath": "/dev/xvda"}])),
            ],
            vec![(FOR, "spec.containers[0].volumeDevices: Forbidden: when `hostUsers` is false")],
        ),
        (
            "pod-level claims",
            vec![("/spec/resources", json!({"claims": [{"name": "gpu"}]}))],
            vec![(FOR, "spec.resources.claims: Forbidden: claims may not be set for Resources at pod-level")],
        ),
        (
            "pod-level resources in a windows pod",
            vec![("/spec/os", json!({"name": "windows"})), ("/spec/resources", json!({"requests": {"cpu": "1", "pods": "1"}}))],
            vec![(FOR, "spec.resources: Forbidden: may not be set for a windows pod")],
        ),
        (
            "pod-level resources",
            vec![("/spec/resources", json!({"requests": {"cpu": "2", "pods": "1"}, "limits": {"cpu": "1"}}))],
            vec![
                (INV, "spec.resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"),
                (UNS, "spec.resources.requests[pods]: Unsupported value: \"pods\": supported values: \"cpu\", \"hugepages-\", \"memory\""),
            ],
        ),
        (
            "windows options in a linux pod",
            vec![("/spec/os", json!({"name": "linux"})), ("/spec/containers/0/securityContext", json!({"windowsOptions": {"runAsUserName": "u"}}))],
            vec![(FOR, "spec.containers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod")],
        ),
        (
            "linux settings in a windows pod",
            vec![
                ("/spec/os", json!({"name": "windows"})),
                ("/spec/hostPID", json!(true)),
                ("/spec/securityContext", json!({"runAsUser": 1000})),
                ("/spec/containers/0/securityContext", json!({"privileged": false})),
            ],
            vec![
                (FOR, "spec.hostPID: Forbidden: cannot be set for a windows pod"),
                (FOR, "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod"),
                (FOR, "spec.containers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod"),
            ],
        ),
        (
            "image whitespace",
            vec![("/spec/containers/0/image", json!(" nginx"))],
            vec![(INV, "spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing whitespace")],
        ),
    ];
    let cases = cases
        .into_iter()
        .map(|(l, e, w)| {
            let w: Vec<(&str, String)> = w
                .into_iter()
                .map(|(r, m)| (r, m.replace("LABELVALUE", LABEL_VALUE_MSG).replace("LABEL", LABEL_MSG)))
                .collect();
            (l, e, w)
        })
        .collect::<Vec<_>>();
    expect("pod base", create("Pod", &object(pod())), &[]);
    for (label, edits, want) in cases {
        let mut v = pod();
        for (pointer, value) in edits {
            set(&mut v, pointer, value);
        }
        let want: Vec<(&str, &str)> = want.iter().map(|(r, m)| (*r, m.as_str())).collect();
        expect(label, create("Pod", &object(v)), &want);
    }
}

#[test]
fn pod_update_rules() {
    // ValidatePodUpdate: images may change, most of the spec may not.
    let old = pod();
    let mut new = pod();
    set(&mut new, "/spec/containers/0/image", json!("nginx:2"));
    expect("image change", update("Pod", &object(new), &object(old.clone()), None), &[]);

    let mut new = pod();
    set(&mut new, "/spec/restartPolicy", json!("Never"));
    let errs = update("Pod", &object(new), &object(old.clone()), None);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec");
    assert_eq!(errs[0].reason.cause_reason(), FOR);
    assert!(errs[0].body().starts_with("Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"), "{}", errs[0].body());
    assert!(errs[0].body().contains("spec.restartPolicy"));

    let mut new = pod();
    set(&mut new, "/spec/containers", json!([{"name": "c", "image": "nginx"}, {"name": "d", "image": "x"}]));
    expect(
        "add a container",
        update("Pod", &object(new), &object(old.clone()), None),
        &[(FOR, "spec.containers: Forbidden: pod updates may not add or remove containers")],
    );

    let mut with_deadline = pod();
    set(&mut with_deadline, "/spec/activeDeadlineSeconds", json!(10));
    let mut longer = with_deadline.clone();
    set(&mut longer, "/spec/activeDeadlineSeconds", json!(20));
    expect(
        "deadline may only shrink",
        update("Pod", &object(longer), &object(with_deadline.clone()), None),
        &[(INV, "spec.activeDeadlineSeconds: Invalid value: 20: must be less than or equal to previous value")],
    );

    let mut tolerating = pod();
    set(
        &mut tolerating,
        "/spec/tolerations",
        json!([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]),
    );
    let mut added = tolerating.clone();
    set(
        &mut added,
        "/spec/tolerations",
        json!([
        {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
        {"key": "j", "operator": "Exists"}]),
    );
    expect("tolerations added, seconds changed", update("Pod", &object(added), &object(tolerating.clone()), None), &[]);
    let mut modified = tolerating.clone();
    set(&mut modified, "/spec/tolerations/0/key", json!("other"));
    expect(
        "toleration modified",
        update("Pod", &object(modified), &object(tolerating), None),
        &[(FOR, "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds")],
    );

    // ValidatePodSpecificAnnotationUpdates.
    let mut mirrored = pod();
    set(&mut mirrored, "/metadata/annotations", json!({"kubernetes.io/config.mirror": "x"}));
    set(&mut mirrored, "/spec/nodeName", json!("n"));
    let mut unmirrored = mirrored.clone();
    set(&mut unmirrored, "/metadata/annotations", json!({}));
    expect(
        "mirror annotation removed",
        update("Pod", &object(unmirrored), &object(mirrored), None),
        &[(FOR, "metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not remove or update mirror pod annotation")],
    );

    // ValidatePodStatusUpdate: the spec is the old one's (kube's status
    // strategy copies it), the status is checked.
    let mut bound = pod();
    set(&mut bound, "/spec/nodeName", json!("node-a"));
    set(
        &mut bound,
        "/status",
        json!({"podIPs": [{"ip": "10.0.0.300"}], "conditions": [{"type": "example.com/Ready ok"}]}),
    );
    let errs = update("Pod", &object(bound), &object(old), Some("status"));
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert_eq!(errs[1].to_string(), "status.podIPs[0]: Invalid value: \"10.0.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
    assert_eq!(errs[0].field, "metadata.conditions[0].Type");
}

#[test]
fn pod_template_rules() {
    let template = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Sometimes", "ephemeralContainers": [{"name": "e", "image": "x"}]}});
    expect(
        "template",
        pod_template_spec(&template, "spec.template"),
        &[
            (UNS, "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""),
            (FOR, "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template"),
        ],
    );
    let bad_label =
        json!({"metadata": {"labels": {"app": "-x"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
    let errs = pod_template_spec(&bad_label, "spec.template");
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.template.labels");
    // A template's hostPort 0 with hostNetwork is left for the pod's defaulting.
    let host = json!({"spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 0}]}]}});
    expect("template hostNetwork", pod_template_spec(&host, "spec.template"), &[]);
}

fn service() -> Value {
    json!({"metadata": {"name": "s", "namespace": "ns"}, "spec": {"ports": [{"port": 80, "protocol": "TCP"}], "selector": {"app": "web"}, "type": "ClusterIP", "sessionAffinity": "None"}})
}

#[test]
fn service_rules() {
    run_create("Service", service, vec![
        ("no ports", vec![("/spec/ports", json!([]))], vec![(REQ, "spec.ports: Required value")]),
        ("headless needs no ports", vec![("/spec/ports", json!([])), ("/spec/clusterIP", json!("None"))], vec![]),
        ("port 0", vec![("/spec/ports/0/port", json!(0))], vec![(INV, "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive")]),
        (
            "names required with two ports",
            vec![("/spec/ports", json!([{"port": 80}, {"port": 81}]))],
            vec![(REQ, "spec.ports[0].name: Required value"), (REQ, "spec.ports[1].name: Required value")],
        ),
        (
            "names unique",
            vec![("/spec/ports", json!([{"name": "http", "port": 80}, {"name": "http", "port": 81}]))],
            vec![(DUP, "spec.ports[1].name: Duplicate value: \"http\"")],
        ),
        (
            "same port and protocol twice",
            vec![("/spec/ports", json!([{"name": "a", "port": 80}, {"name": "b", "port": 80}]))],
            vec![(DUP, "spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}")],
        ),
        (
            "protocol",
            vec![("/spec/ports/0/protocol", json!("HTTP"))],
            vec![(UNS, "spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"")],
        ),
        (
            "targetPort",
            vec![("/spec/ports/0/targetPort", json!(70000))],
            vec![(INV, "spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive")],
        ),
        ("targetPort 0 is defaulted to the port", vec![("/spec/ports/0/targetPort", json!(0)), ("/spec/ports/0/protocol", json!(""))], vec![]),
        (
            "type",
            vec![("/spec/type", json!("Internal"))],
            vec![(UNS, "spec.type: Unsupported value: \"Internal\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"")],
        ),
        (
            "nodePort on ClusterIP",
            vec![("/spec/ports/0/nodePort", json!(30080))],
            vec![(FOR, "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'")],
        ),
        ("nodePort on NodePort", vec![("/spec/type", json!("NodePort")), ("/spec/ports/0/nodePort", json!(30080))], vec![]),
        (
            "ExternalName needs externalName",
            vec![("/spec/type", json!("ExternalName"))],
            vec![(REQ, "spec.externalName: Required value")],
        ),
        ("ExternalName", vec![("/spec/type", json!("ExternalName")), ("/spec/externalName", json!("db.example.com."))], vec![]),
        (
            "sessionAffinity",
            vec![("/spec/sessionAffinity", json!("Sticky"))],
            vec![(UNS, "spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\"")],
        ),
        (
            "ClientIP affinity timeout",
            vec![("/spec/sessionAffinity", json!("ClientIP")), ("/spec/sessionAffinityConfig", json!({"clientIP": {"timeoutSeconds": 0}}))],
            vec![(INV, "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400")],
        ),
        (
            "sessionAffinityConfig with None",
            vec![("/spec/sessionAffinityConfig", json!({"clientIP": {"timeoutSeconds": 10}}))],
            vec![(FOR, "spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None")],
        ),
        (
            "selector",
            vec![("/spec/selector", json!({"app": "-web"}))],
            vec![(INV, "spec.selector: Invalid value: \"-web\": LABELVALUE")],
        ),
        (
            "ipFamilies and ipFamilyPolicy",
            vec![("/spec/ipFamilies", json!(["IPv5"])), ("/spec/ipFamilyPolicy", json!("DualStack"))],
            vec![
                (UNS, "spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\""),
                (UNS, "spec.ipFamilyPolicy: Unsupported value: \"DualStack\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\""),
            ],
        ),
        (
            "cluster IP not an IP",
            vec![("/spec/clusterIP", json!("10.0.0.500"))],
            vec![(INV, "spec.clusterIPs[0]: Invalid value: \"10.0.0.500\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")],
        ),
        (
            "cluster IP of the wrong family",
            vec![("/spec/clusterIP", json!("10.0.0.5")), ("/spec/clusterIPs", json!(["10.0.0.5"])), ("/spec/ipFamilies", json!(["IPv6"]))],
            vec![(INV, "spec.clusterIPs[0]: Invalid value: \"10.0.0.5\": expected an IPv6 value as indicated by `ipFamilies[0]`")],
        ),
    ]
    .into_iter()
    .map(|(l, e, w)| (l, e, w.into_iter().map(|(r, m): (&str, &str)| (r, &*Box::leak(m.replace("LABELVALUE", LABEL_VALUE_MSG).into_boxed_str()))).collect()))
    .collect());

    // ValidateServiceUpdate: cluster IPs may not change once set.
    let mut old = service();
    set(&mut old, "/spec/clusterIP", json!("10.0.0.1"));
    set(&mut old, "/spec/clusterIPs", json!(["10.0.0.1"]));
    let mut moved = old.clone();
    set(&mut moved, "/spec/clusterIP", json!("10.0.0.2"));
    set(&mut moved, "/spec/clusterIPs", json!(["10.0.0.2"]));
    expect(
        "clusterIP change",
        update("Service", &object(moved), &object(old.clone()), None),
        &[(INV, "spec.clusterIPs[0]: Invalid value: []string{\"10.0.0.2\"}: may not change once set")],
    );
    // A PUT without the allocated IP keeps it.
    expect("clusterIP omitted", update("Service", &object(service()), &object(old.clone()), None), &[]);
    expect("unchanged", update("Service", &object(old.clone()), &object(old), None), &[]);
}

fn config_map() -> Value {
    json!({"metadata": {"name": "cm", "namespace": "ns"}, "data": {"a.yaml": "x: 1"}, "binaryData": {"b.bin": "AAE="}})
}

#[test]
fn config_map_rules() {
    let big = "x".repeat(1024 * 1024);
    run_create(
        "ConfigMap",
        config_map,
        vec![
            (
                "bad key",
                vec![("/data/a b", json!("x"))],
                vec![(
                    INV,
                    Box::leak(format!("data[a b]: Invalid value: \"a b\": {KEY_MSG}").into_boxed_str()) as &str,
                )],
            ),
            (
                "dot-dot key",
                vec![("/data/..", json!("x"))],
                vec![(INV, "data[..]: Invalid value: \"..\": must not be '..'")],
            ),
            (
                "key in data and binaryData",
                vec![("/data/b.bin", json!("x"))],
                vec![(INV, "data[b.bin]: Invalid value: \"b.bin\": duplicate of key present in binaryData")],
            ),
            (
                "over 1 MiB",
                vec![("/data/big", json!(big))],
                vec![("FieldValueTooLong", ": Too long: may not be more than 1048576 bytes")],
            ),
        ],
    );
    // ValidateConfigMapUpdate: immutable freezes data, binaryData, immutable.
    let mut frozen = config_map();
    set(&mut frozen, "/immutable", json!(true));
    let mut changed = frozen.clone();
    set(&mut changed, "/data/a.yaml", json!("x: 2"));
    expect(
        "immutable data",
        update("ConfigMap", &object(changed), &object(frozen.clone()), None),
        &[(FOR, "data: Forbidden: field is immutable when `immutable` is set")],
    );
    let mut thawed = frozen.clone();
    set(&mut thawed, "/immutable", json!(false));
    expect(
        "immutable unset",
        update("ConfigMap", &object(thawed), &object(frozen.clone()), None),
        &[(FOR, "immutable: Forbidden: field is immutable when `immutable` is set")],
    );
    let mut labelled = frozen.clone();
    set(&mut labelled, "/metadata/labels", json!({"a": "b"}));
    expect("immutable, metadata changes", update("ConfigMap", &object(labelled), &object(frozen), None), &[]);
    let mut mutable = config_map();
    set(&mut mutable, "/data/a.yaml", json!("x: 2"));
    expect("mutable data", update("ConfigMap", &object(mutable), &object(config_map()), None), &[]);
}

fn secret() -> Value {
    json!({"metadata": {"name": "s", "namespace": "ns"}, "type": "Opaque", "data": {"k": "dg=="}})
}

#[test]
fn secret_rules() {
    run_create("Secret", secret, vec![
        (
            "tls without keys",
            vec![("/type", json!("kubernetes.io/tls"))],
            vec![(REQ, "data[tls.crt]: Required value"), (REQ, "data[tls.key]: Required value")],
        ),
        ("tls", vec![("/type", json!("kubernetes.io/tls")), ("/data", json!({"tls.crt": "", "tls.key": ""}))], vec![]),
        (
            "basic-auth without keys",
            vec![("/type", json!("kubernetes.io/basic-auth"))],
            vec![(REQ, "data[username]: Required value"), (REQ, "data[password]: Required value")],
        ),
        ("basic-auth with a username", vec![("/type", json!("kubernetes.io/basic-auth")), ("/data/username", json!("YQ=="))], vec![]),
        (
            "dockerconfigjson missing",
            vec![("/type", json!("kubernetes.io/dockerconfigjson"))],
            vec![(REQ, "data[.dockerconfigjson]: Required value")],
        ),
        (
            "dockerconfigjson not JSON",
            vec![("/type", json!("kubernetes.io/dockerconfigjson")), ("/data/.dockerconfigjson", json!("eHl6"))],
            vec![(INV, "data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character 'x' looking for beginning of value")],
        ),
        (
            "service-account-token without its annotation",
            vec![("/type", json!("kubernetes.io/service-account-token"))],
            vec![(REQ, "metadata.annotations[kubernetes.io/service-account.name]: Required value")],
        ),
        (
            "bad key",
            vec![("/data/a b", json!("eA=="))],
            vec![(INV, Box::leak(format!("data[a b]: Invalid value: \"a b\": {KEY_MSG}").into_boxed_str()) as &str)],
        ),
    ]);
    let mut tls = secret();
    set(&mut tls, "/type", json!("kubernetes.io/tls"));
    set(&mut tls, "/data", json!({"tls.crt": "", "tls.key": ""}));
    let mut tls_old = tls.clone();
    set(&mut tls_old, "/type", json!("Opaque"));
    expect(
        "type is immutable",
        update("Secret", &object(tls), &object(tls_old), None),
        &[(INV, "type: Invalid value: \"kubernetes.io/tls\": field is immutable")],
    );
    let mut frozen = secret();
    set(&mut frozen, "/immutable", json!(true));
    let mut changed = frozen.clone();
    set(&mut changed, "/data/k", json!("dw=="));
    expect(
        "immutable secret",
        update("Secret", &object(changed), &object(frozen), None),
        &[(FOR, "data: Forbidden: field is immutable when `immutable` is set")],
    );
}

fn claim() -> Value {
    json!({"metadata": {"name": "c", "namespace": "ns"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem"}})
}

#[test]
fn claim_rules() {
    run_create("PersistentVolumeClaim", claim, vec![
        (
            "no access modes",
            vec![("/spec/accessModes", json!([]))],
            vec![(REQ, "spec.accessModes: Required value: at least 1 access mode is required")],
        ),
        (
            "unknown access mode",
            vec![("/spec/accessModes", json!(["ReadWriteSometimes"]))],
            vec![(UNS, "spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"")],
        ),
        (
            "ReadWriteOncePod alone",
            vec![("/spec/accessModes", json!(["ReadWriteOncePod", "ReadWriteOnce"]))],
            vec![(FOR, "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes")],
        ),
        (
            "selector",
            vec![("/spec/selector", json!({"matchExpressions": [{"key": "tier", "operator": "In"}, {"key": "a", "operator": "Near", "values": ["x"]}]}))],
            vec![
                (REQ, "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
                (INV, "spec.selector.matchExpressions[1].operator: Invalid value: \"Near\": not a valid selector operator"),
            ],
        ),
        ("no storage request", vec![("/spec/resources", json!({}))], vec![(REQ, "spec.resources[storage]: Required value")]),
        (
            "zero storage",
            vec![("/spec/resources/requests/storage", json!("0"))],
            vec![(INV, "spec.resources[storage]: Invalid value: \"0\": must be greater than zero")],
        ),
    ]);
    // ValidatePersistentVolumeClaimUpdate.
    let old = claim();
    let mut modes = claim();
    set(&mut modes, "/spec/accessModes", json!(["ReadWriteMany"]));
    let errs = update("PersistentVolumeClaim", &object(modes), &object(old.clone()), None);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec");
    assert!(errs[0].body().starts_with("Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"));
    let mut bound_old = claim();
    set(&mut bound_old, "/spec/volumeName", json!("pv-1"));
    set(&mut bound_old, "/status", json!({"phase": "Bound", "capacity": {"storage": "1Gi"}}));
    let mut grown = bound_old.clone();
    set(&mut grown, "/spec/resources/requests/storage", json!("2Gi"));
    expect(
        "bound claim grows",
        update("PersistentVolumeClaim", &object(grown.clone()), &object(bound_old.clone()), None),
        &[],
    );
    let mut shrunk = bound_old.clone();
    set(&mut shrunk, "/spec/resources/requests/storage", json!("512Mi"));
    expect(
        "bound claim shrinks below capacity",
        update("PersistentVolumeClaim", &object(shrunk), &object(bound_old), None),
        &[(FOR, "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity")],
    );
    let mut unbound_grown = claim();
    set(&mut unbound_grown, "/spec/resources/requests/storage", json!("2Gi"));
    let errs = update("PersistentVolumeClaim", &object(unbound_grown), &object(old.clone()), None);
    assert_eq!(errs.len(), 1, "{errs:?}");
    // ValidatePersistentVolumeClaimStatusUpdate.
    let mut no_modes = claim();
    set(&mut no_modes, "/spec/accessModes", json!([]));
    set(&mut no_modes, "/status", json!({"phase": "Bound", "capacity": {"storage": "-1Gi"}}));
    expect(
        "claim status",
        update("PersistentVolumeClaim", &object(no_modes), &object(claim()), Some("status")),
        &[
            (REQ, "Spec.accessModes: Required value"),
            (INV, "status.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity"),
        ],
    );
    let mut named = claim();
    set(&mut named, "/spec/volumeName", json!("pv-1"));
    expect("volumeName set once", update("PersistentVolumeClaim", &object(named), &object(old), None), &[]);
}

fn volume() -> Value {
    json!({"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/pv"}, "persistentVolumeReclaimPolicy": "Retain"}})
}

#[test]
fn persistent_volume_rules() {
    run_create("PersistentVolume", volume, vec![
        ("no source", vec![("/spec/hostPath", Value::Null)], vec![(REQ, "spec: Required value: must specify a volume type")]),
        (
            "two sources",
            vec![("/spec/nfs", json!({"server": "nfs", "path": "/x"}))],
            vec![(FOR, "spec.nfs: Forbidden: may not specify more than 1 volume type")],
        ),
        (
            "reclaim policy",
            vec![("/spec/persistentVolumeReclaimPolicy", json!("Keep"))],
            vec![(UNS, "spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\"")],
        ),
        ("no access modes", vec![("/spec/accessModes", json!([]))], vec![(REQ, "spec.accessModes: Required value")]),
        (
            "negative capacity",
            vec![("/spec/capacity/storage", json!("-1500m"))],
            vec![
                (INV, "spec.capacity[storage]: Invalid value: -2: must be a valid resource quantity"),
                (INV, "spec.capacity[storage]: Invalid value: \"-1500m\": must be greater than zero"),
            ],
        ),
        (
            "local needs node affinity",
            vec![("/spec/hostPath", Value::Null), ("/spec/local", json!({"path": "/mnt/disk"}))],
            vec![(REQ, "spec.nodeAffinity: Required value: Local volume requires node affinity")],
        ),
    ]);
    let mut moved = volume();
    set(&mut moved, "/spec/hostPath/path", json!("/tmp/other"));
    let errs = update("PersistentVolume", &object(moved), &object(volume()), None);
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].to_string(),
        "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n- spec.hostPath.path: \"/tmp/pv\"\n+ spec.hostPath.path: \"/tmp/other\""
    );
}

#[test]
fn namespace_node_event_endpoints_rules() {
    let ns = json!({"metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes", "foo"]}});
    expect(
        "namespace finalizer",
        create("Namespace", &object(ns)),
        &[(INV, "spec.finalizers: Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified")],
    );
    let active = json!({"metadata": {"name": "a"}, "status": {"phase": "Terminating"}});
    expect(
        "namespace status phase",
        update("Namespace", &object(active.clone()), &object(active), Some("status")),
        &[(INV, "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty")],
    );

    let node = json!({"metadata": {"name": "n"}, "spec": {"podCIDRs": ["10.244.0.0/24"], "taints": [{"key": "k", "effect": "NoSchedule"}]}});
    expect("node", create("Node", &object(node.clone())), &[]);
    let bad = json!({"metadata": {"name": "n"}, "spec": {"podCIDRs": ["bad"], "taints": [{"key": "k"}, {"key": "j", "effect": "NoSchedule"}, {"key": "j", "effect": "NoSchedule"}]}});
    expect(
        "node podCIDRs and taints",
        create("Node", &object(bad)),
        &[
            (REQ, "metadata.taints[0].effect: Required value"),
            (DUP, "metadata.taints[2]: Duplicate value: core.Taint{Key:\"j\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"),
            (INV, "spec.podCIDRs[0]: Invalid value: \"bad\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
        ],
    );
    let singular = json!({"metadata": {"name": "n"}, "spec": {"podCIDR": "10.0.0.0/33"}});
    expect(
        "node podCIDR read as podCIDRs",
        create("Node", &object(singular)),
        &[(INV, "spec.podCIDRs[0]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")],
    );
    let mut moved = node.clone();
    set(&mut moved, "/spec/podCIDRs", json!(["10.245.0.0/24"]));
    expect(
        "node podCIDR change",
        update("Node", &object(moved), &object(node.clone()), None),
        &[(FOR, "spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid")],
    );
    let mut unschedulable = node.clone();
    set(&mut unschedulable, "/spec/unschedulable", json!(true));
    expect("node cordon", update("Node", &object(unschedulable), &object(node), None), &[]);

    let event = json!({"metadata": {"name": "e", "namespace": "ns"}, "involvedObject": {"kind": "Pod", "namespace": "other", "name": "p"}, "reason": "R"});
    expect(
        "event namespace",
        create("Event", &object(event)),
        &[(INV, "involvedObject.namespace: Invalid value: \"other\": does not match event.namespace")],
    );
    let cluster_event =
        json!({"metadata": {"name": "e", "namespace": "default"}, "involvedObject": {"kind": "Node", "name": "n"}});
    expect("event for a cluster object", create("Event", &object(cluster_event)), &[]);

    let endpoints = json!({"metadata": {"name": "s", "namespace": "ns"}, "subsets": [{"ports": [{"port": 80}]}, {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 80}, {"port": 81}]}]});
    expect(
        "endpoints",
        create("Endpoints", &object(endpoints)),
        &[
            (REQ, "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"),
            (INV, "subsets[1].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"),
            (REQ, "subsets[1].ports[0].name: Required value"),
            (REQ, "subsets[1].ports[1].name: Required value"),
        ],
    );
}

#[test]
fn finalizer_rules() {
    let cm = json!({"metadata": {"name": "c", "finalizers": ["example.com/keep", "kubernetes", "foo"]}});
    expect(
        "non-standard finalizer",
        create("ConfigMap", &object(cm.clone())),
        &[(INV, "metadata.finalizers[2]: Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified")],
    );
    expect(
        "on update too",
        update("ConfigMap", &object(cm.clone()), &object(cm), None),
        &[(INV, "metadata.finalizers[2]: Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified")],
    );
    let both = json!({"metadata": {"name": "c", "finalizers": ["orphan", "foregroundDeletion"]}});
    expect(
        "orphan and foreground",
        create("Secret", &object(both)),
        &[(INV, "metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set")],
    );
}

/// Every core object kube-apiserver v1.36 accepted and stored in the
/// reference fixtures is valid here too, on create and as an unchanged
/// update; so is every pod template of the workloads.
#[test]
fn fixtures_kube_accepted_are_valid() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kube-v1.36/lists");
    let kinds = [
        ("core_v1_pods.json", "Pod"),
        ("core_v1_services.json", "Service"),
        ("core_v1_configmaps.json", "ConfigMap"),
        ("core_v1_secrets.json", "Secret"),
        ("core_v1_namespaces.json", "Namespace"),
        ("core_v1_nodes.json", "Node"),
        ("core_v1_events.json", "Event"),
        ("core_v1_persistentvolumes.json", "PersistentVolume"),
        ("core_v1_persistentvolumeclaims.json", "PersistentVolumeClaim"),
        ("core_v1_serviceaccounts.json", "ServiceAccount"),
        ("core_v1_endpoints.json", "Endpoints"),
    ];
    let mut checked = 0;
    for (file, kind) in kinds {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("fixture");
        let list: Value = serde_json::from_str(&text).expect("json");
        for item in list.get("items").and_then(Value::as_array).cloned().unwrap_or_default() {
            let o = object(item);
            expect(&format!("{kind} create"), create(kind, &o), &[]);
            expect(&format!("{kind} update"), update(kind, &o, &o, None), &[]);
            checked += 1;
        }
    }
    for file in [
        "apps_v1_deployments.json",
        "apps_v1_statefulsets.json",
        "apps_v1_daemonsets.json",
        "apps_v1_replicasets.json",
        "batch_v1_jobs.json",
    ] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("fixture");
        let list: Value = serde_json::from_str(&text).expect("json");
        for item in list.get("items").and_then(Value::as_array).cloned().unwrap_or_default() {
            let template = item.pointer("/spec/template").cloned().unwrap_or(Value::Null);
            expect(file, pod_template_spec(&template, "spec.template"), &[]);
            checked += 1;
        }
    }
    assert!(checked >= 25, "{checked}");
}

#[test]
fn malformed_input_never_panics() {
    let odd = [
        json!(null),
        json!(1),
        json!("x"),
        json!([]),
        json!({"spec": 1}),
        json!({"spec": {"containers": "oops"}}),
        json!({"spec": {"containers": [1, null, {"ports": "x", "resources": {"limits": {"cpu": 1}}}], "volumes": [{"name": 1}]}}),
        json!({"data": [1], "binaryData": 2, "spec": {"ports": [{"port": "x", "targetPort": true}], "clusterIPs": [1]}}),
    ];
    for kind in [
        "Pod",
        "Service",
        "ConfigMap",
        "Secret",
        "Node",
        "Namespace",
        "Event",
        "Endpoints",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "PodTemplate",
    ] {
        for v in &odd {
            let o = object(v.clone());
            let _ = create(kind, &o);
            let _ = update(kind, &o, &o, None);
            let _ = update(kind, &o, &Object::new(), Some("status"));
        }
    }
    for v in &odd {
        let _ = pod_template_spec(v, "spec.template");
    }
}

/// A deterministic generator of odd values placed at field paths the
/// validators read: whatever the shapes, validation returns, never panics.
#[test]
fn random_shapes_never_panic() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let leaves = [
        json!(null),
        json!(0),
        json!(-1),
        json!(70000),
        json!(1.5),
        json!(-9.0e30),
        json!(true),
        json!(""),
        json!(".."),
        json!("-1"),
        json!("1e999"),
        json!("9999999999999999999999999999999999999999Ei"),
        json!("-9999999999999999999999999999999999999999Ei"),
        json!("-9223372036854775808"),
        json!("None"),
        json!("::1"),
        json!("a/b/c"),
        json!([]),
        json!([""]),
        json!({}),
        json!({"": ""}),
        json!([1, "x", null]),
    ];
    let paths = [
        "/spec/containers/0/ports",
        "/spec/containers/0/ports/0/containerPort",
        "/spec/containers/0/resources/limits/cpu",
        "/spec/containers/0/resources/requests",
        "/spec/containers/0/env/0",
        "/spec/containers/0/livenessProbe",
        "/spec/containers/0/livenessProbe/httpGet/port",
        "/spec/containers/0/volumeMounts",
        "/spec/volumes",
        "/spec/volumes/0/projected/sources",
        "/spec/tolerations",
        "/spec/affinity/nodeAffinity",
        "/spec/dnsConfig",
        "/spec/securityContext/sysctls",
        "/spec/ports",
        "/spec/ports/0/targetPort",
        "/spec/clusterIPs",
        "/spec/clusterIP",
        "/spec/ipFamilies",
        "/spec/capacity/storage",
        "/spec/resources/requests/storage",
        "/spec/podCIDRs",
        "/spec/taints",
        "/data",
        "/binaryData/k",
        "/type",
        "/subsets",
        "/subsets/0/addresses",
        "/spec/topologySpreadConstraints",
        "/spec/selector",
        "/status/loadBalancer/ingress",
        "/spec/activeDeadlineSeconds",
        "/spec/containers/0/lifecycle/preStop/sleep/seconds",
        "/spec/terminationGracePeriodSeconds",
    ];
    let kinds = [
        "Pod",
        "Service",
        "ConfigMap",
        "Secret",
        "Node",
        "Namespace",
        "Event",
        "Endpoints",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "PodTemplate",
    ];
    let bases = [pod(), service(), config_map(), secret(), claim(), volume()];
    for round in 0..3000u64 {
        let pick = |n: usize, r: u64| (r % n as u64) as usize;
        let mut v = bases[pick(bases.len(), next())].clone();
        let mut old = v.clone();
        for _ in 0..(1 + next() % 4) {
            set(&mut v, paths[pick(paths.len(), next())], leaves[pick(leaves.len(), next())].clone());
            set(&mut old, paths[pick(paths.len(), next())], leaves[pick(leaves.len(), next())].clone());
        }
        let (o, p) = (object(v.clone()), object(old));
        for kind in kinds {
            let _ = create(kind, &o);
            let _ = update(kind, &o, &p, None);
            let _ = update(kind, &o, &p, Some("status"));
        }
        if round % 10 == 0 {
            let _ = pod_template_spec(&v, "spec.template");
        }
    }
}

/// events.k8s.io/v1 writes (kube's `ValidateEventCreate`/`Update` with
/// that request version), on the stored core form: a new-style event
/// passes; the strict rules; every field but the series immutable, shown
/// as Go's `%v` prints each (`%#v` for structs, `time.Time.String`).
#[test]
fn events_k8s_io_events_are_validated_strictly() {
    use super::{served_as_create, served_as_update};
    let event = json!({"metadata": {"name": "e.1", "namespace": "ns"}, "eventTime": "2026-11-25T12:00:00.000000Z",
        "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p", "apiVersion": "v1"},
        "reason": "Started", "message": "m", "source": {}, "firstTimestamp": null, "lastTimestamp": null,
        "type": "Normal", "action": "Started", "reportingComponent": "example.com/c", "reportingInstance": "c-1"});
    expect("new-style event", served_as_create("events.k8s.io", "Event", &object(event.clone())), &[]);
    let mut strict = event.clone();
    set(&mut strict, "/type", json!("Odd"));
    set(&mut strict, "/count", json!(2));
    set(&mut strict, "/firstTimestamp", json!("2026-11-25T12:00:00Z"));
    set(&mut strict, "/series", json!({"count": 1}));
    expect(
        "strict create",
        served_as_create("events.k8s.io", "Event", &object(strict)),
        &[
            ("FieldValueInvalid", "series.count: Invalid value: \"\": should be at least 2"),
            ("FieldValueRequired", "series.lastObservedTime: Required value"),
            ("FieldValueInvalid", "type: Invalid value: \"\": has invalid value: Odd"),
            ("FieldValueInvalid", "firstTimestamp: Invalid value: \"\": needs to be unset"),
            ("FieldValueInvalid", "count: Invalid value: \"\": needs to be unset"),
        ],
    );
    let mut changed = event.clone();
    set(&mut changed, "/involvedObject/name", json!("q"));
    set(&mut changed, "/eventTime", json!("2026-11-25T12:00:01.500000Z"));
    set(&mut changed, "/related", json!({"kind": "Node", "name": "n"}));
    expect(
        "immutable fields",
        served_as_update("events.k8s.io", "Event", &object(changed), &object(event.clone())),
        &[
            (
                "FieldValueInvalid",
                "involvedObject: Invalid value: core.ObjectReference{Kind:\"Pod\", Namespace:\"ns\", Name:\"q\", UID:\"\", \
                 APIVersion:\"v1\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable",
            ),
            ("FieldValueInvalid", "eventTime: Invalid value: 2026-11-25 12:00:01.5 +0000 UTC: field is immutable"),
            (
                "FieldValueInvalid",
                "related: Invalid value: core.ObjectReference{Kind:\"Node\", Namespace:\"\", Name:\"n\", UID:\"\", \
                 APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable",
            ),
        ],
    );
    // A labels-only update is fine; core/v1's legacy rules allow the change.
    let mut labelled = event.clone();
    set(&mut labelled, "/metadata/labels", json!({"a": "b"}));
    expect("labels", served_as_update("events.k8s.io", "Event", &object(labelled), &object(event.clone())), &[]);
    let mut message = event.clone();
    set(&mut message, "/message", json!("other"));
    expect("core update", update("Event", &object(message), &object(event), None), &[]);
}
