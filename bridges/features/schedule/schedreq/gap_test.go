package schedreq

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// noSchedules is a Store with no schedules yet.
type noSchedules struct{}

func (noSchedules) SchedulesOfConversation(context.Context, string) ([]store.Schedule, error) {
	return nil, nil
}

// TestCheckMinGapAtNight: a cron whose close firings come once a day (or
// a week) at night — two minutes apart, across midnight, only on Sundays
// — is refused whenever it is asked for (every hour of a week, in zones
// with and without summer time), even when its first two firings from
// then are far apart; one whose firings are all at least MinGap apart is
// accepted at every one of those moments.
func TestCheckMinGapAtNight(t *testing.T) {
	ctx := context.Background()
	key := bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}
	close := []string{
		"0,2 3 * * *",     // 03:00 and 03:02
		"0,59 0,23 * * *", // 23:59 then 00:00: across midnight
		"0,1 3 * * 0",     // only on Sunday nights
		"0,4 2 1 * *",     // once a month
		"*/2 1 * * *",     // every 2 min for an hour at night
		"57,59 4 * * 1-5", // weekday mornings
	}
	spaced := []string{"0 3 * * *", "0,5 3 * * *", "0,55 0,23 * * *", "0 */6 * * *", "0,30 2 * * 0"}
	for _, zone := range []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"} {
		// A week from a Saturday noon, hour by hour, and across a DST change.
		starts := []time.Time{time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC), time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC)}
		for _, start := range starts {
			for h := 0; h < 7*24; h++ {
				now := start.Add(time.Duration(h)*time.Hour + 90*time.Second)
				for _, cron := range close {
					r := Request{Source: store.ScheduleFromChat, Cron: cron, TZ: zone, Prompt: "p", Key: key, ConvID: "conv", CreatedBy: "alice"}
					if _, err := Check(ctx, noSchedules{}, now, r); !errors.Is(err, ErrRefused) {
						t.Fatalf("Check(%q in %s) at %s = %v, want refused (fires closer than %v)", cron, zone, now.Format(time.RFC3339), err, MinGap)
					}
				}
				for _, cron := range spaced {
					r := Request{Source: store.ScheduleFromChat, Cron: cron, TZ: zone, Prompt: "p", Key: key, ConvID: "conv", CreatedBy: "alice"}
					if _, err := Check(ctx, noSchedules{}, now, r); err != nil {
						t.Fatalf("Check(%q in %s) at %s = %v, want accepted", cron, zone, now.Format(time.RFC3339), err)
					}
				}
			}
		}
	}
}
