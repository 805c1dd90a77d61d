# GET argv[4] (a path) over HTTP/1.0 from port argv[3] of pod argv[1] in namespace argv[2], through
# kubernetes.stream.portforward (the v4 channel WebSocket protocol); emits `response` with the whole
# answer as text and the forward's error for that port (None when there was none).
import sys

from kubernetes.stream import portforward

import kts

pod, namespace, port, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
pf = portforward(kts.core().connect_get_namespaced_pod_portforward, pod, namespace, ports=str(port))
s = pf.socket(port)
s.setblocking(True)
s.sendall(('GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' % (path, pod)).encode())
data = b''
while True:
    c = s.recv(4096)
    if not c:
        break
    data += c
s.close()
kts.emit('response', text=data.decode(), error=pf.error(port))
pf.close()
