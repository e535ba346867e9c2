// Replay viewer (stored games, three perspectives) and live viewer (detectives' view over
// the protocol's spectator `watch`, full truth once the game is stored).
import { api, fmt, h, mount, plural } from "./dom.js";
import { createBoard, SEAT_COLOURS } from "./board.js";

const PERSPECTIVES = [
  ["mrx", "Mister X"],
  ["detectives", "Detectives"],
  ["all", "Omniscient"],
];

let cleanup = null;

/** Stop timers, sockets and key handlers of the previous viewer. */
export function stopViewer() {
  if (cleanup) cleanup();
  cleanup = null;
}

/** `text` with a line-break opportunity (<wbr>) after each "+" and "_", so a double move
 * or a fault's name wraps between its parts in a narrow table, never inside a word. */
function breakable(text) {
  return text.split(/(?<=[+_])/).flatMap((part, i) => (i ? [h("wbr"), part] : [part]));
}

function seatLabel(seat) {
  return seat === "mrx" ? "Mister X" : seat.toUpperCase();
}

function travelLog(rules, log, moveNumber) {
  const reveals = new Set(rules.reveal_moves);
  const slots = [];
  for (let slot = 1; slot <= rules.max_moves; slot++) {
    const entry = slot <= moveNumber ? log[slot - 1] : null;
    const classes = ["slot"];
    if (reveals.has(slot)) classes.push("reveal");
    if (!entry) classes.push("future");
    else classes.push(`t-${entry.ticket}`);
    const station = entry ? (entry.station === null || entry.station === undefined
      ? "?" : String(entry.station)) : "";
    slots.push(h("div", { class: classes.join(" "), "data-slot": slot },
      h("span", { class: "t" }, entry ? entry.ticket : String(slot)),
      h("span", { class: "st" }, station)));
  }
  return h("div", { class: "travel-log", id: "travel-log" }, slots);
}

function playersLine(players) {
  return h("div", { class: "players" }, Object.entries(players).map(([seat, name], i) =>
    h("span", {}, h("b", {}, `${seatLabel(seat)}: `), name)));
}

/** The pieces' key, added to the board's legend of transports. */
function pieceLegend() {
  return [h("span", {}, h("i", { class: "swatch d-mrx" }), "Mister X"),
    h("span", {}, h("i", { class: "swatch d-possible" }), "possible location"),
    h("span", {}, "dashed ring: last seen")];
}

/** A board for a viewer in a new box: clicking a station selects it (again: unselects). */
function viewerBoard(boardJson) {
  const box = h("div", { class: "boardwrap" });
  const board = createBoard(box, boardJson, {
    onStationClick: (station) => board.select(board.selected === station ? null : station),
  });
  board.legend.append(...pieceLegend());
  return { box, board };
}

const TICKETS = ["taxi", "bus", "underground", "secret", "double"];

function seatColour(seat) {
  const i = seat === "mrx" ? 0 : parseInt(seat.slice(1), 10) || 0;
  return SEAT_COLOURS[i % SEAT_COLOURS.length];
}

/** Every seat's remaining tickets (a view's `tickets`: by seat, null where the ruleset
 * counts none). */
function ticketsTable(tickets) {
  const seats = Object.keys(tickets || {});
  const kinds = TICKETS.filter((k) => seats.some((seat) => tickets[seat] &&
    tickets[seat][k] !== undefined && tickets[seat][k] !== null));
  if (!kinds.length) {
    return h("p", { class: "note", id: "tickets" }, "Tickets are not counted in this ruleset.");
  }
  const dot = (seat) => {
    const el = h("i", { class: "dot" });
    el.style.backgroundColor = seatColour(seat);
    return el;
  };
  return h("div", { class: "scroll" }, h("table", { id: "tickets" },
    h("thead", {}, h("tr", {}, h("th", {}, "seat"), kinds.map((k) => h("th", { class: "num" }, k)))),
    h("tbody", {}, seats.map((seat) => h("tr", { "data-seat": seat },
      h("td", {}, dot(seat), seatLabel(seat)),
      kinds.map((k) => {
        const own = tickets[seat];
        const n = own ? own[k] : null;
        return h("td", { class: "num", "data-ticket": k, title: own ? null : "not counted" },
          own ? String(n === null || n === undefined ? "–" : n) : "∞");
      }))))));
}

