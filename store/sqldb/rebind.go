package sqldb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
)

// The repository methods write their SQL once, with SQLite's '?'
// placeholders. rebindConnector wraps pgx's database/sql connector so that
// every statement sent to PostgreSQL has them rewritten to $1, $2, … (see
// rebind); nothing else about the statements or the connections changes.

// pgConn is what database/sql uses of a pgx stdlib connection. Listing it
// keeps the wrapper from hiding one of these abilities (database/sql falls
// back to slower or weaker paths when a connection lacks one).
type pgConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.NamedValueChecker
}

// rebindConnector connects through c and rewrites placeholders.
type rebindConnector struct{ c driver.Connector }

func (r rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := r.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := conn.(pgConn)
	if !ok {
		return nil, fmt.Errorf("connection %T lacks an ability the store needs", conn)
	}
	return rebindConn{pc}, nil
}

func (r rebindConnector) Driver() driver.Driver { return r.c.Driver() }

// rebindConn is a pgx connection whose statements are rebound.
type rebindConn struct{ pgConn }

func (c rebindConn) Prepare(query string) (driver.Stmt, error) {
	return c.pgConn.Prepare(rebind(query))
}

func (c rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.pgConn.PrepareContext(ctx, rebind(query))
}

func (c rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.pgConn.ExecContext(ctx, rebind(query), args)
}

func (c rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.pgConn.QueryContext(ctx, rebind(query), args)
}

// rebind rewrites each '?' placeholder of query to PostgreSQL's $n,
// numbering from 1, and each numbered one ('?NNN', as SQLite reads it) to
// $NNN; as in SQLite, a '?' after '?NNN' is the one after the largest
// number so far. A '?' inside a string literal, a quoted identifier or a
// comment is left alone. A query without '?' is returned as it is.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1 // a doubled quote ('') reads as two literals: same text
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end])
			i += end - 1
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+4])
			i += end + 3
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j > i+1 {
				if k, err := strconv.Atoi(query[i+1 : j]); err == nil && k > n {
					n = k
				}
				b.WriteByte('$')
				b.WriteString(query[i+1 : j])
				i = j - 1
				continue
			}
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
