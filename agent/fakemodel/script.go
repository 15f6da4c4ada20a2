package fakemodel

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Action names a scripted behaviour selected by a directive.
type Action string

// The actions a prompt can select. ActionPong is the default.
const (
	ActionPong        Action = "pong"
	ActionBash        Action = "bash"
	ActionBgBash      Action = "bgbash"
	ActionWrite       Action = "write"
	ActionEdit        Action = "edit"
	ActionAsk         Action = "ask"
	ActionAskMulti    Action = "askmulti"
	ActionLong        Action = "long"
	ActionError       Action = "error"
	ActionEchoHistory Action = "echo-history"
	ActionTool        Action = "tool"
)

// DefaultSlowDelay is the pause between chunks of a [slow N] reply.
const DefaultSlowDelay = 100 * time.Millisecond

// Script is what a prompt asks the fake model to do, parsed from its
// directives by ParseScript.
type Script struct {
	Action Action
	Args   string // the directive's raw argument text (after the name)

	// Chunks is how many text deltas the reply is streamed in (0 = default);
	// Delay is the pause between them. Set by [slow N] and [slowms D].
	Chunks int
	Delay  time.Duration

	// Parsed arguments, depending on Action.
	Command   string   // bash, bgbash
	Path      string   // write, edit
	Content   string   // write
	OldString string   // edit
	NewString string   // edit
	Question  string   // ask, askmulti
	Options   []string // ask, askmulti
	Length    int      // long
	Status    int      // error
	Tool      ToolCall // tool
	// OnDone is the tool call the model makes when a background task of
	// this prompt ends ([ondone NAME JSON]); zero = just say it is done.
	OnDone     ToolCall
	Directives []string // every directive found, e.g. "[slow 3]", for debugging
}

// ToolCall is a scripted call of any tool by name, e.g. an MCP tool
// "mcp__bridge__send_message", with its JSON input.
type ToolCall struct {
	Name  string
	Input map[string]any
}

// directiveNames lists the recognised directive names. Longer names that
// share a prefix come first so "[askmulti" is not read as "[ask".
var directiveNames = []string{"slowms", "slow", "bgbash", "bash", "write", "edit", "askmulti", "ask", "long", "error", "echo-history", "tool", "ondone"}

// ParseScript finds the directives in a prompt and returns the script they
// select. A directive is "[name args]" anywhere in the text; its arguments
// run to the matching "]" (brackets nest, so "[bash [ -f x ] && echo y]"
// works). Text in brackets that does not start with a known name is plain
// text. The first action directive wins; [slow N] and [slowms D] modify any
// action's text. An error describes a malformed directive.
func ParseScript(text string) (Script, error) {
	s := Script{Action: ActionPong}
	actionSet := false
	for i := 0; i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		name, args, end, ok := directiveAt(text, i)
		if !ok {
			continue
		}
		s.Directives = append(s.Directives, text[i:end])
		i = end - 1
		switch name {
		case "slow":
			n, err := positiveInt(args)
			if err != nil {
				return s, fmt.Errorf("[slow %s]: %w", args, err)
			}
			s.Chunks = n
			if s.Delay == 0 {
				s.Delay = DefaultSlowDelay
			}
		case "slowms":
			n, err := positiveInt(args)
			if err != nil {
				return s, fmt.Errorf("[slowms %s]: %w", args, err)
			}
			s.Delay = time.Duration(n) * time.Millisecond
		case "ondone":
			tc, err := parseToolCall(args)
			if err != nil {
				return s, fmt.Errorf("[ondone %s]: %w", args, err)
			}
			s.OnDone = tc
		default:
			if actionSet {
				continue
			}
			actionSet = true
			if err := s.setAction(Action(name), args); err != nil {
				return s, fmt.Errorf("[%s %s]: %w", name, args, err)
			}
		}
	}
	return s, nil
}

