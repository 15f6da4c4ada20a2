package auth

import (
	"container/list"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Limits of failed sign-ins. The sign-in form takes a token alone, which
// names no user: a wrong token is a guess at every user's token at once, so
// the per-user count is the count of all failures together (SigninTotal).
// Tripping it must not lock everybody out: it leaves each address one
// attempt per window, so people who type their token right still get in
// while a guesser spread over many addresses gets one guess per address.
const (
	SigninWindow  = 15 * time.Minute
	SigninPerAddr = 10   // failures per address (an IPv6 /64) per window
	SigninTotal   = 100  // failures from all addresses per window
	SigninAddrs   = 4096 // addresses tracked; the least recently failing is forgotten first
)

// Limiter counts failed sign-ins per client address and in total,
// in fixed windows. It tracks at most max addresses (least recently failing
// forgotten first), so however many addresses an attacker sends from, it
// holds a fixed amount of memory; a forgotten address is treated as new.
type Limiter struct {
	perAddr, total, max int
	window              time.Duration
	now                 func() time.Time

	mu         sync.Mutex
	addrs      map[string]*list.Element // of *addrFailures
	lru        *list.List               // front: most recent failure
	totalN     int
	totalStart time.Time
}

// addrFailures is one address's failures in the window that began at start.
type addrFailures struct {
	addr  string
	n     int
	start time.Time
}

func NewLimiter(now func() time.Time) *Limiter {
	return &Limiter{perAddr: SigninPerAddr, total: SigninTotal, max: SigninAddrs, window: SigninWindow, now: now,
		addrs: map[string]*list.Element{}, lru: list.New()}
}

// Allow reports whether a sign-in attempt from addr may be checked now,
// and if not, how long until it may.
func (l *Limiter) Allow(addr string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	n, until := 0, time.Time{}
	if e, ok := l.addrs[addr]; ok {
		f := e.Value.(*addrFailures)
		if end := f.start.Add(l.window); now.Before(end) {
			n, until = f.n, end
		}
	}
	if n >= l.perAddr {
		return false, until.Sub(now)
	}
	if end := l.totalStart.Add(l.window); n > 0 && l.totalN >= l.total && now.Before(end) {
		if until.Before(end) {
			end = until // the address's own window ends first
		}
		return false, end.Sub(now)
	}
	return true, 0
}

// Failed records a failed sign-in from addr.
func (l *Limiter) Failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !now.Before(l.totalStart.Add(l.window)) {
		l.totalN, l.totalStart = 0, now
	}
	l.totalN++
	if e, ok := l.addrs[addr]; ok {
		f := e.Value.(*addrFailures)
		if !now.Before(f.start.Add(l.window)) {
			f.n, f.start = 0, now
		}
		f.n++
		l.lru.MoveToFront(e)
		return
	}
	for l.lru.Len() >= l.max {
		oldest := l.lru.Back()
		delete(l.addrs, oldest.Value.(*addrFailures).addr)
		l.lru.Remove(oldest)
	}
	l.addrs[addr] = l.lru.PushFront(&addrFailures{addr: addr, n: 1, start: now})
}

// Size is how many addresses the limiter holds.
func (l *Limiter) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.addrs)
}

// ClientAddr is the address sign-in failures of r are counted under: the
// connection's address, or, when that is one of the trusted proxies, the
// nearest address in X-Forwarded-For that is not (a proxy appends the
// address it got the request from, so the entries right of the first
// untrusted one are proxies' and the ones left of it are the client's
// word). An IPv6 address counts as its /64, which one client usually has
// whole. An address that cannot be read counts as "unknown": one bucket.
func ClientAddr(r *http.Request, trusted []netip.Prefix) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return "unknown"
	}
	addr := ap.Addr().Unmap()
	if isTrusted(addr, trusted) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // unreadable: count it under the last proxy's address
			}
			addr = hop.Unmap()
			if !isTrusted(addr, trusted) {
				break
			}
		}
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
