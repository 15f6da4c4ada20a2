package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Section is one bot's settings mapping (bots[i].<platform>) handed to its
// platform's Platform.Settings: the raw YAML node with its line numbers and
// the decoder's tools, so that an adapter decodes and checks its own keys
// with the same strictness, ${VAR} expansion and messages as the rest of
// the file. Problems reported through it are part of the Load or Parse
// error. A Section is valid only during the Settings call.
type Section struct {
	d        *decoder
	c        *Config
	bot      *Bot
	index    int        // the bot's index in bots
	platform string     // the platform whose settings these are
	node     *yaml.Node // nil: the bot has no such mapping
	own      bool       // the bot is of this platform
}

// Node returns the mapping as written (nil when the bot has none); aliases
// are not resolved.
func (s *Section) Node() *yaml.Node { return s.node }

// Given reports whether the bot has the mapping (possibly null).
func (s *Section) Given() bool { return s.node != nil }

// Own reports whether the bot is of this section's platform; settings of a
// bot of another platform are only decoded (they are reported as given for
// the wrong platform), never checked.
func (s *Section) Own() bool { return s.own }

// BotName is the bot's name (may be empty when it is missing).
func (s *Section) BotName() string { return s.bot.Name }

// DataDir is data_dir, absolute.
func (s *Section) DataDir() string { return s.c.DataDir }

// DBPath is the bridge database's file (see Config.DBPath).
func (s *Section) DBPath() string { return s.c.DBPath() }

// DataPath resolves p against data_dir (absolute paths are only cleaned).
func (s *Section) DataPath(p string) string { return decode.ResolvePath(s.c.DataDir, p) }

// Earlier returns the bots before this one, with their settings, for
// checks across bots (read only: do not modify them); an entry is nil
// where the file has no usable bot. Index i is bots[i].
func (s *Section) Earlier() []*Bot { return s.c.Bots[:s.index] }

// path is the problem path of key inside the mapping ("" = the mapping).
func (s *Section) path(key string) string {
	p := decode.Child(decode.Index("bots", s.index), s.platform)
	if key == "" {
		return p
	}
	return decode.Child(p, key)
}

// Fields decodes the mapping strictly: each key of strs is a string value
// (with ${VAR} expansion; null leaves the destination unchanged); any other
// key, a value of another kind, a mapping that is not one: all problems.
func (s *Section) Fields(strs map[string]*string) {
	if s.node == nil {
		return
	}
	known := make(map[string]decode.Field, len(strs))
	for k, dst := range strs {
		known[k] = s.d.Str(dst)
	}
	s.d.Fields(s.node, s.path(""), known)
}

// Set reports whether key was given a non-null value.
func (s *Section) Set(key string) bool { return s.d.IsSet(s.path(key)) }

// Problemf reports a problem at key ("" = the mapping), on its line (or the
// nearest known line above it).
func (s *Section) Problemf(key, format string, args ...any) {
	p := s.path(key)
	s.d.Addf(s.d.LineOf(p), p, format, args...)
}

// BotProblemf reports a problem at a key of the bot itself (bots[i].key),
// e.g. at its platform when a default setting is wrong.
func (s *Section) BotProblemf(key, format string, args ...any) {
	p := decode.Child(decode.Index("bots", s.index), key)
	s.d.Addf(s.d.LineOf(p), p, format, args...)
}

// Required reports a missing value at key ("" = the mapping itself) unless
// a problem is already reported there (e.g. an unset ${VAR}).
func (s *Section) Required(key, msg string) { s.d.Required(s.path(key), msg) }

// Secret reports a missing or empty secret at key ("required for a <platform>
// bot"), never printing a value; value is what Fields decoded.
func (s *Section) Secret(key, value string) { s.d.token(s.path(key), value, s.platform) }

// URL checks an http(s) URL override at key and returns it ending in "/",
// or def when it is empty.
func (s *Section) URL(key, value, def string) string { return s.d.apiURL(s.path(key), value, def) }

// OneOf reports value at key unless it is one of allowed: unknown <what>
// "x" (want a or b).
func (s *Section) OneOf(key, value, what string, allowed ...string) bool {
	return s.d.OneOf(s.path(key), value, what, allowed...)
}

// Show quotes the value of key for a message, or the text as written when
// it came from ${VAR} expansion (messages never carry the environment).
func (s *Section) Show(key, value string) string { return s.d.Show(s.path(key), value) }
