package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/features/schedule/schedreq"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// errRunImpossible wraps why a scheduled run cannot happen and retrying
// would not help (its bot is gone, the platform refuses the channel).
var errRunImpossible = errors.New("scheduled run impossible")

// startRun starts the run of sc due at due as a turn: it announces it
// ("⏰ scheduled: NAME", the first message of a new thread with
// new_thread) and submits the prompt to the target conversation through
// the core's one entry point with OriginSchedule (platform message id
// "schedule-<id>-<unix>", so a firing is recorded at most once even across
// a crash): the agent gets it as a prompt, never as a command, and it
// carries nobody's rights. It returns the ledger message's id.
func (s *Scheduler) startRun(ctx context.Context, runs core.ScheduleRuns, sc store.Schedule, due time.Time, log *slog.Logger) (string, error) {
	bot := s.cfg.Current().Bot(sc.Key.Bot)
	p := runs.Platform(sc.Key.Bot)
	if bot == nil || p == nil {
		return "", fmt.Errorf("%w: bot %q is not configured or not running", errRunImpossible, sc.Key.Bot)
	}
	profile := sc.Agent
	if s.cfg.Current().Agents[profile] == nil {
		profile = bot.Agent
	}
	header := schedreq.Header + sc.Name + "\n> " + textcut.OneLine(sc.Prompt, 200)
	key := bridges.ConversationKey(sc.Key)
	announced := false
	if sc.NewThread {
		key.Thread = ""
		var err error
		if key, err = startThread(ctx, p, key, header); err != nil {
			return "", err
		}
		announced = true
	}
	// The run carries nobody's rights: its creator is named (for its
	// cards and its spend) only when a person made it.
	creator := ""
	if sc.Source != store.ScheduleFromConfig {
		creator = sc.CreatedBy
	}
	conv, _, err := s.st.GetOrCreateConversation(ctx, store.ConversationKey(key), profile, creator)
	if err != nil {
		return "", fmt.Errorf("scheduled run of %d: %w", sc.ID, err)
	}
	r, err := runs.Submit(ctx, core.Submission{
		Origin: core.OriginSchedule, Conv: conv, MsgID: fmt.Sprintf("schedule-%d-%d", sc.ID, due.Unix()), User: creator,
		UserName: schedreq.Header + sc.Name, Text: sc.Prompt, ScheduleID: sc.ID,
		Accepted: func(ctx context.Context) {
			if !announced {
				post(ctx, runs, key, header, log)
			}
			runs.CountScheduledRun(key.Bot)
		},
		Log: log,
	})
	if err != nil {
		return "", fmt.Errorf("scheduled run of %d: %w", sc.ID, err)
	}
	if r.Duplicate {
		log.Info("scheduled run already recorded (before a restart)", "ledger", r.Msg.ID)
	}
	return r.Msg.ID, nil
}

// startThread posts the header at the top of the channel at in and returns
// the conversation the run goes to: the new thread where the platform can
// start one, else the channel.
func startThread(ctx context.Context, p bridges.Platform, in bridges.ConversationKey, header string) (bridges.ConversationKey, error) {
	ts, ok := p.(bridges.ThreadStarter)
	if !ok {
		if _, err := p.Post(ctx, in, bridges.Message{Text: header}); err != nil {
			return in, fmt.Errorf("post in %s: %w", in, err)
		}
		return in, nil
	}
	key, _, err := ts.StartThread(ctx, in, bridges.Message{Text: header})
	if err != nil {
		return in, fmt.Errorf("start a thread in %s: %w", in, err)
	}
	return key, nil
}

// post posts a scheduler notice into key, logging a failure.
func post(ctx context.Context, runs core.ScheduleRuns, key bridges.ConversationKey, text string, log *slog.Logger) {
	p := runs.Platform(key.Bot)
	if p == nil {
		return
	}
	if _, err := p.Post(ctx, key, bridges.Message{Text: strings.TrimSpace(text)}); err != nil {
		log.Warn("post schedule notice", "key", key, "err", err)
	}
}
