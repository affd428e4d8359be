// The dashboard's world map: an SVG in the equirectangular projection (x = longitude + 180,
// y = 90 − latitude, in degrees: the whole world is 360 × 180 units, the poles are its top and
// bottom edges rather than infinitely far away as in Mercator), the hand-drawn outline of
// world.js, a graticule, the records' LOCATION values as points and the query's NEAR circle.
//
// The circle is the set of points within r metres of the centre on the sphere CloudKit and
// Cirrus measure on (R = 6371.0088 km), drawn as a ring of 128 points at that distance. Three
// cases keep it right wherever it is:
//   - a ring crossing ±180° is unwrapped (longitudes run on past 180°) and, like every shape
//     here, drawn three times, shifted by −360°, 0 and +360°: the view shows whichever copies it
//     covers, so the circle stays whole across the antimeridian;
//   - a circle holding one pole winds once round it: the ring is closed along that pole's edge of
//     the map (the cap becomes the band from the ring to the pole, as the projection shows it);
//   - a circle holding both poles (r past 90° + |latitude|) is the whole world minus the cap round
//     the antipode, drawn with the even-odd rule; r ≥ half the Earth's circumference is everything.
// Nothing is fetched: the outline is a module of this dashboard.

import { land, water } from "./world.js";

const SVG = "http://www.w3.org/2000/svg";
/** Mean Earth radius in metres (the IUGG R1 that Cirrus's GeoMath uses). */
export const earthRadius = 6371008.8;
const shifts = [-360, 0, 360];
const rad = Math.PI / 180;

/** Map units of a longitude and latitude (degrees). */
export function project(lon, lat) {
  return [lon + 180, 90 - lat];
}

/** The point `metres` from (lat, lon) along `bearing` (radians), on the sphere: [lon, lat] in degrees. */
function destination(lat, lon, metres, bearing) {
  const d = metres / earthRadius;
  const p1 = lat * rad;
  const p2 = Math.asin(Math.sin(p1) * Math.cos(d) + Math.cos(p1) * Math.sin(d) * Math.cos(bearing));
  const l2 = lon * rad + Math.atan2(Math.sin(bearing) * Math.sin(d) * Math.cos(p1),
    Math.cos(d) - Math.sin(p1) * Math.sin(p2));
  return [l2 / rad, p2 / rad];
}

/**
 * The circle of `metres` round (lat, lon): `kind` is "plain", "north" or "south" (it holds that
 * pole), "both" (both poles: the world minus the ring's inside) or "all"; `ring` is [lon, lat]
 * pairs with longitudes unwrapped (they may run past ±180°), closed along the pole's edge for
 * "north" and "south".
 */
export function queryCircle(lat, lon, metres) {
  const d = metres / earthRadius;
  if (!(d > 0)) return { kind: "plain", ring: [] };
  if (d >= Math.PI) return { kind: "all", ring: [] };
  const c = Math.max(-89.9999, Math.min(89.9999, lat));  // at a pole itself every bearing is south
  const north = (90 - lat) * rad < d;
  const south = (90 + lat) * rad < d;
  const ring = [];
  const steps = 128;
  for (let i = 0; i < steps; i++) {
    let [x, y] = destination(c, lon, metres, (2 * Math.PI * i) / steps);
    if (ring.length) {
      const previous = ring[ring.length - 1][0];
      while (x - previous > 180) x -= 360;
      while (previous - x > 180) x += 360;
    }
    ring.push([x, y]);
  }
  if (north && south) return { kind: "both", ring };
  if (north || south) {
    const edge = north ? 90 : -90;
    // The unwrapped ring ends one step short of a full turn from where it began: close it a full
    // turn on, then along the pole's edge back to the start.
    const first = ring[0][0];
    const last = ring[ring.length - 1][0];
    const end = first + (last > first ? 360 : -360);
    ring.push([end, ring[0][1]], [end, edge], [first, edge]);
    return { kind: north ? "north" : "south", ring };
  }
  return { kind: "plain", ring };
}

/**
 * SVG path data of rings of [lon, lat] pairs, each drawn at the three shifts, with `digits`
 * decimals (a 1 km circle needs 6: its ring is a hundredth of a degree across). With `outline`
 * the rings are left open and any edge along a pole's edge of the map is left out: that is
 * where a ring was closed, not a coast or the circle's edge, and a stroke there would show.
 */
