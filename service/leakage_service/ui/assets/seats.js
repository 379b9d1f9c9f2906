// Seats: whose posterior a figure is (docs/games.md, "Seats"). The options row's seat picker,
// filled from GET /v1/seats (the library's words for what each seat's observer knows, so
// the page holds no copy of them), and the sentence each view of a game or a job shows
// beside the reader's: the seat asked for, or, when none was, the game's default seat by
// name (SpyGame's under spy_assignment, The Chameleon's under include_chameleon).

import { api } from "./api.js";
import { h } from "./dom.js";

const $ = (id) => document.getElementById(id);

let known = null; // GET /v1/seats: { games: [{game, title, seats, default, option, default_by_option, outside}], aliases }

export async function loadSeats() {
  known = await api.seats();
  const sel = $("seat-select");
  const was = sel.value;
  sel.replaceChildren(
    new Option("each game's default seat", ""),
    ...known.games.map((g) => h("optgroup", { label: g.title },
      g.seats.map((s) => {
        const o = new Option(`${s.seat}: ${s.knows}${s.seat === g.default ? " (default)" : ""}`, s.seat);
        o.dataset.game = g.game;
        return o;
      }))),
  );
  sel.value = seatValue(was);
}

// The seat a name stands for (an old name resolved); "" for none or a name not offered.
export function seatValue(name) {
  if (!name || !known) return "";
  const seat = known.aliases[name] || name;
  return known.games.some((g) => g.seats.some((s) => s.seat === seat)) ? seat : "";
}

// The game kind a seat belongs to (null: none picked).
export function seatGame(seat) {
  const g = known && known.games.find((x) => x.seats.some((s) => s.seat === seat));
  return g ? g.game : null;
}

// The picker offers the seats of the game on show (`game`: its kind; null: no game on show,
// every seat, as a job may hold either kind). A seat of another kind is put back to the
// default first; returns whether it was.
export function fitSeats(game) {
  const sel = $("seat-select");
  const reset = Boolean(game && sel.value && seatGame(sel.value) !== game);
  if (reset) sel.value = "";
  for (const o of sel.querySelectorAll("option[data-game]")) {
    o.disabled = Boolean(game) && o.dataset.game !== game;
    o.title = o.disabled ? "not a seat of the game on show" : "";
  }
  return reset;
}

function describe(seat) {
  for (const g of (known && known.games) || []) {
    const s = [...g.seats, ...g.outside].find((x) => x.seat === seat);
    if (s) return s;
  }
  return { seat, knows: seat, sentence: `Figures from the seat ${seat}.` };
}

// A game kind's default seat under `params` (a job's params, a report's settings, the
// page's options): the value of the option that decides it, the default when absent.
function defaultSeat(g, params) {
  const v = params ? params[g.option] : undefined;
  return v === undefined || v === null ? g.default : g.default_by_option[String(v)] || g.default;
}

// The sentence a view shows: the seat of `params` (its `seat`, else each game kind's default,
// said to be the default and named), for the game kinds `games` holds (none known: both).
export function seatSentence(params, games) {
  if (!known) return "";
  const p = params || {};
  const chosen = seatValue(p.seat);
  if (chosen) return describe(chosen).sentence;
  const kinds = known.games.filter((g) => !games || !games.length || games.includes(g.game));
  const each = (kinds.length ? kinds : known.games).map((g) => ({ g, s: describe(defaultSeat(g, p)) }));
  if (each.length === 1) {
    const [{ g, s }] = each;
    return `Figures from the default seat of ${g.title}, ${s.seat}: ${s.knows}.`;
  }
  return `Figures from each game's default seat: ${each.map(({ g, s }) => `${g.title}, ${s.seat} (${s.knows})`).join("; ")}.`;
}

// The picker's first choice names the default seats the other options give, and the line
// under the row says in full what the seat picked knows (`game`: the kind on show, or null).
export function describeChoice(params, game) {
  if (!known) return;
  const p = params || {};
  const kinds = known.games.filter((g) => !game || g.game === game);
  const first = $("seat-select").options[0];
  first.textContent = `${kinds.length === 1 ? "the game's" : "each game's"} default seat (${kinds.map((g) => `${g.title}: ${defaultSeat(g, p)}`).join("; ")})`;
  $("seat-note").textContent = seatSentence({ ...p, seat: $("seat-select").value || undefined }, game ? [game] : null);
}
