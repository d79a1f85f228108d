// The page's Session (tools/server/web/js/session.js): a connection's frames in order, a reset,
// the debug view, and a malformed frame refused whole.
import test from 'node:test';
import assert from 'node:assert/strict';

import { Session } from '../../tools/server/web/js/session.js';
import { debugFrame, encodePacket, entityPayload, resetFrame, tickFrame, welcomeFrame } from './lib/encode.mjs';

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
