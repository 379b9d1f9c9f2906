// The explorer's controller: reads the URL, calls the API, hands answers to views.js, keeps
// document.body.dataset.state ("loading" / "ready" / "error") and #status up to date.

import { api, apiKey, setApiKey } from "./api.js";
import { gameLabel, parseTranscripts, readState, writeState } from "./state.js";
import {
  renderCurveFilter, renderCurveGames, renderGame, renderJobCurves, renderPreview,
} from "./views.js";
import { decorate } from "./export.js";
import { namedStyles } from "./charts.js";
import {
  fillModelPickers, modelsHidden, renderCompare, renderModelSelect, renderPairs, renderPlane,
  renderSpeakerPicker, speakerHidden,
} from "./models.js";
import { downloads, initJobs, loadRecords, showJobsPanel } from "./jobs.js";
import { initLeaderboard, renderLeaderboard, restyleLeaderboard } from "./leaderboard.js";
import { describeChoice, fitSeats, loadSeats, seatGame, seatSentence, seatValue } from "./seats.js";

const $ = (id) => document.getElementById(id);
// Whether the select #id offers `value` (and it may be chosen).
const offers = (id, value) => [...$(id).options].some((o) => o.value === value && !o.disabled);

const app = {
  state: readState(), // what the URL says
  games: [], // the transcripts on show (one file, paste or job game)
  index: 0,
  params: {}, // extra score parameters (a job's own distractors)
  source: null, // the pasted text or uploaded file on show ({blob, name, what}), read again when the input format changes
  report: null,
  curves: null,
  hidden: new Set(),
  retry: null,
  pastes: [], // every pasted or uploaded text's games, by the number its history entry holds
  timer: null, // the next reading of a job still queued or running
  seen: null, // what the job view shows: job, grouping, state and records done (seenKey)
  styleOf: namedStyles([]), // the open job's colour of each model and group (namedStyles)
  jobSeat: "", // the open job's seat sentence (seats.js), shown by each of its views
};

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const MAX_PAIRED = 6; // models picked whose every pair is compared (15 pairs)

// One colour per model of the job, the same in its curves, plane and comparison: the models
// picked take the palette first (so that up to twelve picked are all told apart, however
// many the job has), then the others, each in name order.
function jobStyles(models, picked) {
  const on = new Set(picked);
  return namedStyles([...[...on].sort(), ...models.filter((m) => !on.has(m)).sort()]);
}

// The groups a job's curves hide: those the model and role pickers and the models picked
// leave out (implied), and those unticked by hand (the URL's hide).
function impliedHidden(groups, by) {
  const out = by === "speaker" ? speakerHidden(groups, app.state.model, app.state.role) : new Set();
  for (const g of modelsHidden(groups, by, app.state.models)) out.add(g);
  return out;
}

function hiddenOf(groups, by) {
  const out = impliedHidden(groups, by);
  for (const g of app.state.hide || []) if (groups.includes(g)) out.add(g);
  return out;
}

const FINAL_STATES = new Set(["done", "failed", "cancelled"]);
const REFRESH_MS = 2000;

function status(text) {
  $("status").textContent = text;
}

// Run one user action: "loading" while it runs, then "ready" or "error" (the message in
// #status). A 401 asks for the API key, and the action is retried once one is given.
// `clears`: the action shows another game (or the same one otherwise scored); when it fails,
// the game on show no longer matches the pickers, so it is taken off the page.
async function act(label, fn, { clears = false } = {}) {
  document.body.dataset.state = "loading";
  status(`${label}…`);
  try {
    const done = await fn();
    status(done || "Ready.");
    document.body.dataset.state = "ready";
    performance.mark("explorer-ready"); // time to a drawn view, for measurements
  } catch (err) {
    let message = `${label} failed: ${err.message}`;
    if (err.status === 401) {
      app.retry = () => act(label, fn);
      $("key-panel").hidden = false;
      $("api-key").focus();
      message = apiKey() ? "The server refused this API key: enter another." : "This server needs an API key: enter it below.";
    }
    if (clears) {
      clearGame();
      // the pasted or uploaded view is gone: the address no longer names it
      if (app.state.pasted) setState({ pasted: undefined, game: undefined });
    }
    status(message);
    document.body.dataset.state = "error";
  } finally {
    showJobsPanel(app.state);
    showSeatChoice();
    decorate();
  }
}

