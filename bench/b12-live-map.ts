// B12: the console's live map (the admin's /map page) in Chromium with BENCH_DRIVERS online drivers
// (5,000) in one area, every one of them posting a new position every 3 s (open loop over HTTP,
// 1,667 positions/s). Two views, BENCH_DURATION seconds measured in each: the whole area (every
// driver in view, clustered) and a zoomed-in street view (BENCH_ZOOM, 16: downtown, every driver a
// single marker). Measured in the page: the intervals between animation frames (a
// requestAnimationFrame loop), long tasks (PerformanceObserver 'longtask'), the main thread's time
// (CDP Performance metrics), the JS heap, the stream's events, and the markers' moves; at the end of
// each view the posting pauses and every marker the map holds is compared with the last position its
// driver posted, the drawn single markers with the positions on the screen, the cluster icons with
// their counts. A second follower of the same stream (in this process) shows what the server sent:
// the page must have received just as much.
//
// "Smooth", decided before the first run: in each view, frame interval p95 ≤ 34 ms (at most one
// 60 Hz frame dropped) and p99 ≤ 50 ms, no long task over 100 ms, at most 5 % of the time in long
// tasks; and nothing lost: the page receives every driver entry the server's stream sends and ends
// with every marker where its driver last posted.
//
// Usage: BENCH_DATABASE_URL=postgres://... npx tsx bench/b12-live-map.ts
//   (BENCH_DRIVERS=5000, BENCH_DURATION=60 s per view, BENCH_ZOOM=16; BENCH_CPU_PROFILE=dir writes a
//   CPU profile of the page per view, BENCH_SCREENSHOTS=dir a screenshot at the end of each;
//   CHROMIUM_PATH overrides the chromium found on PATH)
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { Pool } from 'undici';
import { CENTRE, SPREAD_DEG, machine, startServer } from './lib/harness.js';

const drivers = Number(process.env.BENCH_DRIVERS ?? 5000);
const duration = Number(process.env.BENCH_DURATION ?? 60);
const zoomIn = Number(process.env.BENCH_ZOOM ?? 16);
const profileDir = process.env.BENCH_CPU_PROFILE;
const PERIOD_MS = 3000;
const TICK_MS = 3000; // TRACKING_INTERVAL, the default
const WARMUP_MS = 2 * TICK_MS + 1000;
/** How far a driver moves between two posts, at most, each way: about 30 m (36 km/h). */
const STEP_DEG = 0.00027;
const SMOOTH = { frameP95Ms: 34, frameP99Ms: 50, longTaskMaxMs: 100, longTaskShare: 0.05 };

const chromiumPath =
  process.env.CHROMIUM_PATH ||
  ['chromium', 'chromium-browser', 'google-chrome']
    .map((name) => {
      try {
        return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    })
    .find(Boolean);
if (!chromiumPath) throw new Error('no Chromium on PATH (apt-get install chromium)');

const { buildWeb, staleReason } = await import('../scripts/build-web.mjs');
if (staleReason()) {
  const built = buildWeb();
  if (!built.ok) throw new Error(`the console does not build: ${built.message}`);
}

const pct = (values: number[], p: number) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
};
const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

const server = await startServer('app', {
  BENCH_DRIVERS: String(drivers),
  BENCH_SESSIONS: String(drivers),
  BENCH_ADMIN: '1',
  DISPATCH_MODE: 'off',
  TRACKING_INTERVAL: `${TICK_MS}ms`,
});
// A failed run must not leave its server behind.
process.on('exit', () => server.child.exitCode === null && server.child.kill());
const base = `http://127.0.0.1:${server.port}`;
const auth = server.info.auth as { driverId: string; token: string }[];
const admin = server.info.admin as { refreshToken: string; token: string };
const pool = new Pool(base, { connections: 64 });

