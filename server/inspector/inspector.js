// The ecsnet inspector: reads the admin endpoint's JSON API and event stream (docs/inspector.md) and draws
// the world. Read-only, no libraries. Sets body[data-live] to "1" after the first frame (tests wait on it).
'use strict';

const params = new URLSearchParams(location.search);
const token = params.get('access_token');
const api = (path) => token ? path + (path.includes('?') ? '&' : '?') + 'access_token=' + encodeURIComponent(token) : path;
const $ = (id) => document.getElementById(id);

const ARENA = 2048; // metres, centred on 0
const KIND_COLOURS = ['#4fb3ff', '#6fdc8c', '#ffcf5c', '#ff6b6b', '#c58cff', '#5ce1e6', '#ff9f43', '#a3a3a3'];
const kindColour = (k) => KIND_COLOURS[((k % KIND_COLOURS.length) + KIND_COLOURS.length) % KIND_COLOURS.length];

const state = {
  frame: null,
  selected: null,        // entity index
  selectedClient: null,  // client id (its relevant area is drawn)
  page: 0,
  pages: 1,
  events: [],            // arrival times and sizes of the last events
  relevancy: 0,
};

// --- map ---
const map = $('map');
const ctx = map.getContext('2d');
const toPixel = (metres) => (metres + ARENA / 2) / ARENA * map.width;
const toMetres = (pixel) => pixel / map.width * ARENA - ARENA / 2;

function drawMap() {
  const f = state.frame;
  ctx.fillStyle = '#0b0d10';
  ctx.fillRect(0, 0, map.width, map.height);
  ctx.strokeStyle = '#1f242c';
  for (let m = -1024; m <= 1024; m += 256) {
    ctx.beginPath(); ctx.moveTo(toPixel(m), 0); ctx.lineTo(toPixel(m), map.height); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(0, toPixel(m)); ctx.lineTo(map.width, toPixel(m)); ctx.stroke();
  }
  if (!f) return;
  const m = f.map;
  for (let i = 0; i < m.x.length; i++) {
    ctx.fillStyle = kindColour(m.k[i]);
    ctx.fillRect(toPixel(m.x[i]) - 1, map.height - toPixel(m.y[i]) - 1, 2, 2);
  }
  for (const c of f.clients) {
    if (c.x === null) continue;
    const px = toPixel(c.x), py = map.height - toPixel(c.y);
    if (state.selectedClient === c.id && f.relevancy_radius > 0) {
      ctx.strokeStyle = 'rgba(79,179,255,0.8)';
      ctx.beginPath();
      ctx.arc(px, py, f.relevancy_radius / ARENA * map.width, 0, 2 * Math.PI);
      ctx.stroke();
    }
    ctx.fillStyle = '#ffffff';
    ctx.beginPath(); ctx.arc(px, py, 4, 0, 2 * Math.PI); ctx.fill();
    ctx.font = '12px system-ui, sans-serif';
    ctx.fillText(c.name || ('client ' + c.id), px + 6, py - 6);
  }
  if (state.selected !== null) {
    const at = m.i.indexOf(state.selected);
    const sel = state.selectedPosition;
    const x = at >= 0 ? m.x[at] : sel && sel.x, y = at >= 0 ? m.y[at] : sel && sel.y;
    if (x !== undefined && x !== null) {
      ctx.strokeStyle = '#ff4d4d';
      ctx.lineWidth = 2;
      ctx.strokeRect(toPixel(x) - 6, map.height - toPixel(y) - 6, 12, 12);
      ctx.lineWidth = 1;
    }
  }
}

map.addEventListener('click', (event) => {
  const f = state.frame;
  if (!f) return;
  const rect = map.getBoundingClientRect();
  const x = toMetres((event.clientX - rect.left) * map.width / rect.width);
  const y = toMetres(map.height - (event.clientY - rect.top) * map.height / rect.height);
  let best = -1, bestDistance = Infinity;
  for (let i = 0; i < f.map.x.length; i++) {
    const d = (f.map.x[i] - x) ** 2 + (f.map.y[i] - y) ** 2;
    if (d < bestDistance) { bestDistance = d; best = i; }
  }
  if (best >= 0 && bestDistance < 30 * 30) select(f.map.i[best]);
});

function legend() {
  // Swatches coloured through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
  const item = (colour, label) => {
    const span = document.createElement('span');
    const swatch = document.createElement('i');
    swatch.style.background = colour;
    span.append(swatch, label);
    return span;
  };
  $('legend').replaceChildren(...KIND_COLOURS.map((c, k) => item(c, `kind ${k}`)), item('#ffffff', 'avatar'));
}

