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
  const u = fontPx(svg) / 12; // the geometry follows the text's size (rem: the browser's)
  const cw = 40 * u, ch = 26 * u, left = 190 * u, top = 96 * u;
  // the column labels lean right (50°), the last ones past the grid: room for them (about
  // 0.6 em a character, the star included), or a long last name is cut at the map's edge
  const lean = Math.max(0, ...cols.map((name, c) => (c + 0.5 - cols.length) * cw + 0.64 * 0.6 * 12 * u * (name.length + 2)));
  const width = left + cols.length * cw + Math.max(10, lean), height = top + rows.length * ch + 6;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const head = el("g", { role: "row" }, svg); // the grid's first row: the column headers
  el("text", { x: left - 6, y: top - 6 * u, "text-anchor": "end", class: "muted", role: "columnheader" }, head, "after turn");
  cols.forEach((name, c) => {
    const x = left + c * cw + cw / 2, sec = marked.has(c);
    const t = el("text", { x, y: top - 6 * u, transform: `rotate(-50 ${x} ${top - 6 * u})`, class: sec ? "col-label secret" : "col-label", role: "columnheader" }, head, (sec ? "★ " : "") + name);
    if (sec) t.setAttribute("aria-label", `${name} (the secret)`);
  });
  rows.forEach((row, r) => {
    const g = el("g", { role: "row" }, svg);
    const y = top + r * ch;
    const lab = el("text", { x: left - 6 * u, y: y + ch / 2 + 4 * u, "text-anchor": "end", class: `row-label ${row.cls || ""}`.trim(), role: "rowheader" }, g, row.label);
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
      el("text", { x: left + c * cw + (cw - 1) / 2, y: y + ch / 2 + 3.5 * u, "text-anchor": "middle", class: "cell-label", fill: inkFor(rgb), "aria-hidden": "true" }, g, pct(p));
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

// The chart text's size in CSS pixels: the style sheet sets it in rem, so it follows the
// browser's font size; the charts' geometry is measured in it.
export function fontPx(svg) {
  return parseFloat(getComputedStyle(svg).fontSize) || 12;
}

// A line chart, drawn at its container's width in CSS pixels (no scaling of the text), again
// when that width changes. series: [{name, colour, dash, points: [{x, y, low, high, tip, data}]}]
// Options: xLabel, yLabel, yMin, yMax, ref (a dashed reference line at y), onPoint(point, series),
// legend (drawn under the plot when there are several series; default true).
// Keyboard: one tab stop per chart; Left/Right move along a series, Up/Down to another one,
// Home/End to its first/last point; Enter or Space opens a point (onPoint).
export function lineChart(svg, opts) {
  svg.__chart = opts;
  if (!svg.__observer && typeof ResizeObserver !== "undefined") {
    let width = 0;
    svg.__observer = new ResizeObserver(() => {
      const w = Math.round(svg.parentNode ? svg.parentNode.clientWidth : 0);
      if (w && Math.abs(w - width) > 2 && svg.__chart) { width = w; draw(svg, svg.__chart); }
    });
    if (svg.parentNode) svg.__observer.observe(svg.parentNode);
  }
  draw(svg, opts);
}

function draw(svg, { series, xLabel, yLabel, yMin = 0, yMax, ref, onPoint, xs, legend = true }) {
  const had = document.activeElement && svg.contains(document.activeElement) ? document.activeElement : null;
  const was = had ? { s: had.dataset.series, i: had.dataset.index } : svg.__focus || null;
  clear(svg);
  const fs = fontPx(svg);
  const W = Math.max(16 * fs, Math.round((svg.parentNode && svg.parentNode.clientWidth) || 460));
  const L = 4 * fs, R = 1 * fs, T = 1 * fs, plotH = Math.max(11 * fs, W * 0.42);
  const legendRows = legend && series.length > 1 ? series : [];
  const H = T + plotH + 3.2 * fs + legendRows.length * 1.4 * fs;
  const B0 = T + plotH; // the x axis
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const all = series.flatMap((s) => s.points);
  const xVals = xs || [...new Set(all.map((p) => p.x))].sort((a, b) => a - b);
  const x0 = Math.min(...xVals, 0), x1 = Math.max(...xVals, 1);
  // the y axis ends on a round tick, which is labelled
  const raw = yMax ?? Math.max(1e-9, ...all.map((p) => p.high ?? p.y), ref ?? 0) * 1.05;
  const tick = niceStep((raw - yMin) / 5);
  const top = yMin + Math.ceil((raw - yMin) / tick - 1e-9) * tick;
  // series side by side at one x (dodged) so that equal values do not hide each other's
  // points, inside the axis: the plot is inset by the widest offset
  const span = W - L - R;
  const gap0 = span / Math.max(1, xVals.length - 1);
  const dodge = series.length > 1 ? Math.min(0.8 * fs, (gap0 * 0.6) / (series.length - 1)) : 0;
  const inset = (dodge * (series.length - 1)) / 2 + 0.5 * fs;
  const sx0 = (x) => L + inset + ((x - x0) / (x1 - x0 || 1)) * (span - 2 * inset);
  const sy = (y) => T + (1 - (y - yMin) / (top - yMin || 1)) * plotH;
  for (let k = 0; yMin + k * tick <= top + tick * 1e-6; k++) {
    const v = yMin + k * tick;
    el("line", { x1: L, x2: W - R, y1: sy(v), y2: sy(v), class: "grid" }, svg);
    el("text", { x: L - 0.3 * fs, y: sy(v) + 0.35 * fs, "text-anchor": "end", class: "muted tick" }, svg, String(+v.toFixed(3)));
  }
  el("line", { x1: L, x2: W - R, y1: sy(yMin), y2: sy(yMin), class: "axis" }, svg);
  const step = Math.max(1, Math.ceil(xVals.length / Math.max(2, Math.floor(span / (2.5 * fs)))));
  xVals.forEach((x, i) => {
    if (i % step === 0) el("text", { x: sx0(x), y: B0 + 1.2 * fs, "text-anchor": "middle", class: "muted" }, svg, String(x));
  });
  el("text", { x: (L + W - R) / 2, y: B0 + 2.5 * fs, "text-anchor": "middle" }, svg, xLabel);
  const yc = T + plotH / 2;
  el("text", { x: fs, y: yc, transform: `rotate(-90 ${fs} ${yc})`, "text-anchor": "middle" }, svg, yLabel);
  if (ref !== undefined && ref !== null) el("line", { x1: L, x2: W - R, y1: sy(ref), y2: sy(ref), class: "prior" }, svg);
  // the legend under the plot, never over the data
  legendRows.forEach((s, i) => {
    const y = B0 + 3.4 * fs + i * 1.4 * fs;
    el("line", { x1: L, x2: L + 1.5 * fs, y1: y - 0.35 * fs, y2: y - 0.35 * fs, stroke: s.colour, "stroke-width": 3, "stroke-dasharray": s.dash }, svg);
    el("text", { x: L + 2 * fs, y, class: "legend-label" }, svg, s.name);
  });
  const points = [];
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
    if (pts.length > 1) el("path", { d: "M" + pts.map((p) => `${sx(p.x)},${sy(p.y)}`).join("L"), class: "series", stroke: s.colour, "stroke-dasharray": s.dash }, svg);
    const row = pts.map((p, i) => {
      const c = el("circle", {
        cx: sx(p.x), cy: sy(p.y), r: 0.38 * fs, class: `point ${p.cls || ""}`.trim(), tabindex: "-1",
        "data-tip": p.tip, "aria-label": p.tip, role: onPoint ? "button" : "img",
        "data-series": k, "data-index": i, ...(p.data || {}),
      }, svg);
      c.style.fill = p.cls ? "" : s.colour;
      if (onPoint) c.addEventListener("click", () => onPoint(p, s));
      c.__point = [p, s];
      return c;
    });
    if (row.length) points.push(row);
  }
  // one tab stop: the point focused before this drawing, else the first
  const find = (w) => w && points[w.s] && points[w.s][w.i] ? points[w.s][w.i] : null;
  const keep = find(was && { s: Number(was.s), i: Number(was.i) });
  const first = keep || (points[0] && points[0][0]);
  if (first) first.setAttribute("tabindex", "0");
  if (keep && had) keep.focus();
  svg.onkeydown = (e) => {
    const c = e.target.closest && e.target.closest("circle.point");
    if (!c) return;
    let s = Number(c.dataset.series), i = Number(c.dataset.index);
    const rowOf = (k) => points.findIndex((r) => Number(r[0].dataset.series) === k);
    let r = rowOf(s);
    if (e.key === "Enter" || e.key === " ") {
      if (onPoint) { e.preventDefault(); onPoint(...c.__point); }
      return;
    }
    if (e.key === "ArrowRight") i += 1;
    else if (e.key === "ArrowLeft") i -= 1;
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = points[r].length - 1;
    else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      r = Math.max(0, Math.min(points.length - 1, r + (e.key === "ArrowDown" ? 1 : -1)));
      // the point of the next series nearest in x
      const x = Number(c.getAttribute("cx"));
      i = points[r].reduce((b, p, j) => (Math.abs(Number(p.getAttribute("cx")) - x) < Math.abs(Number(points[r][b].getAttribute("cx")) - x) ? j : b), 0);
    } else return;
    e.preventDefault();
    const next = points[r][Math.max(0, Math.min(points[r].length - 1, i))];
    c.setAttribute("tabindex", "-1");
    next.setAttribute("tabindex", "0");
    svg.__focus = { s: next.dataset.series, i: next.dataset.index };
    next.focus();
  };
}

