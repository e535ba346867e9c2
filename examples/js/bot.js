// A yard bot in plain JavaScript, speaking the raw JSON protocol (docs/protocol.md).
// No dependencies: Node 20's built-in WebSocket (flag --experimental-websocket; default
// from Node 22).
//
//   node --experimental-websocket examples/js/bot.js --url ws://127.0.0.1:8765 --name jsbot
//   ... --ladder grid5 --max-games 2 --games 10     (on a ladder server; docs/bots.md)
//
// --url, --name and --instance default to $YARD_URL, $YARD_BOT_NAME and $YARD_BOT_INSTANCE
// (set by yard's launchers:
// yard tournament run --engine name=jsbot cmd="node --experimental-websocket bot.js").
// A dropped connection is resumed with the token from "welcome" (docs/protocol.md).
// --ladder RULES[,RULES] asks to be matched on the server's ladder (--max-games: most games
// at once); --games N leaves once the server has given N games ("leave": no new games, the
// ones in progress are played out, nothing is forfeited); --token: the bot's token.
//
// The server sends each board as data ("board", docs/protocol.md) before the first game on
// it; the bot computes shortest-path distances over it (breadth-first search over the
// land transports' edges). Strategy: Mister X takes the move that ends farthest from the
// nearest detective; a detective moves towards the nearest possible location of Mister X.
// Simple on purpose: the point is the protocol.

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) =>
    arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs, []));
const url = args.url || process.env.YARD_URL || "ws://127.0.0.1:8765";
const name = args.name || process.env.YARD_BOT_NAME || "jsbot";
const instance = args.instance || process.env.YARD_BOT_INSTANCE || null;
const maxGames = args.games ? Number(args.games) : Infinity;
const ladder = args.ladder ? args.ladder.split(",") : null;
const RETRY_MS = [200, 500, 1000, 2000, 4000];  // waits before each reconnect attempt
let played = 0;
const given = new Set();     // games the server gave us (game_start: once per side)
const active = new Set();    // ... and not over yet
let leaving = false;
let resumeToken = null;   // from "welcome": sent in "hello" to take our seats back
let announced = false;
let stopping = false;
let failures = 0;

const boards = new Map();   // board name -> {neighbours, distances}: from "board" messages
const gameBoard = new Map(); // game id -> its board

function destination(move) {        // "bus:52+taxi:13" -> 13
  const legs = move.split("+");
  return Number(legs[legs.length - 1].split(":")[1]);
}

// A "board" message -> neighbour lists over land transport (taxi, bus, underground: only
// Mister X may take the ferry, with a secret ticket), and a cache of distances.
function loadBoard(msg) {
  const neighbours = Array.from({ length: msg.stations + 1 }, () => []);
  for (const [transport, pairs] of Object.entries(msg.edges)) {
    if (transport === "ferry") continue;
    for (const [a, b] of pairs) {
      neighbours[a].push(b);
      neighbours[b].push(a);
    }
  }
  return { name: msg.name, stations: msg.stations, neighbours, distances: new Map() };
}

// Shortest-path distances (in moves over land) from `station` to every station.
function distancesFrom(board, station) {
  let dist = board.distances.get(station);
  if (dist) return dist;
  dist = new Array(board.stations + 1).fill(Infinity);
  dist[station] = 0;
  const queue = [station];
  for (let head = 0; head < queue.length; head++) {
    const here = queue[head];
    for (const next of board.neighbours[here]) {
      if (dist[next] === Infinity) {
        dist[next] = dist[here] + 1;
        queue.push(next);
      }
    }
  }
  board.distances.set(station, dist);
  return dist;
}

function choose(turn) {
  const view = turn.view;
  const board = gameBoard.get(turn.game);
  const far = (from, targets) => Math.min(...targets.map((t) => distancesFrom(board, t)[from]));
  const score = (move) => {   // lower is better
    const to = destination(move);
    return turn.seat === "mrx" ? -far(to, view.detectives) : far(to, view.possible);
  };
  return turn.legal.reduce((best, move) => (score(move) < score(best) ? move : best));
}

function connect() {
  const ws = new WebSocket(url);
  const send = (msg) => ws.send(JSON.stringify(msg));

  ws.addEventListener("open", () => {
    const hello = { type: "hello", protocol: 1, name, version: "js-1", token: args.token || null,
                    resume: resumeToken, instance };
    if (ladder) {
      hello.ladder = ladder;
      if (args["max-games"]) hello.max_games = Number(args["max-games"]);
    }
    send(hello);
    if (leaving) send({ type: "leave" });   // after a resume: still leaving
  });

  ws.addEventListener("message", (event) => {
    const msg = JSON.parse(event.data);   // unknown extra fields are simply not read
    switch (msg.type) {
      case "welcome":
        failures = 0;
        resumeToken = msg.resume_token;
        if (!announced) {
          console.log(`connected as ${name} (session ${msg.session})`);
          announced = true;
        } else {
          console.error(`resumed session ${msg.session}: ${msg.resumed.length} games`);
        }
        break;
      case "board":   // once per board, before the first game on it
        boards.set(msg.name, loadBoard(msg));
        break;
      case "game_start": {   // rules.board: a board name, or the map itself (custom maps)
        const board = msg.rules.board;
        gameBoard.set(msg.game, boards.get(typeof board === "string" ? board : board.name));
        given.add(msg.game);
        active.add(msg.game);
        if (given.size >= maxGames && !leaving) {
          leaving = true;
          send({ type: "leave" });   // answered by "leaving": no new games from now on
        }
        break;
      }
      case "your_turn":
        send({ type: "move", game: msg.game, turn: msg.turn, seat: msg.seat, move: choose(msg) });
        break;
      case "ping":
        send({ type: "pong", nonce: msg.nonce ?? null });
        break;
      case "error":
        if (msg.code === "bad_resume_token") resumeToken = null;  // next time: a new session
        console.error(`server error ${msg.code}: ${msg.message}`);
        break;
      case "game_over":
        played += 1;
        gameBoard.delete(msg.game);
        active.delete(msg.game);
        console.error(`game ${msg.game}: ${msg.winner} won (${msg.termination})`);
        if (leaving && active.size === 0) {
          stopping = true;
          ws.close();
        }
        break;
      case "standing":   // after each ladder game: rating and rank on that ruleset
        console.error(`${msg.rules}: rank ${msg.rank} of ${msg.of}, ` +
                      `mu ${msg.rating.mu} sigma ${msg.rating.sigma}`);
        break;
      default:
        break;   // update, move_ok, leaving: nothing to do for this bot
    }
  });

  // A dropped connection is resumed: reconnect and send the resume token within the
  // server's grace period; the server re-sends our games and any pending turn.
  ws.addEventListener("close", (event) => {
    if (stopping || event.code === 1001) process.exit(0);   // done, or the server stopped
    if (failures >= RETRY_MS.length) {
      console.error(`cannot reach ${url}; giving up`);
      process.exit(1);
    }
    const wait = RETRY_MS[failures++];
    console.error(`connection lost (code ${event.code}); reconnecting in ${wait} ms`);
    setTimeout(connect, wait);
  });
  ws.addEventListener("error", (event) => {
    console.error(`websocket error: ${event.message || event.type}`);   // "close" follows
  });
}

if (require.main === module) {
  connect();
} else {
  module.exports = { loadBoard, distancesFrom, choose };   // for tests
}
