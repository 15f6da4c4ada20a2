package render

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// Preview sizes of a card, in runes / lines.
const (
	PreviewRunes = 1200
	PreviewLines = 12
	diffLines    = 8
)

// PermissionBody renders a readable preview of a tool permission request:
// a Bash command, a Write's file and content, an Edit's file and diff, a
// WebFetch URL, or else the input as JSON (an input that is only a
// "description" — an ACP agent's call it gave a title and no arguments for,
// agent/acp — as that title); then the request's description, unless
// already shown, and reason.
func PermissionBody(tool string, input json.RawMessage, description, reason, workdir string) string {
	in := InputMap(input)
	var b strings.Builder
	fmt.Fprintf(&b, "🔐 **%s**", tool)
	switch tool {
	case "Bash":
		b.WriteString(" wants to run:\n")
		b.WriteString(CodeBlock("sh", Clip(Str(in, "command"), PreviewLines, PreviewRunes)))
		if bg, _ := in["run_in_background"].(bool); bg {
			b.WriteString("\n_(in the background)_")
		}
	case "Write":
		content := Str(in, "content")
		fmt.Fprintf(&b, " wants to write %s (%d lines):\n", CodeSpan(RelPath(Str(in, "file_path"), workdir)), countLines(content))
		b.WriteString(CodeBlock("", Clip(content, PreviewLines, PreviewRunes)))
	case "Edit", "MultiEdit":
		fmt.Fprintf(&b, " wants to edit %s", CodeSpan(RelPath(Str(in, "file_path"), workdir)))
		if ra, _ := in["replace_all"].(bool); ra {
			b.WriteString(" (every occurrence)")
		}
		b.WriteString(":\n")
		b.WriteString(CodeBlock("diff", diffPreview(Str(in, "old_string"), Str(in, "new_string"))))
	case "Read", "NotebookEdit":
		p := Str(in, "file_path")
		if p == "" {
			p = Str(in, "notebook_path")
		}
		fmt.Fprintf(&b, " wants to access %s", CodeSpan(RelPath(p, workdir)))
	case "WebFetch":
		fmt.Fprintf(&b, " wants to fetch %s", Str(in, "url"))
		if p := Str(in, "prompt"); p != "" {
			b.WriteString("\n> " + textcut.OneLine(p, 300))
		}
	case "WebSearch":
		fmt.Fprintf(&b, " wants to search the web for %s", CodeSpan(textcut.OneLine(Str(in, "query"), 200)))
	default:
		if title := Str(in, "description"); len(in) == 1 && title != "" && !strings.HasPrefix(tool, "mcp__") {
			fmt.Fprintf(&b, " wants to run %s", CodeSpan(textcut.OneLine(title, 200)))
			if strings.TrimSpace(description) == strings.TrimSpace(title) {
				description = ""
			}
			break
		}
		b.WriteString(" wants to run with:\n")
		b.WriteString(CodeBlock("json", prettyJSON(input, PreviewRunes)))
	}
	if d := strings.TrimSpace(description); d != "" {
		b.WriteString("\n> " + textcut.OneLine(d, 300))
	}
	if r := strings.TrimSpace(reason); r != "" {
		b.WriteString("\n_" + textcut.OneLine(r, 300) + "_")
	}
	return b.String()
}

