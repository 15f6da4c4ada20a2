package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/config"
)

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

// users is the fixed set of people who may sign in.
type users struct {
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
	for _, u := range us.list {
		if subtle.ConstantTimeCompare(sum[:], u.tokenSum[:]) == 1 {
			found = u
		}
	}
	return found
}

// byName returns the user called name, or nil.
func (us *users) byName(name string) *User {
	for _, u := range us.list {
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
