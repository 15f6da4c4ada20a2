package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Platform is what config needs to know of one chat platform: its name and
// how to read a bot's settings mapping (bots[].<Name>). Each adapter offers
// its Platform; bridges/app holds the list of them (its one registry of
// platforms) and passes it to Load and Parse, whose problems then include
// the adapters' with their lines, before anything starts. The order of the
// list is the order platforms are named in messages.
type Platform struct {
	// Name is the value of bots[].platform and the key of the bot's
	// settings mapping.
	Name string
	// Settings reads the settings mapping of one bot (s.Node, with line
	// numbers): it decodes the keys it knows (see Section.Fields) and, when
	// s.Own() (the bot is of this platform), checks them and fills in
	// defaults, reporting every problem through s. It is called for every
	// bot that has the mapping, and for every bot of this platform even
	// without it (s.Given() false). What it returns for a bot of this
	// platform is kept in Bot.Settings; what it returns for another's is
	// dropped.
	//
	// nil means the platform takes no settings mapping (the web console:
	// its users are the top-level web section); bots[].<Name> is then an
	// unknown key.
	Settings func(s *Section) Settings
	// Target checks the target of a schedule (schedules[]) of a bot of
	// this platform: channel, and thread ("" for a channel). It returns
	// the channel as stored (it may normalize it, e.g. a phone number to a
	// chat id) and why it is not one of the platform's ids, or "". nil:
	// any channel without spaces or slashes.
	Target func(channel, thread string) (stored, why string)
}

// Settings is a bot's platform settings as its adapter read them (see
// Platform.Settings); the adapter type-asserts Bot.Settings to its own
// type. Implementations must never reveal a secret through fmt, slog or
// encoding/json (redact tokens in String, GoString, LogValue and
// MarshalJSON).
type Settings interface {
	// String formats the settings with every secret redacted, e.g.
	// slack{bot_token:<redacted> app_token:<redacted> api_url:…}.
	String() string
	// Summary is the settings' part of the bot's line in check-config's
	// summary, starting with a space, without any secret: " api_url=…".
	Summary() string
}

// SecretFiler is implemented by settings that name files holding the bot's
// credentials outside the bridge database (a WhatsApp device store): agents
// must never see them (see Bot.SecretFiles).
type SecretFiler interface {
	SecretFiles() []string
}

// SecretFiles returns the files the bot's settings keep credentials in
// (SecretFiler), or nil.
func (b *Bot) SecretFiles() []string {
	if f, ok := b.Settings.(SecretFiler); ok {
		return f.SecretFiles()
	}
	return nil
}

// platformNames returns the names of platforms, in order.
func platformNames(platforms []Platform) []string {
	out := make([]string, len(platforms))
	for i, p := range platforms {
		out[i] = p.Name
	}
	return out
}

// findPlatform returns the platform called name, or nil.
func findPlatform(platforms []Platform, name string) *Platform {
	for i := range platforms {
		if platforms[i].Name == name {
			return &platforms[i]
		}
	}
	return nil
}

// settingsNode returns the settings mapping given for platform at the bot
// path bp, or nil when the bot has none.
func (d *decoder) settingsNode(bp, platform string) *yaml.Node {
	return d.sections[decode.Child(bp, platform)]
}