function pathOf(rings, digits = 3, outline = false) {
  const polar = (p) => Math.abs(p[1]) === 90;
  let d = "";
  for (const s of shifts) {
    for (const ring of rings) {
      const points = outline && ring.length ? [...ring, ring[0]] : ring;
      let pen = false;
      points.forEach((p, i) => {
        if (outline && (polar(p) || (i > 0 && polar(points[i - 1])))) {
          pen = pen && !polar(p);
          if (polar(p)) return;
        }
        const [x, y] = project(p[0] + s, p[1]);
        d += `${pen ? "L" : "M"}${+x.toFixed(digits)} ${+y.toFixed(digits)}`;
        pen = true;
      });
      if (!outline && ring.length) d += "Z";
    }
  }
  return d;
}

const pairs = (flat) => Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]);
const landRings = land.map(pairs);
const waterRings = water.map(pairs);

/** SVG path data of a query circle: `d` to fill (with `rule`), `outline` to stroke. */
export function circlePath(circle) {
  const world = "M-360 0H720V180H-360Z";
  if (circle.kind === "all") return { d: world, rule: "nonzero", outline: "" };
  const outline = pathOf([circle.ring], 6, true);
  if (circle.kind === "both") return { d: world + pathOf([circle.ring], 6), rule: "evenodd", outline };
  return { d: pathOf([circle.ring], 6), rule: "nonzero", outline };
}

function element(name, attributes = {}, parent = null) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
  if (parent) parent.append(e);
  return e;
}

/** The smallest arc of longitudes holding all of `lons` (degrees): [from, to], to − from ≤ 360. */
function longitudeArc(lons) {
  const sorted = [...new Set(lons.map((l) => ((((l + 180) % 360) + 360) % 360) - 180))].sort((a, b) => a - b);
  if (sorted.length === 0) return [-180, 180];
  let gap = sorted[0] + 360 - sorted[sorted.length - 1];
  let start = sorted[0];
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] - sorted[i - 1] > gap) {
      gap = sorted[i] - sorted[i - 1];
      start = sorted[i];
    }
  }
  return [start, start + 360 - gap];
}

/** A world map in an <svg> element. */
export class WorldMap {
  constructor(svg, { onPick } = {}) {
    this.svg = svg;
    this.points = [];
    this.circle = null;
    this.center = null;
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    element("path", { class: "land", d: pathOf(landRings) }, svg);
    element("path", { class: "water", d: pathOf(waterRings) }, svg);
    element("path", { class: "coast", d: pathOf(landRings.concat(waterRings), 3, true) }, svg);
    this.graticule = element("g", { class: "graticule" }, svg);  // over the land: it is opaque
    this.circleLayer = element("path", { id: "query-circle", class: "query-circle", d: "" }, svg);
    this.circleOutline = element("path", { class: "query-circle-outline", d: "" }, svg);
    this.pointLayer = element("g", { class: "points" }, svg);
    this.view = { x: 0, y: 0, w: 360, h: 180 };
    svg.addEventListener("click", (event) => {
      if (!onPick) return;
      const m = svg.getScreenCTM();
      if (!m) return;
      const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(m.inverse());
      const lat = Math.max(-90, Math.min(90, 90 - p.y));
      const lon = ((((p.x - 180 + 180) % 360) + 360) % 360) - 180;
      onPick(+lat.toFixed(5), +lon.toFixed(5));
    });
    this.world();
  }

  /**
   * Shows `points` ([{name, lat, lon}]) and the query circle (`{lat, lon, metres}` or null),
   * then fits the view to them.
   */
  show(points, circle) {
    this.points = points;
    this.circle = circle ? { ...circle, shape: queryCircle(circle.lat, circle.lon, circle.metres) } : null;
    const { d, rule, outline } = this.circle ? circlePath(this.circle.shape) : { d: "", rule: "nonzero", outline: "" };
    this.circleLayer.setAttribute("d", d);
    this.circleLayer.setAttribute("fill-rule", rule);
    this.circleOutline.setAttribute("d", outline);
    this.fit();
  }

