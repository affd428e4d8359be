// The dashboard page: connect with tokens, pick zone and record type, see the schema, write a
// predicate checked as you type (cirrus/check: caret and hint), run it with sort, desired keys and
// a page size through records/query (the checked predicate's filterBy), page with the
// continuationMarker, explain it (cirrus/explain: plan tree, estimates, actual rows, missing
// indexes), open a record, edit and save it with its change tag, delete it; draw the page's
// LOCATION values and the query's NEAR circle on a world map (map.js); promote the development
// schema to production after a confirmation that names the container (cirrus/schema/promote),
// and reset the development environment after the same kind of confirmation (cirrus/reset).

import { Api, ApiError } from "./api.js";
import { WorldMap } from "./map.js";
import { chart, logRows, telemetrySeries } from "./observe.js";

const $ = (id) => document.getElementById(id);
const state = { api: null, schema: null, marker: null, query: null, lastPage: null, record: null, checkSeq: 0 };

function say(element, text, cls = "") {
  element.textContent = text;
  element.className = cls;
}

function connection() {
  sessionStorage.setItem("cirrus.apiToken", $("api-token").value.trim());
  sessionStorage.setItem("cirrus.webAuthToken", $("web-auth-token").value.trim());
  return new Api({
    container: document.body.dataset.container,
    environment: $("environment").value,
    database: $("database").value,
    apiToken: $("api-token").value.trim(),
    webAuthToken: $("web-auth-token").value.trim(),
  });
}

async function connect(event) {
  event?.preventDefault();
  state.api = connection();
  const status = $("status");
  try {
    const caller = await state.api.call("users/caller").catch(() => null);
    say($("caller"), caller ? `signed in as ${caller.userRecordName}` : "anonymous (read only)", "muted");
    const zones = await state.api.call("zones/list");
    $("zone").replaceChildren(...zones.zones.map((z) => new Option(z.zoneID.zoneName)));
    state.schema = await state.api.call("cirrus/schema");
    $("record-type").replaceChildren(...state.schema.recordTypes.map((t) => new Option(t.name)));
    showSchema();
    const subscriptions = await state.api.call("subscriptions/list").catch(() => ({ subscriptions: [] }));
    $("subscriptions").replaceChildren(
      ...subscriptions.subscriptions.map((s) => {
        const li = document.createElement("li");
        li.textContent = `${s.subscriptionID} (${s.subscriptionType})`;
        return li;
      }),
    );
    say(status, `connected to ${state.api.environment} ${state.api.database}`, "muted");
    check();
  } catch (e) {
    say(status, e.message, "error");
  }
}

function currentType() {
  return state.schema?.recordTypes.find((t) => t.name === $("record-type").value);
}

