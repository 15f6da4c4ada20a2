// Long messages and the keyboard in the message list (app.js calls
// agentbridgeFold on each message it shows); Delete with an Undo.
(function () {
  "use strict";

  // fold collapses a long message (over foldLines lines or foldChars
  // characters) to a few screens with a Show more toggle.
  var foldLines = 40, foldChars = 4000;
  function fold(m) {
    var body = m.querySelector(".md, .text");
    if (!body || m.querySelector(".fold-toggle")) return;
    var text = body.innerText || body.textContent || "";
    if (text.length <= foldChars && text.split("\n").length <= foldLines) return;
    if (!body.id) body.id = "body-" + (m.id || Math.random().toString(36).slice(2));
    body.classList.add("folded");
    var b = document.createElement("button");
    b.type = "button";
    b.className = "btn small fold-toggle";
    b.textContent = "Show more";
    b.setAttribute("aria-expanded", "false");
    b.setAttribute("aria-controls", body.id);
    b.addEventListener("click", function () {
      var open = body.classList.toggle("folded") === false;
      b.textContent = open ? "Show less" : "Show more";
      b.setAttribute("aria-expanded", String(open));
      if (!open) m.scrollIntoView({ block: "nearest" });
    });
    body.insertAdjacentElement("afterend", b);
  }

  // messageKeys: in the message list, Up and Down (Home, End) move the
  // focus between messages; C copies the focused message.
  function messageKeys() {
    var list = document.getElementById("messages");
    if (!list) return;
    list.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var msgs = Array.prototype.slice.call(list.querySelectorAll(".msg"));
      if (!msgs.length) return;
      var cur = e.target.closest ? e.target.closest(".msg") : null, i = msgs.indexOf(cur), next = null;
      if (e.target !== list && e.target !== cur) return; // a button or link inside keeps its keys
      if (e.key === "ArrowDown") next = msgs[i < 0 ? 0 : Math.min(i + 1, msgs.length - 1)];
      else if (e.key === "ArrowUp") next = msgs[i < 0 ? msgs.length - 1 : Math.max(i - 1, 0)];
      else if (e.key === "Home") next = msgs[0];
      else if (e.key === "End") next = msgs[msgs.length - 1];
      else if ((e.key === "c" || e.key === "C") && cur) {
        var copy = cur.querySelector(".copy-msg");
        if (copy) { e.preventDefault(); copy.click(); }
        return;
      }
      if (next) { e.preventDefault(); next.focus(); }
    });
  }

  // undoableDelete: Delete waits undoDelay with a "Deleted — Undo" toast
  // before it is sent; Undo keeps the conversation. Leaving the page
  // meanwhile sends it at once.
  var undoDelay = 6000;
  function undoableDelete() {
    var form = document.getElementById("delete-form"), b = document.getElementById("delete"), box = document.getElementById("toasts");
    if (!form || !b || !box) return;
    var timer = null, note = null;
    var go = function () {
      if (timer === null) return;
      clearTimeout(timer);
      timer = null;
      form.dataset.go = "1";
      form.submit();
    };
    form.addEventListener("submit", function (e) {
      if (form.dataset.go) return;
      e.preventDefault();
      if (timer !== null) return;
      note = document.createElement("div");
      note.className = "toast notice undo-toast";
      note.appendChild(document.createTextNode("Deleted — "));
      var undo = document.createElement("button");
      undo.type = "button";
      undo.className = "btn small undo";
      undo.textContent = "Undo";
      undo.addEventListener("click", function () {
        clearTimeout(timer);
        timer = null;
        note.remove();
        b.disabled = false;
        b.focus();
      });
      note.appendChild(undo);
      box.appendChild(note);
      b.disabled = true;
      undo.focus();
      timer = setTimeout(go, undoDelay);
    });
    window.addEventListener("pagehide", function () {
      if (timer === null || !navigator.sendBeacon) return;
      clearTimeout(timer);
      timer = null;
      navigator.sendBeacon(form.action, new URLSearchParams(new FormData(form)));
    });
  }

  window.agentbridgeFold = fold;
  document.addEventListener("DOMContentLoaded", messageKeys);
  document.addEventListener("DOMContentLoaded", undoableDelete);
})();
