package discord

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestInvite(t *testing.T) {
	t.Parallel()
	if InvitePermissions != 309237713920 {
		t.Errorf("InvitePermissions = %d", InvitePermissions)
	}
	want := "https://discord.com/oauth2/authorize?client_id=42&permissions=309237713920&scope=bot"
	if got := InviteURL("42"); got != want {
		t.Errorf("InviteURL = %s, want %s", got, want)
	}
}

// TestDocsMatchCode keeps docs/discord.md in step with the intents and
// permissions the code asks for.
func TestDocsMatchCode(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "discord.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		strconv.FormatInt(InvitePermissions, 10),
		"Message Content Intent",
		"MESSAGE_CONTENT",
		"api_url",
		"4014",
	} {
		if !strings.Contains(string(doc), s) {
			t.Errorf("docs/discord.md does not mention %q", s)
		}
	}
}
