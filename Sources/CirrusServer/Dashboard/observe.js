// The Logs and Telemetry panes: the server's request log (cirrus/logs), newest first, filtered
// by operation, record type and errors; and the last hour per operation (cirrus/telemetry) as
// three charts — requests a minute, error rate, and p50/p95/p99 latency — drawn here as SVG
// (no chart library, nothing fetched). Both need the management token of the Deployment pane.

const SVG = "http://www.w3.org/2000/svg";

function svg(name, attributes = {}, text = null) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
  if (text !== null) e.textContent = text;
  return e;
}

// A round number of steps of 1, 2 or 5 × 10^k covering `max`.
function niceMax(max) {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

function label(value, unit) {
  const v = value >= 100 || Number.isInteger(value) ? Math.round(value) : value.toFixed(value < 1 ? 2 : 1);
  return `${v}${unit}`;
}

// Draws `series` ([{name, values: [number|null], kind: "bar"|"line", cls}]) over `minutes` (ms)
// into the SVG element `target`, with a y axis of `unit` and the time of every 15th minute.
export function chart(target, minutes, series, unit) {
  const width = 600, height = 150, left = 46, right = 8, top = 8, bottom = 20;
  const plotW = width - left - right, plotH = height - top - bottom;
  const all = series.flatMap((s) => s.values.filter((v) => v !== null && v !== undefined));
  const max = niceMax(Math.max(0, ...all));
  const n = Math.max(1, minutes.length);
  const x = (i) => left + (i + 0.5) * (plotW / n);
  const y = (v) => top + plotH - (v / max) * plotH;
  target.setAttribute("viewBox", `0 0 ${width} ${height}`);
  target.replaceChildren();
  const axes = svg("g", { class: "axes" });
  for (const f of [0, 0.5, 1]) {
    axes.append(svg("line", { x1: left, x2: width - right, y1: y(max * f), y2: y(max * f), class: "grid" }));
    axes.append(svg("text", { x: left - 4, y: y(max * f) + 4, "text-anchor": "end" }, label(max * f, unit)));
  }
  minutes.forEach((m, i) => {
    if (i % 15 !== 14 && i !== minutes.length - 1) return;
    const t = new Date(m);
    const text = `${String(t.getHours()).padStart(2, "0")}:${String(t.getMinutes()).padStart(2, "0")}`;
    axes.append(svg("text", { x: x(i), y: height - 5, "text-anchor": "middle" }, text));
  });
  target.append(axes);
  for (const s of series) {
    const g = svg("g", { class: `series ${s.cls}`, "data-name": s.name });
    if (s.kind === "bar") {
      const w = Math.max(1, plotW / n - 1);
      s.values.forEach((v, i) => {
        if (!v) return;
        g.append(svg("rect", { x: x(i) - w / 2, y: y(v), width: w, height: top + plotH - y(v), "data-minute": i }));
      });
    } else {
      let d = "";
      let pen = false;
      s.values.forEach((v, i) => {
        if (v === null || v === undefined) { pen = false; return; }
        d += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
        pen = true;
        g.append(svg("circle", { cx: x(i), cy: y(v), r: 2, "data-minute": i }));
      });
      if (d) g.prepend(svg("path", { d }));
    }
    target.append(g);
  }
  const legend = svg("g", { class: "legend" });
  series.forEach((s, i) => {
    legend.append(svg("rect", { x: left + 8 + i * 70, y: top + 2, width: 10, height: 10, class: `key ${s.cls}` }));
    legend.append(svg("text", { x: left + 22 + i * 70, y: top + 11 }, s.name));
  });
  target.append(legend);
}

// The request log as table rows, newest first.
export function logRows(entries) {
  return entries.map((e) => {
    const tr = document.createElement("tr");
    tr.className = e.status >= 400 ? "failed" : "";
    const time = new Date(e.time);
    const cells = [
      time.toISOString().replace("T", " ").slice(0, 19), e.operation, e.environment ?? "", e.database ?? "",
      e.recordType ?? "", String(e.status), e.serverErrorCode ?? "", e.durationMs.toFixed(2),
      String(e.requestBytes), String(e.responseBytes),
    ];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.append(td);
    }
    return tr;
  });
}

// Telemetry of one operation as the three charts' series.
export function telemetrySeries(op) {
  const rate = op.requests.map((r, i) => (r ? (100 * op.errors[i]) / r : null));
  return {
    requests: [{ name: "requests", values: op.requests, kind: "bar", cls: "requests" }],
    errors: [{ name: "errors %", values: rate, kind: "line", cls: "errors" }],
    latency: [
      { name: "p50", values: op.p50, kind: "line", cls: "p50" },
      { name: "p95", values: op.p95, kind: "line", cls: "p95" },
      { name: "p99", values: op.p99, kind: "line", cls: "p99" },
    ],
  };
}
