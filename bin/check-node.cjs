// Before any TypeScript is loaded: is this Node.js new enough to run Tessera? Plain CommonJS, so that
// it runs on every Node.js still in use (18 and later) and says what to do instead of failing with
// ERR_UNKNOWN_FILE_EXTENSION. Preloaded by every npm script (`node -r ./bin/check-node.cjs …`) and
// required first by bin/tessera.js.
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const needed = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).engines.node.replace(
  /^>=\s*/,
  '',
);
const [major, minor] = process.versions.node.split('.').map(Number);
const [neededMajor, neededMinor = 0] = needed.split('.').map(Number);
if (major < neededMajor || (major === neededMajor && minor < neededMinor)) {
  process.stderr.write(
    `tessera: this is Node.js ${process.versions.node}; Tessera needs Node.js ${needed} or later.\n` +
      'The project pins it as the devDependency "node", whose install script did not run (npm blocks install\n' +
      'scripts it has not approved, and --ignore-scripts skips them all). Either:\n' +
      '  npm install-scripts approve node && npm rebuild node   (or install with: npm ci --allow-scripts=node)\n' +
      `  or install Node.js ${neededMajor} on the machine (https://nodejs.org; production installs do, with\n` +
      '  npm ci --omit=dev: docs/deployment.md) and run this again.\n',
  );
  process.exit(1);
}
