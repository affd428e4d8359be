// The dashboard page: connect with tokens, pick zone and record type, see the schema, write a
// predicate checked as you type (cirrus/check: caret and hint), run it with sort, desired keys and
// a page size through records/query (the checked predicate's filterBy), page with the
// continuationMarker, explain it (cirrus/explain: plan tree, estimates, actual rows, missing
// indexes), open a record, edit and save it with its change tag, delete it.

import { Api, ApiError } from "./api.js";

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

// Checked as you type; answers of older keystrokes are dropped.
async function check() {
  if (!state.api || !currentType()) return null;
  const seq = ++state.checkSeq;
  const predicate = $("predicate").value;
  let answer;
  try {
    answer = await state.api.call("cirrus/check", { recordType: currentType().name, predicate });
  } catch (e) {
    say($("check-message"), e.message, "bad");
    return null;
  }
  if (seq !== state.checkSeq) return null;
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

// The query of the form (null when the predicate does not check).
async function formQuery() {
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
    say($("status"), `${answer.records.length} records${state.marker ? ", more on the next page" : ""}`, "muted");
  } catch (e) {
    say($("status"), e.message, "error");
  }
}

function nextPage() {
  if (state.marker) page({ ...state.query, continuationMarker: state.marker });
}

function display(value) {
  if (!value) return "";
  const v = value.value;
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
$("container-name").textContent = document.body.dataset.container;
$("api-token").value = sessionStorage.getItem("cirrus.apiToken") ?? "";
$("web-auth-token").value = sessionStorage.getItem("cirrus.webAuthToken") ?? "";
if ($("api-token").value) connect();
