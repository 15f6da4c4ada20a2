package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
)

// writeGate lets one writer at a time use the store's writer connection,
// in two classes: urgent writes (on a platform's acknowledgement path:
// accepting an inbound message) go before the others (ledger states, usage,
// outbox, settings), first come first served within each class. Without
// it, database/sql hands the one connection to a random waiter, and a
// message the platform waits for could queue behind a hundred background
// writes and miss its acknowledgement deadline (seen with 100 conversations
// talking at once).
type writeGate struct {
	mu     sync.Mutex
	held   bool
	queues [2][]chan struct{} // [urgent, normal]
}

func class(urgent bool) int {
	if urgent {
		return 0
	}
	return 1
}

// lock waits for the gate or ctx's end.
func (g *writeGate) lock(ctx context.Context, urgent bool) error {
	g.mu.Lock()
	if !g.held {
		g.held = true
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	c := class(urgent)
	g.queues[c] = append(g.queues[c], ch)
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(g.queues[c], ch); i >= 0 {
		g.queues[c] = slices.Delete(g.queues[c], i, i+1)
		g.mu.Unlock()
		return ctx.Err()
	}
	g.mu.Unlock()
	g.unlock() // handed over at the same time: pass it on
	return ctx.Err()
}

// unlock hands the gate to the next waiter, urgent ones first.
func (g *writeGate) unlock() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.queues {
		if len(g.queues[c]) > 0 {
			ch := g.queues[c][0]
			g.queues[c] = g.queues[c][1:]
			close(ch) // the gate stays held, now by that waiter
			return
		}
	}
	g.held = false
}

// Exec runs one write statement through the gate, urgent ones (accepting
// an inbound message) before the others. An error because the database
// cannot be written wraps ErrFull.
func (s *DB) Exec(ctx context.Context, urgent bool, query string, args ...any) (sql.Result, error) {
	if s.guard != nil {
		return s.execGuarded(ctx, urgent, query, args...)
	}
	if err := s.gate.lock(ctx, urgent); err != nil {
		return nil, fmt.Errorf("wait for the writer: %w", err)
	}
	defer s.gate.unlock()
	res, err := s.w.ExecContext(ctx, query, args...)
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	if err := s.NoteWrite(err); err != nil {
		return nil, err
	}
	return res, nil
}

// Write runs fn with the writer connection, through the gate like Exec,
// for a write statement whose rows the caller reads (INSERT … RETURNING).
// fn's error is returned as NoteWrite classifies it (sql.ErrNoRows
// unchanged). fn must not call another write of the store (a deadlock).
// A guarded handle (Guarded) refuses it.
func (s *DB) Write(ctx context.Context, urgent bool, fn func(w *sql.DB) error) error {
	if s.guard != nil {
		return errUnguardedWrite
	}
	if err := s.gate.lock(ctx, urgent); err != nil {
		return fmt.Errorf("wait for the writer: %w", err)
	}
	defer s.gate.unlock()
	err := fn(s.w)
	if err != nil && ctx.Err() != nil {
		return err
	}
	return s.NoteWrite(err)
}
