package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config/policy"
)

// cardKind says what a card asks.
type cardKind int

const (
	cardPermission cardKind = iota // may the tool run?
	cardQuestion                   // AskUserQuestion
	cardPlan                       // ExitPlanMode
	cardSchedule                   // a schedule the agent asks for (agent_schedule.go); the CLI waits for nothing
)

// card is an open permission request shown in the thread.
type card struct {
	id          string // CardID; the CLI's request id
	seq         int    // opening order within the conversation
	kind        cardKind
	req         streamjson.PermissionRequest
	ref         bridges.MessageRef
	posted      bool
	requesters  map[string]author
	body        string            // the readable request, without choices or status
	always      []json.RawMessage // updatedPermissions for "Always allow"; nil = no such button
	alwaysLabel string
	grants      []policy.Rule    // what "Always allow" stores for the conversation (see alwaysPermissions)
	questions   []question       // cardQuestion
	picked      [][]bool         // cardQuestion: selected options per question
	schedule    *scheduleRequest // cardSchedule: what approving it creates
	intro       string           // cardQuestion: text above the questions (an elicitation's server and message)
	elicit      *elicitForm      // cardQuestion showing an MCP elicitation (agentstate.go); nil for AskUserQuestion
}

// answersCLI reports whether the CLI waits for the card's decision (every
// card but a schedule the agent asks for).
func (cd *card) answersCLI() bool { return cd.kind != cardSchedule }

// question is one AskUserQuestion question.
type question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []option `json:"options"`
	MultiSelect bool     `json:"multiSelect"`
}

type option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Preview sizes, in runes / lines.
const (
	previewRunes = 1200
	previewLines = 12
	diffLines    = 8
)

// permissionBody renders a readable preview of a tool permission request.
func permissionBody(tool string, input json.RawMessage, description, reason, workdir string) string {
	in := inputMap(input)
	var b strings.Builder
	fmt.Fprintf(&b, "🔐 **%s**", tool)
	switch tool {
	case "Bash":
		b.WriteString(" wants to run:\n")
		b.WriteString(codeBlock("sh", clip(str(in, "command"), previewLines, previewRunes)))
		if bg, _ := in["run_in_background"].(bool); bg {
			b.WriteString("\n_(in the background)_")
		}
	case "Write":
		content := str(in, "content")
		fmt.Fprintf(&b, " wants to write %s (%d lines):\n", codeSpan(relPath(str(in, "file_path"), workdir)), countLines(content))
		b.WriteString(codeBlock("", clip(content, previewLines, previewRunes)))
	case "Edit", "MultiEdit":
		fmt.Fprintf(&b, " wants to edit %s", codeSpan(relPath(str(in, "file_path"), workdir)))
		if ra, _ := in["replace_all"].(bool); ra {
			b.WriteString(" (every occurrence)")
		}
		b.WriteString(":\n")
		b.WriteString(codeBlock("diff", diffPreview(str(in, "old_string"), str(in, "new_string"))))
	case "Read", "NotebookEdit":
		p := str(in, "file_path")
		if p == "" {
			p = str(in, "notebook_path")
		}
		fmt.Fprintf(&b, " wants to access %s", codeSpan(relPath(p, workdir)))
	case "WebFetch":
		fmt.Fprintf(&b, " wants to fetch %s", str(in, "url"))
		if p := str(in, "prompt"); p != "" {
			b.WriteString("\n> " + oneLine(p, 300))
		}
	case "WebSearch":
		fmt.Fprintf(&b, " wants to search the web for %s", codeSpan(oneLine(str(in, "query"), 200)))
	default:
		b.WriteString(" wants to run with:\n")
		b.WriteString(codeBlock("json", prettyJSON(input, previewRunes)))
	}
	if d := strings.TrimSpace(description); d != "" {
		b.WriteString("\n> " + oneLine(d, 300))
	}
	if r := strings.TrimSpace(reason); r != "" {
		b.WriteString("\n_" + oneLine(r, 300) + "_")
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
		lines[i] = truncate(l, 200)
	}
	if len(lines) > n {
		more := len(lines) - (n - 1)
		lines = append(lines[:n-1], fmt.Sprintf("… %d more lines", more))
	}
	return lines
}

// clip shortens s to n lines and maxRunes runes.
func clip(s string, n, maxRunes int) string {
	return truncate(strings.Join(clipLines(s, n), "\n"), maxRunes)
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
		return truncate(string(raw), maxRunes)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return truncate(string(raw), maxRunes)
	}
	return clip(string(b), 20, maxRunes)
}

// questionBody renders AskUserQuestion's questions with numbered options.
func questionBody(qs []question, picked [][]bool) string {
	var b strings.Builder
	for qi, q := range qs {
		if qi > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("❓ ")
		if h := strings.TrimSpace(q.Header); h != "" {
			b.WriteString("**" + oneLine(h, 60) + "**: ")
		}
		b.WriteString(oneLine(q.Question, 500))
		if q.MultiSelect {
			b.WriteString(" _(choose any)_")
		}
		for oi, o := range q.Options {
			mark := ""
			if picked != nil && picked[qi][oi] {
				mark = " ✔"
			}
			fmt.Fprintf(&b, "\n%d. **%s**%s", oi+1, oneLine(o.Label, 100), mark)
			if d := strings.TrimSpace(o.Description); d != "" {
				b.WriteString(" — " + oneLine(d, 200))
			}
		}
	}
	return b.String()
}

