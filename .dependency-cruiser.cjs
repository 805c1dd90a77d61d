// .dependency-cruiser.cjs — `npm run lint`: the import direction and the library homes of the
// module map (STYLE.md §1 of the design notes; README "Architecture"):
//
//   src/main ──► src/server ──► src/shared ◄── src/workers        (src/cli: shared and server)
//      └─────────► src/io ─────────► src/shared ◄── src/io ◄── src/workers   (host network and file I/O)
//   src/main, src/cli ──► src/etcd ──► src/shared                 (the etcd client, etcd3's home)
//
// dependency-cruiser resolves every import to a file, so the rules name folders, not import strings.
// `tsPreCompilationDeps` keeps type-only imports in the graph (tagged `type-only`), so that `shared`
// may say `import type … from 'piscina'` while a runtime import stays an error.

/** Runtime libraries and the only folders (or files) that may load them. */
const kLibraryHomes = [
  { library: 'piscina', home: '^src/main/pool/' },
  { library: 'dockerode', home: '^src/workers/runtime/docker/' },
  { library: 'uWebSockets\\.js', home: '^src/server/' },
  // STYLE.md names source-etcd.ts and etcd-status-writer.ts; the real home is the client wrapper
  // src/etcd/client.ts, which those two and the client's etcd commands use. No other file loads etcd3.
  { library: 'etcd3', home: '^src/etcd/' },
  { library: 'selfsigned', home: '^src/main/host/serving-cert\\.ts$' },
  // The Kubernetes protobuf envelope of request bodies kubectl's typed clients send, and the wire
  // Writer of the /openapi/v2 protobuf (shared/kube-protobuf.ts, a codec safe in any thread).
  { library: 'protobufjs', home: '^src/shared/kube-protobuf\\.ts$' },
];

const notTypeOnly = { dependencyTypesNot: ['type-only'] };

/**
 * Node's modules that reach the network, files, processes or other threads: src/shared must not load
 * them (it is pure and safe in any thread). `node:net` is allowed only for its pure address helpers
 * (isIP, BlockList) in the files listed; kube-protobuf.ts reads its own vendored .proto definitions once at load.
 */
const kIoModules =
  '^(node:)?(fs|fs/promises|net|http|https|http2|tls|dgram|dns|dns/promises|child_process|worker_threads|cluster|readline)$';
const kSharedIoExceptions = ['^src/shared/(loopback|validation-container|validation-sandbox)\\.ts$', '^src/shared/kube-protobuf\\.ts$'];

/**
 * importsOnly: a rule that files under src/FOLDER import no src folder but `allowed` (and FOLDER),
 * nor any file but those matched by `files` (path regexps) elsewhere.
 */
