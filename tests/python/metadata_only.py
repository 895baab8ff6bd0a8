"""The official Python client against Shardline, metadata only: a list and a
get with kube's `as=PartialObjectMetadataList` / `as=PartialObjectMetadata`
Accept through ApiClient.call_api (the client has no metadata API of its own),
paginated with its continue token, and a metadata-only watch. Run by
tests/python_client.rs with the server's URL.

Usage: python metadata_only.py http://127.0.0.1:PORT
Prints "ok ..." per check, "FAIL ..." for a failed one, and exits 1 on any failure.
"""
import json, sys
from kubernetes import client

LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
failed = []

def check(name, condition, detail=""):
    print(("ok " if condition else "FAIL ") + name + ("" if condition else " " + str(detail)), flush=True)
    if not condition:
        failed.append(name)

def raw(api_client, path, accept, query=None):
    method, url, headers, body, post_params = api_client.param_serialize(
        "GET", path, query_params=query or [], header_params={"Accept": accept}, auth_settings=[])
    response = api_client.call_api(method, url, header_params=headers, body=body, post_params=post_params)
    response.read()
    return response.data

def main():
    configuration = client.Configuration()
    configuration.host = sys.argv[1]
    api_client = client.ApiClient(configuration)
    api = client.CoreV1Api(api_client)
    for i in range(3):
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"meta-{i}", labels={"app": "py"}), data={"big": "x" * 100})
        api.create_namespaced_config_map("default", body)
    path = "/api/v1/namespaces/default/configmaps"
    page = json.loads(raw(api_client, path, LIST, [("limit", 2)]))
    check("list kind", page.get("kind") == "PartialObjectMetadataList", page.get("kind"))
    check("list items typed", all(i.get("kind") == "PartialObjectMetadata" for i in page["items"]), page["items"])
    check("list items metadata only", all(set(i) == {"kind", "apiVersion", "metadata"} for i in page["items"]))
    check("remainingItemCount", page["metadata"].get("remainingItemCount") == 1, page["metadata"])
    rest = json.loads(raw(api_client, path, LIST, [("limit", 2), ("continue", page["metadata"]["continue"])]))
    names = [i["metadata"]["name"] for i in page["items"] + rest["items"]]
    check("pages cover the collection", names == ["meta-0", "meta-1", "meta-2"], names)
    typed = api.list_namespaced_config_map("default")
    full = {c.metadata.name: c.metadata.resource_version for c in typed.items}
    check("resourceVersions as the typed list", {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in page["items"] + rest["items"]} == full)
    one = json.loads(raw(api_client, path + "/meta-1", OBJECT))
    check("get", one.get("kind") == "PartialObjectMetadata" and one["metadata"]["labels"] == {"app": "py"}, one)
    events = raw(api_client, path, OBJECT, [("watch", "true"), ("resourceVersion", "0"), ("timeoutSeconds", 1)])
    objects = [json.loads(line)["object"] for line in events.splitlines() if line.strip()]
    check("watch", [o["kind"] for o in objects] == ["PartialObjectMetadata"] * 3, objects)
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
