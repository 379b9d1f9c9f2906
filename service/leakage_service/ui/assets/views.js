// What the page draws from the API's answers: a scored game (heat maps, turn table, curves,
// SpyGame's spy posterior and votes, a second backend's disagreements), a clue preview, and
// a job's curves. Nothing here fetches; app.js does.

import { PALETTE, fmt, heatmap, lineChart } from "./charts.js";
import { h } from "./dom.js";
import { speakerStyle } from "./models.js";
import { seatSentence } from "./seats.js";

const $ = (id) => document.getElementById(id);

const argmax = (post) => Object.entries(post).reduce((a, b) => (b[1] > a[1] ? b : a), ["", -1]);

// The turn whose clue gave the most information (counted turns only; ties: the first).
export function mostInformative(steps) {
  let best = -1;
  steps.forEach((s, i) => {
    if (s.counted && s.information_gain_bits > (best < 0 ? 0 : steps[best].information_gain_bits)) best = i;
  });
  return best;
}

function turnLabel(s, i) {
  const text = s.text.length > 22 ? `${s.text.slice(0, 21)}…` : s.text;
  return `${i + 1}. ${s.player}: ${text}`;
}

const MAX_COLUMNS = 40;

// What a report's posterior is over: its candidates, or, from a player's seat whose figures
// are over something else, the keys its steps' posteriors hold, in the order first met
// (settings.seat non-chameleon and civilian: the players, P(each is the odd one out); spy:
// the words of the open vocabulary). `secrets`: the columns starred: the secret, or from a
// players' seat the players who hold the odd role (the chameleon, the spies).
export function posteriorColumns(report) {
  const cands = new Set(report.candidates);
  const seen = new Set();
  for (const s of report.steps) for (const k of Object.keys(s.posterior || {})) seen.add(k);
  const seat = (report.settings && report.settings.seat) || null;
  if ([...seen].every((k) => cands.has(k))) {
    return { all: report.candidates, players: false, secrets: new Set(report.secret ? [report.secret] : []) };
  }
  const players = seat === "non-chameleon" || seat === "civilian";
  const odd = new Set(report.steps.filter((s) => s.role === "chameleon" || s.role === "spy").map((s) => s.player));
  return { all: [...seen], players, secrets: players ? odd : new Set(report.secret ? [report.secret] : []) };
}

// The columns drawn: all of them, or past MAX_COLUMNS the secret and those most probable
// at some turn (in the card's order), so that a large card stays readable and light.
export function shownCandidates(report) {
  const { all, secrets } = posteriorColumns(report);
  if (all.length <= MAX_COLUMNS) return all;
  const peak = (c) => Math.max(...report.steps.map((s) => s.posterior[c] ?? 0));
  const top = all.slice().sort((a, b) => peak(b) - peak(a)).slice(0, MAX_COLUMNS);
  let last = MAX_COLUMNS - 1;
  for (const x of secrets) if (!top.includes(x) && last >= 0) top[last--] = x;
  const keep = new Set(top);
  return all.filter((c) => keep.has(c));
}

function drawPosterior(svg, report, disagree = new Set()) {
  const cands = shownCandidates(report);
  const { secrets, players } = posteriorColumns(report);
  const marks = cands.map((c, i) => (secrets.has(c) ? i : -1)).filter((i) => i >= 0);
  const what = players ? (report.game === "spygame" ? "a spy" : "the chameleon") : "the secret";
  heatmap(svg, {
    rows: report.steps.map((s, i) => ({
      label: turnLabel(s, i),
      title: `${s.player} (${s.role}): ${s.text}`,
      cls: disagree.has(i) ? "disagree" : "",
    })),
    cols: cands,
    marked: new Set(marks),
    value: (r, c) => report.steps[r].posterior[cands[c]] ?? null,
    attrs: (r) => ({ "data-turn": r + 1 }),
    label: (r, c) => `turn ${r + 1}, ${cands[c]}`,
    tip: (r, c) => {
      const s = report.steps[r], p = s.posterior[cands[c]];
      const rank = Object.values(s.posterior).filter((q) => q > p).length + 1;
      return `Turn ${r + 1} — ${s.player} (${s.role}) said “${s.text}”${s.counted ? "" : " (not counted)"}\n` +
        `${cands[c]}${marks.includes(c) ? ` (${what})` : ""}: P = ${fmt(p, 4)}, rank ${rank} of ${cands.length}\n` +
        `entropy ${fmt(s.entropy_bits)} bits, gain ${fmt(s.information_gain_bits)} bits`;
    },
  });
}