// Colours for series and groups, each at least 3:1 on white (WCAG's figure for graphics):
// Okabe-Ito's first four (told apart in colour-blind vision), then darker ones; past the
// twelve colours a group's line is dashed too (a colour and a dash pattern per group).
export const PALETTE = [
  "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#6a3d9a", "#7a5c00", "#000000", "#b8006b",
  "#1b7837", "#8c510a", "#5c5c5c", "#c51b7d",
];
export const DASHES = [null, "6 3", "2 3", "8 3 2 3"];

// A colour (and dash) per group name that stays the group's for as long as the page is
// open, whatever other groups come and go (a running job's groups grow as it runs): a new
// name takes the first free slot after its own hash.
const slots = new Map();
export function styleFor(name) {
  if (!slots.has(name)) {
    const taken = new Set(slots.values());
    const n = PALETTE.length * DASHES.length;
    let h = 0;
    for (const ch of name) h = (h * 31 + ch.codePointAt(0)) >>> 0;
    // every colour solid first (from the name's own), then dashed
    let k = (h % PALETTE.length) + PALETTE.length * DASHES.length; // all taken: share
    for (let i = 0; i < n; i++) {
      const c = Math.floor(i / PALETTE.length) * PALETTE.length + ((h + i) % PALETTE.length);
      if (!taken.has(c)) { k = c; break; }
    }
    slots.set(name, k);
  }
  const k = slots.get(name);
  return { colour: PALETTE[k % PALETTE.length], dash: DASHES[Math.floor(k / PALETTE.length) % DASHES.length] };
}

