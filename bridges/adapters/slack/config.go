package slack

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/agentbridge/agentbridge/config"
)

// Name is the platform's name: the value of bots[].platform and the key of
// a Slack bot's settings (bots[].slack).
const Name = "slack"

// DefaultAPIURL is bots[].slack.api_url when it is not given.
const DefaultAPIURL = "https://slack.com/api/"

// Config holds a Slack bot's settings (yaml bots[].slack); it is the bot's
// config.Bot.Settings.
type Config struct {
	BotToken string // yaml bot_token (xoxb-…), required, secret
	AppToken string // yaml app_token (xapp-…, Socket Mode), required, secret
	APIURL   string // yaml api_url, default DefaultAPIURL; always ends in "/"
}

// Platform is Slack's entry in the bridge's list of platforms: it reads
// and checks bots[].slack and the targets of Slack schedules.
func Platform() config.Platform {
	return config.Platform{Name: Name, Settings: readConfig, Target: checkTarget}
}

// readConfig decodes bots[].slack (see config.Platform.Settings).
func readConfig(s *config.Section) config.Settings {
	c := &Config{}
	s.Fields(map[string]*string{"bot_token": &c.BotToken, "app_token": &c.AppToken, "api_url": &c.APIURL})
	switch {
	case !s.Own():
		return c
	case !s.Given():
		s.Required("", "slack settings are required for a slack bot (bot_token, app_token)")
		return nil
	}
	s.Secret("bot_token", c.BotToken)
	s.Secret("app_token", c.AppToken)
	c.APIURL = s.URL("api_url", c.APIURL, DefaultAPIURL)
	return c
}

// Channel and thread id formats of schedule targets.
var (
	channelRE = regexp.MustCompile(`^[CGD][A-Z0-9]{2,}$`)
	threadRE  = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
)

// checkTarget checks a schedule's channel and thread ts (see
// config.Platform.Target).
func checkTarget(channel, thread string) (string, string) {
	if !channelRE.MatchString(channel) {
		return channel, "want a Slack channel id such as C0123ABCD (not a #name)"
	}
	if thread != "" && !threadRE.MatchString(thread) {
		return channel, "want the thread's ts after the slash, such as 1712345678.000100"
	}
	return channel, ""
}

// Summary implements config.Settings: the API URL (never a token).
func (c *Config) Summary() string { return " api_url=" + c.APIURL }

// String implements fmt.Stringer with the tokens redacted.
func (c Config) String() string {
	return fmt.Sprintf("slack{bot_token:%s app_token:%s api_url:%s}", config.Redact(c.BotToken), config.Redact(c.AppToken), c.APIURL)
}

// GoString implements fmt.GoStringer (%#v) with the tokens redacted.
func (c Config) GoString() string {
	return fmt.Sprintf("slack.Config{BotToken:%q, AppToken:%q, APIURL:%q}", config.Redact(c.BotToken), config.Redact(c.AppToken), c.APIURL)
}

// LogValue implements slog.LogValuer with the tokens redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("bot_token", config.Redact(c.BotToken)),
		slog.String("app_token", config.Redact(c.AppToken)),
		slog.String("api_url", c.APIURL))
}

// MarshalJSON implements json.Marshaler with the tokens redacted.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	c.BotToken, c.AppToken = config.Redact(c.BotToken), config.Redact(c.AppToken)
	return json.Marshal(plain(c))
}