// directiveAt reports whether a directive starts at text[i] ('['), and
// returns its name, trimmed arguments and the index just past its "]".
func directiveAt(text string, i int) (name, args string, end int, ok bool) {
	rest := text[i+1:]
	for _, n := range directiveNames {
		if !strings.HasPrefix(rest, n) {
			continue
		}
		after := rest[len(n):]
		if after == "" || (after[0] != ']' && after[0] != ' ' && after[0] != '\t' && after[0] != '\n') {
			continue
		}
		depth := 0
		for j := 0; j < len(after); j++ {
			switch after[j] {
			case '[':
				depth++
			case ']':
				if depth == 0 {
					return n, strings.TrimSpace(after[:j]), i + 1 + len(n) + j + 1, true
				}
				depth--
			}
		}
		return "", "", 0, false // unterminated: plain text
	}
	return "", "", 0, false
}

// setAction fills s for an action directive.
func (s *Script) setAction(a Action, args string) error {
	s.Action, s.Args = a, args
	switch a {
	case ActionBash, ActionBgBash:
		if args == "" {
			return fmt.Errorf("missing command")
		}
		s.Command = args
	case ActionWrite:
		f, err := splitArgs(args, 2)
		if err != nil {
			return err
		}
		s.Path, s.Content = f[0], f[1]
	case ActionEdit:
		f, err := splitArgs(args, 3)
		if err != nil {
			return err
		}
		s.Path, s.OldString, s.NewString = f[0], f[1], f[2]
	case ActionAsk, ActionAskMulti:
		parts := strings.Split(args, "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		if parts[0] == "" {
			return fmt.Errorf("missing question")
		}
		s.Question = parts[0]
		for _, p := range parts[1:] {
			if p != "" {
				s.Options = append(s.Options, p)
			}
		}
	case ActionLong:
		n, err := positiveInt(args)
		if err != nil {
			return err
		}
		s.Length = n
	case ActionError:
		n, err := strconv.Atoi(args)
		if err != nil || n < 400 || n > 599 {
			return fmt.Errorf("status must be an HTTP error code 400..599")
		}
		s.Status = n
	case ActionEchoHistory:
		// no arguments
	case ActionTool:
		tc, err := parseToolCall(args)
		if err != nil {
			return err
		}
		s.Tool = tc
	}
	return nil
}

// parseToolCall reads "NAME" or "NAME {json object}".
func parseToolCall(args string) (ToolCall, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	if name == "" {
		return ToolCall{}, fmt.Errorf("missing tool name")
	}
	tc := ToolCall{Name: name, Input: map[string]any{}}
	if rest = strings.TrimSpace(rest); rest != "" {
		if err := json.Unmarshal([]byte(rest), &tc.Input); err != nil {
			return ToolCall{}, fmt.Errorf("tool input must be a JSON object: %w", err)
		}
	}
	return tc, nil
}

// positiveInt parses a decimal integer > 0.
func positiveInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive integer, got %q", s)
	}
	return n, nil
}

// splitArgs splits args into exactly n fields separated by whitespace; the
// last field is the rest of the text. A field written as a Go double-quoted
// string ("a b\n") is unquoted, so fields may contain spaces and newlines.
func splitArgs(args string, n int) ([]string, error) {
	var out []string
	rest := strings.TrimSpace(args)
	for len(out) < n-1 {
		if rest == "" {
			return nil, fmt.Errorf("want %d arguments, got %d", n, len(out))
		}
		field, tail, err := nextField(rest)
		if err != nil {
			return nil, err
		}
		out = append(out, field)
		rest = strings.TrimSpace(tail)
	}
	if rest == "" {
		return nil, fmt.Errorf("want %d arguments, got %d", n, len(out))
	}
	if strings.HasPrefix(rest, `"`) {
		if field, tail, err := nextField(rest); err == nil && strings.TrimSpace(tail) == "" {
			rest = field
		}
	}
	return append(out, rest), nil
}

// nextField cuts one whitespace-separated or Go-quoted field off s.
func nextField(s string) (field, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", fmt.Errorf("bad quoted argument in %q: %w", s, err)
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return "", "", fmt.Errorf("bad quoted argument %s: %w", q, err)
		}
		return v, s[len(q):], nil
	}
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		return s[:i], s[i:], nil
	}
	return s, "", nil
}
