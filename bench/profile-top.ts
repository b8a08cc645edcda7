// Prints the top functions of a .cpuprofile by self time: `node bench/profile-top.ts FILE [N]`.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const byFunction = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const time = self.get(node.id) ?? 0;
  total += time;
  // Paths from the checkout's root, whatever its directory (a worktree of another build too).
  const where = node.callFrame.url
    .replace(/^.*node_modules\//, '')
    .replace(/^file:\/\/.*?\/(?=(src|bench|test)\/)/, '');
  const key = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + time);
}
const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 25));
for (const [name, time] of top) console.log(`${((100 * time) / total).toFixed(1).padStart(5)}%  ${name}`);