// ---- the drivers: one position each in the area, then a random walk -----------------------------
const fixed = (v: number) => Number(v.toFixed(6));
const clampTo = (v: number, centre: number) => Math.min(centre + SPREAD_DEG, Math.max(centre - SPREAD_DEG, v));
// As in a city: 60 % downtown (normal, σ 3.3 km), the rest around it (σ 10 km), all in the area. The
// zoomed-in view downtown then holds many single markers.
const normal = () => Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
const where = auth.map(() => {
  const sigma = Math.random() < 0.6 ? 0.03 : SPREAD_DEG / 3;
  return {
    lat: fixed(clampTo(CENTRE.lat + normal() * sigma, CENTRE.lat)),
    lng: fixed(clampTo(CENTRE.lng + normal() * sigma, CENTRE.lng)),
  };
});
interface Post {
  driver: number;
  at: string;
  lat: number;
  lng: number;
  t: number;
}
const posts: Post[] = [];
let postErrors = 0;
const post = async (driver: number) => {
  const p = where[driver]!;
  const at = new Date().toISOString();
  posts.push({ driver, at, lat: p.lat, lng: p.lng, t: performance.now() });
  try {
    const res = await pool.request({
      method: 'POST',
      path: '/api/drivers/me/location',
      headers: { authorization: `Bearer ${auth[driver]!.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lat: p.lat, lng: p.lng, recordedAt: at }),
    });
    await res.body.dump();
    if (res.statusCode !== 204) postErrors += 1;
  } catch {
    postErrors += 1;
  }
};
for (let i = 0; i < auth.length; i += 100) await Promise.all(auth.slice(i, i + 100).map((_, j) => post(i + j)));

/** Every driver posts every 3 s (evenly spread, open loop) until stopped. */
function startPosting() {
  let stopped = false;
  const inflight = new Set<Promise<void>>();
  const rate = auth.length / (PERIOD_MS / 1000);
  const start = performance.now();
  let n = 0;
  let late = 0;
  const done = (async () => {
    while (!stopped) {
      const due = start + (n * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      else if (wait < -100) late += 1;
      const driver = n % auth.length;
      const p = where[driver]!;
      p.lat = fixed(clampTo(p.lat + (Math.random() - 0.5) * 2 * STEP_DEG, CENTRE.lat));
      p.lng = fixed(clampTo(p.lng + (Math.random() - 0.5) * 2 * STEP_DEG, CENTRE.lng));
      const sent = post(driver);
      inflight.add(sent);
      void sent.finally(() => inflight.delete(sent));
      n += 1;
    }
    await Promise.all(inflight);
  })();
  return async () => {
    stopped = true;
    await done;
    return { posted: n, perSecond: Math.round(n / ((performance.now() - start) / 1000)), lateOver100Ms: late };
  };
}

// ---- the server's side: a follower of the same stream, in this process ---------------------------
function follow(streamPath: string) {
  const url = new URL(streamPath, base);
  url.searchParams.set('access_token', admin.token);
  const received = new Set<string>();
  const lags: number[] = [];
  const counts: number[] = [];
  const arrivals: number[] = [];
  let entries = 0;
  let removed = 0;
  const controller = new AbortController();
  let snapshot = () => undefined as void;
  const ready = new Promise<void>((resolve) => (snapshot = resolve));
  const reading = (async () => {
    const res = await fetch(url, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
    if (res.status !== 200) throw new Error(`the stream answered ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (\w+)/m.exec(block)?.[1];
        if (name === 'snapshot') snapshot();
        if (name !== 'positions') continue;
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as {
          drivers: { driverId: string; updatedAt: string }[];
          removed: string[];
        };
        const now = Date.now();
        counts.push(data.drivers.length);
        arrivals.push(performance.now());
        entries += data.drivers.length;
        removed += data.removed.length;
        for (const d of data.drivers) {
          received.add(`${d.driverId}|${d.updatedAt}`);
          lags.push(now - Date.parse(d.updatedAt));
        }
      }
    }
  })().catch((err: Error) => {
    if (err.name !== 'AbortError') throw err;
  });
  return {
    received,
    ready,
    stop: async () => {
      controller.abort();
      await reading;
      const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
      return {
        events: counts.length,
        counts,
        driverEntries: entries,
        removed,
        eventIntervalMs: { p50: pct(gaps, 50), max: pct(gaps, 100) },
        postToEventMs: { p50: pct(lags, 50), p99: pct(lags, 99), max: pct(lags, 100) },
      };
    },
  };
}

