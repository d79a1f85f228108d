// Draws the world top-down on a Canvas 2D (seed 000's interactive visual): the library's grid, with
// the cells the viewer's query scanned shaded, both as the server reports them; the viewer as a solid
// white disc, the enter radius as a solid ring and the leave radius as a dashed ring; held
// entities as solid yellow discs; a green plus at each enter and a red minus at each leave,
// fading out, and a white spark for an entity just created; each shot the connection heard as a
// ring expanding from where it was fired; in debug view, the entities not held as small grey
// outlines, and a ring around the entity the why panel is about.

export const COLORS = {
  background: '#0b0d12',
  world: '#10131a',
  grid: '#252a35',
  scanned: 'rgba(96, 165, 250, 0.16)',
  viewer: '#fafafa',
  entity: '#fdc700',
  enter: '#4ade80',
  leave: '#f87171',
  hidden: '#8b919e',
  target: 'rgba(250, 250, 250, 0.45)',
  created: '#fafafa',
  shot: '#fb923c',
  selected: '#22d3ee',
};

export const MARKER_MS = 1000;
export const RING_MS = 800;

/** Maps world coordinates to canvas pixels: the world fitted to the canvas, centred. */
export function viewTransform(canvasWidth, canvasHeight, width, height, margin) {
  const scale = Math.min((canvasWidth - 2 * margin) / width, (canvasHeight - 2 * margin) / height);
  const ox = (canvasWidth - width * scale) / 2;
  const oz = (canvasHeight - height * scale) / 2;
  return {
    scale,
    toCanvas: (x, z) => [ox + x * scale, oz + z * scale],
    toWorld: (px, pz) => [(px - ox) / scale, (pz - oz) / scale],
  };
}

/** An entity's disc radius in canvas pixels: about 6 cm of the world, within [2.5, 6] CSS pixels. */
export function entityRadius(scale, dpr) {
  return Math.max(2.5 * dpr, Math.min(6 * dpr, 0.06 * scale));
}

function disc(ctx, x, y, r) {
  ctx.beginPath();
  ctx.arc(x, y, r, 0, 2 * Math.PI);
}

/**
 * Draws one frame. `scene`: {world (the welcome), viewer {x, z} or null, enterRadius,
 * leaveRadius, interest (bool), grid {originX, originZ, cellSize, scanned {x0, x1, z0, z1} or
 * null}, held (Map of {x, z}), markers [{x, z, kind, time}], rings [{x, z, time}], hidden [{x, z}]
 * (debug view) or null, target {x, z} or null (the drag), selected (the entity index the why
 * panel is about) or null}. Returns the yellow discs, rings and shaded cells drawn, and whether
 * the selected entity was ringed: {entities, rings, cells, selected}.
 */