function clearGame() {
  $("view").hidden = true;
  app.report = null;
  for (const id of ["heatmap", "heatmap-compare", "spy-heatmap", "entropy-chart", "psecret-chart"]) $(id).replaceChildren();
  for (const id of ["turns", "votes", "outliers", "disagreement", "clue-result", "clue-player"]) $(id).replaceChildren();
  delete $("clue-result").dataset.state;
}

// The scoring options of the page (count the chameleon's clues, how the spy posterior treats
// the civilians' word, the seat), sent with every score and preview. A seat picked decides
// what the options it contradicts would: a SpyGame seat the spy posterior, the chameleon's
// seat the chameleon's clues (those controls are off meanwhile, and not sent).
function options() {
  const seat = $("seat-select").value || undefined;
  return {
    include_chameleon: seat === "chameleon" ? undefined : $("include-chameleon").checked || undefined,
    spy_assignment: seatGame(seat) === "spygame" || $("spy-assignment").value === "known" ? undefined : $("spy-assignment").value,
    seat,
  };
}

function setOptions({ include_chameleon: chameleon, spy_assignment: spies, seat } = {}) {
  $("include-chameleon").checked = chameleon === true || chameleon === "true" || chameleon === "1";
  $("spy-assignment").value = spies === "marginalise" ? "marginalise" : "known";
  $("seat-select").value = seatValue(seat);
  showSeatChoice();
}

// The seat picker offers the seats of the game on show (every seat with none: a job may hold
// either kind); the controls a seat picked decides are off; the picker's default choice and
// the line under the row say which seat the figures will be from.
function showSeatChoice() {
  const game = !$("view").hidden && app.report ? app.report.game : null;
  fitSeats(game);
  const seat = $("seat-select").value;
  const decided = "the seat picked decides this";
  $("spy-assignment").disabled = seatGame(seat) === "spygame";
  $("spy-assignment").title = $("spy-assignment").disabled ? decided : "";
  $("include-chameleon").disabled = seat === "chameleon";
  $("include-chameleon").title = $("include-chameleon").disabled ? decided : "";
  describeChoice(pageParams(), game);
}

// The options as a report's settings or a job's params hold them (seats.js reads either).
function pageParams() {
  return {
    include_chameleon: $("include-chameleon").checked,
    spy_assignment: $("spy-assignment").value,
    seat: $("seat-select").value || undefined,
  };
}

function scoreParams(backend) {
  return { ...app.params, ...options(), backend };
}

async function scoreCurrent() {
  const t = app.games[app.index];
  if (!t) return "Nothing to score: this view is a stored report.";
  // a seat of the other game kind is put back to the default (the picker offers this game's)
  if (fitSeats(t.game)) setState({ seat: undefined });
  const backend = $("backend-select").value;
  const compare = $("compare-select").value;
  const report = await api.score(t, scoreParams(backend));
  let other = null;
  if (compare && compare !== backend) other = await api.score(t, scoreParams(compare));
  app.report = report;
  $("preview").hidden = false;
  renderGame(t, report, other);
  fillPlayers(t);
  $("clue-result").replaceChildren();
  delete $("clue-result").dataset.state;
  return `Scored ${report.game_id} with ${backend}${other ? ` and ${compare}` : ""}: ${report.steps.length} turns.`;
}

function showGames(games, keep) {
  app.games = games;
  app.index = 0;
  if (keep) {
    const i = games.findIndex((g) => g.id === keep);
    if (i >= 0) app.index = i;
  }
  const sel = $("game-select");
  sel.replaceChildren(...games.map((g, i) => new Option(gameLabel(g, i), String(i))));
  sel.value = String(app.index);
  $("game-picker").hidden = games.length < 2;
}

// push: a new view, a new history entry (see writeState).
function setState(patch, how = {}) {
  app.state = { ...app.state, ...patch };
  writeState(app.state, how);
}

