/* The stack list: filters in the query string, nested stacks folded under
   their parents, states kept current by the live view of /api/live. */
"use strict";
(function () {
  const form = document.getElementById("filters");
  const body = document.querySelector("#stacks tbody");
  const rows = new Map();  // stack id -> its row

  const params = new URLSearchParams(location.search);
  for (const input of form.elements) input.value = params.get(input.name) || "";

  function query() {
    const q = new URLSearchParams();
    for (const input of form.elements) if (input.value.trim()) q.set(input.name, input.value.trim());
    return q.toString();
  }

  function addRows(entry, depth, into) {
    const status = NF.statusOf(entry.state);
    const link = NF.el("a", {href: "stacks/" + encodeURIComponent(entry.id)}, entry.name);
    const row = NF.el("tr", {"data-id": entry.id,
                             class: (depth ? "nested" : "") + (entry.match ? "" : " unmatched")},
      NF.el("td", {}, link, entry.children.length
            ? NF.el("small", {}, "  (" + entry.children.length + " nested)") : null),
      NF.el("td", {class: "st s-" + status}, entry.state),
      NF.el("td", {class: "why"}, status === "COMPLETE" ? "" : entry.reason),
      NF.el("td", {}, entry.project || "–"),
      NF.el("td", {}, NF.time(entry.created_at)),
      NF.el("td", {}, NF.time(entry.updated_at)));
    row.style.setProperty("--depth", depth);
    rows.set(entry.id, row);
    into.append(row);
    for (const child of entry.children) addRows(child, depth + 1, into);
  }

  async function load() {
    const q = query();
    history.replaceState(null, "", q ? "?" + q : location.pathname);
    let roots;
    try {
      roots = await NF.json("api/stacks" + (q ? "?" + q : ""));
    } catch (error) {  // the server went away: the live view's reconnection reloads
      NF.liveBadge("lost", "cannot load the stacks: " + error.message);
      return;
    }
    const fragment = document.createDocumentFragment();
    rows.clear();
    for (const root of roots) addRows(root, 0, fragment);
    body.replaceChildren(fragment);
    document.getElementById("empty").hidden = roots.length > 0;
  }

  const reload = NF.debounce(load, 400);
  form.addEventListener("input", NF.debounce(load, 250));
  form.addEventListener("submit", e => { e.preventDefault(); load(); });

  const live = new EventSource("api/live");
  live.addEventListener("hello", e => {
    const hello = JSON.parse(e.data);
    if (hello.live) NF.liveBadge("on", "live");
    else NF.liveBadge("off", "not live: no notifications configured");
    load();
  });
  live.addEventListener("stack", e => {
    const change = JSON.parse(e.data);
    const row = rows.get(change.id);
    if (!row) { reload(); return; }  // a new stack, or one the filters may now match
    const status = NF.statusOf(change.state);
    row.children[1].className = "st s-" + status;
    row.children[1].textContent = change.state;
    row.children[2].textContent = status === "COMPLETE" ? "" : change.reason;
    if (query()) reload();  // the filters may now match it or not
  });
  live.onerror = () => NF.liveBadge("lost", "reconnecting…");
})();
