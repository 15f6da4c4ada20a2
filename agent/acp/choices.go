package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// An agent may offer modes and models for its session, in the result of
// session/new and session/load, in one of two shapes:
//
//   - "modes" {currentModeId, availableModes[{id, name, description}]},
//     switched with session/set_mode {sessionId, modeId}; and "models"
//     {currentModelId, availableModels[{modelId, name, description}]},
//     switched with session/set_model {sessionId, modelId} (Gemini CLI);
//   - "configOptions" [{id, category, type "select", currentValue,
//     options[{value, name, description}]}], a category "mode" or "model"
//     option switched with session/set_config_option {sessionId, configId,
//     value} (codex-acp). Config options win where both are offered: the
//     protocol replaces the dedicated methods with them.
//
// current_mode_update and config_option_update session updates keep the
// current values. Choose switches one; Config.Mode and Config.Model are
// asked for before the first prompt of a session.

// Kinds of choice.
const (
	KindMode  = "mode"
	KindModel = "model"
)

// ErrNotOffered: the agent offers no choice of this kind.
var ErrNotOffered = errors.New("acp: the agent offers no such choice")

// ErrUnknownChoice: the id is not among the agent's choices.
var ErrUnknownChoice = errors.New("acp: not one of the agent's choices")

// Choice is one mode or model the agent offers.
type Choice struct{ ID, Name, Description string }

// Offer is what the agent offers of one kind: Available is empty when it
// offers nothing (then Current means nothing).
type Offer struct {
	Current   string
	Available []Choice
}

// Has reports whether id is among the offer's choices.
func (o Offer) Has(id string) bool {
	for _, c := range o.Available {
		if c.ID == id {
			return true
		}
	}
	return false
}

// selector is one kind of choice the agent offered, and how to switch it.
type selector struct {
	Offer
	method   string // session/set_mode, session/set_model or session/set_config_option
	configID string // for session/set_config_option
	initial  string // the agent's own choice when the session was set up
}

// choiceCall is a switch the client asked for: applied to the selector
// when the agent accepts it; done (nil for a start-up switch) gets the
// outcome.
type choiceCall struct {
	kind, id string
	done     chan error
}

// sessionChoices reads the modes and models of a session/new or
// session/load result. c.mu is held.
func (c *Client) sessionChoices(result json.RawMessage) {
	var r struct {
		Modes *struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID          string `json:"id"`
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"availableModes"`
		} `json:"modes"`
		Models *struct {
			CurrentModelID  string `json:"currentModelId"`
			AvailableModels []struct {
				ModelID     string `json:"modelId"`
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"availableModels"`
		} `json:"models"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	if m := r.Modes; m != nil && len(m.AvailableModes) > 0 {
		s := selector{Offer: Offer{Current: m.CurrentModeID}, method: "session/set_mode"}
		for _, a := range m.AvailableModes {
			s.Available = append(s.Available, Choice{a.ID, a.Name, a.Description})
		}
		c.modes = s
	}
	if m := r.Models; m != nil && len(m.AvailableModels) > 0 {
		s := selector{Offer: Offer{Current: m.CurrentModelID}, method: "session/set_model"}
		for _, a := range m.AvailableModels {
			s.Available = append(s.Available, Choice{a.ModelID, a.Name, a.Description})
		}
		c.models = s
	}
	c.configOptions(r.ConfigOptions)
	c.modes.initial, c.models.initial = c.modes.Current, c.models.Current
}

// configOptions reads session config options (a session's result or a
// config_option_update): a select of category mode or model replaces what
// the dedicated fields said. c.mu is held.
func (c *Client) configOptions(raw json.RawMessage) {
	var opts []struct {
		ID           string          `json:"id"`
		Category     string          `json:"category"`
		Type         string          `json:"type"`
		CurrentValue json.RawMessage `json:"currentValue"`
		Options      []struct {
			Value       string `json:"value"`
			Name        string `json:"name"`
			Description string `json:"description"`
			Options     []struct {
				Value       string `json:"value"`
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"options"` // a group of options
		} `json:"options"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &opts) != nil {
		return
	}
	for _, o := range opts {
		var sel *selector
		switch o.Category {
		case KindMode:
			sel = &c.modes
		case KindModel:
			sel = &c.models
		default:
			continue
		}
		if o.Type != "select" {
			continue
		}
		var cur string
		_ = json.Unmarshal(o.CurrentValue, &cur)
		s := selector{Offer: Offer{Current: cur}, method: "session/set_config_option", configID: o.ID, initial: sel.initial}
		for _, v := range o.Options {
			if v.Value != "" {
				s.Available = append(s.Available, Choice{v.Value, v.Name, v.Description})
			}
			for _, g := range v.Options {
				s.Available = append(s.Available, Choice{g.Value, g.Name, g.Description})
			}
		}
		if len(s.Available) > 0 {
			*sel = s
		}
	}
}

// onChoiceUpdate applies a current_mode_update or config_option_update;
// it reports whether the update was one (also during a load's replay,
// which says where the loaded session stands). c.mu is held.
func (c *Client) onChoiceUpdate(params json.RawMessage) bool {
	var p struct {
		Update struct {
			SessionUpdate string          `json:"sessionUpdate"`
			CurrentModeID string          `json:"currentModeId"`
			ConfigOptions json.RawMessage `json:"configOptions"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	switch p.Update.SessionUpdate {
	case "current_mode_update":
		if c.modes.method == "session/set_mode" && p.Update.CurrentModeID != "" {
			c.modes.Current = p.Update.CurrentModeID
		}
		return true
	case "config_option_update":
		c.configOptions(p.Update.ConfigOptions)
		return true
	}
	return false
}

