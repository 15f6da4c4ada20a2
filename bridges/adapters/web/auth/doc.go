// Package auth is who may use the web console and how a browser proves
// it: the users (web.users, or the admin token generated into data_dir),
// their tokens compared in constant time, signed session cookies whose
// sessions are kept on the server (Store, the store's web_sessions), the
// CSRF token of each session, and the limit on failed sign-ins per client
// address and in total.
//
// It renders no page: package web serves the sign-in form and calls this
// package. Secrets (tokens, the session key, cookie values) are never
// logged.
package auth