// --- entity list ---
async function getJson(path) {
  const response = await fetch(api(path), { cache: 'no-store' });
  if (!response.ok) throw new Error(path + ': ' + response.status);
  return response.json();
}

async function loadEntities() {
  const q = $('search').value.trim();
  try {
    const list = await getJson(`/api/entities?page=${state.page}&per_page=100&q=${encodeURIComponent(q)}`);
    state.pages = Math.max(1, list.pages);
    $('page').textContent = `${list.page + 1} / ${state.pages} (${list.total})`;
    const ul = $('entities');
    ul.replaceChildren(...list.items.map((e) => {
      const li = document.createElement('li');
      li.dataset.index = e.index;
      li.textContent = `#${e.index} ` + (e.client ? `[${e.client}] ` : '') +
        (e.kind !== undefined ? `kind ${e.kind} ` : '') +
        (e.x !== undefined && e.x !== null ? `(${e.x.toFixed(1)}, ${e.y.toFixed(1)})` : '');
      if (e.index === state.selected) li.classList.add('selected');
      li.addEventListener('click', () => select(e.index));
      return li;
    }));
  } catch (error) {
    $('page').textContent = String(error.message);
  }
}

$('search').addEventListener('input', () => { state.page = 0; loadEntities(); });
$('prev').addEventListener('click', () => { if (state.page > 0) { state.page--; loadEntities(); } });
$('next').addEventListener('click', () => { if (state.page + 1 < state.pages) { state.page++; loadEntities(); } });

// --- entity panel ---
function select(index) {
  state.selected = index;
  for (const li of $('entities').children) li.classList.toggle('selected', Number(li.dataset.index) === index);
  const client = state.frame && state.frame.clients.find((c) => c.avatar === index);
  if (client) state.selectedClient = client.id;
  loadEntity();
  drawMap();
}

// One request at a time; a selection made while one is out is loaded as soon as it returns, so the panel
// never stays on the entity selected before.
let entityLoading = false;
let entityStale = false;
async function loadEntity() {
  if (state.selected === null) return;
  if (entityLoading) { entityStale = true; return; }
  entityLoading = true;
  entityStale = false;
  try {
    const e = await getJson(`/api/entity/${state.selected}`);
    $('entity-title').textContent = `#${e.index} (generation ${e.generation}, tick ${e.tick})` +
      (e.client ? ` — avatar of ${e.client.name}` : '');
    const rows = [];
    for (const c of e.components) {
      rows.push(`<tr><th colspan="3" class="component" data-component="${c.name}">${c.name}</th></tr>`);
      for (const f of c.fields) {
        rows.push(`<tr><td>${f.name}</td><td title="quantized">${f.quantized}</td><td title="real" class="real">${Number.isInteger(f.real) ? f.real : f.real.toFixed(4)}</td></tr>`);
      }
      if (c.name === 'Transform') {
        const x = c.fields.find((f) => f.name === 'x'), y = c.fields.find((f) => f.name === 'y');
        if (x && y) state.selectedPosition = { x: x.real, y: y.real };
      }
    }
    // Server-only components (read by the tick thread for this entity): values only, never quantized.
    if (e.server_only) {
      for (const c of e.server_only.components) {
        rows.push(`<tr><th colspan="3" class="component server" data-component="${escapeHtml(c.name)}">${escapeHtml(c.name)} <span class="status">(server only)</span></th></tr>`);
        for (const f of c.fields) {
          rows.push(`<tr><td>${escapeHtml(f.name)}</td><td>–</td><td class="real">${Number.isInteger(f.value) ? f.value : Number(f.value).toFixed(4)}</td></tr>`);
        }
      }
    }
    $('entity-panel').innerHTML = `<table><thead><tr><th>field</th><th>quantized</th><th>real</th></tr></thead><tbody>${rows.join('')}</tbody></table>` +
      (e.server_only ? '' : '<p class="status">server-only components: not available this time</p>');
    $('entity-panel').dataset.tick = e.tick;
  } catch (error) {
    $('entity-panel').textContent = `entity ${state.selected}: ${error.message} (gone?)`;
  } finally {
    entityLoading = false;
    if (entityStale) loadEntity();
  }
}

// --- clients ---
const text = (v, digits) => v === null || v === undefined ? '–' : (digits !== undefined ? Number(v).toFixed(digits) : String(v));
const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

