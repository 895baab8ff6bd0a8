"""The official Python client against Shardline: the calls of issue 14's
table get kube-apiserver's answers. Run by tests/python_client.rs with the
server's URL.

Usage: python builtin_fidelity.py http://127.0.0.1:PORT
Prints one line per check ("ok NAME" or "FAIL NAME: why") and exits 0 when
every check passed, 1 otherwise.
"""
import base64, json, sys, urllib.error, urllib.request
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

failures = []

def check(name, condition, why=""):
    print(("ok " if condition else "FAIL ") + name + ("" if condition else ": " + why), flush=True)
    if not condition:
        failures.append(name)

def refused(name, call, status):
    try:
        call()
    except ApiException as e:
        check(name, e.status == status, "answered %s: %s" % (e.status, e.body))
        return e
    check(name, False, "accepted")

def post_raw(host, path, body):
    """POSTs a body the typed client would refuse to send; returns (status, text)."""
    request = urllib.request.Request(host + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

def main():
    configuration = client.Configuration()
    configuration.host = sys.argv[1]
    api_client = client.ApiClient(configuration)
    core = client.CoreV1Api(api_client)
    apps = client.AppsV1Api(api_client)
    ns = "pyfidelity"

    # Namespace: the kubernetes.io/metadata.name label.
    created = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    check("namespace label", (created.metadata.labels or {}).get("kubernetes.io/metadata.name") == ns,
          str(created.metadata.labels))

    # A pod with one container: the pod defaults.
    pod = core.create_namespaced_pod(ns, client.V1Pod(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx")])))
    spec, container = pod.spec, pod.spec.containers[0]
    check("pod restartPolicy", spec.restart_policy == "Always", str(spec.restart_policy))
    check("pod dnsPolicy", spec.dns_policy == "ClusterFirst", str(spec.dns_policy))
    check("pod schedulerName", spec.scheduler_name == "default-scheduler", str(spec.scheduler_name))
    check("pod terminationGracePeriodSeconds", spec.termination_grace_period_seconds == 30,
          str(spec.termination_grace_period_seconds))
    check("pod enableServiceLinks", spec.enable_service_links is True, str(spec.enable_service_links))
    check("container imagePullPolicy", container.image_pull_policy == "Always", str(container.image_pull_policy))
    check("container terminationMessagePath", container.termination_message_path == "/dev/termination-log",
          str(container.termination_message_path))
    check("container terminationMessagePolicy", container.termination_message_policy == "File",
          str(container.termination_message_policy))
    check("pod status phase", pod.status.phase == "Pending", str(pod.status.phase))

    # A Deployment without strategy or replicas.
    deployment = apps.create_namespaced_deployment(ns, client.V1Deployment(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels={"app": "web"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "web"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx:1.25")])))))
    dspec = deployment.spec
    check("deployment replicas", dspec.replicas == 1, str(dspec.replicas))
    strategy = dspec.strategy
    check("deployment strategy", strategy is not None and strategy.type == "RollingUpdate"
          and strategy.rolling_update is not None and strategy.rolling_update.max_surge == "25%"
          and strategy.rolling_update.max_unavailable == "25%", str(strategy))
    check("deployment revisionHistoryLimit", dspec.revision_history_limit == 10, str(dspec.revision_history_limit))
    check("deployment progressDeadlineSeconds", dspec.progress_deadline_seconds == 600,
          str(dspec.progress_deadline_seconds))

    # A Service with a port: an allocated cluster IP and the service defaults.
    service = core.create_namespaced_service(ns, client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(selector={"app": "web"}, ports=[client.V1ServicePort(port=80)])))
    sspec = service.spec
    check("service clusterIP", bool(sspec.cluster_ip) and sspec.cluster_ips == [sspec.cluster_ip],
          "%s %s" % (sspec.cluster_ip, sspec.cluster_ips))
    check("service type", sspec.type == "ClusterIP", str(sspec.type))
    check("service ipFamilies", sspec.ip_families == ["IPv4"] and sspec.ip_family_policy == "SingleStack",
          "%s %s" % (sspec.ip_families, sspec.ip_family_policy))
    check("service sessionAffinity", sspec.session_affinity == "None", str(sspec.session_affinity))
    port = (sspec.ports or [None])[0]
    check("service port protocol and targetPort", port is not None and port.protocol == "TCP"
          and port.target_port == 80, str(port))

    # A Secret with stringData: data holds the base64 values, type Opaque.
    secret = core.create_namespaced_secret(ns, client.V1Secret(
        metadata=client.V1ObjectMeta(name="creds"), string_data={"user": "admin"}))
    check("secret data", secret.data == {"user": base64.b64encode(b"admin").decode()}, str(secret.data))
    check("secret stringData dropped", secret.string_data is None, str(secret.string_data))
    check("secret type", secret.type == "Opaque", str(secret.type))

    # Malformed bodies (the typed client refuses to send them, so they go
    # raw, as another client's would): 400, nothing stored.
    bad_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"}, "spec": {"containers": "oops"}}
    status, text = post_raw(sys.argv[1], "/api/v1/namespaces/%s/pods" % ns, bad_pod)
    check("malformed pod refused", status == 400, "answered %s: %s" % (status, text))
    check("malformed pod message", "cannot be handled as a Pod: json: cannot unmarshal string" in text, text)
    bad_cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}, "data": {"k": 1}}
    status, text = post_raw(sys.argv[1], "/api/v1/namespaces/%s/configmaps" % ns, bad_cm)
    check("malformed configmap refused", status == 400, "answered %s: %s" % (status, text))

    # An immutable ConfigMap's data cannot change: 422.
    cm = core.create_namespaced_config_map(ns, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="frozen"), data={"a": "1"}, immutable=True))
    cm.data = {"a": "2"}
    refused("immutable configmap update refused", lambda: core.replace_namespaced_config_map("frozen", ns, cm), 422)

    # A typed client still lists and watches pods.
    pods = core.list_namespaced_pod(ns)
    check("typed pod list", [p.metadata.name for p in pods.items] == ["web"], str([p.metadata.name for p in pods.items]))
    seen = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_pod, ns, timeout_seconds=5):
        seen.append(event["object"].metadata.name)
        w.stop()
    check("typed pod watch", seen == ["web"], str(seen))
    configmaps = core.list_namespaced_config_map(ns)
    check("typed configmap list", sorted(c.metadata.name for c in configmaps.items) == ["frozen"],
          str([c.metadata.name for c in configmaps.items]))
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
