// The embedded database serves one process: a second one on the same files would overwrite the
// first one's writes. A lock file holds the owner's pid; a lock whose process is gone is taken over.
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function owner(lockFile: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(lockFile, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the lock for `dataDir` (DATA_DIR, named in the error) in `lockFile`; returns its release. */
export async function lockDataDir(dataDir: string, lockFile: string): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(lockFile, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
    }
    const pid = await owner(lockFile);
    // An empty file may be another process's lock being written: look again before taking it over.
    if (pid === undefined && attempt === 0) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    // Our own pid in the file is a lock left by an earlier process that had the same pid (a container's).
    if (pid !== undefined && pid !== process.pid && alive(pid)) throw new DataDirInUseError(dataDir, pid, lockFile);
    await unlink(lockFile).catch(() => undefined);
  }
  return async () => {
    if ((await owner(lockFile)) === process.pid) await unlink(lockFile).catch(() => undefined);
  };
}
