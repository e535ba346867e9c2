// The yard pages: a hash router over the read-only JSON API.
import { api, ci, decoded, fmt, h, mount, pct, plural, when } from "./dom.js";
import { showLive, showReplay, stopViewer } from "./viewer.js";
import { showBot, showLadder } from "./ladder.js";
import { showPlay, stopPlay } from "./play.js";

const main = document.getElementById("main");
let refresh = null;

function every(ms, fn) {
  refresh = setInterval(fn, ms);
}

/** A table in a box of its own that scrolls sideways: a narrow screen scrolls the table,
 * never the page. */
function scroller(table) {
  return h("div", { class: "scroll" }, table);
}

function link(text, hash) {
  return h("a", { href: hash }, text);
}

/** A page address: `#/` and the path segments, each %-encoded (ids are data). */
function hashTo(...segments) {
  return `#/${segments.map((s) => encodeURIComponent(s)).join("/")}`;
}

/** What a selection is, in words: "ruleset grid5 in tournament t1", "player x". */
function described(filters) {
  const words = { rules: "ruleset", tournament: "tournament", player: "player",
    result: "result", termination: "termination", offset: "offset" };
  return Object.entries(words).filter(([k]) => filters[k] !== undefined && filters[k] !== null &&
    filters[k] !== "").map(([k, w]) => `${w} ${filters[k]}`).join(", ");
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") q.set(k, v);
  const text = q.toString();
  return text ? `?${text}` : "";
}

// ---------------------------------------------------------------------- leaderboard

function leaderboardTable(board) {
  const rows = board.rows.map((r) => h("tr", { "data-player": r.player },
    h("td", { class: "num" }, String(r.rank)),
    h("td", { class: "player" }, link(r.player, `#/games${query({ player: r.player, rules: board.ruleset })}`)),
    h("td", { class: "num elo" }, fmt(r.elo)),
    h("td", { class: "num" }, ci(r.ci95)),
    h("td", { class: "num" }, fmt(r.elo_mrx)),
    h("td", { class: "num" }, ci(r.ci95_mrx)),
    h("td", { class: "num" }, fmt(r.elo_detectives)),
    h("td", { class: "num" }, ci(r.ci95_detectives)),
    h("td", { class: "num" }, String(r.games)),
    h("td", { class: "num" }, `${r.mrx_wins}/${r.mrx_games}`),
    h("td", { class: "num" }, `${r.detective_wins}/${r.detective_games}`),
    h("td", { class: "num" }, pct(r.superiority_next))));
  return scroller(h("table", { class: "leaderboard", "data-ruleset": board.ruleset },
    h("thead", {}, h("tr", {}, ["#", "player", "Elo", "95% CI", "Elo as X", "95% CI",
      "Elo as detectives", "95% CI", "games", "X wins", "det. wins", "LOS next"]
      .map((t) => h("th", {}, t)))),
    h("tbody", {}, rows)));
}

function heat(rate) {
  // Detectives' win rate: 0 red (Mister X wins), 0.5 pale, 1 blue (detectives win).
  const hue = rate < 0.5 ? 5 : 215;
  const strength = Math.abs(rate - 0.5) * 2;
  // At least 62 % light: the cell's small print keeps 4.5:1 (WCAG 1.4.3).
  return `hsl(${hue}, 70%, ${Math.round(96 - 34 * strength)}%)`;
}

