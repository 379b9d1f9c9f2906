// Jobs from the page: submit (files uploaded, or paths on the server), the list of jobs with
// their state and progress (read again while one is queued or running), cancel, delete,
// download (results as JSONL or Parquet, the report page), and a job's table of games and
// failed records (sorted by a column, filtered by text and by outcome). Only the public jobs
// API; the key is api.js's, and a 401 goes through the page's act() like any action.

import { api } from "./api.js";
import { h } from "./dom.js";
import { saveBlob } from "./export.js";

const $ = (id) => document.getElementById(id);
const FINAL = new Set(["done", "failed", "cancelled"]);
const REFRESH_MS = 2000;

let ctx = null; // { act, openJob, openJobGame, closeJob, backend, options }
let timer = null;
let records = null; // the open job's records
let sort = { key: "record", dir: 1 };

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "–");
const num = (x, d = 3) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));

function progressText(j) {
  if (j.total === null) return j.state === "queued" ? "waiting" : "counting records";
  return `${j.done} of ${j.total}${j.failed ? ` (${j.failed} failed)` : ""}`;
}

export function renderJobList(data) {
  const table = $("job-list");
  const head = h("tr", {}, ["job", "state", "progress", "source", "backend", "submitted", "actions"].map((t) => h("th", { scope: "col" }, t)));
  const rows = data.jobs.map((j) => {
    const bar = h("progress", { max: j.total || 1, value: j.total === null ? null : j.done, "aria-label": `progress of job ${j.id}` });
    const open = h("button", { type: "button", class: "link", "data-action": "open" }, "Open");
    open.addEventListener("click", () => ctx.act(`Opening job ${j.id}`, () => ctx.openJob(j.id)));
    const actions = [open];
    if (!FINAL.has(j.state)) {
      const cancel = h("button", { type: "button", class: "link", "data-action": "cancel" }, "Cancel");
      cancel.addEventListener("click", () => ctx.act(`Cancelling job ${j.id}`, async () => {
        const done = await api.cancelJob(j.id);
        await refreshList();
        return `Job ${j.id} cancelled: ${done.done} records kept.`;
      }));
      actions.push(cancel);
    }
    const del = h("button", { type: "button", class: "link", "data-action": "delete" }, "Delete");
    del.addEventListener("click", () => {
      if (!window.confirm(`Delete job ${j.id}, its results and its upload?`)) return;
      ctx.act(`Deleting job ${j.id}`, async () => {
        await api.deleteJob(j.id);
        await refreshList();
        return `Job ${j.id} deleted.`;
      });
    });
    actions.push(del, ...downloads(j.id));
    // an upload's files by name (a multipart upload keeps them); a body upload has none
    const source = j.source === "path" ? (j.paths || []).join(", ")
      : j.files && j.files.length ? (j.files.length > 3 ? `${j.files.slice(0, 3).join(", ")} and ${j.files.length - 3} more` : j.files.join(", "))
      : "upload";
    return h("tr", { "data-job": j.id, "data-state": j.state, "data-files": j.files ? j.files.length : null },
      h("td", {}, h("code", { title: j.id }, j.id.slice(0, 8))),
      h("td", { class: "state" }, j.state + (j.error ? `: ${j.error}` : "")),
      h("td", {}, bar, " ", progressText(j)),
      h("td", { class: "source", title: j.files ? j.files.join("\n") : null }, source), h("td", {}, j.params.backend), h("td", {}, when(j.created_at)),
      h("td", { class: "actions" }, actions));
  });
  table.replaceChildren(h("thead", {}, head), h("tbody", {}, rows));
  const more = data.total > data.jobs.length ? ` (the newest ${data.jobs.length} shown)` : "";
  $("job-list-note").textContent = data.jobs.length
    ? `${data.total} job${data.total === 1 ? "" : "s"} on this server${more}.`
    : "No jobs on this server yet: submit one above.";
}

// The download buttons of a job: results (JSONL, Parquet) and the report page.
export function downloads(id) {
  const one = (label, format, fetchBlob, name) => {
    const b = h("button", { type: "button", class: "link", "data-download": format }, label);
    b.addEventListener("click", () => ctx.act(`Downloading ${name}`, async () => {
      saveBlob(await fetchBlob(), name);
      return `Downloaded ${name}.`;
    }));
    return b;
  };
  const by = () => $("curve-group").value || "model";
  return [
    one("JSONL", "jsonl", () => api.results(id, "jsonl"), `${id}.jsonl`),
    one("Parquet", "parquet", () => api.results(id, "parquet"), `${id}.parquet`),
    one("Report (HTML)", "html", () => api.reportHtml(id, by()), `leakage-report-${id}.html`),
  ];
}

