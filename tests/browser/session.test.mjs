// The page's Session (tools/server/web/js/session.js): a connection's frames in order, a reset,
// the debug view with its why question, answer and transitions, and a malformed frame refused
// whole.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { Session, TRANSITIONS_PER_ENTITY } from '../../tools/server/web/js/session.js';
import { decodeServerFrame, encodeWhy, RULE_NAMES } from '../../tools/server/web/js/frames.js';
import { bundleFrame, debugFrame, encodePacket, entityPayload, resetFrame, tickFrame, welcomeFrame, whyAnswerFrame } from './lib/encode.mjs';

const world = { connectionId: 5, width: 12, height: 7.5, enterRadius: 1.6, leaveRadius: 2, cellSize: 1.6,
  tickRate: 20, serverFlags: 1, maxRadius: 6, entityCount: 121 };

const spawn = (reliableId, index, x, z) =>
  ({ type: 'spawn', reliableId, index, generation: 1, reason: 0, stateAge: 0, payload: entityPayload(world, x, z, 0) });
const update = (index, x, z) => ({ type: 'update', index, generation: 1, payload: entityPayload(world, x, z) });
const despawn = (reliableId, index) => ({ type: 'despawn', reliableId, index, generation: 1, reason: 0 });
const packet = (sequence, tick, records) => encodePacket({ delivery: 'reliable', sequence, tick, reliableNext: 0, records });
const tick = (t, packets, options = 3) =>
  tickFrame({ tick: t, viewerX: 6, viewerZ: 4, enterRadius: 1.6, leaveRadius: 2, options }, packets);

test('a connection: welcome, ticks, a reset, the debug view', () => {
  const s = new Session();
  assert.equal(s.receive(welcomeFrame(world), 0), null);
  assert.equal(s.welcome.cellSize, Math.fround(1.6));
  assert.equal(s.receive(tick(1, []), 50), null, 'a tick with no packet');
  const first = tick(2, [packet(0, 2, [spawn(0, 10, 6.5, 4), spawn(1, 11, 5, 4)]), packet(1, 2, [update(12, 1, 1)])]);
  assert.equal(s.receive(first, 100), null);
  assert.equal(s.mirror.held.size, 2);
  assert.equal(s.anomalies, 1, 'the update of 12 is update_unknown');
  assert.equal(s.mirror.anomalies.update_unknown, 1);
  assert.equal(s.markers.length, 2);
  assert.equal(s.receive(tick(3, [packet(2, 3, [update(10, 6.6, 4), despawn(2, 11)])]), 150), null);
  assert.deepEqual(s.counters.totals, { spawns: 2, despawns: 1, updates: 2, records: 5,
    bytes: welcomeFrame(world).length + tick(1, []).length + first.length +
      tick(3, [packet(2, 3, [update(10, 6.6, 4), despawn(2, 11)])]).length });
  assert.equal(s.markers.filter((m) => m.kind === 'leave').length, 1);
  assert.deepEqual(s.viewer, { x: 6, z: 4 });
  assert.equal(s.options.interest, true);
  assert.equal(s.ticksSeen, 3);

  // Debug view: kept while the options say so.
  assert.equal(s.receive(tick(4, [], 7), 200), null);
  const bytesBefore = s.counters.totals.bytes;
  const d = debugFrame(4, [{ index: 3, x: 1, z: 1 }, { index: 4, x: 2, z: 2 }]);
  assert.equal(s.receive(d, 201), null);
  assert.equal(s.hidden.length, 2);
  assert.equal(s.counters.totals.bytes, bytesBefore, 'debug frames are counted apart from the stream');
  assert.equal(s.debugBytes, d.length);

  // Reset: everything forgotten, the next packet has sequence 0 again.
  assert.equal(s.receive(resetFrame(5), 250), null);
  assert.equal(s.mirror.held.size, 0);
  assert.equal(s.markers.length, 0);
  assert.equal(s.hidden, null);
  assert.equal(s.receive(tick(5, [packet(0, 5, [spawn(0, 10, 6.5, 4)])], 3), 300), null);
  assert.equal(s.mirror.held.size, 1);
  assert.equal(s.anomalies, 1, 'no new anomaly; the one before the reset still counts');
  assert.equal(s.resets, 1);
  assert.equal(s.hidden, null);
});