function matrixTable(matrix) {
  const head = h("tr", {}, h("th", {}, "detectives ↓ / Mister X →"),
    matrix.columns.map((c) => h("th", {}, c)));
  const body = matrix.rows.map((r, i) => h("tr", {}, h("th", {}, r),
    matrix.cells[i].map((cell) => {
      if (!cell.games) return h("td", { class: "cell empty" }, "–");
      const title = `${cell.detectives} hunting ${cell.mrx}: detectives won ` +
        `${cell.detective_wins}/${cell.games} (${pct(cell.rate)}, Wilson 95% ` +
        `${pct(cell.ci95[0])}–${pct(cell.ci95[1])})`;
      const td = h("td", { class: "cell", title, "data-rate": cell.rate },
        pct(cell.rate), h("small", {}, `${pct(cell.ci95[0])}–${pct(cell.ci95[1])} n=${cell.games}`));
      td.style.backgroundColor = heat(cell.rate);
      return td;
    })));
  return scroller(h("table", { class: "matrix", "data-ruleset": matrix.ruleset },
    h("thead", {}, head), h("tbody", {}, body)));
}

/** Why there is nothing to rate, in words that name the selection (`tournament`: its
 * listing, when the selection names one). */
function noRatings(params, tournament) {
  const what = described({ rules: params.rules, tournament: params.tournament });
  if (!what) return "No decided games yet. Play some with `yard tournament run`.";
  const parts = [`No decided games of ${what}.`];
  if (tournament && params.rules && tournament.rules && tournament.rules !== params.rules) {
    parts.push(` Tournament ${tournament.tournament_id} plays ruleset ${tournament.rules}.`);
  } else if (tournament && tournament.status !== "finished") {
    parts.push(" A game is rated once its paired game (the same deal, roles swapped) is over.");
  }
  return parts;
}

/** The ratings of the selection; with no selection, one request per ruleset of
 * `rulesets` (each is computed and cached on its own, as when it is picked: one request for
 * all of them can stay "computing" on a server whose ladder stores games all the time). */
async function ratingsBlock(params, tournament, rulesets = []) {
  const both = (p) => Promise.all([api("/api/leaderboard", p), api("/api/matrix", p)]);
  let boards, matrices;
  if (!params.rules && !params.tournament && rulesets.length) {
    const parts = await Promise.all(rulesets.map((r) => both({ rules: r })));
    boards = { rulesets: parts.map(([b]) => b) };
    matrices = { rulesets: parts.map(([, m]) => m) };
  } else {
    [boards, matrices] = await both(params);
  }
  const sections = boards.rulesets || [boards];
  const mats = new Map((matrices.rulesets || [matrices]).map((m) => [m.ruleset, m]));
  if (!sections.length || !sections.some((b) => b.rows.length)) {
    return [h("p", { class: "note", id: "no-games" }, noRatings(params, tournament))];
  }
  return sections.filter((b) => b.rows.length).map((b) => h("section", { class: "ruleset" },
    h("h2", {}, `Ruleset ${b.ruleset}`),
    h("p", {}, `${plural(b.games, "game")} rated`, b.excluded_games ? ` (${b.excluded_games} aborted left out)` : "",
      ` · Mister X advantage A = ${fmt(b.mrx_advantage)} Elo (95% CI ${ci(b.mrx_advantage_ci95)})`,
      ` · anchor: ${b.anchor} = 0`),
    leaderboardTable(b),
    h("h2", {}, "Win-rate matrix (detectives' win rate)"),
    mats.has(b.ruleset) ? matrixTable(mats.get(b.ruleset)) : h("p", {}, "–")));
}

