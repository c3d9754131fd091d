// Verbatim's page: every view calls the /v1/ API of the server that serves it. Where the API
// needs a token, the page is signed in by the one-time link of `verbatim open`: the server sets
// an HttpOnly cookie and hands the page a secret in the redirect's fragment, which the page keeps
// in this origin's storage and sends as a header. The cookie alone (which the browser also
// sends to other local ports) signs nobody in. Text from the API is only ever set as text,
// never as markup.

const $ = (id) => document.getElementById(id);

/** Where this origin keeps the secret half of its session. */
const SESSION_KEY = "verbatim.session";
const SESSION_FRAGMENT = "#session=";

/** Takes the secret the sign-in link handed over in the fragment, and removes it from the URL. */
function keepSessionSecret() {
  if (location.hash.startsWith(SESSION_FRAGMENT)) {
    localStorage.setItem(SESSION_KEY, location.hash.slice(SESSION_FRAGMENT.length));
    history.replaceState(null, "", "/");
  }
}

/** The headers that sign this page's requests in (none when it holds no session). */
function sessionHeaders() {
  const secret = localStorage.getItem(SESSION_KEY);
  return secret ? { "X-Verbatim-Session": secret } : {};
}

/** An answer of the API that is not a success: the Error object's message. */
class ApiError extends Error {}

/** The API's refusal of `response` as an ApiError. */
async function refusal(response) {
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  const message = data?.error?.message ?? `${response.status} ${response.statusText}`;
  if (response.status === 401) {
    return new ApiError(`${message}. Run "verbatim open" for a sign-in link.`);
  }
  return new ApiError(message);
}

async function api(method, path, body, signal) {
  const init = { method, headers: sessionHeaders(), credentials: "same-origin", signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) {
    throw await refusal(response);
  }
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/**
 * Follows the server-sent events at `path`, calling `handle(type, data)` for each, and connects
 * again after a pause when the stream ends or fails. (EventSource cannot send the session
 * header, so the stream is read through fetch.)
 */
function followEvents(path, handle) {
  const connect = async () => {
    try {
      const response = await fetch(path, { headers: sessionHeaders(), credentials: "same-origin" });
      if (!response.ok) {
        throw await refusal(response);
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let pending = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          break;
        }
        pending += value.replaceAll("\r\n", "\n");
        let end;
        while ((end = pending.indexOf("\n\n")) >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          let type = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) {
              type = line.slice(6).trim();
            } else if (line.startsWith("data:")) {
              data.push(line.slice(5).replace(/^ /, ""));
            }
          }
          if (data.length) {
            handle(type, JSON.parse(data.join("\n")));
          }
        }
      }
    } catch {
      // Connected again below, as EventSource would.
    }
    setTimeout(connect, 2000);
  };
  connect();
}

function showError(err) {
  const box = $("error");
  box.textContent = err.message;
  box.hidden = false;
}

/** Runs `work`, showing its failure as the page's error line. */
async function attempt(work) {
  try {
    const result = await work();
    $("error").hidden = true;
    return result;
  } catch (err) {
    showError(err);
    return undefined;
  }
}

function element(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) {
    node.append(child);
  }
  return node;
}

function button(label, onClick, props = {}) {
  return element("button", { type: "button", className: "quiet", textContent: label, onclick: onClick, ...props });
}

// ---- Status ----

async function refreshStatus() {
  try {
    const status = await api("GET", "/v1/status");
    $("status").textContent = status.status === "ready"
      ? `Ready: ${status.engine} (${status.model})`
      : "No model selected: run verbatim models select ID";
  } catch (err) {
    $("status").textContent = `Server not answering (${err.message})`;
  }
}

// ---- Live text (dictation and the Recorder) ----

