// End to end: sightline-server, the page in Debian's Chromium (playwright-core), real
// replication. Two pages follow the same drag path at the same time, one with hysteresis off,
// so the spawns+despawns comparison sees the same walkers from the same spots; then interest
// off must bring the updates to the send-everything level, (entities - 1) per tick.
//
//   SIGHTLINE_SERVER      the server binary (default build/bin/sightline-server)
//   SIGHTLINE_SCREENSHOT  where the screenshot goes (default build/artifacts/page.png)
//   CHROMIUM              the browser (default /usr/bin/chromium)
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launchChromium, sleep, startServer } from './lib/harness.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER = process.env.SIGHTLINE_SERVER || path.join(root, 'build/bin/sightline-server');
const SCREENSHOT = process.env.SIGHTLINE_SCREENSHOT || path.join(root, 'build/artifacts/page.png');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const MEASURE_S = Number(process.env.SIGHTLINE_MEASURE_S || 6);

/** Everything window.sightline says, as plain data. */
function state(page) {
  return page.evaluate(() => {
    const s = window.sightline;
    return {
      connected: s.connected, error: s.error, closeReason: s.closeReason, welcome: s.welcome && { ...s.welcome },
      options: s.options, viewer: s.viewer, enterRadius: s.enterRadius, leaveRadius: s.leaveRadius,
      totals: s.totals, perSecond: s.perSecond, held: s.held, anomalies: s.anomalies, anomalyKinds: s.anomalyKinds,
      lastAnomaly: s.lastAnomaly, ticksSeen: s.ticksSeen, resets: s.resets, drawnEntities: s.drawnEntities,
      hiddenDrawn: s.hiddenDrawn, debugFrames: s.debugFrames, framesDrawn: s.framesDrawn,
      shotsHeard: s.shotsHeard, shotsHeardBeyondR: s.shotsHeardBeyondR, ringsDrawn: s.ringsDrawn,
      ringsEverDrawn: s.ringsEverDrawn, interest: s.interest, loadingLine: s.loadingLine, grid: s.grid,
      cellsShaded: s.cellsShaded, shadedRange: s.shadedRange, serverMessages: s.serverMessages, messageLine: s.messageLine,
      everyoneLine: s.everyoneLine, ticksLoading: s.ticksLoading, loadingFramesShown: s.loadingFramesShown,
      lastLoadingLine: s.lastLoadingLine, whyPanel: s.whyPanel, whyAsked: s.whyAsked, whyAnswers: s.whyAnswers,
      selectedDrawn: s.selectedDrawn,
    };
  });
}

/**
 * The yellow discs of one animation frame and the entities held when it was drawn: read in a
 * requestAnimationFrame callback queued after the page's own, so no message comes in between.
 */
function drawnAndHeld(page) {
  return page.evaluate(() => new Promise((resolve) => {
    requestAnimationFrame(() => resolve({ drawn: window.sightline.drawnEntities, held: window.sightline.held }));
  }));
}