async function loadExample(name, game, push = false) {
  app.source = null;
  const text = await api.example(name);
  showGames(parseTranscripts(text), game);
  app.params = {};
  setState({ example: name, job: undefined, record: undefined, game: app.games[app.index].id, pasted: undefined }, { push });
  $("example-select").value = name;
  return scoreCurrent();
}

// Pasted or uploaded games on show (no example, no job's options).
function showPasted(games, keep) {
  showGames(games, keep);
  $("view").hidden = true; // until it is drawn
  app.params = {};
  $("example-select").value = "";
}

// Pasted text or an uploaded file, read by the server (POST /v1/transcripts) as the command
// line reads a file: the project's own transcripts, CK-Arena and Liang's SpyGame logs,
// Inspect logs (.eval or JSON), by content or the input format chosen, each game returned as
// a leakage.transcript/1 record, so that every view treats them alike. Errors name the file
// (or "pasted text"), the record and the field: not UTF-8, malformed JSON at its line and
// column, a log of another kind.
async function loadSource(source) {
  if (!source.blob.size || !(await source.blob.text()).trim()) {
    throw new Error(source.name ? `${source.name} is empty` : "nothing to score: paste or upload a transcript");
  }
  const res = await api.logGames(source.blob, { filename: source.name || "pasted.json", input_format: $("input-format").value });
  const skipped = res.errors.length ? `; ${res.errors.length} record(s) without a game (first: record ${res.errors[0].record}: ${res.errors[0].message})` : "";
  const more = res.left_out ? `; ${res.left_out} more game(s) not shown: submit it as a job` : "";
  return `${await loadGames(res.games, source)}${skipped}${more}`;
}

async function loadGames(games, source) {
  app.pastes.push({ games, source });
  app.source = source;
  showPasted(games, null);
  setState(
    { example: undefined, job: undefined, record: undefined, game: undefined, pasted: source.what },
    { push: true, data: { paste: app.pastes.length - 1 } },
  );
  const done = await scoreCurrent();
  return `${source.what}: ${done}`;
}

async function openJobGame(job, game, record, push = false) {
  stopRefresh();
  const res = await api.jobGame(job, game, record);
  $("job-input").value = job;
  if (!res.transcript) {
    if (!res.report) throw new Error(`game ${res.game_id} failed in job ${job}: ${res.error ? res.error.message : "no report"}`);
    // the input is gone: the stored report alone (no other backend, no clue to try)
    showGames([], null);
    $("preview").hidden = true;
    app.report = res.report;
    renderGame(null, res.report, null);
    setState({ example: undefined, job, game: res.game_id, record: String(res.record), pasted: undefined }, { push });
    return `Job ${job}'s stored report of ${res.game_id} (${res.transcript_note}: it cannot be scored again here).`;
  }
  app.source = null;
  showGames([res.transcript], null);
  const p = res.params || {};
  app.params = { distractors: p.distractors };
  setOptions(p); // the job's own options: its game is scored as the job scored it
  if (p.backend && offers("backend-select", p.backend)) $("backend-select").value = p.backend;
  $("example-select").value = "";
  setState({ example: undefined, job, game: res.game_id, record: String(res.record), backend: $("backend-select").value, pasted: undefined }, { push });
  const done = await scoreCurrent();
  $("view").scrollIntoView({ block: "start" });
  return done;
}

