package discordfake

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Components V2 (message flag IS_COMPONENTS_V2): the message is laid out
// by its components alone. Discord's rules the fake enforces, each refused
// with 50035 Invalid Form Body:
//
//   - such a message carries no content and no embeds (on create and on
//     every edit);
//   - at most MaxV2Components components in all (nested ones counted) and
//     at most MaxV2Text characters of text in its text displays;
//   - top-level components are action rows (1), sections (9), text
//     displays (10), separators (14) or containers (17); a container holds
//     the same but containers; a section holds 1–3 text displays and an
//     accessory (a button or a thumbnail); an action row 1–5 buttons;
//   - the flag cannot be removed by an edit (flags without it), nor added
//     to a message whose content is not cleared in the same edit.
const (
	FlagComponentsV2 = 1 << 15
	MaxV2Components  = 40
	MaxV2Text        = 4000
)

// Component types.
const (
	compActionRow   = 1
	compButton      = 2
	compSection     = 9
	compTextDisplay = 10
	compThumbnail   = 11
	compSeparator   = 14
	compContainer   = 17
)

// flags is the body's flags (0 when absent).
func (b *wireMessageBody) flags() int {
	if b.Flags == nil {
		return 0
	}
	return *b.Flags
}

// validateNew checks the body of a new message: by validateV2 when it
// has the flag, else by validateBody.
func validateNew(w http.ResponseWriter, b *wireMessageBody) bool {
	if b.flags()&FlagComponentsV2 != 0 {
		return validateV2(w, b)
	}
	return validateBody(w, b)
}