// A heat map's figure asks for the map's drawn width, so that two side by side wrap one
// above the other when they do not both fit, rather than each showing a scrolled part.
function sizeMap(id) {
  const svg = $(id), fig = svg.closest("figure");
  fig.classList.add("sized");
  fig.style.flexBasis = `${svg.getAttribute("width") || 420}px`;
}

const ROLE_PLURAL = { civilian: "the civilians", spy: "the spies", chameleon: "the chameleon", "non-chameleon": "the non-chameleons" };

// Who won, as the log says: SpyGame logs (CK-Arena) keep the winning role and players.
export function outcomeText(meta) {
  if (!meta) return null;
  if (meta.winner_role) {
    const who = ROLE_PLURAL[meta.winner_role] || meta.winner_role;
    const ids = Array.isArray(meta.winners) && meta.winners.length ? ` (players ${meta.winners.join(", ")})` : "";
    return `${who} won${ids}`;
  }
  return meta.outcome ? String(meta.outcome) : null;
}

function metaLine(t, report) {
  const bits = [report.game === "spygame" ? "SpyGame" : `Chameleon, category ${report.category}`];
  if (report.secret) bits.push(`${report.game === "spygame" ? "civilians' word" : "secret"}: ${report.secret}`);
  else bits.push("no secret in this log");
  bits.push(`${report.candidates.length} candidates`, `backend ${report.backend}`);
  const m = (t && t.meta) || report.meta || {};
  if (m.topic_category && report.game === "spygame") bits.push(`category: ${m.topic_category}`);
  for (const k of ["matchup", "difficulty"]) if (m[k]) bits.push(`${k}: ${m[k]}`);
  const won = outcomeText(m);
  if (won) bits.push(`outcome: ${won}`);
  return bits.join(" · ");
}

// Each player's model (the transcript's agents, else the log's meta.models).
function agents(t, report) {
  const out = {};
  const m = (t && t.meta) || report.meta || {};
  if (m.models && typeof m.models === "object") Object.assign(out, m.models);
  for (const p of (t && t.players) || []) if (p.agent) out[p.id] = p.agent;
  return out;
}

