// Test-only writers: a state packet encoder that mirrors src/protocol.cpp's PacketWriter, a bit
// writer that mirrors sightline::Stream's write mode, and the demo's server frames. The page
// never writes these; the tests use them to check that decoding is exact (decode, re-encode,
// compare bytes) and to build hostile input.

export function varint(v) {
  const out = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

function u16(v) {
  return [v & 0xff, (v >> 8) & 0xff];
}

function u32(v) {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}

function f32(v) {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, v, true);
  return [...b];
}

function f64(v) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v, true);
  return [...b];
}

/** The bytes PacketWriter writes for a decoded packet (wire.js's shape). */
export function encodePacket(p) {
  const interest = p.interest ?? { culling: false, radius: 0, pending: 0 };
  const flags = (p.delivery === 'unreliable' ? 1 : 0) | (interest.culling ? 2 : 0);
  const out = [2, 1, flags, ...u32(p.sequence), ...u32(p.tick), ...u32(p.reliableNext), ...u32(interest.pending),
    ...f32(interest.radius), ...u16(p.records.length)];
  for (const r of p.records) {
    if (r.type === 'spawn') {
      out.push(1, ...varint(r.reliableId), ...varint(r.index), ...varint(r.generation), r.reason | (r.created ? 0x80 : 0),
        ...varint(r.stateAge),
        ...varint(r.payload.length), ...r.payload);
    } else if (r.type === 'refresh') {
      out.push(7, ...varint(r.reliableId), ...varint(r.index), ...varint(r.generation), ...varint(r.stateAge),
        ...varint(r.payload.length), ...r.payload);
    } else if (r.type === 'message') {
      out.push(5, ...varint(r.reliableId), ...varint(r.payload.length), ...r.payload);
    } else if (r.type === 'event') {
      out.push(4, (r.reliable ? 1 : 0) | (r.subject ? 2 : 0));
      if (r.reliable) out.push(...varint(r.reliableId), ...varint(r.stateAge));
      out.push(...varint(r.eventClass), ...f32(r.x), ...f32(r.z));
      if (r.subject) out.push(...varint(r.subject.index), ...varint(r.subject.generation));
      out.push(...varint(r.payload.length), ...r.payload);
    } else if (r.type === 'update') {
      out.push(2, ...varint(r.index), ...varint(r.generation), ...varint(r.payload.length), ...r.payload);
    } else if (r.type === 'delta_update') {
      out.push(6, (r.keep ? 1 : 0) | (r.baseAge ? 2 : 0), ...varint(r.index), ...varint(r.generation));
      if (r.baseAge) out.push(...varint(r.baseAge), ...varint(r.stateSize));
      out.push(...varint(r.payload.length), ...r.payload);
    } else {
      out.push(3, ...varint(r.reliableId), ...varint(r.index), ...varint(r.generation), r.reason);
    }
  }
  return Uint8Array.from(out);
}

/** Delta runs of `state` against `base` (docs/protocol.md): one run, from the first byte that
 * differs to the last. */
export function deltaRuns(base, state) {
  const differs = (i) => i >= base.length || state[i] !== base[i];
  let first = 0;
  while (first < state.length && !differs(first)) ++first;
  if (first === state.length) return new Uint8Array(0);
  let last = state.length - 1;
  while (!differs(last)) --last;
  return Uint8Array.from([...varint(first), ...varint(last - first + 1), ...state.subarray(first, last + 1)]);
}

/** sightline::Stream in write mode, for the calls the tests need. */
export class BitWriter {
  constructor() {
    this.bits = [];
  }
  writeBits(value, count) {
    for (let i = 0; i < count; ++i) this.bits.push(Math.floor(value / 2 ** i) % 2);
  }
  writeUint(value, min, max) {
    let bits = 0;
    while (bits < 32 && Math.floor((max - min) / 2 ** bits) !== 0) ++bits;
    this.writeBits(value - min, bits);
  }
  writeQuantized(value, min, max, resolution) {
    const fmin = Math.fround(min);
    const fres = Math.fround(resolution);
    const steps = Math.max(0, Math.ceil((Math.fround(max) - fmin) / fres - 1e-3));
    const q = Math.round((Math.fround(value) - fmin) / fres);
    this.writeUint(Math.min(q, steps), 0, steps);
  }
  bytes() {
    const out = new Uint8Array(Math.ceil(this.bits.length / 8));
    this.bits.forEach((b, i) => {
      out[i >> 3] |= b << (i & 7);
    });
    return out;
  }
}

/** The demo's entity payload (docs/demo_protocol.md). */
export function entityPayload(world, x, z, kind) {
  const w = new BitWriter();
  w.writeQuantized(x, 0, world.width, 1 / 256);
  w.writeQuantized(z, 0, world.height, 1 / 256);
  if (kind !== undefined) w.writeUint(kind, 0, 3);
  return w.bytes();
}

/** A welcome frame; `version` (default 4, the page's FRAME_VERSION) only to write another one. */
export function welcomeFrame(w) {
  return Uint8Array.from([1, w.version ?? 4, ...u32(w.connectionId ?? 7), ...f32(w.width), ...f32(w.height), ...f32(w.enterRadius),
    ...f32(w.leaveRadius), ...f32(w.cellSize), ...u16(w.tickRate), w.serverFlags ?? 0, ...f32(w.maxRadius),
    ...u32(w.entityCount)]);
}

export function tickFrame(t, packets) {
  const out = [2, ...u32(t.tick), ...f32(t.viewerX), ...f32(t.viewerZ), ...f32(t.enterRadius), ...f32(t.leaveRadius),
    t.options, ...f64(t.serverTimeMs ?? 0), ...u16(packets.length), ...f32(t.gridOriginX ?? 0),
    ...f32(t.gridOriginZ ?? 0), ...f32(t.cellSize ?? 1.6), t.scanned ? 1 : 0, ...u32(t.scanned?.x0 ?? 0),
    ...u32(t.scanned?.x1 ?? 0), ...u32(t.scanned?.z0 ?? 0), ...u32(t.scanned?.z1 ?? 0)];
  for (const p of packets) out.push(...u16(p.length), ...p);
  return Uint8Array.from(out);
}

export function resetFrame(tick) {
  return Uint8Array.from([3, ...u32(tick)]);
}

export function debugFrame(tick, entities, members = 0) {
  const out = [4, ...u32(tick), ...u32(members), ...u32(entities.length)];
  for (const e of entities) out.push(...u32(e.index), ...f32(e.x), ...f32(e.z));
  return Uint8Array.from(out);
}

/** A why_answer frame: {tick, index, generation, answer (0 answered, 1 stale), held, rule, root {index, generation}}. */
export function whyAnswerFrame(a) {
  return Uint8Array.from([5, ...u32(a.tick), ...u32(a.index), ...u32(a.generation), a.answer ?? 0, a.held ? 1 : 0,
    a.rule ?? 0, ...u32(a.root?.index ?? 0), ...u32(a.root?.generation ?? 0)]);
}

/** A bundle frame: type 7, then each frame after its u32 length. */
export function bundleFrame(frames) {
  const out = [7];
  for (const f of frames) out.push(...u32(f.length), ...f);
  return Uint8Array.from(out);
}
