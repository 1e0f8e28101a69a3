/* The resource graph: a layered layout computed here and drawn as one SVG
   string (no library). Each stack is laid out in layers by dependency depth
   (a resource below everything it requires), layers ordered by the mean
   position of what they require and wrapped into rows; an expanded nested
   stack is laid out the same way inside its owner resource's box. Edges of
   one stack are one <path>. Live changes restyle the nodes in place; only
   a new resource or an expanded or collapsed stack lays everything out again. */
"use strict";
const NODE_W = 184, NODE_H = 40, GAP_X = 14, GAP_Y = 40, PAD = 12, HEAD = 28;
/* Below this zoom the labels would be under 5 px: not drawn (painting
   thousands of unreadable labels is what makes a large graph slow to move). */
const FAR = 0.42;

class NFGraph {
  constructor(svg, viewport, onSelect) {
    this.svg = svg;  // the frame: events and size
    this.viewport = viewport;
    this.canvas = viewport.ownerSVGElement;
    this.onSelect = onSelect;
    this.view = {x: 20, y: 20, k: 1};
    this.expanded = new Set();
    this.collapsed = new Set();  // collapsed by the viewer: never expanded on its own
    this.elements = new Map();
    this.selected = null;
    this._panning();
  }

  /* The model from a snapshot (GET /api/stacks/<id>); keeps the viewer's
     expanded groups, pan and zoom. */
  load(snapshot) {
    this.rootId = snapshot.root.id;
    this.stacks = new Map();
    for (const stack of Object.values(snapshot.stacks)) {
      this.stacks.set(stack.id, {...stack, lastEvent: snapshot.last_event});
    }
    const old = this.nodes || new Map();
    this.nodes = new Map();
    this.byStack = new Map();
    for (const r of snapshot.resources) {
      const key = r.stack_id + "/" + r.name;
      const checks = new Map();
      for (const c of r.checks) checks.set(c.action + "/" + c.phase + "/" + c.check, c);
      const node = {...r, key, checks, lastEvent: snapshot.last_event, childId: null};
      const before = old.get(key);
      if (before && before.lastEvent > node.lastEvent) Object.assign(node, {
        action: before.action, status: before.status, reason: before.reason,
        lastEvent: before.lastEvent});
      this.nodes.set(key, node);
      if (!this.byStack.has(r.stack_id)) this.byStack.set(r.stack_id, []);
      this.byStack.get(r.stack_id).push(node);
    }
    const small = snapshot.resources.length <= 400;
    for (const stack of this.stacks.values()) {
      const owner = this.nodes.get(stack.parent_id + "/" + stack.owner);
      if (!owner) continue;
      owner.childId = stack.id;
      const size = (this.byStack.get(stack.id) || []).length;
      if (!this.collapsed.has(stack.id) && (small || size <= 60 || this._hasFailure(stack.id))) {
        this.expanded.add(stack.id);
      }
    }
  }

  _hasFailure(stackId) {
    for (const n of this.byStack.get(stackId) || []) {
      if (n.status === "FAILED" || (n.childId && this._hasFailure(n.childId))) return true;
    }
    return false;
  }

