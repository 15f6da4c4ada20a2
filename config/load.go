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
		d.yamlError(err)
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		d.yamlError(err)
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

// yamlError records a YAML syntax error with its line.
func (d *decoder) yamlError(err error) {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	d.Addf(line, "", "invalid YAML: %s", msg)
}
