// fast-check arbitraries for the fuzz suite (test/fuzz/*.test.ts) and the fuzz bench (bench/fuzz.ts):
// pods close to valid, mutations of a valid pod at a random path, raw YAML / JSON text, label
// selectors and query strings. In the spirit of apimachinery's fuzzer (k8s.io/apimachinery/pkg/api/apitesting/fuzzer),
// which fills objects with random values for round-trip tests, plus hostile text for the decoder.
import fc from 'fast-check';
import type { Pod } from '../../src/shared/api.js';

/** Numbers at the edges: what JSON and YAML can carry that a field of int32 / int64 / float cannot hold. */
export const edgeNumber: fc.Arbitrary<number> = fc.constantFrom(
  -1,
  0,
  1,
  -(2 ** 31),
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
  0.5,
  1.5,
  65535,
  65536,
);

/** Strings that look like numbers, or that are NaN / Infinity in some reader. */
export const numberLikeString: fc.Arbitrary<string> = fc.constantFrom(
  'NaN',
  'nan',
  '.nan',
  'Infinity',
  '-Infinity',
  '.inf',
  '-.inf',
  '1e308',
  '1e309',
  '0x1F',
  '0o17',
  '1_000',
  '+1',
  '-0',
  '00',
  '9007199254740993',
  '2147483648',
  '',
);

/** Any JSON-ish scalar, numbers at the edges included. */
export const scalar: fc.Arbitrary<unknown> = fc.oneof(
  edgeNumber,
  numberLikeString,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
);

/** Any JSON value of small depth (for retyping a field). */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  scalar,
  fc.array(scalar, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 3 }),
);

const lowerAlnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split(''));
/** A DNS-1123 label (the validator's rule for names, namespaces, container names). */
export const dnsLabel: fc.Arbitrary<string> = fc
  .tuple(lowerAlnum, fc.array(fc.oneof(lowerAlnum, fc.constant('-')), { maxLength: 12 }), lowerAlnum)
  .map(([a, mid, b]) => `${a}${mid.join('')}${b}`);
/** Names mostly valid, sometimes not (upper case, dots, too long, empty, unicode). */
export const name: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: dnsLabel },
  { weight: 1, arbitrary: fc.constantFrom('', 'Web', 'a.b', '-a', 'a-', 'a'.repeat(64), 'a'.repeat(254), 'ü', 'a b', '..', '%2F') },
);

const labelChars = fc.constantFrom(...'abcXYZ019-_.'.split(''));
/** Label keys and values (mostly valid qualified names, some with prefixes or bad characters). */
export const labelKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: dnsLabel },
  { weight: 1, arbitrary: fc.tuple(dnsLabel, dnsLabel).map(([p, n]) => `${p}.io/${n}`) },
  { weight: 1, arbitrary: fc.array(labelChars, { maxLength: 70 }).map((a) => a.join('')) },
);
export const labelValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(dnsLabel, fc.constant('')) },
  { weight: 1, arbitrary: fc.array(labelChars, { maxLength: 70 }).map((a) => a.join('')) },
);
export const labels: fc.Arbitrary<Record<string, string>> = fc.dictionary(labelKey, labelValue, { maxKeys: 4 });

const image = fc.constantFrom('kubelet-ts/busybox:1.35', 'busybox', 'registry.local:5000/a/b:1', 'x@sha256:' + 'a'.repeat(64), '', ' ');
const quantity = fc.oneof(
  fc.constantFrom('100m', '1', '0.5', '64Mi', '1Gi', '1e3', '1E', '-1', '1.5m', '2^31', '1e308', 'NaN', ''),
  edgeNumber,
);
const port = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 65535 }) },
  { weight: 1, arbitrary: edgeNumber },
  { weight: 1, arbitrary: fc.constantFrom('http', 'HTTP', '8080', '') },
);
const seconds = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 100 }) },
  { weight: 1, arbitrary: edgeNumber },
  { weight: 1, arbitrary: numberLikeString },
);

const probe = fc.record(
  {
    exec: fc.record({ command: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }) }),
    httpGet: fc.record(
      { port, path: fc.constantFrom('/', '/healthz', 'x', ''), scheme: fc.constantFrom('HTTP', 'HTTPS', 'FTP') },
      { requiredKeys: ['port'] },
    ),
    tcpSocket: fc.record({ port }),
    initialDelaySeconds: seconds,
    timeoutSeconds: seconds,
    periodSeconds: seconds,
    successThreshold: seconds,
    failureThreshold: seconds,
    terminationGracePeriodSeconds: seconds,
  },
  { requiredKeys: [] },
);

