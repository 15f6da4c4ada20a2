package discordfake

import "time"

// Reconnect sends op 7 (Reconnect) on every open gateway connection: the
// client should close and RESUME on a new connection.
func (f *Fake) Reconnect() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		if c.sess != nil {
			c.send(payload(opReconnect, nil))
		}
	}
}

// InvalidSession sends op 9 (Invalid Session, not resumable) on every open
// connection and forgets their sessions: events dispatched until the
// client identifies again are lost, as on Discord.
func (f *Fake) InvalidSession() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		if c.sess != nil {
			delete(f.sessions, c.sess.id)
			c.sess.conn = nil
			c.sess = nil
		}
		f.stats.InvalidSessions++
		c.send(payload(opInvalidSession, false))
	}
	f.notify()
}

// DropSocket closes every gateway connection's TCP socket without a close
// frame. Sessions stay resumable; events dispatched meanwhile are replayed
// on RESUME.
func (f *Fake) DropSocket() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.drop()
	}
}

// CloseWith closes every gateway connection with a close frame carrying
// code (e.g. CloseDisallowedIntents). Codes Discord documents as not
// resumable (4004, 4010–4014) also end the sessions.
func (f *Fake) CloseWith(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		if nonResumable(code) && c.sess != nil {
			delete(f.sessions, c.sess.id)
			c.sess.conn = nil
			c.sess = nil
		}
		c.closeWith(code, "closed by discordfake")
	}
	f.notify()
}

// RefuseGateway makes the next n gateway websocket handshakes fail with
// HTTP 502, as when Discord's gateway is unreachable behind a proxy or in
// an outage: n < 0 refuses all, 0 stops refusing. Connections already
// open stay.
func (f *Fake) RefuseGateway(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse = n
}

// FailGatewayLookup makes the next n GET /gateway (and /gateway/bot)
// calls answer HTTP 503, as during a Discord outage: discordgo's Open asks
// for the gateway URL again after every failed handshake, so a bot
// cannot connect while it lasts. n < 0 fails all, 0 stops failing.
func (f *Fake) FailGatewayLookup(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookupDown = n
}

// ResetToken replaces the bot token, as "Reset Token" in the Developer
// Portal does: the old token gets 401 from the REST API (GET /gateway
// included) and close 4004 from the gateway, and every open gateway
// connection is closed with 4004 (its session ends).
func (f *Fake) ResetToken(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts.Token = token
	for c := range f.conns {
		if c.sess != nil {
			delete(f.sessions, c.sess.id)
			c.sess.conn = nil
			c.sess = nil
		}
		c.closeWith(CloseAuthenticationFailed, "Authentication failed.")
	}
	f.notify()
}

// Inject429 makes the next n requests on route (a Route* constant) fail
// with 429 Too Many Requests, carrying Retry-After, X-RateLimit-* headers
// and a JSON retry_after of Options.RetryAfter.
func (f *Fake) Inject429(route string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.throttle[route] += n
}

// SetOutage makes every request on the given routes (Route* constants)
// answer HTTP status (e.g. 503, as in a Discord incident) with no effect,
// until SetOutage(0) ends the outage of every route. The gateway is not
// affected; requests are recorded.
func (f *Fake) SetOutage(status int, routes ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if status == 0 {
		clear(f.outage)
		return
	}
	for _, r := range routes {
		f.outage[r] = status
	}
}

// SetResumeReplay makes the next successful RESUME also re-send the n
// events before the client's sequence number: duplicates a client must
// tolerate.
func (f *Fake) SetResumeReplay(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumeReplay = n
}

// SetDenyMessageContent switches whether IDENTIFY with the MESSAGE_CONTENT
// intent is refused with close 4014 (see Options.DenyMessageContent).
func (f *Fake) SetDenyMessageContent(deny bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.denyContent = deny
}

// GatewayStats returns the gateway counters.
func (f *Fake) GatewayStats() GatewayStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.stats
	for c := range f.conns {
		if c.sess != nil {
			st.Live++
		}
	}
	return st
}

// WaitGateway waits until pred holds for the gateway counters.
func (f *Fake) WaitGateway(pred func(GatewayStats) bool, timeout time.Duration) error {
	return f.Wait(timeout, func() bool { return pred(f.GatewayStats()) })
}
