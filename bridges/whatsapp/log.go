package whatsapp

import (
	"context"
	"fmt"
	"log/slog"

	waLog "go.mau.fi/whatsmeow/util/log"
)

// Logger adapts log to whatsmeow's logger interface. Messages are
// formatted with fmt.Sprintf and logged at the matching slog level with a
// "module" attribute (sub-loggers join their names with "/"). A nil log
// gives whatsmeow's no-op logger.
func Logger(log *slog.Logger, module string) waLog.Logger {
	if log == nil {
		return waLog.Noop
	}
	return &slogLogger{log: log, module: module}
}

type slogLogger struct {
	log    *slog.Logger
	module string
}

func (l *slogLogger) logf(level slog.Level, msg string, args []any) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return // skip formatting debug chatter nobody reads
	}
	if len(args) > 0 {
		msg = fmt.Sprintf(msg, args...)
	}
	l.log.Log(ctx, level, msg, "module", l.module)
}

func (l *slogLogger) Debugf(msg string, args ...any) { l.logf(slog.LevelDebug, msg, args) }
func (l *slogLogger) Infof(msg string, args ...any)  { l.logf(slog.LevelInfo, msg, args) }
func (l *slogLogger) Warnf(msg string, args ...any)  { l.logf(slog.LevelWarn, msg, args) }
func (l *slogLogger) Errorf(msg string, args ...any) { l.logf(slog.LevelError, msg, args) }

// Sub returns a logger for a part of the module ("Client" → "Client/Socket").
func (l *slogLogger) Sub(module string) waLog.Logger {
	name := module
	if l.module != "" {
		name = l.module + "/" + module
	}
	return &slogLogger{log: l.log, module: name}
}