async function showLeaderboard(params) {
  const rules = params.get("rules") || "";
  const tournament = params.get("tournament") || "";
  const tournaments = await api("/api/tournaments");
  const rulesets = [...new Set(tournaments.tournaments.map((t) => t.rules).filter(Boolean))].sort();
  if (rules && !rulesets.includes(rules)) rulesets.push(rules); // asked for: shown as chosen
  const known = tournaments.tournaments.find((t) => t.tournament_id === tournament);
  const rulesSelect = h("select", { id: "rules-filter" }, h("option", { value: "" }, "all rulesets"),
    rulesets.map((r) => h("option", { value: r, selected: r === rules }, r)));
  const tSelect = h("select", { id: "tournament-filter" }, h("option", { value: "" }, "all games"),
    tournaments.tournaments.map((t) => h("option", { value: t.tournament_id,
      selected: t.tournament_id === tournament }, `${t.tournament_id} (${t.rules})`)),
    tournament && !known ? h("option", { value: tournament, selected: true },
      `${tournament} (unknown)`) : null);
  const apply = () => { location.hash = `#/${query({ rules: rulesSelect.value, tournament: tSelect.value })}`; };
  rulesSelect.addEventListener("change", apply);
  tSelect.addEventListener("change", apply);
  const body = h("div", { id: "ratings" });
  mount(main, h("h1", {}, "Leaderboard"),
    h("div", { class: "controls" }, h("label", {}, "Ruleset ", rulesSelect),
      h("label", {}, "Tournament ", tSelect)),
    h("p", { class: "note" }, "Elo by maximum likelihood with a Mister X advantage term; " +
      "95% intervals from a bootstrap over role-swapped pairs; LOS: likelihood of " +
      "superiority over the next row. Same numbers as `yard leaderboard --json`."),
    body);
  if (tournament && !known) {
    mount(body, h("p", { class: "error", id: "no-games" }, `No tournament ${tournament} is stored ` +
      "here.", " ", link("All games", "#/")));
    return;
  }
  mount(body, h("p", { class: "note", id: "computing" }, "Computing the ratings…"));
  const load = async () => mount(body, await ratingsBlock({ rules, tournament }, known, rulesets));
  await load();
  if (tournaments.tournaments.some((t) => t.status === "running")) every(5000, load);
}

// ---------------------------------------------------------------------- tournaments

function statusBadge(status) {
  return h("span", { class: `badge ${status}` }, status);
}

function progress(t) {
  return [h("progress", { max: Math.max(1, t.scheduled), value: t.played }),
    ` ${t.played}/${t.scheduled}`];
}

async function showTournaments() {
  const body = h("div");
  mount(main, h("h1", {}, "Tournaments"), body);
  const load = async () => {
    const data = await api("/api/tournaments");
    if (!data.tournaments.length) {
      mount(body, h("p", { class: "note" }, "No tournaments stored."));
      return;
    }
    mount(body, scroller(h("table", { id: "tournaments" },
      h("thead", {}, h("tr", {}, ["tournament", "rules", "bots", "format", "progress",
        "status", "SPRT", "created"].map((t) => h("th", {}, t)))),
      h("tbody", {}, data.tournaments.map((t) => h("tr", { "data-tournament": t.tournament_id },
        h("td", {}, link(t.tournament_id, hashTo("tournaments", t.tournament_id))),
        h("td", {}, t.rules || ""), h("td", {}, t.bots.join(", ")),
        h("td", {}, t.format || ""), h("td", {}, progress(t)),
        h("td", {}, statusBadge(t.status)),
        h("td", {}, t.sprt ? `${t.sprt.decision} (LLR ${fmt(t.sprt.llr, 2)})` : ""),
        h("td", {}, when(t.created_at))))))));
  };
  await load();
  every(3000, load);
}

function sprtBlock(sprt) {
  if (!sprt) return null;
  const num = (v, d = 3) => (typeof v === "number" ? fmt(v, d) : "–");
  const shown = new Set(["llr", "lower", "upper", "elo", "elo_ci", "decision", "pairs",
    "pentanomial", "players", "max_pairs", "incomplete_pairs"]);
  const players = sprt.players ? `${sprt.players[0]} vs ${sprt.players[1]}` : "";
  const rows = [
    ["decision", h("span", { class: `badge sprt-${sprt.decision}` }, String(sprt.decision))],
    ["players", players],
    ["LLR", `${num(sprt.llr)} (bounds ${num(sprt.lower)} … ${num(sprt.upper)})`],
    ["Elo", `${num(sprt.elo, 1)} (95% ${sprt.elo_ci ? `${num(sprt.elo_ci[0], 1)} … ${num(sprt.elo_ci[1], 1)}` : "–"})`],
    ["pairs", `${sprt.pairs}${sprt.max_pairs ? ` of at most ${sprt.max_pairs}` : ""}` +
      `${sprt.incomplete_pairs ? ` (+${sprt.incomplete_pairs} incomplete)` : ""}`],
    ["pentanomial", (sprt.pentanomial || []).join(" / ")],
    ...Object.entries(sprt).filter(([k]) => !shown.has(k))
      .map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : String(v)]),
  ];
  const bar = h("progress", { id: "sprt-llr", max: 1000,
    value: Math.round(1000 * Math.min(1, Math.max(0, (sprt.llr - sprt.lower) / ((sprt.upper - sprt.lower) || 1)))) });
  return [h("h2", {}, "SPRT"), h("p", {}, `H0 ${num(sprt.lower)} `, bar, ` H1 ${num(sprt.upper)}`),
    scroller(h("table", { id: "sprt" }, h("tbody", {}, rows.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v))))))];
}

