package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentbridge/agentbridge/config"
)

// Files the console keeps in data_dir (hidden from agents by the sandbox,
// like the rest of data_dir). Both are created 0600.
const (
	// AdminTokenFile holds the generated admin token when web.users is empty.
	AdminTokenFile = "web-admin-token"
	// SessionKeyFile holds the key that signs session cookies (of one bridge;
	// replicas share theirs through the store, LoadSessionKey). Deleting it
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

// Users is the set of people who may sign in; a reload replaces it
// (Replace). Safe for concurrent use.
type Users struct {
	mu   sync.RWMutex
	list []*User
}

// NewUsers builds the user set from the config; generated reports a token
// written into dataDir just now (first run with no users), "" otherwise.
func NewUsers(cfg []config.WebUser, dataDir string) (*Users, string, error) {
	us := &Users{}
	for _, u := range cfg {
		us.list = append(us.list, &User{Name: u.Name, Role: u.Role, tokenSum: sha256.Sum256([]byte(u.Token))})
	}
	if len(us.list) > 0 {
		return us, "", nil
	}
	path := filepath.Join(dataDir, AdminTokenFile)
	tok, created, err := ReadOrCreateSecret(path, func() ([]byte, error) {
		b, err := RandomBytes(24)
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

// ByToken returns the user whose token is tok, or nil. Every user is
// compared, in constant time, so timing tells nothing about which matched.
func (us *Users) ByToken(tok string) *User {
	sum := sha256.Sum256([]byte(tok))
	var found *User
	for _, u := range us.Snapshot() {
		if subtle.ConstantTimeCompare(sum[:], u.tokenSum[:]) == 1 {
			found = u
		}
	}
	return found
}

// ByName returns the user called name, or nil.
func (us *Users) ByName(name string) *User {
	for _, u := range us.Snapshot() {
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

// Replace makes the users of from current.
func (us *Users) Replace(from *Users) {
	from.mu.RLock()
	list := from.list
	from.mu.RUnlock()
	us.mu.Lock()
	us.list = list
	us.mu.Unlock()
}

// Snapshot is the current user list (not to be modified).
func (us *Users) Snapshot() []*User {
	us.mu.RLock()
	defer us.mu.RUnlock()
	return us.list
}
