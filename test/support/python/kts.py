# The prelude of the Python-client test scripts (test/support/python-client.ts): the official client
# (`python3-kubernetes`, Debian 22.6) configured from the kubeconfig the harness wrote for the test's
# agent, and `emit`, which prints one JSON event per line (flushed) for the harness to read.
import json
import sys

from kubernetes import client, config


def api_client():
    """An ApiClient for $KUBECONFIG (TLS to the agent, the test's token)."""
    return config.new_client_from_config()


def core():
    """CoreV1Api over api_client()."""
    return client.CoreV1Api(api_client())


def emit(kind, **fields):
    """Prints {"event": kind, ...fields} as one line of JSON and flushes it."""
    sys.stdout.write(json.dumps(dict(event=kind, **fields), default=str) + "\n")
    sys.stdout.flush()