export async function refreshList() {
  const data = await api.jobs();
  renderJobList(data);
  clearTimeout(timer);
  timer = null;
  if (!$("job-list-view").hidden && data.jobs.some((j) => !FINAL.has(j.state))) {
    timer = setTimeout(() => refreshList().catch((e) => { $("job-list-note").textContent = `Not read again: ${e.message}`; }), REFRESH_MS);
  }
  return data;
}

// Which of the panel's two views shows: the list when no job is open.
export function showJobsPanel(state) {
  const open = Boolean(state.job);
  const wasHidden = $("job-list-view").hidden;
  $("job-list-view").hidden = open;
  $("job-view").hidden = !open;
  if (open) { clearTimeout(timer); timer = null; }
  else if (wasHidden || !$("job-list").rows.length) refreshList().catch((e) => { $("job-list-note").textContent = `The jobs could not be read: ${e.message}`; });
}

async function submit() {
  const files = [...$("job-file").files];
  const paths = $("job-paths").value.split(/[\n,]/).map((p) => p.trim()).filter(Boolean);
  if (!files.length && !paths.length) throw new Error("choose files to upload or name paths on the server");
  // the backend and the options row (input format, spy posterior, the chameleon's clues)
  const params = { backend: ctx.backend(), ...ctx.options() };
  const made = [];
  if (files.length) made.push(await api.submitFiles(files, params)); // the files: one job
  if (paths.length) made.push(await api.submitPaths(paths, params));
  $("job-file").value = "";
  $("job-paths").value = "";
  await refreshList();
  return `Submitted ${made.length} job${made.length === 1 ? "" : "s"}: ${made.map((j) => j.id.slice(0, 8)).join(", ")} (${params.backend}).`;
}

// -- a job's games and failed records -----------------------------------------------------

const COLUMNS = [
  ["record", "record", "num"], ["game_id", "game", "long"], ["game", "kind", ""],
  ["turns", "turns", "num"], ["counted", "counted", "num"],
  ["final_entropy_bits", "final entropy (bits)", "num"], ["final_secret_probability", "final P(secret)", "num"],
  ["final_secret_rank", "secret rank", "num"],
  // SpyGame: each statement is scored for its speaker's own word, so no final P(secret):
  // the mean over the statements of P(the speaker's word) instead
  ["mean_word_probability", "mean P(speaker's word)", "num"],
  ["category", "category", ""], ["winner", "winner", ""], ["models", "models", "long"],
  ["matchup", "matchup", "long"], ["difficulty", "difficulty", ""],
  ["error", "error", ""],
];
const ALWAYS = new Set(["record", "game_id", "game"]);
// The reports are read for the extra columns once the job has ended (a running job's table
// is read again as records finish), and for at most this many records (a CK-Arena report
// is about 11 KB)
const MAX_DETAILS = 2000;

const cell = (r, key) => (key === "error" ? (r.ok ? "" : `${r.error_type}: ${r.error_message}${r.error_field ? ` (${r.error_field})` : ""}`) : r[key]);

const WINNER = { civilian: "civilians", spy: "spies", chameleon: "chameleon", "non-chameleon": "non-chameleons" };

// What a record's stored report adds to its row: the category, the winner and the models the
// log names, and for SpyGame the mean P(the speaker's word).
function details(report) {
  const m = report.meta || {};
  const out = {};
  out.category = m.topic_category || (report.game === "spygame" ? null : report.category) || null;
  if (m.winner_role) out.winner = WINNER[m.winner_role] || m.winner_role;
  else if (m.outcome) out.winner = String(m.outcome);
  const models = m.models && typeof m.models === "object" ? Object.values(m.models) : [];
  if (models.length) out.models = [...new Set(models)].sort().join(", ");
  if (report.game === "spygame") {
    const ps = report.steps.filter((s) => s.counted && typeof s.secret_probability === "number").map((s) => s.secret_probability);
    if (ps.length) out.mean_word_probability = ps.reduce((a, b) => a + b, 0) / ps.length;
  }
  return out;
}

