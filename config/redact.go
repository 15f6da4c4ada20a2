package config

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
)

// This file keeps secrets (agent env values, web tokens) out of fmt,
// slog and encoding/json output: every type that holds one formats itself
// with the secret replaced by "<redacted>" (or "<empty>" when unset).
// Consequently a Config cannot be round-tripped through JSON; it is never
// meant to be written back.

const redactedText = "<redacted>"

// Redact is how a secret is shown: "<redacted>", or "<empty>" when it is
// unset. Platform settings use it to redact their tokens (see Settings).
func Redact(s string) string {
	if s == "" {
		return "<empty>"
	}
	return redactedText
}

// String implements fmt.Stringer: name, platform, agent and the
// platform section with its secrets redacted.
func (b Bot) String() string {
	var sec string
	if b.Settings != nil {
		sec = " " + b.Settings.String()
	}
	return fmt.Sprintf("bot{name:%s platform:%s agent:%s verbosity:%s%s}", b.Name, b.Platform, b.Agent, b.Verbosity, sec)
}

// GoString implements fmt.GoStringer (%#v) like String.
func (b Bot) GoString() string { return "config." + b.String() }

// LogValue implements slog.LogValuer: the bot's identity, no secrets.
func (b Bot) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", b.Name), slog.String("platform", b.Platform), slog.String("agent", b.Agent))
}

// Redacted JSON encodings, so that slog's JSON handler (which marshals
// values without LogValue, e.g. a whole Config) and json.Marshal never see
// a secret. The local types drop the methods to avoid recursion. Platform
// settings redact their own secrets (see Settings).

// LogValue implements slog.LogValuer: a short overview without secrets
// (see Summary for the full picture).
func (c *Config) LogValue() slog.Value {
	bots := make([]string, 0, len(c.Bots))
	for _, b := range c.Bots {
		bots = append(bots, b.Name)
	}
	return slog.GroupValue(
		slog.String("data_dir", c.DataDir),
		slog.String("http_listen", c.HTTP.Listen),
		slog.Any("agents", slices.Sorted(maps.Keys(c.Agents))),
		slog.Any("bots", bots))
}
