// The board component: London from the station positions the map ships, grids as grids, in
// an SVG that zooms and pans (wheel, pinch, drag, +/−/fit buttons, keys) and keeps station
// numbers readable at every zoom. Pages build it with createBoard and never touch its SVG:
//
//   const board = createBoard(container, boardJson, { onStationClick: (station) => ... });
//   board.highlight([12, 40]);           // shaded: where Mister X may be
//   board.markLegal([13, 23]);           // ringed, focusable: legal destinations
//   board.select(13);                    // one selected station (null: none)
//   board.placePieces({ detectives: [50, 91], mrx: 13, lastSeen: null, path: [8, 13] });
//   board.zoomIn(); board.zoomOut(); board.reset(); board.scale();  // px per map unit
//   board.bringIntoView(13);             // pan to a station outside the view (phones)
//   board.destroy();                     // drop its observers
import { h, s } from "./dom.js";

// D4 brown, not purple: purple is the possible-location fill.
export const SEAT_COLOURS = ["#111111", "#d8443c", "#2c7bd6", "#2f9e57", "#6c4a2e", "#e67e22",
  "#16a2a2", "#7f8c8d"];

export const TRANSPORTS = ["taxi", "bus", "underground", "ferry"];

/** Smallest station label and station dot on screen (CSS px) at any zoom, and the radius
 * around a station's centre that a click or a tap picks it in (a 44 px wide target). */
const LABEL_PX = 12;
const DOT_PX = 9;
const PIECE_PX = 14;
const PIECE_LABEL_PX = 12;
const HIT_PX = 22;
/** Default zoom: the whole board, unless that puts neighbouring stations (the median
 * distance to the nearest one) closer than this on screen; then the middle of it. */
const SPACING_PX = 28;
const ZOOM_STEP = 1.4;
const DRAG_PX = 6;

function nearestDistances(points) {
  return points.map(([, x, y], i) => {
    let best = Infinity;
    points.forEach(([, x2, y2], j) => {
      if (i !== j) best = Math.min(best, Math.hypot(x - x2, y - y2));
    });
    return best;
  }).sort((a, b) => a - b);
}

/** Where each station is drawn, the drawing's bounds, and its sizes in map units. */
function geometry(board) {
  const grid = Boolean(board.grid);
  const points = board.stations.map(([id, x, y]) => grid ? [id, x * 100, y * 100] : [id, x, y]);
  const pos = new Map(points.map(([id, x, y]) => [id, [x, y]]));
  const near = points.length > 1 ? nearestDistances(points) : [100];
  const spacing = near[Math.floor(near.length / 2)];
  const closest = near[0];
  const pad = grid ? 50 : 40;
  const xs = points.map((p) => p[1]), ys = points.map((p) => p[2]);
  const x = Math.min(...xs) - pad, y = Math.min(...ys) - pad;
  return {
    grid, pos, spacing,
    bounds: { x, y, w: Math.max(...xs) + pad - x, h: Math.max(...ys) + pad - y },
    // Natural sizes (map units), and the largest dot that keeps the two closest
    // stations apart.
    dot: grid ? 30 : 18, label: grid ? 22 : 19, maxDot: Math.max(grid ? 30 : 18, 0.47 * closest),
  };
}

function drawEdges(board, pos) {
  const edges = s("g", { class: "edges" });
  for (const transport of TRANSPORTS) {
    for (const [a, b] of board.edges[transport] || []) {
      const [x1, y1] = pos.get(a), [x2, y2] = pos.get(b);
      edges.appendChild(s("line", { class: `edge ${transport}`, x1, y1, x2, y2 }));
    }
  }
  return edges;
}

function legendOf(board) {
  const present = TRANSPORTS.filter((t) => (board.edges[t] || []).length);
  return h("div", { class: "legend board-legend" }, present.map((t) =>
    h("span", { "data-transport": t }, h("i", { class: `line ${t}` }), t)));
}

/**
 * The board of `boardJson` (an /api/boards drawing) in `container`, fitted to it.
 * `onStationClick(station, event)`: called with the station number when a station is
 * clicked or tapped (the nearest one within 22 px of the pointer), or activated with Enter
 * or Space when it has the keyboard focus (legal destinations take the focus).
 */