// The job's reports (its results as JSONL), by record: one line a record in record order,
// a failed one {"record": n, "error": ...}.
async function reportDetails(id, rows) {
  if (rows.length > MAX_DETAILS) return null;
  const text = await (await api.results(id, "jsonl")).text();
  const byGame = new Map();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    if (!r.game_id || !r.steps) continue;
    if (!byGame.has(r.game_id)) byGame.set(r.game_id, []);
    byGame.get(r.game_id).push(details(r));
  }
  return byGame;
}

export async function loadRecords(id) {
  const data = await api.records(id);
  const ok = data.records.filter((r) => r.ok);
  const byGame = ok.length && FINAL.has(data.state) ? await reportDetails(id, data.records) : null;
  if (byGame) for (const r of ok) Object.assign(r, (byGame.get(r.game_id) || []).shift() || {});
  records = data;
  drawRecords();
  return data;
}

export function drawRecords() {
  if (!records) return;
  const text = $("records-filter").value.trim().toLowerCase();
  const show = $("records-show").value;
  // the columns some record fills (a SpyGame job has no final P(secret), a CK-Arena log no
  // difficulty: an empty column is left out)
  const columns = COLUMNS.filter(([k]) => ALWAYS.has(k) || records.records.some((r) => { const v = cell(r, k); return v !== null && v !== undefined && v !== ""; }));
  const rows = records.records.filter((r) => (show === "all" || (show === "failed") === !r.ok) &&
    (!text || columns.some(([k]) => String(cell(r, k) ?? "").toLowerCase().includes(text))));
  const { key, dir } = sort;
  rows.sort((a, b) => {
    const x = cell(a, key), y = cell(b, key);
    if (x === y) return a.record - b.record;
    if (x === null || x === undefined || x === "") return 1;
    if (y === null || y === undefined || y === "") return -1;
    return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * dir;
  });
  const head = h("tr", {}, columns.map(([k, label, cls]) => {
    const b = h("button", { type: "button", class: "sort", "data-sort": k }, label, sort.key === k ? (dir > 0 ? " ▲" : " ▼") : "");
    b.addEventListener("click", () => {
      sort = { key: k, dir: sort.key === k ? -sort.dir : 1 };
      drawRecords();
      document.querySelector(`#job-records-table button[data-sort="${k}"]`).focus();
    });
    return h("th", { scope: "col", class: cls || null, "aria-sort": sort.key === k ? (dir > 0 ? "ascending" : "descending") : null, "data-csv": label }, b);
  }));
  const body = rows.map((r) => h("tr", { class: r.ok ? "" : "failed", "data-record": r.record },
    columns.map(([k, , cls]) => {
      const v = cell(r, k);
      if (k === "game_id" && r.ok && v) {
        const a = h("a", { href: `?${new URLSearchParams({ job: records.job, game: v, record: String(r.record) })}`, "data-game": v, "data-csv": v, title: v }, v);
        a.addEventListener("click", (e) => { e.preventDefault(); ctx.act(`Opening ${v}`, () => ctx.openJobGame(records.job, v, r.record)); });
        return h("td", { class: "long" }, a);
      }
      const shown = typeof v === "number" && !Number.isInteger(v) ? num(v) : v ?? "–";
      // a long text is cut to its cell (the whole in its tooltip and in the CSV)
      return h("td", { class: cls || null, "data-csv": v ?? "", title: cls === "long" && v ? String(v) : null, "data-key": k }, String(shown));
    })));
  $("job-records-table").replaceChildren(h("thead", {}, head), h("tbody", {}, body));
  const failed = records.records.filter((r) => !r.ok).length;
  $("records-count").textContent = `${rows.length} of ${records.records.length} records shown (${failed} failed).`;
}

export function initJobs(context) {
  ctx = context;
  $("job-submit-form").addEventListener("submit", (e) => {
    e.preventDefault();
    ctx.act("Submitting", submit);
  });
  $("job-refresh").addEventListener("click", () => ctx.act("Reading the jobs", async () => {
    const d = await refreshList();
    return `${d.total} jobs.`;
  }));
  $("job-back").addEventListener("click", () => ctx.act("Listing the jobs", ctx.closeJob));
  $("records-filter").addEventListener("input", drawRecords);
  $("records-show").addEventListener("change", drawRecords);
}