function importsOnly(name, folder, allowed, comment, files = []) {
  const ok = [...new Set([folder, ...allowed])].join('|');
  return {
    name,
    comment,
    severity: 'error',
    from: { path: `^src/${folder}/` },
    to: { path: '^src/', pathNot: [`^src/(${ok})/`, ...files] },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    importsOnly('shared-is-a-leaf', 'shared', [], 'src/shared imports no other src folder.'),
    {
      name: 'shared-loads-no-library-runtime',
      comment: 'src/shared is safe in every thread: type-only imports of the heavy libraries only.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: 'node_modules/(piscina|dockerode|uWebSockets\\.js|etcd3)/', ...notTypeOnly },
    },
    {
      name: 'shared-does-no-io',
      comment: 'src/shared is pure and safe in any thread: no network, file, process or thread module of Node (src/io holds that I/O).',
      severity: 'error',
      from: { path: '^src/shared/', pathNot: kSharedIoExceptions },
      to: { dependencyTypes: ['core'], path: kIoModules, ...notTypeOnly },
    },
    {
      name: 'shared-io-exceptions-stay-narrow',
      comment:
        "the files of kSharedIoExceptions load node:net (address helpers) or node:fs (kube-protobuf's own definitions) and nothing else of kIoModules.",
      severity: 'error',
      from: { path: kSharedIoExceptions },
      to: { dependencyTypes: ['core'], path: kIoModules, pathNot: '^(node:)?(net|fs)$', ...notTypeOnly },
    },
    importsOnly(
      'io-imports-only-shared',
      'io',
      ['shared'],
      'src/io (host network and file I/O for the main thread and the workers) imports only src/shared.',
    ),
    importsOnly('etcd-imports-only-shared', 'etcd', ['shared'], "src/etcd (the etcd client, etcd3's home) imports only src/shared."),
    importsOnly(
      'workers-import-only-shared',
      'workers',
      ['shared', 'io'],
      'src/workers (piscina threads) imports only src/shared and src/io.',
    ),
    importsOnly(
      'server-imports-only-shared',
      'server',
      ['shared'],
      'src/server imports only src/shared; main implements the AgentHost it declares.',
    ),
    importsOnly(
      'main-reaches-workers-only-through-piscina',
      'main',
      ['shared', 'server', 'cli', 'io', 'etcd'],
      'src/main imports shared, server, io, etcd (and cli); workers run from their file name.',
    ),
    // The etcd commands build their client where etcd3 lives (one home for the library): src/etcd, not src/main.
    importsOnly(
      'cli-imports-shared-and-server',
      'cli',
      ['shared', 'server', 'etcd'],
      'the kubectl-like client (src/cli) imports shared and server (types), and the etcd client.',
    ),
    {
      name: 'no-circular-across-folders',
      comment: 'no import cycle leaves its top folder of src/ (the main ⇄ cli cycle through the etcd client, #41 item 3).',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { circular: true, via: { pathNot: '^src/$1/' } },
    },
    {
      name: 'no-folder-cycle',
      comment:
        'no folder cycle anywhere in src/ (#41: "the import graph shows no circle across folders"; a folder\'s own root files are that folder). ' +
        'What many folders use lives in a leaf below them (server/http/ and server/host/, workers/kubetypes/ and workers/runtime/container/, shared/, io/, etcd/); ' +
        'a lower folder declares the narrow interface it needs of an upper one (main/eviction/node-eviction.ts, main/pod/graceful-deletion.ts, main/status/pod-status-publisher.ts, server/authz/rbac.ts); ' +
        'main/options/ holds every flag block and imports only leaf value checks; the composition roots (main/agent*.ts, server/server.ts, workers/runtime/node-runtime.ts, the worker entries) are imported by no folder below them.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-import-of-a-parent-root',
      comment:
        "a module imports no file at the root of its parent folder (#41): a folder's root files are the composition root that wires its subfolders (main/agent*.ts, server/server.ts, workers/runtime/node-runtime.ts, the worker entries), so an import upwards closes a cycle through the root that the folder-scope rule above does not see (it treats a folder's root files and its subfolders as one). src/shared's leaves may use its errors.",
      severity: 'error',
      from: { path: '^(src/.+)/[^/]+/[^/]+$', pathNot: '^src/shared/' },
      to: { path: '^$1/[^/]+$' },
    },
    {
      name: 'dashboard-outside-server-cycles',
      comment:
        "no import cycle passes through the dashboard's file server (the server/auth ↔ dashboard/serve ↔ router circle, #41 item 3): auth and the router may use it, it uses neither.",
      severity: 'error',
      from: { path: '^src/server/' },
      to: { circular: true, via: { path: '^src/server/dashboard/' } },
    },
    {
      name: 'src-imports-no-tooling',
      comment: 'nothing in src/ imports bench/, tools/ or test/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(bench|tools|test)/' },
    },
    ...kLibraryHomes.map(({ library, home }) => ({
      name: `one-home-for-${library.replace(/\\/g, '')}`,
      comment: `${library.replace(/\\/g, '')} is loaded only under ${home.slice(1)} (type-only imports are allowed anywhere).`,
      severity: 'error',
      from: { path: '^src/', pathNot: home },
      to: { path: `node_modules/${library}/`, ...notTypeOnly },
    })),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