const container = fc.record(
  {
    name,
    image,
    command: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
    args: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
    imagePullPolicy: fc.constantFrom('Always', 'IfNotPresent', 'Never', 'Sometimes'),
    ports: fc.array(
      fc.record(
        {
          name: fc.constantFrom('http', 'metrics', 'Bad_Name'),
          containerPort: port,
          protocol: fc.constantFrom('TCP', 'UDP', 'SCTP', 'tcp'),
        },
        { requiredKeys: ['containerPort'] },
      ),
      { maxLength: 2 },
    ),
    env: fc.array(
      fc.record({ name: fc.constantFrom('A', 'POD_NAME', '1BAD', ''), value: fc.string({ maxLength: 8 }) }, { requiredKeys: ['name'] }),
      { maxLength: 2 },
    ),
    resources: fc.record(
      {
        limits: fc.record({ cpu: quantity, memory: quantity }, { requiredKeys: [] }),
        requests: fc.record({ cpu: quantity, memory: quantity }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
    volumeMounts: fc.array(
      fc.record(
        {
          name: fc.constantFrom('data', 'cache', 'missing'),
          mountPath: fc.constantFrom('/data', '/cache', 'rel', '/a/../b'),
          readOnly: fc.boolean(),
        },
        { requiredKeys: ['name', 'mountPath'] },
      ),
      { maxLength: 2 },
    ),
    livenessProbe: probe,
    readinessProbe: probe,
    startupProbe: probe,
    terminationMessagePolicy: fc.constantFrom('File', 'FallbackToLogsOnError', 'Never'),
  },
  { requiredKeys: ['name', 'image'] },
);

const volume = fc.oneof(
  fc.record({ name: fc.constantFrom('data', 'cache', 'Data'), emptyDir: fc.constant({}) }),
  fc.record({
    name: fc.constantFrom('data', 'cache'),
    hostPath: fc.record(
      { path: fc.constantFrom('/tmp/kubelet-ts-fuzz', 'rel', '/a/../b'), type: fc.constantFrom('', 'Directory', 'Bogus') },
      { requiredKeys: ['path'] },
    ),
  }),
  fc.record({ name: fc.constantFrom('data'), configMap: fc.record({ name: dnsLabel }) }),
);

/**
 * podArbitrary: a pod object close to valid: random names, labels, one or two containers with
 * probes, ports, env, resources and mounts, volumes, and numbers at the edges. Many are accepted by
 * the validator, many are refused; `namespace` fixes metadata.namespace when given.
 */
export function podArbitrary(namespace?: string): fc.Arbitrary<Pod> {
  return fc
    .record({
      name,
      ns: namespace === undefined ? fc.oneof(fc.constant(undefined), dnsLabel, name) : fc.constant(namespace),
      labels,
      annotations: fc.dictionary(labelKey, fc.string({ maxLength: 20 }), { maxKeys: 2 }),
      containers: fc.array(container, { minLength: 1, maxLength: 2 }),
      initContainers: fc.option(fc.array(container, { maxLength: 1 }), { nil: undefined }),
      volumes: fc.option(fc.array(volume, { maxLength: 2 }), { nil: undefined }),
      restartPolicy: fc.option(fc.constantFrom('Always', 'OnFailure', 'Never', 'Sometimes'), { nil: undefined }),
      terminationGracePeriodSeconds: fc.option(seconds, { nil: undefined }),
      activeDeadlineSeconds: fc.option(seconds, { nil: undefined }),
      hostNetwork: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map((r) => {
      const spec: Record<string, unknown> = { containers: r.containers };
      for (const k of [
        'initContainers',
        'volumes',
        'restartPolicy',
        'terminationGracePeriodSeconds',
        'activeDeadlineSeconds',
        'hostNetwork',
      ] as const) {
        if (r[k] !== undefined) spec[k] = r[k];
      }
      const metadata: Record<string, unknown> = { name: r.name, labels: r.labels, annotations: r.annotations };
      if (r.ns !== undefined) metadata.namespace = r.ns;
      return { apiVersion: 'v1', kind: 'Pod', metadata, spec } as unknown as Pod;
    });
}

/**
 * validishPodArbitrary: pods built only from valid choices (names, labels, one container with a
 * numeric-port probe, limits, an emptyDir volume it mounts, edge-free numbers), so most pass the
 * validator: what the round-trip property needs (podArbitrary is refused too often to feed it).
 */
export function validishPodArbitrary(namespace?: string): fc.Arbitrary<Pod> {
  const validLabels = fc.dictionary(dnsLabel, fc.oneof(dnsLabel, fc.constant('')), { maxKeys: 3 });
  const handler = fc.oneof(
    fc.record({ exec: fc.record({ command: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 }) }) }),
    fc.record({ httpGet: fc.record({ port: fc.integer({ min: 1, max: 65535 }), path: fc.constantFrom('/', '/healthz') }) }),
    fc.record({ tcpSocket: fc.record({ port: fc.integer({ min: 1, max: 65535 }) }) }),
  );
  const probe = fc
    .tuple(
      handler,
      fc.record(
        {
          periodSeconds: fc.integer({ min: 1, max: 100 }),
          failureThreshold: fc.integer({ min: 1, max: 10 }),
          initialDelaySeconds: fc.integer({ min: 0, max: 100 }),
        },
        { requiredKeys: [] },
      ),
    )
    .map(([h, n]) => ({ ...h, ...n }));
  const c = fc.record(
    {
      name: dnsLabel,
      image: fc.constantFrom('kubelet-ts/busybox:1.35', 'busybox', 'registry.local:5000/a/b:1'),
      command: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
      args: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
      imagePullPolicy: fc.constantFrom('Always', 'IfNotPresent', 'Never'),
      ports: fc.array(fc.record({ containerPort: fc.integer({ min: 1, max: 65535 }), protocol: fc.constantFrom('TCP', 'UDP', 'SCTP') }), {
        maxLength: 1,
      }),
      env: fc.array(fc.record({ name: fc.constantFrom('A', 'POD_NAME', 'x.y'), value: fc.string({ maxLength: 8 }) }), { maxLength: 1 }),
      resources: fc.record(
        {
          limits: fc.record(
            { cpu: fc.constantFrom('100m', '1', '0.5', '2'), memory: fc.constantFrom('64Mi', '1Gi', '1000000') },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
      volumeMounts: fc.array(
        fc.record({ name: fc.constant('data'), mountPath: fc.constantFrom('/data', '/var/data'), readOnly: fc.boolean() }),
        { maxLength: 1 },
      ),
      livenessProbe: probe,
      readinessProbe: probe,
      terminationMessagePolicy: fc.constantFrom('File', 'FallbackToLogsOnError'),
    },
    { requiredKeys: ['name', 'image'] },
  );
  return fc
    .record({
      name: dnsLabel,
      ns: namespace === undefined ? fc.option(dnsLabel, { nil: undefined }) : fc.constant(namespace),
      labels: validLabels,
      annotations: fc.dictionary(dnsLabel, fc.string({ maxLength: 20 }), { maxKeys: 2 }),
      container: c,
      restartPolicy: fc.option(fc.constantFrom('Always', 'OnFailure', 'Never'), { nil: undefined }),
      terminationGracePeriodSeconds: fc.option(fc.integer({ min: 0, max: 3600 }), { nil: undefined }),
      activeDeadlineSeconds: fc.option(fc.integer({ min: 1, max: 3600 }), { nil: undefined }),
      hostNetwork: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map((r) => {
      const spec: Record<string, unknown> = { containers: [r.container], volumes: [{ name: 'data', emptyDir: {} }] };
      for (const k of ['restartPolicy', 'terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'hostNetwork'] as const)
        if (r[k] !== undefined) spec[k] = r[k];
      const metadata: Record<string, unknown> = { name: r.name, labels: r.labels, annotations: r.annotations };
      if (r.ns !== undefined) metadata.namespace = r.ns;
      return { apiVersion: 'v1', kind: 'Pod', metadata, spec } as unknown as Pod;
    });
}

/** A valid pod (the validator accepts it): the seed that mutations start from. */
export function validPod(nameText = 'fuzz', namespace = 'fuzz'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: nameText, namespace, labels: { app: 'fuzz' }, annotations: { 'example.com/owner': 'fuzz' } },
    spec: {
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: 'kubelet-ts/busybox:1.35',
          command: ['sleep', '3600'],
          ports: [{ name: 'http', containerPort: 8080 }],
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          resources: { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m' } },
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          readinessProbe: { httpGet: { port: 'http' }, periodSeconds: 5 },
          livenessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 3 },
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  } as Pod;
}

/** Every path (keys and array indexes) of a JSON value, parents before children. */
export function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (Array.isArray(value))
    value.forEach((v, i) => {
      out.push([...prefix, i], ...paths(v, [...prefix, i]));
    });
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push([...prefix, k], ...paths(v, [...prefix, k]));
  return out;
}

/** Mutation: drop, replace or retype the field at a path, or add an unknown sibling. */
export type Mutation = { op: 'drop' | 'replace' | 'retype' | 'add'; at: number; value: unknown; key: string };

const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('drop', 'replace', 'retype', 'add'),
  at: fc.nat(),
  value: anyJson,
  key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'hostPID', 'grpc', 'status', 'generateName'), fc.string({ maxLength: 6 })),
});

/** applyMutations returns a mutated deep copy of `pod` (paths chosen modulo the current path count). */
export function applyMutations(pod: unknown, mutations: Mutation[]): unknown {
  let root: unknown = structuredClone(pod);
  for (const m of mutations) {
    const all = paths(root);
    if (all.length === 0) {
      root = m.value;
      continue;
    }
    const path = all[m.at % all.length];
    const parent = path.slice(0, -1).reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], root) as Record<
      string | number,
      unknown
    >;
    const key = path[path.length - 1];
    const old = parent[key];
    if (m.op === 'drop') {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
    } else if (m.op === 'replace') {
      parent[key] = m.value;
    } else if (m.op === 'retype') {
      parent[key] =
        typeof old === 'string'
          ? Number.isNaN(Number(old))
            ? [old]
            : Number(old)
          : typeof old === 'number'
            ? String(old)
            : Array.isArray(old)
              ? old.length
                ? old[0]
                : {}
              : old && typeof old === 'object'
                ? [old]
                : { value: old };
    } else {
      // An unknown key (`__proto__` and `constructor` too) on the nearest plain object; arrays keep their shape.
      const target = old !== null && typeof old === 'object' && !Array.isArray(old) ? old : Array.isArray(parent) ? undefined : parent;
      if (target) Object.defineProperty(target, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
    }
  }
  return root;
}

/** mutatedPod: a valid pod with 1–4 mutations (drop / replace / retype / add at random paths). */
export function mutatedPod(namespace = 'fuzz'): fc.Arbitrary<unknown> {
  return fc
    .tuple(dnsLabel, fc.array(mutation, { minLength: 1, maxLength: 4 }))
    .map(([n, ms]) => applyMutations(validPod(n, namespace), ms));
}

// ---- raw text ----

const yamlScalar = fc.oneof(
  fc.constantFrom(
    '~',
    'null',
    'yes',
    'no',
    'on',
    '0x1F',
    '0o17',
    '1e308',
    '1e999',
    '.inf',
    '.nan',
    '-.inf',
    '9007199254740993',
    '2147483648',
    '"\\u0000"',
    "'it''s'",
    '!!binary aGk=',
    '!!int "3"',
    '!!float x',
    '!!str 1',
    '!custom x',
    '!!timestamp 2001-12-14',
    '|\n  block',
    '>-\n  folded',
    '&a x',
    '*a',
    '*undefined',
  ),
  fc.string({ maxLength: 10 }).map((s) => JSON.stringify(s)),
  fc.integer().map(String),
);

/** Hostile YAML: nesting, anchors and aliases (also alias bombs), tags, duplicate keys, huge numbers, odd documents. */
export const yamlText: fc.Arbitrary<string> = fc.oneof(
  // Nesting of flow and block collections.
  fc
    .tuple(fc.integer({ min: 1, max: 150 }), fc.constantFrom('[', '{a: ', '- '))
    .map(([n, open]) => (open === '- ' ? Array.from({ length: n }, (_, i) => `${' '.repeat(i * 2)}- `).join('\n') + 'x' : open.repeat(n))),
  // An alias bomb (billion laughs), of a random width and depth.
  fc.tuple(fc.integer({ min: 2, max: 10 }), fc.integer({ min: 2, max: 8 })).map(([w, d]) => {
    const lines = ['a0: &a0 [x]'];
    for (let i = 1; i <= d; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: w }, () => `*a${i - 1}`).join(', ')}]`);
    return lines.join('\n');
  }),
  // A pod with random scalars in its fields, duplicate keys and tags.
  fc
    .array(
      fc.tuple(
        fc.constantFrom('apiVersion', 'kind', 'metadata', 'name', 'spec', 'containers', 'image', 'items', '<<', '? complex'),
        yamlScalar,
      ),
      { maxLength: 8 },
    )
    .map((kvs) => `apiVersion: v1\nkind: Pod\nmetadata: {name: fuzz}\n${kvs.map(([k, v]) => `${k}: ${v}`).join('\n')}\n`),
  // Several documents, some empty, some lists.
  fc
    .array(
      fc.constantFrom(
        '---',
        '--- |',
        '...',
        'kind: List\napiVersion: v1\nitems: [1, {kind: Pod}]',
        'kind: PodList\napiVersion: v1\nitems: ~',
        '%YAML 1.2',
        '%TAG ! tag:x,2000:',
        'apiVersion: v1\nkind: Pod\nmetadata: {name: fuzz}\nspec: {containers: [{name: c, image: i}]}',
      ),
      { maxLength: 6 },
    )
    .map((docs) => docs.join('\n')),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
);

/** Hostile JSON: deep nesting, huge numbers, lone surrogates, duplicate keys, truncation. */
export const jsonText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 1, max: 150 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 90, max: 150 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  fc.constantFrom(
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c","image":"i"}]}}',
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"fuzz"},"spec":{"terminationGracePeriodSeconds":1e999,"containers":[{"name":"c","image":"i"}]}}',
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"\\ud800"},"spec":{"containers":[{"name":"c","image":"i"}]}}',
    '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod"}, null, 3]}',
    '{"__proto__":{"polluted":true},"apiVersion":"v1","kind":"Pod"}',
    '[]',
    'null',
    '1',
    '"x"',
    '',
    ' ',
    '\u0000',
    '{',
    '{"a":}',
  ),
  fc.tuple(podArbitrary(), fc.nat()).map(([p, cut]) => {
    const t = JSON.stringify(p);
    return t.slice(0, cut % (t.length + 1));
  }),
  fc.json({ maxDepth: 4 }),
  fc.string({ maxLength: 200 }),
);

/** Raw bytes that are not valid UTF-8 (lone continuation bytes, overlongs, truncated sequences), around a pod. */
export const invalidUtf8: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.constantFrom(
      Buffer.from([0x80]),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from([0xe2, 0x82]),
      Buffer.from([0xff, 0xfe]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xf4, 0x90, 0x80, 0x80]),
    ),
    fc.nat(),
  )
  .map(([bad, at]) => {
    const text = Buffer.from(JSON.stringify(validPod()));
    const i = at % (text.length + 1);
    return Buffer.concat([text.subarray(0, i), bad, text.subarray(i)]);
  });

// ---- selectors and queries ----

/** Label selectors: valid equality / set-based ones and broken ones. */
export const labelSelector: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(
      fc.oneof(
        fc.tuple(labelKey, fc.constantFrom('=', '==', '!='), labelValue).map(([k, op, v]) => `${k}${op}${v}`),
        fc
          .tuple(labelKey, fc.constantFrom(' in ', ' notin '), fc.array(labelValue, { maxLength: 3 }))
          .map(([k, op, vs]) => `${k}${op}(${vs.join(',')})`),
        labelKey,
        labelKey.map((k) => `!${k}`),
        fc.constantFrom('a in (', 'in (a)', '=', ',', '!', 'a==', 'a in (b,,c)', 'a notin ()', 'a>1', 'a<b', 'a=(b)', '(((', '\u0000'),
      ),
      { maxLength: 4 },
    )
    .map((parts) => parts.join(',')),
  fc.string({ maxLength: 30 }),
);

/** A query parameter value: numbers at the edges, booleans, junk. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  numberLikeString,
  edgeNumber.map(String),
  fc.constantFrom('true', 'false', 'True', '1', 'yes', '-5', '10', '0'),
  fc.string({ maxLength: 12 }),
);

/** A query string for one route: known parameters (and unknown ones) with random values. */
export function queryString(params: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(
      fc.tuple(
        fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...params, 'labelSelector') },
          { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
        ),
        fc.oneof(queryValue, labelSelector),
      ),
      { maxLength: 4 },
    )
    .map((kv) => (kv.length ? `?${new URLSearchParams(kv).toString()}` : ''));
}