// planBody renders an ExitPlanMode request, the plan cut to fit.
func planBody(plan string, maxRunes int) string {
	head := "📋 **Plan ready** — approve to let the agent start:\n\n"
	if strings.TrimSpace(plan) == "" {
		return "📋 **The agent wants to leave plan mode and start working.**"
	}
	room := maxRunes - utf8.RuneCountInString(head) - 300 // keep room for choices and status
	cs := chunks(plan, max(200, room))
	if len(cs) > 1 {
		return head + cs[0] + "\n\n_(plan truncated)_"
	}
	return head + strings.TrimSpace(plan)
}

// decidedText is a card's final text: its body and how it ended.
func decidedText(body, status string) string {
	return body + "\n\n" + status
}

// cardMessage renders an open card. A platform without buttons gets a
// permission or plan card's buttons all the same: it shows them as
// numbered choices and reads replies with ChoiceFromText. Question cards
// there (answered by text, options numbered in the body) and cards with
// more buttons than the platform shows list the choices in the text.
func (cd *card) message(lim bridges.Limits, maxRunes int) bridges.Message {
	buttons := cd.buttons()
	useButtons := lim.CanButtons && (lim.MaxButtons <= 0 || len(buttons) <= lim.MaxButtons) ||
		!lim.CanButtons && cd.kind != cardQuestion
	text := cd.body
	if cd.kind == cardPermission && cd.alwaysLabel != "" {
		text += "\n_" + cd.alwaysLabel + "_"
	}
	if !useButtons {
		text += "\n\n" + cd.textChoices()
		buttons = nil
	} else if cd.kind == cardQuestion {
		text += "\n_Or type your own answer: your next message answers this question._"
	}
	return bridges.Message{Text: truncate(text, maxRunes), CardID: cd.id, Buttons: buttons}
}

// buttons are the card's choices.
func (cd *card) buttons() []bridges.Button {
	switch cd.kind {
	case cardPlan:
		return []bridges.Button{
			{ID: bridges.ChoiceApprove, Label: "Approve", Style: bridges.StylePrimary},
			{ID: bridges.ChoiceApproveEdits, Label: "Approve + accept edits"},
			{ID: bridges.ChoiceReject, Label: "Reject", Style: bridges.StyleDanger},
		}
	case cardSchedule:
		return []bridges.Button{
			{ID: bridges.ChoiceAllow, Label: "Create schedule", Style: bridges.StylePrimary},
			{ID: bridges.ChoiceDeny, Label: "Refuse", Style: bridges.StyleDanger},
		}
	case cardQuestion:
		var bs []bridges.Button
		for qi, q := range cd.questions {
			for oi, o := range q.Options {
				label := truncate(o.Label, 60)
				if cd.needsSubmit() {
					if cd.picked[qi][oi] {
						label = "☑ " + label
					} else {
						label = "☐ " + label
					}
				}
				bs = append(bs, bridges.Button{ID: fmt.Sprintf("q%d.%d", qi, oi), Label: label})
			}
		}
		if cd.needsSubmit() {
			bs = append(bs, bridges.Button{ID: bridges.ChoiceSubmit, Label: "Submit", Style: bridges.StylePrimary})
		}
		if cd.elicit != nil {
			bs = append(bs, bridges.Button{ID: bridges.ChoiceDeny, Label: "Decline", Style: bridges.StyleDanger})
		}
		return bs
	default:
		bs := []bridges.Button{{ID: bridges.ChoiceAllow, Label: "Allow", Style: bridges.StylePrimary}}
		if cd.always != nil {
			bs = append(bs, bridges.Button{ID: bridges.ChoiceAlways, Label: "Always allow"})
		}
		return append(bs, bridges.Button{ID: bridges.ChoiceDeny, Label: "Deny", Style: bridges.StyleDanger})
	}
}

// needsSubmit: one click cannot answer the card (several questions or a
// multiple choice), so clicks toggle and Submit answers.
func (cd *card) needsSubmit() bool {
	return len(cd.questions) > 1 || len(cd.questions) == 1 && cd.questions[0].MultiSelect
}

// textChoices explains how to answer by replying, when the card's
// choices are not shown as buttons.
func (cd *card) textChoices() string {
	if cd.kind != cardQuestion {
		return "Reply " + bridges.NumberedChoices(cd.buttons()) + "."
	}
	if len(cd.questions) == 1 && cd.questions[0].MultiSelect {
		return "Reply with the option numbers (e.g. `1, 3`), or write your own answer."
	}
	if len(cd.questions) == 1 {
		return "Reply with the option number, or write your own answer."
	}
	return "Reply with your answers."
}
