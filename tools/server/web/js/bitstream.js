// The read side of sightline::Stream (include/sightline/serialize.h, src/serialize.cpp):
// bit i of a payload is bit (i % 8) of byte (i / 8), each value low bit first, the last byte
// padded with zero bits. Every read throws a StreamError on failure, the way a C++ read returns
// false and stays failed.

export class StreamError extends Error {}

/** Bits needed to hold any value in [0, range]: 0 for 0, 32 for 0xffffffff. */
export function bitsRequired(range) {
  let bits = 0;
  while (bits < 32 && Math.floor(range / 2 ** bits) !== 0) ++bits;
  return bits;
}

/**
 * The step count of serialize_quantized, computed as src/serialize.cpp does: in double, from
 * the float32 values of min, max and resolution, with a slack of 0.001 of a step.
 */
export function quantizedTop(min, max, resolution) {
  const fmin = Math.fround(min);
  const fmax = Math.fround(max);
  const fres = Math.fround(resolution);
  if (!(Number.isFinite(fmin) && Number.isFinite(fmax) && fmin < fmax)) {
    throw new StreamError('quantized range not finite or empty');
  }
  if (!(Number.isFinite(fres) && fres > 0)) throw new StreamError('quantized resolution not positive');
  const steps = Math.max(0, Math.ceil((fmax - fmin) / fres - 1e-3));
  if (steps > 4294967295) throw new StreamError('quantized range needs more than 32 bits');
  return steps;
}

export class BitReader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.bit = 0;
    this.sizeBits = bytes.length * 8;
  }

  /** The next `bits` (1..32) bits as an unsigned number, low bit first. */
  readBits(bits) {
    if (!Number.isInteger(bits) || bits < 1 || bits > 32) throw new StreamError('bit count outside 1..32');
    if (this.sizeBits - this.bit < bits) throw new StreamError('read past the end');
    let value = 0;
    let got = 0;
    while (got < bits) {
      const byte = this.bytes[this.bit >> 3];
      const offset = this.bit & 7;
      const take = Math.min(8 - offset, bits - got);
      const part = (byte >> offset) & ((1 << take) - 1);
      value += part * 2 ** got;  // not `|` and `<<`: they are signed 32-bit in JS
      got += take;
      this.bit += take;
    }
    return value;
  }

  /** serialize_uint(v, min, max): bits_required(max - min) bits of v - min. */
  readUint(min, max) {
    if (min > max) throw new StreamError('range with min above max');
    const bits = bitsRequired(max - min);
    if (bits === 0) return min;
    const offset = this.readBits(bits);
    if (offset > max - min) throw new StreamError('value read outside its range');
    return min + offset;
  }

  readBool() {
    return this.readBits(1) !== 0;
  }

  /** serialize_float: 32 IEEE-754 bits; NaN and infinities are refused. */
  readFloat() {
    const raw = this.readBits(32);
    const view = new DataView(new ArrayBuffer(4));
    view.setUint32(0, raw, true);
    const value = view.getFloat32(0, true);
    if (!Number.isFinite(value)) throw new StreamError('float read not finite');
    return value;
  }

  /**
   * serialize_quantized(v, min, max, resolution): the step in bits_required(top) bits, read back
   * as min + step * resolution (in double), clamped to max, rounded to float32.
   */
  readQuantized(min, max, resolution) {
    const top = quantizedTop(min, max, resolution);
    const step = this.readUint(0, top);
    const v = Math.fround(min) + step * Math.fround(resolution);
    return Math.fround(Math.min(v, Math.fround(max)));
  }

  /** Bits read so far. */
  get bitsRead() {
    return this.bit;
  }

  /** Whether every bit after the last one read is zero (the writer's padding). */
  restIsZero() {
    for (let bit = this.bit; bit < this.sizeBits; ++bit) {
      if ((this.bytes[bit >> 3] >> (bit & 7)) & 1) return false;
    }
    return true;
  }
}