// ---- the page ---------------------------------------------------------------------------------
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--no-first-run',
    '--enable-precise-memory-info',
  ],
});
const chromiumVersion = browser.version();
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
// tsx (esbuild, keepNames) wraps the functions given to the page in __name(): harmless there.
await context.addInitScript({ content: 'globalThis.__name = (f) => f;' });
// The console restores a tab's session from the refresh token in sessionStorage (as after a reload):
// the bench's admin session is put there before the page loads. Then the instruments.
await context.addInitScript((refreshToken: string) => {
  sessionStorage.setItem('console.refreshToken', refreshToken);
  const bench = {
    map: undefined as any,
    group: undefined as any,
    recording: false,
    frames: [] as number[],
    longTasks: [] as { start: number; duration: number }[],
    loafs: [] as { start: number; duration: number; blocking: number }[],
    stream: {
      url: '',
      opened: 0,
      snapshots: 0,
      snapshotAt: 0,
      events: 0,
      driverEntries: 0,
      bytes: 0,
      arrivals: [] as number[],
      counts: [] as number[],
    },
    moves: 0,
    /** When the markers moved (frames in which some did), to see how long a tick takes to apply. */
    moveFrames: [] as number[],
    lastMoves: 0,
  };
  (window as any).__b12 = bench;
  // Two properties only Leaflet's map (`_containerId`) and the cluster group (`_featureGroup`) set
  // on themselves, once, when they are built: a setter for them on Object.prototype hands the bench
  // the map and the group without any hook in the console's code (Leaflet never tests for them
  // with `in`; the setter turns them into plain own properties at once).
  const capture = (name: string, keep: (self: any) => void) =>
    Object.defineProperty(Object.prototype, name, {
      configurable: true,
      get() {
        return undefined;
      },
      set(value) {
        Object.defineProperty(this, name, { value, writable: true, configurable: true, enumerable: true });
        keep(this);
      },
    });
  capture('_containerId', (self) => (bench.map = self));
  capture('_featureGroup', (self) => (bench.group = self));
  let last = 0;
  const frame = (t: number) => {
    if (bench.recording && last) bench.frames.push(t - last);
    if (bench.recording && bench.moves !== bench.lastMoves) bench.moveFrames.push(t);
    bench.lastMoves = bench.moves;
    last = t;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) bench.longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  if (PerformanceObserver.supportedEntryTypes.includes('long-animation-frame')) {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        bench.loafs.push({ start: e.startTime, duration: e.duration, blocking: (e as any).blockingDuration ?? 0 });
    }).observe({ type: 'long-animation-frame', buffered: true });
  }
  // What the page's stream brings: events, driver entries (counted in the text, not parsed twice).
  const Native = window.EventSource;
  window.EventSource = class extends Native {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      bench.stream.url = String(url);
      bench.stream.opened += 1;
      this.addEventListener('snapshot', () => {
        bench.stream.snapshots += 1;
        bench.stream.snapshotAt = performance.now();
      });
      this.addEventListener('positions', (e) => {
        const data = (e as MessageEvent<string>).data;
        let n = 0;
        for (let i = data.indexOf('"driverId"'); i >= 0; i = data.indexOf('"driverId"', i + 1)) n += 1;
        bench.stream.events += 1;
        bench.stream.driverEntries += n;
        bench.stream.bytes += data.length;
        bench.stream.arrivals.push(performance.now());
        bench.stream.counts.push(n);
      });
    }
  };
}, admin.refreshToken);
const page = await context.newPage();
const pageErrors: string[] = [];
page.on('pageerror', (err) => pageErrors.push(err.message));
// No tile server: every tile is a blank 1×1 image (Leaflet stretches it), loaded as if from the network.
const BLANK_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==',
  'base64',
);
await page.route(/tile\.openstreetmap\.org/, (route) =>
  route.fulfill({ status: 200, contentType: 'image/png', body: BLANK_PNG }),
);
const cdp = await context.newCDPSession(page);
await cdp.send('Performance.enable');
await page.goto(`${base}/map`);
await page.getByRole('heading', { name: 'Live map' }).waitFor({ timeout: 30_000 });
await page.locator('.page-head .live-live').waitFor({ timeout: 30_000 });
await page
  .waitForFunction(() => (window as any).__b12.map && (window as any).__b12.group, undefined, { timeout: 10_000 })
  .catch(async (err: Error) => {
    const state = await page.evaluate(() => ({
      bench: typeof (window as any).__b12,
      map: !!(window as any).__b12?.map,
      group: !!(window as any).__b12?.group,
      main: document.querySelector('main')?.textContent,
    }));
    throw new Error(`${err.message}: ${JSON.stringify(state)} ${pageErrors.join('; ')}`);
  });