// The style of the k-th name of a list: the palette's colours in turn, then again dashed.
export function slotStyle(k) {
  return { colour: PALETTE[k % PALETTE.length], dash: DASHES[Math.floor(k / PALETTE.length) % DASHES.length] };
}

// A style per name, distinct within a job's views and the same in all of them: the models,
// in the order given (the app gives the models picked first, then the others, each sorted),
// take the palette in turn (a name hash would give near-equal colours to different models:
// gpt-4o and o1 had #a59327 and #a58f27); any other name (a matchup, a difficulty) the next
// free slot, in the order first asked for. Past the palette's twelve colours they repeat.
export function namedStyles(models) {
  const slots = new Map([...new Set(models)].map((m, i) => [m, i]));
  return (name) => {
    if (!slots.has(name)) slots.set(name, slots.size);
    return slotStyle(slots.get(name));
  };
}

// One tab stop for a chart's marks (the elements `marks`, in reading order): the arrow keys
// move to the previous / next one, Home / End to the first / last; the focus is kept on the
// same mark (by its data-key) when the chart is drawn again.
function focusRing(svg, marks, was) {
  if (!marks.length) { svg.onkeydown = null; return; }
  marks.forEach((m, i) => { m.setAttribute("tabindex", "-1"); m.dataset.index = i; });
  const keep = was ? marks.find((m) => m.dataset.key === was) : null;
  (keep || marks[0]).setAttribute("tabindex", "0");
  if (keep && svg.__hadFocus) keep.focus();
  svg.onkeydown = (e) => {
    const c = e.target.closest && e.target.closest("[data-key]");
    if (!c) return;
    let i = Number(c.dataset.index);
    if (e.key === "ArrowRight" || e.key === "ArrowDown") i += 1;
    else if (e.key === "ArrowLeft" || e.key === "ArrowUp") i -= 1;
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = marks.length - 1;
    else return;
    e.preventDefault();
    const next = marks[Math.max(0, Math.min(marks.length - 1, i))];
    c.setAttribute("tabindex", "-1");
    next.setAttribute("tabindex", "0");
    svg.__focus = next.dataset.key;
    next.focus();
  };
}