/** Follows `/v1/<service>/events`: committed text plain, the open chunk's tentative text dimmed. */
function followLive(service, box, onState) {
  const committed = box.querySelector(".committed");
  const tentative = box.querySelector(".tentative");
  const handlers = new Map();
  const on = (type, handle) => handlers.set(type, handle);
  on(`${service}.started`, () => {
    committed.textContent = "";
    tentative.textContent = "";
    onState("recording");
  });
  on("conversation.item.input_audio_transcription.delta", (event) => {
    committed.textContent += (committed.textContent ? " " : "") + event.delta;
    tentative.textContent = "";
  });
  on(`${service}.tentative`, (event) => {
    tentative.textContent = (committed.textContent ? " " : "") + event.text;
  });
  on(`${service}.stopped`, () => onState("processing"));
  on(`${service}.completed`, (event) => {
    if (typeof event.text === "string") {
      committed.textContent = event.text;
    }
    tentative.textContent = "";
    onState("completed", event);
  });
  on(`${service}.failed`, (event) => {
    tentative.textContent = "";
    onState("failed", event);
    showError(new Error(event.error));
  });
  followEvents(`/v1/${service}/events`, (type, data) => handlers.get(type)?.(data));
}

// ---- Dictation ----

/** The dictation state the page shows: a stop's answer may come after the events it caused. */
let dictationShown = "idle";

function renderDictation(state) {
  dictationShown = state;
  const recording = state === "recording";
  $("dictation-toggle").textContent = recording ? "Stop dictation" : "Start dictation";
  $("dictation-state").textContent = {
    idle: "",
    recording: "Listening…",
    processing: "Finishing the text…",
    inserting: "Typing the text…",
    completed: "Done.",
    failed: "Failed.",
    error: "Failed.",
  }[state] ?? state;
}

async function showDictation() {
  const status = await api("GET", "/v1/dictation/status");
  renderDictation(status.state);
}

async function toggleDictation() {
  const status = await api("GET", "/v1/dictation/status");
  if (status.is_recording) {
    await api("POST", "/v1/dictation/stop");
    if (dictationShown === "recording") {
      renderDictation("processing");
    }
  } else {
    await api("POST", "/v1/dictation/start");
    renderDictation("recording");
  }
}

// ---- Recorder ----

/** The Recorder state the page shows (as for dictation). */
let recorderShown = "idle";

function renderRecorder(state, event) {
  recorderShown = state;
  const recording = state === "recording";
  $("recorder-toggle").textContent = recording ? "Stop recording" : "Start recording";
  $("recorder-state").textContent = { recording: "Recording…", processing: "Finishing…", completed: "Done.", failed: "Failed." }[state] ?? "";
  if (state === "completed" && event?.output_file) {
    $("recorder-file").textContent = `Saved as ${event.output_file}`;
  }
}

async function showRecorder() {
  const status = await api("GET", "/v1/recorder/status");
  renderRecorder(status.recording ? "recording" : "idle");
}

async function toggleRecorder() {
  const status = await api("GET", "/v1/recorder/status");
  if (status.recording) {
    await api("POST", "/v1/recorder/stop");
    if (recorderShown === "recording") {
      renderRecorder("processing");
    }
  } else {
    const mic = $("recorder-mic").checked;
    const system = $("recorder-system").checked;
    const started = await api("POST", `/v1/recorder/start?mic=${mic}&system_audio=${system}`);
    $("recorder-file").textContent = "";
    renderRecorder("recording", started);
  }
}

// ---- History ----

const HISTORY_PAGE = 50;
let historyOffset = 0;
/** When the keystroke that asked for the shown list came (performance.now()). */
let historyAsked = null;

function formatTime(timestamp) {
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? timestamp : date.toLocaleString();
}

/** The history request in flight; a newer keystroke aborts it. */
let historyRequest = null;

