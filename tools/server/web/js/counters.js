// Live counters: totals since the page connected, rates over a sliding window (1 s), and a
// history of sampled rates for the chart, drawn on a log scale so spawns+despawns (a few a
// second) and updates (thousands with interest off) share one axis.

// Drawn in this order: messages (updates + spawns + despawns) last and dashed, as it mostly
// runs just above updates.
export const SERIES = [
  { key: 'updates', label: 'updates/s', color: '#fdc700' },
  { key: 'spawnsDespawns', label: 'spawns+despawns/s', color: '#4ade80' },
  { key: 'messages', label: 'messages/s', color: '#e5e5e5', dash: [4, 3] },
];

export class Counters {
  constructor({ windowMs = 1000, historySeconds = 30, sampleMs = 250 } = {}) {
    this.windowMs = windowMs;
    this.sampleMs = sampleMs;
    this.historyLength = Math.ceil((historySeconds * 1000) / sampleMs);
    this.totals = { spawns: 0, despawns: 0, updates: 0, records: 0, bytes: 0 };
    /** Arrivals inside the window, oldest first: [time, spawns, despawns, updates, bytes]. */
    this.events = [];
    this.head = 0;
    /** Sampled rates, oldest first, for the chart. */
    this.history = [];
    this.lastSample = -Infinity;
  }

  /** Counts one received message at `time` (ms). */
  add(time, { spawns = 0, despawns = 0, updates = 0, bytes = 0 }) {
    const t = this.totals;
    t.spawns += spawns;
    t.despawns += despawns;
    t.updates += updates;
    t.records += spawns + despawns + updates;
    t.bytes += bytes;
    this.events.push([time, spawns, despawns, updates, bytes]);
    this.expire(time);
  }

  expire(now) {
    while (this.head < this.events.length && this.events[this.head][0] <= now - this.windowMs) ++this.head;
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }

  /** Rates per second over the window ending at `now` (ms). */
  perSecond(now) {
    this.expire(now);
    let spawns = 0;
    let despawns = 0;
    let updates = 0;
    let bytes = 0;
    for (let i = this.head; i < this.events.length; ++i) {
      const e = this.events[i];
      if (e[0] > now) break;
      spawns += e[1];
      despawns += e[2];
      updates += e[3];
      bytes += e[4];
    }
    const k = 1000 / this.windowMs;
    return {
      messages: (spawns + despawns + updates) * k,
      spawnsDespawns: (spawns + despawns) * k,
      updates: updates * k,
      bytes: bytes * k,
    };
  }

  /** Adds a chart sample when one is due; returns the current rates. */
  sample(now) {
    const rates = this.perSecond(now);
    if (now - this.lastSample >= this.sampleMs) {
      this.lastSample = now;
      this.history.push(rates);
      if (this.history.length > this.historyLength) this.history.shift();
    }
    return rates;
  }
}

const log = (v) => Math.log10(1 + v);

/** Draws the sampled rates: time to the right, a log scale of 1..100k a second up. */
export function drawChart(ctx, counters, { width, height, dpr = 1 }) {
  ctx.save();
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = '#111318';
  ctx.fillRect(0, 0, width, height);
  const left = 36 * dpr;
  const top = 6 * dpr;
  const bottom = height - 6 * dpr;
  const plotW = width - left - 6 * dpr;
  const maxLog = log(100000);
  const y = (v) => bottom - (log(v) / maxLog) * (bottom - top);
  ctx.font = `${10 * dpr}px system-ui, sans-serif`;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const v of [1, 10, 100, 1000, 10000, 100000]) {
    ctx.strokeStyle = '#2a2e38';
    ctx.lineWidth = dpr;
    ctx.beginPath();
    ctx.moveTo(left, y(v));
    ctx.lineTo(left + plotW, y(v));
    ctx.stroke();
    ctx.fillStyle = '#7b8190';
    ctx.fillText(v >= 1000 ? `${v / 1000}k` : `${v}`, left - 4 * dpr, y(v));
  }
  const n = counters.historyLength;
  const x = (i, count) => left + plotW - ((count - 1 - i) / (n - 1)) * plotW;
  const h = counters.history;
  for (const s of SERIES) {
    ctx.strokeStyle = s.color;
    ctx.lineWidth = (s.dash ? 1 : 1.5) * dpr;
    ctx.setLineDash(s.dash ? s.dash.map((d) => d * dpr) : []);
    ctx.beginPath();
    h.forEach((rates, i) => {
      if (i === 0) ctx.moveTo(x(i, h.length), y(rates[s.key]));
      else ctx.lineTo(x(i, h.length), y(rates[s.key]));
    });
    ctx.stroke();
  }
  ctx.restore();
}