test('a malformed frame stops the session and applies nothing of itself', () => {
  const s = new Session();
  s.receive(welcomeFrame(world), 0);
  s.receive(tick(1, [packet(0, 1, [spawn(0, 10, 6.5, 4)])]), 50);
  const good = packet(1, 2, [despawn(1, 10)]);
  const bad = packet(2, 2, [update(10, 1, 1)]);
  bad[bad.length - 1] ^= 0x80;  // a padding bit of the last payload
  const error = s.receive(tick(2, [good, bad]), 100);
  assert.match(error, /^malformed packet: packet 1 of the tick, record 0 \(update of 10:1\): its payload fails/);
  assert.equal(s.mirror.held.size, 1, 'the good packet before it was not applied either');
  assert.equal(s.ticksSeen, 1);
  assert.equal(s.receive(tick(3, []), 150), error, 'nothing after it is taken');
  assert.equal(s.ticksSeen, 1);

  const early = new Session();
  assert.match(early.receive(tick(1, []), 0), /^malformed frame: a tick frame before the welcome/);
  const twice = new Session();
  twice.receive(welcomeFrame(world), 0);
  assert.match(twice.receive(welcomeFrame(world), 1), /a second welcome/);
});

test('the tick frame brings the library grid and the cells the scan read', () => {
  const s = new Session();
  s.receive(welcomeFrame(world), 0);
  const scanned = { x0: 2, x1: 4, z0: 1, z1: 3 };
  assert.equal(s.receive(tickFrame({ tick: 1, viewerX: 6, viewerZ: 4, enterRadius: 1.6, leaveRadius: 2, options: 3,
    gridOriginX: 0.25, gridOriginZ: -0.5, cellSize: 1.6, scanned }, []), 0), null);
  assert.deepEqual(s.grid, { originX: 0.25, originZ: -0.5, cellSize: Math.fround(1.6), scanned });
  assert.equal(s.receive(tickFrame({ tick: 2, viewerX: 6, viewerZ: 4, enterRadius: 1.6, leaveRadius: 2, options: 1,
    cellSize: 1.6 }, []), 50), null);
  assert.equal(s.grid.scanned, null, 'interest off: nothing scanned');
  // An empty range, a flag above 1, cells without the flag, a cell size of 0: refused whole.
  const bad = (fields, pattern) => {
    const t = new Session();
    t.receive(welcomeFrame(world), 0);
    assert.match(t.receive(tickFrame({ tick: 1, viewerX: 6, viewerZ: 4, enterRadius: 1.6, leaveRadius: 2, options: 3,
      cellSize: 1.6, ...fields }, []), 0), pattern);
  };
  bad({ scanned: { x0: 3, x1: 2, z0: 0, z1: 0 } }, /the scanned cells \[3, 2\] x \[0, 0\] are empty/);
  bad({ cellSize: 0 }, /cell size at byte 40 is 0/);
  const flagged = tickFrame({ tick: 1, viewerX: 6, viewerZ: 4, enterRadius: 1.6, leaveRadius: 2, options: 3, cellSize: 1.6 }, []);
  flagged[44] = 2;
  const t = new Session();
  t.receive(welcomeFrame(world), 0);
  assert.match(t.receive(flagged, 0), /scanned at byte 44 is 2/);
  flagged[44] = 0;
  flagged[45] = 1;
  const u = new Session();
  u.receive(welcomeFrame(world), 0);
  assert.match(u.receive(flagged, 0), /scan cells given while scanned is 0/);
});

test('shots heard become rings, created entities a spark, the interest status a loading count', () => {
  const s = new Session();
  s.receive(welcomeFrame(world), 0);
  const shot = (x, z) => ({ type: 'event', eventClass: 0, x, z, payload: [0, 0, 0, 0, 0, 0, 0, 0] });
  const born = { ...spawn(0, 10, 6.5, 4), created: true };
  const status = { culling: true, radius: 1.25, pending: 3 };
  const p = encodePacket({ delivery: 'reliable', sequence: 0, tick: 2, reliableNext: 0, interest: status,
    records: [born, spawn(1, 11, 5, 4), shot(6.5, 4), shot(9, 4)] });
  assert.equal(s.receive(tick(2, [p]), 100), null);
  // Two enters, one of them created: two pluses and one spark.
  assert.equal(s.markers.filter((m) => m.kind === 'enter').length, 2);
  assert.deepEqual(s.markers.filter((m) => m.kind === 'created').map((m) => [m.x, m.z]), [[6.5, 4]]);
  // Both shots heard; the one at (9, 4) is 3 from the viewer at (6, 4), beyond R = 1.6.
  assert.equal(s.rings.length, 2);
  assert.equal(s.shotsHeard, 2);
  assert.equal(s.shotsHeardBeyondR, 1);
  assert.deepEqual(s.interest, { culling: true, radius: Math.fround(1.25), pending: 3 });
  // Rings fade after RING_MS; a reset clears them.
  assert.equal(s.receive(tick(3, []), 100 + 900), null);
  assert.equal(s.rings.length, 0);
  assert.equal(s.receive(resetFrame(4), 1100), null);
  assert.equal(s.rings.length, 0);
});

