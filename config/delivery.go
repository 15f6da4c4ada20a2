package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Delivery configures how final replies reach a platform (yaml delivery).
type Delivery struct {
	// GiveUpAfter is how long a reply waits out a platform's outage (yaml
	// give_up_after: "24h", "2d", "90m"; default 24h, at least
	// MinGiveUpAfter): transient errors keep it pending, retried at least
	// once a minute, until it is this old; then it is reported as failed.
	GiveUpAfter time.Duration
}

// DefaultGiveUpAfter is delivery.give_up_after when the key is absent.
const DefaultGiveUpAfter = 24 * time.Hour

// MinGiveUpAfter is the shortest delivery.give_up_after accepted: a shorter
// window would give up on replies during ordinary blips of a platform.
const MinGiveUpAfter = time.Minute

// deliverySection decodes the top-level delivery mapping.
func (d *decoder) deliverySection(dst *Delivery) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"give_up_after": d.giveUpAfter(&dst.GiveUpAfter),
		})
	}
}

// giveUpAfter decodes delivery.give_up_after: days ("2d"), a Go duration
// ("36h") or both ("1d12h"), at least MinGiveUpAfter.
func (d *decoder) giveUpAfter(dst *time.Duration) decode.Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "a duration")
		if !ok {
			return
		}
		r, err := parseRetention(s) // the same syntax as retention
		switch {
		case err != nil:
			d.Addf(d.LineOf(path), path, `bad duration %s (want a duration such as "24h" or "90m", or days such as "2d")`, d.Show(path, s))
		case r < MinGiveUpAfter:
			d.Addf(d.LineOf(path), path, "%s is shorter than %s (replies would be given up during ordinary platform hiccups)",
				d.Show(path, s), decode.DurOr(MinGiveUpAfter, "0"))
		default:
			*dst = r
		}
	}
}

// finishDelivery applies the default when the key is absent (or null).
func (d *decoder) finishDelivery(c *Config) {
	if !d.IsSet("delivery.give_up_after") && !d.IsBad("delivery.give_up_after") {
		c.Delivery.GiveUpAfter = DefaultGiveUpAfter
	}
}

// deliveryString formats the delivery settings for the summary.
func deliveryString(dl Delivery) string {
	return "give_up_after=" + decode.DurOr(dl.GiveUpAfter, "0")
}