// diffPreview renders old → new as a small -/+ diff.
func diffPreview(old, new string) string {
	var b strings.Builder
	for _, l := range clipLines(old, diffLines) {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range clipLines(new, diffLines) {
		b.WriteString("+ " + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// clipLines returns at most n lines of s, the last one saying how many more.
func clipLines(s string, n int) []string {
	if s == "" {
		return []string{""}
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = textcut.Truncate(l, 200)
	}
	if len(lines) > n {
		more := len(lines) - (n - 1)
		lines = append(lines[:n-1], fmt.Sprintf("… %d more lines", more))
	}
	return lines
}

// Clip shortens s to n lines and maxRunes runes.
func Clip(s string, n, maxRunes int) string {
	return textcut.Truncate(strings.Join(clipLines(s, n), "\n"), maxRunes)
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
}

// prettyJSON indents raw, truncated to maxRunes.
func prettyJSON(raw json.RawMessage, maxRunes int) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return textcut.Truncate(string(raw), maxRunes)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return textcut.Truncate(string(raw), maxRunes)
	}
	return Clip(string(b), 20, maxRunes)
}

// Question is one AskUserQuestion question.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect"`
}

// Option is one answer a Question offers.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// QuestionBody renders AskUserQuestion's questions with numbered options,
// the options in picked (per question, per option; nil: none) ticked.
func QuestionBody(qs []Question, picked [][]bool) string {
	var b strings.Builder
	for qi, q := range qs {
		if qi > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("❓ ")
		if h := strings.TrimSpace(q.Header); h != "" {
			b.WriteString("**" + textcut.OneLine(h, 60) + "**: ")
		}
		b.WriteString(textcut.OneLine(q.Question, 500))
		if q.MultiSelect {
			b.WriteString(" _(choose any)_")
		}
		for oi, o := range q.Options {
			mark := ""
			if picked != nil && picked[qi][oi] {
				mark = " ✔"
			}
			fmt.Fprintf(&b, "\n%d. **%s**%s", oi+1, textcut.OneLine(o.Label, 100), mark)
			if d := strings.TrimSpace(o.Description); d != "" {
				b.WriteString(" — " + textcut.OneLine(d, 200))
			}
		}
	}
	return b.String()
}

// NeedsSubmit reports that one click cannot answer the questions (several
// questions or a multiple choice), so clicks toggle and Submit answers.
func NeedsSubmit(qs []Question) bool {
	return len(qs) > 1 || len(qs) == 1 && qs[0].MultiSelect
}

// QuestionButtons are the choices of a question card: one button per
// option ("q<question>.<option>"), as toggles with a Submit button when
// the questions need one (NeedsSubmit).
func QuestionButtons(qs []Question, picked [][]bool) []bridges.Button {
	submit := NeedsSubmit(qs)
	var bs []bridges.Button
	for qi, q := range qs {
		for oi, o := range q.Options {
			label := textcut.Truncate(o.Label, 60)
			if submit {
				if picked[qi][oi] {
					label = "☑ " + label
				} else {
					label = "☐ " + label
				}
			}
			bs = append(bs, bridges.Button{ID: fmt.Sprintf("q%d.%d", qi, oi), Label: label})
		}
	}
	if submit {
		bs = append(bs, bridges.Button{ID: bridges.ChoiceSubmit, Label: "Submit", Style: bridges.StylePrimary})
	}
	return bs
}

// QuestionReplyHint explains how to answer questions by replying, where
// their options are not shown as buttons.
func QuestionReplyHint(qs []Question) string {
	if len(qs) == 1 && qs[0].MultiSelect {
		return "Reply with the option numbers (e.g. `1, 3`), or write your own answer."
	}
	if len(qs) == 1 {
		return "Reply with the option number, or write your own answer."
	}
	return "Reply with your answers."
}

// PickedAnswers collects the toggled options: question → labels joined
// with ", " (the form the CLI passes on to the model).
func PickedAnswers(qs []Question, picked [][]bool) map[string]string {
	answers := make(map[string]string)
	for qi, q := range qs {
		var labels []string
		for oi, on := range picked[qi] {
			if on {
				labels = append(labels, q.Options[oi].Label)
			}
		}
		if len(labels) > 0 {
			answers[q.Question] = strings.Join(labels, ", ")
		}
	}
	return answers
}

// TextAnswers reads a typed reply to questions: option numbers ("2",
// "1, 3") pick options of a single question; anything else answers every
// question with the text itself.
func TextAnswers(qs []Question, text string) map[string]string {
	if len(qs) == 1 {
		q := qs[0]
		var labels []string
		ok := true
		for f := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == ',' || r == ' ' }) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 || n > len(q.Options) {
				ok = false
				break
			}
			labels = append(labels, q.Options[n-1].Label)
		}
		if ok && len(labels) > 0 && (q.MultiSelect || len(labels) == 1) {
			return map[string]string{q.Question: strings.Join(labels, ", ")}
		}
	}
	answers := make(map[string]string, len(qs))
	for _, q := range qs {
		answers[q.Question] = text
	}
	return answers
}

// PlanBody renders an ExitPlanMode request, the plan cut to fit.
func PlanBody(plan string, maxRunes int) string {
	head := "📋 **Plan ready** — approve to let the agent start:\n\n"
	if strings.TrimSpace(plan) == "" {
		return "📋 **The agent wants to leave plan mode and start working.**"
	}
	room := maxRunes - utf8.RuneCountInString(head) - 300 // keep room for choices and status
	cs := Chunks(plan, max(200, room))
	if len(cs) > 1 {
		return head + cs[0] + "\n\n_(plan truncated)_"
	}
	return head + strings.TrimSpace(plan)
}

// DecidedText is a card's final text: its body and how it ended.
func DecidedText(body, status string) string {
	return body + "\n\n" + status
}

// ClosedHow says how a closed request ended, from its audit row.
func ClosedHow(a store.Approval) string {
	by := ""
	if a.DecidedBy != "" {
		by = " by " + Mention("", a.DecidedBy)
	}
	switch a.Decision {
	case store.DecisionAllow:
		return "allowed" + by
	case store.DecisionAlways:
		return "always allowed" + by
	case store.DecisionDeny:
		return "denied" + by
	case store.DecisionTimeout:
		return "it expired unanswered"
	case store.DecisionCancelled:
		return "the agent withdrew it"
	case store.DecisionExpired:
		return "it was closed when the agent stopped or the bridge restarted"
	case "":
		return "it is no longer open"
	default:
		return "decided (" + string(a.Decision) + ")"
	}
}

// Answered is AskUserQuestion's input with the answers added (what the
// CLI gets back), the answers as JSON (for the audit log), and the
// answers in the questions' order, for the card's status.
func Answered(input json.RawMessage, qs []Question, answers map[string]string) (updated, encoded json.RawMessage, shown string, err error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(input, &in); err != nil || in == nil {
		in = make(map[string]json.RawMessage)
	}
	encoded, err = json.Marshal(answers)
	if err != nil {
		return nil, nil, "", fmt.Errorf("encode answers: %w", err)
	}
	in["answers"] = encoded
	updated, err = json.Marshal(in)
	if err != nil {
		return nil, nil, "", fmt.Errorf("encode answered input: %w", err)
	}
	var parts []string
	for _, q := range qs {
		if v, ok := answers[q.Question]; ok {
			parts = append(parts, v)
		}
	}
	return updated, encoded, strings.Join(parts, "; "), nil
}