async function showHistory() {
  historyRequest?.abort();
  const request = new AbortController();
  historyRequest = request;
  const started = performance.now();
  const query = $("history-search").value.trim();
  let data;
  try {
    data = await api("GET", `/v1/history?limit=${HISTORY_PAGE}&offset=${historyOffset}&q=${encodeURIComponent(query)}`, undefined, request.signal);
  } catch (err) {
    if (request.signal.aborted) {
      return; // a later keystroke's answer is shown instead
    }
    throw err;
  }
  historyActions ??= (await api("GET", "/v1/prompt-actions")).actions.filter((a) => a.enabled);
  const list = $("history-list");
  list.replaceChildren(...data.entries.map(historyItem));
  const last = Math.min(data.offset + data.entries.length, data.total);
  $("history-count").textContent = data.total === 0
    ? (query ? "Nothing matches." : "No transcriptions yet.")
    : `${data.offset + 1}–${last} of ${data.total}`;
  $("history-newer").disabled = data.offset === 0;
  $("history-older").disabled = last >= data.total;
  // From the keystroke (or click) to the list shown: what scripts/bench-page reports.
  performance.measure("history-search", { start: historyAsked ?? started, end: performance.now() });
  historyAsked = null;
}

function historyItem(entry) {
  const meta = [formatTime(entry.timestamp), entry.app_name, entry.model ?? entry.engine, `${entry.words_count} words`]
    .filter(Boolean)
    .join(" · ");
  const copy = button("Copy", () => attempt(async () => {
    await navigator.clipboard.writeText(entry.text);
    copy.textContent = "Copied";
  }), { ariaLabel: "Copy this text" });
  const remove = button("Delete", () => attempt(async () => {
    await api("DELETE", `/v1/history?id=${encodeURIComponent(entry.id)}`);
    await showHistory();
  }), { ariaLabel: "Delete this entry" });
  const body = element("div", { className: "body" },
    element("p", { className: "text", textContent: entry.text || "(no speech)" }),
    element("p", { className: "meta", textContent: meta }));
  const buttons = element("div", { className: "buttons" }, copy, remove);
  if (entry.text && historyActions?.length) {
    buttons.append(...actionRunner(entry, body));
  }
  return element("li", {}, body, buttons);
}

/** Enabled prompt actions, for the history entries' "Run" (loaded once the view is shown). */
let historyActions = null;

/** A choice of action and its "Run" button; the output goes under the entry in `body`. */
function actionRunner(entry, body) {
  const choice = element("select", { ariaLabel: "Prompt action for this entry" },
    ...historyActions.map((a) => element("option", { value: a.id, textContent: a.name })));
  const run = button("Run", () => attempt(async () => {
    run.disabled = true;
    try {
      const ran = await api("POST", "/v1/prompt-actions/run", { id: choice.value, text: entry.text });
      body.querySelectorAll(".result").forEach((old) => old.remove());
      body.append(element("p", { className: "result", textContent: ran.text }),
        element("p", { className: "meta result", textContent: `${ran.action.name} · ${ran.model} · ${ran.processing_time.toFixed(1)} s` }));
    } finally {
      run.disabled = false;
    }
  }), { ariaLabel: "Run the prompt action on this entry" });
  return [choice, run];
}

/** Search as you type: every keystroke asks at once (the previous request is aborted). */
function searchHistory(event) {
  historyAsked = event.timeStamp;
  historyOffset = 0;
  attempt(showHistory);
}

// ---- Dictionary ----

async function showDictionary() {
  const [terms, corrections] = await Promise.all([
    api("GET", "/v1/dictionary/terms"),
    api("GET", "/v1/dictionary/corrections"),
  ]);
  $("term-list").replaceChildren(...terms.terms.map((term) => element("li", {},
    element("button", {
      type: "button", className: "term", textContent: term, ariaLabel: `Edit ${term}`,
      onclick: () => {
        editedTerm = term;
        $("term-input").value = term;
        $("term-submit").textContent = "Save";
        $("term-input").focus();
      },
    }),
    button("×", () => attempt(async () => {
      await api("DELETE", "/v1/dictionary/terms", { term });
      await showDictionary();
    }), { ariaLabel: `Remove ${term}` }))));
  $("correction-table").tBodies[0].replaceChildren(...corrections.corrections.map((c) => element("tr", {},
    element("td", { textContent: c.original }),
    element("td", { textContent: c.replacement }),
    element("td", { textContent: c.caseSensitive ? "exact" : "any" }),
    element("td", {},
      button("Edit", () => {
        $("correction-original").value = c.original;
        $("correction-replacement").value = c.replacement;
        $("correction-case").checked = c.caseSensitive;
        $("correction-replacement").focus();
      }, { ariaLabel: `Edit ${c.original}` }),
      " ",
      button("Delete", () => attempt(async () => {
        await api("DELETE", "/v1/dictionary/corrections", { original: c.original });
        await showDictionary();
      }), { ariaLabel: `Delete ${c.original}` })))));
}

