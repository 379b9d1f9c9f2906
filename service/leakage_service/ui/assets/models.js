// Models compared and the reveal-vs-conceal plane, in a job's view: the model and role picker
// of the curves by speaker, two models side by side with their paired difference
// (GET /v1/jobs/{id}/compare), and the plane (GET /v1/jobs/{id}/plane). Colours: one per
// model of the job (charts.js namedStyles, the same in every view of the job); the roles
// without the secret (chameleon, spy) are dashed, their marks hollow squares. Nothing here
// fetches.

import { fmt, intervalChart, planeChart } from "./charts.js";
import { h } from "./dom.js";

const $ = (id) => document.getElementById(id);
const SEP = " · ";
const NO_SECRET = new Set(["chameleon", "spy"]);
const ALL_ROLES = "(all roles)";

// A group "model · role" as [model, role] (the model's name is what precedes the first " · ",
// as the library reads it).
export function splitGroup(group) {
  const i = group.indexOf(SEP);
  return i < 0 ? [group, ""] : [group.slice(0, i), group.slice(i + SEP.length)];
}

const lacksSecret = (role) => NO_SECRET.has(String(role).trim().toLowerCase());

// The style of a group by speaker: its model's colour (styleOf: the job's, namedStyles),
// dashed for a role without the secret.
export function speakerStyle(group, styleOf) {
  const [model, role] = splitGroup(group);
  return { colour: styleOf(model).colour, dash: lacksSecret(role) ? "6 3" : null };
}

// The model and role picker of the curves by speaker: "every model" / a model, "every role" /
// a role; the groups that do not match are hidden (the check boxes follow).
export function renderSpeakerPicker(data, model, role) {
  const box = $("speaker-picker");
  box.hidden = data.by !== "speaker" || !data.groups.length;
  if (box.hidden) return;
  const parts = data.groups.map(splitGroup);
  const models = [...new Set(parts.map((p) => p[0]))].sort();
  const roles = [...new Set(parts.map((p) => p[1]))].sort();
  $("speaker-model").replaceChildren(new Option("every model", ""), ...models.map((m) => new Option(m, m)));
  $("speaker-role").replaceChildren(new Option("every role", ""), ...roles.map((r) => new Option(r, r)));
  $("speaker-model").value = models.includes(model) ? model : "";
  $("speaker-role").value = roles.includes(role) ? role : "";
}

export function speakerHidden(groups, model, role) {
  return new Set(groups.filter((g) => {
    const [m, r] = splitGroup(g);
    return (model && m !== model) || (role && r !== role);
  }));
}

// The models of a curve group: by speaker its model, by model the models of its players
// ('+'-joined); other groupings (matchup, difficulty) are not a model's.
export function groupModels(group, by) {
  if (by === "speaker") return [splitGroup(group)[0]];
  if (by === "model") return group.split("+");
  return null;
}

// The groups the models picked leave out: those none of whose models is picked (none picked:
// every model).
export function modelsHidden(groups, by, picked) {
  if (!picked || !picked.length) return new Set();
  const on = new Set(picked);
  return new Set(groups.filter((g) => {
    const ms = groupModels(g, by);
    return ms !== null && !ms.some((m) => on.has(m));
  }));
}

// The model multi-select: a check box per model of the job (its colour beside it), kept in
// the URL as `models`; it picks the groups of the curves, the means of the plane and the
// pairs compared.
export function renderModelSelect(models, picked, styleOf, onChange) {
  const box = $("model-select");
  box.hidden = models.length < 2;
  if (box.hidden) { box.replaceChildren(); return; }
  const on = new Set(picked || []);
  const boxes = models.slice().sort().map((m, i) => {
    const id = `model-pick-${i}`;
    const input = h("input", { type: "checkbox", id, value: m, checked: on.has(m) ? "checked" : null });
    input.addEventListener("change", () => onChange([...box.querySelectorAll("input:checked")].map((x) => x.value)));
    const sw = h("span", { class: "swatch", "aria-hidden": "true" });
    sw.style.background = styleOf(m).colour;
    return h("label", { for: id }, input, sw, m);
  });
  const none = h("button", { type: "button", class: "link", id: "model-select-clear" }, "every model");
  none.addEventListener("click", () => onChange([]));
  box.replaceChildren(h("legend", {}, on.size ? `Models: ${on.size} picked` : "Models: every one (pick some to compare them)"), ...boxes, " ", none);
}

