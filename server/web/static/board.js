// The board as SVG: London from the station positions the map ships, grids as grids.
import { s } from "./dom.js";

export const SEAT_COLOURS = ["#111111", "#d8443c", "#2c7bd6", "#2f9e57", "#8e44ad", "#e67e22",
  "#16a2a2", "#7f8c8d"];

const PAD = 40;

/** Build the static board (edges and stations) once; returns {svg, place(station)}. */
export function drawBoard(board) {
  const pos = new Map();
  let scale = 1;
  if (board.grid) {
    scale = 100;
    for (const [id, x, y] of board.stations) pos.set(id, [x * scale + 60, y * scale + 60]);
  } else {
    for (const [id, x, y] of board.stations) pos.set(id, [x, y]);
  }
  const xs = [...pos.values()].map((p) => p[0]);
  const ys = [...pos.values()].map((p) => p[1]);
  const minX = Math.min(...xs) - PAD, minY = Math.min(...ys) - PAD;
  const width = Math.max(...xs) - minX + PAD, height = Math.max(...ys) - minY + PAD;
  const svg = s("svg", {
    class: "board", viewBox: `${minX} ${minY} ${width} ${height}`, role: "img",
    "aria-label": `${board.name} board`, "data-board": board.name,
    "data-grid": board.grid ? "1" : null,
  });
  const radius = board.grid ? 30 : 17;
  const edges = s("g", { class: "edges" });
  for (const transport of ["taxi", "bus", "underground", "ferry"]) {
    for (const [a, b] of board.edges[transport] || []) {
      const [x1, y1] = pos.get(a), [x2, y2] = pos.get(b);
      edges.appendChild(s("line", { class: `edge ${transport}`, x1, y1, x2, y2 }));
    }
  }
  svg.appendChild(edges);
  const stations = s("g", { class: board.grid ? "stations grid" : "stations" });
  const nodes = new Map();
  for (const [id] of board.stations) {
    const [x, y] = pos.get(id);
    const g = s("g", { class: "station", "data-station": id },
      s("circle", { cx: x, cy: y, r: radius }), s("text", { x, y }, String(id)));
    nodes.set(id, g);
    stations.appendChild(g);
  }
  svg.appendChild(stations);
  const overlay = s("g", { class: "overlay" });
  svg.appendChild(overlay);
  return { svg, pos, nodes, overlay, radius };
}

/**
 * Draw one moment: `possible` stations shaded, detectives, and Mister X where the
 * perspective may show him (`mrx`: his true station; `lastSeen`: his last reveal;
 * `path`: his true path so far).
 */
export function drawPieces(drawn, { detectives, possible, mrx, lastSeen, path }) {
  const shaded = new Set(possible || []);
  for (const [id, node] of drawn.nodes) node.classList.toggle("possible", shaded.has(id));
  drawn.overlay.replaceChildren();
  const r = drawn.radius + (drawn.svg.getAttribute("data-grid") ? 4 : 12);
  if (path && path.length > 1) {
    const points = path.map((st) => drawn.pos.get(st).join(",")).join(" ");
    drawn.overlay.appendChild(s("polyline", { class: "path", points }));
  }
  if (lastSeen !== null && lastSeen !== undefined) {
    const [x, y] = drawn.pos.get(lastSeen);
    drawn.overlay.appendChild(s("g", { class: "piece last-seen", "data-station": lastSeen },
      s("circle", { cx: x, cy: y, r: r + 6 }), s("title", {}, "last seen")));
  }
  detectives.forEach((station, i) => {
    const [x, y] = drawn.pos.get(station);
    drawn.overlay.appendChild(s("g", {
      class: "piece detective", "data-seat": `d${i + 1}`, "data-station": station,
    }, s("circle", { cx: x, cy: y, r, fill: SEAT_COLOURS[(i + 1) % SEAT_COLOURS.length] }),
    s("text", { x, y }, `D${i + 1}`)));
  });
  if (mrx !== null && mrx !== undefined) {
    const [x, y] = drawn.pos.get(mrx);
    drawn.overlay.appendChild(s("g", { class: "piece mrx", "data-station": mrx },
      s("circle", { cx: x, cy: y, r }), s("text", { x, y }, "X")));
  }
}
