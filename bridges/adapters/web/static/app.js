// agentbridge web console: progressive enhancement of server-rendered pages
// (the sign-in form's part is signin.js).
// Every form works without this script; with it, forms post in the
// background, the chat follows the conversation over server-sent events,
// times show in the viewer's zone, the operator pages refresh themselves
// and the keyboard reaches everything (Enter sends, Esc stops a turn).
"use strict";

(function () {
  function toast(text, kind) {
    var box = document.getElementById("toasts");
    if (!box) return;
    var t = document.createElement("div");
    t.className = "toast" + (kind ? " " + kind : "");
    t.textContent = text;
    box.appendChild(t);
    setTimeout(function () { t.remove(); }, 8000);
  }

  // Theme toggle: remembered in localStorage; theme.js applies it early.
  function darkNow() {
    var t = document.documentElement.dataset.theme;
    if (t) return t === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  function themeToggle() {
    var b = document.getElementById("theme-toggle");
    if (!b) return;
    var show = function () { b.setAttribute("aria-pressed", darkNow() ? "true" : "false"); };
    show();
    b.addEventListener("click", function () {
      var t = darkNow() ? "light" : "dark";
      document.documentElement.dataset.theme = t;
      try { localStorage.setItem("theme", t); } catch (e) { /* not remembered */ }
      show();
    });
  }

  function copyButton(label, text, cls) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = cls + " btn small";
    b.textContent = "Copy";
    b.setAttribute("aria-label", label);
    // Out of the Tab order (Tab reaches the composer without walking
    // every message): in the message list the arrow keys move between
    // messages and C copies the one focused (messages.js).
    b.tabIndex = -1;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(text()).then(function () {
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = "Copy"; }, 1500);
      }, function () { toast("Could not copy to the clipboard", "error"); });
    });
    return b;
  }

  // shortTime is a time as a chat shows it: the hour today, the day and
  // hour this year, else the date (the full date is the title).
  function shortTime(d) {
    var now = new Date(), hm = { hour: "2-digit", minute: "2-digit" };
    if (d.toDateString() === now.toDateString()) return d.toLocaleTimeString([], hm);
    var o = { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };
    if (d.getFullYear() !== now.getFullYear()) o.year = "numeric";
    return d.toLocaleString([], o);
  }

  // Times in the viewer's zone; copy buttons on messages and code blocks.
  function enhance(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) return;
      el.textContent = shortTime(d);
      el.title = d.toLocaleString([], { dateStyle: "full", timeStyle: "long" });
    });
    root.querySelectorAll(".md pre").forEach(function (pre) {
      if (pre.querySelector(".copy")) return;
      pre.appendChild(copyButton("Copy code", function () { return (pre.querySelector("code") || pre).innerText; }, "copy"));
    });
    var msgs = root.classList && root.classList.contains("msg") ? [root] : root.querySelectorAll(".msg");
    msgs.forEach(function (m) {
      m.tabIndex = -1;
      if (window.agentbridgeFold) window.agentbridgeFold(m); // messages.js
      var meta = m.querySelector(".meta");
      if (!meta || meta.querySelector(".copy-msg")) return;
      meta.appendChild(copyButton("Copy message", function () {
        var body = m.querySelector(".md, .text");
        return body ? body.innerText : "";
      }, "copy-msg"));
    });
  }

  function composerEmpty(form) {
    var text = form.elements.text, file = form.elements.file;
    return text && text.value.trim() === "" && !(file && file.files && file.files.length);
  }

  // signIn sends the page to the sign-in form, to come back here: the
  // session ended (signed out in another tab, expired, token changed).
  function signIn() {
    location.assign("/signin?next=" + encodeURIComponent(location.pathname + location.search));
  }

  // accessEnded follows a stream's last event: to sign-in (and back here
  // afterwards, the draft kept) when the session ended, else where the
  // server says (the conversation list).
  // A tab signing itself out is leaving already: its own stream's last
  // event must not send it elsewhere (or back here after the next sign-in).
  function accessEnded(next) {
    if (document.body.dataset.leaving) { return; }
    if (next === "/signin") { signIn(); } else { location.assign(next); }
  }
  document.addEventListener("submit", function (e) {
    if (e.target.closest && e.target.closest(".signout")) { document.body.dataset.leaving = "1"; }
  }, true);

  // Drafts: what the message box holds is kept per conversation in
  // localStorage, across reloads, until the bridge has accepted it. A
  // message on its way (unsent) stays in the draft, before whatever is
  // typed since, until its send is answered: a reload, a closed tab or a
  // lost connection mid-send aborts the send, and the text comes back.
  var unsent = "";
  function draftKey(form) { return "draft:" + form.action; }
  function draftText(form) {
    var v = form.elements.text.value;
    return unsent ? (v.trim() ? unsent + "\n" + v : unsent) : v;
  }
  function saveDraft(form) {
    try {
      var v = draftText(form);
      if (v) localStorage.setItem(draftKey(form), v); else localStorage.removeItem(draftKey(form));
    } catch (e) { /* not kept */ }
  }
  // accepted drops the message the bridge accepted from the draft, which
  // keeps what was typed since (a draft written meanwhile by another tab
  // of this conversation stays as it is).
  function accepted(form) {
    var mine = draftText(form), kept = null;
    unsent = "";
    try { kept = localStorage.getItem(draftKey(form)); } catch (e) { return; }
    if (kept === (mine || null)) saveDraft(form);
  }
  function drafts() {
    var form = document.getElementById("composer");
    if (!form || !form.elements.text) return;
    var text = form.elements.text;
    try {
      var d = localStorage.getItem(draftKey(form));
      if (d && !text.value) text.value = d;
    } catch (e) { /* none kept */ }
    // A new conversation (or a draft) is for typing: the box gets the focus
    // where that opens no on-screen keyboard.
    var fine = window.matchMedia && window.matchMedia("(hover: hover) and (pointer: fine)").matches;
    if (fine && (text.value || !document.querySelector("#messages .msg"))) text.focus();
    text.addEventListener("input", function () { saveDraft(form); });
  }

  // sendMessage posts the composer: the box is emptied at once (what is
  // typed next is the next message and is never wiped), one send at a
  // time (Enter and Send alike); the text stays the draft until the bridge
  // accepted it, and on failure it comes back into the box before
  // whatever was typed since.
  function sendMessage(form, submitter) {
    if (form.dataset.sending || composerEmpty(form)) return;
    var text = form.elements.text, input = form.elements.file;
    var data = new FormData(form, submitter || undefined);
    var files = null, tick = statusTick;
    if (input && input.files && input.files.length) { // a copy: clearing the input empties its list
      var dt = new DataTransfer();
      for (var i = 0; i < input.files.length; i++) dt.items.add(input.files[i]);
      files = dt.files;
    }
    form.dataset.sending = "1";
    var send = document.getElementById("send");
    if (send) send.disabled = true;
    unsent = text.value;
    text.value = "";
    if (files) { input.value = ""; showFile(form); }
    saveDraft(form);
    starting(tick);
    var restore = function () {
      text.value = draftText(form);
      unsent = "";
      if (files && input && !(input.files && input.files.length)) { input.files = files; showFile(form); }
      saveDraft(form);
      turn.starting = false;
      showStatus();
    };
    fetch(form.action, { method: "POST", body: data, headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" })
      .then(function (resp) {
        if (resp.ok) { accepted(form); return; }
        restore();
        if (resp.status === 401) { signIn(); return; }
        return resp.text().then(function (t) { toast(t.trim() || resp.statusText, "error"); });
      }, function () {
        restore();
        toast("The bridge did not answer; your message is back in the box. Check your connection.", "error");
      })
      .finally(function () { delete form.dataset.sending; if (send) send.disabled = false; });
  }

  // Forms marked data-async post with fetch; the page updates from events.
  function asyncForms() {
    document.addEventListener("submit", function (e) {
      var form = e.target;
      if (!form.hasAttribute("data-async")) return;
      e.preventDefault();
      if (form.id === "composer") { sendMessage(form, e.submitter); return; }
      if (form.id === "stop-form") stopping(true);
      var data = new FormData(form, e.submitter || undefined);
      var buttons = form.querySelectorAll("button");
      buttons.forEach(function (b) { b.disabled = true; });
      fetch(form.action, { method: "POST", body: data, headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" })
        .then(function (resp) {
          if (resp.ok) return;
          if (form.id === "stop-form") stopping(false);
          if (resp.status === 401) { signIn(); return; }
          return resp.text().then(function (t) { toast(t.trim() || resp.statusText, "error"); });
        })
        .catch(function () { toast("The bridge did not answer; check your connection.", "error"); })
        .finally(function () { buttons.forEach(function (b) { b.disabled = false; }); });
    });
    var text = document.getElementById("text");
    if (text) {
      text.addEventListener("keydown", function (e) {
        if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          if (!e.repeat) sendMessage(text.form);
        }
      });
      // The line break of that Enter, where it comes as its own event.
      text.addEventListener("keypress", function (e) {
        if (e.key === "Enter" && !e.shiftKey && !e.isComposing) e.preventDefault();
      });
    }
    // Esc stops the running turn, wherever the focus is on the chat page.
    document.addEventListener("keydown", function (e) {
      if (e.key !== "Escape" || e.isComposing) return;
      var working = document.getElementById("working"), form = document.getElementById("stop-form");
      if (!working || working.hidden || !form || working.classList.contains("stopping")) return;
      e.preventDefault();
      form.requestSubmit();
    });
  }

  // The agent's status, in words: "Starting the agent…" from a message
  // sent until its turn runs (or the bridge answers otherwise; the server
  // keeps this state too, so a reload or another page shows it: the
  // "typing" event's starting), "Waiting for your approval" (or
  // answer, or someone else's) while a card waits, "Working…" while the
  // agent works, "Stopping…" once a stop was asked for. statusTick counts
  // what the stream said, so that a send answered after its turn already
  // ran does not show a start that is over.
  var turn = { on: false, starting: false, stopping: false }, statusTick = 0;
  function cardWait() {
    var cards = document.querySelectorAll("#messages .msg.card");
    if (!cards.length) return "";
    var card = cards[cards.length - 1], who = "";
    for (var m = card.previousElementSibling; m; m = m.previousElementSibling) {
      if (m.classList.contains("mine")) { who = m.getAttribute("aria-label") || ""; break; }
    }
    var chat = document.getElementById("chat"), me = chat ? chat.dataset.me : "";
    var what = card.dataset.ask || (card.querySelector("button[data-choice^='q']") ? "answer" : "approval");
    return "Waiting for " + (!who || who === me ? "your" : who + "’s") + " " + what;
  }
  function showStatus() {
    var working = document.getElementById("working"), label = document.getElementById("working-text");
    if (!working) return;
    var wait = turn.on && !turn.stopping ? cardWait() : "";
    working.hidden = !(turn.on || turn.starting);
    working.classList.toggle("stopping", turn.stopping);
    working.classList.toggle("waiting", !!wait);
    var words = turn.stopping ? "Stopping…" : wait || (turn.on ? "Working…" : "Starting the agent…");
    if (label && label.textContent !== words) label.textContent = words;
    working.dataset.state = turn.stopping ? "stopping" : wait ? "waiting" : turn.on ? "working" : turn.starting ? "starting" : "";
  }
  function starting(tick) {
    if (tick !== statusTick || turn.on) return;
    turn.starting = true;
    showStatus();
  }
  // stopping shows (or clears) that a stop was asked for: a state of the
  // turn, not a message in the conversation.
  function stopping(on) {
    turn.stopping = on;
    showStatus();
  }

  // Files: chosen, dropped on the message box or pasted into it. The box
  // takes one file; the server decides what it accepts by content.
  function size(n) {
    return n >= 1 << 20 ? (n / (1 << 20)).toFixed(1).replace(/\.0$/, "") + " MB" : Math.ceil(n / 1024) + " KB";
  }
  function showFile(form) {
    var input = form.elements.file, label = document.getElementById("file-name");
    if (!input || !label) return;
    if (!label.dataset.hint) label.dataset.hint = label.textContent;
    var has = !!(input.files && input.files.length);
    label.textContent = has ? "Attached: " + input.files[0].name + " (" + size(input.files[0].size) + ")" : label.dataset.hint;
    label.classList.toggle("chosen", has);
  }
  function files() {
    var form = document.getElementById("composer");
    if (!form || !form.elements.file) return;
    var input = form.elements.file;
    var max = Number(form.dataset.maxUpload) || 0, maxText = Number(form.dataset.maxText) || 0;
    var take = function (list) {
      if (!list || !list.length) return false;
      if (max && list[0].size > max) { // refused before it is sent
        toast("“" + list[0].name + "” is " + size(list[0].size) + ": files may be at most " + size(max) + ".", "error");
        input.value = "";
        showFile(form);
        return true;
      }
      var dt = new DataTransfer();
      dt.items.add(list[0]);
      input.files = dt.files;
      showFile(form);
      return true;
    };
    input.addEventListener("change", function () { if (!take(input.files)) showFile(form); });
    form.addEventListener("dragover", function (e) { e.preventDefault(); form.classList.add("dropping"); });
    form.addEventListener("dragleave", function () { form.classList.remove("dropping"); });
    form.addEventListener("drop", function (e) {
      e.preventDefault();
      form.classList.remove("dropping");
      if (take(e.dataTransfer && e.dataTransfer.files)) form.elements.text.focus();
    });
    form.elements.text.addEventListener("paste", function (e) {
      if (take(e.clipboardData && e.clipboardData.files)) { e.preventDefault(); return; }
      // A paste longer than a message may be becomes an attached text file.
      var text = e.clipboardData ? e.clipboardData.getData("text/plain") : "";
      if (!maxText || !text || new Blob([text]).size <= maxText) return;
      e.preventDefault();
      take([new File([text], "pasted-text.txt", { type: "text/plain" })]);
      toast("The pasted text is longer than a message may be (" + size(maxText) + "): it is attached as pasted-text.txt.", "notice");
    });
  }

  // The conversation list follows changes (a new message, a rename, a
  // share…) and the search box without a reload.
  function listURL(q) {
    var box = document.getElementById("thread-list");
    return "/threads?q=" + encodeURIComponent(q) + "&archived=" + (box ? box.dataset.archived : "") +
      "&cur=" + encodeURIComponent(box ? box.dataset.cur : "");
  }
  var listSeq = 0;
  function refreshList() {
    var box = document.getElementById("thread-list"), q = document.getElementById("q");
    if (!box) return;
    var mine = ++listSeq;
    fetch(listURL(q ? q.value : box.dataset.q), { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (resp) { return resp.ok ? resp.text() : null; })
      .then(function (html) {
        if (!html || mine !== listSeq) return; // a later refresh wins
        var tpl = document.createElement("template");
        tpl.innerHTML = html.trim();
        var next = tpl.content.firstElementChild, cur = document.getElementById("thread-list");
        if (!next || !cur) return;
        cur.replaceWith(next);
        enhance(next);
        liveTitle(next);
      })
      .catch(function () { /* offline: the next change refreshes it */ });
  }
  // liveTitle follows the conversation's title as the list names it (its
  // first message, or a rename): the heading and the tab's title.
  function liveTitle(listBox) {
    var h = document.getElementById("chat-title"), a = listBox.querySelector("a[aria-current=page]");
    if (!h || !a || listBox.dataset.q) return;
    var title = a.textContent.trim();
    if (!title || title === "(no text)" || h.textContent === title) return;
    h.textContent = title;
    document.title = title + " · agentbridge";
  }
  // streamEnded handles an event stream the bridge closed for good (a
  // stream refused is not retried by the browser): signed out elsewhere,
  // the page goes to the sign-in form; else it says so.
  function streamEnded(src, conn) {
    if (src.readyState !== EventSource.CLOSED) return;
    fetch("/signin", { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (resp) {
        if (new URL(resp.url).pathname === "/signin") { signIn(); return; }
        if (conn) conn.textContent = "disconnected: reload the page";
      })
      .catch(function () { if (conn) conn.textContent = "disconnected: reload the page"; });
  }
  function threadSearch() {
    var q = document.getElementById("q");
    if (!q) return;
    var timer;
    q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refreshList, 200); });
    // Beside a conversation the list filters as you type: Enter stays in the chat.
    if (q.form && document.getElementById("chat")) {
      q.form.addEventListener("submit", function (e) { e.preventDefault(); clearTimeout(timer); refreshList(); });
    }
  }
  function listEvents() {
    if (!document.getElementById("home") || !document.getElementById("thread-list")) return;
    var src = new EventSource("/events");
    src.addEventListener("open", function () { document.body.dataset.live = "1"; });
    src.addEventListener("error", function () { streamEnded(src, null); });
    src.addEventListener("list", refreshList);
    src.addEventListener("notice", function (e) { toast(JSON.parse(e.data).text, "notice"); });
    src.addEventListener("ended", function (e) { src.close(); accessEnded(JSON.parse(e.data).next || "/signin"); });
  }

  // Tool calls: a tool line's Details button shows the call's input and
  // output, each cut to toolShown characters with "Show all".
  var toolShown = 1500, openTools = {};
  function toolPart(label, text) {
    var box = document.createElement("div"), head = document.createElement("div"), pre = document.createElement("pre");
    head.className = "muted small";
    head.textContent = label;
    pre.textContent = text.length > toolShown ? text.slice(0, toolShown) + "…" : text;
    box.append(head, pre);
    if (text.length > toolShown) {
      var all = document.createElement("button");
      all.type = "button";
      all.className = "btn small show-all";
      all.textContent = "Show all (" + text.length + " characters)";
      all.addEventListener("click", function () { pre.textContent = text; all.remove(); });
      box.appendChild(all);
    }
    return box;
  }
  function toggleTool(b, open) {
    var thread = document.getElementById("chat").dataset.thread, id = b.dataset.tool;
    var next = b.nextElementSibling;
    if (next && next.classList.contains("tool-detail")) next.remove();
    b.setAttribute("aria-expanded", open ? "true" : "false");
    if (!open) { delete openTools[id]; return; }
    openTools[id] = true;
    fetch("/chat/" + thread + "/tools/" + encodeURIComponent(id), { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (resp) { return resp.ok ? resp.json() : null; })
      .then(function (t) {
        if (!t || b.getAttribute("aria-expanded") !== "true") return;
        var d = document.createElement("div");
        d.className = "tool-detail";
        d.dataset.tool = id;
        d.appendChild(toolPart("Input", t.input));
        d.appendChild(toolPart(t.done ? (t.error ? "Output (error)" : "Output") : "Output (still running)", t.done ? t.output : ""));
        b.after(d);
      })
      .catch(function () { toast("Could not load the tool call", "error"); });
  }
  function tools() {
    document.addEventListener("click", function (e) {
      var b = e.target.closest && e.target.closest(".tool-toggle");
      if (b) toggleTool(b, b.getAttribute("aria-expanded") !== "true");
    });
  }

  // Delete asks once more: the first click turns the button into the
  // confirmation (closing Manage takes it back).
  // The conversation list is a drawer on narrow screens.
  function drawer() {
    var b = document.getElementById("threads-toggle"), layout = document.getElementById("chat-layout");
    if (!b || !layout) return;
    var set = function (open) {
      layout.classList.toggle("drawer-open", open);
      b.setAttribute("aria-expanded", open ? "true" : "false");
    };
    b.addEventListener("click", function () { set(!layout.classList.contains("drawer-open")); });
    var backdrop = document.getElementById("drawer-backdrop"); // a tap beside the drawer closes it
    if (backdrop) backdrop.addEventListener("click", function () { set(false); b.focus(); });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && layout.classList.contains("drawer-open")) { set(false); b.focus(); e.stopImmediatePropagation(); }
    }, true);
  }

  function nearBottom(el) { return el.scrollHeight - el.scrollTop - el.clientHeight < 120; }

  // Insert or replace a message, keeping the order of data-seq.
  function upsert(list, msg) {
    var tpl = document.createElement("template");
    tpl.innerHTML = msg.html.trim();
    var el = tpl.content.firstElementChild;
    if (!el) return null;
    var old = document.getElementById(el.id);
    if (old) {
      old.replaceWith(el);
    } else {
      var after = null;
      list.querySelectorAll(".msg").forEach(function (m) {
        if (Number(m.dataset.seq) > msg.seq && after === null) after = m;
      });
      list.insertBefore(el, after);
    }
    enhance(el);
    el.querySelectorAll(".tool-toggle").forEach(function (b) { if (openTools[b.dataset.tool]) toggleTool(b, true); });
    return el;
  }

  function chat() {
    var box = document.getElementById("chat");
    if (!box) return;
    var list = document.getElementById("messages");
    var working = document.getElementById("working");
    var conn = document.getElementById("conn");
    list.scrollTop = list.scrollHeight;
    var src = new EventSource("/chat/" + box.dataset.thread + "/events?since=" + box.dataset.since);
    src.addEventListener("open", function () { conn.textContent = ""; box.dataset.live = "1"; });
    src.addEventListener("error", function () {
      conn.textContent = "reconnecting…";
      box.dataset.live = "";
      streamEnded(src, conn);
    });
    turn.on = working.dataset.state === "working";
    turn.starting = working.dataset.state === "starting";
    showStatus();
    src.addEventListener("msg", function (e) {
      var stick = nearBottom(list), el = upsert(list, JSON.parse(e.data));
      if (stick) list.scrollTop = list.scrollHeight;
      if (!el || !el.classList.contains("mine")) { statusTick++; turn.starting = false; }
      showStatus();
    });
    src.addEventListener("typing", function (e) {
      var d = JSON.parse(e.data);
      statusTick++;
      turn.on = !!d.on;
      turn.starting = !turn.on && !!d.starting;
      if (!turn.on) turn.stopping = false;
      showStatus();
    });
    src.addEventListener("notice", function (e) {
      statusTick++;
      turn.starting = false;
      showStatus();
      toast(JSON.parse(e.data).text, "notice");
    });
    src.addEventListener("list", refreshList);
    // Access ended (share ended, conversation archived or deleted, signed
    // out): nothing more comes; go where the server says.
    src.addEventListener("ended", function (e) { src.close(); accessEnded(JSON.parse(e.data).next || "/"); });
  }

  // Operator pages refresh themselves every few seconds (not while the
  // keyboard focus is inside them, which a refresh would lose).
  // shown holds the server's HTML of each refreshed part as last received
  // (the page's copy differs: enhance() rewrites times).
  function refresh() {
    var panel = document.getElementById("admin-content");
    if (!panel || !panel.hasAttribute("data-refresh")) return;
    var ids = ["admin-content", "pending-badge"], shown = {};
    ids.forEach(function (id) { var e = document.getElementById(id); if (e) shown[id] = e.innerHTML; });
    return function start() { setInterval(function () {
      if (document.hidden) return;
      var cur = document.getElementById("admin-content");
      if (cur && cur.contains(document.activeElement)) return;
      fetch(location.href, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
        .then(function (resp) { return resp.ok ? resp.text() : null; })
        .then(function (html) {
          if (!html) return;
          var doc = new DOMParser().parseFromString(html, "text/html");
          ids.forEach(function (id) {
            var now = document.getElementById(id), next = doc.getElementById(id);
            if (now && next && shown[id] !== next.innerHTML) {
              shown[id] = next.innerHTML;
              now.replaceWith(next);
              enhance(next);
            }
          });
        })
        .catch(function () { /* offline: try again later */ });
    }, 3000); };
  }

  document.addEventListener("DOMContentLoaded", function () {
    var refreshing = refresh(); // before enhance: it keeps the server's HTML
    themeToggle();
    enhance(document);
    asyncForms();
    drafts();
    drawer();
    files();
    tools();
    threadSearch();
    listEvents();
    chat();
    if (refreshing) refreshing();
  });
})();