  /** The whole world. */
  world() {
    this.setView({ x: 0, y: 0, w: 360, h: 180 });
  }

  /** The smallest view holding every point and the circle, padded, at least 0.02° across. */
  fit() {
    const lats = this.points.map((p) => p.lat);
    const lons = this.points.map((p) => p.lon);
    const shape = this.circle?.shape;
    if (shape && (shape.kind === "all" || shape.kind === "both")) return this.world();
    if (shape) {
      for (const [lon, lat] of shape.ring) {
        lats.push(lat);
        if (Math.abs(lat) < 90) lons.push(lon);
      }
    }
    if (lats.length === 0) return this.world();
    let [west, east] = longitudeArc(lons);
    if (shape && shape.kind !== "plain") [west, east] = [-180, 180];  // round a pole: every longitude
    let south = Math.min(...lats);
    let north = Math.max(...lats);
    let w = Math.max(east - west, 0.02) * 1.3;
    let h = Math.max(north - south, 0.02) * 1.3;
    if (w < 2 * h) w = 2 * h;
    else h = w / 2;
    if (w > 360) [w, h] = [360, 180];
    const cx = (west + east) / 2 + 180;
    const cy = 90 - (north + south) / 2;
    const y = Math.max(0, Math.min(180 - h, cy - h / 2));
    this.setView({ x: w >= 360 ? 0 : cx - w / 2, y, w, h });
  }

  setView(view) {
    this.view = view;
    const { x, y, w, h } = view;
    this.svg.setAttribute("viewBox", `${+x.toFixed(6)} ${+y.toFixed(6)} ${+w.toFixed(6)} ${+h.toFixed(6)}`);
    this.drawGraticule();
    this.drawPoints();
  }

  drawGraticule() {
    const { x, y, w, h } = this.view;
    const step = [30, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002].find((s) => h / s >= 3) ?? 0.001;
    const lines = [];
    const labels = [];
    const size = h / 40;
    const decimals = Math.max(0, -Math.floor(Math.log10(step)));
    for (let gx = Math.ceil(x / step) * step; gx <= x + w; gx += step) {
      lines.push(`M${gx} ${Math.max(0, y)}V${Math.min(180, y + h)}`);
      const lon = ((((gx - 180 + 180) % 360) + 360) % 360) - 180;
      const side = Math.abs(lon) < 1e-9 || Math.abs(lon) > 180 - 1e-9 ? "" : lon < 0 ? "W" : "E";
      labels.push([gx + size * 0.2, y + h - size * 0.3, `${Math.abs(lon).toFixed(decimals)}°${side}`]);
    }
    for (let gy = Math.ceil(y / step) * step; gy <= Math.min(180, y + h); gy += step) {
      lines.push(`M${x} ${gy}H${x + w}`);
      if (gy < y + size * 1.2 || gy > y + h - size * 1.5) continue;  // clear of the edges and their labels
      const lat = 90 - gy;
      const side = Math.abs(lat) < 1e-9 ? "" : lat < 0 ? "S" : "N";
      labels.push([x + size * 0.2, gy - size * 0.2, `${Math.abs(lat).toFixed(decimals)}°${side}`]);
    }
    const g = this.graticule;
    g.replaceChildren();
    element("path", { d: lines.join("") }, g);
    for (const [lx, ly, text] of labels) {
      element("text", { x: lx, y: ly, "font-size": size }, g).textContent = text;
    }
  }

  drawPoints() {
    const r = this.view.w / 220;
    const g = this.pointLayer;
    g.replaceChildren();
    if (this.circle) {
      const [cx, cy] = project(this.circle.lon, this.circle.lat);
      for (const s of shifts) {
        element("path", { class: "center", d: `M${cx + s - r} ${cy}h${2 * r}M${cx + s} ${cy - r}v${2 * r}` }, g);
      }
    }
    for (const p of this.points) {
      const [px, py] = project(p.lon, p.lat);
      for (const s of shifts) {
        const dot = element("circle", { cx: px + s, cy: py, r, class: s ? "point ghost" : "point" }, g);
        if (!s) dot.dataset.recordName = p.name;
        element("title", {}, dot).textContent = `${p.name} (${p.lat}, ${p.lon})`;
      }
    }
  }
}