const metrics = async () =>
  Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value])) as Record<
    string,
    number
  >;
const inPage = <T>(fn: (b: any) => T): Promise<T> => page.evaluate(`(${fn.toString()})(window.__b12)`);

async function setView(
  change: string,
  view: { bounds?: [[number, number], [number, number]]; centre?: [number, number]; zoom?: number },
) {
  const opened = await inPage((b) => b.stream.opened);
  await page.evaluate(
    ({ change, view }) => {
      const b = (window as any).__b12;
      if (change === 'fit') b.map.fitBounds(view.bounds, { animate: false });
      else b.map.setView(view.centre, view.zoom, { animate: false });
    },
    { change, view },
  );
  // The page reopens its stream for the new area 0.4 s after the map settles; then the snapshot.
  await page.waitForFunction(
    (n) =>
      (window as any).__b12.stream.opened > n &&
      (window as any).__b12.stream.snapshots >= (window as any).__b12.stream.opened,
    opened,
    { timeout: 30_000 },
  );
  // The snapshot on the map: the group holds as many markers as the page counts drivers in view.
  await page.waitForFunction(
    () => {
      const b = (window as any).__b12;
      const n = Number(
        /^(\d+) drivers? in view/.exec(document.querySelector('main p[role="status"]')?.textContent ?? '')?.[1],
      );
      return n > 0 && b.group.getLayers().length === n;
    },
    undefined,
    { timeout: 30_000 },
  );
  return inPage((b) => {
    const tasks = b.longTasks.filter((l: { start: number }) => l.start >= b.stream.snapshotAt);
    return {
      snapshotOnTheMapMs: Math.round(performance.now() - b.stream.snapshotAt),
      markers: b.group.getLayers().length,
      longTasks: {
        count: tasks.length,
        maxMs: Math.round(Math.max(0, ...tasks.map((l: { duration: number }) => l.duration))),
      },
    };
  });
}

interface ViewResult {
  [key: string]: unknown;
}

