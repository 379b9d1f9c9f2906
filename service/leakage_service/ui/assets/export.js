// Taking things away: every chart as SVG (its styles written into the file, so that it looks
// the same anywhere) and PNG (the SVG drawn on a canvas at twice its size), every table as
// CSV. decorate() adds the buttons to whatever the page draws, once per chart or table.

const NS = "http://www.w3.org/2000/svg";
const STYLED = ["fill", "stroke", "stroke-width", "stroke-dasharray", "opacity", "font-size", "font-family", "font-weight", "text-anchor"];

// The chart as a standalone SVG document (text).
export function svgText(svg) {
  const copy = svg.cloneNode(true);
  const from = [svg, ...svg.querySelectorAll("*")];
  const to = [copy, ...copy.querySelectorAll("*")];
  from.forEach((node, i) => {
    const cs = getComputedStyle(node);
    const out = to[i];
    out.removeAttribute("tabindex");
    out.removeAttribute("data-tip");
    out.setAttribute("style", STYLED.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(";"));
  });
  const box = svg.viewBox.baseVal;
  copy.setAttribute("xmlns", NS);
  copy.setAttribute("width", box.width);
  copy.setAttribute("height", box.height);
  const bg = document.createElementNS(NS, "rect");
  for (const [k, v] of Object.entries({ x: 0, y: 0, width: box.width, height: box.height, fill: "#fff" })) bg.setAttribute(k, v);
  copy.insertBefore(bg, copy.firstChild);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(copy)}\n`;
}

export function svgBlob(svg) {
  return new Blob([svgText(svg)], { type: "image/svg+xml" });
}

// The chart as a PNG, at `scale` times its size in CSS pixels.
export function pngBlob(svg, scale = 2) {
  const box = svg.viewBox.baseVal;
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.round(box.width * scale);
      canvas.height = Math.round(box.height * scale);
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the browser could not draw the PNG"))), "image/png");
    };
    img.onerror = () => reject(new Error("the browser could not read the chart as an image"));
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgText(svg))}`;
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

function button(format, what, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "export";
  b.dataset.format = format;
  b.textContent = format.toUpperCase();
  b.setAttribute("aria-label", `Download ${what} as ${format.toUpperCase()}`);
  b.addEventListener("click", onClick);
  return b;
}

const slug = (s) => (s || "chart").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "chart";

// Export buttons on every drawn chart (an svg in a figure) and table, added once each.
export function decorate(root = document) {
  for (const fig of root.querySelectorAll("figure")) {
    const svg = fig.querySelector("svg");
    const cap = fig.querySelector("figcaption");
    if (!svg || !cap) continue;
    let box = fig.querySelector(":scope > .exports, :scope > figcaption > .exports");
    if (!box) {
      box = document.createElement("span");
      box.className = "exports";
      const name = () => slug(svg.id || cap.firstChild?.textContent);
      const what = () => (cap.firstChild ? cap.firstChild.textContent : "the chart");
      box.append(
        button("png", what(), async () => saveBlob(await pngBlob(svg), `${name()}.png`)),
        button("svg", what(), () => saveBlob(svgBlob(svg), `${name()}.svg`)),
      );
      cap.append(box);
    }
    box.hidden = !svg.firstChild;
    box.dataset.for = svg.id || "";
  }
  for (const table of root.querySelectorAll("main table")) {
    const holder = table.closest(".scroll") || table;
    const prev = holder.previousElementSibling;
    if (prev && prev.classList.contains("exports") && prev.__table === table) {
      prev.hidden = !table.rows.length;
      continue;
    }
    const box = document.createElement("span");
    box.className = "exports";
    box.__table = table;
    const name = () => slug(table.id || (table.caption && table.caption.textContent) || "table");
    box.append(button("csv", table.caption ? table.caption.textContent : "the table", () => saveBlob(csvBlob(table), `${name()}.csv`)));
    box.dataset.for = table.id || "";
    box.hidden = !table.rows.length;
    holder.before(box);
  }
}