// Redrawn at its container's width, as lineChart is.
function sized(svg, opts, drawFn) {
  svg.__chart = opts;
  if (!svg.__observer && typeof ResizeObserver !== "undefined" && svg.parentNode) {
    let width = 0;
    svg.__observer = new ResizeObserver(() => {
      const w = Math.round(svg.parentNode ? svg.parentNode.clientWidth : 0);
      if (w && Math.abs(w - width) > 2 && svg.__chart) { width = w; drawFn(svg, svg.__chart); }
    });
    svg.__observer.observe(svg.parentNode);
  }
  drawFn(svg, opts);
}

function niceTicks(lo, hi, n = 5) {
  const tick = niceStep((hi - lo) / n || 1);
  const a = Math.floor(lo / tick + 1e-9) * tick, b = Math.ceil(hi / tick - 1e-9) * tick;
  const out = [];
  for (let v = a; v <= b + tick * 1e-6; v += tick) out.push(+v.toFixed(6));
  return out;
}

// Estimates with intervals, one row each (label above its bar, so long names fit a phone):
// rows: [{label, value, low, high, colour, dash, tip, key, data}]; a line at 0 when `zero`.
export function intervalChart(svg, opts) { sized(svg, opts, drawIntervals); }

function drawIntervals(svg, { rows, xLabel, zero = true }) {
  const was = document.activeElement && svg.contains(document.activeElement) ? document.activeElement.dataset.key : svg.__focus;
  svg.__hadFocus = document.activeElement && svg.contains(document.activeElement);
  clear(svg);
  const fs = fontPx(svg);
  const W = Math.max(16 * fs, Math.round((svg.parentNode && svg.parentNode.clientWidth) || 460));
  const L = 1 * fs, R = 1.5 * fs, T = 0.4 * fs, rowH = 2.8 * fs;
  const H = T + rows.length * rowH + 3 * fs;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const ok = rows.filter((r) => r.value !== null && r.value !== undefined);
  const vals = ok.flatMap((r) => [r.value, r.low ?? r.value, r.high ?? r.value]);
  const ticks = niceTicks(Math.min(zero ? 0 : Infinity, ...vals), Math.max(zero ? 0 : -Infinity, ...vals));
  const x0 = ticks[0], x1 = ticks[ticks.length - 1];
  const sx = (x) => L + ((x - x0) / (x1 - x0 || 1)) * (W - L - R);
  const B = T + rows.length * rowH;
  for (const v of ticks) {
    el("line", { x1: sx(v), x2: sx(v), y1: T, y2: B, class: v === 0 && zero ? "zero" : "grid" }, svg);
    el("text", { x: sx(v), y: B + 1.2 * fs, "text-anchor": "middle", class: "muted tick" }, svg, String(v));
  }
  el("text", { x: (L + W - R) / 2, y: B + 2.5 * fs, "text-anchor": "middle" }, svg, xLabel);
  const marks = [];
  rows.forEach((r, i) => {
    const y = T + i * rowH;
    // cut to the width (the whole label is in the mark's tooltip)
    const fit = Math.max(8, Math.floor((W - L - R) / (0.6 * fs)));
    const label = r.label.length > fit ? `${r.label.slice(0, fit - 1)}…` : r.label;
    el("text", { x: L, y: y + 1.0 * fs, class: "legend-label" }, svg, label);
    if (r.value === null || r.value === undefined) {
      el("text", { x: L, y: y + 2.2 * fs, class: "muted" }, svg, "no shared game");
      return;
    }
    const yb = y + 1.9 * fs;
    if (r.low !== null && r.low !== undefined) {
      el("line", { x1: sx(r.low), x2: sx(r.high), y1: yb, y2: yb, stroke: r.colour, "stroke-width": 2.5, "stroke-dasharray": r.dash, class: "interval" }, svg);
      for (const v of [r.low, r.high]) el("line", { x1: sx(v), x2: sx(v), y1: yb - 0.4 * fs, y2: yb + 0.4 * fs, stroke: r.colour, "stroke-width": 2, class: "interval" }, svg);
    }
    const c = el("circle", {
      cx: sx(r.value), cy: yb, r: 0.42 * fs, class: "point estimate", role: "img",
      "data-tip": r.tip, "aria-label": r.tip, "data-key": r.key, ...(r.data || {}),
    }, svg);
    c.style.fill = r.colour;
    marks.push(c);
  });
  focusRing(svg, marks, was);
}