function outcomeText(outcome, reason = "") {
  if (!outcome) return "";
  const who = outcome.winner === "mrx" ? "Mister X wins" :
    outcome.winner === "detectives" ? "detectives win" : "no winner";
  const seat = outcome.seat ? ` by ${outcome.seat}` : "";
  return `${who} (${outcome.termination}${seat}${reason ? `: ${reason}` : ""})`;
}

/** Why a game ended `bot_error` or `illegal_move`: the detail of its last turn (for
 * `bot_error`, the bot's own message), as this perspective may see it (the API leaves out
 * Mister X's details for the detectives). */
function forfeitReason(data) {
  const outcome = data.outcome;
  if (!outcome || !["bot_error", "illegal_move"].includes(outcome.termination)) return "";
  const turns = data.frames.map((f) => f.turn).filter(Boolean);
  const final = turns[turns.length - 1];
  if (!final || final.fault !== outcome.termination || !final.detail) return "";
  const prefix = `${final.fault}: `;
  return final.detail.startsWith(prefix) ? final.detail.slice(prefix.length) : final.detail;
}

/** Scroll `container` (a panel with its own scroll bar) so that `row` is in it: only the
 * panel moves, never the page (scrollIntoView would also scroll the window, taking the
 * header and the controls out of view of a permalink's first screen). */
function scrollWithin(container, row) {
  const box = container.getBoundingClientRect();
  const at = row.getBoundingClientRect();
  if (at.top < box.top) container.scrollTop -= box.top - at.top;
  else if (at.bottom > box.bottom) container.scrollTop += at.bottom - box.bottom;
}

function timing(turn) {
  const parts = [`${fmt(turn.time_used, 3)} s`];
  for (const [key, value] of Object.entries(turn)) {
    if (["index", "seat", "move", "legs", "time_used", "fault", "detail"].includes(key)) continue;
    if (value === null || value === undefined) continue;
    const shown = typeof value !== "number" ? JSON.stringify(value)
      : Number.isInteger(value) ? String(value) : fmt(value, 3);
    parts.push(`${key} ${shown}`);
  }
  return parts.join(", ");
}

// ---------------------------------------------------------------------- replays

