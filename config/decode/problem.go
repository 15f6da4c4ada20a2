package decode

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a config file.
type Problem struct {
	Line int    // 1-based line in the file; 0 if unknown
	Path string // where in the config, e.g. "bots[0].agent" or "agents.coder.idle_timeout"; "" for the document
	Msg  string // what is wrong; never contains a secret or an expanded ${VAR} value
}

// String formats the problem without the file name: "12: bots[0].agent: msg".
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "%d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}
