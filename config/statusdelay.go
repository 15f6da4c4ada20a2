package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// DefaultStatusDelay is status_delay when the key is absent: turns that
// answer within a second never show a working indicator.
const DefaultStatusDelay = time.Second

// MaxStatusDelay is the longest status_delay accepted: an indicator that
// comes later than this no longer tells anyone that the bot is working.
const MaxStatusDelay = 10 * time.Minute

// statusDelay decodes the top-level status_delay key: a duration from 0
// (show the indicator at once) to MaxStatusDelay.
func (d *decoder) statusDelay(dst *time.Duration) decode.Field {
	dur := d.Duration(dst)
	return func(v *yaml.Node, path string) {
		dur(v, path)
		if !d.IsBad(path) && *dst > MaxStatusDelay {
			d.Addf(d.LineOf(path), path, "status_delay %s is longer than %s (the indicator would come too late to help)", *dst, MaxStatusDelay)
		}
	}
}

// finishStatusDelay applies the default when the key is absent (or null).
func (d *decoder) finishStatusDelay(c *Config) {
	if !d.IsSet("status_delay") && !d.IsBad("status_delay") {
		c.StatusDelay = DefaultStatusDelay
	}
}
