package decode

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file decodes the scalar kinds of the config: strings, booleans,
// integers, numbers, durations, byte sizes and lists of strings. Each
// returns a Field that stores into dst and reports a wrong value at its
// line; null (an absent value) leaves dst unchanged.

// Scalar returns the env-expanded text of scalar v. ok is false for null
// (absent) values and after a reported problem.
func (d *Decoder) Scalar(v *yaml.Node, path, want string) (s string, ok bool) {
	line := v.Line
	if v = d.Resolve(v); v == nil {
		return "", false
	}
	d.lines[path] = line
	if IsNull(v) {
		return "", false
	}
	if v.Kind != yaml.ScalarNode {
		d.Addf(line, path, "want %s, got %s", want, KindName(v))
		return "", false
	}
	s, changed, errs := expandEnv(v.Value, d.lookupEnv)
	if changed {
		d.raw[path] = v.Value
	}
	for _, e := range errs {
		d.Addf(line, path, "%s", e)
	}
	if len(errs) > 0 {
		return "", false
	}
	d.set[path] = true
	return s, true
}

// Str decodes a string value into dst; null leaves dst unchanged.
func (d *Decoder) Str(dst *string) Field {
	return func(v *yaml.Node, path string) {
		if s, ok := d.Scalar(v, path, "a string"); ok {
			*dst = s
		}
	}
}

// Bool decodes true or false (in any letter case) into dst.
func (d *Decoder) Bool(dst *bool) Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "true or false")
		if !ok {
			return
		}
		switch strings.ToLower(s) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			d.Addf(d.lines[path], path, "want true or false, got %s", d.Show(path, s))
		}
	}
}

// Int decodes a decimal integer into dst.
func (d *Decoder) Int(dst *int) Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "an integer")
		if !ok {
			return
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			d.Addf(d.lines[path], path, "want an integer, got %s", d.Show(path, s))
			return
		}
		*dst = int(n)
	}
}

// Duration decodes a time.ParseDuration string ("30m", "10s", "1h30m",
// "0") into dst. Negative durations are rejected.
func (d *Decoder) Duration(dst *time.Duration) Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "a duration")
		if !ok {
			return
		}
		t, err := time.ParseDuration(s)
		switch {
		case err != nil:
			d.Addf(d.lines[path], path, `bad duration %s (want a number with a unit, e.g. "90s", "30m", "1h"; or "0")`, d.Show(path, s))
		case t < 0:
			d.Addf(d.lines[path], path, "duration must not be negative, got %s", d.Show(path, s))
		default:
			*dst = t
		}
	}
}

// StrList decodes a list of strings into dst; null leaves it nil.
func (d *Decoder) StrList(dst *[]string) Field {
	return func(v *yaml.Node, path string) {
		line := d.collectionLine(v, path)
		if v = d.Resolve(v); v == nil || IsNull(v) {
			return
		}
		if v.Kind != yaml.SequenceNode {
			d.Addf(line, path, "want a list of strings, got %s", KindName(v))
			return
		}
		out := make([]string, 0, len(v.Content))
		for i, item := range v.Content {
			p := Index(path, i)
			s, ok := d.Scalar(item, p, "a string")
			if !ok {
				if !d.IsBad(p) {
					d.Addf(d.lines[p], p, "want a string, got null")
				}
				continue
			}
			if s == "" {
				d.Addf(d.lines[p], p, "must not be empty")
				continue
			}
			out = append(out, s)
		}
		*dst = out
	}
}

// Number decodes a finite decimal number ("20", "12.50") into dst.
func (d *Decoder) Number(dst *float64) Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "a number")
		if !ok {
			return
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.Addf(d.lines[path], path, "want a number (e.g. 20 or 12.5), got %s", d.Show(path, s))
			return
		}
		*dst = f
	}
}

// ByteSize decodes a size such as "4GiB", "512MiB", "2G", "1024" (bytes)
// or 0 into dst (see ParseByteSize).
func (d *Decoder) ByteSize(dst *int64) Field {
	return func(v *yaml.Node, path string) {
		s, ok := d.Scalar(v, path, "a size")
		if !ok {
			return
		}
		n, err := ParseByteSize(s)
		if err != nil {
			d.Addf(d.lines[path], path, "%v", err)
			return
		}
		*dst = n
	}
}

// byteUnits are the suffixes ParseByteSize accepts, longest first.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseByteSize parses a size with an optional unit: "4GiB", "512MiB",
// "1.5G" (K, M, G, T are binary like KiB…; KB, MB, GB, TB decimal), "0",
// or a plain number of bytes.
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf(`bad size %q (want e.g. "4GiB", "512MiB", or 0 for no limit)`, s)
	}
	return int64(f * float64(mult)), nil
}