export function renderGame(transcript, report, compare) {
  $("view").hidden = false;
  $("game-title").textContent = report.game_id;
  $("game-meta").textContent = metaLine(transcript, report);
  // whose posterior the figures are: the report's seat, or its game's default named
  $("game-seat").textContent = seatSentence(report.settings, [report.game]);
  const disagree = compare ? disagreements(report, compare) : [];
  const rows = new Set(disagree.map((d) => d.turn - 1));
  const cols = posteriorColumns(report);
  const shown = shownCandidates(report).length, all = cols.all.length;
  const over = cols.players ? "players" : cols.all === report.candidates ? "candidates" : "words";
  const part = shown < all ? `, the ${shown} of ${all} ${over} most probable at some turn` : "";
  // a players' seat: the posterior is over who holds the odd role, not over the words
  const title = cols.players
    ? `P(each player is ${report.game === "spygame" ? "the odd one out" : "the chameleon"}) after each turn`
    : over === "words" ? "Posterior over the open vocabulary's words after each turn" : "Posterior over the candidates after each turn";
  // a player's seat is sat in by every holder: the rows are the first's (settings.seat_holders)
  const holders = (report.settings && report.settings.seat_holders) || [];
  const whose = holders.length ? `, as ${holders[0]} sees it${holders.length > 1 ? ` (the seat's holders: ${holders.join(", ")})` : ""}` : "";
  $("heatmap-caption").textContent = `${title}${whose} (${report.backend}${part})`;
  const legend = $("legend");
  legend.dataset.text ??= legend.textContent; // the page's own words, for a candidates' map
  const spyGame = report.game === "spygame";
  legend.textContent = cols.players
    ? `Each cell: the probability (per cent) that the player is ${spyGame ? "the odd one out" : "the chameleon"} after that turn, from the seat ${report.settings.seat}; darker is more probable. ${spyGame ? "Each spy's" : "The chameleon's"} column is outlined and starred. Hover or focus a cell (arrow keys move) for the numbers.`
    : legend.dataset.text;
  drawPosterior($("heatmap"), report, rows);
  sizeMap("heatmap");
  $("compare-figure").hidden = !compare;
  $("disagreement").hidden = !compare;
  if (compare) {
    $("compare-caption").textContent = `Posterior after each turn (${compare.backend})`;
    drawPosterior($("heatmap-compare"), compare, rows);
    sizeMap("heatmap-compare");
    renderDisagreement(report, compare, disagree);
  } else {
    $("heatmap-compare").replaceChildren();
    $("disagreement").replaceChildren();
  }
  renderTurns(transcript, report, compare);
  renderCurves(report, compare);
  const spy = report.game === "spygame";
  $("spy-section").hidden = !spy;
  if (spy) renderSpy(transcript, report);
  else { $("spy-heatmap").replaceChildren(); $("votes").replaceChildren(); $("outliers").replaceChildren(); }
}

export function disagreements(a, b) {
  const out = [];
  a.steps.forEach((s, i) => {
    const t = b.steps[i];
    if (!t) return;
    const [ta, pa] = argmax(s.posterior), [tb, pb] = argmax(t.posterior);
    if (ta !== tb) out.push({ turn: i + 1, step: s, a: [ta, pa], b: [tb, pb] });
  });
  return out;
}

function renderDisagreement(a, b, list) {
  const box = $("disagreement");
  const head = h("p", {}, h("strong", {}, `${a.backend} vs ${b.backend}: `),
    list.length ? `the top candidate differs after ${list.length} of ${a.steps.length} turns.`
      : "the same top candidate after every turn.");
  const items = list.map((d) => h("li", { "data-turn": d.turn },
    `Turn ${d.turn} (${d.step.player}: “${d.step.text}”): ${a.backend} → ${d.a[0]} (${fmt(d.a[1])}), ${b.backend} → ${d.b[0]} (${fmt(d.b[1])})`));
  let gap = null;
  if (a.secret) {
    a.steps.forEach((s, i) => {
      const diff = Math.abs((s.secret_probability ?? 0) - (b.steps[i]?.secret_probability ?? 0));
      if (!gap || diff > gap.diff) gap = { diff, i };
    });
  }
  const gapLine = gap && gap.diff > 0 ? h("p", {}, `P(secret) differs most after turn ${gap.i + 1} (“${a.steps[gap.i].text}”): ${fmt(a.steps[gap.i].secret_probability)} vs ${fmt(b.steps[gap.i]?.secret_probability)}.`) : null;
  box.replaceChildren(head, list.length ? h("ul", {}, items) : "", gapLine || "");
}

// What a step's secret_probability is from a player's seat (the secret a seat reads:
// settings.seat_secret).
const SEAT_P = { "non-chameleon": "P(the chameleon)", civilian: "P(the spy)", spy: "P(the civilians' word)" };

function renderTurns(transcript, report, compare) {
  const best = mostInformative(report.steps);
  const spy = report.game === "spygame";
  const hasOutliers = report.steps.some((s) => s.outlier_scores);
  const pLabel = SEAT_P[report.settings && report.settings.seat] || (spy ? "P(speaker's word)" : "P(secret)");
  const model = agents(transcript, report);
  const hasModels = report.steps.some((s) => model[s.player]);
  const head = h("tr", {}, h("th", { scope: "col" }, "turn"), h("th", { scope: "col" }, "player"),
    hasModels ? h("th", { scope: "col" }, "model") : null,
    h("th", { scope: "col" }, spy ? "statement" : "clue"), h("th", { scope: "col", class: "num" }, "entropy (bits)"),
    h("th", { scope: "col", class: "num" }, pLabel), h("th", { scope: "col", class: "num" }, "gain (bits)"),
    compare ? h("th", { scope: "col", class: "num" }, `${pLabel}, ${compare.backend}`) : null,
    hasOutliers ? h("th", { scope: "col", class: "num" }, "outlier score (speaker)") : null);
  const rows = report.steps.map((s, i) => {
    const cls = [i === best ? "turn most-informative" : "turn", s.counted ? "" : "not-counted"].join(" ").trim();
    const out = s.outlier_scores ? s.outlier_scores[s.player] : null;
    return h("tr", { class: cls, "data-turn": i + 1 },
      h("td", {}, String(i + 1)), h("td", {}, `${s.player} (${s.role})`),
      hasModels ? h("td", { class: "model" }, model[s.player] || "–") : null,
      h("td", {}, s.text, s.counted ? "" : " (not counted)"),
      h("td", { class: "num" }, fmt(s.entropy_bits)), h("td", { class: "num" }, fmt(s.secret_probability)),
      h("td", { class: "num" }, fmt(s.information_gain_bits)),
      compare ? h("td", { class: "num" }, fmt(compare.steps[i]?.secret_probability)) : null,
      hasOutliers ? h("td", { class: "num" }, out === null || out === undefined ? "–" : fmt(out)) : null);
  });
  // statements the log holds empty (a model that did not answer): not scored, but shown where
  // they were said (CK-Arena numbers its statements from 1 in order)
  const m = (transcript && transcript.meta) || report.meta || {};
  const skipped = Array.isArray(m.skipped_statement_ids) ? m.skipped_statement_ids : [];
  const width = head.children.length;
  for (const id of skipped) {
    const row = h("tr", { class: "turn skipped", "data-statement": id },
      h("td", {}, "–"), h("td", { colspan: String(width - 1) }, `statement ${id}: empty (the model said nothing), not scored`));
    const at = Number.isInteger(id) && id >= 1 ? Math.min(id - 1, rows.length) : rows.length;
    rows.splice(at, 0, row);
  }
  $("turns").replaceChildren(h("thead", {}, head), h("tbody", {}, rows));
}

function renderCurves(report, compare) {
  const best = mostInformative(report.steps);
  const runs = [report, compare].filter(Boolean);
  const prior = report.summary ? report.summary.prior_entropy_bits : Math.log2(report.candidates.length);
  // turn 0: before any clue, the uniform prior (log2 K bits, P(secret) 1/K)
  // (from a player's seat the posterior is over the players or an open vocabulary: its prior
  // entropy says how many)
  const seat = (report.settings && report.settings.seat) || null;
  const mine = seat === "non-chameleon" || seat === "civilian" || seat === "spy";
  const uniform = mine && report.summary ? 2 ** -prior : 1 / report.candidates.length;
  const start = { entropy_bits: prior, secret_probability: report.secret || mine ? uniform : null };
  const series = (key, name) => runs.map((r, k) => ({
    name: r.backend, colour: PALETTE[k],
    points: [{ x: 0, y: start[key], tip: `${r.backend}, before any clue (the prior): ${name} ${fmt(start[key])}`, data: { "data-turn": 0 } }].concat(r.steps.map((s, i) => ({
      x: i + 1, y: s[key], cls: k === 0 && i === best ? "best" : "",
      tip: `${r.backend}, turn ${i + 1} (${s.player}: “${s.text}”): ${name} ${fmt(s[key])}` +
        (k === 0 && i === best ? " — the most informative clue" : ""),
      data: { "data-turn": i + 1 },
    }))),
  }));
  lineChart($("entropy-chart"), { series: series("entropy_bits", "entropy"), xLabel: "turn", yLabel: "entropy (bits)", yMax: prior * 1.05, ref: prior });
  const spy = report.game === "spygame";
  const pName = SEAT_P[seat] || (spy ? "P(word)" : "P(secret)");
  $("psecret-caption").textContent = SEAT_P[seat] ? `${SEAT_P[seat]} after each turn, from the seat ${seat}` : spy ? "P(the speaker's word) after each statement" : "P(secret) after each turn";
  if (report.steps.some((s) => s.secret_probability !== null && s.secret_probability !== undefined)) {
    lineChart($("psecret-chart"), { series: series("secret_probability", pName), xLabel: "turn", yLabel: "probability", yMax: 1, ref: uniform });
  } else {
    $("psecret-chart").replaceChildren();
    $("psecret-caption").textContent = "P(secret): this log kept no secret";
  }
}

function renderSpy(t, report) {
  const players = (t && t.players ? t.players.map((p) => p.id) : Object.keys(report.steps[0]?.spy_posterior || {}));
  const spies = new Set((t && t.players ? t.players : []).filter((p) => p.role === "spy").map((p) => p.id));
  const marked = new Set(players.map((p, i) => (spies.has(p) ? i : -1)).filter((i) => i >= 0));
  heatmap($("spy-heatmap"), {
    rows: report.steps.map((s, i) => ({ label: turnLabel(s, i), title: `${s.player}: ${s.text}` })),
    cols: players,
    marked,
    value: (r, c) => (report.steps[r].spy_posterior || {})[players[c]] ?? null,
    attrs: (r, c) => ({ "data-turn": r + 1, "data-player": players[c] }),
    label: (r, c) => `statement ${r + 1}, P(${players[c]} is a spy)`,
    tip: (r, c) => {
      const s = report.steps[r], p = (s.spy_posterior || {})[players[c]];
      const o = s.outlier_scores ? s.outlier_scores[players[c]] : null;
      return `After statement ${r + 1} (${s.player}: “${s.text}”)\nP(${players[c]} is ${spies.has(players[c]) ? "a spy — it is" : "a spy"}) = ${fmt(p, 4)}` +
        (o !== null && o !== undefined ? `\noutlier score ${fmt(o)}` : "");
    },
  });
  renderOutliers(report, players, spies);
  const votes = (t && t.votes) || [], out = (t && t.eliminations) || [];
  const meta = (t && t.meta) || report.meta || {};
  const causes = meta.elimination_causes || {};
  const rounds = [...new Set([...votes.map((v) => v.round ?? 1), ...out.map((e) => e.round)])].sort((a, b) => a - b);
  const box = $("votes");
  if (!rounds.length) { box.replaceChildren(h("p", { class: "meta" }, "No votes in this log.")); return; }
  const roleOf = Object.fromEntries(((t && t.players) || []).map((p) => [p.id, p.role]));
  // how a player left the game: by the players' vote, or otherwise (CK-Arena's judges
  // eliminate a player whose statement scored too low, an audience model decides in games
  // without votes): only a vote is listed as one
  const how = { metric: "eliminated by the judges' low score, not by a vote", audience: "eliminated by the audience model, not by a vote", record: "eliminated (the log gives no vote)" };
  const abstained = Number(meta.abstentions) || 0;
  const won = outcomeText(meta);
  box.replaceChildren(h("h4", {}, "Votes and eliminations"), ...rounds.map((r) => {
    const rv = votes.filter((v) => (v.round ?? 1) === r);
    const gone = out.filter((e) => e.round === r);
    const voted = gone.filter((e) => !how[causes[e.player]]).map((e) => `${e.player} (${roleOf[e.player] || "?"})`);
    const other = gone.filter((e) => how[causes[e.player]]).map((e) => h("li", { "data-player": e.player, "data-cause": causes[e.player] }, `${e.player} (${roleOf[e.player] || "?"}) ${how[causes[e.player]]}`));
    return h("div", { class: "votes-round-box" },
      h("table", { class: "votes-round", "data-round": r },
        h("caption", {}, `Round ${r}${voted.length ? `: ${voted.join(", ")} voted out` : rv.length ? "" : ": no vote"}`),
        rv.length ? h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "voter"), h("th", { scope: "col" }, "voted for"))) : null,
        h("tbody", {}, rv.map((v) => h("tr", {}, h("td", {}, v.voter), h("td", {}, `${v.target}${spies.has(v.target) ? " (spy)" : ""}`))))),
      other.length ? h("ul", { class: "eliminated" }, other) : null);
  }),
  // (replaceChildren writes a null as the text "null": only what there is)
  ...[abstained ? h("p", { class: "meta", id: "abstentions" }, `${abstained} abstaining ${abstained === 1 ? "vote" : "votes"} (no one named; the log's tally leaves ${abstained === 1 ? "it" : "them"} out).`) : null,
    won ? h("p", { id: "outcome" }, h("strong", {}, "Outcome: "), won) : null].filter(Boolean));
}

