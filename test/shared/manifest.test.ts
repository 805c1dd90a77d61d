import { describe, expect, it } from 'vitest';
import { InvalidManifestError, formatFieldError } from '../../src/shared/errors.js';
import { loadPods, parseManifests } from '../../src/shared/manifest.js';

const podYaml = (name: string, image = 'kubelet-ts/busybox:1.35') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
  - name: main
    image: ${image}
`;

const podJson = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'main', image: 'i:1' }] },
});

/** The formatted errors of the InvalidManifestError `fn` throws. */
function thrown(fn: () => unknown): { origin: string; errors: string[]; message: string } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidManifestError);
    const err = e as InvalidManifestError;
    expect(err.code).toBe('ERR_INVALID_MANIFEST');
    return { origin: err.source, errors: err.errors.map(formatFieldError), message: err.message };
  }
  throw new Error('expected an InvalidManifestError');
}

describe('parseManifests', () => {
  it('reads a leading-zero integer as octal, as YAML 1.1 and kubectl do (defaultMode: 0644 is 420); quoted and 0o forms as YAML 1.2', () => {
    const text =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nspec:\n  containers: [{name: c, image: i}]\n  volumes:\n  - {name: a, secret: {secretName: s, defaultMode: 0644, items: [{key: k, path: p, mode: 0400}]}}\n  - {name: b, configMap: {name: c, defaultMode: 0o755}}\n';
    const [pod] = parseManifests(text, 'm.yaml');
    expect(pod.spec!.volumes![0].secret).toMatchObject({ defaultMode: 420, items: [{ mode: 256 }] });
    expect(pod.spec!.volumes![1].configMap!.defaultMode).toBe(493);
    expect(parseManifests(text.replace('0400', '"0400"'), 'm.yaml')[0].spec!.volumes![0].secret!.items![0].mode).toBe('0400');
  });

  it('reads plain scalars as YAML 1.1, as kubectl and the apiserver (sigs.k8s.io/yaml over go-yaml v2) do', () => {
    const text =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: m, annotations: {a: "yes", b: "010"}}\nspec:\n  terminationGracePeriodSeconds: 010\n  activeDeadlineSeconds: 0o17\n  priority: 1_000\n' +
      '  containers: [{name: c, image: i, tty: on, stdin: yes, command: [y, n, Off, 0X1F, 0b101, -010, 1:20, 2001-12-14, "on"]}]\n';
    const [pod] = parseManifests(text, 'm.yaml');
    expect(pod.spec).toMatchObject({ terminationGracePeriodSeconds: 8, activeDeadlineSeconds: 15, priority: 1000 });
    expect(pod.spec!.containers[0]).toMatchObject({
      tty: true,
      stdin: true,
      command: [true, false, false, 31, 5, -8, '1:20', '2001-12-14', 'on'],
    });
    expect(pod.metadata!.annotations).toEqual({ a: 'yes', b: '010' });
  });

  it('refuses yes where a string is expected, naming the field (the apiserver: cannot unmarshal bool into a string field)', () => {
    const { errors } = thrown(() => loadPods(`${podYaml('m')}    workingDir: yes\n  hostname: on\n`, 'm.yaml'));
    expect(errors).toEqual([
      'spec.containers[0].workingDir: Invalid value: true: must be a string',
      'spec.hostname: Invalid value: true: must be a string',
    ]);
  });

  it.each<[string, string, 'yaml' | 'json' | undefined, string[]]>([
    ['one YAML pod', podYaml('a'), undefined, ['a']],
    ['JSON read as YAML', JSON.stringify(podJson('a')), undefined, ['a']],
    ['JSON with format json', JSON.stringify(podJson('a')), 'json', ['a']],
    ['a multi-document stream with an empty document', `${podYaml('a')}---\n---\n${podYaml('b')}`, 'yaml', ['a', 'b']],
    ['a stream starting with ---', `---\n${podYaml('a')}`, 'yaml', ['a']],
    ['a List', JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [podJson('a'), podJson('b')] }), 'json', ['a', 'b']],
    [
      'a PodList in a stream',
      `${podYaml('a')}---\napiVersion: v1\nkind: PodList\nitems:\n${podYaml('b').replace(/^/gm, '  ').replace(/^  a/, '- a')}`,
      undefined,
      ['a', 'b'],
    ],
    ['an empty List', 'apiVersion: v1\nkind: List\nitems: []\n', undefined, []],
    ['empty text', '', undefined, []],
    ['only comments', '# nothing here\n', undefined, []],
  ])('reads %s', (_name, text, format, names) => {
    expect(parseManifests(text, 'm.yaml', format).map((p) => p.metadata?.name)).toEqual(names);
  });

  it('returns raw pods, not defaulted', () => {
    const [pod] = parseManifests(podYaml('a'), 'm.yaml');
    expect(pod.metadata?.namespace).toBeUndefined();
    expect(pod.spec?.restartPolicy).toBeUndefined();
  });

  it.each<[string, string, 'yaml' | 'json' | undefined, (string | RegExp)[]]>([
    [
      'a YAML syntax error, naming the document and line',
      `${podYaml('a')}---\nkind: Pod\nmetadata: {name: b\n`,
      undefined,
      [/^\[1\]: Invalid value: YAML syntax error at line \d+, column \d+: /],
    ],
    [
      'a duplicate key',
      'apiVersion: v1\nkind: Pod\nkind: Pod\n',
      undefined,
      [/^\[0\]: Invalid value: YAML syntax error at line 3, column 1: Map keys must be unique/],
    ],
    ['a JSON syntax error', '{"apiVersion": "v1",', 'json', [/^\[0\]: Invalid value: JSON syntax error/]],
    // Issue #11 finding 4: a file that is no manifest (a symlink to a secret) is never quoted.
    [
      'a secret-looking string document',
      'AWS_SECRET_ACCESS_KEY=hunter2\0PATH=/bin\n',
      undefined,
      ['[0]: Invalid value: must be an object (a Pod, List or PodList), not a string (39 bytes)'],
    ],
    ['a JSON syntax error next to a secret', '{"token": hunter2}', 'json', [/^\[0\]: Invalid value: JSON syntax error(?!.*hunter2)/]],
    [
      'a list item that is a secret string',
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: ['hunter2'] }),
      undefined,
      ['items[0]: Invalid value: must be an object (a Pod), not a string (7 bytes)'],
    ],
    [
      'a wrong kind',
      podYaml('a').replace('kind: Pod', 'kind: Deployment'),
      undefined,
      ['kind: Unsupported value: "Deployment": supported values: "Pod"'],
    ],
    ['a missing kind', podYaml('a').replace('kind: Pod\n', ''), undefined, ['kind: Required value']],
    [
      'a wrong apiVersion',
      podYaml('a').replace('apiVersion: v1', 'apiVersion: apps/v1'),
      undefined,
      ['apiVersion: Unsupported value: "apps/v1": supported values: "v1"'],
    ],
    ['a scalar document', 'hello\n', undefined, ['[0]: Invalid value: must be an object (a Pod, List or PodList), not a string (5 bytes)']],
    [
      'a wrong kind in the second document',
      `${podYaml('a')}---\n${podYaml('b').replace('kind: Pod', 'kind: Service')}`,
      undefined,
      ['[1].kind: Unsupported value: "Service": supported values: "Pod"'],
    ],
    [
      'a wrong kind in a list item',
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [podJson('a'), { apiVersion: 'v1', kind: 'Secret' }] }),
      undefined,
      ['items[1].kind: Unsupported value: "Secret": supported values: "Pod"'],
    ],
    [
      'items that are not a list',
      'apiVersion: v1\nkind: PodList\nitems: 3\n',
      undefined,
      ['items: Invalid value: must be a list, not a number'],
    ],
    [
      'every problem of every document',
      `kind: Job\napiVersion: batch/v1\n---\n${podYaml('b')}---\n: : :\n`,
      undefined,
      [
        '[0].apiVersion: Unsupported value: "batch/v1": supported values: "v1"',
        '[0].kind: Unsupported value: "Job": supported values: "Pod"',
        '[2]: Invalid value: YAML syntax error at line 13, column 3: Nested mappings are not allowed in compact mappings',
        '[2]: Invalid value: YAML syntax error at line 13, column 5: Nested mappings are not allowed in compact mappings',
      ],
    ],
  ])('rejects %s', (_name, text, format, expected) => {
    const { origin, errors, message } = thrown(() => parseManifests(text, '/etc/kubelet.d/m.yaml', format));
    expect(origin).toBe('/etc/kubelet.d/m.yaml');
    expect(message.startsWith('/etc/kubelet.d/m.yaml: ')).toBe(true);
    expect(errors).toHaveLength(expected.length);
    expected.forEach((exp, i) => (typeof exp === 'string' ? expect(errors[i]).toBe(exp) : expect(errors[i]).toMatch(exp)));
  });
});

describe('loadPods', () => {
  it('defaults and validates', () => {
    const [pod] = loadPods(podYaml('a', 'busybox'), 'm.yaml');
    expect(pod.metadata?.namespace).toBe('default');
    expect(pod.spec?.containers[0].imagePullPolicy).toBe('Always');
  });

  it('prefixes errors with the document when a stream holds several', () => {
    const text = `${podYaml('a')}---\n${podYaml('b').replace('    image: kubelet-ts/busybox:1.35\n', '')}`;
    expect(thrown(() => loadPods(text, 'm.yaml')).errors).toEqual(['[1].spec.containers[0].image: Required value']);
  });

  it('does not prefix the errors of a lone pod', () => {
    expect(thrown(() => loadPods(podYaml('A'), 'm.yaml')).errors).toEqual([expect.stringMatching(/^metadata\.name: Invalid value: "A": /)]);
  });

  it('prefixes list items, and rejects the whole list for one bad pod', () => {
    const text = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        podJson('a'),
        { ...podJson('b'), spec: { containers: [{ name: 'x', image: 'i:1', volumeDevices: [{ name: 'd', devicePath: '/dev/x' }] }] } },
      ],
    });
    expect(thrown(() => loadPods(text, 'm.json', 'json')).errors).toEqual(['items[1].spec.containers[0].volumeDevices: Not supported']);
  });

  it('lists the errors of every pod', () => {
    const text = `${podYaml('a').replace('name: main', 'name: Main')}---\n${podYaml('b')}---\n${podYaml('c').replace('metadata:\n', 'metadata:\n  generateName: c-\n')}`;
    const { errors } = thrown(() => loadPods(text, 'm.yaml'));
    expect(errors).toEqual([
      expect.stringMatching(/^\[0\]\.spec\.containers\[0\]\.name: Invalid value: "Main": /),
      '[2].metadata.generateName: Not supported',
    ]);
  });
});
