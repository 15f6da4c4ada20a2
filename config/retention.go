package config

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// DefaultRetention is the retention period when the key is absent: 90 days.
const DefaultRetention = 90 * day

// MinRetention is the shortest retention period accepted (other than 0): a
// day. It guards against a unit typo such as "90m" deleting the audit log.
const MinRetention = day

const day = 24 * time.Hour

// daysRE splits "90d" or "1d12h" into the days and the rest.
var daysRE = regexp.MustCompile(`^([0-9]+)d(.*)$`)

// parseRetention reads a retention period: a Go duration ("36h", "2h30m"),
// a number of days ("90d"), days followed by a Go duration ("1d12h"), or
// "0" (keep forever). Negative periods are rejected.
func parseRetention(s string) (time.Duration, error) {
	var days time.Duration
	rest := s
	if m := daysRE.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 32)
		if err != nil || time.Duration(n) > time.Duration(1<<63-1)/day {
			return 0, fmt.Errorf("too many days")
		}
		days, rest = time.Duration(n)*day, m[2]
		if rest == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative")
	}
	if d > time.Duration(1<<63-1)-days {
		return 0, fmt.Errorf("too long")
	}
	return days + d, nil
}

// retention decodes the top-level retention key into dst: a period of at
// least MinRetention, or 0.
func (d *decoder) retention(dst *time.Duration) decode.Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "a duration")
		if !ok {
			return
		}
		r, err := parseRetention(s)
		switch {
		case err != nil:
			d.Addf(d.LineOf(path), path, `bad retention %s (want days such as "90d", a duration such as "36h", or "0" to keep everything)`, d.Show(path, s))
		case r > 0 && r < MinRetention:
			d.Addf(d.LineOf(path), path, "%s is shorter than a day (want at least 1d, i.e. 24h, or 0 to keep everything)", d.Show(path, s))
		default:
			*dst = r
		}
	}
}

// finishRetention applies the default when the key is absent (or null).
func (d *decoder) finishRetention(c *Config) {
	if !d.IsSet("retention") && !d.IsBad("retention") {
		c.Retention = DefaultRetention
	}
}

// retentionString formats a retention period for the summary: whole days as
// "90d", others as a duration, 0 as "keep forever".
func retentionString(r time.Duration) string {
	switch {
	case r == 0:
		return "off (keep everything)"
	case r%day == 0:
		return fmt.Sprintf("%dd", r/day)
	default:
		return decode.DurOr(r, "0")
	}
}
