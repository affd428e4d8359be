#!/usr/bin/env python3
"""The scaling table and plot of docs/benchmarks.md from qbench runs at several sizes.

    scripts/scaling.py RUN-100k.json RUN-1M.json RUN-10M.json --markdown T.md --svg P.svg

Each file is the `--json` report of one `qbench --size N` run (any number of sizes; the runs
should share their options). For every suite in any run the table gives, per size, Cirrus's and
SQLite's medians, their ratio (SQLite / Cirrus) and the rows the suite's queries return on
average, then how much Cirrus's median and the rows grew from the smallest size to the largest:
a suite whose cost grows faster than its result is the one to explain. Ingest rows are the whole
load (seconds); memory rows are the reopen-process probes' resident memory after their queries.

The plot is one small log-log panel per suite: median against size, Cirrus solid, SQLite dashed.
Only the standard library is used, so it runs wherever the benchmarks do.
"""

import argparse
import json
import math
import re
import sys


def load(paths):
    runs = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            r = json.load(f)
        runs.append(r)
    runs.sort(key=lambda r: r["size"])
    return runs


def size_label(n):
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def fmt_ns(ns):
    if ns is None:
        return "–"
    if ns >= 1e9:
        return f"{ns / 1e9:.1f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def tick(ns):
    """A power of ten as a short axis label: 100 ns, 10 µs, 1 ms, 10 s."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.0f} {unit}"
    return f"{ns:.0f} ns"


def rows_of(result):
    m = re.search(r"avg (\d+) rows", result.get("note", ""))
    return int(m.group(1)) if m else None


def series(runs):
    """suite -> title, and per run: (cirrus ns, sqlite ns, rows)."""
    order, titles, table = [], {}, {}
    for i, r in enumerate(runs):
        for res in r["results"]:
            s = res["suite"]
            if s not in titles:
                order.append(s)
                table[s] = [None] * len(runs)
            titles[s] = res["title"]  # the largest run's (a deep page's number grows with size)
            c = (res.get("cirrus") or {}).get("medianNs")
            q = (res.get("sqlite") or {}).get("medianNs")
            if s == "ingest":
                # the whole load: records / rate
                c = r["size"] / res["cirrus"]["opsPerSecond"] * 1e9 if res.get("cirrus") else None
                q = r["size"] / res["sqlite"]["opsPerSecond"] * 1e9 if res.get("sqlite") else None
            table[s][i] = (c, q, rows_of(res))
    return order, titles, table


def memory_rows(runs):
    out = []
    for key, title in [("peakRSSBytes", "qbench peak RSS (both engines + data)")]:
        out.append((title, [r.get("memory", {}).get(key) for r in runs]))
    return out


def probe_rss(runs):
    """The reopen-process probes' RSS after 1 000 queries, from the suite's note."""
    vals = []
    for r in runs:
        v = None
        for res in r["results"]:
            if res["suite"] == "reopen-process":
                m = re.search(r"after 1000 mixed queries (\d+) / (\d+) MiB", res.get("note", ""))
                if m:
                    v = (int(m.group(1)), int(m.group(2)))
        vals.append(v)
    return vals


def markdown(runs):
    order, titles, table = series(runs)
    sizes = [size_label(r["size"]) for r in runs]
    head = "| suite | " + " | ".join(f"{s}: Cirrus / SQLite (×), rows" for s in sizes)
    head += f" | Cirrus {sizes[0]}→{sizes[-1]} | rows {sizes[0]}→{sizes[-1]} |"
    lines = [head, "|---|" + "---|" * (len(sizes) + 2)]
    for s in order:
        cells = []
        for v in table[s]:
            if v is None or v[0] is None:
                cells.append("–")
                continue
            c, q, n = v
            ratio = f" ({q / c:.1f}×)" if q and c else ""
            rows = f", {n}" if n is not None else ""
            cells.append(f"{fmt_ns(c)} / {fmt_ns(q)}{ratio}{rows}")
        first, last = table[s][0], table[s][-1]
        growth = rgrowth = "–"
        if first and last and first[0] and last[0]:
            growth = f"{last[0] / first[0]:.1f}×"
        if first and last and first[2] and last[2]:
            rgrowth = f"{last[2] / first[2]:.1f}×"
        lines.append(f"| {titles[s]} | " + " | ".join(cells) + f" | {growth} | {rgrowth} |")
    rss = probe_rss(runs)
    if any(rss):
        cells = [f"{v[0]} / {v[1]} MiB" if v else "–" for v in rss]
        lines.append("| fresh process RSS after 1 000 queries | " + " | ".join(cells) + " | | |")
    for title, vals in memory_rows(runs):
        cells = [f"{v >> 20} MiB" if v else "–" for v in vals]
        lines.append(f"| {title} | " + " | ".join(cells) + " | | |")
    return "\n".join(lines) + "\n"


def svg(runs):
    order, titles, table = series(runs)
    order = [s for s in order if any(v and v[0] for v in table[s])]
    sizes = [r["size"] for r in runs]
    cols, pw, ph, pad = 4, 230, 150, 46
    rows = math.ceil(len(order) / cols)
    width, height = cols * pw + 20, rows * ph + 60
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="10">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="10" y="18" font-size="13">Median cost against size (log-log): '
        "Cirrus solid, SQLite dashed</text>",
    ]
    lx0, lx1 = math.log10(sizes[0]), math.log10(sizes[-1])
    for k, s in enumerate(order):
        x0 = 10 + (k % cols) * pw + pad
        y0 = 40 + (k // cols) * ph + 14
        w, h = pw - pad - 14, ph - 44
        vals = [v for v in table[s] if v]
        ys = [x for v in vals for x in v[:2] if x]
        lo, hi = math.log10(min(ys)), math.log10(max(ys))
        if hi - lo < 1:
            mid = (hi + lo) / 2
            lo, hi = mid - 0.5, mid + 0.5
        title = titles[s] if len(titles[s]) <= 38 else titles[s][:37] + "…"
        out.append(f'<text x="{x0 - pad + 6}" y="{y0 - 4}" font-size="10" font-weight="bold">{esc(title)}</text>')
        out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#999"/>')

        def px(n):
            return x0 + (math.log10(n) - lx0) / max(1e-9, lx1 - lx0) * w

        def py(ns):
            return y0 + h - (math.log10(ns) - lo) / (hi - lo) * h

        for e in range(math.floor(lo), math.ceil(hi) + 1):
            if lo <= e <= hi:
                y = py(10**e)
                out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
                out.append(f'<text x="{x0 - 4}" y="{y + 3:.1f}" text-anchor="end">{tick(10**e)}</text>')
        for n in sizes:
            out.append(f'<text x="{px(n):.1f}" y="{y0 + h + 12}" text-anchor="middle">{size_label(n)}</text>')
        for idx, (color, dash) in enumerate([("#1f6fd1", ""), ("#d1581f", ' stroke-dasharray="4 3"')]):
            pts = [(px(n), py(v[idx])) for n, v in zip(sizes, table[s]) if v and v[idx]]
            if len(pts) > 1:
                d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
                out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>')
            for x, y in pts:
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.2" fill="{color}"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="qbench --json reports, one per size")
    ap.add_argument("--markdown", help="write the table here (default: standard output)")
    ap.add_argument("--svg", help="write the plot here")
    a = ap.parse_args()
    runs = load(a.runs)
    if len({r["size"] for r in runs}) != len(runs):
        sys.exit("scaling.py: give one run per size")
    table = markdown(runs)
    if a.markdown:
        with open(a.markdown, "w", encoding="utf-8") as f:
            f.write(table)
    else:
        sys.stdout.write(table)
    if a.svg:
        with open(a.svg, "w", encoding="utf-8") as f:
            f.write(svg(runs))


if __name__ == "__main__":
    main()
