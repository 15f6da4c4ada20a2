package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// nodeBudget bounds the YAML nodes one decode visits, so that aliases
// reused at many places cannot make loading arbitrarily slow.
const nodeBudget = 1 << 18

// decoder walks a yaml.Node tree against the config schema. It records a
// Problem for everything wrong instead of stopping at the first error,
// and remembers where each value came from so that validation can report
// line numbers too.
type decoder struct {
	lookupEnv func(string) (string, bool)
	platforms []Platform            // the chat platforms bots may use (see Platform)
	sections  map[string]*yaml.Node // bot settings mappings by path ("bots[0].slack"), read by finishBot
	problems  []Problem
	lines     map[string]int    // path → line of the value (or of its key, for mappings and lists)
	raw       map[string]string // path → scalar as written, when it contained ${...}
	set       map[string]bool   // path → a non-null value was given
	bad       map[string]bool   // path → a problem was already reported there
	budget    int
	exhausted bool
}

func newDecoder(lookupEnv func(string) (string, bool), platforms []Platform) *decoder {
	return &decoder{
		lookupEnv: lookupEnv,
		platforms: platforms,
		sections:  map[string]*yaml.Node{},
		lines:     map[string]int{},
		raw:       map[string]string{},
		set:       map[string]bool{},
		bad:       map[string]bool{},
		budget:    nodeBudget,
	}
}

