// Taking things away: every chart as SVG (its styles written into the file, so that it looks
// the same anywhere) and PNG (the SVG drawn on a canvas at twice its size), every table as
// CSV. decorate() adds the buttons to whatever the page draws, once per chart or table.

const NS = "http://www.w3.org/2000/svg";
// written as presentation attributes, not a style attribute: the page's CSP (style-src
// 'self') refuses inline styles, and setting one logged a violation per element
const STYLED = ["fill", "stroke", "stroke-width", "stroke-dasharray", "opacity", "fill-opacity", "font-size", "font-family", "font-weight", "text-anchor"];
// what the page's own scripts and tooltips use, of no meaning in a file
const DROPPED = new Set(["style", "tabindex", "role", "class", "id"]);

const esc = (v) => String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

// One element of the chart (and its children) as XML text, with its computed style.
function nodeXml(node, out) {
  if (node.nodeType === Node.TEXT_NODE) { out.push(esc(node.textContent)); return; }
  if (node.nodeType !== Node.ELEMENT_NODE) return;
  const attrs = [];
  for (const a of node.attributes) {
    if (DROPPED.has(a.name) || a.name.startsWith("data-") || a.name.startsWith("aria-") || STYLED.includes(a.name)) continue;
    attrs.push(`${a.name}="${esc(a.value)}"`);
  }
  const cs = getComputedStyle(node);
  for (const p of STYLED) {
    const v = cs.getPropertyValue(p);
    if (v) attrs.push(`${p}="${esc(v)}"`);
  }
  out.push(`<${node.localName}${attrs.length ? " " : ""}${attrs.join(" ")}>`);
  for (const c of node.childNodes) nodeXml(c, out);
  out.push(`</${node.localName}>`);
}

// The lines of `text` at most `max` characters long (broken at spaces).
function wrap(text, max) {
  const lines = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > max) { lines.push(line); line = word; }
    else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

// The series a line chart drew without a legend of its own (the page's check boxes are the
// curves' legend): a file needs one.
function legendOf(svg) {
  const opts = svg.__chart;
  if (!opts || opts.legend !== false) return [];
  return opts.series.filter((s) => s.points.length).map((s) => ({ name: s.name, colour: s.colour, dash: s.dash }));
}

// The chart as a standalone SVG document (text): its title (the figure's caption) above it,
// and under it a legend of its series where the page shows that legend outside the chart.
export function svgText(svg, title = "") {
  const box = svg.viewBox.baseVal;
  const W = box.width;
  const fs = parseFloat(getComputedStyle(svg).fontSize) || 12;
  const family = getComputedStyle(svg).fontFamily;
  const titleLines = wrap(title, Math.max(20, Math.floor(W / (0.6 * fs * 1.15))));
  const top = titleLines.length ? titleLines.length * 1.5 * fs + 0.6 * fs : 0;
  const legend = legendOf(svg);
  const H = top + box.height + (legend.length ? legend.length * 1.4 * fs + 0.6 * fs : 0);
  const out = [`<svg xmlns="${NS}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="${esc(family)}" font-size="${fs}px">`];
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#fff"/>`);
  titleLines.forEach((line, i) => {
    out.push(`<text x="${fs}" y="${(i + 1) * 1.5 * fs}" font-size="${1.15 * fs}px" font-weight="600" fill="#1b1f24">${esc(line)}</text>`);
  });
  out.push(`<g transform="translate(0 ${top})">`);
  const inner = [];
  for (const c of svg.childNodes) nodeXml(c, inner);
  out.push(inner.join(""));
  out.push("</g>");
  legend.forEach((s, i) => {
    const y = top + box.height + 0.6 * fs + (i + 1) * 1.4 * fs;
    const dash = s.dash ? ` stroke-dasharray="${esc(s.dash)}"` : "";
    out.push(`<line x1="${fs}" x2="${2.5 * fs}" y1="${y - 0.35 * fs}" y2="${y - 0.35 * fs}" stroke="${esc(s.colour)}" stroke-width="3"${dash}/>`);
    out.push(`<text x="${3 * fs}" y="${y}" fill="#1b1f24">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return `<?xml version="1.0" encoding="UTF-8"?>\n${out.join("")}\n`;
}

export function svgBlob(svg, title) {
  return new Blob([svgText(svg, title)], { type: "image/svg+xml" });
}

// The chart as a PNG, at `scale` times its size in CSS pixels.
export function pngBlob(svg, title, scale = 2) {
  const text = svgText(svg, title);
  const [, w, h] = /width="([\d.]+)" height="([\d.]+)"/.exec(text);
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.round(Number(w) * scale);
      canvas.height = Math.round(Number(h) * scale);
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the browser could not draw the PNG"))), "image/png");
    };
    img.onerror = () => reject(new Error("the browser could not read the chart as an image"));
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  });
}

const quote = (v) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

// A table as CSV (RFC 4180): its header and body rows, each cell's text.
export function tableCsv(table) {
  const rows = [...table.querySelectorAll("tr")].filter((tr) => !tr.hidden);
  return rows.map((tr) => [...tr.children].map((c) => quote((c.dataset.csv ?? c.textContent).trim())).join(",")).join("\r\n") + "\r\n";
}

export function csvBlob(table) {
  return new Blob([tableCsv(table)], { type: "text/csv;charset=utf-8" });
}

export function saveBlob(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

function button(format, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "export";
  b.dataset.format = format;
  b.textContent = format.toUpperCase();
  b.addEventListener("click", onClick);
  return b;
}

// The buttons' names: what they download, as it is now.
function label(box, what) {
  for (const b of box.querySelectorAll("button")) b.setAttribute("aria-label", `Download ${what} as ${b.dataset.format.toUpperCase()}`);
}

const slug = (s) => (s || "chart").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "chart";

// Export buttons on every drawn chart (an svg in a figure) and table, added once each; their
// labels say what they download now (a caption that changed since, a new comparison).
export function decorate(root = document) {
  for (const fig of root.querySelectorAll("figure")) {
    const svg = fig.querySelector("svg");
    const cap = fig.querySelector("figcaption");
    if (!svg || !cap) continue;
    const what = () => (cap.firstChild && cap.firstChild.nodeType === Node.TEXT_NODE ? cap.firstChild.textContent.trim() : "the chart");
    let box = fig.querySelector(":scope > .exports, :scope > figcaption > .exports");
    if (!box) {
      box = document.createElement("span");
      box.className = "exports";
      const name = () => slug(svg.id || what());
      box.append(
        button("png", async () => saveBlob(await pngBlob(svg, what()), `${name()}.png`)),
        button("svg", () => saveBlob(svgBlob(svg, what()), `${name()}.svg`)),
      );
      cap.append(box);
    }
    label(box, what());
    box.hidden = !svg.firstChild;
    box.dataset.for = svg.id || "";
  }
  for (const table of root.querySelectorAll("main table")) {
    const holder = table.closest(".scroll") || table;
    const what = table.caption ? table.caption.textContent : "the table";
    const prev = holder.previousElementSibling;
    if (prev && prev.classList.contains("exports") && prev.__table === table) {
      prev.hidden = !table.rows.length;
      label(prev, what);
      continue;
    }
    const box = document.createElement("span");
    box.className = "exports";
    box.__table = table;
    const name = () => slug(table.id || (table.caption && table.caption.textContent) || "table");
    box.append(button("csv", () => saveBlob(csvBlob(table), `${name()}.csv`)));
    label(box, what);
    box.dataset.for = table.id || "";
    box.hidden = !table.rows.length;
    holder.before(box);
  }
}
