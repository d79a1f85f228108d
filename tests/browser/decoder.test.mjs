// Unit tests of the page's decoder (tools/server/web/js) against real bytes: the packet corpus
// the C++ Replicator wrote (fuzz/corpus/packet, see fuzz/make_packet_corpus.cpp), the example
// pinned in docs/protocol.md, and truncated and corrupted copies of both.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { BitReader, StreamError, bitsRequired, quantizedTop } from '../../tools/server/web/js/bitstream.js';
import { applyDeltaRuns, decodePacket, MalformedPacket } from '../../tools/server/web/js/wire.js';
import { readEntityState } from '../../tools/server/web/js/state.js';
import { Mirror, decodeTickPackets } from '../../tools/server/web/js/mirror.js';
import {
  decodeServerFrame, FRAME_BUNDLE, FRAME_VERSION, FrameError, encodeMove, encodeOptions, encodeRadius, splitBundle,
} from '../../tools/server/web/js/frames.js';
import { Counters } from '../../tools/server/web/js/counters.js';
import { BitWriter, bundleFrame, debugFrame, deltaRuns, encodePacket, entityPayload, resetFrame, tickFrame, welcomeFrame } from './lib/encode.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const corpusDir = path.join(root, 'fuzz/corpus/packet');

// ---------------------------------------------------------------------------------------------
// The fuzzer's input format: a first byte (bit 0: unreliable; bits 1..4: history - 1), then
// chunks of [u16 little-endian length][bytes], each a state packet or an ack (14 bytes, kind 2).
function corpus(name) {
  const bytes = new Uint8Array(readFileSync(path.join(corpusDir, name)));
  const chunks = [];
  for (let at = 1; at < bytes.length;) {
    const length = bytes[at] | (bytes[at + 1] << 8);
    chunks.push(bytes.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return { unreliable: (bytes[0] & 1) === 1, chunks, packets: chunks.filter((c) => c[1] === 1) };
}

// fuzz/packet_state.h: a count in 0..15, then that many coordinates at 1/64 in [-4096, 4096].
function readFuzzValues(payload) {
  const s = new BitReader(payload);
  const count = s.readUint(0, 15);
  const values = [];
  for (let i = 0; i < count; ++i) values.push(s.readQuantized(-4096, 4096, 1 / 64));
  assert.ok(s.restIsZero(), 'payload padding is zero');
  return values;
}

function refused(bytes, why) {
  assert.throws(() => decodePacket(bytes), MalformedPacket, why);
}

// ---------------------------------------------------------------------------------------------
// docs/protocol.md's example, as pinned by tests/protocol_roundtrip_test.cpp.
const documented = Uint8Array.from([
  0x02, 0x01, 0x03, 0x07, 0x00, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
  0x00, 0x00, 0x00, 0xa0, 0x41, 0x03, 0x00, 0x01, 0x28, 0x82, 0x01, 0x02, 0x80, 0x00, 0x05, 0x20, 0xfd, 0x60,
  0xf2, 0x01, 0x02, 0x05, 0x01, 0x05, 0x20, 0xfd, 0x60, 0xf2, 0x01, 0x03, 0x29, 0x09, 0x03, 0x00]);

test('the hex example in docs/protocol.md is the one the C++ test pins', () => {
  const doc = readFileSync(path.join(root, 'docs/protocol.md'), 'utf8');
  const block = doc.slice(doc.indexOf('## An example')).split('```')[1];
  const hex = [];
  for (const line of block.split('\n')) {
    for (const token of line.trim().split(/\s+/)) {
      if (!/^[0-9a-f]{2}$/.test(token)) break;  // the description after the bytes
      hex.push(parseInt(token, 16));
    }
  }
  assert.deepEqual(Uint8Array.from(hex), documented);
});

test('docs/protocol.md example: every field', () => {
  const p = decodePacket(documented);
  assert.equal(p.delivery, 'unreliable');
  assert.equal(p.sequence, 7);
  assert.equal(p.tick, 300);
  assert.equal(p.reliableNext, 42);
  assert.deepEqual(p.interest, { culling: true, radius: 20, pending: 3 });
  assert.equal(p.records.length, 3);
  const [spawn, update, despawn] = p.records;
  const payload = Uint8Array.from([0x20, 0xfd, 0x60, 0xf2, 0x01]);
  assert.deepEqual({ ...spawn, payload: [...spawn.payload] },
    { type: 'spawn', reliableId: 40, index: 130, generation: 2, reason: 0, created: true, stateAge: 0, payload: [...payload] });
  assert.deepEqual({ ...update, payload: [...update.payload] },
    { type: 'update', index: 5, generation: 1, payload: [...payload] });
  assert.deepEqual(despawn, { type: 'despawn', reliableId: 41, index: 9, generation: 3, reason: 0 });
  // The payload: x = 12.5 and z = -3.25 quantized in [-1000, 1000] at 1/64, 17 bits each.
  for (const r of [spawn, update]) {
    const s = new BitReader(r.payload);
    assert.equal(s.readQuantized(-1000, 1000, 1 / 64), 12.5);
    assert.equal(s.bitsRead, 17);
    assert.equal(s.readQuantized(-1000, 1000, 1 / 64), -3.25);
    assert.equal(s.bitsRead, 34);
    assert.ok(s.restIsZero());
    assert.throws(() => s.readBits(7), StreamError, 'only 6 padding bits are left');
  }
  assert.deepEqual(encodePacket(p), documented);
});

test('the documented example truncated anywhere, or with a byte more, is refused', () => {
  for (let n = 0; n < documented.length; ++n) refused(documented.subarray(0, n), `prefix of ${n} bytes`);
  refused(Uint8Array.from([...documented, 0]), 'a trailing byte');
});

// Each refusal names the first byte of the field it refuses: the byte corrupted.
test('each documented refusal', () => {
  const corrupt = (at, value) => {
    const b = Uint8Array.from(documented);
    b[at] = value;
    return b;
  };
  const message = (bytes) => {
    try {
      decodePacket(bytes);
    } catch (e) {
      assert.ok(e instanceof MalformedPacket);
      return e.message;
    }
    return assert.fail('decoded');
  };
  // The messages are the C++ decoder's (tests/protocol_roundtrip_test.cpp), word for word.
  assert.equal(message(corrupt(0, 1)), 'version at byte 0 is 1, expected 2');
  assert.match(message(corrupt(1, 2)), /kind at byte 1 is 2/);
  assert.equal(message(corrupt(2, 7)), 'flags at byte 2 are 7: unknown bits set');
  assert.equal(message(corrupt(2, 1)), 'radius at byte 19 is 20 (bits 1101004800): without culling it must be 0');
  assert.equal(message(corrupt(22, 0xc1)), 'radius at byte 19 is -20: culling needs a finite radius > 0');
  const infinite = corrupt(21, 0x80);
  infinite[22] = 0x7f;
  assert.equal(message(infinite), 'radius at byte 19 is inf: culling needs a finite radius > 0');
  assert.match(message(corrupt(23, 200)), /record count 200 at byte 23 exceeds/);
  // 27 bytes of records hold at most 9 of the shortest (3 bytes: a message with an empty payload).
  assert.equal(message(corrupt(23, 10)), 'record count 10 at byte 23 exceeds what 52 bytes can hold');
  assert.equal(message(corrupt(25, 8)), 'record type at byte 25 is 8, not 1 to 7');
  assert.equal(message(corrupt(29, 0)), 'entity generation at byte 29 is 0 (the null handle)');  // spawn 130:0
  assert.equal(message(corrupt(30, 9)), 'spawn reason at byte 30 is 9, above 8');
  assert.equal(message(corrupt(30, 0x89)), 'spawn reason at byte 30 is 9, above 8');
  assert.equal(message(corrupt(51, 6)), 'despawn reason at byte 51 is 6, above 5');
  assert.equal(message(corrupt(32, 100)), 'payload at byte 33 of 100 bytes runs past the end');
  // State age 301 > tick 300: rebuild the spawn with a two-byte age.
  const aged = decodePacket(documented);
  aged.records[0].stateAge = 301;
  assert.match(message(encodePacket(aged)), /state age at byte 31 is 301, beyond the packet's tick 300/);
  aged.records[0].stateAge = 300;
  assert.equal(decodePacket(encodePacket(aged)).records[0].stateAge, 300);
  // Records count fewer than present: bytes after the last record.
  assert.match(message(corrupt(23, 2)), /packet at byte 47 has 5 bytes after its last record/);
});

test('varints: one encoding per value, at most 5 bytes, at most 32 bits', () => {
  const withIndex = (bytes) => {
    // A despawn whose entity index is the given varint bytes.
    const head = [2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0];
    return Uint8Array.from([...head, 3, 0, ...bytes, 1, 0]);
  };
  assert.equal(decodePacket(withIndex([0x7f])).records[0].index, 127);
  assert.equal(decodePacket(withIndex([0x80, 0x01])).records[0].index, 128);
  assert.equal(decodePacket(withIndex([0xff, 0xff, 0xff, 0xff, 0x0f])).records[0].index, 0xffffffff);
  refused(withIndex([0x80, 0x00]), 'overlong 0');
  refused(withIndex([0xff, 0x80, 0x00]), 'overlong');
  refused(withIndex([0xff, 0xff, 0xff, 0xff, 0x10]), 'above 2^32 - 1');
  refused(withIndex([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), 'six bytes');
});

// ---------------------------------------------------------------------------------------------
// The Replicator's packets.

const files = readdirSync(corpusDir).filter((f) => f.endsWith('.bin')).sort();

test('the corpus is there', () => {
  for (const f of ['reliable_join.bin', 'reliable_steady.bin', 'reliable_reasons.bin', 'unreliable_lossy.bin']) {
    assert.ok(files.includes(f), f);
  }
});

for (const file of files) {
  test(`corpus ${file}: every packet decodes, re-encodes to the same bytes, and its payloads read back`, () => {
    const { unreliable, chunks, packets } = corpus(file);
    assert.ok(packets.length > 0);
    const kept = new Map();  // by entity index: the states delta updates asked to keep
    let deltas = 0;
    for (const chunk of chunks) {
      if (chunk[1] === 2) {
        refused(chunk, 'an ack is not a state packet');
        continue;
      }
      const p = decodePacket(chunk);
      assert.equal(p.delivery, unreliable ? 'unreliable' : 'reliable');
      assert.deepEqual(encodePacket(p), chunk, 'canonical');
      for (const r of p.records) {
        if (r.type === 'message') continue;
        if (r.type === 'event') {
          if (r.subject) assert.ok(r.subject.generation >= 1);
          readFuzzValues(r.payload);
          continue;
        }
        assert.ok(r.generation >= 1);
        if (r.type === 'despawn') continue;
        if (r.type === 'spawn') kept.delete(r.index);
        let state = r.payload;
        if (r.type === 'delta_update' && r.baseAge > 0) {
          // Rebuilt from the state kept by an earlier packet of the file: one a reliable stream
          // carried since the file began, or in a file that lost packets, maybe missing.
          const base = (kept.get(r.index) ?? []).find((k) => k.tick === p.tick - r.baseAge);
          state = base ? applyDeltaRuns(base.bytes, r.payload, r.stateSize) : null;
          if (state === null) {
            assert.ok(unreliable || !kept.has(r.index), `update ${r.index} names a state the stream kept`);
            continue;
          }
          deltas += 1;
        }
        if (r.type === 'delta_update' && r.keep) {
          const list = (kept.get(r.index) ?? []).filter((k) => k.tick !== p.tick).slice(-1);
          kept.set(r.index, [...list, { tick: p.tick, bytes: state.slice() }]);
        }
        const values = readFuzzValues(state);
        if (r.type === 'update') assert.equal(values.length, file.includes('deltas') ? 5 : 2);
        if (r.type === 'delta_update') assert.deepEqual(values.slice(2), [1, -2.5, 100]);
      }
    }
    if (file.startsWith('reliable_deltas')) assert.ok(deltas > 0, `${deltas} deltas rebuilt`);
  });
}

test('corpus reliable_join: the Replicator\'s join, with the state its serialize wrote', () => {
  // make(): 60 entities on a 10 x 6 lattice, 3 apart, entity 0 the viewer; walkers drift, so the
  // spawns' extra values are exactly what write_state put there.
  const { packets } = corpus('reliable_join.bin');
  const mirror = new Mirror();
  let sequence = 0;
  let reliable = 0;
  for (const bytes of packets) {
    const p = decodePacket(bytes);
    assert.equal(p.sequence, sequence++);
    for (const r of p.records) {
      if (r.type === 'spawn') {
        assert.equal(r.reliableId, reliable++);
        assert.equal(r.reason, 0, 'near');
        const v = readFuzzValues(r.payload);
        assert.equal(v.length, 2 + (r.index % 3));
        assert.deepEqual(v.slice(2), [1, -2.5].slice(0, v.length - 2));
        for (const c of v.slice(0, 2)) assert.ok(c > -10 && c < 40, `coordinate ${c}`);
        assert.equal(c64(v[0]), v[0], 'a multiple of 1/64');
      }
    }
    // The mirror with an x/z reader of this format.
    for (const r of p.records) if (r.type !== 'despawn') r.state = { x: 0, z: 0, kind: 0 };
    mirror.apply(p);
  }
  assert.ok(reliable > 10, `${reliable} spawns`);
  assert.equal(mirror.anomalyTotal, 0, mirror.lastAnomaly ?? '');
  assert.equal(mirror.held.size, mirror.stats.enters - mirror.stats.exits);
});

function c64(v) {
  return Math.round(v * 64) / 64;
}

test('corpus reliable_reasons: every spawn and despawn reason, events, reused slots, large ids', () => {
  const { packets } = corpus('reliable_reasons.bin');
  assert.equal(packets.length, 6);
  const mirror = new Mirror();
  let reliable = 0;
  packets.forEach((bytes, n) => {
    const p = decodePacket(bytes);
    const tick = 100 + n;
    assert.deepEqual([p.sequence, p.tick, p.reliableNext], [n, tick, 20 * n]);
    assert.deepEqual(p.interest, n % 2 === 0 ? { culling: true, radius: 8 + n, pending: 3 * n }
      : { culling: false, radius: 0, pending: n });
    assert.equal(p.records.length, 30);
    for (let k = 0; k < 9; ++k) {
      const index = k === 8 ? 0xfffffff0 : k * 300;
      const generation = tick - 99;
      const spawn = p.records[k];
      const update = p.records[9 + k];
      const despawn = p.records[18 + k];
      assert.deepEqual(
        [spawn.type, spawn.reliableId, spawn.index, spawn.generation, spawn.reason, spawn.created, spawn.stateAge],
        ['spawn', reliable + k, index, generation, k, k % 3 === 0, k % 2]);
      assert.deepEqual(readFuzzValues(spawn.payload), [12.5, -3.25, 4095, -4096]);
      assert.deepEqual([update.type, update.index, update.generation], ['update', index, generation]);
      assert.deepEqual(readFuzzValues(update.payload), [12.5, -3.25]);
      assert.deepEqual([despawn.type, despawn.reliableId, despawn.index, despawn.generation, despawn.reason],
        ['despawn', reliable + 9 + k, index, generation, k % 6]);
    }
    const [quiet, loud] = p.records.slice(27);
    assert.deepEqual({ ...quiet, payload: readFuzzValues(quiet.payload) },
      { type: 'event', reliable: false, reliableId: 0, stateAge: 0, eventClass: n, x: 1.5, z: -2.25, subject: null,
        payload: [12.5] });
    assert.deepEqual({ ...loud, payload: readFuzzValues(loud.payload) },
      { type: 'event', reliable: true, reliableId: reliable + 18, stateAge: n % 2, eventClass: 300 + n, x: Math.fround(-1e15),
        z: 4096, subject: { index: 0xfffffff0, generation: tick - 99 }, payload: [12.5, -3.25] });
    const note = p.records[29];
    assert.deepEqual([note.type, note.reliableId, new TextDecoder().decode(note.payload)],
      ['message', reliable + 19, `note ${n}`]);
    reliable += 20;
    for (const r of p.records) if (r.type !== 'despawn') r.state = { x: 0, z: 0, kind: 0 };
    mirror.apply(p);
  });
  assert.equal(mirror.anomalyTotal, 0, mirror.lastAnomaly ?? '');
  assert.deepEqual(mirror.stats,
    { packets: 6, enters: 54, updates: 54, exits: 54, events: 12, messages: 6, refreshes: 0 });
  assert.equal(mirror.held.size, 0);
});

test('every truncation of every corpus packet is refused', () => {
  for (const file of files) {
    for (const bytes of corpus(file).packets) {
      for (let n = 0; n < bytes.length; ++n) refused(bytes.subarray(0, n), `${file}: prefix ${n} of ${bytes.length}`);
    }
  }
});

test('corrupted corpus packets: refused, or decoded to bytes that encode back exactly', () => {
  // A seeded xorshift, so a failure reproduces.
  let seed = 0x9e3779b9;
  const rand = (n) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  let decoded = 0;
  let refusedCount = 0;
  for (const file of files) {
    for (const bytes of corpus(file).packets) {
      for (let trial = 0; trial < 200; ++trial) {
        const b = Uint8Array.from(bytes);
        const flips = 1 + rand(3);
        for (let f = 0; f < flips; ++f) b[rand(b.length)] ^= 1 << rand(8);
        let p;
        try {
          p = decodePacket(b);
        } catch (e) {
          assert.ok(e instanceof MalformedPacket, `${e}`);
          assert.ok(Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= b.length);
          ++refusedCount;
          continue;
        }
        assert.deepEqual(encodePacket(p), b, 'a packet that decodes is the one encoding of what it decodes to');
        ++decoded;
      }
    }
  }
  assert.ok(decoded > 100 && refusedCount > 100, `${decoded} decoded, ${refusedCount} refused`);
});

// ---------------------------------------------------------------------------------------------
// The bit stream and the quantized floats, as src/serialize.cpp computes them.

test('bits_required', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 255, 256, 0xffffffff].map(bitsRequired), [0, 1, 2, 2, 3, 8, 9, 32]);
});

test('bits go low bit first across bytes', () => {
  const s = new BitReader(Uint8Array.from([0b10110101, 0b00000011, 0xff, 0xff, 0xff, 0xff]));
  assert.equal(s.readBits(3), 0b101);
  assert.equal(s.readBits(7), 0b1110110);
  assert.equal(s.readBits(32), 0xffffffc0 >>> 0);
  assert.equal(s.bitsRead, 42);
  assert.ok(!s.restIsZero());
  assert.throws(() => s.readBits(7), StreamError);
});

test('quantized steps: the top step, the slack, the clamp to max', () => {
  assert.equal(quantizedTop(-1000, 1000, 1 / 64), 128000);
  assert.equal(quantizedTop(0, 12, 1 / 256), 3072);
  assert.equal(quantizedTop(0, 7.5, 1 / 256), 1920);
  assert.equal(quantizedTop(-1000, 1000, 0.01), 200001, '2000 / 0.01f is 200000.0045: beyond the 0.001 slack');
  assert.equal(quantizedTop(0, 1, 0.3), 4, 'a partial step rounds up');
  // The top step reads back as max, not min + top * res.
  const w = new BitWriter();
  w.writeUint(4, 0, 4);
  assert.equal(new BitReader(w.bytes()).readQuantized(0, 1, 0.3), 1);
  const step3 = new BitWriter();
  step3.writeUint(3, 0, 4);
  assert.equal(new BitReader(step3.bytes()).readQuantized(0, 1, 0.3), Math.fround(0 + 3 * Math.fround(0.3)));
  // A step above the top is refused.
  const over = new BitWriter();
  over.writeBits(5, 3);
  assert.throws(() => new BitReader(over.bytes()).readQuantized(0, 1, 0.3), StreamError);
});

// What src/serialize.cpp's reader returns, printed by a throwaway C++ program linked with it
// (%.9g: enough digits to name each float): [min, max, resolution, top step, bits, [[step,
// value read], ...]]. The top is the largest step a reader accepts.
const cppQuantized = [
  [-1000, 1000, 0.00999999978, 200001, 18, [[0, -1000], [1, -999.98999], [7, -999.929993], [66667, -333.330017], [200000, 999.999939], [200001, 1000]]],
  [-1000, 1000, 0.015625, 128000, 17, [[0, -1000], [1, -999.984375], [7, -999.890625], [42666, -333.34375], [127999, 999.984375], [128000, 1000]]],
  [0, 12, 0.00390625, 3072, 12, [[0, 0], [1, 0.00390625], [7, 0.02734375], [1024, 4], [3071, 11.9960938], [3072, 12]]],
  [0, 7.5, 0.00390625, 1920, 11, [[0, 0], [1, 0.00390625], [7, 0.02734375], [640, 2.5], [1919, 7.49609375], [1920, 7.5]]],
  [0, 1, 0.300000012, 4, 3, [[0, 0], [1, 0.300000012], [3, 0.900000036], [4, 1]]],
  [-4096, 4096, 0.015625, 524288, 20, [[0, -4096], [1, -4095.98438], [7, -4095.89062], [174762, -1365.34375], [524287, 4095.98438], [524288, 4096]]],
  [0, 100.300003, 0.100000001, 1003, 10, [[0, 0], [1, 0.100000001], [7, 0.699999988], [334, 33.4000015], [1002, 100.200005], [1003, 100.300003]]],
  [0, 1000, 0.00390625, 256000, 18, [[0, 0], [1, 0.00390625], [7, 0.02734375], [85333, 333.332031], [255999, 999.996094], [256000, 1000]]],
  [0, 12.3450003, 0.00390625, 3161, 12, [[0, 0], [1, 0.00390625], [7, 0.02734375], [1053, 4.11328125], [3160, 12.34375], [3161, 12.3450003]]],
];

test('quantized reads equal the C++ reader\'s, step for step', () => {
  for (const [min, max, res, top, bits, values] of cppQuantized) {
    const [fmin, fmax, fres] = [min, max, res].map(Math.fround);
    assert.equal(quantizedTop(fmin, fmax, fres), top, `top of [${min}, ${max}] at ${res}`);
    assert.equal(bitsRequired(top), bits);
    for (const [step, value] of values) {
      const w = new BitWriter();
      w.writeBits(step, bits);
      assert.equal(new BitReader(w.bytes()).readQuantized(fmin, fmax, fres), Math.fround(value), `step ${step}`);
    }
    const w = new BitWriter();
    w.writeBits(top + 1, bits);
    if (top + 1 < 2 ** bits) assert.throws(() => new BitReader(w.bytes()).readQuantized(fmin, fmax, fres), StreamError);
  }
});

test('the demo entity payload: 12 + 11 bits of position, 2 of kind, for a 12 x 7.5 world', () => {
  const world = { width: 12, height: 7.5 };
  const full = entityPayload(world, 3.14159, 7.5, 1);
  assert.equal(full.length, 4);  // 25 bits
  const s = readEntityState(full, 'full', world);
  assert.equal(s.x, Math.fround(Math.round(3.14159 * 256) / 256));
  assert.equal(s.z, 7.5);
  assert.equal(s.kind, 1);
  const update = entityPayload(world, 12, 0);
  assert.equal(update.length, 3);  // 23 bits
  assert.deepEqual(readEntityState(update, 'update', world), { x: 12, z: 0 });
  // Every position reads back within half a step.
  for (let i = 0; i <= 1000; ++i) {
    const x = (12 * i) / 1000;
    const z = (7.5 * (1000 - i)) / 1000;
    const r = readEntityState(entityPayload(world, x, z), 'update', world);
    assert.ok(Math.abs(r.x - x) <= 1 / 512 + 1e-6 && Math.abs(r.z - z) <= 1 / 512 + 1e-6, `${x}, ${z}`);
  }
  assert.throws(() => readEntityState(full.subarray(0, 3), 'full', world), StreamError, 'short');
  assert.throws(() => readEntityState(Uint8Array.from([...update.subarray(0, 2), update[2] | 0x80]), 'update', world),
    StreamError, 'non-zero padding');
  assert.throws(() => readEntityState(Uint8Array.from([0xff, 0x0f, 0, 0]), 'update', world), StreamError,
    'x step 4095 is above the top 3072');
});

// ---------------------------------------------------------------------------------------------
// Frames and the mirror.

const world = { connectionId: 3, width: 12, height: 7.5, enterRadius: 1.6, leaveRadius: 2, cellSize: 1.6,
  tickRate: 20, serverFlags: 1, maxRadius: 6, entityCount: 121 };

test('server frames decode, and any other size is refused', () => {
  const w = decodeServerFrame(welcomeFrame(world));
  assert.equal(w.type, 'welcome');
  assert.equal(w.connectionId, 3);
  assert.equal(w.width, 12);
  assert.equal(w.enterRadius, Math.fround(1.6));
  assert.equal(w.tickRate, 20);
  assert.equal(w.debugAllowed, true);
  assert.equal(w.entityCount, 121);
  const packet = encodePacket({ delivery: 'reliable', sequence: 0, tick: 9, reliableNext: 0, records: [] });
  const t = decodeServerFrame(tickFrame({ tick: 9, viewerX: 1, viewerZ: 2, enterRadius: 1.6, leaveRadius: 2, options: 3 },
    [packet, packet]));
  assert.deepEqual([t.tick, t.viewerX, t.viewerZ, t.options, t.packets.length], [9, 1, 2, 3, 2]);
  assert.deepEqual(t.packets[1], packet);
  assert.deepEqual(decodeServerFrame(resetFrame(77)), { type: 'reset', tick: 77 });
  const d = decodeServerFrame(debugFrame(5, [{ index: 4, x: 1.5, z: 2.5 }], 12));
  assert.deepEqual(d, { type: 'debug', tick: 5, members: 12, entities: [{ index: 4, x: 1.5, z: 2.5 }] });

  const bad = [
    new Uint8Array(0),
    Uint8Array.of(9),
    welcomeFrame(world).subarray(0, 36),
    Uint8Array.from([...welcomeFrame(world), 0]),
    Uint8Array.from([...resetFrame(1), 0]),
    tickFrame({ tick: 9, viewerX: 1, viewerZ: 2, enterRadius: 1.6, leaveRadius: 2, options: 3 }, [packet]).subarray(0, 60),
    Uint8Array.from([...tickFrame({ tick: 9, viewerX: 1, viewerZ: 2, enterRadius: 1.6, leaveRadius: 2, options: 3 }, []), 1]),
    tickFrame({ tick: 9, viewerX: NaN, viewerZ: 2, enterRadius: 1.6, leaveRadius: 2, options: 3 }, []),
    tickFrame({ tick: 9, viewerX: 1, viewerZ: 2, enterRadius: 1.6, leaveRadius: 2, options: 8 }, []),
    debugFrame(5, [{ index: 4, x: 1.5, z: 2.5 }]).subarray(0, 24),
  ];
  const badWelcome = welcomeFrame(world);
  badWelcome[1] = 1;  // the frame version before the tick frame stated the library's grid
  bad.push(badWelcome);
  for (const b of bad) assert.throws(() => decodeServerFrame(b), FrameError, `${[...b]}`);
});

test('the welcome states frame version 4; a version 3 welcome is refused', () => {
  assert.equal(FRAME_VERSION, 4);
  const w = welcomeFrame(world);
  assert.equal(w[1], 4);
  assert.equal(decodeServerFrame(w).version, 4);
  assert.throws(() => decodeServerFrame(welcomeFrame({ ...world, version: 3 })),
    { name: 'FrameError', message: 'welcome: frame version at byte 1 is 3, expected 4' });
  assert.throws(() => decodeServerFrame(welcomeFrame({ ...world, version: 5 })),
    { name: 'FrameError', message: 'welcome: frame version at byte 1 is 5, expected 4' });
});

test('a bundle splits into views of its frames, in order', () => {
  assert.equal(FRAME_BUNDLE, 7);
  const w = welcomeFrame(world);
  const packet = encodePacket({ delivery: 'reliable', sequence: 0, tick: 9, reliableNext: 0, records: [] });
  const t = tickFrame({ tick: 9, viewerX: 1, viewerZ: 2, enterRadius: 1.6, leaveRadius: 2, options: 3 }, [packet]);
  const r = resetFrame(8);
  const b = bundleFrame([w, t, r]);
  assert.equal(b.length, 1 + 4 + 37 + 4 + t.length + 4 + 5);
  const parts = splitBundle(b);
  assert.deepEqual(parts.map((p) => [p.byteOffset, p.length]), [[5, 37], [46, t.length], [50 + t.length, 5]]);
  for (const p of parts) assert.equal(p.buffer, b.buffer, 'a view, not a copy');
  assert.deepEqual(parts.map((p) => [...p]), [[...w], [...t], [...r]]);
  assert.equal(decodeServerFrame(parts[0]).connectionId, 3);
  assert.deepEqual(decodeServerFrame(parts[1]).packets[0], packet);
  assert.deepEqual(decodeServerFrame(parts[2]), { type: 'reset', tick: 8 });
  // One frame is a bundle too; a bundle inside a larger buffer splits at its own offsets.
  assert.deepEqual(splitBundle(bundleFrame([r])).map((p) => [...p]), [[...r]]);
  const shifted = new Uint8Array(b.length + 9);
  shifted.set(b, 9);
  assert.deepEqual(splitBundle(shifted.subarray(9)).map((p) => [p.byteOffset, p.length]),
    [[14, 37], [55, t.length], [59 + t.length, 5]]);
  // decodeServerFrame does not take a bundle whole.
  assert.throws(() => decodeServerFrame(b), { name: 'FrameError', message: /split it with splitBundle/ });
});

test('each malformed bundle is refused, naming the byte', () => {
  const r = resetFrame(8);  // 5 bytes
  const refusal = (bytes) => {
    try {
      splitBundle(bytes);
    } catch (e) {
      assert.ok(e instanceof FrameError, `${e}`);
      return e.message;
    }
    return assert.fail(`split: ${[...bytes]}`);
  };
  // Shorter than the type, one length and one frame byte.
  assert.equal(refusal(Uint8Array.of(7)), 'bundle is 1 bytes: the type, a length at byte 1 and a frame need at least 6');
  assert.equal(refusal(Uint8Array.of(7, 1, 0, 0, 0)), 'bundle is 5 bytes: the type, a length at byte 1 and a frame need at least 6');
  // Not a bundle at all.
  assert.equal(refusal(welcomeFrame(world)), 'bundle: frame type at byte 0 is 1, expected 7');
  // A length of 0, first or after a frame.
  assert.equal(refusal(Uint8Array.of(7, 0, 0, 0, 0, 3)), 'bundle: length at byte 1 is 0: each entry holds a whole frame');
  assert.equal(refusal(Uint8Array.from([...bundleFrame([r]), 0, 0, 0, 0])),
    'bundle: length at byte 10 is 0: each entry holds a whole frame');
  // A length past the end: the last frame cut by a byte, or a length far too large.
  assert.equal(refusal(bundleFrame([welcomeFrame(world), r]).subarray(0, 50)),
    'bundle: length at byte 42 is 5, but 4 bytes are left after it');
  assert.equal(refusal(Uint8Array.of(7, 0xff, 0xff, 0xff, 0xff, 3)),
    'bundle: length at byte 1 is 4294967295, but 1 bytes are left after it');
  // A bundle inside a bundle, however well formed.
  assert.equal(refusal(bundleFrame([r, bundleFrame([r])])), 'bundle: frame 1 at byte 14 is a bundle: bundles do not nest');
  assert.equal(refusal(bundleFrame([bundleFrame([r])])), 'bundle: frame 0 at byte 5 is a bundle: bundles do not nest');
  // Trailing bytes too few for a length.
  for (let n = 1; n <= 3; ++n) {
    assert.equal(refusal(Uint8Array.from([...bundleFrame([r]), ...new Array(n).fill(1)])),
      `bundle: ${n} bytes at byte 10, after frame 0, cannot hold a length`);
  }
  // Every cut of a good bundle is refused, but the one between its entries (a bundle of the welcome).
  const good = bundleFrame([welcomeFrame(world), r]);
  for (let n = 0; n < good.length; ++n) {
    if (n === 42) assert.equal(splitBundle(good.subarray(0, n)).length, 1);
    else assert.throws(() => splitBundle(good.subarray(0, n)), FrameError, `prefix of ${n}`);
  }
  assert.equal(splitBundle(good).length, 2);
});

test('client frames have the contract\'s sizes', () => {
  const m = encodeMove(1.5, 7.25);
  assert.equal(m.length, 9);
  assert.equal(m[0], 1);
  assert.equal(new DataView(m.buffer).getFloat32(5, true), 7.25);
  assert.deepEqual([...encodeOptions(5)], [2, 5]);
  assert.throws(() => encodeOptions(8), RangeError);
  const r = encodeRadius(2);
  assert.deepEqual([r.length, r[0], new DataView(r.buffer).getFloat32(1, true)], [5, 3, 2]);
});

function packetWith(sequence, records, tick = 10) {
  return encodePacket({ delivery: 'reliable', sequence, tick, reliableNext: 0, records });
}

test('the mirror applies records in order and counts every anomaly', () => {
  const p = (x, z, kind) => entityPayload(world, x, z, kind);
  const m = new Mirror();
  const events = [];
  const on = {
    enter: (i, e) => events.push(['enter', i, e.x, e.z, e.kind]),
    update: (i, e) => events.push(['update', i, e.x, e.z]),
    exit: (i, e, reason) => events.push(['exit', i, e.x, e.z, reason]),
    refresh: (i, e) => events.push(['refresh', i, e.x, e.z, e.kind]),
  };
  const apply = (bytes) => decodeTickPackets([bytes], world).forEach((pk) => m.apply(pk, on));
  apply(packetWith(0, [
    { type: 'spawn', reliableId: 0, index: 4, generation: 1, reason: 0, stateAge: 0, payload: p(1, 2, 0) },
    { type: 'update', index: 4, generation: 1, payload: p(1.5, 2) },
    { type: 'spawn', reliableId: 1, index: 9, generation: 2, reason: 0, stateAge: 0, payload: p(3, 3, 1) },
  ]));
  assert.deepEqual(events, [['enter', 4, 1, 2, 0], ['update', 4, 1.5, 2], ['enter', 9, 3, 3, 1]]);
  assert.equal(m.anomalyTotal, 0);
  // An entity reference resolves to what the mirror holds, at that generation.
  assert.deepEqual(m.resolve(9, 2), { index: 9, generation: 2 });
  assert.equal(m.resolve(9, 3), null);
  assert.equal(m.resolve(5, 1), null);
  assert.equal(m.resolve(0, 0), null);
  apply(packetWith(1, [
    { type: 'despawn', reliableId: 2, index: 4, generation: 1, reason: 0 },
    { type: 'update', index: 4, generation: 1, payload: p(1, 1) },  // update_unknown
    { type: 'spawn', reliableId: 3, index: 9, generation: 2, reason: 0, stateAge: 0, payload: p(1, 1, 0) },  // spawn_held
    { type: 'despawn', reliableId: 4, index: 5, generation: 1, reason: 0 },  // despawn_unknown
    { type: 'update', index: 9, generation: 3, payload: p(1, 1) },  // generation_mismatch
    { type: 'refresh', reliableId: 5, index: 9, generation: 2, stateAge: 0, payload: p(2, 4, 1) },
    { type: 'refresh', reliableId: 6, index: 7, generation: 1, stateAge: 0, payload: p(1, 1, 0) },  // refresh_unknown
    { type: 'despawn', reliableId: 9, index: 9, generation: 2, reason: 1 },  // bad_reliable_id, still applied
  ]));
  assert.deepEqual(m.anomalies, { update_unknown: 1, spawn_held: 1, despawn_unknown: 1, generation_mismatch: 1,
    bad_sequence: 0, bad_reliable_id: 1, delivery_mismatch: 0, baseline_missing: 0, refresh_unknown: 1 });
  assert.equal(m.held.size, 0);
  assert.equal(m.stats.refreshes, 1);
  assert.deepEqual(events.slice(3), [['exit', 4, 1.5, 2, 0], ['refresh', 9, 2, 4, 1], ['exit', 9, 2, 4, 1]]);
  apply(packetWith(5, []));  // a sequence gap
  assert.equal(m.anomalies.bad_sequence, 1);
  apply(packetWith(6, []));
  assert.equal(m.anomalies.bad_sequence, 1, 'resynchronised');
  apply(encodePacket({ delivery: 'unreliable', sequence: 7, tick: 1, reliableNext: 0, records: [] }));
  assert.equal(m.anomalies.delivery_mismatch, 1);
  assert.equal(m.anomalyTotal, 8);
});

test('the mirror rebuilds a delta update from the state it kept, and counts one it did not keep', () => {
  const p = (x, z, kind) => entityPayload(world, x, z, kind);
  const m = new Mirror();
  const updates = [];
  const on = { update: (i, e) => updates.push([i, e.x, e.z]) };
  const apply = (bytes) => decodeTickPackets([bytes], world, m).forEach((pk) => m.apply(pk, on));
  apply(packetWith(0, [
    { type: 'spawn', reliableId: 0, index: 4, generation: 1, reason: 0, stateAge: 0, payload: p(1, 2, 0) },
    { type: 'delta_update', index: 4, generation: 1, keep: true, baseAge: 0, payload: p(1.5, 2) },
  ], 10));
  const delta = (tick, baseAge, from, to, keep) => packetWith(tick - 10, [{
    type: 'delta_update', index: 4, generation: 1, keep, baseAge, stateSize: to.length, payload: deltaRuns(from, to),
  }], tick);
  apply(delta(11, 1, p(1.5, 2), p(1.5, 7.25), true));
  apply(delta(12, 2, p(1.5, 2), p(3, 2), false));
  assert.deepEqual(updates, [[4, 1.5, 2], [4, 1.5, 7.25], [4, 3, 2]]);
  assert.equal(m.anomalyTotal, 0);
  apply(delta(13, 1, p(3, 2), p(3, 3), false));  // tick 12 was not kept
  assert.equal(m.anomalies.baseline_missing, 1);
  assert.equal(updates.length, 3);
  // The same delta, checked as the state it rebuilds: a rebuilt state that does not read is refused.
  const bad = delta(14, 3, p(1.5, 7.25), Uint8Array.of(0xff, 0xff, 0xff), false);
  assert.throws(() => decodeTickPackets([bad], world, m), /record 0 \(delta_update of 4:1\): its payload fails the state check/);
  // A state length no packet carries is refused; one longer than the base and its runs can reach
  // is not rebuilt (nothing is allocated for it) and counts as a missing base.
  const sized = (tick, stateSize) => packetWith(tick - 10, [{
    type: 'delta_update', index: 4, generation: 1, keep: false, baseAge: 3, stateSize, payload: new Uint8Array(0),
  }], tick);
  assert.throws(() => decodeTickPackets([sized(14, 65511)], world, m),
    /state length at byte 30 is 65511: must be at most 65510 \(a packet's largest state\)/);
  const missing = m.anomalies.baseline_missing;
  apply(sized(14, 65510));
  assert.equal(m.anomalies.baseline_missing, missing + 1);
  assert.equal(updates.length, 3);
});

test('a tick frame with one bad packet or payload is refused whole, before anything applies', () => {
  const good = packetWith(0, [
    { type: 'spawn', reliableId: 0, index: 4, generation: 1, reason: 0, stateAge: 0, payload: entityPayload(world, 1, 2, 0) },
  ]);
  const badPayload = packetWith(1, [
    { type: 'update', index: 4, generation: 1, payload: Uint8Array.of(0xff, 0xff, 0xff) },
  ]);
  assert.throws(() => decodeTickPackets([good, badPayload], world), (e) => e instanceof MalformedPacket &&
    /packet 1 of the tick, record 0 \(update of 4:1\): its payload fails the state check/.test(e.message));
  assert.throws(() => decodeTickPackets([good, good.subarray(0, 20)], world), /packet 1 of the tick: /);
  // A spawn's full state needs its kind: an update-sized payload is refused.
  const shortSpawn = packetWith(0, [
    { type: 'spawn', reliableId: 0, index: 4, generation: 1, reason: 0, stateAge: 0, payload: entityPayload(world, 1, 2) },
  ]);
  assert.throws(() => decodeTickPackets([shortSpawn], world), MalformedPacket);
});

test('counters: totals, and per second over a sliding 1 s window', () => {
  const c = new Counters({ windowMs: 1000, historySeconds: 30 });
  for (let i = 0; i < 40; ++i) c.add(i * 50, { spawns: 1, despawns: 1, updates: 10, bytes: 100 });  // 2 s at 20 Hz
  const at = 1950;
  const rate = c.perSecond(at);
  assert.deepEqual(rate, { messages: 240, spawnsDespawns: 40, updates: 200, bytes: 2000 });
  assert.deepEqual(c.totals, { spawns: 40, despawns: 40, updates: 400, records: 480, bytes: 4000 });
  assert.deepEqual(c.perSecond(5000), { messages: 0, spawnsDespawns: 0, updates: 0, bytes: 0 });
});