async function openJob(id, by, push = false) {
  stopRefresh();
  clearGame(); // a job's curves, not the game shown before
  const sameJob = app.state.job === id; // the models picked are kept for the job
  const wasBy = app.state.by;
  // no grouping named: the games' own (the API's auto: speaker's model and role for SpyGame,
  // whose statements are read one by one; the models of the counted speakers otherwise)
  const [{ job, data }, listed] = await Promise.all([readJob(id, by || "auto"), api.compareModels(id)]);
  by = data.by;
  $("curve-group").value = by;
  const same = sameJob && wasBy === by; // the URL's view: its groups unticked kept
  app.models = listed.models;
  app.two = null; // the two models compared: drawn again with the colours when models are picked
  const pick = by === "speaker" ? { model: app.state.model, role: app.state.role } : { model: undefined, role: undefined };
  const hide = same ? (app.state.hide || []).filter((g) => data.groups.includes(g)) : [];
  const models = sameJob ? (app.state.models || []).filter((m) => listed.models.includes(m)) : [];
  Object.assign(app.state, pick, { hide, models });
  app.styleOf = jobStyles(listed.models, models);
  app.hidden = hiddenOf(data.groups, by);
  $("job-input").value = id;
  renderModelSelect(listed.models, models, app.styleOf, pickModels);
  showCurves(job, data);
  app.seen = seenKey(job, by);
  setState({ job: id, by, ...pick, hide, models, example: undefined, game: undefined, record: undefined, pasted: undefined }, { push });
  $("job-actions").replaceChildren("Download: ", ...downloads(id));
  await Promise.all([loadLeaderboard(id), loadRecords(id), loadModels(id)]);
  refreshLater(job, by);
  return data.curves.length ? `Curves of job ${id} by ${by}: ${plural(data.groups.length, "group")}.` : `Job ${id} has no counted clues to draw yet.`;
}

// The job's leaderboard, its first view (none yet while no game has a counted clue: said so).
async function loadLeaderboard(id) {
  try {
    renderLeaderboard(await api.leaderboard(id), app.styleOf);
    $("leaderboard-seat").textContent = app.jobSeat; // beside the reader's sentence
  } catch (err) {
    if (err.status !== 409) throw err;
    renderLeaderboard(null, app.styleOf, `No leaderboard yet: ${err.message}`);
    $("leaderboard-seat").textContent = "";
  }
}

// The plane and the models to compare (the two compared: the URL's, else the two with the
// most clues).
async function loadModels(id) {
  const [plane, listed] = await Promise.all([api.plane(id), api.compareModels(id)]);
  app.plane = plane;
  renderPlane(plane, app.state.model, app.state.role, app.styleOf, app.state.models);
  $("plane-seat").textContent = app.jobSeat;
  $("models-seat").textContent = app.jobSeat;
  const [a, b] = fillModelPickers(listed.models, app.state.a, app.state.b);
  if (!a || !b) return;
  if (app.state.job === id) setState({ a, b }); // the pair shown, in the address
  const [two] = await Promise.all([api.compareModels(id, a, b), loadPairs(id)]);
  app.two = two;
  renderCompare(two, app.styleOf);
}

// Every pair of the models picked (2 to MAX_PAIRED of them), compared where they met.
async function loadPairs(id) {
  const picked = (app.state.models || []).filter((m) => (app.models || []).includes(m)).sort();
  if (picked.length < 2 || picked.length > MAX_PAIRED) {
    renderPairs([], app.styleOf);
    return;
  }
  const pairs = picked.flatMap((a, i) => picked.slice(i + 1).map((b) => [a, b]));
  renderPairs(await Promise.all(pairs.map(([a, b]) => api.compareModels(id, a, b))), app.styleOf);
}

// The models picked changed: the curves, the plane and the pairs follow (the groups
// unticked by hand start again from those the models imply).
function pickModels(models) {
  setState({ models, hide: [] });
  const id = app.state.job;
  app.styleOf = jobStyles(app.models || [], models); // the models picked first: each its own colour
  const focused = document.activeElement && document.activeElement.closest("#model-select") ? document.activeElement : null;
  renderModelSelect(app.models || [], models, app.styleOf, pickModels);
  if (focused) { // the box just ticked keeps the focus (the boxes are drawn anew)
    const again = [...$("model-select").querySelectorAll("input, button")].find((x) => x.id === focused.id);
    if (again) again.focus();
  }
  if (app.curves) {
    app.hidden = hiddenOf(app.curves.groups, app.curves.by);
    drawCurves();
  }
  if (app.plane) renderPlane(app.plane, app.state.model, app.state.role, app.styleOf, models);
  restyleLeaderboard(app.styleOf);
  if (app.two) renderCompare(app.two, app.styleOf);
  const many = models.length > MAX_PAIRED ? ` (every pair is compared for at most ${MAX_PAIRED})` : "";
  act(models.length ? `Comparing ${plural(models.length, "model")}${many}` : "Showing every model", async () => {
    await loadPairs(id);
    return models.length ? `${plural(models.length, "model")} picked: ${models.join(", ")}${many}.` : "Every model shown.";
  });
}