/** The term being edited (its chip was clicked), or null when the form adds one. */
let editedTerm = null;

async function addTerm(event) {
  event.preventDefault();
  const input = $("term-input");
  await attempt(async () => {
    // An edit removes the old term first (terms are matched without regard to case), and puts
    // it back if the new one is refused.
    if (editedTerm !== null) {
      await api("DELETE", "/v1/dictionary/terms", { term: editedTerm });
    }
    try {
      await api("PUT", "/v1/dictionary/terms", { terms: [input.value] });
    } catch (err) {
      if (editedTerm !== null) {
        await api("PUT", "/v1/dictionary/terms", { terms: [editedTerm] });
      }
      throw err;
    }
    editedTerm = null;
    $("term-submit").textContent = "Add";
    input.value = "";
    await showDictionary();
  });
}

async function saveCorrection(event) {
  event.preventDefault();
  await attempt(async () => {
    await api("PUT", "/v1/dictionary/corrections", {
      original: $("correction-original").value,
      replacement: $("correction-replacement").value,
      caseSensitive: $("correction-case").checked,
    });
    $("correction-form").reset();
    await showDictionary();
  });
}

// ---- Rules ----

async function showRules() {
  const data = await api("GET", "/v1/rules");
  const list = $("rule-list");
  if (data.rules.length === 0) {
    list.replaceChildren(element("li", { textContent: "No rules yet. Rules come with a settings backup (verbatim settings import)." }));
    return;
  }
  list.replaceChildren(...data.rules.map((rule) => {
    const toggle = element("input", { type: "checkbox", checked: rule.is_enabled, id: `rule-${rule.id}` });
    toggle.addEventListener("change", () => attempt(async () => {
      const toggled = await api("PUT", `/v1/rules/toggle?id=${encodeURIComponent(rule.id)}`);
      toggle.checked = toggled.is_enabled;
    }).then(showRules));
    const apps = [...rule.bundle_identifiers, ...rule.url_patterns].join(", ") || "every application";
    const language = rule.language_mode === "inherit" ? "" : ` · language: ${rule.input_language ?? rule.language_hints.join(", ") ?? rule.language_mode}`;
    return element("li", {},
      element("label", { htmlFor: toggle.id }, toggle, ` ${rule.name}`),
      element("div", { className: "meta", textContent: `${apps}${language}` }));
  }));
}

// ---- Prompt actions ----

async function showActions() {
  const data = await api("GET", "/v1/prompt-actions");
  historyActions = data.actions.filter((a) => a.enabled);
  const list = $("action-list");
  if (data.actions.length === 0) {
    list.replaceChildren(element("li", { textContent: "No prompt actions yet: add one below." }));
    return;
  }
  list.replaceChildren(...data.actions.map(actionItem));
}

function actionItem(action) {
  const toggle = element("input", { type: "checkbox", checked: action.enabled, id: `action-${action.id}` });
  toggle.addEventListener("change", () => attempt(() => api("PUT", "/v1/prompt-actions",
    { id: action.id, name: action.name, prompt: action.prompt, enabled: toggle.checked })).then(showActions));
  const edit = button("Edit", () => {
    $("action-id").value = action.id;
    $("action-name").value = action.name;
    $("action-prompt").value = action.prompt;
    $("action-submit").textContent = "Save";
    $("action-name").focus();
  }, { ariaLabel: `Edit ${action.name}` });
  const remove = button("Delete", () => attempt(async () => {
    await api("DELETE", `/v1/prompt-actions?id=${encodeURIComponent(action.id)}`);
    await showActions();
  }), { ariaLabel: `Delete ${action.name}` });
  return element("li", {},
    element("label", { htmlFor: toggle.id }, toggle, ` ${action.name}`),
    element("div", { className: "meta", textContent: action.prompt }),
    element("div", { className: "buttons" }, edit, " ", remove));
}