export function createBoard(container, boardJson, { onStationClick = null } = {}) {
  const geo = geometry(boardJson);
  const { bounds, pos } = geo;
  const svg = s("svg", {
    class: "board", role: "img", "aria-label": `${boardJson.name} board`,
    "data-board": boardJson.name, "data-grid": geo.grid ? "1" : null,
    viewBox: `${bounds.x} ${bounds.y} ${bounds.w} ${bounds.h}`,
  });
  svg.appendChild(drawEdges(boardJson, pos));
  const stations = s("g", { class: geo.grid ? "stations grid" : "stations" });
  const nodes = new Map();
  const dots = [];
  for (const [id] of boardJson.stations) {
    const [x, y] = pos.get(id);
    const dot = s("circle", { cx: x, cy: y, r: geo.dot });
    dots.push(dot);
    const g = s("g", { class: "station", "data-station": id }, dot,
      s("text", { x, y }, String(id)));
    nodes.set(id, g);
    stations.appendChild(g);
  }
  svg.appendChild(stations);
  const overlay = s("g", { class: "overlay" });
  svg.appendChild(overlay);
  // Above the pieces: each piece's station number, and the number of any station a
  // piece's disc would cover (a piece never hides a station's number).
  const lifted = s("g", { class: "lifted", "aria-hidden": "true" });
  svg.appendChild(lifted);
  /** The pieces' discs: [station, x, y] (map units). */
  let placed = [];

  const port = h("div", { class: "board-port", tabindex: 0, role: "group",
    "aria-label": `${boardJson.name} board: drag to move, wheel or + and − to zoom, 0 to fit` },
  svg);
  port.style.aspectRatio = `${bounds.w} / ${bounds.h}`;
  const button = (cls, text, label, fn) => h("button", { type: "button", class: cls,
    title: label, "aria-label": label, onclick: fn }, text);
  const tools = h("div", { class: "board-tools", role: "toolbar", "aria-label": "zoom" },
    button("zoom-in", "+", "zoom in (+)", () => zoomBy(ZOOM_STEP)),
    button("zoom-out", "−", "zoom out (−)", () => zoomBy(1 / ZOOM_STEP)),
    button("zoom-reset", "⤢", "fit the board (0)", () => reset()));
  const legend = legendOf(boardJson);
  const root = h("div", { class: "board-view", "data-board": boardJson.name,
    "data-grid": geo.grid ? "1" : null },
    h("div", { class: "board-frame" }, port, tools), legend);
  container.appendChild(root);

  // ------------------------------------------------------------------ the view
  // `scale`: screen px per map unit; (cx, cy): the map point in the middle of the port.
  // `auto`: nobody zoomed or moved yet, so a resize fits the board again.
  const view = { scale: 0, cx: bounds.x + bounds.w / 2, cy: bounds.y + bounds.h / 2, auto: true };
  let sized = { piece: 0, dot: 0 };

  function portSize() {
    return [port.clientWidth, port.clientHeight];
  }
  function fitScale() {
    const [w, hgt] = portSize();
    return Math.min(w / bounds.w, hgt / bounds.h);
  }
  function defaultScale() {
    return Math.max(fitScale(), SPACING_PX / geo.spacing);
  }
  function limits() {
    const lo = Math.min(fitScale(), defaultScale());
    return [lo, Math.max(lo * 2, 3)];
  }

  function apply() {
    const [w, hgt] = portSize();
    if (!w || !hgt) return;
    const [lo, hi] = limits();
    view.scale = Math.min(hi, Math.max(lo, view.scale || defaultScale()));
    const vw = w / view.scale, vh = hgt / view.scale;
    // Keep some of the board in view: the middle stays within the drawing's bounds.
    view.cx = Math.min(bounds.x + bounds.w, Math.max(bounds.x, view.cx));
    view.cy = Math.min(bounds.y + bounds.h, Math.max(bounds.y, view.cy));
    svg.setAttribute("viewBox", `${view.cx - vw / 2} ${view.cy - vh / 2} ${vw} ${vh}`);
    svg.setAttribute("data-scale", view.scale.toFixed(4));
    resize();
  }

  /** Marker sizes for this zoom (map units): never smaller on screen than the *_PX
   * sizes, never smaller than their natural size; station dots at most maxDot. */
  function resize() {
    const u = 1 / view.scale;
    const label = Math.max(geo.label, LABEL_PX * u);
    stations.style.fontSize = `${label.toFixed(2)}px`;
    lifted.style.fontSize = `${label.toFixed(2)}px`;
    const dot = Math.min(geo.maxDot, Math.max(geo.dot, DOT_PX * u));
    if (Math.abs(dot - sized.dot) > 0.05) {
      for (const c of dots) c.setAttribute("r", dot.toFixed(2));
    }
    sized = { dot, label, piece: Math.max(geo.dot + (geo.grid ? 4 : 12), PIECE_PX * u),
      pieceLabel: Math.max(14, PIECE_LABEL_PX * u) };
    overlay.style.fontSize = `${sized.pieceLabel.toFixed(2)}px`;
    for (const c of overlay.querySelectorAll("circle[data-grow]")) {
      c.setAttribute("r", (sized.piece + Number(c.dataset.grow) * u).toFixed(2));
    }
    lift();
  }

  /** Redraw the lifted numbers for the pieces `placed` at this zoom: by each piece its
   * station (below it, else above, right or left: where it meets the fewest other numbers
   * and discs), and over the pieces every other station whose number a disc reaches. */
  function lift() {
    lifted.replaceChildren();
    if (!placed.length || !sized.label) return;
    const L = sized.label, r = sized.piece;
    const reach = r + 1.2 * L; // a disc and half a three-digit number's box
    const taken = new Set(placed.map(([station]) => station));
    const halfW = (n) => 0.32 * L * String(n).length + 0.1 * L, halfH = 0.6 * L;
    const boxes = []; // [x, y, half width] of every number shown, pieces' own ones too
    for (const [id, [x, y]] of pos) if (!taken.has(id)) boxes.push([x, y, halfW(id)]);
    const cost = (x, y, w) => {
      let c = 0;
      for (const [bx, by, bw] of boxes) {
        const ox = w + bw - Math.abs(bx - x), oy = 2 * halfH - Math.abs(by - y);
        if (ox > 0 && oy > 0) c += ox * oy;
      }
      for (const [, px, py] of placed) {
        const dx = Math.max(Math.abs(px - x) - w, 0), dy = Math.max(Math.abs(py - y) - halfH, 0);
        if (Math.hypot(dx, dy) < r) c += L * L;
      }
      return c;
    };
    for (const [station, x, y] of placed) {
      const w = halfW(station), below = r + 0.75 * L, side = r + w + 0.25 * L;
      let best = null;
      for (const [cx, cy] of [[x, y + below], [x, y - below], [x + side, y], [x - side, y]]) {
        const c = cost(cx, cy, w);
        if (!best || c < best[2]) best = [cx, cy, c];
        if (c === 0) break;
      }
      boxes.push([best[0], best[1], w]);
      lifted.appendChild(s("text", { x: best[0], y: best[1], class: "piece-at", "data-station": station },
        String(station)));
    }
    for (const [id, [x, y]] of pos) {
      if (taken.has(id) || !placed.some(([, px, py]) => Math.hypot(px - x, py - y) < reach)) continue;
      lifted.appendChild(s("text", { x, y, class: "over-piece", "data-station": id }, String(id)));
    }
  }

  function zoomAt(scale, clientX, clientY) {
    const [w, hgt] = portSize();
    const box = port.getBoundingClientRect();
    const px = clientX === undefined ? w / 2 : clientX - box.left;
    const py = clientY === undefined ? hgt / 2 : clientY - box.top;
    const old = view.scale;
    const [lo, hi] = limits();
    const next = Math.min(hi, Math.max(lo, scale));
    // The map point under the pointer stays under it.
    const mx = view.cx + (px - w / 2) / old, my = view.cy + (py - hgt / 2) / old;
    view.scale = next;
    view.cx = mx - (px - w / 2) / next;
    view.cy = my - (py - hgt / 2) / next;
    view.auto = false;
    apply();
  }
  function zoomBy(factor, clientX, clientY) {
    zoomAt(view.scale * factor, clientX, clientY);
  }
  function panBy(dx, dy) {
    view.cx -= dx / view.scale;
    view.cy -= dy / view.scale;
    view.auto = false;
    apply();
  }
  function reset() {
    view.scale = defaultScale();
    view.cx = bounds.x + bounds.w / 2;
    view.cy = bounds.y + bounds.h / 2;
    view.auto = true;
    apply();
  }

  const observer = new ResizeObserver(() => {
    if (view.auto) reset();
    else apply();
  });
  observer.observe(port);

  // ------------------------------------------------------------------ input
  /** The station nearest to a screen point, within the hit radius (null: none). */
  function stationAt(clientX, clientY) {
    const ctm = svg.getScreenCTM();
    if (!ctm) return null;
    const p = new DOMPoint(clientX, clientY).matrixTransform(ctm.inverse());
    const reach = Math.max(HIT_PX / view.scale, sized.dot);
    let best = null, bestD = Infinity;
    for (const [id, [x, y]] of pos) {
      const d = Math.hypot(x - p.x, y - p.y);
      if (d < bestD) [best, bestD] = [id, d];
    }
    return bestD <= reach ? best : null;
  }

  // A click on the board is no reason to take the focus (and the arrow keys) from the
  // page; Tab gives it the focus for the keys.
  port.addEventListener("mousedown", (event) => event.preventDefault());
  port.addEventListener("wheel", (event) => {
    // At the zoom's end the wheel scrolls the page again.
    const [lo, hi] = limits();
    if ((event.deltaY > 0 && view.scale <= lo * 1.001) ||
      (event.deltaY < 0 && view.scale >= hi * 0.999) || !event.deltaY) return;
    event.preventDefault();
    const unit = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? 800 : 1;
    zoomBy(Math.exp(-event.deltaY * unit * 0.0015), event.clientX, event.clientY);
  }, { passive: false });

  // One pointer drags, two pinch; a press that moved less than DRAG_PX is a click.
  const pointers = new Map();
  let gesture = null;
  let moved = false;
  function pinchState() {
    const [a, b] = [...pointers.values()];
    return { dist: Math.hypot(a.x - b.x, a.y - b.y) || 1, x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
  }
  port.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 && event.pointerType === "mouse") return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    try { port.setPointerCapture(event.pointerId); } catch { /* a synthetic pointer */ }
    if (pointers.size === 1) {
      moved = false;
      gesture = { kind: "drag", x: event.clientX, y: event.clientY, x0: event.clientX,
        y0: event.clientY };
    } else if (pointers.size === 2) {
      moved = true;
      gesture = { kind: "pinch", scale: view.scale, ...pinchState() };
    }
  });
  port.addEventListener("pointermove", (event) => {
    if (!pointers.has(event.pointerId) || !gesture) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (gesture.kind === "drag") {
      if (!moved && Math.hypot(event.clientX - gesture.x0, event.clientY - gesture.y0) < DRAG_PX) {
        return;
      }
      moved = true;
      port.classList.add("dragging");
      panBy(event.clientX - gesture.x, event.clientY - gesture.y);
      gesture.x = event.clientX;
      gesture.y = event.clientY;
    } else if (pointers.size === 2) {
      const now = pinchState();
      panBy(now.x - gesture.x, now.y - gesture.y);
      zoomAt(gesture.scale * now.dist / gesture.dist, now.x, now.y);
      gesture.x = now.x;
      gesture.y = now.y;
    }
  });
  const release = (event) => {
    pointers.delete(event.pointerId);
    if (!pointers.size) {
      gesture = null;
      port.classList.remove("dragging");
    } else if (pointers.size === 1) {
      const [p] = pointers.values();
      gesture = { kind: "drag", x: p.x, y: p.y, x0: p.x, y0: p.y };
    }
  };
  port.addEventListener("pointerup", release);
  port.addEventListener("pointercancel", release);
  port.addEventListener("click", (event) => {
    if (moved) {
      moved = false;
      return;
    }
    const station = stationAt(event.clientX, event.clientY);
    if (station !== null && onStationClick) onStationClick(station, event);
  });
  port.addEventListener("keydown", (event) => {
    const st = event.target instanceof Element && event.target.closest(".station");
    if (st && (event.key === "Enter" || event.key === " ")) {
      if (onStationClick) onStationClick(Number(st.dataset.station), event);
    } else if (event.key === "+" || event.key === "=") zoomBy(ZOOM_STEP);
    else if (event.key === "-" || event.key === "_") zoomBy(1 / ZOOM_STEP);
    else if (event.key === "0") reset();
    else if (event.key === "ArrowLeft") panBy(60, 0);
    else if (event.key === "ArrowRight") panBy(-60, 0);
    else if (event.key === "ArrowUp") panBy(0, 60);
    else if (event.key === "ArrowDown") panBy(0, -60);
    else return;
    event.preventDefault();
  });

  // ------------------------------------------------------------------ what it shows
  function classify(cls, list) {
    const set = new Set(list || []);
    for (const [id, node] of nodes) node.classList.toggle(cls, set.has(id));
    return set;
  }

  let selected = null;
  const api = {
    root, svg, port, legend, nodes,
    /** Shade `stations` (where Mister X may be); [] clears. */
    highlight(list) {
      classify("possible", list);
    },
    /** Ring `stations` as legal destinations; they take the keyboard focus (Tab) and
     * Enter or Space on one calls onStationClick. [] clears. */
    markLegal(list) {
      const set = classify("legal", list);
      for (const [id, node] of nodes) {
        if (set.has(id)) {
          node.setAttribute("tabindex", "0");
          node.setAttribute("role", "button");
          node.setAttribute("aria-label", `station ${id}`);
        } else if (node.hasAttribute("tabindex")) {
          node.removeAttribute("tabindex");
          node.removeAttribute("role");
          node.removeAttribute("aria-label");
        }
      }
    },
    /** Mark `station` selected (null: none). */
    select(station) {
      selected = station === undefined ? null : station;
      classify("selected", selected === null ? [] : [selected]);
      root.setAttribute("data-selected", selected === null ? "" : String(selected));
    },
    get selected() {
      return selected;
    },
    /** Draw the pieces: `detectives` (stations, seat order), Mister X where the page may
     * show him (`mrx`: his station; `lastSeen`: his last reveal; `path`: stations so far);
     * the last moves (`moves`: [{seat, from, to}], a line and a ring where each started)
     * and `surfaced`: where Mister X just showed himself (a ring). */
    placePieces({ detectives = [], mrx = null, lastSeen = null, path = null, moves = [],
      surfaced = null } = {}) {
      overlay.replaceChildren();
      placed = [];
      const u = view.scale ? 1 / view.scale : 0;
      const ring = (x, y, grow, attrs = {}) => s("circle", { cx: x, cy: y,
        r: (sized.piece + grow * u).toFixed(2), "data-grow": grow, ...attrs });
      // The station a piece covers is written under it (lift()).
      const at = (x, y, station) => placed.push([station, x, y]);
      for (const m of moves || []) {
        const a = pos.get(m.from), b = pos.get(m.to);
        if (!a || !b) continue;
        const colour = SEAT_COLOURS[(parseInt(m.seat.slice(1), 10) || 0) % SEAT_COLOURS.length];
        overlay.appendChild(s("g", { class: "last-move", "data-seat": m.seat, "data-from": m.from,
          "data-to": m.to }, s("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: colour }),
        ring(a[0], a[1], -4, { stroke: colour })));
      }
      if (surfaced !== null && surfaced !== undefined && pos.get(surfaced)) {
        const [x, y] = pos.get(surfaced);
        overlay.appendChild(s("g", { class: "surfaced", "data-station": surfaced },
          ring(x, y, 9), s("title", {}, `Mister X surfaced at ${surfaced}`)));
      }
      if (path && path.length > 1) {
        const points = path.map((st) => pos.get(st).join(",")).join(" ");
        overlay.appendChild(s("polyline", { class: "path", points }));
      }
      if (lastSeen !== null && lastSeen !== undefined) {
        const [x, y] = pos.get(lastSeen);
        overlay.appendChild(s("g", { class: "piece last-seen", "data-station": lastSeen },
          ring(x, y, 5), s("title", {}, "last seen")));
      }
      detectives.forEach((station, i) => {
        const [x, y] = pos.get(station);
        overlay.appendChild(s("g", {
          class: "piece detective", "data-seat": `d${i + 1}`, "data-station": station,
        }, ring(x, y, 0, { fill: SEAT_COLOURS[(i + 1) % SEAT_COLOURS.length] }),
        s("text", { x, y }, `D${i + 1}`)));
        at(x, y, station);
      });
      if (mrx !== null && mrx !== undefined) {
        const [x, y] = pos.get(mrx);
        overlay.appendChild(s("g", { class: "piece mrx", "data-station": mrx },
          ring(x, y, 0), s("text", { x, y }, "X")));
        at(x, y, mrx);
      }
      lift();
    },
    /** Shade `possible` and draw the pieces in one call (the viewers' moment). */
    show({ possible = [], ...pieces } = {}) {
      api.highlight(possible);
      api.placePieces(pieces);
    },
    /** Pan so that `station` is well inside the view (nothing when it already is: on a
     * board that fits its box, never). */
    bringIntoView(station) {
      const p = pos.get(station);
      const [w, hgt] = portSize();
      if (!p || !w || !hgt || !view.scale || view.scale <= fitScale() * 1.001) return;
      // In view: at least 40 px (a piece and its ring) from the port's edges.
      const mx = w / view.scale / 2 - 40 / view.scale, my = hgt / view.scale / 2 - 40 / view.scale;
      if (Math.abs(p[0] - view.cx) <= mx && Math.abs(p[1] - view.cy) <= my) return;
      view.cx = p[0];
      view.cy = p[1];
      view.auto = false;
      apply();
    },
    zoomIn: () => zoomBy(ZOOM_STEP),
    zoomOut: () => zoomBy(1 / ZOOM_STEP),
    reset,
    /** Zoom to `scale` screen px per map unit, around the middle of the board's box. */
    zoomTo: (scale) => zoomAt(scale),
    /** Screen px per map unit now (0 before the board is laid out). */
    scale: () => view.scale,
    destroy() {
      observer.disconnect();
      root.remove();
    },
  };
  return api;
}
