package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Load reads and parses the config file at path; see Parse. lookupEnv
// resolves ${VAR} references; nil means os.LookupEnv. Relative paths in
// the file are resolved against the directory containing path.
//
// The returned error is a *ValidationError when the file is invalid, or
// a wrapped I/O error when it cannot be read.
func Load(path string, lookupEnv func(string) (string, bool), platforms []Platform) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data, path, lookupEnv, platforms)
	if err != nil {
		return nil, err
	}
	if c.Path, err = filepath.Abs(path); err != nil {
		return nil, fmt.Errorf("config %s: resolve path: %w", path, err)
	}
	return c, nil
}

// Parse decodes a config document. name is the file's path: it prefixes
// problem messages, and relative paths in the config (data_dir, workdir,
// home, ./command) are resolved against filepath.Dir(name), made
// absolute.
//
// Decoding is strict and complete: unknown keys, wrong types, bad
// durations, unset ${VAR} references and every validation failure are
// collected, and if there is any, Parse returns a nil Config and a
// *ValidationError listing them all with their line numbers.
//
// ${VAR} references are expanded in every scalar value (not in keys)
// before the value is interpreted, so "max_live: ${MAX_LIVE:-8}" works:
// ${VAR} must be set, ${VAR:-default} falls back when VAR is unset or
// empty, and $$ stands for a literal $. A $ followed by anything else is
// kept as is. lookupEnv nil means os.LookupEnv.
//
// platforms are the chat platforms bots may use (bots[].platform), in the
// order messages name them; each reads its bots' settings mappings (see
// Platform).
func Parse(data []byte, name string, lookupEnv func(string) (string, bool), platforms []Platform) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	baseDir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return nil, fmt.Errorf("config %s: resolve directory: %w", name, err)
	}
	d := newDecoder(lookupEnv, platforms)
	if root := d.document(data); root != nil {
		c := d.config(root)
		d.finish(c, baseDir)
		if len(d.Problems()) == 0 {
			return c, nil
		}
	}
	problems := d.Problems()
	sortProblems(problems)
	return nil, &ValidationError{File: name, Problems: problems}
}

// document parses data as exactly one YAML document whose top level is a
// mapping. It returns nil after recording a problem when it is not. An
// empty document yields an empty mapping (which then lacks bots).
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		d.yamlError(err, data)
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		d.yamlError(err, data)
		return nil
	default:
		d.Addf(extra.Line, "", "only one YAML document is allowed")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Line: 1}
	}
	root := doc.Content[0]
	if n := d.Resolve(root); n != nil && !decode.IsNull(n) && n.Kind != yaml.MappingNode {
		d.Addf(root.Line, "", "the top level must be a mapping (data_dir, log, http, agents, bots), got %s", decode.KindName(n))
		return nil
	}
	return root
}

// yamlLineRE matches the line number in go-yaml syntax errors.
var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// yamlError records a YAML syntax error of data with its line. go-yaml
// puts an indentation error ("did not find expected key", a tab) at the
// start of the mapping around it, often far above: the first line indented
// unlike any level open above it is named instead, when it comes before.
func (d *decoder) yamlError(err error, data []byte) {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	if strings.Contains(msg, "did not find expected key") || strings.Contains(msg, "tab character") {
		if bad := misindented(data); bad > line {
			line = bad
			if !strings.Contains(msg, "tab character") {
				msg += " (indented unlike the lines above it)"
			}
		}
	}
	d.Addf(line, "", "invalid YAML: %s", msg)
}

// misindented returns the number of the first line of data indented with
// a tab, or less than the line above it but not as much as an enclosing
// line (0: none). Blank and comment lines, and block scalars (after | or
// >), are skipped; "- " counts as indentation of the item's content only
// for the lines that follow it.
func misindented(data []byte) int {
	levels := []int{0}
	scalar := -1 // inside a block scalar: the indentation of its key
	for i, l := range strings.Split(string(data), "\n") {
		body := strings.TrimLeft(l, " ")
		n := len(l) - len(body)
		if strings.TrimSpace(body) == "" || strings.HasPrefix(body, "#") {
			continue
		}
		if scalar >= 0 {
			if n > scalar {
				continue
			}
			scalar = -1
		}
		if strings.HasPrefix(body, "\t") {
			return i + 1
		}
		top := levels[len(levels)-1]
		switch {
		case n > top:
			levels = append(levels, n)
		case n < top:
			for len(levels) > 1 && levels[len(levels)-1] > n {
				levels = levels[:len(levels)-1]
			}
			if levels[len(levels)-1] != n {
				return i + 1
			}
		}
		for strings.HasPrefix(body, "- ") { // an item: its content is a level too
			body = strings.TrimLeft(body[2:], " ")
			levels = append(levels, len(l)-len(body))
		}
		if t := strings.TrimSpace(body); strings.HasSuffix(t, "|") || strings.HasSuffix(t, ">") ||
			strings.HasSuffix(t, "|-") || strings.HasSuffix(t, ">-") {
			scalar = len(l) - len(body)
		}
	}
	return 0
}
