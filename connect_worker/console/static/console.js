/* Sluice console: a page over the worker's REST API. No library, no build step.
 *
 * Routes (the URL's hash): #/ connectors, #/connectors/NAME one connector,
 * #/pipelines the pipeline files folder, #/topics and #/topics/NAME.
 * The current page is fetched again every POLL_MS; /metrics is polled on every
 * page so the throughput sparklines keep their history while you navigate.
 */
"use strict";

const POLL_MS = 2000;
const SPARK_POINTS = 60;            // two minutes at POLL_MS
const SPARK_MIN_SPAN = 15;          // a young sparkline is drawn over 15 steps, then widens
const PEEK_LIMIT = 20;
const DLQ_KEY = "errors.deadletterqueue.topic.name";

const main = document.getElementById("main");
const notice = document.getElementById("notice");

// ------------------------------------------------------------------ helpers

function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => (
    { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function badge(state, extra = "") {
  return `<span class="badge ${esc(state)} ${extra}" data-state="${esc(state)}">${esc(state)}</span>`;
}

function fmtNumber(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return "—";
  return Number(n).toLocaleString("en-US", { maximumFractionDigits: 1 });
}

function fmtTime(ms) {
  if (!ms) return "—";
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function call(method, path, { json = true } = {}) {
  const response = await fetch(path, { method, headers: { Accept: "application/json" } });
  const text = await response.text();
  let body = null;
  if (text && json) {
    try { body = JSON.parse(text); } catch (e) { body = null; }
  }
  if (!response.ok) {
    const message = (body && body.message) || text || response.statusText;
    throw new HttpError(response.status, `${response.status}: ${message}`);
  }
  return json ? body : text;
}

const get = (path) => call("GET", path);
const enc = encodeURIComponent;

function showNotice(kind, text) {
  notice.className = `notice ${kind}`;
  notice.textContent = text;
  notice.hidden = false;
  clearTimeout(showNotice.timer);
  if (kind === "info") showNotice.timer = setTimeout(() => { notice.hidden = true; }, 4000);
}

// ------------------------------------------------------------------ metrics

/** Parse Prometheus text: [{name, labels, value}] (comments skipped). */
function parseMetrics(text) {
  const samples = [];
  for (const line of text.split("\n")) {
    if (!line || line[0] === "#") continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/);
    if (!m) continue;
    const labels = {};
    if (m[3]) {
      for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
      }
    }
    samples.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return samples;
}

const THROUGHPUT = new Set([
  "kafka_connect_source_task_metrics_source_record_write_total",
  "kafka_connect_sink_task_metrics_sink_record_read_total",
]);
const LAG = "kafka_consumer_consumer_fetch_manager_metrics_records_lag";

const metrics = {
  available: true,
  last: null,          // {t, totals: {connector: n}}
  rates: {},           // connector -> [records/s, ...]
  lag: {},             // connector -> records behind (sum over partitions)
  async poll() {
    let text;
    try {
      text = await call("GET", "/metrics", { json: false });
    } catch (e) {
      this.available = !(e instanceof HttpError && e.status === 404);
      return;
    }
    this.available = true;
    const t = performance.now();
    const totals = {};
    const lag = {};
    for (const s of parseMetrics(text)) {
      const c = s.labels.connector;
      if (c === undefined) continue;
      if (THROUGHPUT.has(s.name)) totals[c] = (totals[c] || 0) + s.value;
      else if (s.name === LAG) lag[c] = (lag[c] || 0) + s.value;
    }
    if (this.last) {
      const dt = (t - this.last.t) / 1000;
      for (const [c, n] of Object.entries(totals)) {
        const before = this.last.totals[c];
        const rate = before === undefined || n < before ? 0 : (n - before) / dt;
        const series = (this.rates[c] = this.rates[c] || []);
        series.push(rate);
        if (series.length > SPARK_POINTS) series.shift();
      }
    }
    this.last = { t, totals };
    this.lag = lag;
  },
};

function sparkline(connector) {
  const series = metrics.rates[connector] || [];
  const w = 120, h = 26;
  const max = Math.max(1, ...series);
  // The newest point is at the right; until MIN_SPAN samples exist they fill the width.
  const span = Math.max(series.length - 1, SPARK_MIN_SPAN);
  const step = w / span;
  const offset = (span - series.length + 1) * step;
  const y = (v) => (h - 2 - (v / max) * (h - 4)).toFixed(1);
  const points = series.map((v, i) => `${(offset + i * step).toFixed(1)},${y(v)}`);
  const line = points.join(" ");
  const area = points.length > 1
    ? `<polygon class="area" points="${offset.toFixed(1)},${h} ${line} ${w},${h}"></polygon>` : "";
  const now = series.length ? series[series.length - 1] : null;
  const title = series.length
    ? `records/s over the last ${series.length * POLL_MS / 1000}s, peak ${fmtNumber(Math.max(...series))}/s`
    : "waiting for a second /metrics sample";
  return `<svg class="spark" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img"
    data-points="${series.length}"><title>${esc(title)}</title>
    <rect class="frame" x="0" y="0" width="${w}" height="${h}"></rect>
    <line class="base" x1="0" y1="${h - 2}" x2="${w}" y2="${h - 2}"></line>${area}
    <polyline points="${line}"></polyline>${points.length
      ? `<circle class="now" cx="${w}" cy="${y(now)}" r="2"></circle>` : ""}</svg><span
    class="rate" data-rate="${esc(connector)}">${now === null ? "…" : fmtNumber(now) + "/s"}</span>`;
}

// ------------------------------------------------------------------ pages

async function connectorsPage() {
  const all = await get("/connectors?expand=status&expand=info");
  const names = Object.keys(all).sort();
  if (!names.length) {
    return `<h1>Connectors</h1><div class="empty">No connectors yet: drop a
      <code>.properties</code> file into the pipelines folder or POST to <code>/connectors</code>.</div>`;
  }
  const rows = names.map((name) => {
    const { status, info } = all[name];
    const tasks = status.tasks || [];
    const running = tasks.filter((t) => t.state === "RUNNING").length;
    const taskBadges = tasks.map((t) => badge(t.state, "task")).join("");
    const lag = info.type === "sink" ? fmtNumber(metrics.lag[name] ?? null) : "";
    return `<tr data-connector="${esc(name)}">
      <td><a href="#/connectors/${enc(name)}">${esc(name)}</a>
        <div class="muted small mono">${esc(info.config["connector.class"] || "")}</div></td>
      <td><span class="badge kind">${esc(info.type)}</span></td>
      <td class="state">${badge(status.connector.state)}</td>
      <td class="tasks">${taskBadges}<span class="muted small">${running}/${tasks.length} running</span></td>
      <td>${sparkline(name)}</td>
      <td class="num lag">${lag}</td>
    </tr>`;
  }).join("");
  const note = metrics.available ? "" :
    `<p class="muted small">Metrics are off on this worker (metrics.enabled=false): no throughput or lag.</p>`;
  return `<h1>Connectors <span class="updated">${names.length} on this worker</span></h1>
    <table id="connectors"><thead><tr><th>Name</th><th>Type</th><th>State</th><th>Tasks</th>
    <th>Throughput (records/s, up to 2 min)</th><th class="num">Sink lag (records)</th></tr></thead>
    <tbody>${rows}</tbody></table>${note}`;
}

async function connectorPage(name) {
  const [status, config, offsets] = await Promise.all([
    get(`/connectors/${enc(name)}/status`),
    get(`/connectors/${enc(name)}/config`),
    get(`/connectors/${enc(name)}/offsets`).catch((e) => ({ error: e.message })),
  ]);
  const state = status.connector.state;
  const tasks = status.tasks || [];
  const anyFailed = tasks.some((t) => t.state === "FAILED") || state === "FAILED";
  const button = (action, label, enabled, cls = "") =>
    `<button data-action="${action}" class="${cls}" ${enabled ? "" : "disabled"}>${label}</button>`;
  const actions = `<div class="actions">
    ${button("pause", "Pause", state === "RUNNING")}
    ${button("resume", "Resume", state === "PAUSED" || state === "STOPPED")}
    ${button("restart", "Restart connector", true)}
    ${button("restart-failed", "Restart failed tasks", anyFailed)}
    ${button("stop", "Stop", state !== "STOPPED")}
    ${button("delete", "Delete", true, "danger")}
  </div>`;
  const connectorTrace = status.connector.trace
    ? `<h2>Connector failure</h2><pre class="trace" id="connector-trace">${esc(status.connector.trace)}</pre>` : "";
  const taskRows = tasks.map((t) => `<tr data-task="${t.id}">
      <td class="num">${t.id}</td><td class="state">${badge(t.state)}</td>
      <td class="mono">${esc(t.worker_id)}</td>
      <td>${t.state === "FAILED" ? `<button class="small" data-action="restart-task" data-task="${t.id}">Restart task</button>` : ""}</td>
    </tr>${t.trace ? `<tr class="trace-row"><td></td><td colspan="3">
      <details data-key="trace-${t.id}" open><summary>Trace of task ${t.id}</summary>
      <pre class="trace">${esc(t.trace)}</pre></details></td></tr>` : ""}`).join("");
  const tasksTable = tasks.length
    ? `<table id="tasks"><thead><tr><th class="num">Task</th><th>State</th><th>Worker</th><th></th></tr></thead>
       <tbody>${taskRows}</tbody></table>`
    : `<div class="empty">No tasks${state === "STOPPED" ? " (the connector is stopped)" : ""}.</div>`;
  const configRows = Object.keys(config).sort().map((k) =>
    `<tr><td class="mono">${esc(k)}</td><td class="mono wrap">${esc(config[k])}</td></tr>`).join("");
  const offsetRows = offsets.error ? `<tr><td colspan="2" class="muted">${esc(offsets.error)}</td></tr>` :
    (offsets.offsets || []).map((o) => `<tr><td class="mono wrap">${esc(JSON.stringify(o.partition))}</td>
      <td class="mono wrap">${esc(JSON.stringify(o.offset))}</td></tr>`).join("") ||
    `<tr><td colspan="2" class="muted">none committed yet</td></tr>`;
  const dlqTopic = config[DLQ_KEY];
  const dlq = dlqTopic ? await deadLetters(dlqTopic) :
    `<p class="muted">No dead-letter queue: set <code>${DLQ_KEY}</code> (with <code>errors.tolerance=all</code>).</p>`;
  return `<p class="small"><a href="#/">← Connectors</a></p>
    <h1><span id="connector-name">${esc(name)}</span> ${badge(state)}
      <span class="badge kind">${esc(status.type)}</span>
      <span class="updated">${sparkline(name)}</span></h1>
    ${actions}${connectorTrace}
    <h2>Tasks</h2>${tasksTable}
    <div class="grid2">
      <div><h2>Config <span class="updated">(secrets masked)</span></h2>
        <table id="config"><tbody>${configRows}</tbody></table></div>
      <div><h2>Committed offsets</h2>
        <table id="offsets"><thead><tr><th>Partition</th><th>Offset</th></tr></thead>
        <tbody>${offsetRows}</tbody></table>
      </div>
    </div>
    <h2>Dead-letter queue ${dlqTopic ? `<a class="updated" href="#/topics/${enc(dlqTopic)}">${esc(dlqTopic)}</a>
      <span class="updated">(latest ${PEEK_LIMIT}, newest first)</span>` : ""}</h2>
    ${dlq}`;
}

async function deadLetters(topic) {
  let body;
  try {
    body = await get(`/ui/api/topics/${enc(topic)}/records?limit=${PEEK_LIMIT}`);
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) {
      return `<p class="muted">Nothing dead-lettered yet (topic ${esc(topic)} does not exist).</p>`;
    }
    return `<p class="muted">${esc(e.message)}</p>`;
  }
  if (!body.records.length) return `<p class="muted">No records in ${esc(topic)}.</p>`;
  return recordsTable(body.records, "dlq");
}

function data(d) {
  if (d === null || d === undefined) return `<span class="muted">null</span>`;
  const text = d.text !== undefined ? d.text : `base64:${d.base64}`;
  return esc(text) + (d.truncated ? `<span class="muted"> … (cut)</span>` : "");
}

const ERROR_CLASS = "__connect.errors.exception.class.name";
const ERROR_MESSAGE = "__connect.errors.exception.message";
const ERROR_STAGE = "__connect.errors.stage";

function header(record, key) {
  const h = record.headers.find((x) => x.key === key);
  return h && h.value && h.value.text !== undefined ? h.value.text : null;
}

/** The failure a dead-lettered record's context headers describe (empty without them). */
function errorCell(record) {
  const cls = header(record, ERROR_CLASS);
  if (cls === null) return `<span class="muted">no error headers</span>`;
  const stage = header(record, ERROR_STAGE);
  return `<div class="error-class mono">${esc(cls)}${stage ? ` <span class="muted">at ${esc(stage)}</span>` : ""}</div>
    <div class="error-message">${esc(header(record, ERROR_MESSAGE) || "")}</div>`;
}

function recordsTable(records, id) {
  const withErrors = id === "dlq";
  const rows = records.map((r) => {
    const headers = r.headers.length ? `<dl class="headers">${r.headers.map((h) =>
      `<dt class="mono">${esc(h.key)}</dt><dd class="mono">${data(h.value)}</dd>`).join("")}</dl>` : "";
    return `<tr><td class="num">${r.partition}</td><td class="num">${r.offset}</td>
      <td class="mono small nowrap">${esc(fmtTime(r.timestamp))}</td>
      <td class="mono wrap key">${data(r.key)}</td>${withErrors ? `<td class="error">${errorCell(r)}</td>` : ""}
      <td><pre class="value mono">${data(r.value)}</pre>${headers ?
        `<details data-key="${esc(id)}-h-${r.partition}-${r.offset}"><summary>${r.headers.length} header(s)</summary>${headers}</details>` : ""}</td></tr>`;
  }).join("");
  return `<table id="${esc(id)}" class="records"><thead><tr><th class="num">Part.</th><th class="num">Offset</th>
    <th>Timestamp</th><th>Key</th>${withErrors ? "<th>Error</th>" : ""}<th>Value</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}

async function pipelinesPage() {
  const [folder, all, plugins] = await Promise.all([
    get("/ui/api/pipelines"),
    get("/connectors?expand=status").catch(() => ({})),
    get("/connector-plugins").catch(() => []),
  ]);
  const pluginRows = plugins.map((p) => `<tr><td class="mono">${esc(p.class)}</td>
    <td><span class="badge kind">${esc(p.type)}</span></td><td class="mono small">${esc(p.version || "")}</td></tr>`).join("");
  const pluginTable = `<h2>Connector plugins on this worker</h2><table id="plugins"><thead><tr><th>Class
    (connector.class also takes the short alias)</th><th>Type</th><th>Version</th></tr></thead><tbody>${pluginRows}</tbody></table>`;
  if (!folder.directory) return `<h1>Pipeline files</h1><div class="empty">This worker watches no pipelines folder.</div>`;
  const rows = folder.files.map((f) => {
    const connector = all[f.connector];
    const state = connector ? badge(connector.status.connector.state) : `<span class="muted">not loaded</span>`;
    const problems = f.problems.length
      ? `<ul class="problems">${f.problems.map((p) => `<li>${esc(p)}</li>`).join("")}</ul>`
      : badge("OK", "ok");
    return `<tr data-file="${esc(f.file)}"><td class="mono nowrap">${esc(f.file)}</td>
      <td class="nowrap">${connector ? `<a href="#/connectors/${enc(f.connector)}">${esc(f.connector)}</a>` : esc(f.connector)}</td>
      <td class="mono small">${esc(f.connector_class || "")}</td><td>${state}</td>
      <td class="problems-cell">${problems}</td>
      <td class="mono small nowrap">${esc(fmtTime(f.modified_ms))}</td></tr>`;
  }).join("");
  const table = folder.files.length
    ? `<table id="pipelines"><thead><tr><th>File</th><th>Connector</th><th>Class</th><th>State</th>
       <th>Problems (sluice validate, without check())</th><th>Modified</th></tr></thead><tbody>${rows}</tbody></table>`
    : `<div class="empty">No <code>*.properties</code> files yet.</div>`;
  const bad = folder.files.filter((f) => f.problems.length).length;
  return `<h1>Pipeline files <span class="updated mono">${esc(folder.directory)}</span></h1>
    <p class="muted">${folder.files.length} file(s), ${bad} with problems. Each file is one connector;
    edit or delete the file to change it (REST refuses with 409).</p>${table}${pluginTable}`;
}

async function topicsPage(selected) {
  const { topics } = await get("/ui/api/topics");
  const rows = topics.map((t) => `<tr data-topic="${esc(t.name)}" class="${t.name === selected ? "selected" : ""}">
      <td><a href="#/topics/${enc(t.name)}">${esc(t.name)}</a>${t.internal ? ` <span class="badge kind">internal</span>` : ""}</td>
      <td class="num">${t.partitions.length}</td><td class="num">${fmtNumber(t.records)}</td></tr>`).join("");
  let detail = "";
  const topic = topics.find((t) => t.name === selected);
  if (selected && !topic) detail = `<div class="empty">Topic ${esc(selected)} does not exist.</div>`;
  if (topic) {
    const parts = topic.partitions.map((p) => `<tr><td class="num">${p.partition}</td><td class="num">${p.leader}</td>
      <td class="mono">${p.replicas.join(",")}</td><td class="mono">${p.isr.join(",")}</td>
      <td class="num">${fmtNumber(p.log_start_offset)}</td><td class="num">${fmtNumber(p.log_end_offset)}</td>
      <td class="num">${fmtNumber(p.records)}</td></tr>`).join("");
    const peek = await get(`/ui/api/topics/${enc(topic.name)}/records?limit=${PEEK_LIMIT}`);
    detail = `<h2 id="topic-name">${esc(topic.name)}</h2>
      <table id="partitions"><thead><tr><th class="num">Partition</th><th class="num">Leader</th><th>Replicas</th>
      <th>ISR</th><th class="num">Start offset</th><th class="num">End offset</th><th class="num">Records</th></tr></thead>
      <tbody>${parts}</tbody></table>
      <h2>Latest records <span class="updated">(newest first, at most ${PEEK_LIMIT})</span></h2>
      ${peek.records.length ? recordsTable(peek.records, "peek") : `<div class="empty">The topic is empty.</div>`}`;
  }
  return `<h1>Topics <span class="updated">${topics.length}, sizes in records</span></h1>
    <div class="grid2"><div><table id="topics"><thead><tr><th>Topic</th><th class="num">Partitions</th>
    <th class="num">Records</th></tr></thead><tbody>${rows}</tbody></table></div><div>${detail}</div></div>`;
}

// ------------------------------------------------------------------ actions

const ACTIONS = {
  pause: (n) => ["PUT", `/connectors/${enc(n)}/pause`, `Pausing ${n}`],
  resume: (n) => ["PUT", `/connectors/${enc(n)}/resume`, `Resuming ${n}`],
  restart: (n) => ["POST", `/connectors/${enc(n)}/restart`, `Restarting ${n}`],
  "restart-failed": (n) => ["POST", `/connectors/${enc(n)}/restart?includeTasks=true&onlyFailed=true`,
    `Restarting the failed tasks of ${n}`],
  "restart-task": (n, task) => ["POST", `/connectors/${enc(n)}/tasks/${task}/restart`, `Restarting task ${task} of ${n}`],
  stop: (n) => ["PUT", `/connectors/${enc(n)}/stop`, `Stopping ${n}`],
  delete: (n) => ["DELETE", `/connectors/${enc(n)}`, `Deleted ${n}`],
};

main.addEventListener("click", async (event) => {
  const target = event.target.closest("button[data-action]");
  if (!target || target.disabled) return;
  const route = currentRoute();
  if (route.page !== "connector") return;
  const action = target.dataset.action;
  if (action === "delete" && !target.classList.contains("armed")) {
    target.classList.add("armed");          // a second click confirms
    target.textContent = "Click again to delete";
    holdRender = Date.now() + 5000;
    return;
  }
  const [method, path, done] = ACTIONS[action](route.name, target.dataset.task);
  target.disabled = true;
  holdRender = 0;
  try {
    await call(method, path);
    showNotice("info", done);
    if (action === "delete") { location.hash = "#/"; return; }
  } catch (e) {
    showNotice("error", e.message);
  }
  refresh();
});

// ------------------------------------------------------------------ routing and polling

function currentRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "connectors" && parts[1]) return { page: "connector", name: parts[1], nav: "connectors" };
  if (parts[0] === "pipelines") return { page: "pipelines", nav: "pipelines" };
  if (parts[0] === "topics") return { page: "topics", name: parts[1], nav: "topics" };
  return { page: "connectors", nav: "connectors" };
}

const PAGES = {
  connectors: () => connectorsPage(),
  connector: (r) => connectorPage(r.name),
  pipelines: () => pipelinesPage(),
  topics: (r) => topicsPage(r.name),
};

let generation = 0;
let holdRender = 0;   // an armed delete button is not redrawn away under the cursor

async function refresh() {
  const mine = ++generation;
  const route = currentRoute();
  document.querySelectorAll("[data-nav]").forEach((a) =>
    a.classList.toggle("active", a.dataset.nav === route.nav));
  let html;
  try {
    html = await PAGES[route.page](route);
  } catch (e) {
    html = `<div class="empty" id="page-error">${esc(e.message)}</div>`;
    if (e instanceof HttpError && e.status === 404 && route.page === "connector") {
      html = `<p class="small"><a href="#/">← Connectors</a></p>
        <div class="empty" id="page-error">Connector ${esc(route.name)} does not exist (any more).</div>`;
    }
  }
  if (mine !== generation || Date.now() < holdRender) return;  // a newer refresh won, or hold
  const open = new Set([...main.querySelectorAll("details[data-key]")]
    .filter((d) => d.open).map((d) => d.dataset.key));
  const closed = new Set([...main.querySelectorAll("details[data-key]")]
    .filter((d) => !d.open).map((d) => d.dataset.key));
  const scroll = window.scrollY;
  main.innerHTML = html;
  main.querySelectorAll("details[data-key]").forEach((d) => {
    if (open.has(d.dataset.key)) d.open = true;
    if (closed.has(d.dataset.key)) d.open = false;
  });
  window.scrollTo(0, scroll);
  main.dataset.page = route.page;
  main.dataset.updated = String(Date.now());
}

async function workerInfo() {
  try {
    const info = await get("/");
    const health = await fetch("/health").then((r) => r.json()).catch(() => ({ status: "unreachable" }));
    document.getElementById("worker").textContent =
      `Sluice ${info.version} · cluster ${info.kafka_cluster_id || "?"} · ${health.status}`;
  } catch (e) {
    document.getElementById("worker").textContent = `worker unreachable: ${e.message}`;
  }
}

/** Poll, then wait POLL_MS: a slow answer never piles requests up. A hidden tab polls nothing. */
async function loop() {
  if (!document.hidden) {
    await metrics.poll();
    await refresh();
  }
  setTimeout(loop, POLL_MS);
}

window.addEventListener("hashchange", () => { notice.hidden = true; refresh(); });
document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
workerInfo();
loop();
setInterval(() => { if (!document.hidden) workerInfo(); }, 10 * POLL_MS);