  /* Applies one live update; returns {changed: node keys, reload: bool,
     stacks: stack ids whose state changed}. */
  apply(update) {
    const changed = new Set(), stacks = new Set();
    let reload = false;
    for (const e of update.events) {
      if (e.resource_name == null) {
        const stack = this.stacks.get(e.stack_id);
        if (!stack) { reload = true; continue; }
        if (e.id <= stack.lastEvent) continue;
        Object.assign(stack, {action: e.action, status: e.status, reason: e.reason,
                              lastEvent: e.id});
        if (e.status === "IN_PROGRESS") stack.started = e.timestamp;
        stack.changedAt = e.timestamp;
        stacks.add(e.stack_id);
        continue;
      }
      const node = this.nodes.get(e.stack_id + "/" + e.resource_name);
      if (!node) { reload = true; continue; }
      if (e.resource_id != null && e.resource_id !== node.id) {
        // Another version of the resource: a replacement (newer), or the
        // replaced one being cleaned up (older), which is not this node.
        if (e.resource_id > node.id) reload = true;
        continue;
      }
      if (e.id <= node.lastEvent) continue;
      Object.assign(node, {action: e.action, status: e.status, lastEvent: e.id});
      if (e.reason || e.status !== "IN_PROGRESS") node.reason = e.reason;
      if (e.conductor) node.conductors[e.action] = e.conductor;
      changed.add(node.key);
    }
    for (const c of update.checks) {
      const node = this.nodes.get(c.stack_id + "/" + c.resource_name);
      if (!node) continue;
      node.checks.set(c.action + "/" + c.phase + "/" + c.check, c);
      changed.add(node.key);
    }
    // A failure inside a folded nested stack is shown, not left for a click.
    for (const key of changed) {
      const node = this.nodes.get(key);
      if (node.status === "FAILED" && this._unfold(node.stack_id)) reload = reload || "layout";
    }
    return {changed, reload, stacks};
  }

  _unfold(stackId) {
    let opened = false;
    for (let id = stackId; id && id !== this.rootId; id = this.stacks.get(id)?.parent_id) {
      if (!this.expanded.has(id) && !this.collapsed.has(id)) {
        this.expanded.add(id);
        opened = true;
      }
    }
    return opened;
  }

  toggle(stackId, open) {
    if (open === undefined) open = !this.expanded.has(stackId);
    if (open) { this.expanded.add(stackId); this.collapsed.delete(stackId); }
    else { this.expanded.delete(stackId); this.collapsed.add(stackId); }
  }

  setAll(open) {
    for (const id of this.stacks.keys()) if (id !== this.rootId) this.toggle(id, open);
  }

  // -- layout -----------------------------------------------------------------

  _layout(stackId) {
    const nodes = this.byStack.get(stackId) || [];
    const byName = new Map(nodes.map(n => [n.name, n]));
    const depth = new Map();
    const depthOf = (node) => {
      let d = depth.get(node.name);
      if (d !== undefined) return d;
      depth.set(node.name, 0);  // a cycle cannot be stored; this only guards
      d = 0;
      for (const name of node.requires) {
        const dep = byName.get(name);
        if (dep) d = Math.max(d, depthOf(dep) + 1);
      }
      depth.set(node.name, d);
      return d;
    };
    const layers = [];
    for (const node of nodes) (layers[depthOf(node)] ||= []).push(node);
    const position = new Map();
    const items = [];
    // Rows about twice as wide as the drawing is tall, whatever the shape.
    const maxRow = Math.max(12, Math.ceil(Math.sqrt(nodes.length) * 1.6));
    let y = 0, width = 0;
    for (const layer of layers) {
      if (!layer) continue;
      for (const node of layer) {
        const at = node.requires.map(n => position.get(n)).filter(p => p !== undefined);
        node._order = at.length ? at.reduce((a, b) => a + b, 0) / at.length : 0;
      }
      layer.sort((a, b) => a._order - b._order || (a.name < b.name ? -1 : 1));
      layer.forEach((node, i) => position.set(node.name, (i + 0.5) / layer.length));
      for (let start = 0; start < layer.length; start += maxRow) {
        const row = layer.slice(start, start + maxRow);
        let x = 0, height = NODE_H;
        for (const node of row) {
          let w = NODE_W, h = NODE_H, sub = null;
          if (node.childId && this.expanded.has(node.childId)) {
            sub = this._layout(node.childId);
            w = Math.max(NODE_W, sub.w + 2 * PAD);
            h = sub.h + HEAD + PAD;
          }
          items.push({node, x, y, w, h, sub});
          x += w + GAP_X;
          height = Math.max(height, h);
        }
        width = Math.max(width, x - GAP_X);
        y += height + GAP_Y;
      }
    }
    return {w: Math.max(width, NODE_W), h: Math.max(y - GAP_Y, NODE_H), items};
  }

  // -- drawing ----------------------------------------------------------------