// The backend's outlier scores (how far each player's statements so far lie from the
// others'; embedding backends give them), the highest of each row in bold.
function renderOutliers(report, players, spies) {
  const box = $("outliers");
  const rows = report.steps.filter((s) => s.outlier_scores);
  box.hidden = !rows.length;
  if (!rows.length) { box.replaceChildren(); return; }
  const head = h("tr", {}, h("th", { scope: "col" }, "after statement"),
    players.map((p) => h("th", { scope: "col", class: "num" }, spies.has(p) ? `★ ${p} (spy)` : p)));
  const body = report.steps.map((s, i) => {
    const o = s.outlier_scores || {};
    const top = Math.max(...Object.values(o));
    return h("tr", {}, h("th", { scope: "row" }, `${i + 1}. ${s.player}`), players.map((p) =>
      h("td", { class: "num" }, o[p] === undefined ? "–" : o[p] === top ? h("strong", {}, fmt(o[p])) : fmt(o[p]))));
  });
  box.replaceChildren(h("h4", {}, `Outlier scores (${report.backend}): the player whose statements stand out most, by row`),
    h("table", { id: "outlier-table" }, h("thead", {}, head), h("tbody", {}, body)));
}

const TIE = 1e-12;

export function renderPreview(res) {
  const box = $("clue-result");
  const a = res.after, b = res.before;
  const word = res.game === "spygame" ? res.speaker_word || "the speaker's word" : res.secret || "the secret";
  const post = a.posterior || {};
  // from a player's seat (res.seat: the seat the page asked for) the posterior is over the
  // players or an open vocabulary, and P is the seat's secret's
  const pName = SEAT_P[res.seat] || `P(${word})`;
  const over = SEAT_P[res.seat] && Object.keys(post).length ? Object.keys(post).length : res.candidates.length;
  const p = a.secret_probability;
  // candidates as probable share a rank: 1 + those strictly more probable (the server's
  // rank orders a tie by the card's order, and said "rank 2" of the most probable word)
  const rank = p === null || p === undefined || !Object.keys(post).length ? a.secret_rank
    : 1 + Object.values(post).filter((q) => q > p + TIE).length;
  const tops = Object.entries(post).filter(([, q]) => q >= a.top_probability - TIE).map(([c]) => c);
  const tied = (n) => (n > 1 ? `, tied with ${n - 1} other${n > 2 ? "s" : ""}` : "");
  const sharing = p === null || p === undefined ? 0 : Object.values(post).filter((q) => Math.abs(q - p) <= TIE).length;
  const top = tops.length > 1 ? `${tops.join(" and ")} (${fmt(a.top_probability)} each, a tie)` : `${a.top_candidate} (${fmt(a.top_probability)})`;
  box.replaceChildren(
    h("p", {}, h("strong", {}, `If ${res.player} said “${res.clue}” as turn ${res.turn}: `),
      a.counted ? "" : "(this player's turn is not counted, so it changes nothing) "),
    h("ul", {},
      h("li", { "data-value": a.secret_probability, "data-before": b.secret_probability ?? "" }, `${pName} ${fmt(b.secret_probability)} → ${fmt(a.secret_probability)} (rank ${rank ?? "–"}${tied(sharing)} of ${over})`),
      h("li", { "data-value": a.entropy_bits }, `entropy ${fmt(b.entropy_bits)} → ${fmt(a.entropy_bits)} bits`),
      h("li", { "data-value": a.information_gain_bits }, `information gain of the clue: ${fmt(a.information_gain_bits)} bits`),
      h("li", {}, `most probable ${res.seat === "non-chameleon" || res.seat === "civilian" ? "player" : "candidate"} then: ${top}`)),
  );
  box.dataset.state = "done";
}

