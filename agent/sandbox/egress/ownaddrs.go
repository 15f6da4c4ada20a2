package egress

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// DefaultOwnAddrsMaxAge is how long the host's interface addresses are
// trusted before they are read again (Config.OwnAddrsMaxAge).
const DefaultOwnAddrsMaxAge = time.Second

// OwnAddrs is the set of the host's own interface addresses: every address
// of every interface (public ones too), which reach the host's services
// that listen on 0.0.0.0 or [::] as loopback does. The set is kept current
// by reading the interfaces again when it is older than its maximum age,
// at the moment an address is judged (one netlink dump, well under a
// millisecond), so an address added to an interface is refused within
// that age. It is safe for concurrent use.
type OwnAddrs struct {
	list   func() ([]netip.Addr, error)
	maxAge time.Duration
	now    func() time.Time
	log    *slog.Logger

	mu     sync.Mutex
	set    map[netip.Addr]struct{}
	read   time.Time // when set was read (zero: never)
	failed bool      // the last read failed (logged once per failure run)
}

// NewOwnAddrs returns the host's addresses as list reports them (nil =
// InterfaceAddrs), read again when older than maxAge (<= 0 =
// DefaultOwnAddrsMaxAge). now is the clock (nil = time.Now); log gets a
// warning when the interfaces cannot be read (nil = discard).
func NewOwnAddrs(list func() ([]netip.Addr, error), maxAge time.Duration, now func() time.Time, log *slog.Logger) *OwnAddrs {
	if list == nil {
		list = InterfaceAddrs
	}
	if maxAge <= 0 {
		maxAge = DefaultOwnAddrsMaxAge
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &OwnAddrs{list: list, maxAge: maxAge, now: now, log: log}
}

// Contains reports whether ip (IPv4-mapped or not) is one of the host's
// own addresses, reading the interfaces first when the set is older than
// the maximum age. When they cannot be read, the last set read stays in
// use (addresses once seen stay refused; the loopback, private and
// link-local classes are refused regardless).
func (o *OwnAddrs) Contains(ip netip.Addr) bool {
	if o == nil {
		return false
	}
	ip = ip.Unmap()
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.now(); o.read.IsZero() || t.Sub(o.read) >= o.maxAge || t.Before(o.read) {
		o.refreshLocked(t)
	}
	_, ok := o.set[ip]
	return ok
}

// refreshLocked reads the interfaces' addresses at time t; o.mu is held.
func (o *OwnAddrs) refreshLocked(t time.Time) {
	addrs, err := o.list()
	if err != nil {
		if !o.failed {
			o.log.Warn("egress: the host's interface addresses cannot be read; the last ones read stay refused", "err", err)
		}
		o.failed = true
		o.read = t // try again after maxAge, not on every request
		return
	}
	o.failed = false
	set := make(map[netip.Addr]struct{}, len(addrs))
	for _, a := range addrs {
		set[a.Unmap().WithZone("")] = struct{}{}
	}
	o.set, o.read = set, t
}

// InterfaceAddrs lists the addresses of the host's network interfaces.
func InterfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list interface addresses: %w", err)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if p, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, p.Unmap())
		}
	}
	return out, nil
}