function dealsLine(deals) {
  // How the games were dealt: a secret key (published when the tournament is finished) or
  // a public seed (a research run: every deal can be computed in advance).
  if (!deals) return null;
  if (deals.kind === "random") {
    return h("p", { id: "deals", "data-kind": "random" },
      "Deals: each game from the server's random source (a standing ladder or Play games: " +
      "no schedule, nothing to predict)");
  }
  if (deals.kind === "seeded") {
    return h("p", { id: "deals", "data-kind": "seeded" },
      `Deals: seed ${deals.seed} (reproducible, predictable: anyone who knows the seed can ` +
      "compute every deal in advance)");
  }
  return h("p", { id: "deals", "data-kind": "secret" }, "Deals: secret deals",
    deals.secret ? ` · key ${deals.secret} (published now that the tournament is finished)`
      : " (the key is published when the tournament is finished)");
}

async function showTournament(id) {
  const head = h("div");
  const ratings = h("div");
  const games = h("div");
  mount(main, head, ratings, h("h2", {}, "Games"),
    h("p", { class: "note" }, "A game is listed and rated once its paired game (the same " +
      "deal with the roles swapped) is over too."), games);
  const load = async () => {
    const t = await api(`/api/tournaments/${encodeURIComponent(id)}`);
    mount(head, h("h1", {}, "Tournament ", t.tournament_id, " ", statusBadge(t.status)),
      h("p", {}, `${t.rules} · ${t.format || ""} · ${typeof t.pairs === "number" ? plural(t.pairs, "pair") : "? pairs"} · bots: ${t.bots.join(", ")}`),
      dealsLine(t.deals),
      h("p", { id: "progress" }, "Progress: ", progress(t)),
      sprtBlock(t.sprt),
      h("p", {}, link("live games", "#/live"), " · ", link("leaderboard page", `#/${query({ tournament: id })}`)));
    mount(ratings, await ratingsBlock({ tournament: id }, t));
    mount(games, await gamesTable({ tournament: id, limit: 100 }));
    return t;
  };
  try {
    const t = await load();
    if (t.status !== "finished") every(3000, load);
  } catch (err) {
    mount(main, h("h1", {}, "Tournament ", id), h("p", { class: "error" }, err.message));
  }
}

// ---------------------------------------------------------------------- games

function entrant(name, bot) {
  // A tournament's player (a team such as "run2/rush") and, when it differs, its bot.
  return [name, name !== bot ? h("small", { class: "bot" }, ` (${bot})`) : null];
}

/** Why a games list is empty, in words that name the selection. */
function noGames(data, filters) {
  const what = described({ ...filters, offset: null });
  if (data.total > 0) {
    return [`No games on this page: ${plural(data.total, "game")} ${what ? `of ${what} ` : ""}` +
      `match, and this page starts at game ${data.offset + 1}. `,
    filters.page ? link("First page", `#/games${query(filters.page)}`) : null];
  }
  if (!what) return "No games stored yet. Play some with `yard tournament run`.";
  return [`No games of ${what}.`, filters.page ? [" ", link("All games", "#/games")] : null];
}