test('server messages are kept as text, the last twenty', () => {
  const s = new Session();
  s.receive(welcomeFrame(world), 0);
  const text = (t) => [...new TextEncoder().encode(t)];
  const records = [];
  for (let i = 0; i < 22; ++i) records.push({ type: 'message', reliableId: i, payload: text(`note ${i}`) });
  const p = encodePacket({ delivery: 'reliable', sequence: 0, tick: 1, reliableNext: 22, records });
  assert.equal(s.receive(tick(1, [p]), 0), null);
  assert.equal(s.serverMessages.length, 20);
  assert.equal(s.serverMessages[0], 'note 2');
  assert.equal(s.serverMessages.at(-1), 'note 21');
});

test('why: the answer to the question asked, and the transitions the mirror applied', () => {
  const s = new Session();
  s.receive(welcomeFrame(world), 0);
  const spawnAs = (reliableId, index, reason) => ({ ...spawn(reliableId, index, 6.5, 4), reason });
  const despawnAs = (reliableId, index, reason) => ({ ...despawn(reliableId, index), reason });
  // 10 enters (near), 11 enters (teleport); a second spawn of 10 is an anomaly, not a transition.
  assert.equal(s.receive(tick(2, [packet(0, 2, [spawnAs(0, 10, 0), spawnAs(1, 10, 1), spawnAs(2, 11, 6)])], 7), 100), null);
  assert.equal(s.anomalies, 1);
  assert.equal(s.receive(tick(3, [packet(1, 3, [despawnAs(3, 10, 0), despawnAs(4, 11, 1)])], 7), 150), null);
  assert.equal(s.receive(tick(4, [packet(2, 4, [spawnAs(5, 10, 0)])], 7), 200), null);
  assert.deepEqual(s.transitionsOf(10).map((t) => [t.tick, t.kind, t.reason]),
    [[2, 'spawn', 'near'], [3, 'despawn', 'left'], [4, 'spawn', 'near']]);
  assert.deepEqual(s.transitionsOf(11).map((t) => [t.tick, t.kind, t.reason, t.generation]),
    [[2, 'spawn', 'teleport', 1], [3, 'despawn', 'destroyed', 1]]);
  assert.deepEqual(s.transitionsOf(12), []);

  // An answer to no question, or to another entity, is dropped.
  const answer = (fields) => whyAnswerFrame({ tick: 4, index: 10, generation: 1, held: true, rule: 9, root: { index: 10, generation: 1 }, ...fields });
  assert.equal(s.receive(answer({}), 210), null);
  assert.equal(s.answer, null);
  s.ask(10, 1);
  assert.equal(s.receive(answer({ index: 11 }), 220), null);
  assert.equal(s.answer, null);
  assert.equal(s.receive(answer({}), 230), null);
  assert.deepEqual({ ...s.answer }, { type: 'why_answer', tick: 4, index: 10, generation: 1, stale: false, held: true,
    rule: 'near', root: { index: 10, generation: 1 } });
  assert.equal(s.whyAnswers, 1);

  // A debug outline is asked by index: the answer's generation is kept for the questions after.
  s.ask(12, 0);
  assert.equal(s.answer, null, 'another entity: the old answer goes');
  assert.equal(s.receive(answer({ index: 12, generation: 3, held: false, rule: 11, root: { index: 12, generation: 3 } }), 240), null);
  assert.equal(s.answer.rule, 'out_of_range');
  assert.deepEqual(s.question, { index: 12, generation: 3 });
  assert.equal(s.receive(answer({ index: 12, generation: 3, answer: 1, held: false, rule: 0, root: null }), 250), null);
  assert.equal(s.answer.stale, true);
  assert.equal(s.answer.rule, null);

  // The debug view off dismisses the panel; a reset forgets the transitions too.
  assert.equal(s.receive(tick(5, [], 3), 300), null);
  assert.equal(s.question, null);
  s.ask(10, 1);
  assert.equal(s.receive(resetFrame(6), 350), null);
  assert.equal(s.question, null);
  assert.equal(s.transitions.size, 0);
});

