// Prints the top functions of a profile by self time (a .cpuprofile) or by bytes allocated (a
// .heapprofile, bench/flow-cpu.ts FLOW_HEAP): `node bench/profile-top.ts FILE [N]`. With FLOWS=n, a
// heap profile's bytes are also shown per flow (n: the flows of its measured rounds, FLOW_N × FLOW_ROUNDS).
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Node {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

// Paths from the checkout's root, whatever its directory (a worktree of another build too).
function nameOf(frame: CallFrame): string {
  const where = frame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(?=(src|bench|test)\/)/, '');
  return `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
}

const data = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as
  { nodes: Node[]; samples: number[]; timeDeltas: number[] } | { head: HeapNode };
const byFunction = new Map<string, number>();
let total = 0;
const add = (key: string, amount: number) => {
  total += amount;
  byFunction.set(key, (byFunction.get(key) ?? 0) + amount);
};
if ('head' in data) {
  const walk = (node: HeapNode) => {
    add(nameOf(node.callFrame), node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(data.head);
} else {
  const self = new Map<number, number>();
  data.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (data.timeDeltas[i] ?? 0)));
  for (const node of data.nodes) add(nameOf(node.callFrame), self.get(node.id) ?? 0);
}
const flows = Number(process.env.FLOWS ?? 0);
if ('head' in data && flows > 0) console.log(`${(total / flows).toFixed(0)} bytes allocated per flow`);
const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 25));
for (const [name, amount] of top) {
  const perFlow = 'head' in data && flows > 0 ? `${(amount / flows).toFixed(0).padStart(7)} B  ` : '';
  console.log(`${((100 * amount) / total).toFixed(1).padStart(5)}%  ${perFlow}${name}`);
}
