// The leaderboard, a job's first view (GET /v1/jobs/{id}/leaderboard, leakage.leaderboard/1):
// which model gives its secret away least, one table per game kind and role, each sortable by
// any column (a header is a button: click, Enter or Space), the reader that sets the lower
// bound above the tables, the rows of fewer than min_games games unranked and labelled, the
// whole leaderboard as the API's CSV. Colours: the job's own per model (styleOf, charts.js
// namedStyles), drawn as an SVG swatch's fill attribute (no inline style: the page's CSP).
// Nothing here fetches but the CSV button.

import { api } from "./api.js";
import { h } from "./dom.js";
import { saveBlob } from "./export.js";

const $ = (id) => document.getElementById(id);
const NS = "http://www.w3.org/2000/svg";
const ALL_ROLES = "(all roles, standardised)";
const GAME = { spygame: "SpyGame / CK-Arena", chameleon: "Chameleon" };

let ctx = null; // { act }
let board = null; // the leaderboard on show
let styleOf = null;
const sorts = new Map(); // table id -> { key, dir }

const fixed = (v, d = 3) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));
const pct = (v) => (v === null || v === undefined ? "–" : `${Math.round(100 * v)}%`);
const interval = (lo, hi, f) => (lo === null || lo === undefined || hi === null || hi === undefined ? "" : ` [${f(lo)}, ${f(hi)}]`);
// a figure's cell: the value, its interval smaller beside it
const figure = (text) => {
  const i = text.indexOf(" [");
  return i < 0 ? text : [text.slice(0, i), h("span", { class: "ci" }, text.slice(i))];
};
const plural = (n, one) => `${n} ${one}${n === 1 ? "" : "s"}`;

// The columns: [key, header, cell text, sort value, class]. The unit (clue or statement) is
// the result's own.
function columns(unit) {
  const units = `${unit}s`;
  return [
    ["rank", "rank", (r) => (r.rank === null ? "unranked" : String(r.rank)), (r) => r.rank, "num"],
    ["rank_interval", "rank interval", (r) => (r.rank_low === null ? "–" : r.rank_low === r.rank_high ? String(r.rank_low) : `${r.rank_low}–${r.rank_high}`), (r) => r.rank_low, "num"],
    ["model", "model", (r) => r.model, (r) => r.model, "model"],
    ["games", "games", (r) => String(r.games), (r) => r.games, "num"],
    ["clues", units, (r) => String(r.clues), (r) => r.clues, "num"],
    ["leakage_bits", `leakage (bits per ${unit}) [95% interval]`, (r) => fixed(r.leakage_bits) + interval(r.leakage_low, r.leakage_high, fixed), (r) => r.leakage_bits, "num"],
    ["reveal_bits", "reveal (bits)", (r) => fixed(r.reveal_bits) + interval(r.reveal_low, r.reveal_high, fixed), (r) => r.reveal_bits, "num"],
    ["own_word_probability", "P(own word)", (r) => fixed(r.own_word_probability) + interval(r.own_word_probability_low, r.own_word_probability_high, fixed), (r) => r.own_word_probability, "num"],
    ["win_rate", "win rate (games known)", (r) => (r.win_rate === null ? "–" : `${pct(r.win_rate)}${interval(r.win_rate_low, r.win_rate_high, pct)} (${r.games_with_outcome})`), (r) => r.win_rate, "num"],
    ["not_separable_from", "not separable from", (r) => r.not_separable_from.join("; "), (r) => r.not_separable_from.length, "long"],
  ];
}

// The rows in a table's order: ranked ones by rank, then the unranked by leakage, unless a
// header was clicked (empty values last either way).
function ordered(rows, sort) {
  const cols = columns("clue");
  const col = sort ? cols.find((c) => c[0] === sort.key) : null;
  const dir = sort ? sort.dir : 1;
  const base = (a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || (a.leakage_bits ?? Infinity) - (b.leakage_bits ?? Infinity) || a.model.localeCompare(b.model);
  return rows.slice().sort((a, b) => {
    if (!col) return base(a, b);
    const x = col[3](a), y = col[3](b);
    const none = (v) => v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v));
    if (none(x) && none(y)) return base(a, b);
    if (none(x)) return 1;
    if (none(y)) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return c * dir || base(a, b);
  });
}

// A model's swatch: its colour, crossed by a white bar when its lines are dashed (past the
// palette's twelve colours a colour comes back, dashed: the bar tells the two apart).
function swatch({ colour, dash }) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("class", "swatch-mark");
  svg.setAttribute("viewBox", "0 0 10 10");
  svg.setAttribute("aria-hidden", "true");
  const rect = document.createElementNS(NS, "rect");
  for (const [k, v] of Object.entries({ width: 10, height: 10, rx: 2, fill: colour })) rect.setAttribute(k, v);
  svg.append(rect);
  if (dash) {
    const bar = document.createElementNS(NS, "rect");
    for (const [k, v] of Object.entries({ x: 0, y: 4, width: 10, height: 2, fill: "#fff", class: "dash" })) bar.setAttribute(k, v);
    svg.append(bar);
  }
  return svg;
}

