// Issue 38 finding 10: the CLI answers a body of the wrong shape (a server answering `{}`) with a
// clear error naming the request, never a TypeError from the printing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runClient, type ClientFlags } from '../../src/cli/client.js';
import type { CliIo } from '../../src/cli/io.js';
import { runGetPods } from '../../src/cli/get.js';
import { runDescribePod } from '../../src/cli/describe.js';
import { runTopPods } from '../../src/cli/top.js';
import { podsOfSelector, runDeletePods } from '../../src/cli/delete.js';
import { runApply } from '../../src/cli/apply.js';
import { listItems, pod } from '../../src/cli/decode.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

/** A server that answers every request 200 with `body` (as JSON). */
async function answering(body: string): Promise<ClientFlags> {
  server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(body));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: '', rootDir: '/nonexistent' };
}

function io(): { out: { stdout: string; stderr: string }; io: CliIo } {
  const out = { stdout: '', stderr: '' };
  return {
    out,
    io: {
      stdout: (s) => {
        out.stdout += s;
      },
      stderr: (s) => {
        out.stderr += s;
      },
      exit: () => undefined,
    } as CliIo,
  };
}

describe('the CLI against an answer of the wrong shape', () => {
  it.each<[string, (f: ClientFlags, i: CliIo) => Promise<number>, string]>([
    [
      'get pods',
      (f, i) => runGetPods(f, { output: 'table', namespace: 'default', selector: '', noHeaders: false, watch: false }, i),
      'error: GET /pods?namespace=default: the answer is not a PodList: "items" is missing in {}\n',
    ],
    [
      'describe pod',
      (f, i) => runDescribePod(f, 'default', 'web', i),
      'error: GET /pods/default/web: the answer is not a Pod: "metadata" is missing in {}\n',
    ],
    [
      'top pods',
      (f, i) => runTopPods(f, { namespace: 'default', noHeaders: false }, i),
      'error: GET /stats/summary?only_cpu_and_memory=true: the answer is not a Summary: "node" is missing in {}\n',
    ],
    [
      'delete -l',
      async (f) => {
        await podsOfSelector(f, 'a=b', 'default', false);
        return 0;
      },
      'error: GET /pods?namespace=default&labelSelector=a%3Db: the answer is not a PodList: "items" is missing in {}\n',
    ],
  ])('%s: {} is a clear error, exit 1', async (_name, run, message) => {
    const flags = await answering('{}');
    const { out, io: cliIo } = io();
    const code = await runClient((i) => run(flags, i))(cliIo);
    expect({ code, stderr: out.stderr, stdout: out.stdout }).toEqual({ code: 1, stderr: message, stdout: '' });
  });

  it('writes: delete and apply answered {} print an error, never "deleted" or "configured" (a break test\'s F10)', async () => {
    const flags = await answering('{}');
    const del = io();
    expect(
      await runClient((i) => runDeletePods(flags, { pods: [{ namespace: 'default', name: 'web' }], wait: false, timeoutMs: 1000 }, i))(
        del.io,
      ),
    ).toBe(1);
    expect(del.out).toEqual({
      stdout: '',
      stderr: 'Error from server: DELETE /pods/default/web: the answer is not a Pod: "metadata" is missing in {}\n',
    });
    const app = io();
    const manifest = 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: c, image: kubelet-ts/busybox:1.35}]\n';
    expect(await runClient((i) => runApply(flags, [{ origin: 'x.yaml', text: manifest }], undefined, i))(app.io)).toBe(1);
    expect(app.out).toEqual({ stdout: '', stderr: 'error: GET /pods/default/x: the answer is not a Pod: "metadata" is missing in {}\n' });
  });

  it('names what is wrong: a list that is not a list, an item that is not an object, a scalar answer', () => {
    expect(() => listItems({ items: 'x' }, 'PodList', 'GET /pods')).toThrow(
      'GET /pods: the answer is not a PodList: "items" is not a list: "x"',
    );
    expect(() => listItems({ items: [{}, 3] }, 'PodList', 'GET /pods')).toThrow(
      'GET /pods: the answer is not a PodList: item 1 is not an object: 3',
    );
    expect(() => pod(null, 'GET /pods/a/b')).toThrow('GET /pods/a/b: the answer is not a Pod: it is null');
    expect(listItems({ items: [] }, 'PodList', 'GET /pods')).toEqual([]);
  });
});