/** The replay page of game `id`; `params`: move (frame index or "end"), view. */
export async function showReplay(main, id, params) {
  stopViewer();
  const cache = new Map();
  let perspective = PERSPECTIVES.some(([p]) => p === params.get("view"))
    ? params.get("view") : "all";
  let data;
  async function load(p) {
    if (!cache.has(p)) cache.set(p, await api(`/api/games/${encodeURIComponent(id)}`,
      { perspective: p }));
    return cache.get(p);
  }
  try {
    data = await load(perspective);
  } catch (err) {
    mount(main, h("h1", {}, "Game ", id), h("p", { class: "error" }, err.message));
    return;
  }
  const last = data.frames.length - 1;
  let index = params.get("move") === "end" ? last
    : Math.max(0, Math.min(last, parseInt(params.get("move") || "0", 10) || 0));
  let timer = null;
  const { box, board } = viewerBoard(data.board);
  const ticketsPanel = h("div", { class: "panel tickets" });
  const status = h("div", { class: "status-line", id: "status" });
  const slider = h("input", { type: "range", min: 0, max: last, value: index, id: "slider",
    "aria-label": "move" });
  const jump = h("input", { type: "number", min: 0, max: last, value: index, id: "jump",
    size: 4, "aria-label": "jump to move" });
  const playBtn = h("button", { id: "play", title: "play/pause (space)" }, "▶ play");
  const perspectiveButtons = PERSPECTIVES.map(([p, label]) => h("button", {
    "data-perspective": p, class: p === perspective ? "on" : "",
    onclick: () => switchPerspective(p),
  }, label));
  const logPanel = h("div", { class: "panel" });
  const turnRows = [];
  const turnsBody = h("tbody");
  const turnsPanel = h("div", { class: "panel turns" });
  const root = h("div", { class: "viewer", id: "viewer", "data-game": data.game_id }, box,
    h("div", { class: "side" },
      h("div", { class: "panel" }, status, h("div", { id: "possible-count" })),
      ticketsPanel, logPanel, turnsPanel));

  function buildTurns() {
    turnRows.length = 0;
    turnsBody.replaceChildren();
    data.frames.forEach((frame, i) => {
      if (!frame.turn) return;
      const t = frame.turn;
      const player = data.players[t.seat] || "";
      const row = h("tr", { "data-frame": i, onclick: () => go(i) },
        h("td", { class: "num" }, String(i)),
        h("td", {}, seatLabel(t.seat)), h("td", {}, player),
        h("td", { class: "mv" }, t.move === null ? "—" : breakable(t.move)),
        h("td", { class: "num" }, timing(t)),
        h("td", { class: t.fault ? "fault" : "" }, breakable(t.fault || ""),
          t.detail ? ` ${t.detail}` : ""));
      turnRows[i] = row;
      turnsBody.appendChild(row);
    });
    mount(turnsPanel, h("h3", {}, "Turns (time per move, faults)"),
      h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "seat"),
        h("th", {}, "bot"), h("th", {}, "move"), h("th", {}, "time"), h("th", {}, "fault"))),
      turnsBody));
  }

  /** Where this frame happens in view (a phone shows part of London): the piece that
   * just moved, Mister X at the end where this perspective shows him. */
  function focus() {
    const frame = data.frames[index];
    const turn = frame.turn;
    const shown = data.perspective !== "detectives" && frame.mrx !== null && frame.mrx !== undefined;
    let station = null;
    if (shown && (index === last || (turn && turn.seat === "mrx"))) station = frame.mrx;
    else if (turn && turn.seat !== "mrx") station = frame.detectives[parseInt(turn.seat.slice(1), 10) - 1];
    else if (index === last && frame.detectives.length) station = frame.detectives[0];
    if (station !== null && station !== undefined) board.bringIntoView(station);
  }
  const keeper = new ResizeObserver(focus);
  keeper.observe(board.port);

  function render() {
    const frame = data.frames[index];
    const p = data.perspective;
    root.setAttribute("data-frame", index);
    root.setAttribute("data-perspective", p);
    board.show({
      detectives: frame.detectives,
      possible: p === "mrx" ? [] : frame.possible,
      mrx: p === "detectives" ? null : frame.mrx,
      lastSeen: p === "detectives" && frame.last_reveal ? frame.last_reveal.station : null,
      path: p === "all" ? data.mrx_path.slice(0, frame.move_number + 1) : null,
    });
    focus();
    const turn = frame.turn;
    const what = turn ? `${seatLabel(turn.seat)} played ${turn.move === null ? "nothing"
      : turn.move}${turn.fault ? ` [${turn.fault}]` : ""}` : "start position";
    const end = index === last ? ` — ${outcomeText(data.outcome, forfeitReason(data))}` : "";
    mount(status, `Turn ${index}/${last}, Mister X move ${frame.move_number}: ${what}${end}`);
    mount(document.getElementById("possible-count") || h("div"),
      p === "mrx" ? "" : plural(frame.possible.length, "possible location"));
    mount(ticketsPanel, h("h3", {}, "Tickets left"), ticketsTable(frame.tickets));
    mount(logPanel, h("h3", {}, "Mister X's travel log"),
      travelLog(data.rules, data.log, frame.move_number));
    turnRows.forEach((row) => row && row.classList.remove("current"));
    if (turnRows[index]) {
      turnRows[index].classList.add("current");
      scrollWithin(turnsPanel, turnRows[index]);
    }
    slider.value = index;
    jump.value = index;
    const hash = `#/games/${encodeURIComponent(data.game_id)}?move=${index}&view=${p}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  function go(i) {
    index = Math.max(0, Math.min(last, i));
    render();
  }
  function toggle() {
    if (timer) {
      clearInterval(timer);
      timer = null;
      playBtn.textContent = "▶ play";
      return;
    }
    if (index === last) index = 0;
    playBtn.textContent = "⏸ pause";
    timer = setInterval(() => {
      if (index >= last) toggle();
      else go(index + 1);
    }, 600);
  }
  async function switchPerspective(p) {
    try {
      data = await load(p);
    } catch (err) {
      mount(status, h("span", { class: "error" }, err.message));
      return;
    }
    perspective = p;
    perspectiveButtons.forEach((b) => b.classList.toggle("on", b.dataset.perspective === p));
    buildTurns();
    render();
  }
  slider.addEventListener("input", () => go(parseInt(slider.value, 10)));
  jump.addEventListener("change", () => go(parseInt(jump.value, 10) || 0));
  playBtn.addEventListener("click", toggle);
  const onKey = (event) => {
    // The board's own keys (zoom, pan) when it has the focus.
    if (event.defaultPrevented || (event.target instanceof Element &&
      event.target.closest(".board-view"))) return;
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    if (event.key === "ArrowRight") go(index + 1);
    else if (event.key === "ArrowLeft") go(index - 1);
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(last);
    else if (event.key === " ") toggle();
    else return;
    event.preventDefault();
  };
  document.addEventListener("keydown", onKey);
  cleanup = () => {
    document.removeEventListener("keydown", onKey);
    if (timer) clearInterval(timer);
    keeper.disconnect();
    board.destroy();
  };

  const meta = [data.ruleset, plural(data.moves, "move"),
    outcomeText(data.outcome, forfeitReason(data))];
  if (data.tournament_id) meta.push(h("a", { href: `#/tournaments/${encodeURIComponent(data.tournament_id)}` },
    `tournament ${data.tournament_id}`));
  mount(main,
    h("h1", {}, "Game ", data.game_id),
    h("p", {}, meta.map((m, i) => [i ? " · " : "", m])),
    playersLine(data.players),
    h("div", { class: "controls replay" },
      h("span", {}, "Perspective:"), perspectiveButtons,
      h("button", { id: "first", onclick: () => go(0), title: "Home" }, "|◀"),
      h("button", { id: "prev", onclick: () => go(index - 1), title: "←" }, "◀"),
      playBtn,
      h("button", { id: "next", onclick: () => go(index + 1), title: "→" }, "▶"),
      h("button", { id: "last", onclick: () => go(last), title: "End" }, "▶|"),
      slider, h("label", {}, "turn ", jump)),
    root);
  buildTurns();
  render();
}