async function measureView(name: string, load: unknown): Promise<ViewResult> {
  const streamUrl = new URL(await inPage((b) => b.stream.url));
  streamUrl.searchParams.delete('access_token');
  const bbox = streamUrl.searchParams.get('bbox')!.split(',').map(Number) as [number, number, number, number];
  const follower = follow(streamUrl.pathname + streamUrl.search);
  await follower.ready;
  const pageEventsAtFollow = await inPage((b) => b.stream.counts.length);
  const stopPosting = startPosting();
  await sleep(WARMUP_MS);
  if (profileDir) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  const before = await metrics();
  const loadBefore = os.loadavg()[0]!;
  const pageStart = await inPage((b) => {
    b.frames.length = 0;
    b.moveFrames.length = 0;
    b.moves = 0;
    b.lastMoves = 0;
    b.recording = true;
    return { t: performance.now(), events: b.stream.events, entries: b.stream.driverEntries, bytes: b.stream.bytes };
  });
  const wallStart = performance.now();
  await sleep(duration * 1000);
  const pageEnd = await inPage((b) => {
    b.recording = false;
    return {
      t: performance.now(),
      events: b.stream.events,
      entries: b.stream.driverEntries,
      bytes: b.stream.bytes,
      moves: b.moves,
      moveFrames: b.moveFrames.slice(),
      arrivals: b.stream.arrivals.slice(),
      frames: b.frames.slice(),
      longTasks: b.longTasks.slice(),
      loafs: b.loafs.slice(),
    };
  });
  const after = await metrics();
  if (profileDir) {
    const { profile } = await cdp.send('Profiler.stop');
    mkdirSync(profileDir, { recursive: true });
    writeFileSync(path.join(profileDir, `b12-${name}.cpuprofile`), JSON.stringify(profile));
  }
  const loadDuring = os.loadavg()[0]!;
  const posting = await stopPosting();
  // Everything posted has reached the stream after one more tick; the page applies it within frames.
  await sleep(TICK_MS + 2000);
  const server = await follower.stop();
  // The two followers get the same ticks; the first one after the bench's follower opened may differ
  // (what changed between the page's last event and the follower's snapshot): compared from the second.
  const pageCounts = (await inPage((b) => b.stream.counts.slice())).slice(pageEventsAtFollow);
  const { counts: serverCounts, ...serverStream } = server;
  const compared = serverCounts.slice(1);
  const pageGotAll = pageCounts.length === serverCounts.length && compared.every((n, i) => pageCounts[i + 1] === n);

  // Every marker the map holds against its driver's last post; the drawn single markers against the
  // last posts on the screen (within a pixel).
  const last = new Map<number, Post>();
  for (const p of posts) last.set(p.driver, p);
  const lastKeys = [...last.values()].map((p) => `${p.lat.toFixed(6)},${p.lng.toFixed(6)}`);
  const check = await page.evaluate((keys) => {
    const b = (window as any).__b12;
    const wanted = new Set(keys);
    let held = 0;
    let matched = 0;
    for (const m of b.group.getLayers()) {
      if (!String(m.options?.className).startsWith('marker-driver')) continue;
      held += 1;
      const at = m.getLatLng();
      if (wanted.has(`${at.lat.toFixed(6)},${at.lng.toFixed(6)}`)) matched += 1;
    }
    // Drawn markers: the SVG circles' centres (their path starts at the left edge: M x-r,y).
    const onScreen = new Set(
      keys.map((k) => {
        const [lat, lng] = k.split(',').map(Number);
        const p = b.map.latLngToLayerPoint([lat, lng]);
        return `${Math.round(p.x)},${Math.round(p.y)}`;
      }),
    );
    let drawn = 0;
    let drawnMatched = 0;
    for (const el of document.querySelectorAll('.leaflet-overlay-pane path[class*="marker-driver"]')) {
      const d = /^M(-?[\d.]+),(-?[\d.]+)a(-?[\d.]+)/.exec(el.getAttribute('d') ?? '');
      if (!d) continue;
      drawn += 1;
      const x = Number(d[1]) + Number(d[3]);
      const y = Number(d[2]);
      let hit = false;
      for (let dx = -1; dx <= 1 && !hit; dx++)
        for (let dy = -1; dy <= 1 && !hit; dy++) hit = onScreen.has(`${Math.round(x) + dx},${Math.round(y) + dy}`);
      if (hit) drawnMatched += 1;
    }
    // Every cluster drawn shows its count; with every marker in view, the counts and the single
    // markers add up to the markers held.
    let clusters = 0;
    let clustersWrong = 0;
    let shown = 0;
    for (const layer of b.group._featureGroup.getLayers()) {
      if (typeof layer.getChildCount !== 'function') continue;
      clusters += 1;
      const text = Number(layer._icon?.textContent);
      shown += text;
      if (text !== layer.getChildCount()) clustersWrong += 1;
    }
    const bounds = b.map.getBounds();
    const allInView = b.group.getLayers().every((m: any) => bounds.contains(m.getLatLng()));
    const status = document.querySelector('main p[role="status"]')?.textContent ?? '';
    return {
      held,
      matched,
      drawn,
      drawnMatched,
      clusters,
      clustersWrong,
      addUp: allInView ? shown + drawn === held : null,
      zoom: b.map.getZoom(),
      status,
    };
  }, lastKeys);

  // Posts the server's follower did not get (inside the box, sent at least a tick before the end).
  const inBox = (p: Post) => p.lng >= bbox[0] && p.lat >= bbox[1] && p.lng <= bbox[2] && p.lat <= bbox[3];
  // The stream sends each driver's newest position once per tick: a post followed by the driver's
  // next one before the tick is not sent, by design (posts every 3 s, ticks every 3 s that drift a
  // little). Two posts of a driver in a row not sent would mean a tick missed.
  let expected = 0;
  let delivered = 0;
  let twiceInARow = 0;
  const previousMissed = new Set<number>();
  for (const p of posts) {
    if (p.t < wallStart - WARMUP_MS || !inBox(p)) continue;
    expected += 1;
    if (follower.received.has(`${auth[p.driver]!.driverId}|${p.at}`)) {
      delivered += 1;
      previousMissed.delete(p.driver);
    } else if (previousMissed.has(p.driver)) twiceInARow += 1;
    else previousMissed.add(p.driver);
  }
  posts.length = 0;
  for (const p of last.values()) posts.push(p);

  if (process.env.BENCH_SCREENSHOTS)
    await page.screenshot({ path: path.join(process.env.BENCH_SCREENSHOTS, `b12-${name.replace(/\W+/g, '-')}.png`) });
  const heap = await metrics();
  await cdp.send('HeapProfiler.collectGarbage');
  const heapAfterGc = (await metrics()).JSHeapUsedSize!;

  const measuredMs = pageEnd.t - pageStart.t;
  const tasks = pageEnd.longTasks.filter((l: { start: number }) => l.start >= pageStart.t && l.start < pageEnd.t);
  const loafs = pageEnd.loafs.filter((l: { start: number }) => l.start >= pageStart.t && l.start < pageEnd.t);
  const longTaskMs = tasks.reduce((s: number, l: { duration: number }) => s + l.duration, 0);
  const frames = pageEnd.frames as number[];
  // For each event in the window (but the last): from its arrival to the last frame that moved
  // markers before the next one, i.e. how long the page took to put the tick's positions on the map.
  const arrivals = (pageEnd.arrivals as number[]).filter((a) => a >= pageStart.t && a < pageEnd.t);
  const applyMs: number[] = [];
  for (let i = 0; i + 1 < arrivals.length; i++) {
    const moving = (pageEnd.moveFrames as number[]).filter((t) => t >= arrivals[i]! && t < arrivals[i + 1]!);
    if (moving.length) applyMs.push(moving[moving.length - 1]! - arrivals[i]!);
  }
  const main = (k: string) => round((after[k]! - before[k]!) * 1000, 0);
  const result = {
    view: name,
    load,
    zoom: check.zoom,
    bbox: bbox.join(','),
    inView: {
      status: check.status,
      markersHeld: check.held,
      singleMarkersDrawn: check.drawn,
      clusterIcons: check.clusters,
    },
    clusterIcons: { wrongCount: check.clustersWrong, countsAndSinglesAddUpToTheMarkers: check.addUp },
    seconds: round(measuredMs / 1000),
    frames: {
      count: frames.length,
      perSecond: round(frames.length / (measuredMs / 1000)),
      intervalMs: { p50: pct(frames, 50), p95: pct(frames, 95), p99: pct(frames, 99), max: pct(frames, 100) },
      over34Ms: frames.filter((f) => f > 34).length,
      over50Ms: frames.filter((f) => f > 50).length,
    },
    longTasks: {
      count: tasks.length,
      totalMs: round(longTaskMs, 0),
      maxMs: round(Math.max(0, ...tasks.map((l: { duration: number }) => l.duration)), 0),
      shareOfTime: round(longTaskMs / measuredMs, 3),
    },
    longAnimationFrames: {
      count: loafs.length,
      maxMs: round(Math.max(0, ...loafs.map((l: { duration: number }) => l.duration)), 0),
      blockingMs: round(
        loafs.reduce((s: number, l: { blocking: number }) => s + l.blocking, 0),
        0,
      ),
    },
    mainThreadMs: {
      task: main('TaskDuration'),
      script: main('ScriptDuration'),
      layout: main('LayoutDuration'),
      style: main('RecalcStyleDuration'),
      perSecond: round(((after.TaskDuration! - before.TaskDuration!) * 1000) / (measuredMs / 1000), 0),
    },
    heapMB: {
      used: round(heap.JSHeapUsedSize! / 1048576),
      afterGc: round(heapAfterGc / 1048576),
      total: round(heap.JSHeapTotalSize! / 1048576),
    },
    domNodes: heap.Nodes,
    stream: {
      page: {
        events: pageEnd.events - pageStart.events,
        driverEntries: pageEnd.entries - pageStart.entries,
        MB: round((pageEnd.bytes - pageStart.bytes) / 1048576),
      },
      server: serverStream,
      pageEventsLikeTheServers: {
        compared: compared.length,
        equal: pageGotAll,
        page: pageCounts.slice(1),
        server: compared,
      },
      postsInBox: expected,
      postsSent: delivered,
      postsCoalesced: expected - delivered,
      postsCoalescedTwiceInARow: twiceInARow,
    },
    applied: {
      markerMoves: pageEnd.moves,
      tickOnTheMapWithinMs: { p50: pct(applyMs, 50), max: pct(applyMs, 100), ticks: applyMs.length },
      finalPositions: { held: check.held, atLastPost: check.matched },
      drawnSingles: { drawn: check.drawn, atLastPostOnScreen: check.drawnMatched },
    },
    positions: { ...posting, errors: postErrors },
    loadavg1m: { before: round(loadBefore, 2), end: round(loadDuring, 2) },
    uptime: uptime(),
  };
  const smooth = {
    frameP95: (result.frames.intervalMs.p95 ?? Infinity) <= SMOOTH.frameP95Ms,
    frameP99: (result.frames.intervalMs.p99 ?? Infinity) <= SMOOTH.frameP99Ms,
    noLongTaskOver100Ms: result.longTasks.maxMs <= SMOOTH.longTaskMaxMs,
    longTaskShare: result.longTasks.shareOfTime <= SMOOTH.longTaskShare,
    nothingLost:
      check.held > 0 &&
      check.matched === check.held &&
      check.drawnMatched === check.drawn &&
      check.clustersWrong === 0 &&
      check.addUp !== false &&
      pageGotAll &&
      twiceInARow === 0,
  };
  return { ...result, smooth: { ...smooth, all: Object.values(smooth).every(Boolean) } };
}

