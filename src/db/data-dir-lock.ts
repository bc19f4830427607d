// The embedded database serves one process: a second one on the same files would overwrite the
// first one's writes. A lock file holds the owner's pid and, where /proc tells it, the pid's start
// time; a lock whose process is gone is taken over. Gone includes a zombie (killed, not yet reaped:
// `kill(pid, 0)` still finds it) and a pid now used by another program (another start time).
import { readFileSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly lockFile: string,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another process (pid ${pid}): the embedded database serves one process only. ` +
        `Stop that process, give this one another DATA_DIR, or set DATABASE_URL to share a PostgreSQL server. ` +
        `If no such process runs, delete ${lockFile}.`,
    );
    this.name = 'DataDirInUseError';
  }
}

/** How long a live owner is given to go (a supervisor restarting while the old process still shuts down). */
const LOCK_WAIT_MS = 5000;
const POLL_MS = 100;

interface Owner {
  pid: number;
  /** /proc/<pid>/stat's starttime (clock ticks since boot) when the lock was taken; absent in old locks and without /proc. */
  startTime: string | undefined;
}

/** Linux: the pid's state letter and start time, or undefined (no such pid, or no /proc). */
function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command name) is in parentheses and may itself hold spaces and parentheses.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

function gone(owner: Owner): boolean {
  const stat = procStat(owner.pid);
  if (stat) {
    // Z: exited, waiting for its parent to reap it; X/x: being torn down.
    if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return true;
    return owner.startTime !== undefined && owner.startTime !== stat.startTime;
  }
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

async function readOwner(lockFile: string): Promise<Owner | undefined> {
  try {
    const [first, second] = (await readFile(lockFile, 'utf8')).split('\n');
    const pid = Number.parseInt(first ?? '', 10);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    return { pid, startTime: second && /^\d+$/.test(second) ? second : undefined };
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Takes the lock for `dataDir` (DATA_DIR, named in the error) in `lockFile`; returns its release.
 * A live owner is waited for up to `waitMs` before the lock is refused.
 */
export async function lockDataDir(
  dataDir: string,
  lockFile: string,
  options: { waitMs?: number } = {},
): Promise<() => Promise<void>> {
  const startTime = procStat(process.pid)?.startTime;
  const record = `${process.pid}\n${startTime === undefined ? '' : `${startTime}\n`}`;
  const deadline = performance.now() + (options.waitMs ?? LOCK_WAIT_MS);
  let takeovers = 0;
  let sawUnreadable = false;
  for (;;) {
    try {
      await writeFile(lockFile, record, { flag: 'wx', mode: 0o644 });
      break;
    } catch (err) {
      // Bounded: two processes taking over the same stale lock at once may each remove the other's.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || takeovers >= 3) throw err;
    }
    const owner = await readOwner(lockFile);
    // An empty file may be another process's lock being written: look again before taking it over.
    if (owner === undefined && !sawUnreadable) {
      sawUnreadable = true;
      await sleep(200);
      continue;
    }
    // Our own pid in the file is a lock left by an earlier process that had the same pid (a container's).
    if (owner !== undefined && owner.pid !== process.pid && !gone(owner)) {
      if (performance.now() >= deadline) throw new DataDirInUseError(dataDir, owner.pid, lockFile);
      await sleep(POLL_MS);
      continue;
    }
    takeovers++;
    await unlink(lockFile).catch(() => undefined);
  }
  return async () => {
    if ((await readOwner(lockFile))?.pid === process.pid) await unlink(lockFile).catch(() => undefined);
  };
}
