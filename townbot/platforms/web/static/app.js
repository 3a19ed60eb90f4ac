// The town page: the drawn town under Leaflet (pan and zoom), everyone on it as a coloured
// disc with unique initials, speech bubbles for the last tick's lines, a replay slider over
// the whole history that follows the newest tick while it is at its end, the event feed, and
// a card for whoever is tapped. The page draws people itself over the map without them.
"use strict";

const slider = document.getElementById("replay");
const clock = document.getElementById("clock");
const mode = document.getElementById("mode");
const feed = document.getElementById("feed");
const area = document.getElementById("area");
const card = document.getElementById("card");
const POLL_MS = 2000;
const TARGET = 28;  // px across a person: a tap target at least 24 px
const GAP = 2;  // px between two people's targets
const BUBBLE_CHARS = 44;
let following = true;
let shown = -1;
let town = null;
let moment = null;
let chosen = null;
const markers = new Map();  // name -> Leaflet marker

const map = L.map("map", {crs: L.CRS.Simple, minZoom: -4, maxZoom: 2, zoomSnap: 0.25,
                          zoomDelta: 0.5, wheelPxPerZoomLevel: 120});
let picture = null;
map.createPane("bubbles").style.zIndex = 550;  // under the people: a bubble never hides one

// Leaflet takes a string as HTML: people's names and words go in as text nodes only.
function plain(text) {
  const span = document.createElement("span");
  span.textContent = text;
  return span;
}

function at(x, y) { return L.latLng(-y, x); }  // a pixel of the drawn town on the map

async function getJson(url) {
  const response = await fetch(url, {cache: "no-store"});
  if (!response.ok) throw new Error(await response.text());
  return response.json();
}

function showPicture(current) {
  const bounds = L.latLngBounds(at(0, current.height), at(current.width, 0));
  const url = `map.png?tick=${current.tick}&people=0`;
  if (picture === null) {
    // a phone shows the town's full height and pans sideways; a wide screen shows all of it
    // (centred where most people are)
    const cover = window.matchMedia("(max-width: 899px)").matches;
    const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const middle = current.people.length
      ? at(median(current.people.map((p) => p.x)), median(current.people.map((p) => p.y)))
      : bounds.getCenter();
    map.setView(cover ? middle : bounds.getCenter(), map.getBoundsZoom(bounds, cover));
    picture = L.imageOverlay(url, bounds, {className: "town-picture", alt: "map of the town"});
    picture.addTo(map);
    map.setMaxBounds(bounds.pad(0.25));
    map.setMinZoom(map.getZoom() - 1);
  } else {
    picture.setUrl(url);
  }
  document.getElementById("map").classList.toggle("night", current.night);
}

async function showTick(tick) {
  const next = await getJson(`api/moment?tick=${tick}`);
  if (Number(slider.value) !== next.tick && !following) return;  // the slider moved on
  const stepping = moment !== null && Math.abs(next.tick - moment.tick) === 1;
  moment = next;
  showPicture(next);
  showPeople(next, stepping);
  clock.textContent = next.time;
  shown = next.tick;
  mode.textContent = following ? "live" : "replay";
  mode.className = following ? "live" : "replay";
  if (chosen !== null) showCard(chosen);
  await showEvents(next.tick);
}

// --- people --------------------------------------------------------------------------------

function personIcon(person) {
  const disc = document.createElement("div");
  disc.className = "person";
  disc.dataset.name = person.name;
  disc.setAttribute("role", "button");
  disc.setAttribute("aria-label", `${person.name}: ${person.action} (${person.place})`);
  disc.append(person.initials);
  if (person.initials.length > 2) disc.classList.add(`letters-${Math.min(person.initials.length, 4)}`);
  const emoji = document.createElement("span");
  emoji.className = "emoji";
  disc.append(emoji);
  return L.divIcon({html: disc, className: "marker", iconSize: [TARGET, TARGET]});
}

