import { readFileSync, readdirSync } from 'node:fs';

/** One process as Linux's /proc/<pid>/stat tells it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  /** Clock ticks after boot: with the pid, identifies the process even if the pid is reused later. */
  startTime: string;
  state: string;
}

function stat(pid: number): ProcessEntry | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]), startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

/** Every process on the machine, now. */
export function processes(): ProcessEntry[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => stat(Number(name)))
    .filter((entry): entry is ProcessEntry => entry !== undefined);
}

/** The descendants of `root` (children, their children, …), now. */
export function descendants(root: number): ProcessEntry[] {
  const all = processes();
  const found: ProcessEntry[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = all.filter((entry) => frontier.includes(entry.ppid));
    found.push(...next);
    frontier = next.map((entry) => entry.pid);
  }
  return found;
}

/** Whether that very process (same pid, same start) still exists and is not a zombie. */
export function alive(entry: ProcessEntry): boolean {
  const now = stat(entry.pid);
  return now !== undefined && now.startTime === entry.startTime && now.state !== 'Z';
}

/** A process's command line (arguments joined by spaces), or '' once it is gone: for messages only. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
