// tools/lib/cri-pods.mjs — list or remove the pods of one kubelet-ts node on a CRI runtime (the
// containerd of tools/lib/containerd.sh): what `tools/down --remove-pods` does with `docker rm -f`
// on Docker, through the built CRI client (dist/, so run tools/up first). The role of
// `crictl rmp --force` over the pod sandboxes a kubelet labelled (cri-tools), which this machine
// does not have.
//
//   node tools/lib/cri-pods.mjs ENDPOINT NODE list     print `<sandbox id> <namespace>/<name>`, one a line
//   node tools/lib/cri-pods.mjs ENDPOINT NODE remove   StopPodSandbox + RemovePodSandbox (its containers
//                                                      go with it) for each; prints how many
// Only sandboxes labelled kubelet-ts.node-name=NODE and carrying a pod UID label are touched (the
// agent's rule, as for Docker); containers left with those labels outside a sandbox are removed too.
// Exit 2 on bad arguments, 1 when the runtime refuses.
import { RemoteRuntimeService } from '../../dist/src/workers/runtime/cri/remote-runtime.js';

const [endpoint, node, action] = process.argv.slice(2);
if (!endpoint?.startsWith('unix:///') || !node || !['list', 'remove'].includes(action)) {
  process.stderr.write('usage: node tools/lib/cri-pods.mjs unix:///SOCKET NODE list|remove\n');
  process.exit(2);
}
const runtime = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 60_000 });
const mine = (labels) => labels['kubelet-ts.node-name'] === node && !!labels['io.kubernetes.pod.uid'];
try {
  const selector = { label_selector: { 'kubelet-ts.node-name': node } };
  const sandboxes = (await runtime.listPodSandbox(selector)).filter((s) => mine(s.labels));
  if (action === 'list') {
    for (const s of sandboxes) process.stdout.write(`${s.id} ${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}\n`);
  } else {
    for (const s of sandboxes) {
      await runtime.stopPodSandbox(s.id);
      await runtime.removePodSandbox(s.id);
    }
    const left = (await runtime.listContainers(selector)).filter((c) => mine(c.labels));
    for (const c of left) {
      await runtime.stopContainer(c.id, 0);
      await runtime.removeContainer(c.id);
    }
    process.stdout.write(`${sandboxes.length}\n`);
  }
} catch (err) {
  process.stderr.write(`cri-pods: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  runtime.close();
}
