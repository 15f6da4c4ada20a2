package web

import (
	"encoding/json"
	"html/template"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// msgView is one message as the "message" template draws it.
type msgView struct {
	ID, Thread, CSRF string
	Seq              int64
	Mine             bool          // written by a person (shown as typed)
	Author           string        // the person; "" for the bridge
	Text             string        // a person's text
	HTML             template.HTML // the bridge's markdown, sanitised
	CardID           string
	Buttons          []buttonView
	Images           []string // upload ids
	At               time.Time
}

type buttonView struct {
	ID, Label, Class string
}

// view prepares a stored message for a page of the session with csrf.
func (c *Console) view(m store.WebMessage, csrf string) msgView {
	v := msgView{
		ID: m.ID, Thread: m.Key.Thread, CSRF: csrf, Seq: m.Seq, Mine: m.Author != "", Author: m.Author,
		CardID: m.CardID, At: m.CreatedAt,
	}
	if v.Mine {
		v.Text = m.Text
		var files []bridges.File
		if len(m.Files) > 0 && json.Unmarshal(m.Files, &files) == nil {
			for _, f := range files {
				v.Images = append(v.Images, f.ID)
			}
		}
	} else {
		v.HTML = c.md.render(m.Text)
	}
	for _, b := range decodeButtons(m.Buttons) {
		class := ""
		switch b.Style {
		case bridges.StylePrimary:
			class = "primary"
		case bridges.StyleDanger:
			class = "danger"
		}
		v.Buttons = append(v.Buttons, buttonView{b.ID, b.Label, class})
	}
	return v
}
