// A yard bot in plain JavaScript, speaking the raw JSON protocol (docs/protocol.md).
// No dependencies: Node 20's built-in WebSocket (flag --experimental-websocket; default
// from Node 22).
//
//   node --experimental-websocket examples/js/bot.js --url ws://127.0.0.1:8765 --name jsbot
//
// Strategy: Mister X takes the move that ends farthest (by station number spread) from the
// detectives' stations' average; detectives move to the legal station nearest, by number,
// to a possible location. Crude on purpose: the point is the protocol.

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) =>
    arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs, []));
const url = args.url || "ws://127.0.0.1:8765";
const name = args.name || "jsbot";
const maxGames = args.games ? Number(args.games) : Infinity;
let played = 0;

const ws = new WebSocket(url);
const send = (msg) => ws.send(JSON.stringify(msg));

function destination(move) {        // "bus:52+taxi:13" -> 13
  const legs = move.split("+");
  return Number(legs[legs.length - 1].split(":")[1]);
}

function choose(turn) {
  const view = turn.view;
  const score = (move) => {
    const to = destination(move);
    if (turn.seat === "mrx") {
      return -Math.min(...view.detectives.map((d) => Math.abs(d - to)));
    }
    return Math.min(...view.possible.map((p) => Math.abs(p - to)));
  };
  return turn.legal.reduce((best, move) => (score(move) < score(best) ? move : best));
}

ws.addEventListener("open", () => {
  send({ type: "hello", protocol: 1, name, version: "js-1", token: args.token || null });
});

ws.addEventListener("message", (event) => {
  const msg = JSON.parse(event.data);
  switch (msg.type) {
    case "welcome":
      console.log(`connected as ${name} (session ${msg.session})`);
      break;
    case "your_turn":
      send({ type: "move", game: msg.game, turn: msg.turn, seat: msg.seat, move: choose(msg) });
      break;
    case "ping":
      send({ type: "pong", nonce: msg.nonce ?? null });
      break;
    case "error":
      console.error(`server error ${msg.code}: ${msg.message}`);
      break;
    case "game_over":
      played += 1;
      console.error(`game ${msg.game}: ${msg.winner} won (${msg.termination})`);
      if (played >= maxGames) ws.close();
      break;
    default:
      break;   // game_start, update, move_ok: nothing to do for this bot
  }
});

ws.addEventListener("close", () => process.exit(0));
ws.addEventListener("error", (event) => {
  console.error(`websocket error: ${event.message || event.type}`);
  process.exit(1);
});
