package whatsapp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/configtest"
	"github.com/agentbridge/agentbridge/config/decode"
)

func TestDefaultDeviceStore(t *testing.T) {
	tests := []struct{ bot, want string }{
		{"phone", "whatsapp-phone.db"},
		{"team-2_a.b", "whatsapp-team-2_a.b.db"},
		{"../x y", "whatsapp-.._x_y.db"}, // no path separator survives
		{"çà", "whatsapp-__.db"},
	}
	for _, tt := range tests {
		t.Run(tt.bot, func(t *testing.T) {
			if got := DefaultDeviceStore(tt.bot); got != tt.want {
				t.Errorf("DefaultDeviceStore(%q) = %q, want %q", tt.bot, got, tt.want)
			}
		})
	}
}

// parseConfig parses lines (after data_dir and an agents section: the
// first line is line 3) with WhatsApp as the only platform.
func parseConfig(dataDir string, lines ...string) (*config.Config, []decode.Problem) {
	return configtest.ParseDoc(nil, Platform(), "data_dir: "+dataDir+"\nagents: {coder: {}}\n"+strings.Join(lines, "\n")+"\n")
}

// TestConfigProblems: bots[].whatsapp is checked with its lines, the
// messages config had before the settings moved here: one device store
// per bot, never the bridge database, approvals by numbers or poll.
func TestConfigProblems(t *testing.T) {
	bot := func(name string, more ...string) []string {
		return append([]string{"  - name: " + name, "    platform: whatsapp", "    agent: coder"}, more...)
	}
	cases := []struct {
		name  string
		lines []string
		want  []string // "line path: message"
	}{
		{"two bots on one device store", append(bot("a", "    whatsapp: {device_store: wa.db}"), bot("b", "    whatsapp: {device_store: ./wa.db}")...),
			[]string{"11 bots[1].whatsapp.device_store: device store /srv/bridge/wa.db is also used by bots[0] (a): each WhatsApp bot needs its own whatsapp.device_store file"}},
		{"default device store of one bot named like another's", append(bot("a", "    whatsapp: {device_store: whatsapp-b.db}"), bot("b")...),
			[]string{"9 bots[1].platform: device store /srv/bridge/whatsapp-b.db is also used by bots[0] (a): each WhatsApp bot needs its own whatsapp.device_store file"}},
		{"unknown approvals", bot("a", "    whatsapp:", "      approvals: buttons"),
			[]string{`8 bots[0].whatsapp.approvals: unknown approvals "buttons" (want numbers or poll)`}},
		{"device store is the bridge database", bot("a", "    whatsapp: {device_store: bridge.db}"),
			[]string{"7 bots[0].whatsapp.device_store: the device store must not be the bridge database (/srv/bridge/bridge.db): give this bot its own whatsapp.device_store file"}},
		{"device store is the bridge database by absolute path", bot("a", "    whatsapp: {device_store: /srv/bridge/../bridge/bridge.db}"),
			[]string{"7 bots[0].whatsapp.device_store: the device store must not be the bridge database (/srv/bridge/bridge.db): give this bot its own whatsapp.device_store file"}},
		{"unknown key", bot("a", "    whatsapp: {device: x}"),
			[]string{"7 bots[0].whatsapp.device: unknown key (valid keys: approvals, device_store)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := parseConfig("/srv/bridge", append([]string{"bots:"}, tc.lines...)...)
			configtest.WantProblems(t, ps, tc.want)
		})
	}
}

// TestConfigDefaults: a WhatsApp bot needs no settings: its device store
// defaults to data_dir/whatsapp-NAME.db and approvals to numbers; a
// relative device store is resolved against data_dir, and the store is the
// bot's secret file (hidden from agents).
func TestConfigDefaults(t *testing.T) {
	dir := t.TempDir()
	c, ps := parseConfig(dir, "bots:",
		"  - {name: phone, platform: whatsapp, agent: coder}",
		"  - {name: two, platform: whatsapp, agent: coder, whatsapp: {device_store: wa/two.db, approvals: poll}}",
		"  - {name: abs, platform: whatsapp, agent: coder, whatsapp: {device_store: /var/wa.db}}")
	if ps != nil {
		t.Fatalf("problems: %v", ps)
	}
	want := []Config{
		{DeviceStore: filepath.Join(dir, "whatsapp-phone.db"), Approvals: ApprovalsNumbers},
		{DeviceStore: filepath.Join(dir, "wa", "two.db"), Approvals: ApprovalsPoll},
		{DeviceStore: "/var/wa.db", Approvals: ApprovalsNumbers},
	}
	for i, w := range want {
		b := c.Bots[i]
		if got := b.Settings.(*Config); *got != w {
			t.Errorf("bot %s: settings %+v, want %+v", b.Name, *got, w)
		}
		if f := b.SecretFiles(); len(f) != 1 || f[0] != w.DeviceStore {
			t.Errorf("bot %s: secret files %q", b.Name, f)
		}
	}
	if s := c.Summary(); !strings.Contains(s, " device_store="+filepath.Join(dir, "whatsapp-phone.db")+" approvals=numbers\n") {
		t.Errorf("summary:\n%s", s)
	}
}

// TestScheduleTargets: WhatsApp schedules name a chat JID or a phone
// number (stored as its chat JID); chats have no threads.
func TestScheduleTargets(t *testing.T) {
	bots := []string{"bots:", "  - {name: p, platform: whatsapp, agent: coder}", "schedules:"}
	for _, tc := range []struct{ target, stored, want string }{
		{`channel: "15551234567@s.whatsapp.net"`, "15551234567@s.whatsapp.net", ""},
		{`channel: "120363000000000001@g.us"`, "120363000000000001@g.us", ""},
		{`channel: "+15551234567"`, "15551234567@s.whatsapp.net", ""},
		{`channel: "Family chat"`, "", `unknown channel format "Family chat" for a whatsapp bot: want a chat JID such as 15551234567@s.whatsapp.net or 12036...@g.us, or a phone number such as +15551234567`},
		{`conversation: "15551234567@s.whatsapp.net/1"`, "", `unknown channel format "15551234567@s.whatsapp.net" for a whatsapp bot: WhatsApp chats have no threads: use channel`},
	} {
		c, ps := parseConfig(t.TempDir(), append(bots, `  - {name: s, bot: p, cron: "@daily", prompt: x, `+tc.target+`}`)...)
		switch {
		case tc.want == "" && (ps != nil || c.Schedules[0].Channel != tc.stored):
			t.Errorf("%s: problems %v, config %+v; want channel %s", tc.target, ps, c, tc.stored)
		case tc.want != "" && (len(ps) != 1 || ps[0].Line != 6 || ps[0].Msg != tc.want):
			t.Errorf("%s: problems %v, want one at line 6: %s", tc.target, ps, tc.want)
		}
	}
}
