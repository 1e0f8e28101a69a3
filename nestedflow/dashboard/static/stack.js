/* One stack's page: the graph, counts, failures, events and data, kept
   current by the live view of the stack's tree (server-sent events). */
"use strict";
(function () {
  const stackRef = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
  const api = "../api/stacks/" + encodeURIComponent(stackRef);
  const $ = id => document.getElementById(id);
  const graph = new NFGraph($("graph"), $("viewport"), select);
  let snapshot = null, loading = false, buffered = [], clockOffset = 0, times = {};
  let firstRender = true, detailKey = null, eventsShown = false, eventFilter = {};
  window.nfDashboard = {graph, stats: {}};

  // -- the snapshot and live updates ----------------------------------------------

  async function loadSnapshot() {
    loading = true;
    try {
      const fetched = performance.now();
      snapshot = await NF.json(api);
      const received = performance.now();
      clockOffset = Date.parse(snapshot.now) - Date.now();
      times = {started: snapshot.root.started_at, ended: snapshot.root.ended_at};
      graph.load(snapshot);
      const pending = buffered;
      buffered = [];
      for (const update of pending) graph.apply(update);
      const drawn = graph.render();
      if (firstRender) {
        graph.fit();
        firstRender = false;
        // Measured once the browser has laid the drawing out.
        requestAnimationFrame(() => {
          performance.mark("nf-graph-rendered");
          Object.assign(window.nfDashboard.stats, drawn, {
            fetchMs: received - fetched, nodes: graph.nodes.size,
            renderedAt: performance.now()});
        });
      }
      $("stack-name").textContent = snapshot.root.name;
      document.title = "nestedflow: " + snapshot.root.name;
      summarize();
      if (detailKey) showDetail(detailKey);
    } catch (error) {
      $("stack-name").textContent = stackRef + " (" + error.message + ")";
    } finally {
      loading = false;
    }
  }

  const reload = NF.debounce(loadSnapshot, 300);
  const relayout = NF.debounce(() => { graph.render(); }, 100);

  function onUpdate(update) {
    clockOffset = Date.parse(update.now) - Date.now();
    if (loading || !snapshot) { buffered.push(update); return; }
    const result = graph.apply(update);
    if (result.reload === true) reload();
    else if (result.reload) relayout();
    graph.restyle(result.changed);
    const root = graph.stacks.get(graph.rootId);
    if (result.stacks.has(graph.rootId)) {
      if (root.status === "IN_PROGRESS") times = {started: root.started || times.started, ended: null};
      else times.ended = root.changedAt;
    }
    summarize();
    if (detailKey && result.changed.has(detailKey)) showDetail(detailKey);
    if (eventsShown) appendEvents(update.events);
  }

  const live = new EventSource(api + "/live");
  live.addEventListener("hello", e => {
    const hello = JSON.parse(e.data);
    if (hello.live) NF.liveBadge("on", "live");
    else NF.liveBadge("off", "not live: no notifications configured");
    // After every (re)connection: what was missed meanwhile comes with it.
    loadSnapshot();
  });
  live.addEventListener("update", e => onUpdate(JSON.parse(e.data)));
  live.onerror = () => NF.liveBadge("lost", "reconnecting…");

  // -- counts, elapsed time, failures ---------------------------------------------

  function summarize() {
    const counts = {done: 0, progress: 0, failed: 0, waiting: 0};
    const failed = [];
    for (const n of graph.nodes.values()) {
      if (n.action === "INIT") counts.waiting++;
      else if (n.status === "COMPLETE") counts.done++;
      else if (n.status === "IN_PROGRESS") counts.progress++;
      else if (n.status === "FAILED") { counts.failed++; failed.push(n); }
    }
    for (const [name, value] of Object.entries(counts)) $("count-" + name).textContent = value;
    const root = graph.stacks.get(graph.rootId);
    const state = $("stack-state");
    state.textContent = root.action + "_" + root.status;
    state.className = "state s-" + root.status;
    state.dataset.state = state.textContent;
    $("stack-reason").textContent = root.status === "COMPLETE" ? "" : root.reason;
    tick();
    showFailures(failed);
  }

  function tick() {
    if (!times.started) { $("elapsed").textContent = "–"; return; }
    const end = times.ended ? Date.parse(times.ended) : Date.now() + clockOffset;
    $("elapsed").textContent = NF.duration(end - Date.parse(times.started));
  }
  setInterval(() => { if (!times.ended) tick(); }, 1000);

  function stackPath(stackId) {
    const names = [];
    for (let s = graph.stacks.get(stackId); s && s.id !== graph.rootId; s = graph.stacks.get(s.parent_id)) {
      names.unshift(s.owner || s.name);
    }
    return names.length ? names.join("/") + "/" : "";
  }

  function showFailures(failed) {
    const list = $("failure-list");
    $("failures").hidden = failed.length === 0;
    // Deepest first: the resource that failed, then the stacks it failed.
    failed.sort((a, b) => (b.childId ? 0 : 1) - (a.childId ? 0 : 1) || a.lastEvent - b.lastEvent);
    list.replaceChildren(...failed.slice(0, 50).map(n => {
      const item = NF.el("li", {"data-k": n.key},
        NF.el("b", {}, stackPath(n.stack_id) + n.name), " ",
        NF.el("span", {}, n.action + "_" + n.status + ": " + n.reason));
      for (const c of n.checks.values()) {
        if (c.status !== "FAIL") continue;
        item.append(NF.el("span", {class: "check"},
          `${c.phase}-check '${c.check}' (${c.type}) of ${c.action} FAIL after ` +
          `${c.duration}s, ${c.attempts} attempt(s): ${c.message}`));
      }
      item.addEventListener("click", () => { select(n.key); graph.focus(n.key); });
      return item;
    }));
  }

  // -- detail of one resource -------------------------------------------------------

  function select(key, toggleStack) {
    if (toggleStack) { graph.toggle(toggleStack); graph.render(); return; }
    detailKey = key;
    graph.select(key);
    showDetail(key);
  }

  function showDetail(key) {
    const n = graph.nodes.get(key), panel = $("detail");
    if (!n) { panel.hidden = true; return; }
    panel.hidden = false;
    const rows = (pairs) => NF.el("table", {}, ...pairs.map(([k, v]) =>
      NF.el("tr", {}, NF.el("th", {}, k), NF.el("td", {}, v))));
    const checks = NF.el("table", {class: "checks"},
      NF.el("tr", {}, ...["action", "phase", "check", "type", "result", "time", "message"]
        .map(h => NF.el("th", {}, h))),
      ...[...n.checks.values()].map(c => NF.el("tr", {class: "status-" + (c.status === "FAIL" ? "FAILED" : "OK")},
        NF.el("td", {}, c.action), NF.el("td", {}, c.phase), NF.el("td", {}, c.check),
        NF.el("td", {}, c.type), NF.el("td", {}, c.status),
        NF.el("td", {}, c.duration + "s ×" + c.attempts), NF.el("td", {}, c.message))));
    const close = NF.el("button", {}, "close");
    close.addEventListener("click", () => { panel.hidden = true; detailKey = null; graph.select(null); });
    const content = [close, NF.el("h3", {}, stackPath(n.stack_id) + n.name),
      rows([["type", n.type], ["state", n.action === "INIT" ? "waiting (INIT)" : n.action + "_" + n.status],
            ["reason", n.reason || "–"], ["physical id", n.physical_id || "–"],
            ["requires", n.requires.join(", ") || "–"]]),
      NF.el("h4", {}, "Ran by"),
      rows(Object.entries(n.conductors).length ? Object.entries(n.conductors) : [["–", "not run yet"]]),
      NF.el("h4", {}, "Checks"),
      n.checks.size ? checks : NF.el("p", {}, "none")];
    if (n.childId) {
      const open = NF.el("button", {}, graph.expanded.has(n.childId) ? "Collapse nested stack" : "Expand nested stack");
      open.addEventListener("click", () => { select(null, n.childId); showDetail(key); });
      content.push(open);
    }
    panel.replaceChildren(...content);
  }

  // -- tabs: events and data ------------------------------------------------------------

  for (const button of document.querySelectorAll(".tabs button")) {
    button.addEventListener("click", () => showTab(button.dataset.tab));
  }

  function showTab(name) {
    for (const button of document.querySelectorAll(".tabs button")) {
      button.classList.toggle("active", button.dataset.tab === name);
    }
    for (const tab of document.querySelectorAll(".tab")) tab.hidden = tab.id !== "tab-" + name;
    if (name === "events") loadEvents();
    if (["template", "environment", "outputs"].includes(name)) loadData();
  }

  function stackName(id) { return graph.stacks.get(id)?.name || id; }

  function eventRow(e) {
    const name = e.resource_name == null ? stackName(e.stack_id) : e.resource_name;
    return NF.el("tr", {"data-id": e.id},
      NF.el("td", {}, NF.time(e.timestamp)), NF.el("td", {}, e.stack_name || stackName(e.stack_id)),
      NF.el("td", {}, name), NF.el("td", {}, e.action),
      NF.el("td", {class: "st s-" + e.status}, e.status), NF.el("td", {}, e.conductor || ""),
      NF.el("td", {}, e.reason));
  }

  async function loadEvents() {
    const form = $("event-filters");
    eventFilter = {};
    for (const input of form.elements) if (input.value.trim()) eventFilter[input.name] = input.value.trim();
    let body;
    try {
      body = await NF.json(api + "/events?" + new URLSearchParams(eventFilter));
    } catch (error) {
      NF.liveBadge("lost", "cannot load the events: " + error.message);
      return;
    }
    $("events").tBodies[0].replaceChildren(...body.events.map(eventRow));
    eventsShown = true;
  }
  $("event-filters").addEventListener("input", NF.debounce(loadEvents, 250));
  $("event-filters").addEventListener("submit", e => { e.preventDefault(); loadEvents(); });

  function appendEvents(events) {
    const fields = {resource: "resource_name", action: "action", status: "status",
                    conductor: "conductor", text: "reason"};
    const tbody = $("events").tBodies[0];
    for (const e of events) {
      const shown = {...e, resource_name: e.resource_name ?? stackName(e.stack_id)};
      const ok = Object.entries(eventFilter).every(([k, v]) =>
        String(shown[fields[k]] || "").toLowerCase().includes(v.toLowerCase()));
      if (ok && !tbody.querySelector(`tr[data-id="${e.id}"]`)) tbody.append(eventRow(e));
    }
  }

  let data = null;
  async function loadData() {
    if (!data) {
      try {
        data = await NF.json(api + "/data");
      } catch (error) {
        NF.liveBadge("lost", "cannot load the stack's data: " + error.message);
        return;
      }
    }
    $("template").textContent = JSON.stringify(data.template, null, 2);
    $("environment").textContent = JSON.stringify(data.environment, null, 2);
    const outputs = {...data.outputs};
    for (const [name, why] of Object.entries(data.output_errors || {})) outputs[name] = {error: why};
    $("outputs").textContent = JSON.stringify(outputs, null, 2) +
      (data.files.length ? "\n\nfiles: " + data.files.join(", ") : "");
  }

  // -- toolbar --------------------------------------------------------------------------

  $("fit").addEventListener("click", () => graph.fit());
  $("expand-all").addEventListener("click", () => { graph.setAll(true); graph.render(); });
  $("collapse-all").addEventListener("click", () => { graph.setAll(false); graph.render(); });
})();