function dressMarker(marker, person) {
  const disc = marker.getElement().firstChild;
  disc.style.setProperty("--colour", person.colour);
  disc.classList.toggle("walking", Boolean(person.walking_to));
  disc.classList.toggle("visitor", person.visitor);
  disc.classList.toggle("chosen", person.name === chosen);
  disc.setAttribute("aria-label", `${person.name}: ${person.action} (${person.place})`);
  disc.querySelector(".emoji").textContent = person.emoji;
  marker.getElement().dataset.name = person.name;
  marker.setTooltipContent(plain(`${person.emoji} ${person.name}: ${person.action}`));
}

function showPeople(current, stepping) {
  const here = new Set(current.people.map((p) => p.name));
  for (const [name, marker] of markers) {
    if (!here.has(name)) { marker.remove(); markers.delete(name); }
  }
  const container = document.getElementById("map");
  container.classList.toggle("stepping", stepping);  // walkers glide from tick to tick
  for (const person of current.people) {
    let marker = markers.get(person.name);
    if (!marker) {
      marker = L.marker(at(person.x, person.y), {icon: personIcon(person), keyboard: true,
                                                 title: "", riseOnHover: true});
      marker.bindTooltip(plain(""), {direction: "top", offset: [0, -TARGET / 2], className: "who"});
      marker.on("click", () => choose(marker.options.person));
      marker.addTo(map);
      markers.set(person.name, marker);
    }
    marker.options.person = person;
    dressMarker(marker, person);
  }
  spreadPeople();
  showBubbles(current);
  filterPeople();
  if (stepping) setTimeout(() => container.classList.remove("stepping"), 1300);
}

