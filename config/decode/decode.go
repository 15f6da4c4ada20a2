// Package decode is the strict YAML walker under package config: it
// decodes a yaml.Node tree against handlers the schema gives per key,
// expands ${VAR} references in scalars, and collects every problem with
// its line instead of stopping at the first. Schema packages (config and
// its sections, such as config/profile) build on it; it knows no key of
// the bridge's config.
//
// Messages never carry a value taken from the environment: Show quotes
// the text as written instead.
package decode

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// nodeBudget bounds the YAML nodes one decode visits, so that aliases
// reused at many places cannot make loading arbitrarily slow.
const nodeBudget = 1 << 18

// Decoder walks a yaml.Node tree against a schema that its callers spell
// out as Field handlers. It records a Problem for everything wrong instead
// of stopping at the first error, and remembers where each value came
// from (its line, whether it was set, whether it came from ${VAR}) so that
// the checks after decoding report line numbers and never echo a value
// taken from the environment. A Decoder is used by one goroutine, for one
// document.
type Decoder struct {
	lookupEnv func(string) (string, bool)
	problems  []Problem
	lines     map[string]int    // path → line of the value (or of its key, for mappings and lists)
	raw       map[string]string // path → scalar as written, when it contained ${...}
	set       map[string]bool   // path → a non-null value was given
	bad       map[string]bool   // path → a problem was already reported there
	budget    int
	exhausted bool
}

// New returns a Decoder that expands ${VAR} with lookupEnv (never nil).
func New(lookupEnv func(string) (string, bool)) *Decoder {
	return &Decoder{
		lookupEnv: lookupEnv,
		lines:     map[string]int{},
		raw:       map[string]string{},
		set:       map[string]bool{},
		bad:       map[string]bool{},
		budget:    nodeBudget,
	}
}

// Problems returns the problems reported so far, in discovery order.
func (d *Decoder) Problems() []Problem { return d.problems }

// SetLine records line as where the value at path was written (for
// mapping keys the caller decodes itself).
func (d *Decoder) SetLine(path string, line int) { d.lines[path] = line }

// HasLine reports whether a line is recorded for path itself: its key was
// written in the file.
func (d *Decoder) HasLine(path string) bool {
	_, ok := d.lines[path]
	return ok
}

// IsSet reports whether path was given a non-null value.
func (d *Decoder) IsSet(path string) bool { return d.set[path] }

// IsBad reports whether a problem was already reported at path.
func (d *Decoder) IsBad(path string) bool { return d.bad[path] }

// Raw returns the scalar at path as written, when it contained ${...}
// (its decoded value may hold a secret from the environment).
func (d *Decoder) Raw(path string) (string, bool) {
	r, ok := d.raw[path]
	return r, ok
}

// BadUnder reports whether a problem was already reported below path.
func (d *Decoder) BadUnder(path string) bool {
	for p := range d.bad {
		if strings.HasPrefix(p, path+".") {
			return true
		}
	}
	return false
}

// Addf records a problem at path.
func (d *Decoder) Addf(line int, path, format string, args ...any) {
	d.problems = append(d.problems, Problem{Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
	d.bad[path] = true
}

// LineOf returns the line recorded for path or for its nearest recorded
// ancestor; 1 if none is known.
func (d *Decoder) LineOf(path string) int {
	for {
		if l, ok := d.lines[path]; ok {
			return l
		}
		if path == "" {
			return 1
		}
		path = ParentPath(path)
	}
}

// Show returns v quoted for a message, or the text as written when the
// value came from ${VAR} expansion, so that messages never carry values
// taken from the environment.
func (d *Decoder) Show(path, v string) string {
	if r, ok := d.raw[path]; ok {
		return strconv.Quote(r)
	}
	return strconv.Quote(v)
}

// Child and Index build problem paths: "agents.coder", "bots[0]".
func Child(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func Index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// ParentPath strips the last ".key" or "[i]" from path.
func ParentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// Resolve follows aliases and spends budget. It returns nil when the
// budget is exhausted (after reporting it once).
func (d *Decoder) Resolve(n *yaml.Node) *yaml.Node {
	if d.budget--; d.budget < 0 {
		if !d.exhausted {
			d.exhausted = true
			d.Addf(n.Line, "", "document too complex (too many nodes or aliases)")
		}
		return nil
	}
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// KindName describes a node for "want X, got Y" messages without
// revealing its content.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if IsNull(n) {
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
func (d *Decoder) collectionLine(n *yaml.Node, path string) int {
	if l, ok := d.lines[path]; ok {
		return l
	}
	return n.Line
}

// Pairs calls fn for each key/value of mapping n (null counts as empty),
// reporting a wrong kind, non-scalar keys, duplicate keys and merge keys.
func (d *Decoder) Pairs(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	line := d.collectionLine(n, path)
	if n = d.Resolve(n); n == nil || IsNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.Addf(line, path, "want a mapping, got %s", KindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.Addf(k.Line, path, "mapping keys must be plain strings, got %s", KindName(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.Addf(k.Line, Child(path, k.Value), `merge keys ("<<") are not supported`)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.Addf(k.Line, Child(path, k.Value), "duplicate key (first defined at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

// Field decodes the value v found at path.
type Field func(v *yaml.Node, path string)

// Fields decodes mapping n with one handler per known key; any other key
// is reported as unknown.
func (d *Decoder) Fields(n *yaml.Node, path string, known map[string]Field) {
	d.Pairs(n, path, func(key string, k, v *yaml.Node) {
		p := Child(path, key)
		f, ok := known[key]
		if !ok {
			if near := NearestKey(key, known); near != "" {
				d.Addf(k.Line, p, "unknown key (valid keys: %s): did you mean %q?", keyList(known), near)
			} else {
				d.Addf(k.Line, p, "unknown key (valid keys: %s)", keyList(known))
			}
			return
		}
		d.lines[p] = k.Line
		f(v, p)
	})
}

func keyList(known map[string]Field) string {
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// List calls each for every item of sequence v (null = empty list).
func (d *Decoder) List(v *yaml.Node, path, want string, each func(item *yaml.Node, path string)) {
	line := d.collectionLine(v, path)
	if v = d.Resolve(v); v == nil || IsNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		d.Addf(line, path, "want a list of %s, got %s", want, KindName(v))
		return
	}
	for i, item := range v.Content {
		p := Index(path, i)
		d.lines[p] = item.Line
		each(item, p)
	}
}

// MappingItem checks that a list item is a mapping (null is reported too,
// as a missing entry) and reports whether it may be decoded.
func (d *Decoder) MappingItem(item *yaml.Node, path string) bool {
	line := item.Line
	n := d.Resolve(item)
	if n == nil {
		return false
	}
	if n.Kind != yaml.MappingNode {
		d.Addf(line, path, "want a mapping, got %s", KindName(n))
		return false
	}
	return true
}