async function saveAction(event) {
  event.preventDefault();
  await attempt(async () => {
    const id = $("action-id").value;
    await api("PUT", "/v1/prompt-actions", {
      ...(id ? { id } : {}),
      name: $("action-name").value,
      prompt: $("action-prompt").value,
    });
    $("action-form").reset();
    $("action-id").value = "";
    $("action-submit").textContent = "Add";
    await showActions();
  });
}

// ---- Models ----

/** Model ids whose download this page started and waits for. */
const downloading = new Set();
let downloadPoll = 0;

async function showModels() {
  const data = await api("GET", "/v1/models");
  $("model-table").tBodies[0].replaceChildren(...data.models.map(modelRow));
}

function modelRow(model) {
  const state = [model.selected ? "selected" : "", model.loaded ? "loaded" : (model.downloaded ? "downloaded" : "not downloaded")]
    .filter(Boolean)
    .join(", ");
  const actions = element("td", { className: "buttons" });
  if (downloading.has(model.id)) {
    actions.append(element("progress", { id: `progress-${model.id}`, max: 1, value: 0, ariaLabel: `Downloading ${model.id}` }));
  } else {
    if (!model.selected && model.downloaded !== false) {
      actions.append(button("Select", () => attempt(async () => {
        await api("POST", `/page/models/select?id=${encodeURIComponent(model.id)}`);
        await Promise.all([showModels(), refreshStatus()]);
      }), { ariaLabel: `Select ${model.id}` }));
    }
    if (model.downloaded === false) {
      actions.append(button("Download", () => downloadModel(model.id), { ariaLabel: `Download ${model.id}` }));
    } else if (model.downloaded) {
      actions.append(button("Remove", () => attempt(async () => {
        if (model.selected && !confirm(`${model.id} is the selected model. Remove it anyway? Another downloaded model is selected instead.`)) {
          return;
        }
        await api("DELETE", `/page/models?id=${encodeURIComponent(model.id)}`);
        await Promise.all([showModels(), refreshStatus()]);
      }), { ariaLabel: `Remove ${model.id}` }));
    }
  }
  return element("tr", {},
    element("td", { textContent: model.id }),
    element("td", { textContent: model.engine }),
    element("td", { textContent: model.size_description }),
    element("td", { textContent: String(model.language_count) }),
    element("td", { textContent: state }),
    actions);
}

/** Downloads a model: answered when done; the bar follows /page/downloads meanwhile. */
async function downloadModel(id) {
  downloading.add(id);
  await attempt(showModels);
  clearInterval(downloadPoll);
  downloadPoll = setInterval(followDownloads, 500);
  try {
    await attempt(() => api("POST", `/page/models/download?id=${encodeURIComponent(id)}`));
  } finally {
    downloading.delete(id);
    if (downloading.size === 0) {
      clearInterval(downloadPoll);
    }
    await attempt(showModels);
  }
}

async function followDownloads() {
  const data = await api("GET", "/page/downloads").catch(() => ({ downloads: [] }));
  for (const download of data.downloads) {
    const bar = $(`progress-${download.id}`);
    if (bar && download.total > 0) {
      bar.max = download.total;
      bar.value = download.done;
    }
  }
}

// ---- Settings ----

async function showSettings() {
  const data = await api("GET", "/page/settings");
  $("settings-list").replaceChildren(...data.settings.map(settingRow));
}

