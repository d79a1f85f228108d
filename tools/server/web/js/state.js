// The demo's entity payload (docs/demo_protocol.md, "Entity payload"), read with the bit reader:
// x then z quantized at 1/256 over the world, then, in a full state (a spawn), the kind.

import { BitReader, StreamError } from './bitstream.js';

export const POSITION_RESOLUTION = 1 / 256;
export const KINDS = ['walker', 'viewer'];

/**
 * Reads one payload; throws a StreamError when it does not read back as the server's serialize
 * function wrote it (short, a value out of range, or non-zero padding).
 * @param {Uint8Array} payload
 * @param {'full'|'update'} part
 * @param {{width: number, height: number}} world
 */
export function readEntityState(payload, part, world) {
  const s = new BitReader(payload);
  const x = s.readQuantized(0, world.width, POSITION_RESOLUTION);
  const z = s.readQuantized(0, world.height, POSITION_RESOLUTION);
  const state = { x, z };
  if (part === 'full') state.kind = s.readUint(0, 3);
  if (!s.restIsZero()) throw new StreamError('payload has non-zero bits after its state');
  return state;
}
