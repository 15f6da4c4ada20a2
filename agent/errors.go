package agent

import (
	"errors"
	"fmt"
)

// Sentinel errors of the agent package; test with errors.Is.
var (
	// ErrClosed: the session's process has exited or is being stopped;
	// nothing more can be written to it.
	ErrClosed = errors.New("agent: session closed")

	// ErrNotPending: Respond named a permission request that is not waiting
	// for an answer (already answered, cancelled by the CLI, or unknown).
	ErrNotPending = errors.New("agent: permission request not pending")

	// ErrControlTimeout: the CLI did not answer a control request within
	// Options.ControlTimeout.
	ErrControlTimeout = errors.New("agent: control request timed out")
)

// ControlError is the CLI's error answer to a host control request
// (e.g. set_permission_mode bypassPermissions on a session not launched
// for it).
type ControlError struct {
	Request string // the request subtype, e.g. "set_model"
	Message string // the CLI's error text
	Code    string // the CLI's error_code, e.g. "bypass_not_launched"; may be empty
}

func (e *ControlError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("agent: %s refused by the CLI (%s): %s", e.Request, e.Code, e.Message)
	}
	return fmt.Sprintf("agent: %s refused by the CLI: %s", e.Request, e.Message)
}