  render() {
    const started = performance.now();
    const layout = this._layout(this.rootId);
    const laidOut = performance.now();
    const out = [];
    this._draw(layout, 0, 0, out);
    this.viewport.innerHTML = out.join("");
    this.canvas.setAttribute("width", layout.w + 40);
    this.canvas.setAttribute("height", layout.h + 40);
    this.elements.clear();
    for (const el of this.viewport.querySelectorAll("[data-k]")) this.elements.set(el.dataset.k, el);
    this.size = {w: layout.w, h: layout.h};
    this._transform();
    return {layoutMs: laidOut - started, drawMs: performance.now() - laidOut};
  }

  _draw(layout, ox, oy, out) {
    const edges = [];
    const at = new Map();
    for (const item of layout.items) at.set(item.node.name, item);
    for (const item of layout.items) {
      const n = item.node, x = ox + item.x, y = oy + item.y;
      n.ax = x; n.ay = y; n.aw = item.w; n.ah = item.h;
      for (const name of n.requires) {
        const dep = at.get(name);
        if (!dep) continue;
        const x1 = ox + dep.x + dep.w / 2, y1 = oy + dep.y + dep.h;
        const x2 = x + item.w / 2, y2 = y, mid = (y1 + y2) / 2;
        edges.push(`M${x1} ${y1}C${x1} ${mid} ${x2} ${mid} ${x2} ${y2}`);
      }
      if (item.sub) {
        out.push(`<g class="group ${this._classes(n)}" data-k="${NF.escape(n.key)}" ` +
                 `data-state="${n.action}_${n.status}">` +
                 `<rect class="frame" x="${x}" y="${y}" width="${item.w}" height="${item.h}"/>` +
                 `<text class="name" x="${x + 30}" y="${y + 18}">${NF.escape(n.name)}</text>` +
                 `<text class="sub" x="${x + 30 + Math.min(150, n.name.length * 7.5)}" y="${y + 18}">` +
                 `${NF.escape(this._line(n))}</text>` +
                 this._toggle(n, x + 6, y + 5, "−") + this._why(n, x, y + item.h) + "</g>");
        this._draw(item.sub, x + PAD, y + HEAD, out);
      } else {
        out.push(this._node(n, x, y));
      }
    }
    out.unshift(`<path class="edges" d="${edges.join("")}"/>`);
  }

  _node(n, x, y) {
    const folded = n.childId ? this._toggle(n, x + NODE_W - 24, y + 4, "+") : "";
    return `<g class="node ${this._classes(n)}" data-k="${NF.escape(n.key)}" ` +
      `data-state="${n.action}_${n.status}" transform="translate(${x},${y})">` +
      `<rect class="box" width="${NODE_W}" height="${NODE_H}"/>` +
      `<rect class="band" width="5" height="${NODE_H}"/>` +
      `<text class="name" x="10" y="16">${NF.escape(this._short(n.name, 22))}</text>` +
      `<text class="sub" x="10" y="32">${NF.escape(this._line(n))}</text>` +
      folded + this._why(n, 0, NODE_H) + "</g>";
  }

  _toggle(n, x, y, mark) {
    return `<g class="toggle" data-toggle="${NF.escape(n.childId)}" transform="translate(${x},${y})">` +
      `<rect width="18" height="18" rx="3"/><text class="toggle-mark" x="5" y="14">${mark}</text></g>`;
  }

  _why(n, x, y) {
    if (n.status !== "FAILED") return "";
    return `<text class="why" x="${x}" y="${y + 13}">${NF.escape(this._short(n.reason, 60))}</text>`;
  }

  _classes(n) {
    const failedCheck = [...n.checks.values()].some(c => c.status === "FAIL");
    return `st-${n.action === "INIT" ? "INIT" : n.status} ac-${n.action}` +
      (failedCheck ? " check-failed" : "") + (this.selected === n.key ? " selected" : "");
  }