const results: ViewResult[] = [];
const startedAt = uptime();
const wholeArea = await setView('fit', {
  bounds: [
    [CENTRE.lat - SPREAD_DEG, CENTRE.lng - SPREAD_DEG],
    [CENTRE.lat + SPREAD_DEG, CENTRE.lng + SPREAD_DEG],
  ],
});
if (wholeArea.markers !== drivers) throw new Error(`the whole area shows ${wholeArea.markers} drivers, not ${drivers}`);
const heapLoaded = await metrics();
/** Counts the moves of driver markers: every setLatLng on a circle marker of the driver kinds. */
await inPage((b) => {
  const probe = b.group.getLayers()[0] ?? null;
  if (!probe) throw new Error('no marker on the map');
  const proto = Object.getPrototypeOf(probe);
  const set = proto.setLatLng;
  proto.setLatLng = function (this: any, ...args: unknown[]) {
    if (String(this.options?.className).startsWith('marker-driver')) b.moves += 1;
    return set.apply(this, args);
  };
});

results.push(await measureView('whole area', wholeArea));
const zoomed = await setView('zoom', { centre: [CENTRE.lat, CENTRE.lng], zoom: zoomIn });
results.push(await measureView(`zoom ${zoomIn}`, zoomed));

await browser.close();
await pool.close();
await server.stop();

console.log(
  JSON.stringify(
    {
      scenario: 'B12 live map (console)',
      machine: machine(),
      uptimeAtStart: startedAt,
      database: server.info.database,
      drivers,
      chromium: chromiumVersion,
      viewport: '1280x800 (map 420 px high)',
      smoothMeans: SMOOTH,
      heapAtLoadMB: round(heapLoaded.JSHeapUsedSize! / 1048576),
      pageErrors,
      views: results,
      smooth: results.every((r) => (r.smooth as { all: boolean }).all),
    },
    null,
    2,
  ),
);
process.exit(0);