async function compareModels() {
  const id = app.state.job, a = $("model-a").value, b = $("model-b").value;
  setState({ a, b });
  const data = await api.compareModels(id, a, b);
  app.two = data;
  renderCompare(data, app.styleOf);
  const all = data.rows[data.rows.length - 1];
  return all.difference_bits === null
    ? `${a} and ${b} never gave counted clues in the same game.`
    : `${a} minus ${b}: ${all.difference_bits.toFixed(3)} bits per clue over ${all.shared_games} shared games.`;
}

async function readJob(id, by) {
  const job = await api.job(id);
  return { job, data: await api.curves(id, by) };
}

function showCurves(job, data) {
  app.curves = data;
  // whose posterior the job's figures are: its seat, or the default seat of each game kind it
  // holds, named (every view of the job says it)
  app.jobSeat = seatSentence(job.params, [...new Set(data.game_list.map((g) => g.game))]);
  $("curves-seat").textContent = app.jobSeat;
  $("job-summary").textContent = `Job ${job.id}: ${job.state}, ${data.games} games scored (${data.failed} failed), backend ${job.params.backend}` +
    (job.state === "done" ? "." : FINAL_STATES.has(job.state) ? `: the curves use the results stored.` : ` — ${job.state}: the curves use the results stored so far, read again every ${REFRESH_MS / 1000} s.`);
  drawCurves();
}

function stopRefresh() {
  clearTimeout(app.timer);
  app.timer = null;
}

// What a reading of a job shows: its curves, records and models change only when a record
// is finished or the job's state changes.
function seenKey(job, by) {
  return `${job.id}|${by}|${job.state}|${job.done}`;
}

// A job still queued or running is read again while its curves are on show, quietly (the
// page's state stays as it is: the person is looking, not waiting), until it ends. Each
// reading asks for the job's status alone; the curves, the records and the models (plane and
// comparison) are read again only when a record has been finished since, or the state moved.
function refreshLater(job, by) {
  if (!FINAL_STATES.has(job.state)) app.timer = setTimeout(() => refreshJob(job.id, by), REFRESH_MS);
}

async function refreshJob(id, by) {
  app.timer = null;
  const showing = () => app.state.job === id && !app.state.game && app.state.by === by;
  if (!showing()) return;
  try {
    const job = await api.job(id);
    if (!showing() || app.timer !== null) return; // another view, or another reading, since
    if (seenKey(job, by) === app.seen) {
      refreshLater(job, by);
      return;
    }
    const data = await api.curves(id, by);
    if (!showing() || app.timer !== null) return;
    showCurves(job, data);
    app.seen = seenKey(job, by);
    await Promise.all([loadLeaderboard(id), loadRecords(id), loadModels(id)]);
    decorate(); // a leaderboard's new tables get their CSV buttons (outside act())
    refreshLater(job, by);
  } catch (err) {
    if (showing()) $("job-summary").textContent += ` (not read again: ${err.message})`;
  }
}

// The list of jobs again (the job view closed: a new entry of the history, so that Back
// returns to the job).
async function closeJob() {
  stopRefresh();
  setState({ job: undefined, by: undefined, model: undefined, role: undefined, a: undefined, b: undefined, hide: undefined, models: undefined, game: undefined, record: undefined }, { push: true });
  return "The jobs on this server.";
}

// What has the focus in the job's curves (a point, a group's check box), to give it back
// once they are drawn again.
function curvesFocus() {
  const a = document.activeElement;
  if (!a || !a.closest) return null;
  if (a.closest("#curve-filter")) return { box: a.value };
  if (a.matches("#curves circle.point")) return { point: [a.dataset.metric, a.dataset.group, a.dataset.m] };
  return null;
}

