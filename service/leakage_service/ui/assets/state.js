// The view's state, kept in the query string so that a view can be shared by its URL:
// ?example=chameleon_sports&game=<id>&backend=cooccurrence&compare=embedding
// ?job=<id>&game=<game id>&record=<n>&backend=...   (a game of a job)
// ?job=<id>&by=matchup                               (a job's curves)
// ?job=<id>&by=speaker&model=<m>&role=<r>&a=<m>&b=<m> (by speaker, one model or role; two compared)
// &include_chameleon=1&spy_assignment=marginalise    (the scoring options, when not the defaults)
// &seat=outside-pair                                 (the seat picked; none: each game's default)
// &hide=<group>&hide=<group>                         (a job's curve groups unticked)
// &models=<m>&models=<m>&models=<m>                  (the models picked in a job: curves, plane, pairs)

const KEYS = ["example", "job", "game", "record", "backend", "compare", "by", "model", "role", "a", "b", "include_chameleon", "spy_assignment", "seat", "pasted", "hide", "models"];
const LISTS = new Set(["hide", "models"]); // keys that may repeat: a list (empty: left out)
// model, role: the model and role picked in a job's curves by speaker; a, b: the two models compared
// pasted: the view is a pasted or uploaded transcript (its name), which only this tab holds

export function readState() {
  const q = new URLSearchParams(location.search);
  const out = {};
  for (const k of KEYS) {
    if (LISTS.has(k)) {
      const all = q.getAll(k).filter(Boolean);
      if (all.length) out[k] = all;
      continue;
    }
    const v = q.get(k);
    if (v) out[k] = v;
  }
  return out;
}

// A new view (another example, game or job) is a new entry of the browser's history, so
// that Back and Forward walk through the views; a change within a view (the backend) replaces
// the current entry (keeping its data). `data` rides with the entry (a pasted transcript's number, which the
// URL cannot hold).
export function writeState(state, { push = false, data = null } = {}) {
  const q = new URLSearchParams();
  for (const k of KEYS) {
    if (LISTS.has(k)) for (const v of state[k] || []) q.append(k, v);
    else if (state[k]) q.set(k, state[k]);
  }
  const s = q.toString();
  const next = location.pathname + (s ? `?${s}` : "");
  const same = next === location.pathname + location.search;
  if (push) {
    if (!same || data !== null) history.pushState(data, "", next);
  } else if (!same) {
    history.replaceState(history.state, "", next);
  }
}

// Parse an example's text: one JSON value (a transcript or an array of them), or JSONL. (Pasted
// and uploaded text is read by the server: app.js, loadSource.)
export function parseTranscripts(text) {
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (!trimmed) throw new Error("nothing to score: paste or upload a transcript");
  try {
    const doc = JSON.parse(trimmed);
    return checkGames(Array.isArray(doc) ? doc : [doc]);
  } catch (whole) {
    const lines = trimmed.split(/\r?\n/);
    if (lines.length < 2) throw new Error(`not JSON: ${whole.message}`);
    const games = [];
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      try {
        games.push(JSON.parse(line));
      } catch (e) {
        throw new Error(`line ${i + 1} is not JSON (${e.message}); give one JSON value or JSONL`);
      }
    });
    return checkGames(games);
  }
}

function checkGames(games) {
  if (!games.length) throw new Error("no transcript in the text");
  games.forEach((g, i) => {
    if (!g || typeof g !== "object" || Array.isArray(g)) {
      throw new Error(`record ${i + 1} is not a JSON object (a transcript is one)`);
    }
  });
  return games;
}

export function gameLabel(t, i) {
  const what = t.game === "spygame" && t.words ? `${t.words.civilian} / ${t.words.spy}` : t.category;
  return `${i + 1}. ${t.id || "game"}${what ? ` (${what})` : ""}`;
}