function settingRow(setting) {
  const id = `setting-${setting.key}`;
  let input;
  if (setting.kind === "bool") {
    input = element("input", { type: "checkbox", checked: setting.value });
  } else if (setting.kind === "choice") {
    input = element("select", {}, ...setting.options.map((o) => element("option", { value: o, textContent: o, selected: o === setting.value })));
  } else if (setting.kind === "int") {
    input = element("input", { type: "number", min: setting.min, max: setting.max, step: 1, value: setting.value });
  } else {
    input = element("input", { type: "text", value: setting.value, spellcheck: false });
  }
  input.id = id;
  input.disabled = !setting.editable;
  // The answer shows beside the setting (the page's error line may be scrolled away).
  const saved = element("span", { className: "saved", role: "status" });
  input.addEventListener("change", async () => {
    const value = setting.kind === "bool" ? input.checked
      : setting.kind === "int" ? Number(input.value)
      : input.value;
    try {
      const answer = await api("PUT", "/page/settings", { key: setting.key, value });
      saved.className = "saved";
      saved.textContent = `Saved: ${answer.value}`;
    } catch (err) {
      saved.className = "saved problem";
      saved.textContent = err.message;
    }
  });
  const label = element("label", { htmlFor: id, textContent: setting.key });
  const control = setting.kind === "bool"
    ? element("div", { className: "control" }, input, " ", label)
    : element("div", { className: "control" }, label, input);
  return element("div", { className: setting.editable ? "setting" : "setting fixed" },
    control, saved,
    element("p", { className: "meta", textContent: `${setting.help} (default: ${setting.default === "" ? "empty" : setting.default})` }));
}

// ---- Token ----

async function rotateToken() {
  if (!confirm("Replace the API token? Scripts read the new one from the discovery file; this browser signs in again with verbatim open.")) {
    return;
  }
  await attempt(async () => {
    await api("POST", "/page/token/rotate");
    $("token-state").textContent = "The token was replaced.";
  });
}

/** Ends this browser's session: the server forgets it, the page forgets its secret. */
async function signOut() {
  await attempt(async () => {
    const answer = await api("POST", "/page/sign-out");
    localStorage.removeItem(SESSION_KEY);
    $("sign-out-state").textContent = answer?.signed_out
      ? "Signed out. Run verbatim open to sign in again."
      : "This browser was not signed in.";
  });
}

// ---- Views ----

const views = {
  dictation: showDictation,
  recorder: showRecorder,
  history: showHistory,
  dictionary: showDictionary,
  rules: showRules,
  actions: showActions,
  models: showModels,
  settings: showSettings,
};

function route() {
  const asked = location.hash.slice(1);
  const name = Object.hasOwn(views, asked) ? asked : "dictation";
  for (const view of Object.keys(views)) {
    $(`view-${view}`).hidden = view !== name;
  }
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === `#${name}`) {
      link.setAttribute("aria-current", "page");
    } else {
      link.removeAttribute("aria-current");
    }
  }
  attempt(views[name]);
}

function start() {
  keepSessionSecret();
  $("dictation-toggle").addEventListener("click", () => attempt(toggleDictation));
  $("recorder-toggle").addEventListener("click", () => attempt(toggleRecorder));
  $("history-search").addEventListener("input", searchHistory);
  $("history-newer").addEventListener("click", () => {
    historyOffset = Math.max(0, historyOffset - HISTORY_PAGE);
    attempt(showHistory);
  });
  $("history-older").addEventListener("click", () => {
    historyOffset += HISTORY_PAGE;
    attempt(showHistory);
  });
  $("term-form").addEventListener("submit", addTerm);
  $("correction-form").addEventListener("submit", saveCorrection);
  $("action-form").addEventListener("submit", saveAction);
  $("token-rotate").addEventListener("click", rotateToken);
  $("sign-out").addEventListener("click", signOut);
  followLive("dictation", $("dictation-text"), renderDictation);
  followLive("recorder", $("recorder-text"), renderRecorder);
  window.addEventListener("hashchange", route);
  route();
  refreshStatus();
  setInterval(refreshStatus, 5000);
}

start();
