// The sign-in form's script (app.js enhances every other page): the
// sign-in link's token, carried in the URL fragment, is submitted and never
// left in the address bar or the history; a sign-in that lost a race for
// the form cookie with another tab is sent once more.
(function () {
  "use strict";

  // Sign-in link: the token travels in the URL fragment, never to the
  // server. Read on load and whenever the fragment changes (a link pasted
  // into the tab that shows the sign-in page only changes the fragment).
  function signinFromFragment() {
    var form = document.getElementById("signin-form");
    if (!form || location.hash.indexOf("#token=") !== 0) return;
    var tok = decodeURIComponent(location.hash.slice("#token=".length));
    history.replaceState(null, "", location.pathname + location.search);
    form.elements.token.value = tok;
    signinSubmit(form, false);
  }

  // A sign-in tab whose form token lost a race (another tab's sign-in page
  // replaced the form cookie at the same moment) is answered with a fresh
  // form and "That sign-in form had expired". The token typed or carried
  // by the link is kept for that one answer only (this tab's
  // sessionStorage, read and removed on every page load) and sent once
  // more with the fresh form, so no tab needs it typed again.
  var signinRetryKey = "ab-signin-retry";
  function signinSubmit(form, retry) {
    try {
      if (!retry) sessionStorage.setItem(signinRetryKey, JSON.stringify({tok: form.elements.token.value, at: Date.now()}));
    } catch (e) { /* no retry then */ }
    form.submit();
  }
  function signinRetry() {
    var kept = null;
    try {
      kept = JSON.parse(sessionStorage.getItem(signinRetryKey) || "null");
      sessionStorage.removeItem(signinRetryKey);
    } catch (e) { return; }
    var form = document.getElementById("signin-form");
    var expired = document.querySelector('#signin-error[data-reason="expired"]');
    if (!form || !expired || !kept || !kept.tok || Date.now() - kept.at > 60000) return;
    form.elements.token.value = kept.tok;
    signinSubmit(form, true);
  }
  function signinForm() {
    var form = document.getElementById("signin-form");
    if (form) form.addEventListener("submit", function () {
      try { sessionStorage.setItem(signinRetryKey, JSON.stringify({tok: form.elements.token.value, at: Date.now()})); } catch (e) { /* no retry then */ }
    });
  }

  window.addEventListener("hashchange", signinFromFragment);
  document.addEventListener("DOMContentLoaded", function () {
    signinRetry();
    signinForm();
    signinFromFragment();
    // A sign-in link opened while signed in lands here with its token in
    // the fragment: never leave it in the address bar or the history.
    if (location.hash.indexOf("#token=") === 0) history.replaceState(null, "", location.pathname + location.search);
  });
})();
