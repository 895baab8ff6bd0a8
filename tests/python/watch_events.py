"""The official Python client against Shardline: watch.Watch sees the
expected events. Run by tests/python_client.rs with the server's URL.

Usage: python watch_events.py http://127.0.0.1:PORT
Prints one line per event seen ("TYPE name") and exits 0 when the expected
sequence arrived, 1 otherwise.
"""
import sys, threading, time
from kubernetes import client, watch

def main():
    configuration = client.Configuration()
    configuration.host = sys.argv[1]
    api = client.CoreV1Api(client.ApiClient(configuration))
    start = api.list_namespaced_config_map("default").metadata.resource_version
    def writes():
        time.sleep(0.5)
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py"), data={"a": "1"})
        api.create_namespaced_config_map("default", body)
        body.data = {"a": "2"}
        api.replace_namespaced_config_map("py", "default", body)
        api.delete_namespaced_config_map("py", "default")
    threading.Thread(target=writes).start()
    seen = []
    w = watch.Watch()
    for event in w.stream(api.list_namespaced_config_map, "default", resource_version=start, timeout_seconds=15):
        seen.append((event["type"], event["object"].metadata.name, event["object"].data))
        print(event["type"], event["object"].metadata.name, flush=True)
        if len(seen) == 3:
            w.stop()
    expected = [("ADDED", "py", {"a": "1"}), ("MODIFIED", "py", {"a": "2"}), ("DELETED", "py", {"a": "2"})]
    if seen != expected:
        print("expected", expected, "saw", seen, flush=True)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
