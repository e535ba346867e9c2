// The Play page: a person plays a ladder bot on the server's own websocket (docs/protocol.md,
// "People: play"): hello (role human), play, then the game's messages exactly as a bot gets
// them. The page only ever holds its own seat's view: as the detectives, Mister X is shown
// only as the shaded stations he may be at (view.possible) and where he last surfaced.
// A name is claimed on its first game (hello with register: the server's welcome carries
// the name's token, kept in this browser's localStorage and sent with later hellos), unless
// the person plays as a guest (guest:NAME, not rated).
import { api, h, mount, plural } from "./dom.js";
import { createBoard } from "./board.js";
import { outcomeText, pieceLegend, seatColour, seatLabel, ticketsTable, travelLog } from "./viewer.js";
import { rating } from "./ladder.js";

const NAME_KEY = "yard.play.name";
const CLAIMS_KEY = "yard.play.claims"; // name -> the token that proves this browser's claim
const GUEST_KEY = "yard.play.guest";
/** The person's options: confirm each move before it is sent (as BGA; default off), and a
 * sound when it is their turn. */
const CONFIRM_KEY = "yard.play.confirm";
const SOUND_KEY = "yard.play.sound";
/** The form's last choice (ruleset, side, opponent): preselected next time. */
const FORM_KEY = "yard.play.form";
/** The tab's game in progress (sessionStorage: this tab only, gone with it): what a reload
 * needs to resume it (docs/protocol.md, resume). */
const SESSION_KEY = "yard.play.session";
/** Seconds between reconnection attempts after a dropped connection (the last repeats),
 * and how long to keep trying. */
const BACKOFF_S = [0.5, 1, 2, 4, 8];
const GIVE_UP_S = 300;
/** Seconds without an answer to the page's own ping before a connection counts as dropped. */
const PING_S = 5;
const SILENT_S = 15;
const TICKETS = ["taxi", "bus", "underground", "secret"];
const TICKET_WORDS = { taxi: "taxi", bus: "bus", underground: "underground", secret: "secret (black)" };
const SIDES = [["mrx", "Mister X"], ["detectives", "the detectives"]];

/** What an error code means for the person, before the server's own message. */
const ERROR_WORDS = {
  bot_busy: "That bot is paused from the ladder: pick another opponent.",
  bot_not_connected: "That bot is not connected to this ladder any more: pick another opponent.",
  bad_match: "The server cannot start this game.",
  forbidden: "The server refused.",
  forbidden_origin: "This server does not accept games from this page's address.",
  name_taken: "That name is someone else's (or looks like it): pick another, or play as a guest.",
  bad_token: "This browser cannot prove the name is yours: pick another, or play as a guest.",
  registration_limit: "The server is making too many new names right now: try again later, or play as a guest.",
  accounts_unavailable: "The server cannot check names right now: try again later, or play as a guest.",
  illegal_move: "That move is not legal.",
  bad_move: "That move was not understood.",
  stale_turn: "That move came too late: the turn had moved on.",
  not_your_turn: "It is not your turn.",
  bad_value: "The server refused a value.",
  rate_limited: "Too many messages: slow down.",
  shutting_down: "The server is shutting down.",
};

/** Each ending in words, for the person who played it (`who`: the side's name; `seat`:
 * who did it, in words). */
const ENDINGS = {
  caught: (o) => `${o.seat ? `Detective ${o.seat}` : "A detective"} reached Mister X's station and caught him.`,
  survived: () => "Mister X stayed free until his last move: the detectives ran out of time to find him.",
  cornered: () => "Mister X was cornered: every station he could reach was taken by a detective (or he had no ticket left to move).",
  detectives_stuck: () => "No detective could move any more (no ticket left for a line from where they stand, or boxed in by the others), so Mister X wins.",
  timeout: (o) => `${o.side} ran out of time on the clock.`,
  illegal_move: (o) => `${o.side} made no legal move and forfeited.`,
  bot_error: (o) => `${o.side}'s program failed and forfeited.`,
  disconnected: (o) => `${o.side} lost the connection and did not come back in time.`,
  protocol_violation: (o) => `${o.side} broke the protocol and forfeited.`,
  aborted: () => "The game was stopped without a result.",
  resigned: (o) => `${o.side} resigned.`,
};

let cleanup = null;
const TITLE = document.title;

/** Close the previous Play page's socket and timers. */
export function stopPlay() {
  document.title = TITLE;
  if (cleanup) cleanup();
  cleanup = null;
}

/** "taxi:45+bus:52" as its legs. */
function parseMove(text) {
  return { text, legs: text.split("+").map((leg) => {
    const [ticket, to] = leg.split(":");
    return { ticket, to: Number(to) };
  }) };
}

/** The protocol's `board` message as the board component's drawing (/api/boards' form). */
function drawing(board) {
  const grid = Boolean(board.width && board.height);
  const n = board.stations;
  const at = (st) => {
    const p = board.positions && board.positions[String(st)];
    if (p) return p;
    return [Math.round(500 + 450 * Math.cos(2 * Math.PI * st / n)),
      Math.round(500 + 450 * Math.sin(2 * Math.PI * st / n))];
  };
  const stations = [];
  for (let st = 1; st <= n; st++) stations.push([st, ...at(st)]);
  return { name: board.name, grid, width: board.width || null, height: board.height || null,
    stations, edges: board.edges };
}

/** The ticket counts after a public `update`'s move (the engine's rule, game/state.py): the
 * mover spends one ticket a leg (Mister X also a double ticket for two legs); where the
 * ruleset says so a detective's ticket goes to Mister X. Seats that count none stay null. */
function spend(tickets, rules, seat, move) {
  const legs = move.split("+").map((leg) => leg.split(":")[0]);
  const own = tickets && tickets[seat];
  if (!own) return;
  for (const t of legs) if (typeof own[t] === "number") own[t] -= 1;
  if (seat === "mrx" && legs.length === 2 && typeof own.double === "number") own.double -= 1;
  const mrx = tickets.mrx;
  if (seat !== "mrx" && rules && rules.tickets_to_mrx && mrx && typeof mrx[legs[0]] === "number") {
    mrx[legs[0]] += 1;
  }
}