// selectorOf is the selector of kind. c.mu is held.
func (c *Client) selectorOf(kind string) *selector {
	if kind == KindModel {
		return &c.models
	}
	return &c.modes
}

// Offered returns what the agent offers of kind (KindMode or KindModel)
// for its session, and the agent's own choice when the session was set
// up ("" when it offers none).
func (c *Client) Offered(kind string) (o Offer, initial string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.selectorOf(kind)
	return Offer{Current: s.Current, Available: append([]Choice(nil), s.Available...)}, s.initial
}

// Choose asks the agent to switch its mode or model (kind) to id, one of
// its choices; the returned channel gets the agent's answer (nil when it
// switched). ErrNotOffered: the agent offers no such choice (or the
// session is not set up); ErrUnknownChoice: id is not among them.
func (c *Client) Choose(kind, id string) (<-chan error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase != phaseReady {
		return nil, ErrNotOffered
	}
	done := make(chan error, 1)
	if err := c.choose(kind, id, done); err != nil {
		return nil, err
	}
	return done, nil
}

// choose sends the switch of kind to id. c.mu is held; the session is set
// up.
func (c *Client) choose(kind, id string, done chan error) error {
	s := c.selectorOf(kind)
	switch {
	case len(s.Available) == 0:
		return ErrNotOffered
	case !s.Has(id):
		return fmt.Errorf("%w: %q", ErrUnknownChoice, id)
	}
	params := map[string]any{"sessionId": c.sessionID}
	switch s.method {
	case "session/set_mode":
		params["modeId"] = id
	case "session/set_model":
		params["modelId"] = id
	default:
		params["configId"], params["value"] = s.configID, id
	}
	n := c.call(s.method, params)
	c.choosing[n] = choiceCall{kind: kind, id: id, done: done}
	return nil
}

// applyWanted asks for Config.Mode and Config.Model when the agent offers
// them and they are not its current choice, before any prompt; what it
// cannot apply is said in the conversation. c.mu is held; the session is
// set up.
func (c *Client) applyWanted() {
	for _, w := range []struct{ kind, id string }{{KindMode, c.cfg.Mode}, {KindModel, c.cfg.Model}} {
		if w.id == "" || c.selectorOf(w.kind).Current == w.id {
			continue
		}
		if err := c.choose(w.kind, w.id, nil); err != nil {
			c.notice("warning", "acp_choice", fmt.Sprintf("This conversation's %s %s could not be applied (%v): the agent runs with its own.", w.kind, strconv.Quote(w.id), err))
		}
	}
}

// onChosen completes a switch the client asked for. c.mu is held.
func (c *Client) onChosen(call choiceCall, result json.RawMessage, err error) {
	if err == nil {
		if s := c.selectorOf(call.kind); s.method == "session/set_config_option" {
			// The answer carries every option's new state.
			var r struct {
				ConfigOptions json.RawMessage `json:"configOptions"`
			}
			_ = json.Unmarshal(result, &r)
			s.Current = call.id
			c.configOptions(r.ConfigOptions)
		} else {
			s.Current = call.id
		}
		c.cfg.Log.Info("acp session choice switched", "kind", call.kind, "id", call.id)
	}
	switch {
	case call.done != nil:
		call.done <- err
	case err != nil:
		c.notice("warning", "acp_choice", fmt.Sprintf("This conversation's %s %s could not be applied (%v): the agent runs with its own.", call.kind, strconv.Quote(call.id), err))
	}
}