// One table's head and body, in its sort order.
function fill(table, rows, unit) {
  const sort = sorts.get(table.id) || null;
  const cols = columns(unit);
  const head = h("tr", {}, cols.map(([k, label, , , cls]) => {
    const on = sort && sort.key === k;
    const b = h("button", { type: "button", class: "sort", "data-sort": k }, label, on ? (sort.dir > 0 ? " ▲" : " ▼") : "");
    b.addEventListener("click", () => {
      const was = sorts.get(table.id);
      sorts.set(table.id, { key: k, dir: was && was.key === k ? -was.dir : 1 });
      fill(table, rows, unit);
      table.querySelector(`button[data-sort="${k}"]`).focus();
    });
    return h("th", { scope: "col", class: cls || null, "aria-sort": on ? (sort.dir > 0 ? "ascending" : "descending") : null, "data-csv": label }, b);
  }));
  const body = ordered(rows, sort).map((r) => h("tr", { class: r.rank === null ? "unranked" : null, "data-model": r.model, "data-role": r.role, "data-game": r.game },
    cols.map(([k, , text, value, cls]) => {
      const v = value(r);
      const td = h("td", { class: cls || null, "data-key": k, "data-value": typeof v === "number" ? String(v) : null, "data-csv": text(r) },
        k === "not_separable_from" ? apart(r, rows) : cls === "num" ? figure(text(r)) : text(r));
      if (k === "model") {
        td.prepend(swatch(styleOf(r.model)));
        if (r.rank === null) td.append(h("span", { class: "tag" }, ` fewer than ${board.min_games} games${r.role === ALL_ROLES ? " in a role" : ""}: unranked`));
      }
      return td;
    })));
  table.replaceChildren(...(table.caption ? [table.caption] : []), h("thead", {}, head), h("tbody", {}, body));
}

// "Not separable from", short: the models by name when few, else how many (the names in the
// tooltip, which the keyboard reaches too, and in the CSV); none: told apart from every other.
function apart(r, rows) {
  const names = r.not_separable_from;
  if (r.rank === null) return "–";
  const others = rows.filter((x) => x.rank !== null && x.model !== r.model).length;
  if (!names.length) return others ? "none (separable from all)" : "–";
  if (names.length <= 3) return names.join(", ");
  const what = names.length === others ? `all ${others} others` : `${names.length} of ${others} others`;
  return h("span", { class: "apart", tabindex: "0", "data-tip": names.join(", ") }, what);
}

const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");

// The job's leaderboard (null: none yet, with why).
export function renderLeaderboard(data, styles, why = null) {
  board = data;
  styleOf = styles;
  const box = $("leaderboard");
  box.hidden = false;
  const tables = $("leaderboard-tables");
  if (!data) {
    $("leaderboard-reader").textContent = "";
    $("leaderboard-note").textContent = why || "No leaderboard yet.";
    $("leaderboard-csv").hidden = true;
    tables.replaceChildren();
    return;
  }
  $("leaderboard-csv").hidden = false;
  $("leaderboard-reader").textContent = data.reader_note;
  $("leaderboard-note").replaceChildren(
    `${plural(data.games, "game")}; lower leakage is better. Intervals: ${Math.round(100 * data.level)}% bootstrap over games (${data.replicates} replicates). ` +
    `A rank (1 leaks least) needs ${data.min_games} games in the role; its interval is the rank's over the same replicates. ` +
    `"Not separable from": no significant difference in leakage (${data.correction}, family-wise error ${data.alpha}). ` +
    `Win rates: ${data.outcomes}.`,
    data.notes.length ? h("ul", { class: "notes" }, data.notes.map((n) => h("li", {}, n))) : null);
  const blocks = new Map();
  for (const r of data.rows) {
    const k = `${r.game}\u001f${r.role}`;
    if (!blocks.has(k)) blocks.set(k, []);
    blocks.get(k).push(r);
  }
  const out = [];
  const told = new Set(); // the game kinds whose observer is said (once, above their first table)
  for (const rows of blocks.values()) {
    const { game, role, unit } = rows[0];
    const id = `leaderboard-${slug(game)}-${slug(role)}`;
    const seen = data.observers[game] || {};
    const title = `${GAME[game] || game} · ${role === ALL_ROLES ? "all roles, standardised (each role weighted the same for every model)" : role}: ${plural(rows.length, "model")}`;
    // the title above the table's scrolled box (read whole at phone width); the caption,
    // for screen readers and the CSV's name, says the same
    const table = h("table", { id, class: "leaderboard", "data-game": game, "data-role": role }, h("caption", { class: "sr-only" }, title));
    fill(table, rows, unit);
    const say = seen.leakage && !told.has(game);
    told.add(game);
    out.push(h("div", { class: "board" },
      say ? h("p", { class: "meta" }, `${GAME[game] || game}: leakage to ${seen.leakage}.`) : null,
      h("h4", { id: `${id}-title` }, title),
      h("div", { class: "scroll" }, table)));
  }
  tables.replaceChildren(...out);
}

// Colours changed (models picked): the swatches follow, the order and sorting kept.
export function restyleLeaderboard(styles) {
  styleOf = styles;
  for (const td of document.querySelectorAll("#leaderboard-tables td[data-key='model']")) {
    const old = td.querySelector("svg.swatch-mark");
    if (old) old.replaceWith(swatch(styles(td.closest("tr").dataset.model)));
  }
}

export function initLeaderboard(context) {
  ctx = context;
  $("leaderboard-csv").addEventListener("click", () => {
    const id = ctx.job();
    const name = `leakage-leaderboard-${id}.csv`;
    ctx.act(`Downloading ${name}`, async () => {
      saveBlob(await api.leaderboardCsv(id), name);
      return `Downloaded ${name}.`;
    });
  });
}