function restoreFocus(was) {
  if (!was) return;
  if (was.box !== undefined) {
    const box = [...document.querySelectorAll("#curve-filter input")].find((i) => i.value === was.box);
    if (box) box.focus();
    return;
  }
  const [metric, group, m] = was.point;
  const p = [...document.querySelectorAll("#curves circle.point")].find((c) => c.dataset.metric === metric && c.dataset.group === group && c.dataset.m === m);
  if (!p) return;
  p.closest("svg").querySelectorAll("circle.point").forEach((c) => c.setAttribute("tabindex", "-1"));
  p.setAttribute("tabindex", "0");
  p.focus();
}

function drawCurves() {
  const was = curvesFocus();
  const data = app.curves;
  const id = data.job;
  renderSpeakerPicker(data, app.state.model, app.state.role);
  const colours = renderJobCurves(data, app.hidden, (point) => {
    // by speaker: the games where the group spoke, with at least m counted clues
    const has = (g) => (g.speakers ? g.speakers.includes(point.group) : g.group === point.group);
    const games = data.game_list.filter((g) => has(g) && g.clues >= Math.max(1, point.x));
    renderCurveGames(id, point, games, (g) => act(`Opening ${g.game_id}`, () => openJobGame(id, g.game_id, g.record, true), { clears: true }), data.per_statement);
  }, app.styleOf);
  renderCurveFilter(data, app.hidden, colours, (g, on) => {
    if (on) app.hidden.delete(g); else app.hidden.add(g);
    // in the address: the groups unticked beyond those the pickers hide
    const implied = impliedHidden(data.groups, data.by);
    setState({ hide: [...app.hidden].filter((x) => !implied.has(x)) });
    drawCurves();
  });
  restoreFocus(was);
  decorate(); // the figures drawn anew get their export buttons (a redraw outside act())
}

// "said by": the next player, chosen as POST /v1/score/preview chooses it by default (after
// the last speaker in the players' order, passing over the chameleon and, in SpyGame, a
// player eliminated before that round), or anyone the user picks.
function nextPlayer(t) {
  const turns = t.turns || [];
  const ids = t.players.map((p) => p.id);
  const start = turns.length ? ids.indexOf(turns[turns.length - 1].player) + 1 : 0;
  const order = ids.map((_, i) => t.players[(start + i) % ids.length]);
  const rounds = turns.map((x) => x.round).filter((r) => r !== undefined && r !== null);
  const last = rounds.length ? rounds[rounds.length - 1] : null;
  const out = Object.fromEntries((t.eliminations || []).map((e) => [e.player, e.round]));
  const may = (p) => {
    if (t.game === "chameleon") return $("include-chameleon").checked || p.role !== "chameleon";
    if (last === null || !(p.id in out)) return true;
    const r = turns.some((x) => x.player === p.id && x.round === last) ? last + 1 : last;
    return r <= out[p.id];
  };
  return (order.find(may) || order[0]).id;
}

function fillPlayers(t) {
  const sel = $("clue-player");
  sel.replaceChildren(...t.players.map((p) => new Option(`${p.id} (${p.role})`, p.id)));
  sel.value = nextPlayer(t);
}

async function loadBackends() {
  const data = await api.backends();
  const enabled = data.backends.filter((b) => b.enabled);
  const opt = (b) => {
    const o = new Option(b.name + (b.available === false ? " (unavailable)" : b.loaded ? "" : " (loads on first use)"), b.name);
    o.disabled = b.available === false;
    if (b.reason) o.title = b.reason;
    return o;
  };
  const sel = $("backend-select");
  sel.replaceChildren(...enabled.map(opt));
  $("compare-select").replaceChildren(new Option("No second backend", ""), ...enabled.map(opt));
  const first = enabled.find((b) => b.loaded) || enabled[0];
  sel.value = first ? first.name : ""; // the URL's choice, if any, is applied by route()
}

async function loadExamples() {
  const data = await api.examples();
  $("example-select").replaceChildren(new Option("Choose an example…", ""), ...data.examples.map((e) => {
    const kinds = [...new Set(e.games.map((g) => g.game))].join(", ");
    return new Option(`${e.name} (${e.games.length} ${e.games.length === 1 ? "game" : "games"}, ${kinds})`, e.name);
  }));
}

async function loadFormats() {
  const data = await api.inputFormats();
  const sel = $("input-format");
  const was = sel.value;
  sel.replaceChildren(...data.input_formats.map((f) => new Option(f === "auto" ? "auto (by content)" : f, f)));
  sel.value = data.input_formats.includes(was) ? was : "auto";
}

