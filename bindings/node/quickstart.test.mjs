// Sightline's quickstart from Node, in the shape of a Colyseus room: onCreate makes the World and
// the Replicator, onJoin gives each client a Sightline client, and the simulation interval moves
// the walkers, ticks, sends, and hands each client its packets (here straight to a ClientMirror,
// which acks back). Run by `make test` (node --test, SIGHTLINE_WASM naming sightline_wasm.cjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import path from 'node:path';

import { load } from './sightline.mjs';

const SIZE = 200;
const WALKERS = 400;
const PLAYERS = 3;
const TICKS = 60;

// A seeded generator, so every run walks the same way.
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

test('every player\'s mirror holds its interest set over unreliable delivery', async (t) => {
  const sl = await load(path.resolve(process.env.SIGHTLINE_WASM ?? 'build-wasm/bin/sightline_wasm.cjs'));
  const rand = random(7);
  // onCreate
  const world = new sl.World({ enterRadius: 25, leaveRadius: 30 });
  const entities = new BigUint64Array(WALKERS);
  const xs = new Float32Array(WALKERS);
  const zs = new Float32Array(WALKERS);
  const heading = new Float64Array(WALKERS);
  for (let i = 0; i < WALKERS; ++i) {
    xs[i] = 20 + rand() * (SIZE - 40);
    zs[i] = 20 + rand() * (SIZE - 40);
    heading[i] = rand() * 2 * Math.PI;
    entities[i] = world.createEntity(xs[i], zs[i]);
  }
  // z's range, made once (x is written with the per-call form; the reader below reads both with
  // it, so the two forms must write the same bits).
  const zRange = new sl.QuantizedRange(0, SIZE, 0.01);
  // The game's state: its position to a centimetre; a spawn also carries its kind.
  const serialize = (stream, entity, part) => {
    const [x, z] = world.position(entity);
    if (part === sl.Part.full) stream.bits(Number(entity & 0xffffn), 16);
    stream.quantized(x, 0, SIZE, 0.01);
    stream.quantizedRange(z, zRange);
  };
  const replicator = new sl.Replicator(world, serialize, { delivery: 'unreliable', tickSeconds: 1 / 20 });
  // onJoin
  const players = [];
  for (let p = 0; p < PLAYERS; ++p) {
    const heard = { enters: 0, updates: 0, exits: 0 };
    const mirror = new sl.Mirror({ delivery: 'unreliable' }, {
      onEnter: () => ++heard.enters,
      onUpdate: () => ++heard.updates,
      onExit: () => ++heard.exits,
    });
    players.push({ client: world.createClient(entities[p]), mirror, heard });
  }
  // setSimulationInterval
  for (let t = 0; t < TICKS; ++t) {
    for (let i = 0; i < WALKERS; ++i) {
      xs[i] += Math.cos(heading[i]);
      zs[i] += Math.sin(heading[i]);
      if (xs[i] < 10 || xs[i] > SIZE - 10) heading[i] = Math.PI - heading[i];
      if (zs[i] < 10 || zs[i] > SIZE - 10) heading[i] = -heading[i];
    }
    world.setPositions(entities, xs, zs);
    world.tick();
    replicator.send();
    for (const { client, mirror } of players) {
      for (const packet of replicator.packets(client)) mirror.receive(packet); // client.send(packet)
      replicator.receiveAck(client, mirror.ack());
    }
  }
  players.forEach(({ client, mirror, heard }, p) => {
    const held = Array.from(mirror.held()).sort();
    const wanted = Array.from(world.interestSet(client)).sort();
    assert.deepEqual(held, wanted, `player ${p}'s mirror`);
    assert.equal(replicator.pending(client), 0);
    assert.equal(mirror.anomalies, 0);
    assert.ok(heard.enters >= wanted.length && heard.updates > 0);
    assert.ok(world.why(client, wanted[0]).held);
    const { state, part } = mirror.state(wanted[0]);
    const reader = sl.Stream.reader(state);
    if (part === sl.Part.full) assert.equal(reader.bits(0, 16), Number(wanted[0] & 0xffffn));
    const x = reader.quantized(0, 0, SIZE, 0.01);
    const z = reader.quantized(0, 0, SIZE, 0.01);
    assert.ok(x >= 0 && z <= SIZE && reader.restIsZero());
    reader.close();
    // The same bytes read through the range made once.
    const again = sl.Stream.reader(state);
    if (part === sl.Part.full) again.bits(0, 16);
    assert.deepEqual([again.quantizedRange(0, zRange), again.quantizedRange(0, zRange)], [x, z]);
    assert.ok(again.restIsZero());
    again.close();
    t.diagnostic(`player ${p}: holds ${held.length} of ${wanted.length} in its interest set, ${heard.enters} enters, ` +
      `${heard.exits} exits, ${heard.updates} updates, ${mirror.anomalies} anomalies`);
  });
  // A refusal names what it refused.
  const gone = entities[WALKERS - 1];
  world.destroyEntity(gone);
  assert.throws(() => world.setPosition(gone, 1, 1), (e) => e instanceof sl.SightlineError && e.code === 'stale_handle');
  assert.throws(() => replicator.receiveAck(players[0].client, new Uint8Array([1, 2, 3])),
    (e) => e.code === 'malformed_packet');
  // Withdrawn (handed elsewhere, not dead): the binding has no list of the World's despawns, so the
  // client's history tells the reason, 'left' and not 'destroyed'; the handle is then stale, and a
  // client's viewer is refused as destroyEntity refuses it.
  const handed = new sl.World({});
  const keeperEye = handed.createEntity(0, 0);
  const keeper = handed.createClient(keeperEye);
  handed.setHistoryCapacity(keeper, 16);
  const traveller = handed.createEntity(1, 0);
  handed.tick();
  handed.withdrawEntity(traveller);
  handed.tick();
  assert.deepEqual(handed.history(keeper, traveller).map((h) => [h.entity, h.spawned, h.reason, h.rule]),
    [[traveller, true, 'near', 'near'], [traveller, false, 'left', null]]);
  assert.throws(() => handed.withdrawEntity(traveller), (e) => e instanceof sl.SightlineError && e.code === 'stale_handle');
  assert.throws(() => handed.withdrawEntity(keeperEye),
    (e) => e instanceof sl.SightlineError && e.code === 'entity_is_viewer');
  handed.close();
  // External ids under orderKey 'external': every entity needs one, unique among live entities (a
  // missing one and a duplicate are refused, naming external_id); externalId reads it back and
  // findExternal finds the entity until it is withdrawn (then 0n); one that existed elsewhere
  // (created: false) spawns without created. The binding has no list of the World's spawns, so the
  // client's mirror tells what each entry said.
  const copies = new sl.World({ enterRadius: 10, orderKey: 'external' });
  assert.throws(() => copies.createEntity(0, 0),
    (e) => e instanceof sl.SightlineError && e.code === 'invalid_argument' && /external_id is 0/.test(e.message));
  const farId = 2n ** 32n + 5n; // beyond 32 bits
  const copyEye = copies.createEntity(0, 0, { externalId: farId });
  assert.throws(() => copies.createEntity(1, 0, { externalId: farId }),
    (e) => e.code === 'invalid_argument' && e.message.includes(`external_id ${farId} is held`));
  const copy = copies.createEntity(1, 0, { externalId: 7, created: false });
  const fresh = copies.createEntity(2, 0, { externalId: 8n });
  assert.deepEqual([copies.externalId(copyEye), copies.externalId(copy), copies.externalId(fresh)], [farId, 7n, 8n]);
  assert.deepEqual([farId, 7, 8n, 9, 0].map((id) => copies.findExternal(id)), [copyEye, copy, fresh, 0n, 0n]);
  assert.throws(() => copies.findExternal(-1), (e) => e.code === 'invalid_argument');
  const copyViewer = copies.createClient(copyEye);
  const arrivals = new Map(); // entity -> created, as the mirror heard its entry
  const copyReplicator = new sl.Replicator(copies, (stream) => stream.bits(1, 1));
  const copyMirror = new sl.Mirror({}, { onEnter: (entity, reason, created) => arrivals.set(entity, created) });
  copies.tick();
  copyReplicator.send();
  for (const packet of copyReplicator.packets(copyViewer)) copyMirror.receive(packet);
  assert.deepEqual([...arrivals].sort(([a], [b]) => (a < b ? -1 : 1)), [[copy, false], [fresh, true]]);
  copies.withdrawEntity(copy);
  assert.equal(copies.findExternal(7), 0n);
  const handedBack = copies.createEntity(1, 0, { externalId: 7, created: false }); // its id is free again
  assert.equal(copies.findExternal(7n), handedBack);
  assert.throws(() => new sl.World({ orderKey: 'byName' }), (e) => e.code === 'invalid_def' && /orderKey/.test(e.message));
  t.diagnostic(`external ids: ${farId}, 7, 8 found; entries (entity, created) ${[...arrivals].join(' ')}`);
  copyMirror.close();
  copyReplicator.close();
  copies.close();
  // A range made once reads what the per-call form reads (255 steps: every 8 bits is a value), and
  // is refused as that form fails, naming the argument.
  const eighths = new sl.QuantizedRange(-8, 7.9375, 1 / 16);
  const payload = new Uint8Array([0x5a, 0xc3, 0x17, 0xe8]);
  const perCall = sl.Stream.reader(payload);
  const made = sl.Stream.reader(payload);
  const read = Array.from(payload, () => [perCall.quantized(0, -8, 7.9375, 1 / 16), made.quantizedRange(0, eighths)]);
  assert.deepEqual(read.map(([, b]) => b), read.map(([a]) => a));
  assert.equal(new Set(read.map(([a]) => a)).size, payload.length);
  perCall.close();
  made.close();
  eighths.close();
  const after = sl.Stream.reader(payload);
  assert.throws(() => after.quantizedRange(0, eighths), /closed/);
  after.close();
  for (const [bad, argument] of [[[1, 1, 0.5], 'max'], [[0, 1, 0], 'resolution'], [[0, Infinity, 0.5], 'max']]) {
    assert.throws(() => new sl.QuantizedRange(...bad),
      (e) => e instanceof sl.SightlineError && e.code === 'invalid_argument' && e.message.includes(argument),
      `QuantizedRange(${bad}) refused naming ${argument}`);
  }
  // What the game's callbacks throw comes back from the call that ran them.
  const small = new sl.World({ enterRadius: 10 });
  const near = [small.createEntity(0, 0), small.createEntity(1, 0)];
  const watcher = small.createClient(near[0]);
  const broken = new sl.Replicator(small, () => { throw new Error('no state for this one'); });
  small.tick();
  assert.throws(() => broken.send(), (e) => e.code === 'invalid_argument' && /no state for this one/.test(e.message));
  broken.close();
  const shown = new sl.Replicator(small, (stream, entity) => {
    const [x, z] = small.position(entity);
    stream.float(x);
    stream.float(z);
  });
  small.tick();
  shown.send();
  const listening = new sl.Mirror({}, { onEnter: () => { throw new Error('listener failed'); } });
  assert.throws(() => { for (const packet of shown.packets(watcher)) listening.receive(packet); }, /listener failed/);
  assert.throws(() => new sl.World({ threads: 2 }), (e) => e.code === 'invalid_def' && /threads is 2/.test(e.message));
  listening.close();
  shown.close();
  small.close();
  for (const { mirror } of players) mirror.close();
  replicator.close();
  world.close();
  zRange.close();
  // Recorded, then replayed: the replay keeps the same history of a walker that left.
  const chunks = [];
  const recorded = new sl.World({ recording: (chunk) => chunks.push(chunk) });
  const eye = recorded.createEntity(0, 0);
  const walker = recorded.createEntity(1, 0);
  const viewer = recorded.createClient(eye);
  recorded.setHistoryCapacity(viewer, 16);
  for (let t = 0; t < 6; ++t) {
    recorded.setPosition(walker, 1 + 0.5 * t, 0);
    recorded.tick();
  }
  const live = recorded.history(viewer, walker);
  recorded.close();
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((at, c) => (bytes.set(c, at), at + c.length), 0);
  const replay = new sl.Replay(bytes);
  let ticks = 0;
  for (; !replay.done; ++ticks) replay.nextTick();
  assert.equal(ticks, 6);
  assert.deepEqual(replay.world.history(viewer, walker), live);
  assert.deepEqual(live.map((h) => h.reason), ['near', 'left']);
  assert.throws(() => replay.world.tick(), (e) => e.code === 'invalid_argument' && /read-only/.test(e.message));
  replay.close();
  t.diagnostic(`sightline ${sl.version}`);
});
