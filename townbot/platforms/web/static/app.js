// The town page: the map of the chosen tick with clickable people, a replay slider over the
// whole history that follows the newest tick while it is at its end, and the event feed.
"use strict";

const slider = document.getElementById("replay");
const map = document.getElementById("map");
const markers = document.getElementById("markers");
const clock = document.getElementById("clock");
const mode = document.getElementById("mode");
const feed = document.getElementById("feed");
const area = document.getElementById("area");
const POLL_MS = 2000;
let following = true;
let shown = -1;

async function getJson(url) {
  const response = await fetch(url, {cache: "no-store"});
  if (!response.ok) throw new Error(await response.text());
  return response.json();
}

async function showTick(tick) {
  const moment = await getJson(`api/moment?tick=${tick}`);
  if (Number(slider.value) !== moment.tick && !following) return;  // the slider moved on
  map.src = `map.png?tick=${moment.tick}`;
  markers.replaceChildren(...moment.people.map((person) => marker(person, moment)));
  clock.textContent = moment.time;
  shown = moment.tick;
  mode.textContent = following ? "live" : "replay";
  mode.className = following ? "live" : "replay";
  await showEvents(moment.tick);
}

function marker(person, moment) {
  const link = document.createElement(person.visitor ? "span" : "a");
  if (!person.visitor) link.href = `resident/${encodeURIComponent(person.name)}`;
  link.className = "marker";
  link.dataset.name = person.name;
  link.title = `${person.name}: ${person.action} (${person.place})`;
  link.style.left = `${(100 * person.x / moment.width).toFixed(3)}%`;
  link.style.top = `${(100 * person.y / moment.height).toFixed(3)}%`;
  return link;
}

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

async function poll() {
  try {
    const town = await getJson("api/town");
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

slider.addEventListener("input", () => {
  following = Number(slider.value) === Number(slider.max);
  showTick(Number(slider.value));
});
document.getElementById("live-button").addEventListener("click", () => {
  following = true;
  shown = -1;
  poll();
});
area.addEventListener("change", () => showEvents(Number(slider.value)));
poll();
setInterval(poll, POLL_MS);