async function start() {
  await loadBackends(); // first alone: without a key, one refused request, not two
  await Promise.all([loadExamples(), loadFormats(), loadSeats()]);
  return route(history.state);
}

// Show the view the URL names (and `data`, its history entry's): at start, and on the
// browser's Back and Forward.
async function route(data) {
  stopRefresh();
  const s = app.state;
  setOptions(s);
  if (s.backend && offers("backend-select", s.backend)) $("backend-select").value = s.backend;
  $("compare-select").value = s.compare && offers("compare-select", s.compare) ? s.compare : "";
  if (s.by) $("curve-group").value = s.by;
  if (s.example) return loadExample(s.example, s.game);
  if (s.job && s.game) return openJobGame(s.job, s.game, s.record);
  if (s.job) {
    $("job-input").value = s.job;
    return openJob(s.job, s.by);
  }
  const pasted = data && Number.isInteger(data.paste) ? app.pastes[data.paste] : null;
  if (pasted) {
    app.source = pasted.source;
    showPasted(pasted.games, s.game);
    return `${pasted.source.what}: ${await scoreCurrent()}`;
  }
  app.source = null;
  clearGame();
  if (s.pasted) { // a pasted or uploaded view's address, opened where the text is not
    throw new Error(`this address was a pasted or uploaded transcript (${s.pasted}), which only the tab it was opened in holds: paste or upload it again, or share an example's or a job's address`);
  }
  $("example-select").value = "";
  return "Choose an example, paste or upload a transcript, or open a job.";
}

function wire() {
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setApiKey($("api-key").value.trim());
    $("key-panel").hidden = true;
    const again = app.retry || (() => act("Loading", start));
    app.retry = null;
    again();
  });
  $("example-select").addEventListener("change", (e) => {
    const name = e.target.value;
    if (name) act(`Loading ${name}`, () => loadExample(name, undefined, true), { clears: true });
  });
  $("score-button").addEventListener("click", () => {
    const source = { blob: new Blob([$("transcript-input").value], { type: "text/plain" }), name: null, what: "Pasted" };
    act("Reading the pasted text", () => loadSource(source), { clears: true });
  });
  $("file-input").addEventListener("change", (e) => {
    const f = e.target.files[0];
    if (f) act(`Reading ${f.name}`, () => loadSource({ blob: f, name: f.name, what: f.name }), { clears: true });
  });
  $("game-select").addEventListener("change", (e) => {
    app.index = Number(e.target.value);
    setState({ game: app.games[app.index].id }, { push: true, data: history.state });
    act(`Scoring ${app.games[app.index].id}`, scoreCurrent, { clears: true });
  });
  for (const id of ["backend-select", "compare-select", "include-chameleon", "spy-assignment", "seat-select"]) {
    $(id).addEventListener("change", () => {
      showSeatChoice();
      const o = options();
      setState({
        backend: $("backend-select").value, compare: $("compare-select").value || undefined,
        include_chameleon: o.include_chameleon ? "1" : undefined, spy_assignment: o.spy_assignment,
        seat: o.seat,
      });
      if (app.games.length) act("Scoring", scoreCurrent, { clears: true });
    });
  }
  $("input-format").addEventListener("change", () => {
    const source = app.source;
    if (source) act(`Reading ${source.name || "the pasted text"} as ${$("input-format").value}`, () => loadSource(source), { clears: true });
  });
  $("clue-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const clue = $("clue-input").value;
    const t = app.games[app.index];
    if (!t) return;
    if (!clue.trim()) {
      $("clue-result").dataset.state = "error";
      $("clue-result").textContent = "Type a clue first: a blank clue says nothing.";
      $("clue-input").focus();
      return;
    }
    $("clue-result").dataset.state = "loading";
    act("Trying the clue", async () => {
      try {
        const res = await api.preview(t, clue, $("clue-player").value, scoreParams($("backend-select").value));
        renderPreview({ ...res, clue, seat: options().seat });
        return `“${clue}” would leave P(secret) at ${res.after.secret_probability === null ? "–" : res.after.secret_probability.toFixed(3)}.`;
      } catch (err) {
        $("clue-result").dataset.state = "error";
        $("clue-result").textContent = err.message;
        throw err;
      }
    });
  });
  $("job-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const id = $("job-input").value.trim();
    // the grouping shown is kept for the job shown; another job opens in its games' own
    if (id) act(`Opening job ${id}`, () => openJob(id, id === app.state.job ? $("curve-group").value : undefined, true));
  });
  $("curve-group").addEventListener("change", () => {
    const id = $("job-input").value.trim();
    if (id && app.curves) act(`Grouping by ${$("curve-group").value}`, () => openJob(id, $("curve-group").value));
  });
  for (const id of ["speaker-model", "speaker-role"]) {
    $(id).addEventListener("change", () => {
      const model = $("speaker-model").value || undefined, role = $("speaker-role").value || undefined;
      setState({ model, role, hide: [] });
      if (app.curves) {
        app.hidden = hiddenOf(app.curves.groups, app.curves.by);
        drawCurves();
        if (app.plane) renderPlane(app.plane, model, role, app.styleOf, app.state.models);
        decorate();
        $(id).focus();
      }
    });
  }
  for (const [id, other] of [["model-a", "model-b"], ["model-b", "model-a"]]) {
    $(id).addEventListener("change", () => {
      // one model against itself is no comparison: the other takes the model this one had
      if ($(id).value === $(other).value) $(other).value = id === "model-a" ? app.state.a : app.state.b;
      act("Comparing the models", compareModels);
    });
  }
  window.addEventListener("popstate", (e) => {
    app.state = readState();
    act("Opening the view", () => route(e.state), { clears: true });
  });
  wireTooltip();
  initLeaderboard({ act, job: () => app.state.job });
  initJobs({
    act, closeJob,
    openJob: (id) => openJob(id, id === app.state.job ? $("curve-group").value : undefined, true),
    openJobGame: (id, game, record) => openJobGame(id, game, record, true),
    backend: () => $("backend-select").value,
    // the options row, as every score of the page sends it (defaults left out)
    options: () => ({ ...options(), input_format: $("input-format").value === "auto" ? undefined : $("input-format").value }),
  });
}

