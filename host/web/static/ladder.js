// The standing ladder's pages: the live table per ruleset (/api/ladder), the games being
// played on it now (/api/live), and one bot's page (/api/ladder/RULES/bots/NAME): its
// rating after each game as an SVG plot, forfeits, record by role and recent games.
import { api, fmt, h, mount, pct, plural, s, when } from "./dom.js";

function scroller(table) {
  return h("div", { class: "scroll" }, table);
}

function hashTo(...segments) {
  return `#/${segments.map((x) => encodeURIComponent(x)).join("/")}`;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") q.set(k, v);
  const text = q.toString();
  return text ? `?${text}` : "";
}

/** The group (tournament id) a ruleset's ladder games, and people's games, are stored
 * under (server/ladder.py). */
export const ladderGroup = (rules) => `ladder-${rules}`;
export const playGroup = (rules) => `play-${rules}`;

/** "25.0 ± 16.7": mu and two sigmas (about 95%). */
export function rating(r) {
  if (!r || typeof r.mu !== "number") return "–";
  return `${fmt(r.mu, 1)} ± ${fmt(2 * r.sigma, 1)}`;
}

function record(side) {
  if (!side || !side.games) return "–";
  return `${side.wins}/${side.games} (${pct(side.win_rate)})`;
}

function forfeitsText(forfeits) {
  const entries = Object.entries(forfeits || {}).filter(([, n]) => n);
  if (!entries.length) return "–";
  return entries.sort((a, b) => b[1] - a[1]).map(([cause, n]) => `${cause} ${n}`).join(", ");
}

/** A bot's state in words (and a badge class): paused (why), connected, last seen. */
function botStatus(row, live) {
  if (row.paused) return h("span", { class: "badge paused", title: row.paused }, `paused: ${row.paused}`);
  if (row.connected) return h("span", { class: "badge running" }, "connected");
  if (!live) return h("span", { class: "badge" }, "not serving");
  return h("span", { class: "badge" }, "offline");
}

/** The full-history Elo that orders the ladder, with its 95% interval. */
function eloText(row) {
  if (row.elo === null || row.elo === undefined) return "–";
  const ci = row.elo_ci ? ` [${fmt(row.elo_ci[0], 0)}, ${fmt(row.elo_ci[1], 0)}]` : "";
  return `${fmt(row.elo, 0)}${ci}`;
}