/** The games list of `filters` (API filters); `page`: the games page's own filters, for
 * its pager links (null elsewhere). */
async function gamesTable(filters, page = null) {
  const data = await api("/api/games", filters);
  const context = { ...filters, page };
  if (!data.games.length) return h("p", { class: "note", id: "no-games" }, noGames(data, context));
  return h("div", {}, h("p", { class: "note" }, plural(data.total, "game")),
    scroller(h("table", { id: "games" },
      h("thead", {}, h("tr", {}, ["game", "ruleset", "Mister X", "detectives", "winner",
        "termination", "moves", "finished"].map((t) => h("th", {}, t)))),
      h("tbody", {}, data.games.map((g) => h("tr", { "data-game": g.game_id },
        h("td", {}, link(g.game_id, hashTo("games", g.game_id))),
        h("td", {}, g.ruleset),
        h("td", { class: "player" }, entrant((g.entrants || {}).mrx || g.mrx_player, g.mrx_player)),
        h("td", { class: "player" }, entrant((g.entrants || {}).detectives || g.detective_player,
          g.detective_player)),
        h("td", {}, g.winner || "—"),
        h("td", {}, g.termination, g.fault_seat ? ` (${g.fault_seat})` : ""),
        h("td", { class: "num" }, String(g.moves)), h("td", {}, when(g.finished_at))))))),
    pager(data, page));
}

function pager(data, page) {
  if (!page) return null;
  const prev = data.offset > 0 ? link("← newer", `#/games${query({ ...page, offset: Math.max(0, data.offset - data.limit) })}`) : null;
  const next = data.offset + data.limit < data.total
    ? link("older →", `#/games${query({ ...page, offset: data.offset + data.limit })}`) : null;
  return h("p", {}, prev, " ", next);
}

const RESULTS = ["mrx", "detectives", "none"];

/** What is wrong with the games page's own parameters (null: nothing), said before
 * asking the API. */
function badGamesParams(f) {
  if (f.offset && !/^[0-9]{1,9}$/.test(f.offset)) {
    return `offset must be a whole number from 0 (the newest game), not ${f.offset}.`;
  }
  if (f.result && !RESULTS.includes(f.result)) {
    return `result must be one of ${RESULTS.join(", ")}, not ${f.result}.`;
  }
  return null;
}

async function showGames(params) {
  const f = Object.fromEntries(["rules", "player", "result", "termination", "tournament",
    "offset"].map((k) => [k, params.get(k) || ""]));
  const input = (name, placeholder) => h("input", { name, value: f[name], placeholder, size: 12,
    "aria-label": placeholder });
  const result = h("select", { name: "result", "aria-label": "result" }, ["", "mrx", "detectives", "none"].map((v) =>
    h("option", { value: v, selected: v === f.result }, v || "any result")));
  const form = h("form", { class: "controls", id: "games-filter" },
    input("rules", "ruleset"), input("player", "player"), result,
    input("termination", "termination"), input("tournament", "tournament"),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    location.hash = `#/games${query(Object.fromEntries(data.entries()))}`;
  });
  const body = h("div");
  mount(main, h("h1", {}, "Games"), form, body);
  const page = { ...f };
  delete page.offset;
  const bad = badGamesParams(f);
  if (bad) {
    mount(body, h("p", { class: "error" }, bad, " ", link("All games", "#/games")));
    return;
  }
  try {
    mount(body, await gamesTable({ ...f, limit: 50 }, page));
  } catch (err) {
    mount(body, h("p", { class: "error" }, err.message));
  }
}

// ---------------------------------------------------------------------- live