test('why: transitions are bounded per entity and in entities', () => {
  const s = new Session();
  s.receive(welcomeFrame(world), 0);
  let id = 0;
  let seq = 0;
  for (let t = 1; t <= 20; ++t) {
    const records = t % 2 === 1 ? [spawn(id++, 10, 6.5, 4)] : [despawn(id++, 10)];
    assert.equal(s.receive(tick(t, [packet(seq++, t, records)]), t), null);
  }
  assert.equal(s.transitionsOf(10).length, TRANSITIONS_PER_ENTITY);
  assert.equal(s.transitionsOf(10).at(-1).tick, 20);
  for (let i = 0; i < 5000; ++i) s.noteTransition(1000 + i, { tick: 21, generation: 1, kind: 'spawn', reason: 'near', created: false });
  assert.equal(s.transitions.size, 4096);
  assert.equal(s.transitionsOf(1000).length, 0, 'the entity touched longest ago went first');
  assert.equal(s.transitionsOf(5999).length, 1);
});

test('why frames: the bytes of a question, the checks of an answer, the rule names of relevance.h', () => {
  assert.deepEqual([...encodeWhy(0x04030201, 0x08070605)], [4, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual([...encodeWhy(0xffffffff, 0)], [4, 255, 255, 255, 255, 0, 0, 0, 0]);
  const good = { tick: 4, index: 10, generation: 1, held: true, rule: 10, root: { index: 10, generation: 1 } };
  assert.equal(decodeServerFrame(whyAnswerFrame(good)).rule, 'within_leave');
  const refused = (fields, pattern) => assert.throws(() => decodeServerFrame(whyAnswerFrame({ ...good, ...fields })), pattern);
  refused({ answer: 2 }, /answer at byte 13 is 2/);
  refused({ rule: 14 }, /rule at byte 15 is 14/);
  refused({ generation: 0 }, /names no entity/);
  refused({ answer: 1 }, /must be 0 in a stale answer/);
  const held = whyAnswerFrame(good);
  held[14] = 2;
  assert.throws(() => decodeServerFrame(held), /held at byte 14 is 2/);
  assert.throws(() => decodeServerFrame(whyAnswerFrame(good).slice(0, 23)), /why_answer frame is 23 bytes, expected 24/);

  // The page names rules by value: the same list, in the same order, as the library's enum.
  const header = readFileSync(new URL('../../include/sightline/relevance.h', import.meta.url), 'utf8');
  const body = header.slice(header.indexOf('enum class Rule'), header.indexOf('};', header.indexOf('enum class Rule')));
  const rules = [...body.matchAll(/^\s*(\w+) = (\d+),/gm)].map((m) => [m[1], Number(m[2])]);
  assert.deepEqual(rules, RULE_NAMES.map((name, value) => [name, value]));
});

test('a bundle of a welcome and two ticks is taken as the three apart', () => {
  const frames = [
    welcomeFrame(world),
    tick(1, [packet(0, 1, [spawn(0, 10, 6.5, 4), spawn(1, 11, 5, 4)]), packet(1, 1, [update(12, 1, 1)])]),
    tick(2, [packet(2, 2, [update(10, 6.6, 4), despawn(2, 11)])], 7),
  ];
  const apart = new Session();
  for (const f of frames) assert.equal(apart.receive(f, 100), null);
  const together = new Session();
  const bundle = bundleFrame(frames);
  assert.equal(together.receive(bundle, 100), null);
  const seen = (s) => ({
    welcome: { ...s.welcome }, held: [...s.mirror.held.keys()], totals: { ...s.counters.totals },
    rates: s.counters.perSecond(100), frames: s.frames, packets: s.packets, ticksSeen: s.ticksSeen, lastTick: s.lastTick,
    viewer: s.viewer, options: s.options, anomalies: s.anomalies, markers: s.markers.map((m) => m.kind),
    transitions: [...s.transitions.entries()], error: s.error,
  });
  assert.deepEqual(seen(together), seen(apart));
  // The values themselves: the frames count, not the message; the bundle's 13 own bytes count nowhere.
  assert.equal(together.frames, 3);
  assert.equal(together.bundles, 1);
  assert.equal(apart.bundles, 0);
  assert.equal(together.welcome.connectionId, 5);
  assert.equal(together.ticksSeen, 2);
  assert.equal(together.lastTick, 2);
  assert.equal(together.packets, 3);
  assert.deepEqual([...together.mirror.held.keys()], [10]);
  assert.equal(together.anomalies, 1, 'the update of 12 is update_unknown');
  assert.equal(together.options.debug, true);
  assert.deepEqual(together.markers.map((m) => m.kind), ['enter', 'enter', 'leave']);
  assert.deepEqual(together.counters.totals, { spawns: 2, despawns: 1, updates: 2, records: 5,
    bytes: frames[0].length + frames[1].length + frames[2].length });
  assert.equal(together.counters.totals.bytes, bundle.length - 1 - 3 * 4);

  // A bundle after the welcome: a debug frame counted apart, then a reset, then a tick of the new stream.
  const d = debugFrame(2, [{ index: 3, x: 1, z: 1 }]);
  assert.equal(together.receive(bundleFrame([d, resetFrame(3), tick(3, [packet(0, 3, [spawn(0, 11, 5, 4)])])]), 150), null);
  assert.equal(together.debugBytes, d.length);
  assert.equal(together.resets, 1);
  assert.deepEqual([...together.mirror.held.keys()], [11]);
  assert.equal(together.frames, 6);
  assert.equal(together.bundles, 2);
});

test('a frame of a bundle that fails ends the session there; a bundle that does not split applies nothing', () => {
  const w = welcomeFrame(world);  // 37 bytes: the bundle's frames start at bytes 5, 46, 111 and 176
  const empty = tick(1, []);
  assert.equal(empty.length, 61);

  // The welcome and a tick are taken, the second welcome ends the session, the tick after it is not taken.
  const s = new Session();
  const error = s.receive(bundleFrame([w, empty, w, tick(2, [])]), 0);
  assert.equal(error, 'malformed frame: bundle frame 2 of 4 at byte 111: a second welcome');
  assert.equal(s.error, error);
  assert.equal(s.frames, 2);
  assert.equal(s.ticksSeen, 1);
  assert.equal(s.lastTick, 1);
  assert.equal(s.receive(tick(3, []), 50), error, 'nothing after it is taken');
  assert.equal(s.ticksSeen, 1);

  // Welcome first, inside a bundle as outside one.
  const early = new Session();
  assert.equal(early.receive(bundleFrame([empty, w]), 0), 'malformed frame: bundle frame 0 of 2 at byte 5: a tick frame before the welcome');
  assert.equal(early.welcome, null);
  assert.equal(early.frames, 0);

  // A malformed packet: the frames before it stay applied, nothing of its frame is.
  const p = new Session();
  const bad = packet(1, 2, [update(10, 1, 1)]);
  bad[bad.length - 1] ^= 0x80;  // a padding bit of the last payload
  const cut = p.receive(bundleFrame([w, tick(1, [packet(0, 1, [spawn(0, 10, 6.5, 4)])]), tick(2, [bad])]), 0);
  assert.match(cut, /^malformed packet: bundle frame 2 of 3 at byte \d+: packet 0 of the tick, record 0 \(update of 10:1\): its payload fails/);
  assert.equal(p.ticksSeen, 1);
  assert.equal(p.mirror.held.size, 1);

  // A bundle inside a bundle: refused before any of its frames is taken.
  const nested = new Session();
  nested.receive(w, 0);
  assert.equal(nested.receive(bundleFrame([empty, bundleFrame([tick(2, [])])]), 50),
    'malformed frame: bundle: frame 1 at byte 70 is a bundle: bundles do not nest');
  assert.equal(nested.ticksSeen, 0, 'the tick before it was not taken');
  assert.equal(nested.frames, 1);
  assert.equal(nested.bundles, 0);

  // A bundle that runs past its end: nothing of it taken.
  const short = new Session();
  short.receive(w, 0);
  assert.equal(short.receive(bundleFrame([empty, empty]).subarray(0, 130), 50),
    'malformed frame: bundle: length at byte 66 is 61, but 60 bytes are left after it');
  assert.equal(short.ticksSeen, 0);

  // A version 3 welcome, alone or bundled.
  const old = welcomeFrame({ ...world, version: 3 });
  assert.equal(new Session().receive(old, 0), 'malformed frame: welcome: frame version at byte 1 is 3, expected 4');
  assert.equal(new Session().receive(bundleFrame([old, empty]), 0),
    'malformed frame: bundle frame 0 of 2 at byte 5: welcome: frame version at byte 1 is 3, expected 4');
});
