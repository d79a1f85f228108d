// A small ClientMirror for reliable delivery (docs/protocol.md, "Delivery" and "The client
// mirror"): records apply in packet order; a record that contradicts the table is skipped and
// counted as an anomaly, and the rest of the packet applies. Decoding and checking happen before
// (decodeTickPackets), so applying cannot fail part way.

import { decodePacket, MalformedPacket } from './wire.js';
import { readEntityState } from './state.js';
import { StreamError } from './bitstream.js';

export const ANOMALY_KINDS = [
  'update_unknown', 'spawn_held', 'despawn_unknown', 'generation_mismatch',
  'bad_sequence', 'bad_reliable_id', 'delivery_mismatch',
];

/**
 * Decodes every packet of a tick frame and every payload in them; throws a MalformedPacket
 * naming the packet, and the byte or record, if any of it is refused. Nothing is applied here.
 * @param {Uint8Array[]} packets
 * @param {{width: number, height: number}} world
 */
export function decodeTickPackets(packets, world) {
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
      try {
        r.state = readEntityState(r.payload, r.type === 'spawn' ? 'full' : 'update', world);
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
    /** @type {Map<number, {generation: number, x: number, z: number, kind: number, tick: number}>} */
    this.held = new Map();
    this.expectedSequence = 0;
    this.nextReliable = 0;
    this.anomalies = Object.fromEntries(ANOMALY_KINDS.map((k) => [k, 0]));
    this.anomalyTotal = 0;
    this.lastAnomaly = null;
    this.stats = { packets: 0, enters: 0, updates: 0, exits: 0, events: 0, messages: 0 };
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

  anomaly(kind, packet, r) {
    this.anomalies[kind] += 1;
    this.anomalyTotal += 1;
    const what = r ? ` (${r.type} of ${r.index}:${r.generation})` : '';
    this.lastAnomaly = `${kind}${what} in packet ${packet.sequence}, tick ${packet.tick}`;
  }

  /**
   * Applies one decoded packet (from decodeTickPackets). `on` receives enter(index, entity,
   * created), exit(index, entity, reason), update(index, entity), event(event, subjectHeld) and
   * message(payload) as records apply.
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
      if (r.type === 'update') {
        if (e === undefined || e.generation !== r.generation) {
          this.anomaly(e === undefined ? 'update_unknown' : 'generation_mismatch', packet, r);
          continue;
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
        const entity = { generation: r.generation, x: r.state.x, z: r.state.z, kind: r.state.kind, tick: packet.tick - r.stateAge };
        this.held.set(r.index, entity);
        this.stats.enters += 1;
        on.enter?.(r.index, entity, r.created);
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
