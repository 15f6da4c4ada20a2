// agentbridge web console: progressive enhancement of server-rendered pages.
// Every form works without this script; with it, forms post in the
// background and the chat follows the conversation over server-sent events.
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

  // Sign-in link: the token travels in the URL fragment, never to the server.
  function signinFromFragment() {
    var form = document.getElementById("signin-form");
    if (!form || location.hash.indexOf("#token=") !== 0) return;
    var tok = decodeURIComponent(location.hash.slice("#token=".length));
    history.replaceState(null, "", location.pathname + location.search);
    form.elements.token.value = tok;
    form.submit();
  }

  // Copy buttons on code blocks of the agent's messages.
  function enhance(root) {
    root.querySelectorAll(".md pre").forEach(function (pre) {
      if (pre.querySelector(".copy")) return;
      var b = document.createElement("button");
      b.type = "button";
      b.className = "copy btn small";
      b.textContent = "Copy";
      b.addEventListener("click", function () {
        var code = pre.querySelector("code") || pre;
        navigator.clipboard.writeText(code.innerText).then(function () {
          b.textContent = "Copied";
          setTimeout(function () { b.textContent = "Copy"; }, 1500);
        }, function () { toast("Could not copy to the clipboard", "error"); });
      });
      pre.appendChild(b);
    });
  }

  // Forms marked data-async post with fetch; the page updates from events.
  function asyncForms() {
    document.addEventListener("submit", function (e) {
      var form = e.target;
      if (!form.hasAttribute("data-async")) return;
      e.preventDefault();
      var data = new FormData(form, e.submitter || undefined);
      var buttons = form.querySelectorAll("button");
      buttons.forEach(function (b) { b.disabled = true; });
      fetch(form.action, { method: "POST", body: data, headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" })
        .then(function (resp) {
          if (resp.ok) {
            if (form.hasAttribute("data-reset")) form.reset();
            return;
          }
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
          text.form.requestSubmit();
        }
      });
    }
  }

  function nearBottom(el) { return el.scrollHeight - el.scrollTop - el.clientHeight < 120; }

  // Insert or replace a message, keeping the order of data-seq.
  function upsert(list, msg) {
    var tpl = document.createElement("template");
    tpl.innerHTML = msg.html.trim();
    var el = tpl.content.firstElementChild;
    if (!el) return;
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
    src.addEventListener("error", function () { conn.textContent = "reconnecting…"; box.dataset.live = ""; });
    src.addEventListener("msg", function (e) {
      var stick = nearBottom(list);
      upsert(list, JSON.parse(e.data));
      if (stick) list.scrollTop = list.scrollHeight;
    });
    src.addEventListener("typing", function (e) {
      working.hidden = !JSON.parse(e.data).on;
    });
    src.addEventListener("notice", function (e) {
      toast(JSON.parse(e.data).text, "notice");
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    signinFromFragment();
    enhance(document);
    asyncForms();
    chat();
  });
})();
