package schedules

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser reads standard five-field cron expressions (minute, hour, day
// of month, month, day of week) and the @hourly, @daily, @weekly, @monthly,
// @yearly and @every DURATION descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Cron is a parsed cron expression in a time zone. The zero value never
// fires.
type Cron struct {
	Expr  string         // as written, e.g. "0 9 * * 1-5"
	Zone  string         // IANA time zone name as written; "" = the bridge's local time
	Loc   *time.Location // Zone loaded; time.Local for ""
	sched cron.Schedule
}

// ParseCron parses expr (five fields or a descriptor) in the time zone tz
// (an IANA name such as "Europe/Berlin"; "" = the bridge's local time). A
// CRON_TZ= or TZ= prefix is refused: the zone has its own field.
func ParseCron(expr, tz string) (Cron, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return Cron{}, errors.New("empty cron expression")
	}
	if strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=") {
		return Cron{}, errors.New("give the time zone separately (tz), not in the expression")
	}
	loc := time.Local
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil || tz == "Local" {
			return Cron{}, fmt.Errorf("unknown time zone %q (want an IANA name such as Europe/Berlin or UTC)", tz)
		}
		loc = l
	}
	s, err := cronParser.Parse(expr)
	if err != nil {
		return Cron{}, fmt.Errorf("bad cron expression %q: %v (want five fields: minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1-5\", or @daily, @hourly, @every 2h)", expr, err)
	}
	return Cron{Expr: expr, Zone: tz, Loc: loc, sched: s}, nil
}

// Next returns the first time after t at which the schedule fires, or the
// zero time if it never does.
func (c Cron) Next(t time.Time) time.Time {
	if c.sched == nil {
		return time.Time{}
	}
	return c.sched.Next(t.In(c.Loc))
}

// MinGap returns the shortest time between two of the next n firings
// after t (n ≥ 2), e.g. to refuse a schedule that would run every minute.
// It returns 0 for a schedule that fires fewer than two times.
func (c Cron) MinGap(t time.Time, n int) time.Duration {
	prev := c.Next(t)
	if prev.IsZero() {
		return 0
	}
	var gap time.Duration
	for i := 1; i < n; i++ {
		next := c.Next(prev)
		if next.IsZero() {
			break
		}
		if d := next.Sub(prev); gap == 0 || d < gap {
			gap = d
		}
		prev = next
	}
	return gap
}

// String renders the expression with its zone, e.g. "0 9 * * 1-5 (Europe/Berlin)".
func (c Cron) String() string {
	zone := c.Zone
	if zone == "" {
		zone = "local time"
	}
	return c.Expr + " (" + zone + ")"
}
