// Package pool keeps live agent sessions by conversation key: at most
// MaxLive per profile, idle ones stopped after IdleTimeout, the least
// recently used idle one evicted when a profile is full; busy sessions
// (turn running, permission pending, background task running) are never
// stopped. The caller owns session ids and resumes stopped or crashed
// conversations with agent.Options.Resume. A profile may keep warm spares
// (KeepSpares): processes started and sent initialize ahead of time, so
// that a new conversation (AcquireNew) skips the CLI's boot; a spare's
// session id and state directory become the conversation's.
package pool
