package whatsapp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	waLog "go.mau.fi/whatsmeow/util/log"
)

func TestLoggerAdapter(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l := Logger(log, "Client").Sub("Socket")
	l.Infof("connected to %s in %d ms", "web.whatsapp.com", 42)
	l.Warnf("100%% %s", "sure")
	l.Debugf("hidden %d", 1)
	l.Errorf("failed: %v", "boom")
	out := buf.String()
	for _, want := range []string{
		`level=INFO msg="connected to web.whatsapp.com in 42 ms" module=Client/Socket`,
		`level=WARN msg="100% sure" module=Client/Socket`,
		`level=ERROR msg="failed: boom" module=Client/Socket`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hidden") {
		t.Errorf("debug line below the level was logged:\n%s", out)
	}
	if Logger(nil, "x") != waLog.Noop {
		t.Error("a nil logger should give whatsmeow's no-op logger")
	}
}