// One tooltip for every element with data-tip, on hover and on keyboard focus. After a
// keyboard focus the pointer's hovering is left alone until the pointer itself moves: the
// page scrolling a focused cell into view puts another element under a pointer that stayed
// still, and its hover would otherwise replace (or hide) the focused cell's tooltip.
function wireTooltip() {
  const tip = $("tooltip");
  let keyboard = false;
  let at = null; // where the pointer last was (viewport coordinates: a scroll leaves them)
  const show = (e) => {
    if (e.type === "focusin") keyboard = true;
    else if (keyboard) return;
    place(e.target);
  };
  // (the pointer's boundary events come before its move: the element it moved onto is shown
  // here once the move says it was the pointer's own)
  document.addEventListener("mousemove", (e) => {
    const moved = !at || at[0] !== e.clientX || at[1] !== e.clientY;
    at = [e.clientX, e.clientY];
    if (moved && keyboard) {
      keyboard = false;
      place(e.target);
    }
  });
  function place(target) {
    const t = target.closest && target.closest("[data-tip]");
    if (!t) return;
    tip.textContent = t.dataset.tip;
    tip.hidden = false;
    const r = t.getBoundingClientRect();
    tip.style.left = `${Math.max(4, Math.min(window.scrollX + r.right + 8, window.scrollX + document.documentElement.clientWidth - tip.offsetWidth - 4))}px`;
    tip.style.top = `${window.scrollY + r.bottom + 6}px`;
  }
  const hide = (e) => {
    if (e.type === "mouseout" && keyboard) return;
    if (e.target.closest && e.target.closest("[data-tip]")) tip.hidden = true;
  };
  document.addEventListener("mouseover", show);
  document.addEventListener("focusin", show);
  document.addEventListener("mouseout", hide);
  document.addEventListener("focusout", hide);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") tip.hidden = true; });
}

wire();
act("Loading", start);
