package discord

import "errors"

// Sentinel errors. Run wraps the fatal ones with the bot name; test with
// errors.Is.
var (
	// ErrAuthentication: Discord refused the bot token (gateway close 4004
	// or HTTP 401). Run returns a *bridges.Failure wrapping it.
	ErrAuthentication = errors.New("discord: authentication failed")

	// ErrDisallowedIntent: Discord refused a privileged gateway intent
	// (close 4014). The bridge needs MESSAGE_CONTENT.
	ErrDisallowedIntent = errors.New("discord: disallowed gateway intent")

	// ErrGatewayFatal: the gateway closed with another code that Discord
	// documents as not reconnectable (4010–4013).
	ErrGatewayFatal = errors.New("discord: gateway closed with a non-recoverable code")

	// ErrAlreadyRunning: Run was called while another Run is active.
	ErrAlreadyRunning = errors.New("discord bridge is already running")

	// ErrTooLarge: FetchFile refused an attachment larger than its limit.
	ErrTooLarge = errors.New("discord attachment is larger than the allowed size")

	// ErrBadMessage: Post or Edit was asked for something Discord cannot
	// show (empty message, too many buttons, custom_id over 100
	// characters, duplicate button ids, a button id containing ':').
	ErrBadMessage = errors.New("message does not fit Discord's limits")
)