function ladderTable(rules, rows, live) {
  return scroller(h("table", { class: "ladder", "data-ruleset": rules },
    h("thead", {}, h("tr", {}, ["#", "bot", "Elo [95%]", "live rating (μ ± 2σ)", "ordinal",
      "games", "won as Mister X", "won as detectives", "status", "forfeits", "last seen"]
      .map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map((r) => h("tr", { "data-bot": r.name,
      "data-connected": r.connected ? "1" : "0" },
    h("td", { class: "num" }, String(r.rank)),
    h("td", { class: "player" }, h("a", { href: hashTo("ladder", rules, "bots", r.name) }, r.name)),
    h("td", { class: "num" }, eloText(r)),
    h("td", { class: "num" }, rating(r)),
    h("td", { class: "num" }, fmt(r.ordinal, 1)),
    h("td", { class: "num" }, String(r.games)),
    h("td", { class: "num" }, record(r.mrx)),
    h("td", { class: "num" }, record(r.detectives)),
    h("td", {}, botStatus(r, live)),
    h("td", {}, forfeitsText(r.forfeits)),
    h("td", {}, r.connected ? "now" : (r.last_seen ? when(r.last_seen) : "–")))))));
}

function peopleTable(rules, rows) {
  if (!rows || !rows.length) {
    return h("p", { class: "note" }, "Nobody has played this ruleset on the Play page yet. ",
      h("a", { href: `#/play${query({ rules })}` }, "Play a bot"), ".");
  }
  return scroller(h("table", { class: "people", "data-ruleset": rules },
    h("thead", {}, h("tr", {}, ["#", "player", "rating (μ ± 2σ)", "ordinal", "games"]
      .map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map((r) => h("tr", { "data-player": r.name },
      h("td", { class: "num" }, String(r.rank)),
      h("td", { class: "player" }, h("a", { href: `#/games${query({ tournament: playGroup(rules), player: r.name })}` }, r.name)),
      h("td", { class: "num" }, rating(r)),
      h("td", { class: "num" }, fmt(r.ordinal, 1)),
      h("td", { class: "num" }, String(r.games)))))));
}

/** The ladder's and people's games running now (from /api/live). */
function liveTable(games) {
  if (!games.length) {
    return h("p", { class: "note", id: "no-ladder-live" }, "No ladder or Play game is being played now.");
  }
  return scroller(h("table", { id: "ladder-live" },
    h("thead", {}, h("tr", {}, ["game", "ruleset", "kind", "Mister X", "detectives", "move",
      "to move"].map((t) => h("th", {}, t)))),
    h("tbody", {}, games.map((g) => h("tr", { "data-game": g.game_id },
      h("td", {}, h("a", { href: hashTo("live", g.game_id) }, g.game_id)),
      h("td", {}, g.ruleset),
      h("td", {}, g.tournament_id.startsWith("play-") ? "person vs bot" : "ladder"),
      h("td", {}, g.players.mrx || ""),
      h("td", {}, [...new Set(Object.entries(g.players).filter(([seat]) => seat !== "mrx")
        .map(([, n]) => n))].join(", ")),
      h("td", { class: "num" }, String(g.move_number)),
      h("td", {}, g.to_move || ""))))));
}

/** The ladder page (`only`: one ruleset's section); `every(ms, fn)` refreshes it. */
export async function showLadder(main, only, every) {
  const body = h("div", { id: "ladder" });
  mount(main, h("h1", {}, only ? `Ladder: ${only}` : "Ladder"), body);
  const load = async () => {
    const [data, live] = await Promise.all([api("/api/ladder"),
      api("/api/live").catch(() => ({ games: [] }))]);
    const rulesets = Object.keys(data.ladders || {}).filter((r) => !only || r === only);
    const parts = [h("p", { class: "note", id: "ladder-note" }, data.note || "",
      data.live ? "" : " This server runs no ladder now: the table is rebuilt from the stored ladder games.")];
    if (!rulesets.length) {
      parts.push(h("p", { class: "note", id: "no-ladder" }, only
        ? [`No ladder on ruleset ${only} here. `, h("a", { href: "#/ladder" }, "All ladders")]
        : "No ladder here yet: a server plays one with `yard serve --ladder grid5` " +
          "(bots join with `yard bot NAME --url URL --ladder grid5`)."));
    }
    for (const rules of rulesets) {
      const rows = data.ladders[rules] || [];
      const running = live.games.filter((g) => g.tournament_id &&
        (g.tournament_id === ladderGroup(rules) || g.tournament_id === playGroup(rules)));
      parts.push(h("section", { class: "ruleset", "data-ruleset": rules },
        h("h2", {}, `Ruleset ${rules}`),
        h("p", {}, plural(rows.length, "bot"), " · ",
          h("a", { href: `#/${query({ tournament: ladderGroup(rules) })}`, class: "elo-link" },
            "authoritative Elo of these games"), " · ",
          h("a", { href: `#/games${query({ tournament: ladderGroup(rules) })}` }, "stored games"), " · ",
          h("a", { href: `#/play${query({ rules })}` }, "play a bot")),
        rows.length ? ladderTable(rules, rows, data.live)
          : h("p", { class: "note" }, "No bot has joined this ladder yet."),
        h("h3", {}, "People (Play page)"),
        peopleTable(rules, (data.people || {})[rules]),
        h("h3", {}, "Being played now"),
        liveTable(running)));
    }
    mount(body, parts);
  };
  await load();
  every(3000, load);
}

// ---------------------------------------------------------------------- a bot's page

/** A step of about a quarter of `span` that reads well: 1, 2 or 5 times a power of 10. */
function niceStep(span) {
  const raw = Math.max(span, 1e-9) / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit < 1.5 ? 1 : unit < 3.5 ? 2 : unit < 7.5 ? 5 : 10) * power;
}

/** The rating after each game: mu as a line in a band of ±sigma, as an inline SVG. */
export function ratingPlot(history) {
  const W = 640, H = 240, L = 46, R = 14, T = 12, B = 36;
  const n = history.length;
  const lo = Math.min(...history.map((p) => p.mu - p.sigma));
  const hi = Math.max(...history.map((p) => p.mu + p.sigma));
  const step = niceStep(hi - lo);
  const ymin = Math.floor(lo / step) * step;
  const ymax = Math.max(Math.ceil(hi / step) * step, ymin + step);
  const x = (i) => L + (n === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (n - 1));
  const y = (v) => T + ((ymax - v) / (ymax - ymin)) * (H - T - B);
  const xy = (i, v) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`;
  const upper = history.map((p, i) => xy(i, p.mu + p.sigma));
  const lower = history.map((p, i) => xy(i, p.mu - p.sigma)).reverse();
  const ticks = [];
  for (let v = ymin; v <= ymax + step / 2; v += step) {
    ticks.push(s("g", { class: "tick" },
      s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v) }),
      s("text", { x: L - 6, y: y(v), "text-anchor": "end", "dominant-baseline": "central" },
        fmt(v, step < 1 ? 1 : 0))));
  }
  const result = (p) => (p.winner === null ? "no winner" : p.winner === p.role ? "won" : "lost");
  return s("svg", { class: "rating-plot", id: "rating-plot", viewBox: `0 0 ${W} ${H}`,
    role: "img", "aria-label": `rating after each of ${plural(n, "game")}: mu with a band of plus and minus sigma` },
  s("g", { class: "ticks" }, ticks),
  s("polygon", { class: "band", points: [...upper, ...lower].join(" ") }),
  n > 1 ? s("polyline", { class: "mu", points: history.map((p, i) => xy(i, p.mu)).join(" ") }) : null,
  s("g", { class: "points" }, history.map((p, i) => s("circle", {
    cx: x(i).toFixed(1), cy: y(p.mu).toFixed(1), r: n > 60 ? 1.5 : 3, "data-game": p.game_id },
  s("title", {}, `game ${i + 1} (${p.game_id}, ${when(p.at)}): ${p.role === "mrx" ? "Mister X" : "detectives"}, ` +
    `${result(p)} (${p.termination}); μ ${fmt(p.mu, 2)} ± σ ${fmt(p.sigma, 2)}`)))),
  s("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }),
  s("text", { class: "label", x: L, y: H - B + 16 }, n > 1 ? "game 1" : "the first game"),
  n > 1 ? s("text", { class: "label", x: W - R, y: H - B + 16, "text-anchor": "end" }, `game ${n}`) : null,
  s("text", { class: "label", x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" },
    `rating μ after each game, band μ ± σ (${when(history[0].at)} … ${when(history[n - 1].at)})`));
}

function roleTable(page) {
  const rows = [["Mister X", page.mrx], ["detectives", page.detectives]];
  return scroller(h("table", { id: "bot-record" },
    h("thead", {}, h("tr", {}, ["role", "games", "wins", "win rate"].map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map(([role, r]) => h("tr", {}, h("td", {}, role),
      h("td", { class: "num" }, String(r ? r.games : 0)),
      h("td", { class: "num" }, String(r ? r.wins : 0)),
      h("td", { class: "num" }, r ? pct(r.win_rate) : "–"))))));
}

function forfeitsBlock(forfeits) {
  const entries = Object.entries(forfeits || {}).filter(([, n]) => n).sort((a, b) => b[1] - a[1]);
  if (!entries.length) return h("p", { class: "note", id: "bot-forfeits" }, "No forfeits.");
  return scroller(h("table", { id: "bot-forfeits" },
    h("thead", {}, h("tr", {}, h("th", {}, "cause"), h("th", {}, "games"))),
    h("tbody", {}, entries.map(([cause, n]) => h("tr", { "data-cause": cause },
      h("td", {}, cause), h("td", { class: "num" }, String(n)))))));
}

/** The bot's recent ladder games, from its side: role, opponent, result. */
async function recentGames(rules, name) {
  const data = await api("/api/games", { tournament: ladderGroup(rules), player: name, limit: 20 });
  if (!data.games.length) return h("p", { class: "note" }, "No stored games.");
  return h("div", {}, h("p", { class: "note" },
    `The newest ${plural(data.games.length, "game")} of ${data.total}. `,
    h("a", { href: `#/games${query({ tournament: ladderGroup(rules), player: name })}` }, "All of them")),
  scroller(h("table", { id: "games" },
    h("thead", {}, h("tr", {}, ["game", "role", "opponent", "result", "termination", "moves",
      "finished"].map((t) => h("th", {}, t)))),
    h("tbody", {}, data.games.map((g) => {
      const role = g.mrx_player === name ? "mrx" : "detectives";
      const opponent = role === "mrx" ? g.detective_player : g.mrx_player;
      const result = g.winner === null ? "no winner" : g.winner === role ? "won" : "lost";
      return h("tr", { "data-game": g.game_id },
        h("td", {}, h("a", { href: `${hashTo("games", g.game_id)}?move=end&view=all` }, g.game_id)),
        h("td", {}, role === "mrx" ? "Mister X" : "detectives"),
        h("td", { class: "player" }, opponent),
        h("td", { class: `result ${result === "won" ? "won" : result === "lost" ? "lost" : ""}` }, result),
        h("td", {}, g.termination, g.fault_seat ? ` (${g.fault_seat})` : ""),
        h("td", { class: "num" }, String(g.moves)),
        h("td", {}, when(g.finished_at)));
    })))));
}