/** Polls `predicate(state)` until true; fails with the last state. */
async function until(page, what, predicate, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  let s;
  for (;;) {
    s = await state(page);
    if (s.error) assert.fail(`${what}: the page reports ${s.error}`);
    if (predicate(s)) return s;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms; the page says ${JSON.stringify(s)}`);
    await sleep(100);
  }
}

/** Page coordinates of world (x, z): the canvas maps the world linearly. */
async function mapping(page) {
  const w = await page.evaluate(() => window.sightline.welcome);
  const [a, b] = await page.evaluate(([W, H]) => [window.sightline.worldToPage(0, 0), window.sightline.worldToPage(W, H)],
    [w.width, w.height]);
  return (x, z) => [a.x + (x / w.width) * (b.x - a.x), a.y + (z / w.height) * (b.y - a.y)];
}

/** A closed loop around the middle of the world, one lap in `lap` seconds. */
function loop(world, lap) {
  return (t) => {
    const a = (2 * Math.PI * t) / lap;
    return [world.width * (0.5 + 0.22 * Math.cos(a)), world.height * (0.5 + 0.22 * Math.sin(a))];
  };
}

/** Drags every page's viewer along `route` for `seconds`, in step. */
async function drag(pages, maps, route, seconds) {
  await Promise.all(pages.map(async (p, i) => {
    await p.mouse.move(...maps[i](...route(0)));
    await p.mouse.down();
  }));
  const start = Date.now();
  for (let t = 0; t < seconds; t = (Date.now() - start) / 1000) {
    await Promise.all(pages.map((p, i) => p.mouse.move(...maps[i](...route(t)))));
    await sleep(30);
  }
  await Promise.all(pages.map((p) => p.mouse.up()));
}

/** Per server second: the page's totals over its ticks (ticks, not wall time: a loaded machine delays frames, not ticks). */
function rates(before, after) {
  const ticks = after.ticksSeen - before.ticksSeen;
  const hz = after.welcome.tickRate;
  const d = (k) => after.totals[k] - before.totals[k];
  return {
    ticks,
    spawnsDespawns: ((d('spawns') + d('despawns')) / ticks) * hz,
    updates: (d('updates') / ticks) * hz,
    updatesPerTick: d('updates') / ticks,
  };
}

/**
 * Clicks an entity in debug view and waits for the why panel's answer: `which` is 'held' (the
 * held entity nearest the viewer, well inside R) or 'outline' (the debug outline farthest from
 * it). The page asks about the entity nearest the click; a click that found none (the entity
 * moved away) dragged the viewer instead, and is tried again.
 */
async function clickWhy(page, which) {
  for (let attempt = 0; attempt < 8; ++attempt) {
    const target = await page.evaluate((kind) => {
      const s = window.sightline;
      const list = kind === 'held' ? s.heldEntities : s.hiddenEntities;
      if (list.length === 0 || s.viewer === null) return null;
      const d = (e) => Math.hypot(e.x - s.viewer.x, e.z - s.viewer.z);
      const e = list.reduce((best, x) => ((kind === 'held' ? d(x) < d(best) : d(x) > d(best)) ? x : best));
      return { index: e.index, distance: d(e), ...s.worldToPage(e.x, e.z) };
    }, which);
    if (target !== null) {
      const before = await state(page);
      await page.mouse.click(target.x, target.y);
      if ((await state(page)).whyAsked > before.whyAsked) {
        const s = await until(page, `the why panel answered for the ${which} entity`,
          (n) => n.whyPanel !== null && n.whyPanel.answered && n.whyAnswers > before.whyAnswers);
        return { target, panel: s.whyPanel, state: s };
      }
    }
    await sleep(300);
  }
  return assert.fail(`no ${which} entity could be clicked`);
}

async function openPage(context, url, problems) {
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  await page.goto(url);
  return page;
}

async function setOption(page, id, on) {
  const before = await state(page);
  await page.setChecked(`#${id}`, on);
  // Turning interest on or off moves the connection to the server's other World, so the stream
  // restarts; hysteresis changes the leave radius from the next tick in the same stream (the tick
  // frame states it); the debug view only adds debug frames beside it.
  const restarts = id === 'interest';
  const radiiFollow = (s) => id !== 'hysteresis' || (on ? s.leaveRadius > s.enterRadius : s.leaveRadius === s.enterRadius);
  return until(page, `#${id} ${on ? 'on' : 'off'} applied`,
    (s) => (!restarts || s.resets > before.resets) && s.options[id] === on && radiiFollow(s));
}

test('the page against sightline-server in Chromium', { timeout: 150000 }, async (t) => {
  const started = Date.now();
  const server = await startServer(SERVER, ['--debug-view', '--debug-http']);
  let browser;
  const problems = [];
  try {
    browser = await launchChromium(CHROMIUM);
    const a = await openPage(browser.context, server.url, problems);
    const b = await openPage(browser.context, server.url, problems);
    const pages = [a, b];

    await t.test('entities are drawn and the counters move', async () => {
      for (const p of pages) {
        const s = await until(p, 'entities drawn', (s) => s.welcome && s.drawnEntities > 0 && s.ticksSeen > 10);
        assert.equal(s.options.hysteresis, true, 'hysteresis is on by default');
        assert.equal(s.options.interest, true, 'interest is on by default');
        assert.ok(s.leaveRadius > s.enterRadius);
        const later = await until(p, 'counters move', (n) => n.totals.records > s.totals.records + 20 && n.totals.bytes > s.totals.bytes);
        assert.ok(later.perSecond.updates > 0 && later.perSecond.bytes > 0, JSON.stringify(later.perSecond));
        const f = await drawnAndHeld(p);
        assert.ok(f.held > 0);
        assert.equal(f.drawn, f.held, 'one yellow disc per held entity');
      }
      assert.equal(await a.isDisabled('#debug'), false, 'the server runs with --debug-view');
    });

    const world = (await state(a)).welcome;
    const maps = await Promise.all(pages.map(mapping));
    const walk = loop(world, Number(process.env.SIGHTLINE_LAP_S || 30));
    const measure = async () => {
      await drag(pages, maps, walk, 0.1);  // to the start of the loop
      await sleep(1000);  // paced entry after a reset, and the move
      const before = await Promise.all(pages.map(state));
      await drag(pages, maps, walk, MEASURE_S);
      const after = await Promise.all(pages.map(state));
      return [rates(before[0], after[0]), rates(before[1], after[1])];
    };

    await t.test('server messages: page A hears page B join, and shows it', async () => {
      const joined = /^connection \d+ joined \(2 online\)$/;
      const s = await until(a, 'B\'s join', (n) => n.serverMessages.some((m) => joined.test(m)));
      assert.match(s.messageLine, /^server: connection \d+ joined \(2 online\)$/);
    });

    await t.test('the shaded cells are the ones the library scanned, on its grid', async () => {
      for (const p of pages) {
        const s = await until(p, 'the scanned cells shaded', (n) => n.shadedRange && n.cellsShaded > 0);
        const { x0, x1, z0, z1 } = s.shadedRange;
        // The library's grid spans the entities, inside the world: every scanned cell is drawn.
        assert.equal(s.cellsShaded, (x1 - x0 + 1) * (z1 - z0 + 1));
        assert.equal(s.grid.cellSize, s.welcome.enterRadius, 'cells follow R');
        const cx = Math.floor((s.viewer.x - s.grid.originX) / s.grid.cellSize);
        const cz = Math.floor((s.viewer.z - s.grid.originZ) / s.grid.cellSize);
        const now = s.grid.scanned;  // the last tick's, which the last drawn frame may not have shaded yet
        assert.ok(cx >= now.x0 && cx <= now.x1 + 1 && cz >= now.z0 && cz <= now.z1 + 1, 'the viewer stands in what it scans');
        assert.ok(x1 - x0 <= 3 && z1 - z0 <= 3, 'R = one cell: at most 3 x 3 cells and a rounding margin');
      }
    });

    let withHysteresis;
    let withoutHysteresis;
    await t.test('hysteresis off: more spawns+despawns for the same walk', async () => {
      const [a1, b1] = await measure();
      t.diagnostic(`both with hysteresis: spawns+despawns/s ${a1.spawnsDespawns.toFixed(1)} and ${b1.spawnsDespawns.toFixed(1)} over ${a1.ticks} ticks`);
      const off = await setOption(b, 'hysteresis', false);
      assert.equal(off.leaveRadius, off.enterRadius, 'L = R without hysteresis');
      const [a2, b2] = await measure();
      withHysteresis = a2;
      withoutHysteresis = b2;
      t.diagnostic(`then page B without: ${a2.spawnsDespawns.toFixed(1)} (with) against ${b2.spawnsDespawns.toFixed(1)} (without) over ${b2.ticks} ticks`);
      // Seed 000: 83k against 43k a minute, about 2x. The same walk, the same walkers, the same
      // seconds: only the leave radius differs.
      assert.ok(b2.spawnsDespawns > 1.3 * a2.spawnsDespawns,
        `without hysteresis ${b2.spawnsDespawns.toFixed(1)}/s, with ${a2.spawnsDespawns.toFixed(1)}/s: expected at least 1.3x`);
      // And page B itself: its rate rose when it turned hysteresis off.
      assert.ok(b2.spawnsDespawns > b1.spawnsDespawns,
        `page B: ${b1.spawnsDespawns.toFixed(1)}/s with hysteresis, ${b2.spawnsDespawns.toFixed(1)}/s without`);
    });

    await t.test('a wider radius brings its entities paced: the loading line counts them down', async () => {
      const setRadius = (page, r) => page.$eval('#radius', (el, v) => {
        el.value = String(v);
        el.dispatchEvent(new Event('input'));
      }, r);
      const before = await state(a);
      await setRadius(a, before.welcome.maxRadius);
      // The entities come over several ticks; the page showed the line meanwhile (counted, as a
      // loaded machine may not let this poll see it in the act).
      const loaded = await until(a, 'the area loaded', (s) => s.enterRadius > 3 && s.interest.pending === 0 &&
        s.loadingLine === null && s.ticksLoading > before.ticksLoading + 2 && s.loadingFramesShown > before.loadingFramesShown);
      const loading = { loadingLine: loaded.lastLoadingLine, held: before.held };
      assert.match(loading.loadingLine, /^loading the area: \d+ to go$/);
      const { x0, x1, z0, z1 } = loaded.grid.scanned;
      assert.ok((x1 - x0 + 1) * (z1 - z0 + 1) > 9, `a radius of 4 cells scans more of them: ${JSON.stringify(loaded.grid)}`);
      t.diagnostic(`radius ${loaded.enterRadius.toFixed(2)}: "${loading.loadingLine}", then ${loaded.held} held`);
      assert.ok(loaded.held > loading.held, 'more entities once the area is in');
      await setRadius(a, loaded.welcome.enterRadius);
      await until(a, 'the radius back', (s) => Math.abs(s.enterRadius - s.welcome.enterRadius) < 1e-6);
    });

    await t.test('shots heard are drawn as rings, some from beyond R', async () => {
      const s = await until(a, 'shots heard and drawn',
        (n) => n.shotsHeard > 0 && n.ringsEverDrawn > 0 && n.shotsHeardBeyondR > 0);
      t.diagnostic(`page A heard ${s.shotsHeard} shots, ${s.shotsHeardBeyondR} from beyond R`);
    });

    await t.test('screenshot', async () => {
      fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
      await drag([a], [maps[0]], walk, 0.1);
      await sleep(700);  // some enter and leave marks in view
      await a.screenshot({ path: SCREENSHOT });
      assert.ok(fs.statSync(SCREENSHOT).size > 10000);
      t.diagnostic(`screenshot: ${SCREENSHOT}`);
    });

    await t.test('interest off: updates at the send-everything level', async () => {
      await setOption(a, 'interest', false);
      await sleep(1000);  // every entity spawns, paced
      const before = await state(a);
      await sleep(3000);
      const after = await state(a);
      const r = rates(before, after);
      const everyone = after.welcome.entityCount - 1;  // every entity at a's connect, but its own viewer
      t.diagnostic(`interest off: ${after.held} held, ${r.updatesPerTick.toFixed(1)} updates a tick, ${r.updates.toFixed(0)}/s by ticks, ${after.perSecond.updates.toFixed(0)}/s on the page's counter; with interest ${withHysteresis.updates.toFixed(0)}/s`);
      assert.ok(after.held >= everyone, `held ${after.held}, expected every entity but its own viewer (${everyone})`);
      assert.ok(r.updatesPerTick >= 0.95 * after.held, `${r.updatesPerTick.toFixed(1)} updates a tick for ${after.held} held`);
      assert.ok(r.updates >= 0.95 * everyone * after.welcome.tickRate, `${r.updates.toFixed(0)} updates/s`);
      assert.ok(r.updates > 4 * withHysteresis.updates, 'far above the culled level');
      // The page's own counter (wall time, a 1 s window): loosely, as frames can bunch on a loaded machine.
      assert.ok(after.perSecond.updates >= 0.5 * everyone * after.welcome.tickRate, `page counter ${after.perSecond.updates}/s`);
      const f = await drawnAndHeld(a);
      assert.equal(f.drawn, f.held, 'one yellow disc per held entity');
      // The O(N^2) line: N(N-1) server-wide beside this connection's N-1 a tick.
      const line = (await until(a, 'the send-everything line', (n) => n.everyoneLine !== null)).everyoneLine;
      const n = after.held + 1;
      assert.ok(line.includes(`N(N−1) = ${(n * (n - 1)).toLocaleString('en-US')} updates a tick`), line);
      assert.ok(line.includes(`this connection alone: ${n - 1} a tick`), line);
    });

    await t.test('debug view: the entities not held, as grey outlines; a click asks the server why', async () => {
      await setOption(a, 'interest', true);
      await setOption(a, 'debug', true);
      const s = await until(a, 'grey outlines drawn', (n) => n.debugFrames > 0 && n.hiddenDrawn > 0);
      assert.ok(s.hiddenDrawn + s.held >= s.welcome.entityCount - 1, `${s.hiddenDrawn} outlines, ${s.held} held`);

      // The held entity nearest the viewer: held, by the distance rules, with its spawn in this stream.
      const held = await clickWhy(a, 'held');
      t.diagnostic(`clicked held entity ${held.target.index} at ${held.target.distance.toFixed(2)} from the viewer: ${JSON.stringify(held.panel.text)}`);
      const p = held.panel;
      assert.equal(p.stale, false);
      assert.equal(p.held, true, JSON.stringify(p));
      assert.ok(['near', 'within_leave'].includes(p.rule), `rule ${p.rule}`);
      assert.ok(p.text.includes(`held: ${p.rule} (tick ${p.tick})`), p.text);
      assert.deepEqual(p.root, { index: p.index, generation: p.generation }, 'the demo attaches nothing');
      assert.ok(p.text.includes(`root ${p.index}:${p.generation} (itself`), p.text);
      if (p.pageHolds) {
        assert.equal(p.transitions.at(-1).kind, 'spawn', JSON.stringify(p.transitions));
        assert.ok(p.text.includes(`tick ${p.transitions.at(-1).tick} · spawn · ${p.transitions.at(-1).reason}`), p.text);
      }
      // The open panel asks again, and its entity is ringed on the canvas; the server runs with
      // --debug-http, so the panel lists the server's flight recorder (GET /debug/why).
      const r = await until(a, 'the panel refreshed with the server\'s history',
        (n) => n.whyAnswers > held.state.whyAnswers + 1 && n.selectedDrawn && n.whyPanel?.serverHistory != null);
      const recorded = r.whyPanel.serverHistory;
      t.diagnostic(`the server's flight recorder of entity ${p.index}: ${JSON.stringify(recorded)}`);
      if (recorded.length > 0) assert.ok(r.whyPanel.text.includes("the server's flight recorder, newest first:"), r.whyPanel.text);
      else assert.ok(r.whyPanel.text.includes('last transitions, newest first:'), r.whyPanel.text);  // none kept: the page's own
      if (recorded.length > 0 && r.whyPanel.held === true) {
        const last = recorded.at(-1);
        assert.equal(last.kind, 'spawn', JSON.stringify(recorded));
        assert.equal(typeof last.distance, 'number');
        assert.ok(r.whyPanel.text.includes(`tick ${last.tick} · spawn · ${last.reason} · ${last.distance.toFixed(2)} from the nearest origin`),
          r.whyPanel.text);
      }
      await a.screenshot({ path: SCREENSHOT.replace(/(\.png)?$/, '-debug.png') });

      // Closed, it asks no more; then the outline farthest from the viewer: not held, beyond the range.
      await a.click('#why-close');
      await until(a, 'the why panel closed', (n) => n.whyPanel === null);
      const outline = await clickWhy(a, 'outline');
      t.diagnostic(`clicked outline ${outline.target.index} at ${outline.target.distance.toFixed(2)} from the viewer: ${JSON.stringify(outline.panel.text)}`);
      const q = outline.panel;
      assert.equal(q.stale, false);
      assert.equal(q.held, false, JSON.stringify(q));
      assert.equal(q.rule, 'out_of_range');
      assert.notEqual(q.generation, 0, 'the answer names the entity found at the outline\'s index');
      assert.ok(q.text.includes(`not held: out_of_range (tick ${q.tick})`), q.text);
      assert.equal(q.pageHolds, false);
      if (q.transitions.length > 0) assert.equal(q.transitions.at(-1).kind, 'despawn', JSON.stringify(q.transitions));

      // why() is the debug view's: turning it off closes the panel.
      await setOption(a, 'debug', false);
      await until(a, 'the why panel closed', (n) => n.whyPanel === null);
    });

    await t.test('no anomaly, no error, no page error', async () => {
      for (const p of pages) {
        const s = await state(p);
        assert.equal(s.error, null);
        assert.equal(s.connected, true, s.closeReason ?? '');
        assert.equal(s.anomalies, 0, `${JSON.stringify(s.anomalyKinds)}: ${s.lastAnomaly}`);
      }
      assert.deepEqual(problems, []);
      t.diagnostic(`spawns+despawns/s ${withHysteresis.spawnsDespawns.toFixed(1)} with hysteresis, ${withoutHysteresis.spawnsDespawns.toFixed(1)} without`);
    });
  } finally {
    if (browser) await browser.close();
    const exit = await server.stop();
    t.diagnostic(`server stopped (${JSON.stringify(exit)}); ${((Date.now() - started) / 1000).toFixed(1)} s in all`);
  }
});

test('without --debug-view the debug toggle is disabled; a full server says so', { timeout: 60000 }, async () => {
  const server = await startServer(SERVER, ['--max-connections', '1']);
  let browser;
  try {
    browser = await launchChromium(CHROMIUM);
    const page = await openPage(browser.context, server.url, []);
    await until(page, 'welcome', (s) => s.welcome && s.ticksSeen > 0);
    assert.equal(await page.isDisabled('#debug'), true);
    assert.equal(await page.isDisabled('#hysteresis'), false);
    // A second page finds no place: it reads "server full", not "closed (1006)".
    const second = await openPage(browser.context, server.url, []);
    const s = await until(second, 'the close', (n) => n.closeReason !== null);
    assert.equal(s.closeReason, 'server full: try again later');
    assert.equal(await second.textContent('#status'), 'server full: try again later');
  } finally {
    if (browser) await browser.close();
    await server.stop();
  }
});
