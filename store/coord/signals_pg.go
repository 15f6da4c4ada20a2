package coord

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/jackc/pgx/v5"
)

// Timing of a PostgreSQL listener (pgSignals).
const (
	listenRetry    = 100 * time.Millisecond // first pause between reconnect attempts (the first attempt is at once)
	listenRetryMax = 5 * time.Second        // the pause doubles up to this
	listenPing     = 30 * time.Second       // an idle listener checks its connection this often
	listenConnect  = 10 * time.Second       // bound of one attempt to connect and LISTEN, and of one ping
)

// listenAppName is the application_name of a listening connection (in
// place of the store's), so that pg_stat_activity shows which connection
// listens on which channel.
func listenAppName(channel string) string { return "agentbridge listen " + channel }

// pgSignals is the PostgreSQL signaler: NOTIFY through the store's pool,
// LISTEN on a connection of its own per Listen, kept by one goroutine that
// reconnects when the connection is lost.
type pgSignals struct {
	cfg    *pgx.ConnConfig // the store's connection settings; copied per connection
	db     *sql.DB         // for NOTIFY
	logger *slog.Logger

	retry, retryMax, ping time.Duration // listenRetry, listenRetryMax, listenPing (shorter in tests)
}

func newPGSignals(cfg *pgx.ConnConfig, db *sql.DB, logger *slog.Logger) *pgSignals {
	return &pgSignals{cfg: cfg, db: db, logger: logger, retry: listenRetry, retryMax: listenRetryMax, ping: listenPing}
}

// notify: pg_notify in a statement of its own, delivered when it commits.
func (p *pgSignals) notify(ctx context.Context, channel, payload string) error {
	if _, err := p.db.ExecContext(ctx, `SELECT pg_notify(?, ?)`, channel, payload); err != nil {
		return fmt.Errorf("pg_notify: %w", err)
	}
	return nil
}

// listen connects and listens before it returns, so that every NOTIFY
// committed after it returned is delivered (or followed by a Resync).
func (p *pgSignals) listen(ctx context.Context, channel string) (<-chan string, error) {
	conn, err := p.connect(ctx, channel)
	if err != nil {
		return nil, err
	}
	q := newSignalQueue(listenBuffer)
	out := make(chan string)
	go func() {
		defer close(out)
		var wg sync.WaitGroup
		wg.Go(func() { p.receive(ctx, conn, channel, q) })
		q.deliver(ctx, out)
		wg.Wait()
	}()
	return out, nil
}

// connect opens a connection listening on channel.
func (p *pgSignals) connect(ctx context.Context, channel string) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, listenConnect)
	defer cancel()
	cfg := p.cfg.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = listenAppName(channel)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+sqldb.QuoteIdent(channel)); err != nil {
		return nil, errors.Join(fmt.Errorf("LISTEN: %w", err), closeConn(ctx, conn))
	}
	return conn, nil
}

// receive queues the notifications that reach conn until ctx ends. When
// the connection is lost it reconnects, and queues a Resync once it
// listens again: what was notified in between is not delivered. It closes
// the connection it holds before it returns.
func (p *pgSignals) receive(ctx context.Context, conn *pgx.Conn, channel string, q *signalQueue) {
	for {
		err := p.wait(ctx, conn, q)
		if cerr := closeConn(ctx, conn); cerr != nil {
			p.logger.Debug("close the listening connection", "channel", channel, "err", cerr)
		}
		if ctx.Err() != nil {
			return
		}
		p.logger.Warn("lost the connection listening for signals; reconnecting (signals sent meanwhile are missed, polling finds their work)",
			"channel", channel, "err", err)
		if conn = p.reconnect(ctx, channel); conn == nil {
			return
		}
		p.logger.Info("listening for signals again", "channel", channel)
		q.missed()
	}
}

// wait queues conn's notifications until the connection fails or ctx ends,
// and returns why. An idle connection is pinged every p.ping: a connection
// cut off without a reset (a dead host, a dropped route) reports nothing
// by itself. The ping has a bound of its own (listenConnect), not p.ping:
// a busy host answers a healthy connection's ping late, and a reconnect
// would needlessly cost the listener a Resync.
func (p *pgSignals) wait(ctx context.Context, conn *pgx.Conn, q *signalQueue) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, p.ping)
		n, err := conn.WaitForNotification(wctx)
		idle := errors.Is(wctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case err == nil:
			q.push(n.Payload)
		case ctx.Err() != nil:
			return ctx.Err()
		case idle && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, listenConnect)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		default:
			return fmt.Errorf("wait for notifications: %w", err)
		}
	}
}

// reconnect connects and listens on channel again: at once, then after
// pauses doubling from p.retry to p.retryMax (with jitter, so that replicas
// do not reconnect in step after a restart of the server). It returns nil
// when ctx ends first.
func (p *pgSignals) reconnect(ctx context.Context, channel string) *pgx.Conn {
	pause := p.retry
	for attempt := 1; ; attempt++ {
		conn, err := p.connect(ctx, channel)
		if err == nil {
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		p.logger.Debug("reconnect for signals failed", "channel", channel, "attempt", attempt, "err", err)
		t := time.NewTimer(pause + rand.N(pause/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		pause = min(2*pause, p.retryMax)
	}
}

// closeConn closes conn, within a few seconds even when ctx has ended.
func closeConn(ctx context.Context, conn *pgx.Conn) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return conn.Close(cctx)
}
