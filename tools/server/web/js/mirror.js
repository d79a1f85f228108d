// A small ClientMirror for reliable delivery (docs/protocol.md, "Delivery" and "The client
// mirror"): records apply in packet order; a record that contradicts the table is skipped and
// counted as an anomaly, and the rest of the packet applies. Decoding and checking happen before
// (decodeTickPackets), so applying cannot fail part way.

import { applyDeltaRuns, decodePacket, MalformedPacket } from './wire.js';
import { readEntityState } from './state.js';
import { StreamError } from './bitstream.js';

export const ANOMALY_KINDS = [
  'update_unknown', 'spawn_held', 'despawn_unknown', 'generation_mismatch',
  'bad_sequence', 'bad_reliable_id', 'delivery_mismatch', 'baseline_missing', 'refresh_unknown',
];

/**
 * Decodes every packet of a tick frame and every payload in them; throws a MalformedPacket
 * naming the packet, and the byte or record, if any of it is refused. Nothing is applied here.
 * A delta update is checked as the state it rebuilds from what `mirror` kept (the server never
 * names a state kept in the same tick); one whose state was not kept gets `state` null and is an
 * anomaly when it applies.
 * @param {Uint8Array[]} packets
 * @param {{width: number, height: number}} world
 * @param {Mirror | null} mirror
 */
export function decodeTickPackets(packets, world, mirror = null) {
  return packets.map((bytes, p) => {
    let packet;
    try {
      packet = decodePacket(bytes);
    } catch (e) {
      if (e instanceof MalformedPacket) throw new MalformedPacket(`packet ${p} of the tick: ${e.message}`, e.offset);
      throw e;
    }
    packet.records.forEach((r, i) => {
      // Only spawns and updates carry the demo's entity state to check.
      if (r.type === 'despawn' || r.type === 'event' || r.type === 'message') return;
      if (r.type === 'delta_update') {
        r.bytes = r.baseAge === 0 ? r.payload : mirror?.rebuild(r, packet.tick) ?? null;
        if (r.bytes === null) {
          r.state = null;
          return;
        }
      }
      try {
        const full = r.type === 'spawn' || r.type === 'refresh';
        r.state = readEntityState(r.bytes ?? r.payload, full ? 'full' : 'update', world);
      } catch (e) {
        if (!(e instanceof StreamError)) throw e;
        throw new MalformedPacket(
          `packet ${p} of the tick, record ${i} (${r.type} of ${r.index}:${r.generation}): its payload fails the state check (${e.message})`);
      }
    });
    packet.bytes = bytes.length;
    return packet;
  });
}

export class Mirror {
  constructor() {
    // Each held entity, with the two newest states its delta updates asked to keep ({tick, bytes}).
    /** @type {Map<number, {generation: number, x: number, z: number, kind: number, tick: number, kept: object[]}>} */
    this.held = new Map();
    this.expectedSequence = 0;
    this.nextReliable = 0;
    this.anomalies = Object.fromEntries(ANOMALY_KINDS.map((k) => [k, 0]));
    this.anomalyTotal = 0;
    this.lastAnomaly = null;
    this.stats = { packets: 0, enters: 0, updates: 0, exits: 0, events: 0, messages: 0, refreshes: 0 };
    // The newest packet's interest status, and its reliableNext (interest() counts what is below
    // it and not applied yet as on its way).
    this.status = { culling: false, radius: 0, pending: 0 };
    this.statusReliableNext = 0;
  }

  /** {culling, radius, pending} as ClientMirror::interest() answers it. */
  interest() {
    const unapplied = Math.max(0, this.statusReliableNext - this.nextReliable);
    return { ...this.status, pending: Math.min(0xffffffff, this.status.pending + unapplied) };
  }

  /**
   * An entity reference read from a payload, as ClientMirror::resolve answers it: the entity
   * ({index, generation}) where it is held, else null.
   */
  resolve(index, generation) {
    const e = this.held.get(index);
    return generation !== 0 && e !== undefined && e.generation === generation ? { index, generation } : null;
  }

  /** A delta update's state rebuilt from the one it names, or null where that was not kept. */
  rebuild(r, tick) {
    const e = this.held.get(r.index);
    if (e === undefined || e.generation !== r.generation) return null;
    const base = e.kept.find((k) => k.tick === tick - r.baseAge);
    return base === undefined ? null : applyDeltaRuns(base.bytes, r.payload, r.stateSize);
  }

