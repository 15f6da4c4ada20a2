package whatsapp

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentbridge/agentbridge/config"
)

// Name is the platform's name: the value of bots[].platform and the key of
// a WhatsApp bot's settings (bots[].whatsapp).
const Name = "whatsapp"

// Approval modes (bots[].whatsapp.approvals).
const (
	ApprovalsNumbers = "numbers"
	ApprovalsPoll    = "poll"
)

// Config holds a WhatsApp bot's settings (yaml bots[].whatsapp, which may
// be left out); it is the bot's config.Bot.Settings.
type Config struct {
	DeviceStore string // yaml device_store, default DefaultDeviceStore(bot name); resolved against data_dir
	// Approvals is how approval cards are answered (yaml approvals):
	// ApprovalsNumbers (default; numbered replies and 👍 / 👎) or
	// ApprovalsPoll (a poll as well).
	Approvals string
}

// Platform is WhatsApp's entry in the bridge's list of platforms: it reads
// and checks bots[].whatsapp and the targets of WhatsApp schedules.
func Platform() config.Platform {
	return config.Platform{Name: Name, Settings: readConfig, Target: checkTarget}
}

// readConfig decodes bots[].whatsapp (see config.Platform.Settings).
func readConfig(s *config.Section) config.Settings {
	c := &Config{}
	s.Fields(map[string]*string{"device_store": &c.DeviceStore, "approvals": &c.Approvals})
	if !s.Own() {
		return c
	}
	c.DeviceStore = s.DataPath(cmp.Or(c.DeviceStore, DefaultDeviceStore(s.BotName())))
	c.Approvals = cmp.Or(c.Approvals, ApprovalsNumbers)
	s.OneOf("approvals", c.Approvals, "approvals", ApprovalsNumbers, ApprovalsPoll)
	checkDeviceStore(s, c)
	return c
}

// checkDeviceStore rejects a device store that is the bridge database or
// an earlier WhatsApp bot's: two clients on one device fight (the server
// replaces one stream with the other), and the device tables do not belong
// in the bridge database. Paths are compared after resolution against
// data_dir.
func checkDeviceStore(s *config.Section, c *Config) {
	report := s.Problemf
	at := "device_store"
	if !s.Set(at) { // the default is in effect: point at the bot
		report, at = s.BotProblemf, "platform"
	}
	if c.DeviceStore == s.DBPath() {
		report(at, "the device store must not be the bridge database (%s): give this bot its own whatsapp.device_store file", c.DeviceStore)
		return
	}
	for j, b := range s.Earlier() {
		if b == nil {
			continue
		}
		if o, ok := b.Settings.(*Config); ok && o.DeviceStore == c.DeviceStore {
			report(at, "device store %s is also used by bots[%d] (%s): each WhatsApp bot needs its own whatsapp.device_store file",
				c.DeviceStore, j, b.Name)
			return
		}
	}
}

// DefaultDeviceStore is a WhatsApp bot's device store file when
// whatsapp.device_store is not given: "whatsapp-NAME.db" (characters other
// than letters, digits, '.', '-' and '_' in the bot name become '_'), so
// that bots never share one by default.
func DefaultDeviceStore(bot string) string {
	safe := []rune(bot)
	for i, r := range safe {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			safe[i] = '_'
		}
	}
	return "whatsapp-" + string(safe) + ".db"
}

// Chat id and phone number formats of schedule targets.
var (
	chatRE   = regexp.MustCompile(`^[0-9]+(-[0-9]+)?@(s\.whatsapp\.net|g\.us)$`)
	numberRE = regexp.MustCompile(`^\+[0-9]{6,15}$`)
)

// checkTarget checks a schedule's chat (see config.Platform.Target): a
// phone number becomes its chat JID; chats have no threads.
func checkTarget(channel, thread string) (string, string) {
	if numberRE.MatchString(channel) {
		channel = strings.TrimPrefix(channel, "+") + "@s.whatsapp.net"
	}
	if !chatRE.MatchString(channel) {
		return channel, "want a chat JID such as 15551234567@s.whatsapp.net or 12036...@g.us, or a phone number such as +15551234567"
	}
	if thread != "" {
		return channel, "WhatsApp chats have no threads: use channel"
	}
	return channel, ""
}

// Summary implements config.Settings.
func (c *Config) Summary() string {
	return fmt.Sprintf(" device_store=%s approvals=%s", c.DeviceStore, c.Approvals)
}

// String implements fmt.Stringer (the settings hold no secret; the device
// store file does, and agents never see it: see SecretFiles).
func (c Config) String() string { return fmt.Sprintf("whatsapp{device_store:%s}", c.DeviceStore) }

// SecretFiles implements config.SecretFiler: the device store holds the
// linked device's keys.
func (c *Config) SecretFiles() []string {
	if c.DeviceStore == "" {
		return nil
	}
	return []string{c.DeviceStore}
}