async function showLiveList() {
  const body = h("div");
  mount(main, h("h1", {}, "Live games"), body);
  const load = async () => {
    const data = await api("/api/live");
    if (!data.games.length) {
      mount(body, h("p", { class: "note", id: "no-live" }, "No game is being played on this server now."));
      return;
    }
    mount(body, scroller(h("table", { id: "live" },
      h("thead", {}, h("tr", {}, ["game", "ruleset", "Mister X", "detectives", "move",
        "to move", "tournament"].map((t) => h("th", {}, t)))),
      h("tbody", {}, data.games.map((g) => h("tr", { "data-game": g.game_id },
        h("td", {}, link(g.game_id, hashTo("live", g.game_id))),
        h("td", {}, g.ruleset), h("td", {}, g.players.mrx),
        h("td", {}, [...new Set(Object.entries(g.players).filter(([s]) => s !== "mrx").map(([, n]) => n))].join(", ")),
        h("td", { class: "num" }, String(g.move_number)), h("td", {}, g.to_move),
        h("td", {}, g.tournament_id ? link(g.tournament_id, hashTo("tournaments", g.tournament_id)) : "")))))));
  };
  await load();
  every(1500, load);
}

// ---------------------------------------------------------------------- router

async function route() {
  if (refresh) clearInterval(refresh);
  refresh = null;
  stopViewer();
  stopPlay();
  const hash = location.hash.replace(/^#/, "") || "/";
  const cut = hash.indexOf("?");
  const path = cut < 0 ? hash : hash.slice(0, cut);
  const params = new URLSearchParams(cut < 0 ? "" : hash.slice(cut + 1));
  const parts = path.split("/").filter(Boolean).map(decoded);
  const section = parts[0] || "leaderboard";
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("active", a.dataset.nav === section);
  }
  // Each page and how many path segments it takes: anything else is "no such page".
  // (ladder: the ladder, one ruleset's, or a bot's page: #/ladder/RULES/bots/NAME.)
  const pages = new Map([["leaderboard", 1], ["tournaments", 2], ["games", 2], ["live", 2],
    ["ladder", 4], ["play", 1]]);
  const botPage = section === "ladder" && parts.length === 4 && parts[2] === "bots";
  try {
    if (parts.includes(null)) {
      mount(main, h("h1", {}, "Malformed address"), h("p", { class: "error" },
        `The address ${location.hash.slice(0, 200)} has a broken %-escape. `,
        link("Leaderboard", "#/")));
    } else if (!pages.has(section) || parts.length > pages.get(section) ||
      (section === "ladder" && parts.length > 2 && !botPage)) {
      mount(main, h("h1", {}, "No such page"), h("p", { class: "error" },
        `Nothing is shown at ${location.hash.slice(0, 200)}. `, link("Leaderboard", "#/")));
    } else if (section === "leaderboard") await showLeaderboard(params);
    else if (section === "tournaments" && parts[1]) await showTournament(parts[1]);
    else if (section === "tournaments") await showTournaments();
    else if (section === "games" && parts[1]) await showReplay(main, parts[1], params);
    else if (section === "games") await showGames(params);
    else if (section === "live" && parts[1]) await showLive(main, parts[1]);
    else if (botPage) await showBot(main, parts[1], parts[3]);
    else if (section === "ladder") await showLadder(main, parts[1] || null, every);
    else if (section === "play") await showPlay(main, params);
    else await showLiveList();
  } catch (err) {
    mount(main, h("p", { class: "error" }, `Could not load: ${err.message}`));
  }
  document.body.setAttribute("data-ready", hash);
}

let lastRouted = null;
window.addEventListener("hashchange", () => {
  // The replay viewer rewrites its own hash (permalinks) without a reload.
  const hash = location.hash;
  if (hash === lastRouted) return;
  if (/^#\/games\/[^?]+/.test(hash) && /^#\/games\/[^?]+/.test(lastRouted || "") &&
      hash.split("?")[0] === (lastRouted || "").split("?")[0] && document.getElementById("viewer")) {
    lastRouted = hash;
    return;
  }
  lastRouted = hash;
  route();
});
lastRouted = location.hash;
route();