// Every pair of the models picked compared where they met, per role (GET /v1/jobs/{id}/compare
// once a pair): the paired difference A minus B and its 95% interval, as the two-model view
// gives it.
export function renderPairs(results, styleOf) {
  const box = $("pairs");
  box.hidden = !results.length;
  if (box.hidden) { $("pairs-table").replaceChildren(); return; }
  const k = results.length;
  $("pairs-note").textContent = `${k} ${k === 1 ? "pair" : "pairs"} of models, per role in the games where both gave counted clues in it (never all roles together, which would pair one model's turns as the spy with the other's as a civilian): A minus B game by game, with its 95% bootstrap interval over those games. ` +
    (k > 1 ? `The intervals are each pair's own, not corrected for the ${k} comparisons: an interval that leaves out 0 is weaker evidence the more pairs are read together.` : "");
  const num = (v) => h("td", { class: "num" }, fmt(v));
  const rows = [];
  for (const data of results) {
    // per role only: "(all roles)" pairs a model's spy games with the other's civilian ones
    for (const r of data.rows.filter((x) => x.role !== ALL_ROLES)) {
      rows.push(h("tr", { "data-a": r.model_a, "data-b": r.model_b, "data-role": r.role },
        h("th", { scope: "row" }, `${r.model_a} − ${r.model_b}`), h("td", {}, r.role), h("td", { class: "num" }, String(r.shared_games)),
        num(r.mean_gain_a), num(r.mean_gain_b), num(r.difference_bits), num(r.difference_low), num(r.difference_high)));
    }
  }
  $("pairs-table").replaceChildren(
    h("caption", {}, "Every pair of the models picked, per role (bits per clue; 95% intervals)"),
    h("thead", {}, h("tr", {}, ["pair (A − B)", "role", "shared games", "A mean", "B mean", "A − B", "low", "high"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, rows));
}

// The two model pickers; returns the pair shown (the URL's when both are there, else the
// two with the most clues).
export function fillModelPickers(models, a, b) {
  const box = $("models-compared");
  box.hidden = models.length < 2;
  if (box.hidden) return [null, null];
  const A = models.includes(a) ? a : models[0];
  const B = models.includes(b) && b !== A ? b : models.find((m) => m !== A);
  for (const [id, v] of [["model-a", A], ["model-b", B]]) {
    $(id).replaceChildren(...models.map((m) => new Option(m, m)));
    $(id).value = v;
  }
  return [A, B];
}

const interval = (v, lo, hi) => `${fmt(v)} [${fmt(lo)}, ${fmt(hi)}]`;

export function renderCompare(data, styleOf) {
  const rows = data.rows;
  if (!rows.length) return;
  const { model_a: a, model_b: b } = rows[0];
  const ca = styleOf(a).colour, cb = styleOf(b).colour;
  const side = [];
  for (const r of rows) {
    const games = `${r.shared_games} ${r.shared_games === 1 ? "game" : "games"}`;
    side.push(
      { label: `${r.role}: ${a} (${games}, ${r.clues_a} clues)`, value: r.mean_gain_a, low: r.mean_gain_a_low, high: r.mean_gain_a_high, colour: ca, key: `a|${r.role}`,
        tip: `${a} as ${r.role}, in the ${games} both played: ${interval(r.mean_gain_a, r.mean_gain_a_low, r.mean_gain_a_high)} bits per clue`,
        data: { "data-model": a, "data-role": r.role, "data-value": r.mean_gain_a ?? "" } },
      { label: `${r.role}: ${b} (${games}, ${r.clues_b} clues)`, value: r.mean_gain_b, low: r.mean_gain_b_low, high: r.mean_gain_b_high, colour: cb, dash: "6 3", key: `b|${r.role}`,
        tip: `${b} as ${r.role}, in the ${games} both played: ${interval(r.mean_gain_b, r.mean_gain_b_low, r.mean_gain_b_high)} bits per clue`,
        data: { "data-model": b, "data-role": r.role, "data-value": r.mean_gain_b ?? "" } },
    );
  }
  intervalChart($("compare-side"), { rows: side, xLabel: "bits per clue, in the games both played" });
  intervalChart($("compare-diff"), {
    xLabel: `${a} − ${b} (bits per clue)`,
    rows: rows.map((r) => ({
      label: `${r.role} (${r.shared_games} ${r.shared_games === 1 ? "game" : "games"})`, value: r.difference_bits, low: r.difference_low, high: r.difference_high,
      colour: "#1b1f24", key: `d|${r.role}`,
      tip: `${r.role}: ${a} minus ${b} = ${interval(r.difference_bits, r.difference_low, r.difference_high)} bits per clue, over ${r.shared_games} shared games`,
      data: { "data-role": r.role, "data-value": r.difference_bits ?? "" },
    })),
  });
  $("compare-diff-caption").firstChild.textContent = `Paired difference, ${a} minus ${b} (bits per clue)`;
  const num = (v) => h("td", { class: "num" }, fmt(v));
  $("compare-table").replaceChildren(
    h("caption", {}, `${a} and ${b} where they met (bits per clue; 95% intervals)`),
    h("thead", {}, h("tr", {}, ["role", "shared games", `${a} clues`, `${a} mean`, "low", "high", `${b} clues`, `${b} mean`, "low", "high", "A − B", "low", "high"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, rows.map((r) => h("tr", { "data-role": r.role },
      h("th", { scope: "row" }, r.role), h("td", { class: "num" }, String(r.shared_games)),
      h("td", { class: "num" }, String(r.clues_a)), num(r.mean_gain_a), num(r.mean_gain_a_low), num(r.mean_gain_a_high),
      h("td", { class: "num" }, String(r.clues_b)), num(r.mean_gain_b), num(r.mean_gain_b_low), num(r.mean_gain_b_high),
      num(r.difference_bits), num(r.difference_low), num(r.difference_high)))),
  );
}

const refLabel = (r) => (lacksSecret(r.role) ? `${r.model} (${r.role})` : r.model);

// The plane: light dots for the clues, per model and role the mean with its interval cross,
// the references as black diamonds (hollow: a chameleon's), one label per place.
// At most MEAN_GROUPS means are drawn (those with the most clues, or those of the model and
// role picked), every one in the table; the axes span the means, their intervals, the
// references and the middle 98% of the clues (those outside are counted, not drawn).
const MEAN_GROUPS = 10;

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];

export function renderPlane(data, model, role, styleOf, models = []) {
  const box = $("plane-section");
  box.hidden = !data.groups.length;
  if (box.hidden) return;
  const on = new Set(models);
  const picked = data.groups.filter((g) => (!model || g.model === model) && (!role || g.role === role) && (!on.size || on.has(g.model)));
  const drawn = (model || role || on.size ? picked : data.groups).slice(0, MEAN_GROUPS);
  const xs = data.points.map((p) => p.leakage_bits).sort((x, y) => x - y);
  const ys = data.points.map((p) => p.reveal_bits).sort((x, y) => x - y);
  const span = (vals, sorted) => {
    const v = vals.filter(Number.isFinite);
    if (sorted.length) v.push(quantile(sorted, 0.01), quantile(sorted, 0.99));
    return [Math.min(0, ...v), Math.max(0, ...v)];
  };
  const xb = span([...drawn.flatMap((g) => [g.leakage_bits, g.leakage_low, g.leakage_high]), ...data.references.map((r) => r.leakage_bits)], xs);
  const yb = span([...drawn.flatMap((g) => [g.reveal_bits, g.reveal_low, g.reveal_high]), ...data.references.map((r) => r.reveal_bits)], ys);
  const inside = data.points.filter((p) => p.leakage_bits >= xb[0] && p.leakage_bits <= xb[1] && p.reveal_bits >= yb[0] && p.reveal_bits <= yb[1]);
  const outside = data.points.length - inside.length;
  const style = (g) => speakerStyle(g, styleOf);
  const places = new Map();
  for (const r of data.references) {
    const at = `${r.leakage_bits.toFixed(3)},${r.reveal_bits.toFixed(3)}`;
    if (!places.has(at)) places.set(at, []);
    places.get(at).push(r);
  }
  const refs = [...places.values()].map((rs) => {
    const names = [...new Set(rs.map((r) => r.model))];
    const label = names.length === 1 && rs.length > 1 ? `${names[0]} (every role)` : rs.map(refLabel).join(", ");
    const r = rs[0];
    return {
      x: r.leakage_bits, y: r.reveal_bits, label, hollow: rs.every((x) => lacksSecret(x.role)), key: `ref|${r.group}`,
      tip: `${label} (reference): leakage ${fmt(r.leakage_bits)} bits, reveal value ${fmt(r.reveal_bits)} bits; ${r.note}`,
      data: { "data-ref": r.model, "data-role": r.role, "data-x": r.leakage_bits, "data-y": r.reveal_bits },
    };
  });
  planeChart($("plane-chart"), {
    // the library's axis labels (leakage.curves.plane_axes): the spy's seat names its own
    xLabel: data.x_label || "leakage: information gain about the secret (bits)",
    yLabel: data.y_label || "reveal value: log2 likelihood ratio (bits)",
    xShort: "leakage (bits)", yShort: "reveal value (bits)",
    points: inside.map((p) => ({ x: p.leakage_bits, y: p.reveal_bits, colour: style(p.group).colour })),
    groups: drawn.map((g) => ({
      key: `g|${g.group}`, name: g.group, x: g.leakage_bits, xLow: g.leakage_low, xHigh: g.leakage_high,
      y: g.reveal_bits, yLow: g.reveal_low, yHigh: g.reveal_high, ...style(g.group), hollow: lacksSecret(g.role),
      tip: `${g.group}: leakage ${interval(g.leakage_bits, g.leakage_low, g.leakage_high)} bits, reveal value ${interval(g.reveal_bits, g.reveal_low, g.reveal_high)} bits; ${g.clues} clues in ${g.games} games`,
      data: { "data-group": g.group, "data-x": g.leakage_bits, "data-y": g.reveal_bits },
    })),
    refs,
  });
  $("plane-chart").dataset.outside = outside;
  const shown = data.points.length < data.points_total ? `; ${data.points.length} of its ${data.points_total} clues listed` : `; ${data.points_total} clues`;
  const cut = outside ? ` ${outside} clues lie outside the axes (which span the middle 98% of the clues, the means${data.references.length ? " and the references" : ""}) and are not drawn.` : "";
  const which = drawn.length < data.groups.length ? ` Means drawn: ${model || role || on.size ? "those of the models and role picked above" : `the ${drawn.length} models and roles with the most clues`} (pick a model or role above the curves, by speaker, for others); all ${data.groups.length} are in the table.` : "";
  // the references that belong to the job's games, or why there are none (SpyGame): the API's
  // references_note, the library's words (leakage.curves.plane_references)
  // the caption (its first text: the name the exports take) names the references only when drawn
  const cap = $("plane-caption").firstChild;
  cap.textContent = `Each clue's leakage to the player without the secret against its reveal value to those who share it, per model and role (means with 95% intervals)${data.references.length ? ", and the reference strategies" : ""}`;
  const refsNote = data.references_note || (data.references.length ? "Reference strategies (Karabag & Topcu) simulated on the same axes." : "");
  $("plane-note").textContent = `${data.games} games${shown}.${refsNote ? ` ${refsNote}` : ""}${which}${cut}` + (data.notes.length ? ` ${data.notes.join("; ")}.` : "");
  const num = (v) => h("td", { class: "num" }, fmt(v));
  $("plane-table").replaceChildren(
    h("caption", {}, `The plane: means per model and role (95% bootstrap intervals over games)${data.references.length ? ", then the reference strategies of The Chameleon" : "; no reference strategy (none belongs to these games)"}`),
    h("thead", {}, h("tr", {}, ["kind", "model · role", "clues", "games", "leakage (bits)", "low", "high", "reveal (bits)", "low", "high", "note"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, [...data.groups, ...data.references].map((g) => h("tr", { "data-kind": g.kind, "data-group": g.group },
      h("td", {}, g.kind), h("th", { scope: "row" }, g.group), h("td", { class: "num" }, String(g.clues)), h("td", { class: "num" }, String(g.games)),
      num(g.leakage_bits), num(g.leakage_low), num(g.leakage_high), num(g.reveal_bits), num(g.reveal_low), num(g.reveal_high), h("td", {}, g.note || "")))),
  );
}