// People in one room stand in a compact grid around the room's middle at the map's zoom;
// where that grid meets others (walkers at a corner, the room next door) each takes the
// nearest free spot, so that no two targets overlap at any zoom.
function spreadPeople() {
  if (moment === null) return;
  const step = TARGET + GAP;
  const taken = [];
  const free = (point) => taken.every((other) =>
    Math.max(Math.abs(other.x - point.x), Math.abs(other.y - point.y)) >= step);
  const nearestFree = (wanted) => {
    for (let ring = 1; ring < 40; ring++) {
      const around = [];
      for (let i = -ring; i <= ring; i++) {
        for (let j = -ring; j <= ring; j++) {
          if (Math.max(Math.abs(i), Math.abs(j)) === ring) around.push(wanted.add([i * step, j * step]));
        }
      }
      around.sort((a, b) => a.distanceTo(wanted) - b.distanceTo(wanted));
      const spot = around.find(free);
      if (spot) return spot;
    }
    return wanted;
  };
  const groups = new Map();
  for (const person of moment.people) {
    const key = person.sector ? `${person.sector}\n${person.arena}` : `walker\n${person.name}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(person);
  }
  const ordered = [...groups.values()].sort((a, b) => b.length - a.length ||
                                               a[0].name.localeCompare(b[0].name));
  for (const group of ordered) {
    group.sort((a, b) => a.name.localeCompare(b.name));
    const points = group.map((p) => map.latLngToLayerPoint(at(p.x, p.y)));
    const middle = points.reduce((sum, p) => sum.add(p), L.point(0, 0)).divideBy(points.length);
    const columns = Math.ceil(Math.sqrt(group.length));
    const rows = Math.ceil(group.length / columns);
    group.forEach((person, index) => {
      const wanted = middle.add([(index % columns - (columns - 1) / 2) * step,
                                 (Math.floor(index / columns) - (rows - 1) / 2) * step]);
      const spot = free(wanted) ? wanted : nearestFree(wanted);
      taken.push(spot);
      markers.get(person.name).setLatLng(map.layerPointToLatLng(spot));
    });
  }
}

function showBubbles(current) {
  const said = new Map();
  for (const line of current.speech) said.set(line.actor, line.text);  // the latest line
  for (const [name, marker] of markers) {
    if (marker.bubble) { marker.bubble.remove(); marker.bubble = null; }
    const text = said.get(name);
    if (text === undefined) continue;
    const short = text.length > BUBBLE_CHARS ? `${text.slice(0, BUBBLE_CHARS - 1)}…` : text;
    marker.bubble = L.tooltip({permanent: true, direction: "top", className: "bubble",
                               pane: "bubbles",
                               offset: [0, -TARGET / 2]})
      .setLatLng(marker.getLatLng()).setContent(plain(`${name.split(" ")[0]}: “${short}”`));
    marker.bubble.addTo(map);
    marker.bubble.getElement().dataset.name = name;
    marker.bubble.getElement().title = text;
  }
}

function moveBubbles() {
  for (const marker of markers.values()) {
    if (marker.bubble) marker.bubble.setLatLng(marker.getLatLng());
  }
}

// --- an area and a person --------------------------------------------------------------------

function filterPeople() {
  const chosenArea = town && area.value ? town.areas[area.value] : null;
  for (const marker of markers.values()) {
    const person = marker.options.person;
    const sector = person.sector || person.walking_to;
    marker.getElement().firstChild.classList.toggle(
      "elsewhere", chosenArea !== null && sector !== chosenArea.name);
  }
}

function showArea() {
  filterPeople();
  const chosenArea = town && area.value ? town.areas[area.value] : null;
  if (chosenArea !== null) {
    const [left, top, right, bottom] = chosenArea.box;
    map.flyToBounds(L.latLngBounds(at(left, bottom), at(right, top)), {padding: [20, 20],
                                                                         duration: 0.5});
  } else if (picture !== null) {
    map.flyToBounds(picture.getBounds(), {duration: 0.5});
  }
  showEvents(Number(slider.value));
}

function choose(person) {
  chosen = person.name;
  for (const marker of markers.values()) {
    marker.getElement().firstChild.classList.toggle("chosen", marker.options.person.name === chosen);
  }
  showCard(chosen);
}

function showCard(name) {
  const person = moment.people.find((p) => p.name === name);
  if (!person) { card.hidden = true; return; }
  card.hidden = false;
  card.style.setProperty("--colour", person.colour);
  document.getElementById("card-name").textContent = person.name;
  document.getElementById("card-action").textContent = `${person.emoji} ${person.action}`;
  document.getElementById("card-place").textContent = person.place;
  const link = document.getElementById("card-link");
  link.hidden = person.visitor;
  link.textContent = `Open ${person.name}'s page`;
  link.href = `resident/${encodeURIComponent(person.name)}` + (following ? "" : `?tick=${moment.tick}`);
}

document.getElementById("card-close").addEventListener("click", () => {
  card.hidden = true;
  chosen = null;
  for (const marker of markers.values()) marker.getElement().firstChild.classList.remove("chosen");
});

// --- the feed and the clock ------------------------------------------------------------------

async function showEvents(tick) {
  const events = await getJson(`api/events?tick=${tick}&area=${encodeURIComponent(area.value)}`);
  feed.replaceChildren(...events.map((event) => {
    const item = document.createElement("li");
    const when = document.createElement("span");
    when.className = "when";
    when.textContent = event.time.slice(5);
    const what = event.kind === "speech" ? `${event.actor}: "${event.text}"`
                                         : `${event.actor} ${event.text}`;
    item.append(when, `${event.emoji} ${what}`);
    item.title = `#${event.channel} ${event.place}`;
    return item;
  }));
}

// Each area's full name on hover or tap, where the drawn name had to be shortened.
let areaNames = null;
function nameAreas() {
  if (areaNames !== null || town === null) return;
  areaNames = L.layerGroup(Object.values(town.areas).map(({name, box: [left, top, right, bottom]}) =>
    L.rectangle(L.latLngBounds(at(left, bottom), at(right, top)),
                {stroke: false, fillOpacity: 0, className: "area-box"})
      .bindTooltip(plain(name), {sticky: true, className: "who"}))).addTo(map);
}

async function poll() {
  try {
    town = await getJson("api/town");
    nameAreas();
    const last = town.ticks - 1;
    slider.max = String(last);
    if (following && shown !== last) {
      slider.value = String(last);
      await showTick(last);
    }
  } catch (error) {
    clock.textContent = `cannot reach the town (${error.message})`;
  }
}

map.on("zoomend", () => { spreadPeople(); moveBubbles(); });
slider.addEventListener("input", () => {
  following = Number(slider.value) === Number(slider.max);
  showTick(Number(slider.value));
});
document.getElementById("live-button").addEventListener("click", () => {
  following = true;
  shown = -1;
  poll();
});
area.addEventListener("change", showArea);
poll();
setInterval(poll, POLL_MS);