// addf records a problem at path.
func (d *decoder) addf(line int, path, format string, args ...any) {
	d.problems = append(d.problems, Problem{Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
	d.bad[path] = true
}

// lineOf returns the line recorded for path or for its nearest recorded
// ancestor; 1 if none is known.
func (d *decoder) lineOf(path string) int {
	for {
		if l, ok := d.lines[path]; ok {
			return l
		}
		if path == "" {
			return 1
		}
		path = parentPath(path)
	}
}

// show returns v quoted for a message, or the text as written when the
// value came from ${VAR} expansion, so that messages never carry values
// taken from the environment.
func (d *decoder) show(path, v string) string {
	if r, ok := d.raw[path]; ok {
		return strconv.Quote(r)
	}
	return strconv.Quote(v)
}

// child and index build problem paths: "agents.coder", "bots[0]".
func child(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// parentPath strips the last ".key" or "[i]" from path.
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// resolve follows aliases and spends budget. It returns nil when the
// budget is exhausted (after reporting it once).
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	if d.budget--; d.budget < 0 {
		if !d.exhausted {
			d.exhausted = true
			d.addf(n.Line, "", "document too complex (too many nodes or aliases)")
		}
		return nil
	}
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindName describes a node for "want X, got Y" messages without
// revealing its content.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return "a scalar"
	case yaml.AliasNode:
		return "an unresolvable alias"
	default:
		return "an unexpected YAML node"
	}
}

// collectionLine is the line to report for a mapping or list value: the
// line of its key when known (a block collection's own node starts on the
// line after the key), else the node's.
func (d *decoder) collectionLine(n *yaml.Node, path string) int {
	if l, ok := d.lines[path]; ok {
		return l
	}
	return n.Line
}

// pairs calls fn for each key/value of mapping n (null counts as empty),
// reporting a wrong kind, non-scalar keys, duplicate keys and merge keys.
func (d *decoder) pairs(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	line := d.collectionLine(n, path)
	if n = d.resolve(n); n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.addf(line, path, "want a mapping, got %s", kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.addf(k.Line, path, "mapping keys must be plain strings, got %s", kindName(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.addf(k.Line, child(path, k.Value), `merge keys ("<<") are not supported`)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.addf(k.Line, child(path, k.Value), "duplicate key (first defined at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

// field decodes the value v found at path.
type field func(v *yaml.Node, path string)

// fields decodes mapping n with one handler per known key; any other key
// is reported as unknown.
func (d *decoder) fields(n *yaml.Node, path string, known map[string]field) {
	d.pairs(n, path, func(key string, k, v *yaml.Node) {
		p := child(path, key)
		f, ok := known[key]
		if !ok {
			d.addf(k.Line, p, "unknown key (valid keys: %s)", keyList(known))
			return
		}
		d.lines[p] = k.Line
		f(v, p)
	})
}

func keyList(known map[string]field) string {
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// scalar returns the env-expanded text of scalar v. ok is false for null
// (absent) values and after a reported problem.
func (d *decoder) scalar(v *yaml.Node, path, want string) (s string, ok bool) {
	line := v.Line
	if v = d.resolve(v); v == nil {
		return "", false
	}
	d.lines[path] = line
	if isNull(v) {
		return "", false
	}
	if v.Kind != yaml.ScalarNode {
		d.addf(line, path, "want %s, got %s", want, kindName(v))
		return "", false
	}
	s, changed, errs := expandEnv(v.Value, d.lookupEnv)
	if changed {
		d.raw[path] = v.Value
	}
	for _, e := range errs {
		d.addf(line, path, "%s", e)
	}
	if len(errs) > 0 {
		return "", false
	}
	d.set[path] = true
	return s, true
}

// str decodes a string value into dst; null leaves dst unchanged.
func (d *decoder) str(dst *string) field {
	return func(v *yaml.Node, path string) {
		if s, ok := d.scalar(v, path, "a string"); ok {
			*dst = s
		}
	}
}

// boolean decodes true or false (in any letter case) into dst.
func (d *decoder) boolean(dst *bool) field {
	return func(v *yaml.Node, path string) {
		s, ok := d.scalar(v, path, "true or false")
		if !ok {
			return
		}
		switch strings.ToLower(s) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			d.addf(d.lines[path], path, "want true or false, got %s", d.show(path, s))
		}
	}
}

// integer decodes a decimal integer into dst.
func (d *decoder) integer(dst *int) field {
	return func(v *yaml.Node, path string) {
		s, ok := d.scalar(v, path, "an integer")
		if !ok {
			return
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			d.addf(d.lines[path], path, "want an integer, got %s", d.show(path, s))
			return
		}
		*dst = int(n)
	}
}

// duration decodes a time.ParseDuration string ("30m", "10s", "1h30m",
// "0") into dst. Negative durations are rejected.
func (d *decoder) duration(dst *time.Duration) field {
	return func(v *yaml.Node, path string) {
		s, ok := d.scalar(v, path, "a duration")
		if !ok {
			return
		}
		t, err := time.ParseDuration(s)
		switch {
		case err != nil:
			d.addf(d.lines[path], path, `bad duration %s (want a number with a unit, e.g. "90s", "30m", "1h"; or "0")`, d.show(path, s))
		case t < 0:
			d.addf(d.lines[path], path, "duration must not be negative, got %s", d.show(path, s))
		default:
			*dst = t
		}
	}
}

// strList decodes a list of strings into dst; null leaves it nil.
func (d *decoder) strList(dst *[]string) field {
	return func(v *yaml.Node, path string) {
		line := d.collectionLine(v, path)
		if v = d.resolve(v); v == nil || isNull(v) {
			return
		}
		if v.Kind != yaml.SequenceNode {
			d.addf(line, path, "want a list of strings, got %s", kindName(v))
			return
		}
		out := make([]string, 0, len(v.Content))
		for i, item := range v.Content {
			p := index(path, i)
			s, ok := d.scalar(item, p, "a string")
			if !ok {
				if !d.bad[p] {
					d.addf(d.lines[p], p, "want a string, got null")
				}
				continue
			}
			if s == "" {
				d.addf(d.lines[p], p, "must not be empty")
				continue
			}
			out = append(out, s)
		}
		*dst = out
	}
}

// list calls each for every item of sequence v (null = empty list).
func (d *decoder) list(v *yaml.Node, path, want string, each func(item *yaml.Node, path string)) {
	line := d.collectionLine(v, path)
	if v = d.resolve(v); v == nil || isNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		d.addf(line, path, "want a list of %s, got %s", want, kindName(v))
		return
	}
	for i, item := range v.Content {
		p := index(path, i)
		d.lines[p] = item.Line
		each(item, p)
	}
}

// mappingItem checks that a list item is a mapping (null is reported too,
// as a missing entry) and reports whether it may be decoded.
func (d *decoder) mappingItem(item *yaml.Node, path string) bool {
	line := item.Line
	n := d.resolve(item)
	if n == nil {
		return false
	}
	if n.Kind != yaml.MappingNode {
		d.addf(line, path, "want a mapping, got %s", kindName(n))
		return false
	}
	return true
}