export function drawScene(ctx, view, scene, now, dpr) {
  const { world } = scene;
  const { scale, toCanvas } = view;
  ctx.save();
  ctx.fillStyle = COLORS.background;
  ctx.fillRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  const [wx, wz] = toCanvas(0, 0);
  ctx.fillStyle = COLORS.world;
  ctx.fillRect(wx, wz, world.width * scale, world.height * scale);

  // The library's grid (its origin and cell size, from the tick frame) and the cells the
  // connection's scan read, as the server reported them (none with interest off: nothing is
  // scanned, everything is sent). Cells are clipped to the world.
  const grid = scene.grid ?? { originX: 0, originZ: 0, cellSize: world.cellSize, scanned: null };
  const cell = grid.cellSize;
  let cells = 0;
  if (grid.scanned) {
    ctx.fillStyle = COLORS.scanned;
    const { x0, x1, z0, z1 } = grid.scanned;
    for (let cz = z0; cz <= z1; ++cz) {
      for (let cx = x0; cx <= x1; ++cx) {
        const left = Math.max(0, grid.originX + cx * cell);
        const right = Math.min(world.width, grid.originX + (cx + 1) * cell);
        const top = Math.max(0, grid.originZ + cz * cell);
        const bottom = Math.min(world.height, grid.originZ + (cz + 1) * cell);
        if (right <= left || bottom <= top) continue;
        const [px, pz] = toCanvas(left, top);
        ctx.fillRect(px, pz, (right - left) * scale, (bottom - top) * scale);
        ++cells;
      }
    }
  }
  ctx.strokeStyle = COLORS.grid;
  ctx.lineWidth = dpr;
  ctx.beginPath();
  for (let x = grid.originX + Math.ceil(-grid.originX / cell) * cell; x <= world.width + 1e-6; x += cell) {
    const [px, top] = toCanvas(x, 0);
    ctx.moveTo(px, top);
    ctx.lineTo(px, top + world.height * scale);
  }
  for (let z = grid.originZ + Math.ceil(-grid.originZ / cell) * cell; z <= world.height + 1e-6; z += cell) {
    const [left, pz] = toCanvas(0, z);
    ctx.moveTo(left, pz);
    ctx.lineTo(left + world.width * scale, pz);
  }
  ctx.stroke();
  ctx.strokeRect(wx, wz, world.width * scale, world.height * scale);

  const radius = entityRadius(scale, dpr);

  // Debug view: what the connection does not hold.
  if (scene.hidden) {
    ctx.strokeStyle = COLORS.hidden;
    ctx.lineWidth = dpr;
    const r = radius * 0.7;
    for (const e of scene.hidden) {
      const [px, pz] = toCanvas(e.x, e.z);
      disc(ctx, px, pz, r);
      ctx.stroke();
    }
  }

  // Replicated entities; another connection's viewer (kind 1) with a white rim.
  let drawn = 0;
  ctx.fillStyle = COLORS.entity;
  ctx.strokeStyle = COLORS.viewer;
  ctx.lineWidth = 1.5 * dpr;
  for (const e of scene.held.values()) {
    const [px, pz] = toCanvas(e.x, e.z);
    disc(ctx, px, pz, radius);
    ctx.fill();
    if (e.kind === 1) ctx.stroke();
    ++drawn;
  }

  // Enter and leave marks, fading out.
  const arm = radius * 1.6;
  ctx.lineWidth = 2 * dpr;
  for (const m of scene.markers) {
    const age = now - m.time;
    if (age < 0 || age >= MARKER_MS) continue;
    ctx.globalAlpha = 1 - age / MARKER_MS;
    const [px, pz] = toCanvas(m.x, m.z);
    const dy = -radius * 2.2;  // beside the disc, not on it
    if (m.kind === 'created') {
      // A spark: four short rays around the disc.
      ctx.strokeStyle = COLORS.created;
      ctx.beginPath();
      for (const [ux, uz] of [[1, 1], [1, -1], [-1, 1], [-1, -1]]) {
        ctx.moveTo(px + ux * radius * 1.6, pz + uz * radius * 1.6);
        ctx.lineTo(px + ux * radius * 2.6, pz + uz * radius * 2.6);
      }
      ctx.stroke();
      continue;
    }
    ctx.strokeStyle = m.kind === 'enter' ? COLORS.enter : COLORS.leave;
    ctx.beginPath();
    ctx.moveTo(px - arm / 2, pz + dy);
    ctx.lineTo(px + arm / 2, pz + dy);
    if (m.kind === 'enter') {
      ctx.moveTo(px, pz + dy - arm / 2);
      ctx.lineTo(px, pz + dy + arm / 2);
    }
    ctx.stroke();
  }
  ctx.globalAlpha = 1;

  // The entity the why panel is about, held or (debug view) not.
  let selected = false;
  if (scene.selected !== null && scene.selected !== undefined) {
    const e = scene.held.get(scene.selected) ?? scene.hidden?.find((h) => h.index === scene.selected);
    if (e !== undefined) {
      const [px, pz] = toCanvas(e.x, e.z);
      ctx.strokeStyle = COLORS.selected;
      ctx.lineWidth = 2 * dpr;
      disc(ctx, px, pz, radius * 2.2);
      ctx.stroke();
      selected = true;
    }
  }

  // Shots heard: rings growing to a quarter of the enter radius, fading out.
  let rings = 0;
  ctx.strokeStyle = COLORS.shot;
  ctx.lineWidth = 2 * dpr;
  for (const r of scene.rings ?? []) {
    const age = now - r.time;
    if (age < 0 || age >= RING_MS) continue;
    const [px, pz] = toCanvas(r.x, r.z);
    ctx.globalAlpha = 1 - age / RING_MS;
    disc(ctx, px, pz, radius + (age / RING_MS) * scene.enterRadius * 0.25 * scale);
    ctx.stroke();
    ++rings;
  }
  ctx.globalAlpha = 1;

  // The viewer and its radii.
  if (scene.viewer) {
    const [vx, vz] = toCanvas(scene.viewer.x, scene.viewer.z);
    ctx.strokeStyle = COLORS.viewer;
    ctx.lineWidth = 1.5 * dpr;
    disc(ctx, vx, vz, scene.enterRadius * scale);
    ctx.stroke();
    ctx.setLineDash([6 * dpr, 5 * dpr]);
    disc(ctx, vx, vz, scene.leaveRadius * scale);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = COLORS.viewer;
    disc(ctx, vx, vz, radius * 1.35);
    ctx.fill();
  }
  if (scene.target) {
    const [tx, tz] = toCanvas(scene.target.x, scene.target.z);
    ctx.strokeStyle = COLORS.target;
    ctx.lineWidth = dpr;
    ctx.beginPath();
    ctx.moveTo(tx - 6 * dpr, tz);
    ctx.lineTo(tx + 6 * dpr, tz);
    ctx.moveTo(tx, tz - 6 * dpr);
    ctx.lineTo(tx, tz + 6 * dpr);
    ctx.stroke();
  }
  ctx.restore();
  return { entities: drawn, rings, cells, selected };
}
