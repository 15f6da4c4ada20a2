package discord

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/agentbridge/agentbridge/config"
)

// Name is the platform's name: the value of bots[].platform and the key of
// a Discord bot's settings (bots[].discord).
const Name = "discord"

// DefaultAPIURL is bots[].discord.api_url when it is not given.
const DefaultAPIURL = "https://discord.com/api/v9/"

// Config holds a Discord bot's settings (yaml bots[].discord); it is the
// bot's config.Bot.Settings.
type Config struct {
	Token  string // yaml token, required, secret
	APIURL string // yaml api_url, default DefaultAPIURL; always ends in "/"
}

// Platform is Discord's entry in the bridge's list of platforms: it reads
// and checks bots[].discord and the targets of Discord schedules.
func Platform() config.Platform {
	return config.Platform{Name: Name, Settings: readConfig, Target: checkTarget}
}

// readConfig decodes bots[].discord (see config.Platform.Settings).
func readConfig(s *config.Section) config.Settings {
	c := &Config{}
	s.Fields(map[string]*string{"token": &c.Token, "api_url": &c.APIURL})
	switch {
	case !s.Own():
		return c
	case !s.Given():
		s.Required("", "discord settings are required for a discord bot (token)")
		return nil
	}
	s.Secret("token", c.Token)
	c.APIURL = s.URL("api_url", c.APIURL, DefaultAPIURL)
	return c
}

// snowflakeRE matches a Discord id.
var snowflakeRE = regexp.MustCompile(`^[0-9]{5,21}$`)

// checkTarget checks a schedule's channel and thread ids (see
// config.Platform.Target).
func checkTarget(channel, thread string) (string, string) {
	if !snowflakeRE.MatchString(channel) {
		return channel, "want a Discord channel id (digits; not a #name)"
	}
	if thread != "" && !snowflakeRE.MatchString(thread) {
		return channel, "want the thread's id (digits) after the slash"
	}
	return channel, ""
}

// Summary implements config.Settings: the API URL (never the token).
func (c *Config) Summary() string { return " api_url=" + c.APIURL }

// String implements fmt.Stringer with the token redacted.
func (c Config) String() string {
	return fmt.Sprintf("discord{token:%s api_url:%s}", config.Redact(c.Token), c.APIURL)
}

// GoString implements fmt.GoStringer (%#v) with the token redacted.
func (c Config) GoString() string {
	return fmt.Sprintf("discord.Config{Token:%q, APIURL:%q}", config.Redact(c.Token), c.APIURL)
}

// LogValue implements slog.LogValuer with the token redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.String("token", config.Redact(c.Token)), slog.String("api_url", c.APIURL))
}

// MarshalJSON implements json.Marshaler with the token redacted.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	c.Token = config.Redact(c.Token)
	return json.Marshal(plain(c))
}
