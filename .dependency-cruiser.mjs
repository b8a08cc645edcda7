// dependency-cruiser, run by `npm run lint`: no import cycle in src/, type imports included. An
// `import type` vanishes when Node strips the types, so a circle closed by one does no harm at run
// time, but it still ties the files into one knot to read and change: the types every part names (a
// factor, a request's requirement, the acr levels) stand in files that import no list of steps
// (docs/architecture.md).
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module of src/ imports itself through others: break the circle.',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    includeOnly: '^src/',
    // Read the TypeScript as written, so that type-only imports are seen, and known, as such.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
