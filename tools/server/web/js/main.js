// The page: opens the WebSocket, feeds a Session, draws it every animation frame, sends the
// viewer's drags (throttled to 20 a second), the toggles and the radius, asks why an entity
// clicked in debug view is held or not, and exposes a read-only window.sightline for tests.

import { Session } from './session.js';
import { drawScene, entityRadius, viewTransform } from './draw.js';
import { drawChart } from './counters.js';
import { encodeMove, encodeOptions, encodeRadius, encodeWhy, OPTION_DEBUG, OPTION_HYSTERESIS, OPTION_INTEREST } from './frames.js';
import { KINDS } from './state.js';

const MOVE_INTERVAL_MS = 50;  // 20 moves a second, well below the server's 60 frames a second
const RADIUS_INTERVAL_MS = 100;
// The open why panel asks again twice a second, so its answer follows the entity as it moves.
const WHY_INTERVAL_MS = 500;
const PICK_CSS_PX = 12;
const MARGIN_CSS_PX = 8;

/** What each rule of relevance.h means, in the demo's terms. */
const RULE_MEANINGS = {
  viewer: 'your own viewer is never sent',
  other_space: 'in another space than your viewer',
  always: 'always relevant',
  owner: 'you own it',
  origin: 'one of your origins',
  key_excluded: 'its interest key does not admit you',
  presenter: 'a presenter of your space',
  key_bypass: 'a key subscription that bypasses distance',
  unculled: 'interest is off: everything is sent',
  near: 'within your enter radius R',
  within_leave: 'beyond R but within your leave radius L: hysteresis keeps it',
  out_of_range: 'beyond R (beyond L, had you held it)',
  hidden: 'in range but out of sight',
  crowded: 'beyond the crowd cap',
};

const $ = (id) => document.getElementById(id);
const ui = {
  status: $('status'),
  loading: $('loading'),
  message: $('message'),
  everyone: $('everyone'),
  error: $('error'),
  world: $('world'),
  stage: $('stage'),
  chart: $('chart'),
  hysteresis: $('hysteresis'),
  interest: $('interest'),
  debug: $('debug'),
  radius: $('radius'),
  radiusValue: $('radius-value'),
  reconnect: $('reconnect'),
  why: $('why'),
  whyEntity: $('why-entity'),
  whyVerdict: $('why-verdict'),
  whyMeaning: $('why-meaning'),
  whyRoot: $('why-root'),
  whyPage: $('why-page'),
  whyTransitions: $('why-transitions'),
  whyTransitionsLabel: $('why-transitions-label'),
  whyClose: $('why-close'),
  held: $('held'),
  entities: $('entities'),
  ticks: $('ticks'),
  anomalies: $('anomalies'),
  rate: { messages: $('rate-messages'), updates: $('rate-updates'), sd: $('rate-sd'), bytes: $('rate-bytes') },
  total: { messages: $('total-messages'), updates: $('total-updates'), sd: $('total-sd'), bytes: $('total-bytes') },
};

let session = new Session();
let socket = null;
let connected = false;
let closeReason = null;
let drawnEntities = 0;
let hiddenDrawn = 0;
let ringsDrawn = 0;
let cellsShaded = 0;
let shadedRange = null;  // the scanned cells the last drawn frame shaded
let loadingFramesShown = 0;
let lastLoadingLine = null;
let ringsEverDrawn = 0;
let framesDrawn = 0;
let rates = { messages: 0, spawnsDespawns: 0, updates: 0, bytes: 0 };
/** Options sent and not yet seen applied in a tick frame: {flags, at}. */
let pendingOptions = null;
let dragging = false;
let target = null;  // where the viewer is being dragged, world units
let whyAsked = 0;
let lastWhyAt = -Infinity;
let whyShown = '';  // what the panel shows, to touch the DOM only when it changes
/**
 * The debug console's history of the open panel's entity ({index, generation, entries}), from
 * GET /debug/why when the server runs with --debug-http; `debugConsole` turns false at the first
 * refusal (no console, or another origin), and the panel keeps the page's own transitions.
 */
