// Replays the Dockerfile without a Docker engine: each stage in a folder of its own, COPY, RUN and
// ENV as written, then the last stage's CMD started as a non-root user and its HEALTHCHECK polled.
//   DATABASE_URL=postgres://... node scripts/run-dockerfile.mjs   (as root it switches to DOCKERFILE_USER, default nobody)
// Only the instructions our Dockerfile uses are understood; anything else stops with an error.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const lines = readFileSync(path.join(root, 'Dockerfile'), 'utf8')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

const work = mkdtempSync(path.join(tmpdir(), 'rd-dockerfile-'));
chmodSync(work, 0o755);
const stages = new Map();
let stage;
const user = process.env.DOCKERFILE_USER ?? 'nobody';
const asRoot = process.getuid?.() === 0;

const argv = (rest) => (rest.startsWith('[') ? JSON.parse(rest) : ['/bin/sh', '-c', rest]);
const inStage = (s, p) => path.join(s.root, path.isAbsolute(p) ? p : path.join(s.workdir, p));

function step(line) {
  const [instruction, ...words] = line.split(/\s+/);
  const rest = line.slice(instruction.length).trim();
  console.log(`== ${line.length > 120 ? `${line.slice(0, 117)}...` : line}`);
  switch (instruction.toUpperCase()) {
    case 'FROM': {
      const name = /\bAS\s+(\S+)/i.exec(rest)?.[1] ?? String(stages.size);
      stage = { name, root: path.join(work, name), workdir: '/', env: {}, user: 'root', cmd: undefined, healthcheck: undefined };
      mkdirSync(stage.root, { recursive: true, mode: 0o755 });
      stages.set(name, stage);
      return;
    }
    case 'WORKDIR':
      stage.workdir = rest;
      mkdirSync(inStage(stage, '.'), { recursive: true, mode: 0o755 });
      return;
    case 'ENV':
      for (const pair of words) {
        const [k, ...v] = pair.split('=');
        stage.env[k] = v.join('=');
      }
      return;
    case 'COPY': {
      const from = words[0].startsWith('--from=') ? stages.get(words.shift().slice('--from='.length)) : undefined;
      const dest = words.pop();
      for (const src of words) {
        const source = from ? inStage(from, src) : path.join(root, src);
        const target = dest.endsWith('/') ? path.join(inStage(stage, dest), path.basename(src)) : inStage(stage, dest);
        cpSync(source, target, { recursive: true });
      }
      return;
    }
    case 'RUN': {
      const result = spawnSync(argv(rest)[0], argv(rest).slice(1), {
        cwd: inStage(stage, '.'),
        env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/root', ...stage.env },
        stdio: 'inherit',
      });
      if (result.status !== 0) throw new Error(`RUN failed (${result.status}): ${rest}`);
      return;
    }
    case 'USER':
      stage.user = rest;
      return;
    case 'CMD':
      stage.cmd = argv(rest);
      return;
    case 'HEALTHCHECK':
      stage.healthcheck = argv(rest.slice(rest.indexOf('CMD') + 3).trim());
      return;
    case 'EXPOSE':
      return;
    default:
      throw new Error(`unsupported instruction: ${instruction}`);
  }
}

async function main() {
  for (const line of lines) step(line);
  const final = stage;
  if (final.user === 'root' || final.user === '0') throw new Error('the final stage must not run as root');
  if (!final.cmd || !final.healthcheck) throw new Error('the final stage needs CMD and HEALTHCHECK');
  // Everything is readable, nothing writable, by the process's user (as in the image).
  execFileSync('chmod', ['-R', 'a+rX,go-w', final.root]);
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const env = {
    PATH: process.env.PATH,
    ...final.env,
    PORT: port,
    HOST: '127.0.0.1',
    DATABASE_URL: process.env.DATABASE_URL,
    JWT_SECRET: process.env.JWT_SECRET ?? randomBytes(48).toString('base64url'),
    SMS_TRANSPORT: 'http',
    SMS_HTTP_URL: 'https://sms.example/send',
  };
  if (!env.DATABASE_URL) throw new Error('set DATABASE_URL (a PostgreSQL server the image would use)');
  // setpriv execs the command itself (no session wrapper), so SIGTERM reaches the server as in a container.
  const ids = () => execFileSync('id', ['-u', user]).toString().trim() + ':' + execFileSync('id', ['-g', user]).toString().trim();
  const [uidOf, gidOf] = asRoot ? ids().split(':') : [];
  const wrap = (cmd) => (asRoot ? ['setpriv', `--reuid=${uidOf}`, `--regid=${gidOf}`, '--clear-groups', '--', ...cmd] : cmd);
  const [bin, ...args] = wrap(final.cmd);
  console.log(`== start ${final.cmd.join(' ')} as ${asRoot ? user : 'the current user (not root: no switch)'}`);
  const child = spawn(bin, args, { cwd: inStage(final, '.'), env, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    let healthy = false;
    for (let i = 0; i < 60 && !healthy; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const [hb, ...ha] = wrap(final.healthcheck);
      healthy = spawnSync(hb, ha, { cwd: inStage(final, '.'), env, stdio: 'ignore' }).status === 0;
    }
    if (!healthy) throw new Error('HEALTHCHECK never passed');
    const uid = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)[1];
    if (asRoot && uid === '0') throw new Error('the server runs as root');
    console.log(`== healthy; the server process runs as uid ${uid}`);
  } finally {
    child.kill('SIGTERM');
  }
  const code = await exited;
  if (code !== 0) throw new Error(`the server exited with ${code} on SIGTERM`);
  console.log('== stopped cleanly');
}

main()
  .then(() => rmSync(work, { recursive: true, force: true }))
  .catch((err) => {
    console.error(`run-dockerfile: ${err.message}`);
    rmSync(work, { recursive: true, force: true });
    process.exit(1);
  });
