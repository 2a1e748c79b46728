#!/usr/bin/env python3
"""Paper 004's figures from the time series of bench/dca_results (Python 3 standard library):

    plot_004.py SERIES_DIR OUT_DIR MODEL...

writes OUT_DIR/MODEL-motion.svg (004 Figs 5 and 9: the joint coordinates, dca beside nullspace),
MODEL-errors.svg (Figs 6 and 10: position, velocity and acceleration constraint errors, dca with
and without its projections, lagrange-dense's loop rows beside them) and MODEL-energy.svg (Figs 7
and 11: kinetic, potential and total energy, dca with and without projections)."""
import csv
import math
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]


def read(path):
    with open(path) as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]  # the CLI's last line: how the run ended
    head, data = rows[0], [[float(v) for v in r] for r in rows[1:]]
    return {name: [r[k] for r in data] for k, name in enumerate(head)}


def panels_svg(path, title, panels, width=760, panel_height=220):
    """panels: list of (ylabel, log, [(label, xs, ys, dashed, colour_index)]); shared time axis."""
    left, right, top, gap, bottom = 80, 200, 40, 30, 45
    height = top + len(panels) * panel_height + (len(panels) - 1) * gap + bottom
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{(left + width - right) / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>']
    x1 = max(max(xs) for _, _, lines in panels for _, xs, _, _, _ in lines)
    for p, (ylabel, log, lines) in enumerate(panels):
        y_top = top + p * (panel_height + gap)
        y_bottom = y_top + panel_height

        def val(y):
            return math.log10(max(y, 1e-17)) if log else y

        ys = [val(y) for _, _, yv, _, _ in lines for y in yv]
        lo, hi = min(ys), max(ys)
        if log:
            lo, hi = math.floor(lo), math.ceil(hi)
        if hi - lo < 1e-12:
            lo, hi = lo - 1, hi + 1
        if not log:
            pad = 0.05 * (hi - lo)
            lo, hi = lo - pad, hi + pad

        def px(x):
            return left + x / x1 * (width - left - right)

        def py(y):
            return y_bottom - (val(y) - lo) / (hi - lo) * panel_height

        ticks = range(int(lo), int(hi) + 1, max(1, (int(hi) - int(lo)) // 6)) if log else \
            [lo + (hi - lo) * k / 4 for k in range(5)]
        for t in ticks:
            y = y_bottom - (t - lo) / (hi - lo) * panel_height
            text = f"1e{t}" if log else f"{t:.3g}"
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>'
                       f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{text}</text>')
        for k in range(0, int(round(x1)) + 1):
            x = px(k)
            out.append(f'<line x1="{x:.1f}" y1="{y_top}" x2="{x:.1f}" y2="{y_bottom}" stroke="#eee"/>')
            if p == len(panels) - 1:
                out.append(f'<text x="{x:.1f}" y="{y_bottom + 16}" text-anchor="middle">{k}</text>')
        out.append(f'<rect x="{left}" y="{y_top}" width="{width - left - right}" height="{panel_height}" '
                   f'fill="none" stroke="#888"/>')
        mid = (y_top + y_bottom) / 2
        out.append(f'<text x="16" y="{mid}" text-anchor="middle" transform="rotate(-90 16 {mid})">{ylabel}</text>')
        for i, (label, xs, yv, dashed, colour) in enumerate(lines):
            dash = ' stroke-dasharray="6,4"' if dashed else ""
            pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, yv))
            c = COLOURS[colour % len(COLOURS)]
            out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="1.5"{dash}/>')
            ly = y_top + 14 + 16 * i
            out.append(f'<line x1="{width - right + 10}" y1="{ly}" x2="{width - right + 36}" y2="{ly}" stroke="{c}" '
                       f'stroke-width="2"{dash}/><text x="{width - right + 42}" y="{ly + 4}">{label}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 10}" text-anchor="middle">t [s]</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    series, out_dir, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    for model in models:
        dca = read(f"{series}/{model}.dca.csv")
        bare = read(f"{series}/{model}.dca__no_projections.csv")
        dense = read(f"{series}/{model}.lagrange-dense.csv")
        other = read(f"{series}/{model}.nullspace.csv")
        t = dca["t"]
        coords = [c for c in dca if c.startswith("q.")]
        lines = []
        for k, c in enumerate(coords):
            lines.append((f"{c} dca", t, dca[c], False, k))
            lines.append((f"{c} nullspace", other["t"], other[c], True, k))
        panels_svg(f"{out_dir}/{model}-motion.svg", f"{model}: joint coordinates [rad] (004 Fig. 5/9)",
                   [("q [rad]", False, lines)], panel_height=320)
        panels = []
        for name, unit in [("position_error", "max |Φ|"), ("velocity_error", "max |dΦ/dt|"),
                           ("acceleration_error", "max |d²Φ/dt² + 2μΩ dΦ/dt + Ω²Φ|")]:
            lines = [("dca", t, dca[name], False, 0), ("dca, no projections", bare["t"], bare[name], False, 1)]
            if name in dense:
                lines.append(("lagrange-dense", dense["t"], dense[name], True, 2))
            panels.append((unit, True, lines))
        panels_svg(f"{out_dir}/{model}-errors.svg", f"{model}: constraint errors (004 Fig. 6/10)", panels)
        lines = []
        for k, (name, label) in enumerate([("kinetic", "kinetic"), ("potential", "potential"), ("total", "total")]):
            lines.append((f"{label}, dca", t, dca[name], False, k))
            lines.append((f"{label}, no proj.", bare["t"], bare[name], True, k))
        panels_svg(f"{out_dir}/{model}-energy.svg", f"{model}: energy [J] (004 Fig. 7/11)", [("E [J]", False, lines)],
                   panel_height=320)
        total = [(f"total, dca", t, [e - dca["total"][0] for e in dca["total"]], False, 2),
                 (f"total, no proj.", bare["t"], [e - bare["total"][0] for e in bare["total"]], True, 2)]
        panels_svg(f"{out_dir}/{model}-energy-change.svg", f"{model}: total energy change E − E0 [J]",
                   [("E − E0 [J]", False, total)], panel_height=220)


if __name__ == "__main__":
    main()
