package streamjson

import "encoding/json"

// Image is an image attached to a user message, sent as a base64 image block.
type Image struct {
	MediaType string // e.g. image/png
	Data      []byte
}

// UserMessage is one message written to the CLI's stdin. UUID is chosen by
// the host (the inbox ledger id) and comes back in Lifecycle events.
type UserMessage struct {
	UUID   string
	Text   string
	Images []Image
}

// Decision answers a PermissionRequest.
//
// Allow with a nil UpdatedInput sends the request's original input (the CLI
// replaces the input wholesale, so a partial input would break the tool).
// Deny must carry a Message (the CLI rejects a deny without one); Interrupt
// additionally ends the turn.
type Decision struct {
	Allow              bool
	UpdatedInput       json.RawMessage   // allow only; nil = original input
	UpdatedPermissions []json.RawMessage // allow only; e.g. the request's Suggestions ("always allow")
	Message            string            // deny only
	Interrupt          bool              // deny only
}
