package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// This file is the form of an MCP elicitation shown as a question card:
// its fields as the card's questions, which required one an answer lacks,
// and the answers as the typed values the MCP server asked for. The
// server's texts are untrusted: shown on one line, clipped.

// ElicitForm is the form of an elicitation card: one field per question,
// in the card's order.
type ElicitForm struct {
	fields []elicitField
}

// elicitField is one property of an elicitation's requested_schema.
type elicitField struct {
	name     string
	question string   // the card's question text (unique within the form)
	typ      string   // string, number, integer or boolean
	enum     []string // allowed values of a string field; nil = free text
	required bool
}

// Answers of boolean fields.
const (
	elicitYes = "Yes"
	elicitNo  = "No"
)

// maxElicitFields bounds the fields one card shows.
const maxElicitFields = 10

// ParseElicitation reads an MCP elicitation's flat schema into a form and
// the card's questions; it fails for what a card cannot show.
func ParseElicitation(e streamjson.Elicitation) (*ElicitForm, []Question, error) {
	if e.Mode != "" && e.Mode != "form" {
		return nil, nil, fmt.Errorf("mode %q", e.Mode)
	}
	var schema struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(e.Schema, &schema); err != nil {
		return nil, nil, fmt.Errorf("unreadable schema: %w", err)
	}
	// The order the CLI gives, then any other fields by name.
	var names, rest []string
	for _, n := range e.PropertyOrder {
		if _, ok := schema.Properties[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for n := range schema.Properties {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	names = append(names, rest...)
	switch {
	case len(names) == 0:
		return nil, nil, errors.New("no fields")
	case len(names) > maxElicitFields:
		return nil, nil, fmt.Errorf("%d fields, at most %d", len(names), maxElicitFields)
	}
	form := &ElicitForm{}
	var qs []Question
	seen := map[string]bool{}
	for _, n := range names {
		p := schema.Properties[n]
		f := elicitField{name: n, typ: p.Type, enum: p.Enum, required: slices.Contains(schema.Required, n)}
		q := Question{Question: textcut.OneLine(textcut.OrBlank(p.Title, n), 200)}
		if d := strings.TrimSpace(p.Description); d != "" {
			q.Question += " — " + textcut.OneLine(d, 200)
		}
		if seen[q.Question] {
			q.Question += " (" + n + ")"
		}
		seen[q.Question] = true
		switch {
		case p.Type == "boolean":
			q.Options = []Option{{Label: elicitYes}, {Label: elicitNo}}
		case p.Type == "string" && len(p.Enum) > 0:
			for _, v := range p.Enum {
				q.Options = append(q.Options, Option{Label: v})
			}
		case p.Type == "string" || p.Type == "number" || p.Type == "integer":
			if len(names) > 1 {
				return nil, nil, fmt.Errorf("field %q wants typed text beside other fields", n)
			}
		default:
			return nil, nil, fmt.Errorf("field %q of type %q", n, p.Type)
		}
		f.question = q.Question
		form.fields = append(form.fields, f)
		qs = append(qs, q)
	}
	return form, qs, nil
}

// Missing names the first required field answers lacks ("" when none;
// always "" for a nil form, i.e. AskUserQuestion).
func (f *ElicitForm) Missing(answers map[string]string) string {
	if f == nil {
		return ""
	}
	for _, fd := range f.fields {
		if _, ok := answers[fd.question]; fd.required && !ok {
			return CodeSpan(fd.question)
		}
	}
	return ""
}

// Content converts the card's answers (question → chosen label or typed
// text) into the form's values by property name, typed per the schema.
func (f *ElicitForm) Content(answers map[string]string) (map[string]any, error) {
	out := map[string]any{}
	for _, fd := range f.fields {
		a, ok := answers[fd.question]
		if !ok {
			if fd.required {
				return nil, fmt.Errorf("%s is required", fd.name)
			}
			continue
		}
		a = strings.TrimSpace(a)
		switch {
		case fd.typ == "boolean":
			switch strings.ToLower(a) {
			case "yes", "true", "y":
				out[fd.name] = true
			case "no", "false", "n":
				out[fd.name] = false
			default:
				return nil, fmt.Errorf("%s wants yes or no", fd.name)
			}
		case fd.enum != nil:
			i := slices.IndexFunc(fd.enum, func(v string) bool { return strings.EqualFold(v, a) })
			if i < 0 {
				return nil, fmt.Errorf("%s wants one of %s", fd.name, strings.Join(fd.enum, ", "))
			}
			out[fd.name] = fd.enum[i]
		case fd.typ == "integer":
			n, err := strconv.ParseInt(a, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s wants a whole number", fd.name)
			}
			out[fd.name] = n
		case fd.typ == "number":
			n, err := strconv.ParseFloat(a, 64)
			if err != nil {
				return nil, fmt.Errorf("%s wants a number", fd.name)
			}
			out[fd.name] = n
		default:
			out[fd.name] = a
		}
	}
	return out, nil
}
