package spend

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

func TestCalendarStarts(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		testkit.SkipOrFail(t, "no tzdata: %v", err)
	}
	cases := []struct {
		name             string
		now              time.Time
		loc              *time.Location
		day, month, next time.Time // next: the next day's start
	}{
		{"utc afternoon", time.Date(2025, 3, 10, 15, 0, 0, 0, time.UTC), nil,
			time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC)},
		{"berlin is already in April", time.Date(2025, 3, 31, 22, 30, 0, 0, time.UTC), berlin,
			time.Date(2025, 4, 1, 0, 0, 0, 0, berlin), time.Date(2025, 4, 1, 0, 0, 0, 0, berlin), time.Date(2025, 4, 2, 0, 0, 0, 0, berlin)},
		{"berlin day of the DST change has 23 hours", time.Date(2025, 3, 30, 12, 0, 0, 0, time.UTC), berlin,
			time.Date(2025, 3, 30, 0, 0, 0, 0, berlin), time.Date(2025, 3, 1, 0, 0, 0, 0, berlin), time.Date(2025, 3, 31, 0, 0, 0, 0, berlin)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			day, month := calendarStarts(tc.now, tc.loc)
			if !day.Equal(tc.day) || !month.Equal(tc.month) || !day.AddDate(0, 0, 1).Equal(tc.next) {
				t.Errorf("calendarStarts = %v, %v (next day %v), want %v, %v, %v", day, month, day.AddDate(0, 0, 1), tc.day, tc.month, tc.next)
			}
		})
	}
	if d := time.Date(2025, 3, 31, 0, 0, 0, 0, berlin).Sub(time.Date(2025, 3, 30, 0, 0, 0, 0, berlin)); d != 23*time.Hour {
		t.Errorf("the DST day lasts %v", d)
	}
}

func TestResetPhrase(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		testkit.SkipOrFail(t, "no tzdata: %v", err)
	}
	utc := &config.Limit{Location: time.UTC}
	now := time.Date(2025, 3, 10, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		at   time.Time
		lim  *config.Limit
		want string
	}{
		{time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC), utc, "at 00:00 UTC (in 9h00m)"},
		{now.Add(42 * time.Minute), utc, "at 15:42 UTC (in 42m)"},
		{now.Add(20 * time.Second), utc, "at 15:00 UTC (in less than a minute)"},
		{time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), utc, "on Apr 1 at 00:00 UTC (in 21d9h)"},
		{time.Date(2025, 4, 1, 0, 0, 0, 0, berlin), &config.Limit{Location: berlin}, "on Apr 1 at 00:00 CEST (in 21d7h)"},
		{time.Date(2025, 3, 11, 0, 0, 0, 0, berlin), &config.Limit{Location: berlin}, "at 00:00 CET (in 8h00m)"},
	}
	for _, tc := range cases {
		if got := resetPhrase(tc.at, tc.lim, now); got != tc.want {
			t.Errorf("resetPhrase(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func TestUSD(t *testing.T) {
	for in, want := range map[float64]string{0: "$0", 0.0025: "$0.0025", 0.5: "$0.50", 0.123456: "$0.1235", 20: "$20.00", 512.3: "$512.30", 1e-12: "$0", 0.000012: "$0.000012", 0.0000001: "$0.00"} {
		if got := render.USD(in); got != want {
			t.Errorf("usd(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestBudgetCheckShares(t *testing.T) {
	cases := []struct {
		used, limit     float64
		exceeded, warns bool
		percent         int
	}{
		{0.001 + 0.001, 0.0025, false, true, 80}, // float sums at exactly 80 %
		{0.0019, 0.0025, false, false, 76},
		{0.0025, 0.0025, true, false, 100},
		{59, 60, false, true, 98},
		{60, 60, true, false, 100},
	}
	for _, tc := range cases {
		b := budgetCheck{used: tc.used, limit: tc.limit}
		if b.exceeded() != tc.exceeded || b.warns() != tc.warns || b.percent() != tc.percent {
			t.Errorf("%v of %v: exceeded %v warns %v percent %d, want %v %v %d", tc.used, tc.limit, b.exceeded(), b.warns(), b.percent(), tc.exceeded, tc.warns, tc.percent)
		}
	}
}
