// The HTTP API, as the page uses it. Paths are relative to the page (/ui), so the page works
// behind a proxy prefix too. The API key (when the server asks for one) is kept in
// sessionStorage and sent as X-API-Key.

const KEY = "leakage-api-key";

// The server's messages speak to the command line and to API clients; on the page they name
// the page's own controls instead of a flag or a route.
const PAGE_WORDS = [
  [/pass --input-format|set the input_format query parameter/g, "choose the file's format under Input format"],
  [/submit a job \(POST \/v1\/jobs\)/g, "submit it as a job (Jobs, below)"],
  [/ ?\((?:GET|POST|PUT|DELETE) \/v1\/[^)]*\)/g, ""],
  [/(?:GET|POST|PUT|DELETE) \/v1\/\S+/g, "the server"],
];

export function pageWords(message) {
  return PAGE_WORDS.reduce((m, [re, to]) => m.replace(re, to), message);
}

export class ApiError extends Error {
  constructor(status, body, text) {
    const err = body && body.error;
    const where = err && err.field ? ` (${err.field})` : "";
    super(pageWords(err ? `${err.message}${where}` : `HTTP ${status}: ${text.slice(0, 200)}`));
    this.status = status;
    this.type = err ? err.type : null;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

function url(path, params) {
  const u = new URL(path, document.baseURI);
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === "") continue;
    for (const one of Array.isArray(v) ? v : [v]) u.searchParams.append(k, String(one));
  }
  return u;
}

// A backend's first load (a judge's model can take a minute or more) is answered with 503
// backend_loading and Retry-After while it goes on: the request is sent again after that
// many seconds until the backend is loaded or its load fails (another error), and #status
// says meanwhile how long the load has taken and how long the last one took.
async function request(method, path, { params, body, type } = {}) {
  const headers = { Accept: "application/json" };
  const key = apiKey();
  if (key) headers["X-API-Key"] = key;
  if (body !== undefined && !(body instanceof FormData)) headers["Content-Type"] = type || "application/json";
  for (;;) {
    let r;
    try {
      r = await fetch(url(path, params), { method, headers, body });
    } catch (e) {
      throw new ApiError(0, null, `the server did not answer (${e.message})`);
    }
    const text = await r.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (r.status === 503 && data && data.error && data.error.type === "backend_loading") {
      const wait = Math.min(Math.max(Number(r.headers.get("Retry-After")) || 5, 1), 30);
      const shown = document.getElementById("status");
      if (shown && document.body.dataset.state === "loading") {
        shown.textContent = `The server is ${data.error.message}. The page tries again by itself.`;
      }
      await new Promise((done) => setTimeout(done, wait * 1000));
      continue;
    }
    if (!r.ok) throw new ApiError(r.status, data, text);
    return { data, text, headers: r.headers };
  }
}

// A response's body as a Blob (a download): the same key and errors as request().
async function blob(path, params) {
  const headers = {};
  const key = apiKey();
  if (key) headers["X-API-Key"] = key;
  let r;
  try {
    r = await fetch(url(path, params), { headers });
  } catch (e) {
    throw new ApiError(0, null, `the server did not answer (${e.message})`);
  }
  if (!r.ok) {
    const text = await r.text();
    let data = null;
    try { data = JSON.parse(text); } catch { data = null; }
    throw new ApiError(r.status, data, text);
  }
  return r.blob();
}

const job = (id, tail = "") => `v1/jobs/${encodeURIComponent(id)}${tail}`;

export const api = {
  jobs: async () => (await request("GET", "v1/jobs")).data,
  // several files, one job: each a 'file' part under its own name (which the job keeps)
  submitFiles: async (files, params) => {
    const form = new FormData();
    for (const f of files) form.append("file", f, f.name);
    return (await request("POST", "v1/jobs", { params, body: form })).data;
  },
  submitPaths: async (paths, params) =>
    (await request("POST", "v1/jobs", { params, body: JSON.stringify(paths.length === 1 ? { path: paths[0] } : { paths }) })).data,
  cancelJob: async (id) => (await request("POST", job(id, "/cancel"))).data,
  deleteJob: async (id) => { await request("DELETE", job(id)); },
  records: async (id) => (await request("GET", job(id, "/records"))).data,
  results: (id, format) => blob(job(id, "/results"), { format }),
  reportHtml: (id, by) => blob(job(id, "/report.html"), { by }),
  backends: async () => (await request("GET", "v1/backends")).data,
  examples: async () => (await request("GET", "v1/examples")).data,
  example: async (name) => (await request("GET", `v1/examples/${encodeURIComponent(name)}`)).text,
  score: async (transcript, params) =>
    (await request("POST", "v1/score", { params, body: JSON.stringify(transcript) })).data,
  preview: async (transcript, clue, player, params) =>
    (await request("POST", "v1/score/preview", {
      params,
      body: JSON.stringify({ transcript, clue, player: player || undefined }),
    })).data,
  // the games of a file the page cannot read itself (an Inspect log), as transcripts
  logGames: async (file, params) =>
    (await request("POST", "v1/transcripts", { params, body: file, type: "application/octet-stream" })).data,
  inputFormats: async () => (await request("GET", "v1/transcripts/formats")).data,
  // the seats each game kind may be scored from, what each seat's observer knows
  seats: async () => (await request("GET", "v1/seats")).data,
  job: async (id) => (await request("GET", `v1/jobs/${encodeURIComponent(id)}`)).data,
  curves: async (id, by) =>
    (await request("GET", `v1/jobs/${encodeURIComponent(id)}/curves`, { params: { by } })).data,
  // a job's reveal-vs-conceal plane; two models compared where they met (without a and b:
  // the models there are)
  plane: async (id, params) => (await request("GET", job(id, "/plane"), { params })).data,
  // which model leaks least (leakage.leaderboard/1), and its rows as CSV
  leaderboard: async (id) => (await request("GET", job(id, "/leaderboard"))).data,
  leaderboardCsv: (id) => blob(job(id, "/leaderboard"), { format: "csv" }),
  compareModels: async (id, a, b) => (await request("GET", job(id, "/compare"), { params: { a, b } })).data,
  // the game id as a query parameter: any id, "." and ".." included (dot segments of a path
  // are removed by the URL parser), and "/" needs no escaping
  jobGame: async (id, game, record) =>
    (await request("GET", job(id, "/games"), { params: { game_id: game, record } })).data,
};