function copyTickets(tickets) {
  return JSON.parse(JSON.stringify(tickets || {}));
}

function mmss(seconds) {
  const total = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

function unique(list) {
  return [...new Set(list)];
}

/** Is `name` one a hello may carry: 1 to 58 characters, no spaces or control characters
 * (the server says what else it refuses: docs/protocol.md, names). */
function nameProblem(name) {
  if (!name) return "Enter your name first.";
  if ([...name].length > 58) return "Your name is longer than 58 characters.";
  if (/\s/u.test(name)) return "Your name has a space: names are one word (a-z, 0-9, - _ . and other letters).";
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return "Your name has a control character.";
  return null;
}

function stored(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text === null ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

function store(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode: not kept (a claimed name is then this visit's only).
  }
}

/** The token this browser keeps for its claim of `name`, or null. */
function claimOf(name) {
  return stored(CLAIMS_KEY, {})[name] || null;
}

function keepClaim(name, token) {
  const claims = stored(CLAIMS_KEY, {});
  if (token) claims[name] = token;
  else delete claims[name];
  store(CLAIMS_KEY, claims);
}

function savedName() {
  try {
    return localStorage.getItem(NAME_KEY) || "";
  } catch {
    return "";
  }
}

function savedSession() {
  try {
    const data = JSON.parse(sessionStorage.getItem(SESSION_KEY) || "null");
    return data && data.token && data.game ? data : null;
  } catch {
    return null;
  }
}

function keepSession(data) {
  try {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(data));
  } catch {
    // Private mode: a reload cannot resume the game.
  }
}

function forgetSession() {
  try {
    sessionStorage.removeItem(SESSION_KEY);
  } catch {
    // Nothing kept.
  }
}

function saveName(name) {
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch {
    // Private mode: the name is asked again next time.
  }
}

/** A checkbox kept in localStorage under `key`. */
function option(key, id) {
  const box = h("input", { type: "checkbox", id, checked: stored(key, false) });
  box.addEventListener("change", () => store(key, box.checked));
  return box;
}

/** The page's one audio context, made on a click (browsers start sound only after a
 * gesture on the page); null until the sound option is used. */
let audio = null;

/** Make (or wake) the audio context: called from a click, so a later tone may sound. */
function primeAudio() {
  try {
    audio = audio || new AudioContext();
    if (audio.state === "suspended") audio.resume();
  } catch {
    audio = null; // No Web Audio here: the tones stay silent.
  }
}

/** A short tone "your turn" (silent where the browser allows no sound). */
function beep() {
  primeAudio();
  if (!audio) return;
  const tone = audio.createOscillator();
  const gain = audio.createGain();
  tone.frequency.value = 660;
  gain.gain.setValueAtTime(0.08, audio.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + 0.25);
  tone.connect(gain).connect(audio.destination);
  tone.start();
  tone.stop(audio.currentTime + 0.25);
}

/** The Play page; `params`: rules, side, opponent to preselect. */
export async function showPlay(main, params) {
  stopPlay();
  const timers = [];
  let socket = null;
  let board = null;
  /** The board's lines by transport (the `board` message's edges). */
  let edges = {};
  let stopped = false;
  let gameTimer = null;
  let keeper = null;
  let retry = null; // the reconnection's timeout
  let guard = null; // the beforeunload listener while a game runs
  cleanup = () => {
    stopped = true;
    if (keeper) keeper.disconnect();
    timers.forEach((t) => clearInterval(t));
    if (gameTimer) clearInterval(gameTimer);
    if (retry) clearTimeout(retry);
    if (guard) window.removeEventListener("beforeunload", guard);
    if (socket) socket.close();
    if (board) board.destroy();
  };

  // ------------------------------------------------------------------ the form
  const last = stored(FORM_KEY, {});
  const nameInput = h("input", { id: "play-name", name: "name", maxlength: 58, size: 16,
    autocomplete: "nickname", placeholder: "your name", value: savedName() });
  const rulesSelect = h("select", { id: "play-rules", name: "rules" });
  const sideSelect = h("select", { id: "play-side", name: "side" },
    SIDES.map(([v, label]) => h("option", { value: v, selected: v === (params.get("side") || last.side) },
      label)));
  const opponentSelect = h("select", { id: "play-opponent", name: "opponent" });
  const guestBox = h("input", { type: "checkbox", id: "play-guest", name: "guest",
    checked: stored(GUEST_KEY, false) });
  const soundBox = option(SOUND_KEY, "play-sound");
  soundBox.addEventListener("change", () => { if (soundBox.checked) primeAudio(); });
  const startButton = h("button", { type: "submit", id: "play-start" }, "Play");
  const formNote = h("p", { class: "note", id: "play-note" });
  const form = h("form", { class: "controls", id: "play-form" },
    h("label", {}, "Your name ", nameInput),
    h("label", {}, "Ruleset ", rulesSelect),
    h("label", {}, "Play as ", sideSelect),
    h("label", {}, "against ", opponentSelect),
    h("label", { title: "A guest's name is not kept for you, and a guest's games are not rated" },
      guestBox, " as a guest"),
    h("label", { title: "Each move waits for a second click on Confirm before it is sent" },
      option(CONFIRM_KEY, "play-confirm"), " confirm moves"),
    h("label", { title: "A short tone when it is your turn" }, soundBox, " sound"),
    startButton);
  const formBox = h("div", { id: "play-setup" },
    h("p", { class: "note" }, "Play a bot of this server's ladder yourself: as Mister X, or as " +
      "all the detectives. Your games are stored and rated in a pool of their own (the Ladder " +
      "page's People table), never mixed with the bots' ladder. Your first game claims your " +
      "name: this browser keeps the key that proves it is yours. Guests play unrated."),
    form, formNote);
  const gameBox = h("div", { id: "play-game" });
  mount(main, h("h1", {}, "Play"), formBox, gameBox);

  let ladder = null;
  let wanted = params.get("rules") ? { rules: params.get("rules"), opponent: params.get("opponent") }
    : { rules: last.rules || null, opponent: params.get("opponent") || last.opponent || null };
  function opponents(rules) {
    return ((ladder && ladder.ladders[rules]) || []).filter((r) => r.connected && !r.paused);
  }
  /** Replace `select`'s options (only when they changed: an open list stays open). */
  function options(select, list, chosen) {
    const key = JSON.stringify(list);
    if (select.dataset.options === key) return;
    select.dataset.options = key;
    mount(select, list.map(([value, label]) => h("option", { value, selected: value === chosen }, label)));
  }
  function fillForm() {
    const rulesets = Object.keys((ladder && ladder.live && ladder.ladders) || {});
    options(rulesSelect, rulesets.map((r) => [r, r]), rulesSelect.value || wanted.rules);
    const bots = opponents(rulesSelect.value);
    options(opponentSelect, bots.length ? bots.map((r) => [r.name, `${r.name} (${rating(r)})`])
      : [["", "no bot connected"]], opponentSelect.value || wanted.opponent);
    startButton.disabled = !bots.length;
    if (!rulesets.length) {
      mount(formNote, "This server runs no ladder, so there is nobody to play: its operator " +
        "starts one with `yard serve --ladder grid5 --house random`.");
      startButton.disabled = true;
    } else if (!bots.length) {
      mount(formNote, `No bot is on the ${rulesSelect.value} ladder now (or all of them are ` +
        "paused): pick another ruleset or wait for one to connect. ", h("a", { href: "#/ladder" }, "The ladder"));
    } else {
      mount(formNote, `${plural(bots.length, "bot")} to play on ${rulesSelect.value}.`);
    }
  }
  async function refreshLadder() {
    try {
      ladder = await api("/api/ladder");
    } catch (err) {
      mount(formNote, h("span", { class: "error" }, `Could not load the ladder: ${err.message}`));
      return;
    }
    if (!stopped) fillForm();
  }
  rulesSelect.addEventListener("change", () => {
    wanted = { rules: rulesSelect.value, opponent: null };
    fillForm();
  });
  opponentSelect.addEventListener("change", () => { wanted.opponent = opponentSelect.value; });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (soundBox.checked) primeAudio(); // the click that lets the page's tones sound
    const name = nameInput.value.trim();
    const problem = nameProblem(name);
    if (problem) {
      mount(formNote, h("span", { class: "error", id: "play-form-error" }, problem));
      nameInput.focus();
      return;
    }
    if (!opponentSelect.value) return;
    saveName(name);
    store(GUEST_KEY, guestBox.checked);
    store(FORM_KEY, { rules: rulesSelect.value, side: sideSelect.value, opponent: opponentSelect.value });
    startGame(name, guestBox.checked, rulesSelect.value, sideSelect.value, opponentSelect.value);
  });
  const resumable = savedSession();
  if (resumable) {
    // A reload (or a way back to this page) while a game ran: take its seat again.
    startGame(resumable.name, Boolean(resumable.guest), resumable.rules, resumable.side,
      resumable.opponent, resumable);
  }
  await refreshLadder();
  const formTimer = setInterval(() => {
    if (formBox.hidden) return;
    refreshLadder();
  }, 5000);
  timers.push(formTimer);

  // ------------------------------------------------------------------ a game
  function startGame(name, guest, rules, side, opponent, resumed = null) {
    formBox.hidden = true;
    const me = `${guest ? "guest" : "human"}:${name}`;
    const token = guest ? null : claimOf(name);
    const status = h("div", { class: "status-line", id: "play-status", role: "status",
      "aria-live": "polite" }, "Connecting…");
    const lastMove = h("div", { id: "last-move", class: "last-move", "aria-live": "polite" });
    const clockEl = h("div", { class: "clock", id: "clock" });
    const chooser = h("div", { class: "chooser", id: "chooser", hidden: true });
    const message = h("div", { id: "play-message", role: "alert" });
    const result = h("div", { id: "play-result", class: "panel result", hidden: true });
    const resign = h("button", { type: "button", id: "resign" }, "Resign");
    const players = h("p", { id: "play-players" });
    const barRow = h("div", { class: "bar-row" }, lastMove, chooser);
    const bar = h("div", { class: "play-bar", id: "play-bar" },
      h("div", { class: "play-head" }, status, clockEl, resign), barRow, message);
    const boardBox = h("div", { class: "boardwrap" });
    const ticketsPanel = h("div", { class: "panel tickets" });
    const logPanel = h("div", { class: "panel" });
    const movesBody = h("tbody");
    const side2 = h("div", { class: "side" }, ticketsPanel, logPanel,
      h("div", { class: "panel turns" }, h("h3", {}, "Moves"),
        h("table", { id: "move-log" }, h("thead", {}, h("tr", {}, h("th", {}, "#"),
          h("th", {}, "seat"), h("th", {}, "move"))), movesBody)));
    const root = h("div", { class: "viewer play", id: "play-view", "data-side": side,
      "data-state": "connecting" }, boardBox, side2);
    mount(players, h("b", {}, name), ` plays ${side === "mrx" ? "Mister X" : "the detectives"} ` +
      "against ", h("b", {}, opponent), ` on ${rules}.`);
    mount(gameBox, players, result, bar, root);

    // What the page knows: only what the server sent to this seat.
    const game = { id: null, rules: null, seats: [], view: null, turn: null, moves: [],
      path: [], unseen: [], over: null, refused: false, sending: false, pending: null, armed: false,
      tickets: {}, applied: 0, marks: [], news: null };
    let clock = null;
    let queue = null; // {place, wait, at}: waiting for a slot of the bot
    const moveLog = new Map(); // turn -> {seat, move}
    const banks = {}; // the opponent's seats' banks (seconds), as reckoned here

    function say(text, cls = "") {
      mount(message, text ? h("span", { class: cls }, text) : "");
    }
    function setState(state) {
      root.setAttribute("data-state", state);
    }

    // The connection: hello (with the resume token when a game is to be taken up again),
    // and after a drop, new connections with backoff until the game is back or gone.
    const link = { token: resumed ? resumed.token : null, grace: resumed ? resumed.grace : null,
      up: false, dropped: null, attempts: 0, lastPong: 0, nonce: 0 };
    if (resumed) {
      game.id = resumed.game;
      root.setAttribute("data-game", game.id);
    }
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const send = (msg) => {
      if (!link.up || !socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(JSON.stringify(msg));
      return true;
    };
    function remember() {
      keepSession({ name, guest, rules, side, opponent, token: link.token, game: game.id, grace: link.grace });
    }
    function connect() {
      const ws = new WebSocket(`${scheme}://${location.host}/`);
      socket = ws;
      ws.addEventListener("open", () => {
        if (ws !== socket) return;
        const back = Boolean(game.id && link.token);
        const hello = { type: "hello", protocol: 1, name, role: "human",
          resume: back ? link.token : null };
        const proof = guest ? null : claimOf(name); // claimed on an earlier connection too
        if (proof) hello.token = proof;
        else if (!guest && !back) hello.register = true; // claim the name
        ws.send(JSON.stringify(hello));
        if (!back) mount(status, `Asking ${opponent} for a game…`);
      });
      ws.addEventListener("close", () => { if (ws === socket) lost(); });
      ws.addEventListener("message", (event) => {
        if (ws !== socket) return;
        let msg;
        try {
          msg = JSON.parse(event.data);
        } catch {
          return;
        }
        handle(msg);
      });
    }
    /** The connection closed or went silent. */
    function lost() {
      link.up = false;
      resign.hidden = true;
      game.turn = null; // the server sends the turn again on resume
      game.pending = null;
      chooser.hidden = true;
      if (socket) {
        const old = socket;
        socket = null;
        if (old.readyState === WebSocket.OPEN || old.readyState === WebSocket.CONNECTING) old.close();
      }
      if (game.over || game.refused || stopped) return;
      if (!game.id) {
        // No game yet (asking, or waiting in a bot's queue): nothing to come back to.
        clock = null;
        queue = null;
        renderClock();
        setState("closed");
        mount(status, "Connection to the server closed.");
        say("No game was started.", "error");
        showAgain();
        return;
      }
      if (link.dropped === null) link.dropped = performance.now();
      setState("reconnecting");
      render();
      const waited = (performance.now() - link.dropped) / 1000;
      if (waited > GIVE_UP_S) {
        setState("closed");
        forget();
        mount(status, "Could not reach the server again.");
        say(`Game ${game.id} went on without you; look for it on the Games page.`, "error");
        showAgain();
        return;
      }
      const delay = BACKOFF_S[Math.min(link.attempts, BACKOFF_S.length - 1)];
      link.attempts += 1;
      renderDrop();
      retry = setTimeout(() => { retry = null; if (!stopped) connect(); }, delay * 1000);
    }
    /** What a dropped connection means for the game: the time left before it is lost. */
    function renderDrop() {
      if (link.up || link.dropped === null || game.over || game.refused) return;
      const left = (link.grace || 10) - (performance.now() - link.dropped) / 1000;
      mount(status, h("span", { id: "play-reconnecting" }, "Connection lost: reconnecting" +
        (link.attempts > 1 ? ` (try ${link.attempts})` : "") + "… "),
      left > 0 ? h("span", { id: "play-grace", "data-left": Math.ceil(left) },
        `The game is lost (disconnected) in ${mmss(left)} unless the page is back by then.`)
        : h("span", { id: "play-grace", "data-left": 0 }, "Your time to come back is up: " +
          "the game may be lost."));
    }
    /** The server has no session for the token: the game is gone (it restarted, or the
     * time to come back ran out). Say so, and what became of the game if it is stored. */
    function gone() {
      game.refused = true;
      link.up = false;
      link.dropped = null;
      forget();
      if (socket) socket.close();
      clock = null;
      renderClock();
      setState("gone");
      render();
      resign.hidden = true;
      const id = game.id;
      mount(status, h("span", { id: "play-gone" }, `Game ${id} is gone: the server no longer ` +
        "has it (it was restarted, or the game ended while this page was away)."));
      const verdict = h("span", { id: "play-gone-verdict" }, "Looking for the stored game…");
      mount(message, verdict, " ", h("button", { type: "button", id: "play-again",
        onclick: showAgain }, "Play again"));
      api(`/api/games/${encodeURIComponent(id)}`).then((data) => {
        if (stopped) return;
        const end = data.outcome;
        mount(verdict, `It was stored: ${outcomeText(end)}. `, h("a", { id: "replay-link",
          href: `#/games/${encodeURIComponent(id)}?move=end&view=all` }, "Replay of this game"));
        verdict.setAttribute("data-termination", end.termination);
      }).catch(() => {
        if (!stopped) mount(verdict, "It was not stored: the server stopped without ending it.");
      });
    }
    function forget() {
      forgetSession();
      if (guard) window.removeEventListener("beforeunload", guard);
      guard = null;
    }
    /** Leaving the page while the game runs asks first. */
    function guardUnload() {
      if (guard) return;
      guard = (event) => {
        if (!game.id || game.over) return;
        event.preventDefault();
        event.returnValue = "";
      };
      window.addEventListener("beforeunload", guard);
    }
    // The page's own ping: a connection that went silent (a network drop the socket has
    // not noticed) is given up and a new one made.
    const heartbeat = setInterval(() => {
      if (!link.up || game.over) return;
      if ((performance.now() - link.lastPong) / 1000 > SILENT_S) {
        lost();
        return;
      }
      link.nonce += 1;
      send({ type: "ping", nonce: link.nonce });
    }, PING_S * 1000);
    timers.push(heartbeat);
    connect();

    function handle(msg) {
      switch (msg.type) {
        case "welcome": {
          if (msg.token) keepClaim(name, msg.token); // the name is ours now
          const back = Boolean(game.id && link.token);
          link.up = true;
          link.token = msg.resume_token;
          link.lastPong = performance.now();
          if (typeof msg.grace_s === "number") link.grace = msg.grace_s;
          link.dropped = null;
          link.attempts = 0;
          if (back && !(msg.resumed || []).includes(game.id)) {
            gone();
          } else if (back) {
            remember();
            guardUnload();
            setState("playing");
            say("");
            mount(status, `Back in game ${game.id}…`);
            render();
          } else {
            send({ type: "play", rules, side, opponent });
          }
          break;
        }
        case "ping":
          send({ type: "pong", nonce: msg.nonce });
          break;
        case "pong":
          link.lastPong = performance.now();
          break;
        case "queued":
          queue = { place: msg.place, wait: msg.wait_s, at: performance.now() };
          setState("queued");
          root.setAttribute("data-place", msg.place);
          renderQueue();
          mount(message, h("span", { class: "note" }, "Your game starts by itself as soon as " +
            `${opponent} has a free slot (people come before its bot-vs-bot games). `),
          h("button", { type: "button", id: "leave-queue", onclick: leaveQueue }, "Leave the queue"));
          break;
        case "match_started":
          queue = null;
          root.removeAttribute("data-place");
          say("");
          game.id = msg.game;
          root.setAttribute("data-game", msg.game);
          remember();
          guardUnload();
          mount(status, `Game ${msg.game} started: waiting for the first move…`);
          break;
        case "board":
          if (keeper) keeper.disconnect();
          if (board) board.destroy();
          board = createBoard(boardBox, drawing(msg), { onStationClick: clicked });
          edges = msg.edges || {};
          // After the board's own fit on a resize (a phone turned): the piece to move
          // back in view.
          keeper = new ResizeObserver(keepInView);
          keeper.observe(board.port);
          board.legend.append(...pieceLegend(),
            h("span", {}, h("i", { class: "swatch d-legal" }), "ringed: your moves"));
          break;
        case "game_start":
          if (msg.game !== game.id) break;
          game.rules = msg.rules;
          game.seats = msg.seats;
          game.players = msg.players;
          game.clock = msg.time_control;
          game.view = msg.view;
          game.unseen = [];
          game.tickets = copyTickets(msg.view.tickets);
          game.applied = 0;
          game.other = null;
          clockMoved(null, msg.view.to_move);
          if (side === "mrx") game.path = [msg.view.mrx];
          {
            const hunters = unique(Object.entries(msg.players).filter(([seat]) => seat !== "mrx")
              .map(([, who]) => who));
            const n = Object.keys(msg.players).length - 1;
            mount(players, `${msg.rules.name} · Mister X: `, h("b", {}, msg.players.mrx),
              ` · detectives (${n}): `, h("b", {}, hunters.join(", ")), ` · game ${msg.game}`);
          }
          setState("playing");
          render();
          break;
        case "your_turn":
          if (msg.game === game.id && (!game.turn || game.turn.turn !== msg.turn) &&
            stored(SOUND_KEY, false)) beep();
          if (msg.game !== game.id) break;
          game.view = msg.view;
          game.unseen = [];  // the view's log has Mister X's own moves up to now
          // The view's tickets are the server's count before this turn: every move so far.
          game.tickets = copyTickets(msg.view.tickets);
          game.applied = msg.turn - 1;
          game.turn = { turn: msg.turn, seat: msg.seat, moves: msg.legal.map(parseMove) };
          game.pending = null;
          game.sending = false;
          if (side === "mrx") game.path = [game.path[0], ...msg.view.log.map((e) => e.station)];
          clock = { move: msg.clock.move_s, bank: msg.clock.bank_s, at: performance.now() };
          say("");
          render();
          renderClock();
          keepInView();
          break;
        case "move_ok":
          if (msg.game !== game.id) break;
          moveLog.set(msg.turn, { seat: msg.seat, move: msg.move, mine: true });
          game.moves.push(msg.move);
          if (side === "mrx") {
            const legs = parseMove(msg.move).legs;
            game.path.push(...legs.map((l) => l.to));
            game.view.mrx = legs[legs.length - 1].to;
            // His travel log shows the move at once: the next view would bring it, but
            // the detectives may end the game before he gets one.
            game.unseen.push(...legs.map((l) => ({ ticket: l.ticket, station: l.to })));
          } else {
            const i = parseInt(msg.seat.slice(1), 10) - 1;
            game.view.detectives[i] = parseMove(msg.move).legs[0].to;
          }
          game.turn = null;
          game.sending = false;
          game.pending = null;
          game.marks = [];  // the opponent's moves from now on are marked
          game.stuck = null;
          if (clock) clock = { move: 0, bank: currentClock().bank, at: null };
          render();
          break;
        case "update":
          if (msg.game !== game.id) break;
          if (!moveLog.has(msg.turn)) moveLog.set(msg.turn, { seat: msg.seat, move: msg.move });
          if (msg.turn > game.applied) {
            spend(game.tickets, game.rules, msg.seat, msg.move);
            game.applied = msg.turn;
          }
          if (msg.seat !== "mrx" && msg.move && msg.move.includes(":") && game.view) {
            // A detective moved (the bot's, or ours as confirmed): its piece follows.
            const i = parseInt(msg.seat.slice(1), 10) - 1;
            const from = game.view.detectives[i];
            const to = Number(msg.move.split(":").pop());
            game.view.detectives[i] = to;
            if (side === "mrx") game.marks.push({ seat: msg.seat, from, to });
          } else if (msg.seat === "mrx" && side !== "mrx") {
            const legs = parseMove(msg.move).legs;
            const shown = legs[legs.length - 1].to;
            const tickets = legs.map((l) => TICKET_WORDS[l.ticket] || l.ticket).join(" then ");
            game.news = Number.isFinite(shown) && shown > 0
              ? { surfaced: shown, text: `Mister X surfaced at ${shown} (${tickets})` }
              : { surfaced: null, text: `Mister X moved by ${tickets}: where to is hidden` };
            game.marks = [];
          }
          clockMoved(msg.seat, msg.to_move);
          if (game.view) {
            stuck(msg.seat, msg.to_move);
            game.view.to_move = msg.to_move;
          }
          render();
          break;
        case "game_over":
          if (msg.game !== game.id) break;
          finish(msg);
          break;
        case "error":
          failed(msg);
          break;
        default:
          break; // a later server may send more: ignored
      }
    }

    function failed(msg) {
      if (msg.code === "bad_resume_token" && game.id) {
        gone();
        return;
      }
      const words = ERROR_WORDS[msg.code] || `Error (${msg.code}).`;
      if (!game.id) {
        // Refused before the game started: back to the form. A key the server no longer
        // knows is dropped (the next game claims the name again, if it is free).
        if (msg.code === "bad_token" && token) keepClaim(name, null);
        mount(message, h("span", { class: "error" }, words), " ",
          h("span", { class: "note", id: "play-refusal" }, `(the server: ${msg.message})`));
        mount(status, "No game started.");
        mount(players, h("b", {}, name), ` asked to play ${side === "mrx" ? "Mister X" : "the detectives"}` +
          " against ", h("b", {}, opponent), ` on ${rules}.`);
        resign.hidden = true;
        root.hidden = true;
        clockEl.hidden = true;
        barRow.hidden = true;
        setState("refused");
        game.refused = true;
        forget();
        if (socket) socket.close();
        showAgain();
        return;
      }
      say(`${words} ${msg.message}`, "error");
      if (game.turn) {
        game.sending = false;
        game.pending = null;
        render();
      }
    }

    // -------------------------------------------------------------- moving
    function destinations() {
      if (!game.turn || game.sending || !link.up) return [];
      const moves = game.turn.moves;
      const p = game.pending;
      if (p) {
        return unique(moves.filter((m) => m.legs.length === 2 && m.legs[0].ticket === p.ticket &&
          m.legs[0].to === p.to).map((m) => m.legs[1].to));
      }
      return unique(moves.map((m) => m.legs[0].to));
    }

    function sendMove(text, confirmed = false) {
      if (!game.turn || game.sending) return;
      if (!confirmed && stored(CONFIRM_KEY, false)) {
        chooser.hidden = false;
        mount(chooser, h("span", { class: "chooser-title" }, `Send ${text}?`),
          h("button", { type: "button", id: "confirm-move", class: "confirm",
            onclick: () => sendMove(text, true) }, "Confirm"),
          h("button", { type: "button", id: "cancel-move", onclick: cancel }, "Cancel"));
        chooser.querySelector("#confirm-move").focus({ preventScroll: true });
        return;
      }
      game.sending = true;
      chooser.hidden = true;
      if (!send({ type: "move", game: game.id, turn: game.turn.turn, move: text })) {
        game.sending = false;
        say("Not connected: the move was not sent.", "error");
        return;
      }
      mount(status, `Sent ${text}…`);
      board.markLegal([]);
    }

    function choose(title, choices) {
      chooser.hidden = false;
      mount(chooser, h("span", { class: "chooser-title" }, title),
        choices.map((c) => h("button", {
          type: "button", class: `ticket t-${c.ticket}`, "data-move": c.move || null,
          "data-ticket": c.ticket, "data-double": c.double ? "1" : null,
          onclick: c.double ? () => startDouble(c.ticket, c.to) : () => sendMove(c.move),
        }, c.label)),
        h("button", { type: "button", id: "cancel-move", onclick: cancel }, "Cancel"));
      const first = chooser.querySelector("button");
      if (first) first.focus({ preventScroll: true });
    }

    function cancel() {
      game.pending = null;
      chooser.hidden = true;
      if (board) board.select(null);
      render();
    }

    const onKey = (event) => {
      if (event.key === "Escape" && (!chooser.hidden || game.pending)) {
        event.preventDefault();
        cancel();
      }
    };
    document.addEventListener("keydown", onKey);
    const before = cleanup;
    cleanup = () => {
      document.removeEventListener("keydown", onKey);
      before();
    };

    function startDouble(ticket, to) {
      game.pending = { ticket, to };
      board.select(null);
      chooser.hidden = false;
      mount(chooser, h("span", { class: "chooser-title", id: "double-note" },
        `Double move: first ${TICKET_WORDS[ticket]} to ${to}. Now pick the second station (ringed).`),
      h("button", { type: "button", id: "cancel-move", onclick: cancel }, "Cancel"));
      render();
    }

    function clicked(station) {
      if (!game.turn || game.sending || game.over || !link.up) return;
      if (!destinations().includes(station)) {
        say(`You cannot move to ${station} now: the ringed stations are your moves.`, "note");
        return;
      }
      say("");
      board.select(station);
      const moves = game.turn.moves;
      const p = game.pending;
      if (p) {
        const seconds = moves.filter((m) => m.legs.length === 2 && m.legs[0].ticket === p.ticket &&
          m.legs[0].to === p.to && m.legs[1].to === station);
        const choices = TICKETS.flatMap((t) => seconds.filter((m) => m.legs[1].ticket === t)
          .map((m) => ({ ticket: t, move: m.text, label: TICKET_WORDS[t] })));
        if (choices.length === 1) sendMove(choices[0].move);
        else choose(`Double move, second leg to ${station} by:`, choices);
        return;
      }
      const choices = [];
      for (const t of TICKETS) {
        const single = moves.find((m) => m.legs.length === 1 && m.legs[0].ticket === t &&
          m.legs[0].to === station);
        if (single) choices.push({ ticket: t, move: single.text, label: TICKET_WORDS[t] });
        if (moves.some((m) => m.legs.length === 2 && m.legs[0].ticket === t && m.legs[0].to === station)) {
          choices.push({ ticket: t, double: true, to: station, label: `${TICKET_WORDS[t]}, then double move…` });
        }
      }
      if (choices.length === 1 && !choices[0].double) sendMove(choices[0].move);
      else choose(`To ${station} by:`, choices);
    }

    // -------------------------------------------------------------- showing
    /** The piece to move in view, on its turn (a phone shows only part of London). */
    function keepInView() {
      if (!board || !game.turn || !game.view) return;
      const seat = game.turn.seat;
      const view = game.view;
      board.bringIntoView(game.pending ? game.pending.to : seat === "mrx" ? view.mrx
        : view.detectives[parseInt(seat.slice(1), 10) - 1]);
    }

    function currentClock() {
      if (!clock) return null;
      if (clock.at === null) return { move: 0, bank: clock.bank };
      const used = (performance.now() - clock.at) / 1000;
      const move = clock.move - used;
      return move >= 0 ? { move, bank: clock.bank } : { move: 0, bank: Math.max(0, clock.bank + move) };
    }
    /** The queue place and the time left of the expected wait. */
    function renderQueue() {
      if (!queue) return;
      const left = queue.wait - (performance.now() - queue.at) / 1000;
      mount(status, h("span", { id: "play-queue", "data-place": queue.place },
        `${opponent} is playing as many games as it takes: you are number ${queue.place} ` +
        `in its queue, ${left > 1 ? `about ${mmss(left)} to wait` : "any moment now"}.`));
    }
    function leaveQueue() {
      queue = null;
      game.refused = true;
      forget();
      if (socket) socket.close();
      setState("refused");
      mount(status, "You left the queue.");
      say("");
      showAgain();
    }
    function renderClock() {
      renderQueue();
      renderDrop();
      const now = currentClock() || (game.clock && !game.over && !game.refused
        ? { move: 0, bank: game.clock.bank_s } : null);
      if (!now) {
        mount(clockEl, "");
        return;
      }
      const mine = Boolean(game.turn);
      const theirs = theirClock();
      clockEl.classList.toggle("low", mine && now.move < 10 && now.bank < 30);
      mount(clockEl, h("span", { id: "clock-mine", class: mine ? "ticking" : "" }, "You: ",
        mine ? `${mmss(now.move)} for this move · bank ${mmss(now.bank)}` : `bank ${mmss(now.bank)}`),
      theirs ? h("span", { id: "clock-theirs", class: theirs.running ? "ticking" : "" },
        `${opponent}: `, theirs.running ? `${mmss(theirs.move)} for this move · ` : "",
        `bank ${mmss(theirs.bank)}`) : null);
    }
    /** The opponent's clock as this page reckons it (the server sends each seat only its
     * own): the time control's move time and bank, from when its turn began. */
    function theirClock() {
      if (!game.clock) return null;
      const o = game.other;
      if (!o) return { running: false, bank: Math.min(...Object.values(banks), game.clock.bank_s) };
      const bank = o.seat in banks ? banks[o.seat] : game.clock.bank_s;
      const move = game.clock.move_s - (performance.now() - o.at) / 1000;
      return { running: true, move: Math.max(0, move), bank: move >= 0 ? bank : Math.max(0, bank + move) };
    }
    /** A move of `seat` was made; `next` is to move. */
    function clockMoved(seat, next) {
      if (!game.clock) return;
      if (game.other && game.other.seat === seat) banks[seat] = theirClock().bank;
      game.other = next && !game.seats.includes(next) ? { seat: next, at: performance.now() } : null;
    }
    if (gameTimer) clearInterval(gameTimer);
    gameTimer = setInterval(renderClock, 250);

    /** Seats the turn passed over between `seat`'s move and `next` (a detective with no
     * legal move is skipped by the rules): announced, not skipped silently, with why,
     * until the person's next move. */
    function stuck(seat, next) {
      if (!next || !game.players) return;
      const order = Object.keys(game.players).sort((a, b) => a === "mrx" ? -1 : b === "mrx" ? 1
        : parseInt(a.slice(1), 10) - parseInt(b.slice(1), 10));
      const skipped = [];
      for (let i = (order.indexOf(seat) + 1) % order.length, n = 0;
        order[i] !== next && n < order.length; i = (i + 1) % order.length, n++) {
        skipped.push(order[i]);
      }
      if (!skipped.length) return;
      // Every seat skipped since the person's own last move, in seat order.
      const seats = order.filter((st) => skipped.includes(st) || (game.stuck && game.stuck.seats.includes(st)));
      game.stuck = { seats, text: seats.map(whyStuck).join(" ") +
        ` ${seats.length > 1 ? "They are" : "It is"} skipped.` };
    }
    /** Why detective `seat` cannot move: no ticket for any line from its station, or
     * (tickets left, or none counted) every station next to it taken by a detective. */
    function whyStuck(seat) {
      const at = game.view.detectives[parseInt(seat.slice(1), 10) - 1];
      const own = game.tickets && game.tickets[seat];
      const lines = ["taxi", "bus", "underground"].filter((t) =>
        (edges[t] || []).some(([a, b]) => a === at || b === at));
      const ticketless = own && lines.every((t) => !(own[t] > 0));
      return `Detective ${seatLabel(seat)} cannot move: ${ticketless
        ? `no ticket left for any line from ${at}` : `every station next to ${at} is taken by a detective`}.`;
    }

    /** The opponent's moves since the person's own: a line on the board for each
     * detective's, a banner for Mister X's (the ticket, or where he surfaced). */
    function renderLastMove() {
      const parts = [];
      if (game.news && side !== "mrx") {
        parts.push(h("span", { class: game.news.surfaced ? "banner surfaced" : "banner",
          id: "mrx-news", "data-surfaced": game.news.surfaced || null }, game.news.text));
      }
      if (game.marks.length && side === "mrx") {
        parts.push(h("span", { id: "detective-moves" }, "Last moves: " + game.marks.map((m) =>
          `${seatLabel(m.seat)} ${m.from}→${m.to}`).join(", ")));
      }
      if (game.stuck) parts.push(h("span", { id: "play-stuck", class: "banner stuck" }, game.stuck.text));
      mount(lastMove, parts);
    }

    /** The travel log, with every station once the game is over (`truth`: his path). */
    function truthLog(truth, log) {
      if (!truth) return log;
      return log.map((entry, i) => ({ ...entry, station: truth[i + 1] === undefined ? entry.station
        : truth[i + 1] }));
    }

    function render() {
      const view = game.view;
      if (!view || !board) return;
      const mrx = side === "mrx";
      const pendingPath = game.pending ? [...game.path, game.pending.to] : game.path;
      const truth = game.over ? game.over.mrx_path || [] : null;
      if (truth) {
        // The game is over: the truth, Mister X's whole path, for either side.
        board.show({ detectives: view.detectives, possible: [],
          mrx: truth.length ? truth[truth.length - 1] : null, lastSeen: null, path: truth });
      } else {
        board.show({
          detectives: view.detectives,
          possible: view.possible,
          mrx: mrx ? (game.pending ? game.pending.to : view.mrx) : null,
          lastSeen: !mrx && view.last_reveal ? view.last_reveal.station : null,
          path: mrx ? pendingPath : null,
          moves: mrx ? game.marks : [],
          surfaced: !mrx && game.news ? game.news.surfaced : null,
        });
      }
      renderLastMove();
      const legal = destinations();
      board.markLegal(legal);
      // No connection, no moves: no rings (destinations) and no Resign button.
      resign.hidden = Boolean(game.over) || !link.up;
      root.setAttribute("data-connected", link.up ? "1" : "0");
      if (!game.pending && !chooser.hidden && !game.turn) chooser.hidden = true;
      root.setAttribute("data-turn", game.turn ? game.turn.turn : "");
      root.setAttribute("data-seat", game.turn ? game.turn.seat : "");
      root.setAttribute("data-move-number", view.move_number);
      board.root.setAttribute("data-to-move", game.turn ? game.turn.seat : "");
      if (game.over || game.refused) {
        // The status says the result (finish) or that the game is gone.
      } else if (!link.up) {
        renderDrop();
      } else if (game.turn && !game.sending) {
        const seat = game.turn.seat;
        const where = seat === "mrx" ? view.mrx : view.detectives[parseInt(seat.slice(1), 10) - 1];
        const dot = h("i", { class: "dot" });
        dot.style.backgroundColor = seatColour(seat);
        mount(status, dot, game.pending ? "Your double move: pick the second station"
          : `Your move: ${seat === "mrx" ? "Mister X" : `detective ${seatLabel(seat)}`} at ${where}`,
        seat === "mrx" ? ` · Mister X's move ${view.move_number + 1} of ${game.rules.max_moves}`
          : ` · round ${view.move_number} of ${game.rules.max_moves}`,
        !mrx ? ` · he may be at ${plural(view.possible.length, "station")}` : "");
      } else if (!game.sending && view.to_move) {
        mount(status, `${opponent} is thinking (${seatLabel(view.to_move)} to move)…`);
      }
      document.title = game.turn && !game.sending ? `Your turn · ${TITLE}` : TITLE;
      root.setAttribute("data-applied", game.applied);
      mount(ticketsPanel, h("h3", {}, "Tickets left"), ticketsTable(game.tickets));
      mount(logPanel, h("h3", {}, "Mister X's travel log"),
        travelLog(game.rules, truthLog(truth, [...view.log, ...game.unseen]),
          view.move_number + game.unseen.length));
      movesBody.replaceChildren(...[...moveLog.entries()].sort((a, b) => b[0] - a[0])
        .map(([turn, m]) => h("tr", { "data-turn": turn, "data-seat": m.seat,
          class: m.mine ? "mine" : "" },
        h("td", { class: "num" }, String(turn)), h("td", {}, seatLabel(m.seat)),
        h("td", { class: "mv" }, m.move))));
    }

    // -------------------------------------------------------------- the end
    resign.addEventListener("click", () => {
      if (!game.id || game.over) return;
      if (!game.armed) {
        game.armed = true;
        resign.textContent = "Really resign? Click again";
        setTimeout(() => { game.armed = false; resign.textContent = "Resign"; }, 4000);
        return;
      }
      send({ type: "resign", game: game.id });
    });

    function finish(msg) {
      game.over = msg;
      forget();
      game.turn = null;
      game.other = null;
      clock = null;
      renderClock();
      chooser.hidden = true;
      resign.hidden = true;
      setState("over");
      const path = msg.mrx_path || [];
      if (board) board.select(null);
      const mine = msg.winner === side;
      const stoppedByServer = msg.termination === "aborted";
      const headline = stoppedByServer ? "The server stopped the game"
        : msg.winner === null ? "No winner" : mine ? "You win!" : "You lose";
      // A person playing every detective resigns (or times out) for all of them: the side,
      // not the seat, did it.
      const allMine = msg.seat && msg.seat !== "mrx" && side === "detectives";
      const shownSeat = allMine ? null : msg.seat;
      const loser = msg.seat === "mrx" ? "Mister X" : msg.seat ? (allMine ? "You (the detectives)"
        : `Detective ${seatLabel(msg.seat)}`) : msg.winner === "mrx" ? "The detectives" : "Mister X";
      const why = (ENDINGS[msg.termination] || (() => ""))({ side: msg.seat === "mrx" && side === "mrx"
        ? "You (Mister X)" : loser, seat: msg.seat ? seatLabel(msg.seat) : null });
      // In words where the ending has them (the code stays in the replay and the API).
      const said = why ? (msg.winner === "mrx" ? "Mister X wins" : msg.winner === "detectives"
        ? "The detectives win" : "No winner")
        : outcomeText({ winner: msg.winner, termination: msg.termination, seat: shownSeat });
      // The truth is out: no "where to is hidden" about his last move any more.
      game.news = null;
      mount(status, `Game over: ${said}`);
      const stored = h("span", { id: "replay-status", class: "note" }, "Saving the game…");
      const again = h("button", { type: "button", id: "play-again", onclick: showAgain }, "New game…");
      const rematch = h("button", { type: "button", id: "rematch",
        onclick: () => startGame(name, guest, rules, side, opponent) }, "Rematch");
      result.hidden = false;
      mount(result, h("h2", { id: "play-headline", "data-winner": msg.winner || "" }, headline),
        h("p", {}, `${said} after ${plural(msg.moves, "move")} of Mister X.`),
        why ? h("p", { id: "play-why" }, why) : null,
        stoppedByServer ? h("p", { id: "play-stopped" }, "The server was stopped (or restarted) " +
          "while the game ran: it is stored as aborted, without a winner and unrated.") : null,
        path.length ? h("p", { id: "mrx-path" }, `Mister X's path: ${path.join(" → ")}`) : null,
        h("p", {}, stored), h("p", {}, rematch, " ", again));
      if (socket) socket.close();
      storedReplay(msg.game, stored);
      render();
    }

    /** Link the stored game once it is written (the server stores it just after the end). */
    async function storedReplay(id, el) {
      for (let i = 0; i < 40 && !stopped; i++) {
        try {
          const data = await api("/api/games", { tournament: `play-${rules}`, player: me, limit: 20 });
          if (data.games.some((g) => g.game_id === id)) {
            mount(el, h("a", { id: "replay-link", href: `#/games/${encodeURIComponent(id)}?move=end&view=all` },
              "Replay of this game"), " (the stored game, every side's view)");
            el.classList.remove("note");
            return;
          }
        } catch {
          // The list is being computed or the server is busy: ask again.
        }
        await new Promise((resolve) => setTimeout(resolve, 250 + 50 * i));
      }
      if (!stopped) mount(el, `The game is not stored (yet): look for ${id} on the Games page.`);
    }

    function showAgain() {
      formBox.hidden = false;
      refreshLadder();
    }
  }
}