// Rows are kept across frames (keyed by client id) and only their cells rewritten: a row rebuilt between a
// press and its release would swallow the click.
const CLIENT_COLUMNS = 11;
function drawClients(clients) {
  const body = $('clients').tBodies[0];
  const rows = new Map([...body.rows].map((row) => [Number(row.dataset.client), row]));
  const cells = (c) => [c.id, c.name, c.remote, c.transport, text(c.rtt_ms, 1),
    c.loss === null ? '–' : (c.loss * 100).toFixed(1) + '%', c.bytes_in, c.bytes_out, text(c.ticks_behind),
    c.full_state_requests, c.inputs].map(String);
  clients.forEach((c, at) => {
    let row = rows.get(c.id);
    if (row === undefined) {
      row = document.createElement('tr');
      row.dataset.client = c.id;
      for (let k = 0; k < CLIENT_COLUMNS; k++) row.insertCell();
    }
    rows.delete(c.id);
    cells(c).forEach((value, k) => { if (row.cells[k].textContent !== value) row.cells[k].textContent = value; });
    if (body.rows[at] !== row) body.insertBefore(row, body.rows[at] || null);
  });
  for (const gone of rows.values()) gone.remove();
}

$('clients').tBodies[0].addEventListener('click', (event) => {
  const row = event.target.closest('tr');
  const client = row && state.frame && state.frame.clients.find((c) => c.id === Number(row.dataset.client));
  if (!client) return;
  state.selectedClient = client.id;
  if (client.avatar !== null) select(client.avatar); else drawMap();
});

async function loadDisconnects() {
  try {
    const d = await getJson('/api/clients');
    $('disconnects').tBodies[0].innerHTML = d.disconnects.slice(0, 20).map((r) =>
      `<tr><td>${new Date(r.unix_ms).toLocaleTimeString()}</td><td>${r.id}</td><td>${escapeHtml(r.name)}</td><td>${escapeHtml(r.remote)}</td>` +
      `<td>${r.reason}</td><td>${escapeHtml(r.message)}</td></tr>`).join('');
  } catch (error) { /* the next poll retries */ }
}

// --- graphs ---
function graph(canvas, series, colours) {
  const g = canvas.getContext('2d');
  g.fillStyle = '#0b0d10';
  g.fillRect(0, 0, canvas.width, canvas.height);
  const all = series.flat().filter((v) => Number.isFinite(v));
  if (all.length === 0) return;
  const top = Math.max(1e-9, ...all) * 1.1;
  series.forEach((values, s) => {
    g.strokeStyle = colours[s];
    g.beginPath();
    values.forEach((v, i) => {
      const x = values.length <= 1 ? 0 : i / (values.length - 1) * canvas.width;
      const y = canvas.height - v / top * (canvas.height - 12);
      i === 0 ? g.moveTo(x, y) : g.lineTo(x, y);
    });
    g.stroke();
  });
  g.fillStyle = '#8a93a3';
  g.font = '10px system-ui, sans-serif';
  g.fillText(top.toPrecision(3), 2, 10);
}

async function loadSeries() {
  try {
    const { samples } = await getJson('/api/series');
    graph($('graph-tick'), [samples.map((s) => s.tick_ms_mean), samples.map((s) => s.tick_ms_max)], ['#4fb3ff', '#ff9f43']);
    graph($('graph-clients'), [samples.map((s) => s.clients)], ['#6fdc8c']);
    graph($('graph-bandwidth'), [samples.map((s) => s.bytes_out_per_s / 1024), samples.map((s) => s.bytes_in_per_s / 1024)], ['#4fb3ff', '#ff9f43']);
    document.body.dataset.samples = samples.length;
  } catch (error) { /* the next poll retries */ }
}

// --- the live stream ---
function onFrame(f, bytes) {
  state.frame = f;
  const now = performance.now();
  state.events.push({ at: now, bytes });
  while (state.events.length > 0 && now - state.events[0].at > 5000) state.events.shift();
  const span = (now - state.events[0].at) / 1000;
  $('tick').textContent = f.tick;
  $('entity-count').textContent = f.entities;
  $('client-count').textContent = f.clients.length;
  $('copy-ms').textContent = f.copy_ms.toFixed(2);
  $('update-rate').textContent = span > 0 ? ((state.events.length - 1) / span).toFixed(1) : '–';
  $('payload-kb').textContent = (bytes / 1024).toFixed(1);
  document.body.dataset.tick = f.tick;
  drawMap();
  drawClients(f.clients);
  loadEntity();
  if (document.body.dataset.live !== '1') {
    document.body.dataset.live = '1';
    $('status').textContent = 'live';
    loadEntities();
  }
}

function connect() {
  const source = new EventSource(api('/api/stream'));
  source.onmessage = (event) => onFrame(JSON.parse(event.data), event.data.length);
  source.onerror = () => {
    $('status').textContent = 'reconnecting…';
    document.body.dataset.live = '0';
  };
}

legend();
drawMap();
connect();
loadSeries();
loadDisconnects();
setInterval(loadSeries, 2000);
setInterval(loadDisconnects, 2000);
