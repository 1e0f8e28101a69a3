/* Helpers both pages use. Text is always set through textContent or
   escaped: stack and resource names come from users. */
"use strict";
const NF = {
  escape(text) {
    return String(text == null ? "" : text).replace(/[&<>"']/g, c => ({
      "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  },
  el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value == null) continue;
      if (key === "class") node.className = value; else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child == null) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  },
  async json(url) {
    const response = await fetch(url, {headers: {"Accept": "application/json"}});
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  },
  time(iso) {
    if (!iso) return "";
    return iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "");
  },
  duration(ms) {
    if (ms == null || isNaN(ms)) return "–";
    let s = Math.max(0, Math.round(ms / 1000));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s = s % 60;
    return (h ? h + "h " : "") + (h || m ? m + "m " : "") + s + "s";
  },
  statusOf(state) {
    const at = (state || "").lastIndexOf("_");
    const tail = state.slice(at + 1);
    return tail === "PROGRESS" ? "IN_PROGRESS" : tail;
  },
  /* Marks a live view's badge: on, off (nothing to follow) or lost. */
  liveBadge(state, text) {
    const badge = document.getElementById("live");
    badge.className = "live " + state;
    badge.textContent = text;
  },
  debounce(fn, ms) {
    let timer = null;
    return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
  },
};
