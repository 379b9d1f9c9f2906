// Hand-drawn SVG: a heat map (rows x columns of probabilities, numbers printed in the cells,
// focusable cells moved through with the arrow keys) and line charts (points, optional
// interval bands). Tooltips: any element with data-tip (see app.js).

const NS = "http://www.w3.org/2000/svg";

export function el(name, attrs = {}, parent = null, text = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

export function clear(svg) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
}

// ColorBrewer "Blues", light to dark; interpolated in sRGB.
const STOPS = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"];
const RGB = STOPS.map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));

export function colour(p) {
  const x = Math.max(0, Math.min(1, Math.sqrt(p))) * (RGB.length - 1); // sqrt: small p still visible
  const i = Math.min(RGB.length - 2, Math.floor(x));
  const f = x - i;
  return RGB[i].map((c, k) => Math.round(c + f * (RGB[i + 1][k] - c)));
}

function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

// Black or white text, whichever contrasts more with the background (>= 4.58:1 always).
export function inkFor(rgb) {
  const l = luminance(rgb);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff";
}

export function pct(p) {
  if (p === null || p === undefined || Number.isNaN(p)) return "–";
  const v = p * 100;
  if (v > 0 && v < 1) return "<1";
  return String(Math.round(v));
}

export const fmt = (x, d = 3) => (x === null || x === undefined || Number.isNaN(x) ? "–" : Number(x).toFixed(d));

// rows: [{label, title, cls}], cols: [name], value(r, c) -> p, marked: Set of column indices,
// attrs(r, c) -> extra data attributes, tip(r, c) -> tooltip text.
export function heatmap(svg, { rows, cols, value, marked, attrs, tip, label }) {
  clear(svg);
  const cw = 40, ch = 26, left = 190, top = 96;
  const width = left + cols.length * cw + 10, height = top + rows.length * ch + 6;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const head = el("g", { role: "row" }, svg); // the grid's first row: the column headers
  el("text", { x: left - 6, y: top - 6, "text-anchor": "end", class: "muted", role: "columnheader" }, head, "after turn");
  cols.forEach((name, c) => {
    const x = left + c * cw + cw / 2, sec = marked.has(c);
    const t = el("text", { x, y: top - 6, transform: `rotate(-50 ${x} ${top - 6})`, class: sec ? "col-label secret" : "col-label", role: "columnheader" }, head, (sec ? "★ " : "") + name);
    if (sec) t.setAttribute("aria-label", `${name} (the secret)`);
  });
  rows.forEach((row, r) => {
    const g = el("g", { role: "row" }, svg);
    const y = top + r * ch;
    const lab = el("text", { x: left - 6, y: y + ch / 2 + 4, "text-anchor": "end", class: `row-label ${row.cls || ""}`.trim(), role: "rowheader" }, g, row.label);
    if (row.title) el("title", {}, lab, row.title);
    cols.forEach((name, c) => {
      const p = value(r, c);
      const rgb = colour(p || 0);
      const rect = el("rect", {
        x: left + c * cw, y, width: cw - 1, height: ch - 1,
        fill: `rgb(${rgb.join(",")})`, class: marked.has(c) ? "cell secret" : "cell",
        tabindex: r === 0 && c === 0 ? "0" : "-1", role: "gridcell",
        "data-row": r, "data-col": c, "data-p": p, "data-tip": tip(r, c),
        "aria-label": `${label(r, c)}: ${fmt(p)}`,
        ...attrs(r, c),
      }, g);
      rect.dataset.candidate = rect.dataset.candidate || name;
      el("text", { x: left + c * cw + (cw - 1) / 2, y: y + ch / 2 + 3.5, "text-anchor": "middle", class: "cell-label", fill: inkFor(rgb), "aria-hidden": "true" }, g, pct(p));
    });
  });
  marked.forEach((c) => el("rect", { x: left + c * cw - 1, y: top - 1, width: cw + 1, height: rows.length * ch + 1, class: "secret-col" }, svg));
  svg.onkeydown = (e) => moveFocus(svg, e, rows.length, cols.length);
}

function moveFocus(svg, e, nr, nc) {
  const cell = e.target.closest && e.target.closest("rect.cell");
  if (!cell) return;
  let r = Number(cell.dataset.row), c = Number(cell.dataset.col);
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  if (e.key in moves) {
    r = Math.max(0, Math.min(nr - 1, r + moves[e.key][0]));
    c = Math.max(0, Math.min(nc - 1, c + moves[e.key][1]));
  } else if (e.key === "Home") c = 0;
  else if (e.key === "End") c = nc - 1;
  else return;
  e.preventDefault();
  const next = svg.querySelector(`rect.cell[data-row="${r}"][data-col="${c}"]`);
  if (!next) return;
  cell.setAttribute("tabindex", "-1");
  next.setAttribute("tabindex", "0");
  next.focus();
}