function showSchema() {
  const type = currentType();
  const rows = (type?.fields ?? []).map((f) => {
    const tr = document.createElement("tr");
    for (const text of [f.name, f.type, f.options.join(" ").toLowerCase()]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    return tr;
  });
  $("schema").tBodies[0].replaceChildren(...rows);
  const sortable = (type?.fields ?? []).filter((f) => f.options.includes("SORTABLE"));
  $("sort-field").replaceChildren(new Option("(none)", ""), ...sortable.map((f) => new Option(f.name)));
}

// Checked as you type; answers of older keystrokes are not shown.
async function check() {
  if (!state.api || !currentType()) return null;
  const seq = ++state.checkSeq;
  const predicate = $("predicate").value;
  const here = hereValue();
  if (here === undefined) {
    say($("check-message"), "$here is LATITUDE, LONGITUDE in degrees (e.g. 48.8583, 2.3375)", "bad");
    return null;
  }
  const body = { recordType: currentType().name, predicate };
  if (here) body.variables = { here: { value: here, type: "LOCATION" } };
  let answer;
  try {
    answer = await state.api.call("cirrus/check", body);
  } catch (e) {
    say($("check-message"), e.message, "bad");
    return null;
  }
  // A newer check owns the display; this answer still serves the run or explain that asked.
  if (seq !== state.checkSeq) return answer.ok ? answer : null;
  const input = $("predicate");
  if (answer.ok) {
    input.className = "good";
    $("caret").textContent = "";
    say($("check-message"), answer.warnings.length ? `warning: ${answer.warnings.join("; ")}` : "ok", "");
    return answer;
  }
  input.className = "bad";
  const width = Math.max(1, answer.end - answer.start);
  $("caret").textContent = " ".repeat(answer.start) + "^".repeat(width);
  const message = $("check-message");
  message.className = "bad";
  message.textContent = `error: ${answer.message}`;
  if (answer.hint) {
    const hint = document.createElement("span");
    hint.className = "hint";
    hint.textContent = `hint: ${answer.hint}`;
    message.append(hint);
  }
  return null;
}

// The $here box: null when empty, undefined when it is not a location, else {latitude, longitude}.
function hereValue() {
  const input = $("here");
  const text = input.value.trim();
  input.className = "";
  if (!text) return null;
  const parts = text.split(/[\s,]+/).map(Number);
  if (parts.length !== 2 || parts.some((n) => !Number.isFinite(n)) || Math.abs(parts[0]) > 90 ||
    Math.abs(parts[1]) > 180) {
    input.className = "bad";
    return undefined;
  }
  return { latitude: parts[0], longitude: parts[1] };
}

// The query of the form (null when the predicate does not check).
async function formQuery() {
  clearTimeout(typing);  // this check reads the predicate as it is now
  const checked = await check();
  if (!checked) {
    say($("status"), "fix the predicate first", "error");
    return null;
  }
  const query = { recordType: currentType().name, filterBy: checked.filterBy };
  if ($("sort-field").value) {
    query.sortBy = [{ fieldName: $("sort-field").value, ascending: $("sort-ascending").checked }];
  }
  const body = { query, zoneID: { zoneName: $("zone").value }, resultsLimit: Number($("page-size").value) || 20 };
  const keys = $("desired-keys").value.split(",").map((k) => k.trim()).filter(Boolean);
  if (keys.length) body.desiredKeys = keys;
  return body;
}

async function run() {
  const body = await formQuery();
  if (!body) return;
  $("explain-panel").hidden = true;  // it explained the previous query
  state.query = body;
  await page(body);
}

// The plan as a tree: operator, estimated rows and (the first page was run) actual rows; the
// plans it beat; the index options the query needs, those missing in this schema marked.
async function explain() {
  const body = await formQuery();
  if (!body) return;
  try {
    const e = await state.api.call("cirrus/explain", { query: body.query, zoneID: body.zoneID,
      resultsLimit: body.resultsLimit });
    const item = (n) => {
      const li = document.createElement("li");
      li.append(n.operator + " ");
      const rows = document.createElement("span");
      rows.className = "rows";
      rows.textContent = `est ${n.estimatedRows}` + (n.actualRows !== undefined ? `, actual ${n.actualRows}` : "");
      li.append(rows);
      if (n.children.length) {
        const ul = document.createElement("ul");
        ul.append(...n.children.map(item));
        li.append(ul);
      }
      return li;
    };
    $("plan-tree").replaceChildren(item(e.plan));
    $("plan-rejected").textContent = e.rejected.length
      ? `rejected: ${e.rejected.map((r) => `${r.summary} (cost ${Math.round(r.cost)})`).join("; ")}` : "";
    $("plan-indexes").replaceChildren(...e.indexes.map((i) => {
      const li = document.createElement("li");
      li.className = i.missing ? "missing" : "";
      li.textContent = (i.missing ? "missing: " : "index: ") + i.index;
      return li;
    }));
    $("explain-panel").hidden = false;
  } catch (err) {
    say($("status"), err.message, "error");
  }
}

async function page(body) {
  state.lastPage = body;
  try {
    const answer = await state.api.call("records/query", body);
    state.marker = answer.continuationMarker ?? null;
    $("next-page").disabled = !state.marker;
    showRecords(answer.records);
    showMap(answer.records, body.query ?? state.query?.query);
    const n = answer.records.length;
    say($("status"), `${n} record${n === 1 ? "" : "s"}${state.marker ? ", more on the next page" : ""}`, "muted");
  } catch (e) {
    say($("status"), e.message, "error");
  }
}

function nextPage() {
  if (state.marker) page({ ...state.query, continuationMarker: state.marker });
}

// The page's LOCATION values as points, and the circle of the query's NEAR filter.
let worldMap = null;
function showMap(records, query) {
  const hasLocations = (currentType()?.fields ?? []).some((f) => f.type === "LOCATION");
  const points = [];
  for (const r of records) {
    for (const [name, field] of Object.entries(r.fields ?? {})) {
      const v = field?.value;
      if (field?.type === "LOCATION" && v && Number.isFinite(v.latitude) && Number.isFinite(v.longitude)) {
        points.push({ name: r.recordName, field: name, lat: v.latitude, lon: v.longitude });
      }
    }
  }
  const near = (query?.filterBy ?? []).find((f) => f.comparator === "NEAR");
  const center = near?.fieldValue?.value;
  const circle = center && Number.isFinite(near.distance)
    ? { lat: center.latitude, lon: center.longitude, metres: near.distance } : null;
  $("map-panel").hidden = !(hasLocations || points.length || circle);
  if ($("map-panel").hidden) return;
  worldMap ??= new WorldMap($("map"), { onPick: pick });
  worldMap.show(points, circle);
  const where = circle
    ? `; circle: ${formatDistance(circle.metres)} round ${circle.lat}, ${circle.lon}` : "";
  $("map-status").textContent = `${points.length} of ${records.length} on the map${where}`;
}

function formatDistance(metres) {
  return metres >= 1000 ? `${+(metres / 1000).toFixed(3)} km` : `${+metres.toFixed(1)} m`;
}

// A click on the map sets $here (and checks the predicate with it).
function pick(lat, lon) {
  $("here").value = `${lat}, ${lon}`;
  check();
}

// Deployment: the promotion's dry run is shown in a dialog whose button stays disabled until the
// container's name is typed; then the promotion itself, always from the development environment.
function deploymentApi() {
  const api = connection();
  api.environment = "development";
  return api;
}

function managementHeaders() {
  return { "X-Cirrus-Management-Token": $("management-token").value.trim() };
}

async function reviewPromotion() {
  const container = document.body.dataset.container;
  const message = $("deployment-message");
  try {
    const plan = await deploymentApi().call("cirrus/schema/promote", { confirm: container, dryRun: true },
      managementHeaders());
    $("promotion-container").textContent = container;
    $("promotion-changes").replaceChildren(...(plan.changes.length ? plan.changes : [{ change: "no changes" }])
      .map((c) => {
        const li = document.createElement("li");
        li.textContent = c.refused ? `${c.change} — refused` : c.change;
        li.className = c.refused ? "refused" : "";
        return li;
      }));
    $("promotion-confirm").value = "";
    $("promote").disabled = true;
    say(message, "");
    $("promotion-dialog").showModal();
  } catch (e) {
    say(message, e.message, "error");
  }
}

async function promote() {
  const container = document.body.dataset.container;
  const message = $("deployment-message");
  if ($("promotion-confirm").value !== container) return;
  try {
    const done = await deploymentApi().call("cirrus/schema/promote", { confirm: container }, managementHeaders());
    say(message, done.changed
      ? `promoted to production: ${done.changes.length} change${done.changes.length === 1 ? "" : "s"} `
        + `(record types ${done.recordTypes.join(", ")})`
      : "production already has this schema", "ok");
  } catch (e) {
    say(message, e.message, "error");
  }
}

// The reset of development: a dialog naming the container, whose button stays disabled until
// the container's name is typed; production is never reset.
function reviewReset() {
  $("reset-container").textContent = document.body.dataset.container;
  $("reset-confirm").value = "";
  $("reset").disabled = true;
  say($("deployment-message"), "");
  $("reset-dialog").showModal();
}

async function resetDevelopment() {
  const container = document.body.dataset.container;
  const message = $("deployment-message");
  if ($("reset-confirm").value !== container) return;
  try {
    await deploymentApi().call("cirrus/reset", { confirm: container }, managementHeaders());
    say(message, `reset the development environment of ${container}`, "ok");
    if (connection().environment === "development") {
      // What was shown came from the environment that is gone.
      showRecords([]);
      showMap([], null);
      $("record-panel").hidden = true;
      connect();
    }
  } catch (e) {
    say(message, e.message, "error");
  }
}

// Logs and Telemetry (observe.js draws them): the management token of the Deployment pane.
async function refreshLogs() {
  const status = $("logs-status");
  const body = { limit: 200, errorsOnly: $("log-errors").checked };
  if ($("log-operation").value) body.operation = $("log-operation").value;
  if ($("log-record-type").value.trim()) body.recordType = $("log-record-type").value.trim();
  try {
    const log = await deploymentApi().call("cirrus/logs", body, managementHeaders());
    $("logs").tBodies[0].replaceChildren(...logRows(log.entries));
    say(status, `${log.entries.length} of ${log.matched} matching (the log keeps ${log.capacity})`, "muted");
    const known = new Set([...$("log-operation").options].map((o) => o.value));
    for (const e of log.entries) {
      if (!known.has(e.operation)) { $("log-operation").append(new Option(e.operation)); known.add(e.operation); }
    }
  } catch (e) {
    say(status, e.message, "error");
  }
}

async function refreshTelemetry() {
  const status = $("telemetry-status");
  try {
    const t = await deploymentApi().call("cirrus/telemetry", {}, managementHeaders());
    const select = $("telemetry-operation");
    const chosen = select.value || "*";
    const names = t.operations.map((o) => o.operation);
    select.replaceChildren(...names.map((n) => new Option(n === "*" ? "all operations" : n, n)));
    select.value = names.includes(chosen) ? chosen : "*";
    const op = t.operations.find((o) => o.operation === select.value);
    const s = telemetrySeries(op);
    chart($("chart-requests"), t.minutes, s.requests, "");
    chart($("chart-errors"), t.minutes, s.errors, "%");
    chart($("chart-latency"), t.minutes, s.latency, " ms");
    const total = op.requests.reduce((a, b) => a + b, 0);
    say(status, `${total} requests in the last hour`, "muted");
  } catch (e) {
    say(status, e.message, "error");
  }
}

function display(value) {
  if (!value) return "";
  const v = value.value;
  if (value.type === "LOCATION" && v && Number.isFinite(v.latitude)) return `${v.latitude}, ${v.longitude}`;
  if (v && typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function showRecords(records) {
  const names = [...new Set(records.flatMap((r) => Object.keys(r.fields ?? {})))].sort();
  const head = document.createElement("tr");
  for (const n of ["recordName", ...names]) {
    const th = document.createElement("th");
    th.textContent = n;
    head.append(th);
  }
  $("results").tHead.replaceChildren(head);
  $("results").tBodies[0].replaceChildren(
    ...records.map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.recordName = r.recordName;
      for (const text of [r.recordName, ...names.map((n) => display(r.fields?.[n]))]) {
        const td = document.createElement("td");
        td.textContent = text;
        tr.append(td);
      }
      tr.addEventListener("click", () => openRecord(r.recordName));
      return tr;
    }),
  );
}

async function openRecord(name) {
  try {
    const zoneID = { zoneName: $("zone").value };
    const answer = await state.api.call("records/lookup", { records: [{ recordName: name, zoneID }] });
    const record = answer.records[0];
    if (record.serverErrorCode) throw new ApiError(404, record);
    showRecord(record);
  } catch (e) {
    say($("status"), e.message, "error");
  }
}

function showRecord(record) {
  state.record = record;
  $("record-panel").hidden = false;
  $("record-name").textContent = record.recordName;
  $("record-tag").textContent = record.recordChangeTag ?? "";
  const fields = Object.fromEntries(
    Object.entries(record.fields ?? {}).map(([k, v]) => [k, { value: v.value, type: v.type }]),
  );
  $("record-fields").value = JSON.stringify(fields, null, 2);
  say($("record-message"), "");
}

async function save() {
  let fields;
  try {
    fields = JSON.parse($("record-fields").value);
  } catch (e) {
    say($("record-message"), `the fields are not JSON: ${e.message}`, "error");
    return;
  }
  const r = state.record;
  const record = { recordName: r.recordName, recordType: r.recordType, recordChangeTag: r.recordChangeTag, fields };
  if (r.zoneID) record.zoneID = r.zoneID;
  await modify({ operationType: "replace", record }, "saved");
}

async function remove() {
  const r = state.record;
  const record = { recordName: r.recordName, recordChangeTag: r.recordChangeTag };
  if (r.zoneID) record.zoneID = r.zoneID;
  await modify({ operationType: "delete", record }, "deleted");
}

async function modify(operation, done) {
  try {
    const answer = await state.api.call("records/modify", { operations: [operation] });
    const item = answer.records[0];
    if (item.serverErrorCode) {
      say($("record-message"), `${item.serverErrorCode}: ${item.reason}`, "error");
      return;
    }
    if (item.deleted) {
      $("record-panel").hidden = true;
    } else {
      showRecord(item);
    }
    if (state.lastPage) await page(state.lastPage);  // the page again, with the change
    say($("status"), `${item.recordName} ${done}`, "ok");
    if (!item.deleted) say($("record-message"), `${done}; new change tag ${item.recordChangeTag}`, "ok");
  } catch (e) {
    say($("record-message"), e.message, "error");
  }
}

let typing = null;
$("predicate").addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(check, 150);
});
$("predicate").addEventListener("keydown", (e) => {
  if (e.key === "Enter") run();
});
$("connection").addEventListener("submit", connect);
$("record-type").addEventListener("change", () => {
  showSchema();
  check();
});
$("run").addEventListener("click", run);
$("explain").addEventListener("click", explain);
$("next-page").addEventListener("click", nextPage);
$("save").addEventListener("click", save);
$("delete").addEventListener("click", remove);
$("close-record").addEventListener("click", () => ($("record-panel").hidden = true));
$("here").addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(check, 150);
});
$("map-fit").addEventListener("click", () => worldMap?.fit());
$("map-world").addEventListener("click", () => worldMap?.world());
$("review-promotion").addEventListener("click", reviewPromotion);
$("promotion-confirm").addEventListener("input", () => {
  $("promote").disabled = $("promotion-confirm").value !== document.body.dataset.container;
});
$("promote").addEventListener("click", promote);
$("review-reset").addEventListener("click", reviewReset);
$("reset-confirm").addEventListener("input", () => {
  $("reset").disabled = $("reset-confirm").value !== document.body.dataset.container;
});
$("reset").addEventListener("click", resetDevelopment);
$("refresh-logs").addEventListener("click", refreshLogs);
$("log-operation").addEventListener("change", refreshLogs);
$("log-errors").addEventListener("change", refreshLogs);
$("refresh-telemetry").addEventListener("click", refreshTelemetry);
$("telemetry-operation").addEventListener("change", refreshTelemetry);
$("container-name").textContent = document.body.dataset.container;
$("api-token").value = sessionStorage.getItem("cirrus.apiToken") ?? "";
$("web-auth-token").value = sessionStorage.getItem("cirrus.webAuthToken") ?? "";
if ($("api-token").value) connect();
