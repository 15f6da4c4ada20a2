// Applies the theme chosen with the toggle (localStorage "theme": "light" or
// "dark") before the page paints; without a choice the system's
// prefers-color-scheme decides (style.css).
"use strict";
(function () {
  try {
    var t = localStorage.getItem("theme");
    if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  } catch (e) { /* storage blocked: follow the system */ }
})();