// A round step (1, 2, 2.5 or 5 times a power of ten) at least `raw`.
function niceStep(raw) {
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw);
}

// A line chart. series: [{name, colour, points: [{x, y, low, high, tip, data}]}]
// Options: xLabel, yLabel, yMin, yMax, ref (a dashed reference line at y), onPoint(point, series),
// legend (drawn in the corner when there are several series; default true).
export function lineChart(svg, { series, xLabel, yLabel, yMin = 0, yMax, ref, onPoint, xs, legend = true }) {
  clear(svg);
  const W = 460, H = 250, L = 48, R = 12, T = 12, B = 40;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", "100%");
  svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
  const all = series.flatMap((s) => s.points);
  const xVals = xs || [...new Set(all.map((p) => p.x))].sort((a, b) => a - b);
  const x0 = Math.min(...xVals, 0), x1 = Math.max(...xVals, 1);
  const top = yMax ?? Math.max(1e-9, ...all.map((p) => p.high ?? p.y), ref ?? 0) * 1.05;
  const sx0 = (x) => L + ((x - x0) / (x1 - x0 || 1)) * (W - L - R);
  const sy = (y) => T + (1 - (y - yMin) / (top - yMin || 1)) * (H - T - B);
  const tick = niceStep((top - yMin) / 5);
  for (let v = yMin; v <= top + 1e-9; v += tick) {
    el("line", { x1: L, x2: W - R, y1: sy(v), y2: sy(v), class: "grid" }, svg);
    el("text", { x: L - 4, y: sy(v) + 4, "text-anchor": "end", class: "muted" }, svg, String(+v.toFixed(3)));
  }
  el("line", { x1: L, x2: W - R, y1: sy(yMin), y2: sy(yMin), class: "axis" }, svg);
  const step = Math.max(1, Math.ceil(xVals.length / 16));
  xVals.forEach((x, i) => {
    if (i % step === 0) el("text", { x: sx0(x), y: H - B + 14, "text-anchor": "middle", class: "muted" }, svg, String(x));
  });
  el("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, svg, xLabel);
  el("text", { x: 12, y: (T + H - B) / 2, transform: `rotate(-90 12 ${(T + H - B) / 2})`, "text-anchor": "middle" }, svg, yLabel);
  if (ref !== undefined && ref !== null) el("line", { x1: L, x2: W - R, y1: sy(ref), y2: sy(ref), class: "prior" }, svg);
  if (legend && series.length > 1) {
    series.forEach((s, i) => {
      const y = T + 4 + i * 15;
      el("line", { x1: W - R - 120, x2: W - R - 104, y1: y, y2: y, stroke: s.colour, "stroke-width": 3 }, svg);
      el("text", { x: W - R - 100, y: y + 4 }, svg, s.name.length > 18 ? `${s.name.slice(0, 17)}…` : s.name);
    });
  }
  // Series side by side at one x (dodged) so that equal values do not hide each other's points.
  const gap = (W - L - R) / Math.max(1, xVals.length - 1);
  const dodge = series.length > 1 ? Math.min(10, (gap * 0.7) / (series.length - 1)) : 0;
  for (const [k, s] of series.entries()) {
    const off = (k - (series.length - 1) / 2) * dodge;
    const sx = (x) => sx0(x) + off;
    const pts = s.points.filter((p) => p.y !== null && p.y !== undefined && !Number.isNaN(p.y));
    const banded = pts.filter((p) => p.low !== undefined && p.low !== null);
    if (banded.length > 1) {
      const upper = banded.map((p) => `${sx(p.x)},${sy(p.high)}`);
      const lower = banded.slice().reverse().map((p) => `${sx(p.x)},${sy(p.low)}`);
      el("path", { d: `M${upper.join("L")}L${lower.join("L")}Z`, class: "band", fill: s.colour }, svg);
    }
    if (pts.length > 1) el("path", { d: "M" + pts.map((p) => `${sx(p.x)},${sy(p.y)}`).join("L"), class: "series", stroke: s.colour }, svg);
    for (const p of pts) {
      const c = el("circle", {
        cx: sx(p.x), cy: sy(p.y), r: 4.5, class: `point ${p.cls || ""}`.trim(), tabindex: "0",
        "data-tip": p.tip, "aria-label": p.tip, role: onPoint ? "button" : "img", ...(p.data || {}),
      }, svg);
      c.style.fill = p.cls ? "" : s.colour;
      if (onPoint) {
        c.addEventListener("click", () => onPoint(p, s));
        c.addEventListener("keydown", (e) => {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onPoint(p, s); }
        });
      }
    }
  }
}

// Colours for series and groups, each at least 3:1 on white (WCAG's figure for graphics):
// Okabe-Ito's first four (told apart in colour-blind vision), then darker ones.
export const PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#6a3d9a", "#7a5c00", "#000000", "#b8006b"];