// The curves' titles: SpyGame reads each statement on its own from the uniform prior (the
// posterior over the speaker's word; m numbers the statements, nothing accumulates: the
// curves API's per_statement, the library's decision); The Chameleon's clues accumulate.
export function curveTitles(perStatement) {
  if (perStatement) {
    const top = (k) => `P(speaker's word in the top ${k}) in the m-th statement, read on its own`;
    return { entropy_bits: "Mean entropy of the m-th statement, read on its own (bits)", top1: "P(speaker's word is the top candidate) in the m-th statement, read on its own", top3: top(3), top5: top(5) };
  }
  return { entropy_bits: "Mean entropy after m clues (bits)", top1: "P(secret is the top candidate) after m clues", top3: "P(secret in the top 3) after m clues", top5: "P(secret in the top 5) after m clues" };
}

// A job's curves: one figure for the entropy, one per top-k metric; each point lists its games.
export function renderJobCurves(data, hidden, onPoint, styleOf) {
  const box = $("curves");
  const groups = data.groups.filter((g) => !hidden.has(g));
  // by speaker, the colour of each model in the job (styleOf), dashed for the roles without
  // the secret; otherwise the group's own (a model's, or the next free one, taken in the
  // groups' sorted order so that a view drawn again keeps them)
  const speaker = data.by === "speaker";
  if (!speaker) [...data.groups].sort().forEach((g) => styleOf(g));
  const colourOf = Object.fromEntries(data.groups.map((g) => [g, speaker ? speakerStyle(g, styleOf) : styleOf(g)]));
  const metrics = [...new Set(data.curves.map((r) => r.metric))];
  const titles = curveTitles(data.per_statement);
  box.replaceChildren();
  for (const metric of metrics) {
    const rows = data.curves.filter((r) => r.metric === metric && groups.includes(r.group));
    const fig = h("figure", { "data-metric": metric }, h("figcaption", {}, `${titles[metric] || metric}, by ${data.by}, with 95% intervals`));
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.id = `curve-${metric}`;
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `${titles[metric] || metric}; each point is a button listing its games`);
    fig.append(svg);
    box.append(fig);
    const series = groups.map((g) => ({
      name: g, colour: colourOf[g].colour, dash: colourOf[g].dash,
      points: rows.filter((r) => r.group === g).map((r) => ({
        x: r.m, y: r.value, low: r.low, high: r.high, group: g, metric,
        tip: `${g}, m = ${r.m}: ${fmt(r.value)} [${fmt(r.low)}, ${fmt(r.high)}], ${r.games} games`,
        data: { "data-group": g, "data-m": r.m, "data-metric": metric },
      })),
    }));
    lineChart(svg, {
      series, xLabel: data.per_statement ? "m (the m-th statement, read on its own)" : "m (clues counted)", yLabel: metric === "entropy_bits" ? "bits" : "share of games",
      yMax: metric === "entropy_bits" ? undefined : 1, onPoint, legend: false, // the check boxes are the legend
    });
  }
  return colourOf;
}