  anomaly(kind, packet, r) {
    this.anomalies[kind] += 1;
    this.anomalyTotal += 1;
    const what = r ? ` (${r.type} of ${r.index}:${r.generation})` : '';
    this.lastAnomaly = `${kind}${what} in packet ${packet.sequence}, tick ${packet.tick}`;
  }

  /**
   * Applies one decoded packet (from decodeTickPackets). `on` receives enter(index, entity,
   * created), exit(index, entity, reason), update(index, entity), refresh(index, entity),
   * event(event, subjectHeld) and message(payload) as records apply.
   */
  apply(packet, on = {}) {
    this.stats.packets += 1;
    if (packet.delivery !== 'reliable') {
      this.anomaly('delivery_mismatch', packet, null);
      return;
    }
    if (packet.sequence !== this.expectedSequence) this.anomaly('bad_sequence', packet, null);
    this.expectedSequence = packet.sequence + 1;
    this.status = packet.interest;
    this.statusReliableNext = packet.reliableNext;
    for (const r of packet.records) {
      if (r.type === 'event') {
        if (r.reliable) {
          if (r.reliableId !== this.nextReliable) this.anomaly('bad_reliable_id', packet, null);
          this.nextReliable = r.reliableId + 1;
        }
        const s = r.subject ? this.held.get(r.subject.index) : undefined;
        this.stats.events += 1;
        on.event?.(r, s !== undefined && s.generation === r.subject.generation);
        continue;
      }
      if (r.type === 'message') {
        if (r.reliableId !== this.nextReliable) this.anomaly('bad_reliable_id', packet, null);
        this.nextReliable = r.reliableId + 1;
        this.stats.messages += 1;
        on.message?.(r.payload);
        continue;
      }
      const e = this.held.get(r.index);
      if (r.type === 'update' || r.type === 'delta_update') {
        if (e === undefined || e.generation !== r.generation) {
          this.anomaly(e === undefined ? 'update_unknown' : 'generation_mismatch', packet, r);
          continue;
        }
        if (r.type === 'delta_update') {
          if (r.state === null) {
            this.anomaly('baseline_missing', packet, r);
            continue;
          }
          if (r.keep && !e.kept.some((k) => k.tick === packet.tick)) {
            // The two newest: the older goes.
            if (e.kept.length === 2) e.kept.splice(e.kept[0].tick < e.kept[1].tick ? 0 : 1, 1);
            e.kept.push({ tick: packet.tick, bytes: r.bytes.slice() });
          }
        }
        e.x = r.state.x;
        e.z = r.state.z;
        e.tick = packet.tick;
        this.stats.updates += 1;
        on.update?.(r.index, e);
        continue;
      }
      if (r.reliableId !== this.nextReliable) this.anomaly('bad_reliable_id', packet, r);
      this.nextReliable = r.reliableId + 1;
      if (r.type === 'spawn') {
        if (e !== undefined) {
          this.anomaly(e.generation === r.generation ? 'spawn_held' : 'generation_mismatch', packet, r);
          continue;
        }
        const entity = {
          generation: r.generation, x: r.state.x, z: r.state.z, kind: r.state.kind, tick: packet.tick - r.stateAge, kept: [],
        };
        this.held.set(r.index, entity);
        this.stats.enters += 1;
        on.enter?.(r.index, entity, r.created);
      } else if (r.type === 'refresh') {
        if (e === undefined || e.generation !== r.generation) {
          this.anomaly(e === undefined ? 'refresh_unknown' : 'generation_mismatch', packet, r);
          continue;
        }
        e.x = r.state.x;
        e.z = r.state.z;
        e.kind = r.state.kind;
        this.stats.refreshes += 1;
        on.refresh?.(r.index, e);
      } else {
        if (e === undefined || e.generation !== r.generation) {
          this.anomaly(e === undefined ? 'despawn_unknown' : 'generation_mismatch', packet, r);
          continue;
        }
        this.held.delete(r.index);
        this.stats.exits += 1;
        on.exit?.(r.index, e, r.reason);
      }
    }
  }
}
