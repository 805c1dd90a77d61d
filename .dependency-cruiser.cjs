// .dependency-cruiser.cjs — `npm run lint`: the import direction and the library homes of the
// module map (STYLE.md §1; docs/contracts.md "Source layout"):
//
//   src/main ──► src/server ──► src/shared ◄── src/workers        (src/cli: shared and server)
//
// dependency-cruiser resolves every import to a file, so the rules name folders, not import strings.
// `tsPreCompilationDeps` keeps type-only imports in the graph (tagged `type-only`), so that `shared`
// may say `import type … from 'piscina'` while a runtime import stays an error.

/** Runtime libraries and the only folders (or files) that may load them. */
const kLibraryHomes = [
  { library: 'piscina', home: '^src/main/pool/' },
  { library: 'dockerode', home: '^src/workers/runtime/' },
  { library: 'uWebSockets\\.js', home: '^src/server/' },
  // STYLE.md names source-etcd.ts and etcd-status-writer.ts; the real home is the client wrapper
  // src/main/etcd/ (client.ts), which those two use. No other file loads etcd3.
  { library: 'etcd3', home: '^src/main/etcd/' },
];

/**
 * Imports that break a rule today only because another branch of issue 10 has not landed yet.
 * Each entry names the file; delete it when that branch is merged.
 */
const kPendingExceptions = [
  // dockerode in the GC worker: moves behind the ContainerRuntime interface
  // until the runtime-seam branch lands.
  'src/workers/gc\\.ts',
];

const notTypeOnly = { dependencyTypesNot: ['type-only'] };

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'shared-is-a-leaf',
      comment: 'src/shared imports no other src folder.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'shared-loads-no-library-runtime',
      comment: 'src/shared is safe in every thread: type-only imports of the heavy libraries only.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: 'node_modules/(piscina|dockerode|uWebSockets\\.js|etcd3)/', ...notTypeOnly },
    },
    {
      name: 'workers-import-only-shared',
      comment: 'src/workers (piscina threads) imports only src/shared.',
      severity: 'error',
      from: { path: '^src/workers/' },
      to: { path: '^src/', pathNot: '^src/(shared|workers)/' },
    },
    {
      name: 'server-imports-only-shared',
      comment: 'src/server imports only src/shared; main implements the AgentHost it declares.',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/', pathNot: '^src/(shared|server)/' },
    },
    {
      name: 'main-reaches-workers-only-through-piscina',
      comment: 'src/main imports shared and server (and cli); workers run from their file name.',
      severity: 'error',
      from: { path: '^src/main/' },
      to: { path: '^src/', pathNot: '^src/(shared|server|main|cli)/' },
    },
    {
      name: 'cli-imports-shared-and-server',
      comment: 'the kubectl-like client (src/cli) imports shared and server (types).',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/', pathNot: '^src/(shared|server|cli)/' },
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
      from: { path: '^src/', pathNot: [home, ...kPendingExceptions] },
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
