// dependency-cruiser, run by `npm run lint`: no import cycle in src/. A cycle counts only through
// imports that stay at run time: an `import type` vanishes when Node strips the types, so a circle
// closed by one is none (DESIGN.md §4, docs/architecture.md).
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module of src/ imports itself through others: break the circle.',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    includeOnly: '^src/',
    // Read the TypeScript as written, so that type-only imports are seen, and known, as such.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
