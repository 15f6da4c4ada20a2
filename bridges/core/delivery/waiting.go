package delivery

import (
	"context"
	"sync"
)

// Waiting is who waits for a platform to answer again: per bot, the
// wake-ups of the conversations whose outbox has a retry scheduled after
// a failed post (Add, when the retry is armed). The first sign that the
// bot's platform is back — a call to it succeeded, an event from it
// arrived, its adapter reconnected — is Back, which wakes them all at
// once (each then calls Outbox.Wake on its worker), so that replies held
// through an outage go within moments of its end instead of at the end of
// each one's back-off (up to MaxBackoff). Safe for concurrent use; the
// zero value is ready. Back is cheap when nobody waits: platforms call it
// on every success.
type Waiting struct {
	mu sync.Mutex
	m  map[string]map[string]func() // bot → conversation id → wake
}

// Add records that conversation conv of bot waits for a retry: wake is
// called once by the next Back of bot, unless Remove came first. wake
// must not block. A second Add for conv replaces the first.
func (w *Waiting) Add(bot, conv string, wake func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = make(map[string]map[string]func())
	}
	if w.m[bot] == nil {
		w.m[bot] = make(map[string]func())
	}
	w.m[bot][conv] = wake
}

// Remove forgets conv's wake-up (its retry ran, or it stopped).
func (w *Waiting) Remove(bot, conv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m[bot], conv)
}

// Back is a sign that bot's platform answers again: it calls, and
// forgets, the wake-up of every conversation of bot that waits, and
// returns how many it woke.
func (w *Waiting) Back(bot string) int {
	w.mu.Lock()
	wakes := w.m[bot]
	if len(wakes) > 0 {
		delete(w.m, bot)
	}
	w.mu.Unlock()
	for _, wake := range wakes {
		wake()
	}
	return len(wakes)
}

// Wake is the worker's share of Waiting.Back: a sign that the platform
// answers again. When a retry is scheduled, the pending replies are
// posted now, in order, instead of at the end of the back-off; if the
// platform still fails, the back-off goes on from where it was (doubled).
// It does nothing when no retry is scheduled. Within the first back-off
// of the last failed attempt it only moves the retry to the end of that
// back-off: signs can come in bursts while the platform still refuses
// posts (events arrive through a connection that is up while its API is
// not), and a conversation retries at most once per first back-off. The
// retry timer armed earlier may still fire; it then finds nothing left,
// or retries early.
func (o *Outbox) Wake(ctx context.Context) {
	if !o.retrying {
		return
	}
	if wait := o.failedAt.Add(o.backoff).Sub(o.h.Now()); wait > 0 {
		o.h.RetryOutboxAfter(wait)
		return
	}
	o.h.Log().Info("the platform answers again: posting the waiting replies now")
	o.retrying = false
	o.Flush(ctx)
}
