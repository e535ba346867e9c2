// DOM helpers. Text always goes in through text nodes (never innerHTML), so a bot named
// "<img src=x onerror=alert(1)>" is shown as those characters.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("a", {href: "#/"}, "text", otherNode). */
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replace the children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren();
  fill(el, {}, children);
  return el;
}

/** GET a JSON API endpoint; throws an Error with the API's message on failure. Parameter
 * values are strings or numbers (null, undefined and "" are left out); anything else is a
 * bug in the page, refused here rather than sent as "[object Object]". */
export async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(params || {})) {
    if (value === null || value === undefined || value === "") continue;
    if (typeof value !== "string" && typeof value !== "number") {
      throw new TypeError(`API parameter ${key} is a ${typeof value}, not a string or number`);
    }
    url.searchParams.set(key, value);
  }
  let response = await fetch(url);
  for (let tries = 0; response.status === 503 && tries < 60; tries++) {
    // 503 "computing": the first ratings of a large database take a while; ask again.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    response = await fetch(url);
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const message = data && data.error ? data.error.message : response.statusText;
    const err = new Error(message);
    err.status = response.status;
    err.code = data && data.error ? data.error.code : null;
    throw err;
  }
  return data;
}

/** "1 game", "2 games": a count with its noun in the right number (`many`: an irregular
 * plural). Every count a page shows goes through here. */
export function plural(count, one, many = `${one}s`) {
  return `${count} ${count === 1 ? one : many}`;
}

/** decodeURIComponent that answers null for a malformed %-escape instead of throwing
 * (addresses come from users: "#/games/%" must give a page, not an exception). */
export function decoded(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

export function fmt(value, digits = 0) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  const text = Number(value).toFixed(digits);
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
}

export function ci(pair) {
  if (!pair) return "–";
  return `${fmt(pair[0])} … ${fmt(pair[1])}`;
}

export function pct(value) {
  return value === null || value === undefined ? "–" : `${(100 * value).toFixed(0)}%`;
}

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace("T", " ").slice(0, 19);
}