// validateV2 checks a Components V2 body and writes the error response
// when it breaks a rule. The caller checked the flag.
func validateV2(w http.ResponseWriter, b *wireMessageBody) bool {
	if b.Content != nil && *b.Content != "" {
		formError(w, "content", "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2")
		return false
	}
	if b.Embeds != nil && len(*b.Embeds) > 0 {
		formError(w, "embeds", "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", "The 'embeds' field cannot be used when using MessageFlags.IS_COMPONENTS_V2")
		return false
	}
	if b.Components == nil {
		return true
	}
	v := v2Check{seen: map[string]bool{}}
	for i, c := range *b.Components {
		if !v.check(c, fmt.Sprintf("components.%d", i), 0) {
			formError(w, v.field, v.code, v.msg)
			return false
		}
	}
	switch {
	case v.count > MaxV2Components:
		formError(w, "components", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length (nested components count).", MaxV2Components))
		return false
	case v.text > MaxV2Text:
		formError(w, "components", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("The text of the message's components must be %d or fewer in length.", MaxV2Text))
		return false
	}
	return true
}

// v2Check walks a component tree, counting components and text.
type v2Check struct {
	count, text      int
	seen             map[string]bool
	field, code, msg string
}

func (v *v2Check) fail(field, code, msg string) bool {
	v.field, v.code, v.msg = field, code, msg
	return false
}

// check validates c at field; parent is the type of the component holding
// it (0 at the top level).
func (v *v2Check) check(c wireComponent, field string, parent int) bool {
	v.count++
	switch c.Type {
	case compTextDisplay:
		if c.Content == "" {
			return v.fail(field+".content", "BASE_TYPE_REQUIRED", "This field is required")
		}
		v.text += utf8.RuneCountInString(c.Content)
		return true
	case compSeparator:
		return true
	case compActionRow:
		if len(c.Components) < 1 || len(c.Components) > 5 {
			return v.fail(field+".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
		}
		for j, b := range c.Components {
			if b.Type != compButton {
				return v.fail(fmt.Sprintf("%s.components.%d.type", field, j), "UNION_TYPE_CHOICES", `Value of field "type" must be one of (2,).`)
			}
			if !v.button(b, fmt.Sprintf("%s.components.%d", field, j)) {
				return false
			}
		}
		return true
	case compSection:
		if len(c.Components) < 1 || len(c.Components) > 3 {
			return v.fail(field+".components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 3 in length.")
		}
		for j, t := range c.Components {
			if t.Type != compTextDisplay {
				return v.fail(fmt.Sprintf("%s.components.%d.type", field, j), "UNION_TYPE_CHOICES", `Value of field "type" must be one of (10,).`)
			}
			if !v.check(t, fmt.Sprintf("%s.components.%d", field, j), compSection) {
				return false
			}
		}
		switch {
		case c.Accessory == nil:
			return v.fail(field+".accessory", "BASE_TYPE_REQUIRED", "This field is required")
		case c.Accessory.Type == compButton:
			v.count++
			return v.button(*c.Accessory, field+".accessory")
		case c.Accessory.Type == compThumbnail:
			v.count++
			return true
		}
		return v.fail(field+".accessory.type", "UNION_TYPE_CHOICES", `Value of field "type" must be one of (2, 11).`)
	case compContainer:
		if parent != 0 {
			return v.fail(field+".type", "UNION_TYPE_CHOICES", "Containers cannot be nested.")
		}
		if len(c.Components) < 1 {
			return v.fail(field+".components", "BASE_TYPE_BAD_LENGTH", "Must be 1 or more in length.")
		}
		for j, k := range c.Components {
			if !v.check(k, fmt.Sprintf("%s.components.%d", field, j), compContainer) {
				return false
			}
		}
		return true
	}
	return v.fail(field+".type", "UNION_TYPE_CHOICES", "Value of field \"type\" must be one of (1, 9, 10, 14, 17).")
}

// button checks one button (as validateBody does for action rows).
func (v *v2Check) button(b wireComponent, field string) bool {
	switch {
	case b.Style < 1 || b.Style > 5:
		return v.fail(field+".style", "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4, 5}.")
	case utf8.RuneCountInString(b.Label) > 80:
		return v.fail(field+".label", "BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.")
	case b.Style == 5 && (b.URL == "" || b.CustomID != ""):
		return v.fail(field+".url", "BUTTON_COMPONENT_URL_REQUIRED", "A url is required for link buttons.")
	case b.Style != 5 && (len(b.CustomID) < 1 || utf8.RuneCountInString(b.CustomID) > 100):
		return v.fail(field+".custom_id", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
	case b.Style != 5 && v.seen[b.CustomID]:
		return v.fail(field+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated.")
	}
	v.seen[b.CustomID] = true
	return true
}

// checkV2Edit enforces the flag's rules on an edit of m and validates the
// body for the layout the message will have. It writes the error response
// and returns false on a violation.
func checkV2Edit(w http.ResponseWriter, m *message, b *wireMessageBody) bool {
	was := m.wire.Flags&FlagComponentsV2 != 0
	switch {
	case was && b.Flags != nil && *b.Flags&FlagComponentsV2 == 0:
		formError(w, "flags", "MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG", "The IS_COMPONENTS_V2 flag cannot be removed from a message")
		return false
	case !was && b.flags()&FlagComponentsV2 != 0 && m.wire.Content != "" && (b.Content == nil || *b.Content != ""):
		formError(w, "content", "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2")
		return false
	case was || b.flags()&FlagComponentsV2 != 0:
		return validateV2(w, b)
	}
	return validateBody(w, b)
}

// buttonsOf returns every button of a component tree in order: those of
// action rows (one row each) and section accessories (a row of one).
func buttonsOf(cs []wireComponent) [][]Button {
	var out [][]Button
	for _, c := range cs {
		switch c.Type {
		case compActionRow:
			var row []Button
			for _, b := range c.Components {
				row = append(row, Button{CustomID: b.CustomID, Label: b.Label, Style: b.Style, Disabled: b.Disabled})
			}
			out = append(out, row)
		case compSection:
			if a := c.Accessory; a != nil && a.Type == compButton {
				out = append(out, []Button{{CustomID: a.CustomID, Label: a.Label, Style: a.Style, Disabled: a.Disabled}})
			}
		case compContainer:
			out = append(out, buttonsOf(c.Components)...)
		}
	}
	return out
}

// textOf joins the text displays of a component tree with newlines.
func textOf(cs []wireComponent) string {
	var parts []string
	for _, c := range cs {
		switch c.Type {
		case compTextDisplay:
			parts = append(parts, c.Content)
		case compSection, compContainer:
			if t := textOf(c.Components); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}