// ---------------------------------------------------------------------- live games

/** Watch running game `id`: the detectives' view move by move, then the stored replay. */
export async function showLive(main, id) {
  stopViewer();
  let snapshot;
  try {
    snapshot = await api(`/api/live/${encodeURIComponent(id)}`);
  } catch (err) {
    if (err.status === 404) {
      // Finished already (or never ran here): show the stored game if there is one.
      await waitForReplay(main, id, 1);
      return;
    }
    mount(main, h("p", { class: "error" }, err.message));
    return;
  }
  const { box, board } = viewerBoard(snapshot.board);
  const rules = snapshot.rules;
  const ticketsPanel = h("div", { class: "panel tickets" });
  const status = h("div", { class: "status-line", id: "status" });
  const logPanel = h("div", { class: "panel" });
  const movesBody = h("tbody");
  const root = h("div", { class: "viewer", id: "viewer", "data-game": id,
    "data-perspective": "detectives", "data-live": "1" },
  box,
  h("div", { class: "side" }, h("div", { class: "panel" }, status), ticketsPanel, logPanel,
    h("div", { class: "panel turns" }, h("h3", {}, "Moves so far"),
      h("table", {}, movesBody))));
  mount(main, h("h1", {}, "Live: game ", id),
    h("p", { class: "note" }, "Detectives' perspective: Mister X is shown only where he " +
      "surfaced; shaded stations are where he may be. The full truth appears when the " +
      "game ends."),
    playersLine(snapshot.players), root);

  function renderView(view) {
    root.setAttribute("data-move-number", view.move_number);
    board.show({
      detectives: view.detectives, possible: view.possible, mrx: null,
      lastSeen: view.last_reveal ? view.last_reveal.station : null, path: null,
    });
    mount(status, `Mister X move ${view.move_number} — ${seatLabel(view.to_move)} to move — ` +
      plural(view.possible.length, "possible location"));
    mount(ticketsPanel, h("h3", {}, "Tickets left"), ticketsTable(view.tickets));
    mount(logPanel, h("h3", {}, "Mister X's travel log"),
      travelLog(rules, view.log, view.move_number));
  }
  renderView(snapshot.view);

  // Every move so far (the snapshot's, as spectators' updates showed them), then each
  // update; newest first. A gap (moves played between the snapshot and the socket's
  // first update) is filled from a fresh snapshot.
  const moves = new Map();
  function addMoves(list) {
    for (const m of list || []) moves.set(m.turn, m);
    movesBody.replaceChildren(...[...moves.values()].sort((a, b) => b.turn - a.turn)
      .map((m) => h("tr", { "data-turn": m.turn }, h("td", { class: "num" }, String(m.turn)),
        h("td", {}, seatLabel(m.seat)), h("td", {}, m.move))));
  }
  addMoves(snapshot.moves);
  let filling = false;
  async function fillGap() {
    if (filling) return;
    filling = true;
    try {
      addMoves((await api(`/api/live/${encodeURIComponent(id)}`)).moves);
    } catch {
      // Over meanwhile: game_over or the stored replay follows.
    } finally {
      filling = false;
    }
  }

  let closed = false;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/`);
  const send = (msg) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(msg));
  socket.addEventListener("open", () => {
    send({ type: "hello", protocol: 1, name: "web-spectator", role: "spectator" });
    send({ type: "watch", game: id });
  });
  socket.addEventListener("message", (event) => {
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    if (msg.type === "watching" && msg.game === id) renderView(msg.view);
    else if (msg.type === "update" && msg.game === id) {
      const known = moves.size ? Math.max(...moves.keys()) : 0;
      addMoves([{ turn: msg.turn, seat: msg.seat, move: msg.move }]);
      if (msg.turn > known + 1) fillGap();
      send({ type: "watch", game: id }); // a fresh snapshot: stations and possible set
    } else if (msg.type === "game_over" && msg.game === id) {
      closed = true;
      socket.close();
      mount(status, `Game over: ${outcomeText({ winner: msg.winner,
        termination: msg.termination, seat: msg.seat })} — loading the full replay…`);
      waitForReplay(main, id, 60);
    } else if (msg.type === "error" && msg.code === "unknown_game") {
      closed = true;
      socket.close();
      waitForReplay(main, id, 60);
    }
  });
  socket.addEventListener("close", () => {
    if (!closed) mount(status, "Connection to the server closed.");
  });
  cleanup = () => {
    closed = true;
    socket.close();
    board.destroy();
  };
}

async function waitForReplay(main, id, tries) {
  for (let i = 0; i < tries; i++) {
    try {
      await api(`/api/games/${encodeURIComponent(id)}`, { perspective: "detectives" });
      location.hash = `#/games/${encodeURIComponent(id)}?move=end&view=all`;
      return;
    } catch (err) {
      if (err.code === "withheld") {
        // Its paired game (same deal) is still being played: nothing to show yet.
        mount(main, h("h1", {}, "Game ", id), h("p", { class: "note", id: "withheld" }, err.message));
        return;
      }
      if (err.status !== 404) break;
    }
    if (i + 1 < tries) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  mount(main, h("h1", {}, "Game ", id), h("p", { class: "error" },
    "This game is neither running nor stored."));
}

export { SEAT_COLOURS, seatColour, seatLabel, travelLog, ticketsTable, outcomeText, pieceLegend };
