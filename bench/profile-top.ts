/**
 * The top functions of a V8 CPU profile (node --cpu-prof) by self time, each with its file:line and,
 * given how many requests the process answered, its µs per request; then the time by group: ours
 * (the repository's own files), each dependency (node_modules), Node's internals, and V8's own
 * (compiling, garbage collection). Idle time (the process waiting on its sockets) is left out.
 *
 *   BENCH_PROFILE_DIR=/tmp/p npm run bench     # prints this for each Keyward and floor profile
 *   npm exec -- tsx bench/profile-top.ts /tmp/p/keyward-sqlite.cpuprofile [requests] [count]
 *
 * Alone, it counts only the measured loads where the bench left their spans beside the profile
 * (keyward-sqlite.windows.json), unless a number of requests is given: then the whole profile.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Spans of a process's life to count, in µs of the monotonic clock V8 stamps its samples with (the
 * clock of process.hrtime on Linux), with the requests the process answered in them: the bench's
 * measured loads, so that start-up, checks and warm-ups do not count.
 */
export interface Windows {
  spans: { from: number; to: number }[];
  requests: number;
}

/** Now on the clock of Windows' spans. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

interface Entry {
  name: string;
  where: string;
  group: string;
  micros: number;
}

/** Which part of the process a frame belongs to: ours, a dependency (by package), Node, or V8. */
function groupOf(url: string, functionName: string): string {
  if (!url) return /^\(.*\)$/.test(functionName) ? 'V8 (program, GC)' : 'Node internals';
  if (url.startsWith('node:')) return 'Node internals';
  const dependency = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return dependency ? `dep ${dependency[1]}` : 'ours';
}

function place(url: string, lineNumber: number): string {
  if (!url) return '';
  const path = url.startsWith('file://') ? relative(process.cwd(), fileURLToPath(url)) : url;
  // A dependency by its package path: node_modules may be a link to another tree.
  const inPackage = path.lastIndexOf('node_modules/');
  return `${inPackage >= 0 ? path.slice(inPackage + 'node_modules/'.length) : path}:${lineNumber + 1}`;
}

/** Self time by function (name and place), in µs, idle left out; only inside `spans` when given. */
function selfTimes(profile: CpuProfile, spans?: Windows['spans']): { entries: Entry[]; idle: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, Entry>();
  let idle = 0;
  let at = profile.startTime;
  // A sample's time is the gap to the next one (as Chrome's DevTools counts it).
  for (let i = 0; i < profile.samples.length; i += 1) {
    at += profile.timeDeltas[i]!;
    if (spans && !spans.some((s) => s.from <= at && at < s.to)) continue;
    const micros = profile.timeDeltas[i + 1] ?? 0;
    const { functionName, url, lineNumber } = byId.get(profile.samples[i]!)!.callFrame;
    if (functionName === '(idle)') {
      idle += micros;
      continue;
    }
    const where = place(url, lineNumber);
    const key = `${functionName}@${where}`;
    const entry = byFunction.get(key) ?? { name: functionName || '(anonymous)', where, group: groupOf(url, functionName), micros: 0 };
    entry.micros += micros;
    byFunction.set(key, entry);
  }
  return { entries: [...byFunction.values()].sort((a, b) => b.micros - a.micros), idle };
}

/**
 * The report's lines: the top `count` functions, then the time by group. With `windows`, only the
 * samples inside them count, divided by their requests; otherwise the whole profile, divided by
 * `requests` where given.
 */
export function topFunctions(profile: CpuProfile, requests?: number, count = 10, windows?: Windows): string[] {
  const counted = windows ? selfTimes(profile, windows.spans) : null;
  // No sample inside the windows would mean the clocks disagree: then the whole profile, said so.
  const inWindows = counted !== null && counted.entries.length > 0;
  const { entries, idle } = inWindows ? counted : selfTimes(profile);
  if (inWindows) requests = windows!.requests;
  const busy = entries.reduce((sum, e) => sum + e.micros, 0);
  const perRequest = (micros: number) => (requests ? `${(micros / requests).toFixed(1).padStart(6)} µs/req` : '');
  const share = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `${inWindows ? 'measured loads only' : windows ? 'whole profile (no sample fell in the measured loads)' : 'whole profile'}: ` +
      `top ${count} by self time, of ${(busy / 1000).toFixed(0)} ms busy (${(idle / 1000).toFixed(0)} ms idle left out)` +
      (requests ? `, ${perRequest(busy).trim()} in all over ${requests} requests:` : ':'),
  ];
  for (const [i, e] of entries.slice(0, count).entries()) {
    lines.push(`${String(i + 1).padStart(3)}. ${share(e.micros)} ${perRequest(e.micros)}  ${e.group.padEnd(22)} ${e.name} ${e.where}`);
  }
  const groups = new Map<string, number>();
  for (const e of entries) groups.set(e.group, (groups.get(e.group) ?? 0) + e.micros);
  lines.push('by group:');
  for (const [group, micros] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    lines.push(`     ${share(micros)} ${perRequest(micros)}  ${group}`);
  }
  return lines;
}

/** A profile written by a process that has stopped, named for what it profiled. */
export interface Profiled {
  label: string;
  file: string;
  answered: number;
  windows: Windows;
}

/**
 * The profile the process `pid` wrote into `dir` (node --cpu-prof), renamed `<label>.cpuprofile`, with
 * the spans of its measured loads beside it (`<label>.windows.json`, read by the command below); null
 * where it wrote none. The largest of the pid's: `keyward serve` replaces itself with a Node started
 * with its young generation's size (bin/keyward.js), and the Node it replaced writes a short profile
 * under the same pid (removed here).
 */
export function takeProfile(dir: string, label: string, pid: number, answered: number, windows: Windows): Profiled | null {
  // Node names them CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile.
  const [written, ...others] = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile') && name.split('.')[3] === String(pid))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size);
  if (!written) return null;
  for (const other of others) rmSync(join(dir, other));
  const file = join(dir, `${label}.cpuprofile`);
  renameSync(join(dir, written), file);
  writeFileSync(join(dir, `${label}.windows.json`), JSON.stringify(windows));
  return { label, file, answered, windows };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, requests, count] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/profile-top.ts <file.cpuprofile> [requests answered] [how many functions]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  // The bench writes the measured loads' spans beside each profile it names.
  const sidecar = file.replace(/\.cpuprofile$/, '.windows.json');
  const windows = !requests && existsSync(sidecar) ? (JSON.parse(readFileSync(sidecar, 'utf8')) as Windows) : undefined;
  console.log(topFunctions(profile, requests ? Number(requests) : undefined, count ? Number(count) : 10, windows).join('\n'));
}
