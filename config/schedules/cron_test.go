package schedules

import (
	"testing"
	"time"
)

func TestCronMinGap(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		expr string
		want time.Duration
	}{
		{"* * * * *", time.Minute},
		{"*/5 * * * *", 5 * time.Minute},
		{"0 9 * * 1-5", 24 * time.Hour},
		{"0,1 9 * * *", time.Minute},
		{"@every 90s", 90 * time.Second},
	} {
		c, err := ParseCron(tc.expr, "UTC")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.MinGap(start, 20); got != tc.want {
			t.Errorf("MinGap(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
	if (Cron{}).Next(start) != (time.Time{}) {
		t.Error("the zero Cron fires")
	}
}
