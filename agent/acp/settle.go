package acp

import "time"

// After answering session/load, an agent may still be replaying the
// loaded history as session/update notifications (Gemini CLI streams it
// without waiting). Shown, the replay would read as the answer to the
// next message, so the client holds prompts after a load until no update
// has come for settleQuiet, at most settleMax, dropping what comes
// meanwhile. Messages sent then are queued (Lifecycle "queued") and go
// as one prompt when it ends.
const (
	settleQuiet = 300 * time.Millisecond
	settleMax   = 3 * time.Second
)

// settleTimer is the pending end of a settle period.
type settleTimer struct {
	timer *time.Timer
	until time.Time // settleMax from the load's answer
}

// beginSettle starts holding prompts after a load. c.mu is held.
func (c *Client) beginSettle() {
	c.settling = true
	c.settle.until = time.Now().Add(settleMax)
	c.settle.timer = time.AfterFunc(settleQuiet, c.endSettle)
}

// quiet restarts the quiet period after an update of the replay, within
// settleMax. c.mu is held.
func (c *Client) quiet() {
	if c.settle.timer == nil {
		return
	}
	wait := min(settleQuiet, time.Until(c.settle.until))
	if c.settle.timer.Stop() {
		c.settle.timer.Reset(max(wait, 0))
	}
}

// endSettle ends the settle period: queued messages go out.
func (c *Client) endSettle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.settling {
		return
	}
	c.settling = false
	c.settle.timer = nil
	if c.phase == phaseReady && c.prompt == 0 {
		c.startPrompt()
	}
}

// Close stops the client's timer; the process is gone.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settle.timer != nil {
		c.settle.timer.Stop()
		c.settle.timer = nil
	}
	c.settling = false
}
