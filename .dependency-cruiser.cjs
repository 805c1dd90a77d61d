// .dependency-cruiser.cjs — `npm run lint`: the import direction and the library homes of the
// module map (STYLE.md §1 of the design notes; README "Architecture"):
//
//   src/main ──► src/server ──► src/shared ◄── src/workers        (src/cli: shared and server)
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
  // src/main/etcd/ (client.ts), which those two use. No other file loads etcd3.
  { library: 'etcd3', home: '^src/main/etcd/' },
  { library: 'selfsigned', home: '^src/main/serving-cert\\.ts$' },
  // The Kubernetes protobuf envelope of request bodies kubectl's typed clients send, and the wire
  // Writer of the /openapi/v2 protobuf (shared/kube-protobuf.ts, a codec safe in any thread).
  { library: 'protobufjs', home: '^src/shared/kube-protobuf\\.ts$' },
];

const notTypeOnly = { dependencyTypesNot: ['type-only'] };

/**
 * importsOnly: a rule that files under src/FOLDER import no src folder but `allowed` (and FOLDER),
 * nor any file but those matched by `files` (path regexps) elsewhere.
 */
function importsOnly(name, folder, allowed, comment, files = []) {
  const ok = [...new Set([folder, ...allowed])].join('|');
  return { name, comment, severity: 'error', from: { path: `^src/${folder}/` }, to: { path: '^src/', pathNot: [`^src/(${ok})/`, ...files] } };
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
    importsOnly('workers-import-only-shared', 'workers', ['shared'], 'src/workers (piscina threads) imports only src/shared.'),
    importsOnly('server-imports-only-shared', 'server', ['shared'], 'src/server imports only src/shared; main implements the AgentHost it declares.'),
    importsOnly('main-reaches-workers-only-through-piscina', 'main', ['shared', 'server', 'cli'], 'src/main imports shared and server (and cli); workers run from their file name.'),
    // The etcd commands build their client where etcd3 lives (one home for the library).
    importsOnly('cli-imports-shared-and-server', 'cli', ['shared', 'server'], 'the kubectl-like client (src/cli) imports shared and server (types), and the etcd client factory.', ['^src/main/etcd/client\\.ts$']),
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
