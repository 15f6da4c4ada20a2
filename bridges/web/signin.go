package web

import (
	"container/list"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/config"
)

// signinFormLifetime bounds how long a sign-in form stays usable.
const signinFormLifetime = time.Hour

// signinPage shows the token form. Its CSRF token is a random value also
// set as a cookie (double submit): a form posted from elsewhere lacks it.
// The sign-in link printed on the terminal carries the token in the URL
// fragment (#token=…), which browsers never send: the page's script fills
// the form with it and submits.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	if CurrentUser(r) != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.showSignin(w, r, http.StatusOK, signinNotice{})
}

// signinNotice is what the sign-in page says above the form.
type signinNotice struct {
	Failed       bool // the token was wrong
	RetryMinutes int  // > 0: too many failed sign-ins; try again in this many minutes
}

func (c *Console) showSignin(w http.ResponseWriter, r *http.Request, status int, notice signinNotice) {
	tok := randomID(16)
	setCookie(w, r, signinCookie, tok, signinFormLifetime)
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	c.render(w, r, status, "signin", "", struct {
		CSRF, Next string
		signinNotice
	}{tok, safeNext(next), notice})
}

// signin checks the posted token and starts a session. Past the limits of
// failed sign-ins (signinLimiter) the token is not even looked at: the
// answer is 429 with Retry-After.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(signinCookie)
	if err != nil || ck.Value == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		http.Error(w, "missing or wrong CSRF token: reload the sign-in page", http.StatusForbidden)
		return
	}
	addr := clientAddr(r, c.trusted)
	if ok, wait := c.limit.allow(addr); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		c.log.Debug("web sign-in refused: too many failed sign-ins", "addr", addr, "remote", r.RemoteAddr, "retry_after", wait.Round(time.Second))
		c.showSignin(w, r, http.StatusTooManyRequests, signinNotice{RetryMinutes: int(math.Ceil(wait.Minutes()))})
		return
	}
	u := c.users.byToken(strings.TrimSpace(r.PostFormValue("token")))
	if u == nil {
		c.limit.failed(addr)
		c.log.Warn("web sign-in failed: unknown token", "addr", addr, "remote", r.RemoteAddr)
		c.showSignin(w, r, http.StatusUnauthorized, signinNotice{Failed: true})
		return
	}
	value, err := c.sess.issue(r.Context(), u)
	if err != nil {
		c.log.Error("web sign-in: no session", "user", u.Name, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Signing in failed: the bridge could not record the session. Try again.")
		return
	}
	setCookie(w, r, signinCookie, "", -1)
	setCookie(w, r, sessionCookie, value, SessionLifetime)
	c.log.Info("web sign-in", "user", u.Name, "role", u.Role, "remote", r.RemoteAddr)
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// signout ends the browser's session on the server (so that a copy of the
// cookie stops working too) and deletes the cookie.
func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	if err := c.sess.end(r.Context(), sessionOf(r).value); err != nil {
		c.log.Error("web sign-out failed", "user", CurrentUser(r).Name, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "Signing out failed: the session could not be ended. Try again.")
		return
	}
	setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in redirect on this site: a path, never
// "//host" or a URL.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

// Limits of failed sign-ins. The sign-in form takes a token alone, which
// names no user: a wrong token is a guess at every user's token at once, so
// the per-user count is the count of all failures together (signinTotal).
// Tripping it must not lock everybody out: it leaves each address one
// attempt per window, so people who type their token right still get in
// while a guesser spread over many addresses gets one guess per address.
const (
	signinWindow  = 15 * time.Minute
	signinPerAddr = 10   // failures per address (an IPv6 /64) per window
	signinTotal   = 100  // failures from all addresses per window
	signinAddrs   = 4096 // addresses tracked; the least recently failing is forgotten first
)

// signinLimiter counts failed sign-ins per client address and in total,
// in fixed windows. It tracks at most max addresses (least recently failing
// forgotten first), so however many addresses an attacker sends from, it
// holds a fixed amount of memory; a forgotten address is treated as new.
type signinLimiter struct {
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

func newSigninLimiter(now func() time.Time) *signinLimiter {
	return &signinLimiter{perAddr: signinPerAddr, total: signinTotal, max: signinAddrs, window: signinWindow, now: now,
		addrs: map[string]*list.Element{}, lru: list.New()}
}

// allow reports whether a sign-in attempt from addr may be checked now,
// and if not, how long until it may.
func (l *signinLimiter) allow(addr string) (bool, time.Duration) {
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

// failed records a failed sign-in from addr.
func (l *signinLimiter) failed(addr string) {
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

// size is how many addresses the limiter holds.
func (l *signinLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.addrs)
}

// clientAddr is the address sign-in failures of r are counted under: the
// connection's address, or, when that is one of the trusted proxies, the
// nearest address in X-Forwarded-For that is not (a proxy appends the
// address it got the request from, so the entries right of the first
// untrusted one are proxies' and the ones left of it are the client's
// word). An IPv6 address counts as its /64, which one client usually has
// whole. An address that cannot be read counts as "unknown": one bucket.
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
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

// Files the console keeps in data_dir (hidden from agents by the sandbox,
// like the rest of data_dir). Both are created 0600.
const (
	// AdminTokenFile holds the generated admin token when web.users is empty.
	AdminTokenFile = "web-admin-token"
	// SessionKeyFile holds the key that signs session cookies. Deleting it
	// signs everybody out.
	SessionKeyFile = "web-session.key"
	// GeneratedAdmin is the name of the generated admin user.
	GeneratedAdmin = "admin"
)

// User is a person who may sign in.
type User struct {
	Name string
	Role string // config.RoleUser or config.RoleAdmin
	// tokenSum is SHA-256 of the token: compared in constant time, and its
	// HMAC is bound into session cookies so that changing a token ends the
	// user's sessions.
	tokenSum [32]byte
}

// Admin reports whether u may open admin pages.
func (u *User) Admin() bool { return u != nil && u.Role == config.RoleAdmin }

// users is the set of people who may sign in; a reload replaces it
// (ReloadUsers). Safe for concurrent use.
type users struct {
	mu   sync.RWMutex
	list []*User
}

// newUsers builds the user set from the config; generated reports a token
// written into dataDir just now (first run with no users), "" otherwise.
func newUsers(cfg []config.WebUser, dataDir string) (*users, string, error) {
	us := &users{}
	for _, u := range cfg {
		us.list = append(us.list, &User{Name: u.Name, Role: u.Role, tokenSum: sha256.Sum256([]byte(u.Token))})
	}
	if len(us.list) > 0 {
		return us, "", nil
	}
	path := filepath.Join(dataDir, AdminTokenFile)
	tok, created, err := readOrCreateSecret(path, func() ([]byte, error) {
		b, err := randomBytes(24)
		return []byte(hex.EncodeToString(b) + "\n"), err
	})
	if err != nil {
		return nil, "", fmt.Errorf("admin token: %w", err)
	}
	token := strings.TrimSpace(string(tok))
	if len(token) < config.MinWebTokenLength {
		return nil, "", fmt.Errorf("admin token in %s is shorter than %d characters: delete the file to make a new one", path, config.MinWebTokenLength)
	}
	us.list = append(us.list, &User{Name: GeneratedAdmin, Role: config.RoleAdmin, tokenSum: sha256.Sum256([]byte(token))})
	if created {
		return us, token, nil
	}
	return us, "", nil
}

// byToken returns the user whose token is tok, or nil. Every user is
// compared, in constant time, so timing tells nothing about which matched.
func (us *users) byToken(tok string) *User {
	sum := sha256.Sum256([]byte(tok))
	var found *User
	for _, u := range us.snapshot() {
		if subtle.ConstantTimeCompare(sum[:], u.tokenSum[:]) == 1 {
			found = u
		}
	}
	return found
}

// byName returns the user called name, or nil.
func (us *users) byName(name string) *User {
	for _, u := range us.snapshot() {
		if u.Name == name {
			return u
		}
	}
	return nil
}

// fingerprint binds a session to the user's current token.
func (u *User) fingerprint(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("token\x00"))
	m.Write(u.tokenSum[:])
	return m.Sum(nil)[:12]
}

// readOrCreateSecret returns the content of path, creating it (0600, in a
// 0700 directory if missing) with make() when it does not exist. created
// reports that this call wrote it. An existing file readable by others is
// refused: it holds a secret.
func readOrCreateSecret(path string, make func() ([]byte, error)) (data []byte, created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.Mode().Perm()&0o077 != 0 {
			return nil, false, fmt.Errorf("%s is readable by other users (mode %v): chmod 600 it", path, fi.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, false, fmt.Errorf("read %s: %w", path, err)
		}
		return b, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("stat %s: %w", path, err)
	}
	b, err := make()
	if err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // made concurrently: use that one
		return readOrCreateSecret(path, make)
	}
	if err != nil {
		return nil, false, fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, false, fmt.Errorf("write %s: %w", path, err)
	}
	return b, true, nil
}

func randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		return nil, fmt.Errorf("random: %w", err)
	}
	return b, nil
}

// randomID is a random lowercase hex id of n bytes.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}