let serverHistory = null;
let debugConsole = null;
let historyInFlight = false;
let questionSerial = 0;  // clicks: a history fetched for an earlier one is not shown
let selectedDrawn = false;

/** Where to connect: `?ws=URL`, else /ws on this host, then / if /ws never opens. */
function socketUrls() {
  const asked = new URLSearchParams(location.search).get('ws');
  if (asked) return [asked];
  const base = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`;
  return [`${base}/ws`, `${base}/`];
}

// --- sending -------------------------------------------------------------------------------

function send(frame) {
  if (socket !== null && socket.readyState === WebSocket.OPEN) socket.send(frame);
}

/** A trailing throttle: at most one call of `fn` per interval, always with the latest value. */
function throttle(interval, fn) {
  let last = -Infinity;
  let timer = null;
  let value;
  const fire = () => {
    timer = null;
    last = performance.now();
    fn(value);
  };
  return (v) => {
    value = v;
    if (timer !== null) return;
    const wait = last + interval - performance.now();
    if (wait <= 0) fire();
    else timer = setTimeout(fire, wait);
  };
}

const sendMove = throttle(MOVE_INTERVAL_MS, ({ x, z }) => send(encodeMove(x, z)));
const sendRadius = throttle(RADIUS_INTERVAL_MS, (r) => send(encodeRadius(r)));

function optionFlags() {
  return (ui.hysteresis.checked ? OPTION_HYSTERESIS : 0) | (ui.interest.checked ? OPTION_INTEREST : 0) |
    (ui.debug.checked && !ui.debug.disabled ? OPTION_DEBUG : 0);
}

function onToggle() {
  const flags = optionFlags();
  pendingOptions = { flags, at: performance.now() };
  send(encodeOptions(flags));
  if ((flags & OPTION_DEBUG) === 0) {
    session.dismiss();
    showWhy();
  }
}

/** Whether the server applies the debug view and the page still wants it: only then may it ask why. */
function debugViewOn() {
  return connected && session.options !== null && session.options.debug && ui.debug.checked && !ui.debug.disabled;
}

function askWhy(index, generation) {
  session.ask(index, generation);
  send(encodeWhy(index, generation));
  lastWhyAt = performance.now();
  ++whyAsked;
  ++questionSerial;
  serverHistory = null;
  fetchHistory(index, generation);
  showWhy();
}

/** Asks the debug console for the connection's history of the entity (generation 0: whichever is at the index). */
async function fetchHistory(index, generation) {
  if (debugConsole === false || historyInFlight || session.welcome === null) return;
  // The console is the page's server's: a socket to another host (?ws=) has another connection id.
  if (socket === null || new URL(socket.url).host !== location.host) {
    debugConsole = false;
    return;
  }
  historyInFlight = true;
  const asked = questionSerial;
  try {
    const entity = generation === 0 ? `${index}` : `${index}:${generation}`;
    const response = await fetch(`/debug/why?connection=${session.welcome.connectionId}&entity=${entity}`);
    const text = await response.text();
    if (!response.ok) {
      // The console off, or no console at all (a plain 404): stop asking. Any other refusal (the
      // entity gone) is this question's alone.
      if (text.includes('the debug console is off') || (response.status === 404 && !text.includes('"error"'))) {
        debugConsole = false;
      }
      return;
    }
    const answer = JSON.parse(text);
    debugConsole = true;
    // Still the question it answers: not another click since, and the entity the panel names.
    const q = session.question;
    if (q === null || questionSerial !== asked || q.index !== index || answer.entity === undefined) return;
    if (q.generation !== 0 && answer.entity.generation !== q.generation) return;
    serverHistory = {
      index,
      generation: answer.entity.generation,
      entries: answer.history.map((h) => ({
        tick: h.tick, kind: h.spawned ? 'spawn' : 'despawn', reason: h.reason, distance: h.distance, rule: h.rule,
      })),
    };
    showWhy();
  } catch {
    // The server restarting, a reconnect under way: the next question asks again.
  } finally {
    historyInFlight = false;
  }
}

/** Asks again about the open panel's entity, by the handle the first answer gave. */
function refreshWhy(now) {
  const q = session.question;
  if (q === null || !debugViewOn() || now - lastWhyAt < WHY_INTERVAL_MS) return;
  send(encodeWhy(q.index, q.generation));
  lastWhyAt = now;
  ++whyAsked;
  fetchHistory(q.index, q.generation);
}

// --- receiving -----------------------------------------------------------------------------

function fail(message) {
  ui.error.textContent = `${message}\nThe page closed the connection.`;
  ui.error.hidden = false;
  if (socket !== null && socket.readyState <= WebSocket.OPEN) {
    // A browser may close with 1000 or 3000..4999; the reason is at most 123 bytes.
    socket.close(4000, message.slice(0, 100));
  }
}

function onWelcome(w) {
  // A new connection: its own history, and a console asked about afresh.
  serverHistory = null;
  debugConsole = null;
  const lo = w.enterRadius / 4;
  ui.radius.min = String(lo);
  ui.radius.max = String(Math.max(lo, w.maxRadius));
  ui.radius.step = String((w.maxRadius - lo) / 400 || 0.01);
  ui.radius.value = String(w.enterRadius);
  ui.radius.disabled = !(w.maxRadius > lo);
  ui.hysteresis.disabled = false;
  ui.interest.disabled = false;
  ui.debug.disabled = !w.debugAllowed;
  ui.debug.parentElement.title = w.debugAllowed ? 'streams the entities you do not hold, as grey outlines'
    : 'the server was started without --debug-view';
  ui.entities.textContent = `${w.entityCount} entities, ${w.width} x ${w.height}, ${w.tickRate} Hz`;
  resize();
}

function syncToggles() {
  const o = session.options;
  if (o === null) return;
  if (pendingOptions !== null) {
    if (o.byte === pendingOptions.flags || performance.now() - pendingOptions.at > 3000) pendingOptions = null;
    else return;
  }
  ui.hysteresis.checked = o.hysteresis;
  ui.interest.checked = o.interest;
  ui.debug.checked = o.debug;
}

function connect(urls = socketUrls()) {
  session = new Session();
  pendingOptions = null;
  closeReason = null;
  ui.error.hidden = true;
  ui.reconnect.hidden = true;
  ui.status.textContent = 'connecting…';
  ui.status.classList.remove('live');
  const ws = new WebSocket(urls[0]);
  ws.binaryType = 'arraybuffer';
  socket = ws;
  let opened = false;
  ws.onopen = () => {
    opened = true;
    connected = true;
  };
  ws.onmessage = (event) => {
    if (socket !== ws || !(event.data instanceof ArrayBuffer)) return;
    const hadWelcome = session.welcome !== null;
    const error = session.receive(new Uint8Array(event.data), performance.now());
    if (error !== null) {
      fail(error);
      return;
    }
    if (!hadWelcome && session.welcome !== null) onWelcome(session.welcome);
    syncToggles();
    showLines();
    showWhy();
  };
  ws.onclose = (event) => {
    if (socket !== ws) return;
    if (!opened && urls.length > 1) {
      connect(urls.slice(1));
      return;
    }
    connected = false;
    session.dismiss();
    showLines();
    showWhy();
    // 1013 "try again later": the server has no place for another connection.
    closeReason = event.code === 1013 ? 'server full: try again later'
      : `closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`;
    ui.status.textContent = closeReason;
    ui.status.classList.remove('live');
    ui.reconnect.hidden = false;
    for (const input of [ui.hysteresis, ui.interest, ui.debug, ui.radius]) input.disabled = true;
  };
}

// The lines a tick may change, set as each frame arrives (a background tab draws rarely): what
// the client knows of its own interest (entities still on their way) and the server's last message.
function showLines() {
  const pending = connected ? session.interest.pending : 0;
  ui.loading.hidden = pending === 0;
  if (pending !== 0) {
    ui.loading.textContent = `loading the area: ${pending} to go`;
    loadingFramesShown += 1;
    lastLoadingLine = ui.loading.textContent;
  }
  const last = session.serverMessages.at(-1);
  if (last !== undefined) ui.message.textContent = `server: ${last}`;
}

// --- the why panel -------------------------------------------------------------------------

const handle = (index, generation) => (generation === 0 ? `${index}` : `${index}:${generation}`);

/** The panel's content as plain data: the hook's whyPanel, and what showWhy draws. */
function whyPanelState() {
  const q = session.question;
  if (q === null) return null;
  const a = session.answer;
  const generation = a?.generation || q.generation;
  const held = session.mirror.held.get(q.index);
  const pageHolds = held !== undefined && (generation === 0 || held.generation === generation);
  const transitions = session.transitionsOf(q.index)
    .filter((t) => generation === 0 || t.generation === generation)
    .map((t) => ({ tick: t.tick, kind: t.kind, reason: t.reason, created: t.created, generation: t.generation }));
  const recorded = serverHistory !== null && serverHistory.index === q.index &&
    (generation === 0 || serverHistory.generation === generation) ? serverHistory.entries : null;
  return {
    index: q.index,
    generation,
    kind: pageHolds ? KINDS[held.kind] ?? null : null,
    answered: a !== null,
    tick: a?.tick ?? null,
    stale: a?.stale ?? null,
    held: a === null || a.stale ? null : a.held,
    rule: a?.rule ?? null,
    root: a?.root ?? null,
    pageHolds,
    transitions,
    serverHistory: recorded,
  };
}

function showWhy() {
  const p = whyPanelState();
  const key = JSON.stringify(p);
  if (key === whyShown) return;
  whyShown = key;
  ui.why.hidden = p === null;
  if (p === null) return;
  ui.whyEntity.textContent = `entity ${handle(p.index, p.generation)}${p.kind ? ` · ${p.kind}` : ''}`;
  ui.whyVerdict.classList.toggle('held', p.held === true);
  ui.whyVerdict.classList.toggle('not-held', p.held === false || p.stale === true);
  if (!p.answered) {
    ui.whyVerdict.textContent = 'asking the server…';
    ui.whyMeaning.textContent = '';
    ui.whyRoot.textContent = '';
  } else if (p.stale) {
    ui.whyVerdict.textContent = `gone at tick ${p.tick}: stale handle`;
    ui.whyMeaning.textContent = 'no live entity under this handle: destroyed, or its slot reused';
    ui.whyRoot.textContent = '';
  } else {
    ui.whyVerdict.textContent = `${p.held ? 'held' : 'not held'}: ${p.rule} (tick ${p.tick})`;
    ui.whyMeaning.textContent = RULE_MEANINGS[p.rule] ?? '';
    const itself = p.root.index === p.index && p.root.generation === p.generation;
    ui.whyRoot.textContent = `root ${handle(p.root.index, p.root.generation)}${itself ? ' (itself: not attached)' : ''}`;
  }
  ui.whyPage.textContent = p.pageHolds ? 'this page holds it' : 'this page does not hold it';
  if (p.serverHistory !== null && p.serverHistory.length > 0) {
    // The server's flight recorder: each transition with the distance and the rule at its tick.
    ui.whyTransitionsLabel.textContent = "the server's flight recorder, newest first:";
    ui.whyTransitions.replaceChildren(...p.serverHistory.slice().reverse().map((h) => Object.assign(document.createElement('li'), {
      textContent: `tick ${h.tick} · ${h.kind} · ${h.reason} · ` +
        `${h.distance === null ? 'no origin in its space' : `${h.distance.toFixed(2)} from the nearest origin`}` +
        ` · ${h.rule === null ? 'destroyed' : h.rule}`,
      className: h.kind,
    })));
    return;
  }
  ui.whyTransitionsLabel.textContent = 'last transitions, newest first:';
  ui.whyTransitions.replaceChildren(...(p.transitions.length === 0
    ? [Object.assign(document.createElement('li'), { textContent: 'no spawn or despawn since the stream began', className: 'dim' })]
    : p.transitions.slice().reverse().map((t) => Object.assign(document.createElement('li'), {
      textContent: `tick ${t.tick} · ${t.kind} · ${t.reason}${t.created ? ' (created)' : ''}`,
      className: t.kind,
    }))));
}

// --- the canvas ----------------------------------------------------------------------------

function view() {
  const w = session.welcome ?? { width: 16, height: 10 };
  const dpr = window.devicePixelRatio || 1;
  return viewTransform(ui.world.width, ui.world.height, w.width, w.height, MARGIN_CSS_PX * dpr);
}

function resize() {
  const dpr = window.devicePixelRatio || 1;
  const w = session.welcome ?? { width: 16, height: 10 };
  const cssWidth = ui.stage.clientWidth;
  const cssHeight = Math.min(cssWidth * (w.height / w.width), window.innerHeight * 0.82);
  ui.world.style.height = `${Math.round(cssHeight)}px`;
  ui.world.width = Math.round(cssWidth * dpr);
  ui.world.height = Math.round(cssHeight * dpr);
  ui.chart.width = Math.round(ui.chart.clientWidth * dpr);
  ui.chart.height = Math.round(ui.chart.clientHeight * dpr);
}

function pointerWorld(event) {
  const rect = ui.world.getBoundingClientRect();
  const px = ((event.clientX - rect.left) / rect.width) * ui.world.width;
  const pz = ((event.clientY - rect.top) / rect.height) * ui.world.height;
  const [x, z] = view().toWorld(px, pz);
  const w = session.welcome;
  return { x: insideWorld(x, w.width), z: insideWorld(z, w.height) };
}

/** Clamps to [0, size), a float32 strictly below the world's far edge, so no reading of "inside" refuses it. */
function insideWorld(v, size) {
  const c = Math.min(Math.max(v, 0), size);
  return Math.fround(c) < size ? c : size * (1 - 1e-6);
}

/** The entity nearest the pointer within reach of its disc (held, or a debug outline), or null. */
function pickEntity(event) {
  const rect = ui.world.getBoundingClientRect();
  const px = ((event.clientX - rect.left) / rect.width) * ui.world.width;
  const pz = ((event.clientY - rect.top) / rect.height) * ui.world.height;
  const v = view();
  const dpr = window.devicePixelRatio || 1;
  const reach = Math.max(PICK_CSS_PX * dpr, 2 * entityRadius(v.scale, dpr));
  let best = null;
  let bestSquared = reach * reach;
  const consider = (index, generation, x, z) => {
    const [cx, cz] = v.toCanvas(x, z);
    const d = (cx - px) ** 2 + (cz - pz) ** 2;
    if (d <= bestSquared) {
      bestSquared = d;
      best = { index, generation };
    }
  };
  for (const [index, e] of session.mirror.held) consider(index, e.generation, e.x, e.z);
  // A debug outline names its index alone: generation 0 asks about whichever entity is there.
  for (const e of session.hidden ?? []) consider(e.index, 0, e.x, e.z);
  return best;
}

ui.world.addEventListener('pointerdown', (event) => {
  if (session.welcome === null || !connected) return;
  // In debug view a press on an entity asks why; anywhere else it drags the viewer.
  const picked = debugViewOn() ? pickEntity(event) : null;
  if (picked !== null) {
    askWhy(picked.index, picked.generation);
    return;
  }
  dragging = true;
  ui.world.setPointerCapture(event.pointerId);
  target = pointerWorld(event);
  sendMove(target);
});
ui.world.addEventListener('pointermove', (event) => {
  if (!dragging) return;
  target = pointerWorld(event);
  sendMove(target);
});
const endDrag = () => {
  dragging = false;
  target = null;
};
ui.world.addEventListener('pointerup', endDrag);
ui.world.addEventListener('pointercancel', endDrag);

for (const input of [ui.hysteresis, ui.interest, ui.debug]) input.addEventListener('change', onToggle);
ui.radius.addEventListener('input', () => sendRadius(Number(ui.radius.value)));
ui.reconnect.addEventListener('click', () => connect());
ui.whyClose.addEventListener('click', () => {
  session.dismiss();
  showWhy();
});
window.addEventListener('resize', resize);

// --- every frame ---------------------------------------------------------------------------

const format = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
let lastText = -Infinity;

function updateText(now) {
  const t = session.counters.totals;
  ui.rate.messages.textContent = format.format(rates.messages);
  ui.rate.updates.textContent = format.format(rates.updates);
  ui.rate.sd.textContent = format.format(rates.spawnsDespawns);
  ui.rate.bytes.textContent = format.format(rates.bytes);
  ui.total.messages.textContent = format.format(t.records);
  ui.total.updates.textContent = format.format(t.updates);
  ui.total.sd.textContent = format.format(t.spawns + t.despawns);
  ui.total.bytes.textContent = format.format(t.bytes);
  ui.held.textContent = format.format(session.mirror.held.size);
  ui.ticks.textContent = format.format(session.ticksSeen);
  ui.anomalies.textContent = format.format(session.anomalies);
  ui.anomalies.classList.toggle('bad', session.anomalies > 0);
  ui.anomalies.title = session.mirror.lastAnomaly ?? '';
  ui.radiusValue.textContent = session.welcome ? session.enterRadius.toFixed(2) : '–';
  // Interest off: what sending everything to everyone costs server-wide, beside this connection.
  const sendingAll = session.welcome !== null && session.options !== null && !session.options.interest;
  ui.everyone.hidden = !sendingAll;
  if (sendingAll) {
    const n = session.mirror.held.size + 1;  // every entity, and this connection's own viewer
    ui.everyone.textContent = `Everything to everyone: if each of the ${n} entities were a client, ` +
      `N(N−1) = ${(n * (n - 1)).toLocaleString('en-US')} updates a tick server-wide; ` +
      `this connection alone: ${n - 1} a tick.`;
  }
  if (connected && session.welcome) {
    ui.status.textContent = `live · connection ${session.welcome.connectionId} · tick ${session.lastTick ?? '–'}`;
    ui.status.classList.add('live');
  }

  const dpr = window.devicePixelRatio || 1;
  drawChart(ui.chart.getContext('2d'), session.counters, { width: ui.chart.width, height: ui.chart.height, dpr });
  showWhy();
  lastText = now;
}

function frame(now) {
  rates = session.counters.sample(now);
  if (session.welcome !== null) {
    const dpr = window.devicePixelRatio || 1;
    const ctx = ui.world.getContext('2d');
    const drawn = drawScene(ctx, view(), {
      world: session.welcome,
      viewer: session.viewer,
      enterRadius: session.enterRadius,
      leaveRadius: session.leaveRadius,
      interest: session.options?.interest ?? true,
      grid: session.grid,
      held: session.mirror.held,
      markers: session.markers,
      rings: session.rings,
      hidden: session.hidden,
      target,
      selected: session.question?.index ?? null,
    }, now, dpr);
    selectedDrawn = drawn.selected;
    drawnEntities = drawn.entities;
    cellsShaded = drawn.cells;
    shadedRange = session.grid?.scanned ?? null;
    ringsDrawn = drawn.rings;
    ringsEverDrawn += drawn.rings;
    hiddenDrawn = session.hidden?.length ?? 0;
    ++framesDrawn;

  }
  refreshWhy(now);
  if (now - lastText >= 250) updateText(now);
  requestAnimationFrame(frame);
}

// --- for tests: a read-only view of the page's state ---------------------------------------

const copy = (o) => Object.freeze({ ...o });
Object.defineProperty(window, 'sightline', {
  value: Object.freeze({
    get connected() { return connected; },
    get closeReason() { return closeReason; },
    get error() { return session.error; },
    get welcome() { return session.welcome; },
    get options() { return session.options && copy(session.options); },
    get viewer() { return session.viewer && copy(session.viewer); },
    get enterRadius() { return session.enterRadius; },
    get leaveRadius() { return session.leaveRadius; },
    /** spawns, despawns, updates, records (all three), bytes: since the page connected. */
    get totals() { return copy(session.counters.totals); },
    /** messages (records), spawnsDespawns, updates, bytes: over the last second. */
    get perSecond() { return copy(session.counters.perSecond(performance.now())); },
    get held() { return session.mirror.held.size; },
    get anomalies() { return session.anomalies; },
    get anomalyKinds() { return copy(session.mirror.anomalies); },
    get lastAnomaly() { return session.mirror.lastAnomaly; },
    get ticksSeen() { return session.ticksSeen; },
    get lastTick() { return session.lastTick; },
    get resets() { return session.resets; },
    get packets() { return session.packets; },
    get debugFrames() { return session.debugFrames; },
    get drawnEntities() { return drawnEntities; },
    get hiddenDrawn() { return hiddenDrawn; },
    /** Shots this connection heard (from farther than R too), rings on the last frame and ever. */
    get shotsHeard() { return session.shotsHeard; },
    get shotsHeardBeyondR() { return session.shotsHeardBeyondR; },
    get ringsDrawn() { return ringsDrawn; },
    /** The server's messages received (the last 20), and the line showing the latest. */
    get serverMessages() { return [...session.serverMessages]; },
    get messageLine() { return ui.message.textContent; },
    /** The send-everything line shown with interest off, or null. */
    get everyoneLine() { return ui.everyone.hidden ? null : ui.everyone.textContent; },
    /** The last tick frame's grid ({originX, originZ, cellSize, scanned}) and the cells shaded. */
    get grid() { return session.grid && copy({ ...session.grid, scanned: session.grid.scanned && copy(session.grid.scanned) }); },
    get cellsShaded() { return cellsShaded; },
    get shadedRange() { return shadedRange && copy(shadedRange); },
    get ringsEverDrawn() { return ringsEverDrawn; },
    /** {culling, radius, pending} as the mirror answers after the last tick. */
    get interest() { return copy(session.interest); },
    get loadingLine() { return ui.loading.hidden ? null : ui.loading.textContent; },
    /** Ticks that ended with entities on their way; frames after which the line showed, and its last text. */
    get ticksLoading() { return session.ticksLoading; },
    get loadingFramesShown() { return loadingFramesShown; },
    get lastLoadingLine() { return lastLoadingLine; },
    get framesDrawn() { return framesDrawn; },
    /** The held entities ({index, generation, x, z, kind}) and the debug outlines ({index, x, z}). */
    get heldEntities() {
      return [...session.mirror.held].map(([index, e]) => copy({ index, generation: e.generation, x: e.x, z: e.z, kind: e.kind }));
    },
    get hiddenEntities() { return (session.hidden ?? []).map((e) => copy(e)); },
    /**
     * The why panel, or null while closed: {index, generation, kind, answered, tick, stale, held,
     * rule, root {index, generation}, pageHolds, transitions [{tick, kind, reason, created,
     * generation}] oldest first, serverHistory (null, or the debug console's [{tick, kind, reason,
     * distance, rule}] oldest first), text (what the panel reads)}.
     */
    get whyPanel() {
      const p = whyPanelState();
      return p && Object.freeze({
        ...p, transitions: p.transitions.map(copy), serverHistory: p.serverHistory && p.serverHistory.map(copy),
        root: p.root && copy(p.root), text: ui.why.hidden ? null : ui.why.innerText,
      });
    },
    /** Why frames sent (clicks and the open panel's refreshes), answers taken, the selection ring drawn. */
    get whyAsked() { return whyAsked; },
    get whyAnswers() { return session.whyAnswers; },
    get selectedDrawn() { return selectedDrawn; },
    /** The canvas's mapping, for a test that drags: world (x, z) to CSS pixels in the page. */
    worldToPage(x, z) {
      const rect = ui.world.getBoundingClientRect();
      const [px, pz] = view().toCanvas(x, z);
      return Object.freeze({ x: rect.left + (px / ui.world.width) * rect.width, y: rect.top + (pz / ui.world.height) * rect.height });
    },
  }),
  writable: false,
  configurable: false,
});

resize();
connect();
requestAnimationFrame(frame);