  _line(n) {
    const state = n.action === "INIT" ? "waiting" : n.action + "_" + n.status;
    let checks = "";
    if (n.checks.size) {
      const all = [...n.checks.values()];
      const passed = all.filter(c => c.status === "PASS").length;
      checks = ` ✓${passed}` + (passed < all.length ? ` ✗${all.length - passed}` : "");
    }
    const by = n.conductors[n.action];
    return state + checks + (by ? " · " + this._short(by, 12) : "");
  }

  _short(text, size) {
    text = String(text || "");
    return text.length > size ? text.slice(0, size - 1) + "…" : text;
  }

  /* Restyles the nodes whose state changed, in place. */
  restyle(keys) {
    for (const key of keys) {
      const el = this.elements.get(key), n = this.nodes.get(key);
      if (!el || !n) continue;
      const group = el.classList.contains("group");
      el.setAttribute("class", (group ? "group " : "node ") + this._classes(n));
      el.dataset.state = n.action + "_" + n.status;
      el.querySelector(":scope > text.sub").textContent = this._line(n);
      const why = el.querySelector(":scope > text.why");
      if (why) why.remove();
      if (n.status === "FAILED") {
        const y = group ? n.ay + n.ah : NODE_H, x = group ? n.ax : 0;
        el.insertAdjacentHTML("beforeend", this._why(n, x, y));
      }
    }
  }

  // -- pan and zoom -------------------------------------------------------------

  /* Applies the pan and zoom at the next frame: a burst of wheel or
     pointer events costs one repaint. */
  _transform() {
    if (this._frame) return;
    this._frame = requestAnimationFrame(() => {
      this._frame = null;
      const {x, y, k} = this.view;
      this.canvas.classList.add("moving");
      this.canvas.style.transform = `translate(${x}px,${y}px) scale(${k})`;
      this.svg.classList.toggle("far", k < FAR);
      // Once still, drawn again sharp at the new scale.
      clearTimeout(this._still);
      this._still = setTimeout(() => this.canvas.classList.remove("moving"), 250);
    });
  }

  fit() {
    const box = this.svg.getBoundingClientRect();
    const k = Math.min(1.2, (box.width - 40) / this.size.w, (box.height - 40) / this.size.h);
    this.view = {k, x: (box.width - this.size.w * k) / 2, y: 20};
    this._transform();
  }

  focus(key) {
    const n = this.nodes.get(key);
    if (!n || n.ax === undefined) return;
    const box = this.svg.getBoundingClientRect();
    const k = Math.max(this.view.k, 0.9);
    this.view = {k, x: box.width / 2 - (n.ax + NODE_W / 2) * k, y: box.height / 2 - (n.ay + NODE_H / 2) * k};
    this._transform();
  }

  select(key) {
    const before = this.selected;
    this.selected = key;
    this.restyle([before, key].filter(Boolean));
  }

  _panning() {
    let drag = null;
    this.svg.addEventListener("wheel", e => {
      e.preventDefault();
      const box = this.svg.getBoundingClientRect();
      const px = e.clientX - box.left, py = e.clientY - box.top;
      const k = Math.min(4, Math.max(0.02, this.view.k * Math.exp(-e.deltaY * 0.0015)));
      this.view = {k, x: px - (px - this.view.x) * k / this.view.k,
                   y: py - (py - this.view.y) * k / this.view.k};
      this._transform();
    }, {passive: false});
    this.svg.addEventListener("pointerdown", e => {
      drag = {x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y, moved: false};
    });
    this.svg.addEventListener("pointermove", e => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) this.svg.setPointerCapture(e.pointerId);
      drag.moved = true;
      this.svg.classList.add("panning");
      this.view.x = drag.vx + dx;
      this.view.y = drag.vy + dy;
      this._transform();
    });
    this.svg.addEventListener("pointerup", e => {
      const moved = drag && drag.moved;
      drag = null;
      this.svg.classList.remove("panning");
      if (moved) return;
      const toggle = e.target.closest("[data-toggle]");
      if (toggle) { this.onSelect(null, toggle.dataset.toggle); return; }
      const node = e.target.closest("[data-k]");
      if (node) this.onSelect(node.dataset.k, null);
    });
  }
}