/** Bot `name`'s page on the `rules` ladder. */
export async function showBot(main, rules, name) {
  let page;
  try {
    page = await api(`/api/ladder/${encodeURIComponent(rules)}/bots/${encodeURIComponent(name)}`);
  } catch (err) {
    mount(main, h("h1", {}, `${name} on the ${rules} ladder`), h("p", { class: "error" }, err.message,
      " ", h("a", { href: "#/ladder" }, "The ladder")));
    return;
  }
  const ladder = await api("/api/ladder").catch(() => null);
  const row = ladder && ladder.live ? ((ladder.ladders || {})[rules] || []).find((r) => r.name === name) : null;
  const now = row ? [" · ", row.paused ? `paused: ${row.paused}` : row.connected ? "connected now"
    : "not connected", row.connected && !row.paused
    ? [" · ", h("a", { href: `#/play${query({ rules, opponent: name })}` }, "play it")] : null] : null;
  const history = page.history || [];
  mount(main, h("h1", {}, `${page.name} on the ${page.rules} ladder`),
    h("p", { id: "bot-rating" }, `Rating ${rating(page.rating)} (ordinal ${fmt(page.rating.ordinal, 1)}) after `,
      plural(page.rating.games, "game"), now, " · ",
      h("a", { href: `#/ladder/${encodeURIComponent(rules)}` }, "the ladder"), " · ",
      h("a", { href: `#/${query({ tournament: page.group })}` }, "authoritative Elo")),
    h("p", { class: "note" }, page.note || ""),
    h("h2", {}, "Rating over time"),
    history.length ? h("div", { class: "plot" }, ratingPlot(history)) : h("p", { class: "note" }, "No games yet."),
    h("div", { class: "bot-facts" },
      h("div", {}, h("h2", {}, "Record by role"), roleTable(page)),
      h("div", {}, h("h2", {}, "Forfeits by cause"), forfeitsBlock(page.forfeits))),
    h("h2", {}, "Recent games"),
    await recentGames(rules, name));
}