// The reveal-vs-conceal plane: every clue a light dot, per group its mean with a cross of
// its two intervals, reference strategies as black diamonds with their labels, axes in bits;
// the legend under the plot. groups: [{key, name, x, xLow, xHigh, y, yLow, yHigh, colour,
// dash, hollow, tip, data}], points: [{x, y, colour}], refs: [{x, y, label, hollow, tip, key}].
export function planeChart(svg, opts) { sized(svg, opts, drawPlane); }

function drawPlane(svg, { groups, points, refs, xLabel, yLabel, xShort, yShort }) {
  const was = document.activeElement && svg.contains(document.activeElement) ? document.activeElement.dataset.key : svg.__focus;
  svg.__hadFocus = document.activeElement && svg.contains(document.activeElement);
  clear(svg);
  const fs = fontPx(svg);
  const W = Math.max(16 * fs, Math.round((svg.parentNode && svg.parentNode.clientWidth) || 460));
  const L = 4 * fs, R = 1 * fs, T = 1 * fs, plotH = Math.max(14 * fs, Math.min(W * 0.6, 34 * fs));
  // the legend: entries flowed into lines under the plot
  const entries = [
    ...groups.map((g) => ({ kind: "group", g, w: (g.name.length * 0.58 + 2.6) * fs })),
    ...(refs.length ? [{ kind: "ref", label: "◆ reference strategy (◇ chameleon's)" }] : []),
    { kind: "cloud", label: "· one clue" },
  ];
  for (const e of entries) if (!e.w) e.w = (e.label.length * 0.6 + 0.5) * fs;
  const lines = [[]];
  let used = 0;
  for (const e of entries) {
    if (used + e.w > W - L - R && lines[lines.length - 1].length) { lines.push([]); used = 0; }
    e.at = used;
    lines[lines.length - 1].push(e);
    used += e.w + fs;
  }
  const B0 = T + plotH;
  const H = B0 + 3.4 * fs + lines.length * 1.5 * fs;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const xsAll = [0, ...points.map((p) => p.x), ...groups.flatMap((g) => [g.xLow ?? g.x, g.xHigh ?? g.x]), ...refs.map((r) => r.x)];
  const ysAll = [0, ...points.map((p) => p.y), ...groups.flatMap((g) => [g.yLow ?? g.y, g.yHigh ?? g.y]), ...refs.map((r) => r.y)];
  const xt = niceTicks(Math.min(...xsAll), Math.max(...xsAll));
  const yt = niceTicks(Math.min(...ysAll), Math.max(...ysAll));
  const [x0, x1, y0, y1] = [xt[0], xt[xt.length - 1], yt[0], yt[yt.length - 1]];
  const sx = (x) => L + ((x - x0) / (x1 - x0 || 1)) * (W - L - R);
  const sy = (y) => T + (1 - (y - y0) / (y1 - y0 || 1)) * plotH;
  const xStep = Math.max(1, Math.ceil(xt.length / Math.max(2, Math.floor((W - L - R) / (3 * fs)))));
  xt.forEach((v, i) => {
    el("line", { x1: sx(v), x2: sx(v), y1: T, y2: B0, class: v === 0 ? "zero" : "grid" }, svg);
    if (i % xStep === 0) el("text", { x: sx(v), y: B0 + 1.2 * fs, "text-anchor": "middle", class: "muted tick" }, svg, String(v));
  });
  for (const v of yt) {
    el("line", { x1: L, x2: W - R, y1: sy(v), y2: sy(v), class: v === 0 ? "zero" : "grid" }, svg);
    el("text", { x: L - 0.3 * fs, y: sy(v) + 0.35 * fs, "text-anchor": "end", class: "muted tick" }, svg, String(v));
  }
  // the long axis labels where they fit, else the short ones (the caption says the rest)
  const fits = (t, room) => t.length * 0.6 * fs < room;
  el("text", { x: (L + W - R) / 2, y: B0 + 2.5 * fs, "text-anchor": "middle" }, svg, fits(xLabel, W - L - R) ? xLabel : xShort || xLabel);
  const yc = T + plotH / 2;
  el("text", { x: fs, y: yc, transform: `rotate(-90 ${fs} ${yc})`, "text-anchor": "middle" }, svg, fits(yLabel, plotH) ? yLabel : yShort || yLabel);
  const cloud = el("g", { class: "cloud", "aria-hidden": "true" }, svg);
  for (const p of points) el("circle", { cx: sx(p.x), cy: sy(p.y), r: 0.2 * fs, fill: p.colour, class: "clue" }, cloud);
  const marks = [];
  for (const g of groups) {
    const cx = sx(g.x), cy = sy(g.y);
    if (g.xLow !== null && g.xLow !== undefined) el("line", { x1: sx(g.xLow), x2: sx(g.xHigh), y1: cy, y2: cy, stroke: g.colour, "stroke-width": 2.5, "stroke-dasharray": g.dash, class: "interval" }, svg);
    if (g.yLow !== null && g.yLow !== undefined) el("line", { x1: cx, x2: cx, y1: sy(g.yLow), y2: sy(g.yHigh), stroke: g.colour, "stroke-width": 2.5, "stroke-dasharray": g.dash, class: "interval" }, svg);
    const s = 0.45 * fs;
    const m = g.hollow
      ? el("rect", { x: cx - s, y: cy - s, width: 2 * s, height: 2 * s, class: "point mean" }, svg)
      : el("circle", { cx, cy, r: s * 1.1, class: "point mean" }, svg);
    Object.entries({ role: "img", "data-tip": g.tip, "aria-label": g.tip, "data-key": g.key, ...(g.data || {}) }).forEach(([k, v]) => m.setAttribute(k, v));
    m.style.fill = g.colour;
    marks.push(m);
  }
  const placed = [];
  for (const r of refs) {
    const cx = sx(r.x), cy = sy(r.y), s = 0.55 * fs;
    const m = el("path", {
      d: `M${cx},${cy - s}L${cx + s},${cy}L${cx},${cy + s}L${cx - s},${cy}Z`,
      class: r.hollow ? "reference hollow" : "reference", role: "img",
      "data-tip": r.tip, "aria-label": r.tip, "data-key": r.key, ...(r.data || {}),
    }, svg);
    marks.push(m);
    // the label beside its mark, moved up or down past the labels placed before it
    const w = r.label.length * 0.6 * fs;
    const right = cx + w + 1.5 * fs < W - R;
    const lx = right ? cx + 0.9 * s + 0.3 * fs : cx - 0.9 * s - 0.3 * fs;
    const x0 = right ? lx : lx - w;
    const ly = [-0.5, 1.4, -1.7, 2.6, -2.9, 3.8].map((d) => cy + d * fs).find((y) => !placed.some((p) => x0 < p.x1 && p.x0 < x0 + w && Math.abs(p.y - y) < 1.1 * fs)) ?? cy - 0.5 * fs;
    placed.push({ x0, x1: x0 + w, y: ly });
    el("text", { x: lx, y: ly, "text-anchor": right ? "start" : "end", class: "ref-label" }, svg, r.label);
  }
  lines.forEach((line, i) => {
    const y = B0 + 3.6 * fs + i * 1.5 * fs;
    for (const e of line) {
      const x = L + e.at;
      if (e.kind === "group") {
        el("line", { x1: x, x2: x + 1.5 * fs, y1: y - 0.35 * fs, y2: y - 0.35 * fs, stroke: e.g.colour, "stroke-width": 3, "stroke-dasharray": e.g.dash }, svg);
        el("text", { x: x + 2 * fs, y, class: "legend-label" }, svg, e.g.name);
      } else el("text", { x, y, class: "legend-label" }, svg, e.label);
    }
  });
  // the marks in reading order: means by leakage, then the references
  focusRing(svg, marks, was);
}