export function renderCurveFilter(data, hidden, colourOf, onToggle) {
  const box = $("curve-filter");
  box.hidden = !data.groups.length;
  box.replaceChildren(h("legend", {}, `Show ${data.by} groups`), ...data.groups.map((g, i) => {
    const id = `group-${i}`;
    const input = h("input", { type: "checkbox", id, value: g, checked: hidden.has(g) ? null : "checked" });
    input.addEventListener("change", () => onToggle(g, input.checked));
    const sw = h("span", { class: "swatch", "aria-hidden": "true" });
    sw.style.background = colourOf[g].colour;
    if (colourOf[g].dash) sw.classList.add("dashed");
    // by speaker a game lists every group that spoke in it (speakers), otherwise its one group
    const n = data.game_list.filter((x) => (x.speakers ? x.speakers.includes(g) : x.group === g)).length;
    return h("label", { for: id }, input, sw, `${g} (${n})`);
  }));
}

export function renderCurveGames(jobId, point, games, onOpen, perStatement = false) {
  const box = $("curve-games");
  const list = games.map((g) => {
    const q = new URLSearchParams({ job: jobId, game: g.game_id, record: String(g.record) });
    const a = h("a", { href: `?${q}`, "data-record": g.record, "data-game": g.game_id }, g.game_id);
    a.addEventListener("click", (e) => { e.preventDefault(); onOpen(g); });
    return h("li", {}, a, ` (record ${g.record}, ${g.clues} counted ${perStatement ? "statements" : "clues"})`);
  });
  box.replaceChildren(h("p", {}, h("strong", {}, `${point.group}, m = ${point.x}: `), `${games.length} games`), h("ul", { class: "games" }, list));
}
