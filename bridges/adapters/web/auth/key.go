package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
)

// SessionKeyLen is the length of a session key this package makes, and
// the shortest it accepts.
const SessionKeyLen = 32

// KeyStore keeps the session key that replicas share (implemented by
// *store.Store: the web_session_key table).
type KeyStore interface {
	// WebSessionKey returns the stored key, storing candidate first when
	// there is none (stored: this call stored it). Concurrent callers
	// all get the key stored first.
	WebSessionKey(ctx context.Context, candidate []byte) (key []byte, stored bool, err error)
}

// LoadSessionKey returns the key that signs session cookies.
//
// One bridge (shared nil): the key file SessionKeyFile in dataDir, made
// (32 random bytes, 0600) on first use.
//
// Replicas (shared set): the key kept in shared, the same for every
// replica on the database, so that a cookie signed by one is valid on all.
// The first replica to start stores its key file's key when it has one —
// replicas an operator gave one file keep their sessions on upgrade —
// else 32 random bytes; nothing is written to dataDir. A key file that
// differs from the stored key is not used (a warning says so). Fails
// closed: a key file readable by others or shorter than SessionKeyLen, or
// a store error, is an error. Neither the key nor any part of it is ever
// logged or put in an error.
func LoadSessionKey(ctx context.Context, dataDir string, shared KeyStore, log *slog.Logger) ([]byte, error) {
	path := filepath.Join(dataDir, SessionKeyFile)
	if shared == nil {
		key, _, err := ReadOrCreateSecret(path, func() ([]byte, error) { return RandomBytes(SessionKeyLen) })
		if err != nil {
			return nil, err
		}
		if len(key) < SessionKeyLen {
			return nil, fmt.Errorf("%s is too short: delete it to make a new one", SessionKeyFile)
		}
		return key, nil
	}
	file, err := ReadSecret(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		file = nil
	case err != nil:
		return nil, err
	case len(file) < SessionKeyLen:
		return nil, fmt.Errorf("%s is too short: delete it (the replicas share the key in the database)", SessionKeyFile)
	}
	candidate := file
	if candidate == nil {
		if candidate, err = RandomBytes(SessionKeyLen); err != nil {
			return nil, err
		}
	}
	key, stored, err := shared.WebSessionKey(ctx, candidate)
	if err != nil {
		return nil, fmt.Errorf("the session key the replicas share: %w", err)
	}
	switch {
	case stored && file != nil:
		log.Info("the session key of "+SessionKeyFile+" is now shared by every replica through the database", "file", path)
	case stored:
		log.Info("a new session key is shared by every replica through the database")
	case file != nil && subtle.ConstantTimeCompare(file, key) != 1:
		log.Warn(SessionKeyFile+" differs from the session key the replicas share (in the database) and is not used; "+
			"sessions signed with it have ended", "file", path)
	}
	return key, nil
}
