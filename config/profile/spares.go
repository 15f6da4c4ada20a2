package profile

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Defaults of the automatic warm spare count (warm_spares: auto).
const (
	DefaultMaxWarmSpares = 4
	DefaultSpareMemory   = 256 << 20
)

// WarmSparesAuto is the value of warm_spares that makes the count follow
// the arrival rate of new conversations.
const WarmSparesAuto = "auto"

// KeepsSpares says whether the profile keeps warm spares: a count above 0
// or warm_spares: auto.
func (a *Agent) KeepsSpares() bool { return a.WarmSparesAuto || a.WarmSpares > 0 }

// WarmSparesText is warm_spares as written: the number, or "auto".
func (a *Agent) WarmSparesText() string {
	if a.WarmSparesAuto {
		return WarmSparesAuto
	}
	return strconv.Itoa(a.WarmSpares)
}

// warmSpares decodes warm_spares: a number, or "auto" (any letter case),
// which sets a.WarmSparesAuto and leaves the number 0.
func warmSpares(d *decode.Decoder, a *Agent) decode.Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "an integer")
		if !ok {
			return
		}
		if strings.EqualFold(strings.TrimSpace(s), WarmSparesAuto) {
			a.WarmSparesAuto, a.WarmSpares = true, 0
			return
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			// The message of a bad count predates "auto": kept as it was.
			d.Addf(d.LineOf(path), path, "want an integer, got %s", d.Show(path, s))
			return
		}
		a.WarmSpares = int(n)
	}
}

// checkSpares validates warm_spares, max_warm_spares and spare_memory of
// agent a at path p.
func checkSpares(d *decode.Decoder, a *Agent, p string) {
	wp := decode.Child(p, "warm_spares")
	switch {
	case a.WarmSpares < 0:
		d.Addf(d.LineOf(wp), wp, "must not be negative (0 = no warm spares)")
	case a.MaxLive >= 1 && a.WarmSpares > a.MaxLive:
		d.Addf(d.LineOf(wp), wp, "must be at most max_live (%d): spares count against it", a.MaxLive)
	}
	for _, k := range []string{"max_warm_spares", "spare_memory"} {
		if kp := decode.Child(p, k); d.IsSet(kp) && !a.WarmSparesAuto {
			d.Addf(d.LineOf(kp), kp, "only applies with warm_spares: auto")
		}
	}
	if mp := decode.Child(p, "max_warm_spares"); a.MaxWarmSpares < 1 {
		d.Addf(d.LineOf(mp), mp, "must be at least 1")
	} else if d.IsSet(mp) && a.MaxLive >= 1 && a.MaxWarmSpares > a.MaxLive {
		d.Addf(d.LineOf(mp), mp, "must be at most max_live (%d): spares count against it", a.MaxLive)
	}
}
