package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

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

// isPermanent reports whether an error of Post, Edit or UploadFile is one
// no retry can fix: a message Discord cannot show (ErrBadMessage,
// ErrTooLarge) or a REST answer 4xx other than 408 and 429 — 401 (token
// revoked), 403 with 50001 Missing Access or 50013 Missing Permissions
// (the bot was removed or lost its rights), 404 with 10003 Unknown
// Channel or 10008 Unknown Message, 400 with 50035 Invalid Form Body or
// 50006 Cannot send an empty message. Network errors, timeouts, 5xx
// (discordgo retries a 502 three times first) and 429 are transient.
func isPermanent(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrBadMessage) || errors.Is(err, ErrTooLarge) || errors.Is(err, discordgo.ErrUnauthorized) {
		return true
	}
	re, ok := errors.AsType[*discordgo.RESTError](err)
	if !ok || re.Response == nil {
		return false
	}
	code := re.Response.StatusCode
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

// classify marks err with bridges.Permanent when no retry can fix it.
func classify(err error) error {
	if isPermanent(err) {
		return bridges.Permanent(err)
	}
	return err
}

// Hints shared by several failures.
const (
	hintToken = "copy the bot token again from the Discord Developer Portal (your application → Bot → Reset Token) " +
		"into discord.token, then restart the bridge"
	hintUpgrade = "upgrade the bridge; if the newest version does the same, report it"
)

// openFailure classifies an error of the gateway handshake (discordgo's
// Open): a *bridges.Failure when retrying cannot help, else nil.
func openFailure(err error) *bridges.Failure {
	if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
		return closeFailure(ce.Code)
	}
	re, isREST := errors.AsType[*discordgo.RESTError](err)
	unauthorized := isREST && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized
	if unauthorized || errors.Is(err, discordgo.ErrUnauthorized) {
		return &bridges.Failure{
			Reason: "Discord rejected the bot token (HTTP 401 Unauthorized on GET /gateway)",
			Remedy: bridges.RemedyRestart, Hint: hintToken,
			Err: fmt.Errorf("%w (HTTP 401)", ErrAuthentication),
		}
	}
	return nil
}

// closeFailure maps the gateway close codes Discord documents as "do not
// reconnect" to what they mean and what to do; nil for the others.
func closeFailure(code int) *bridges.Failure {
	f := &bridges.Failure{Remedy: bridges.RemedyRestart, Err: fmt.Errorf("%w (close %d)", ErrGatewayFatal, code)}
	switch code {
	case 4004:
		f.Reason = "Discord rejected the bot token (gateway close 4004 Authentication failed)"
		f.Hint = hintToken
		f.Err = fmt.Errorf("%w (close 4004)", ErrAuthentication)
	case 4014:
		f.Reason = "Discord refused the privileged MESSAGE_CONTENT intent (gateway close 4014 Disallowed intent(s))"
		f.Hint = `enable "Message Content Intent" in the Discord Developer Portal (your application → Bot → ` +
			"Privileged Gateway Intents), then restart the bridge"
		f.Err = fmt.Errorf("%w (close 4014)", ErrDisallowedIntent)
	case 4010:
		f.Reason = "Discord refused the shard the bridge asked for (gateway close 4010 Invalid shard)"
		f.Remedy, f.Hint = bridges.RemedyUpgrade, hintUpgrade
	case 4011:
		f.Reason = "Discord requires sharding for this bot (gateway close 4011 Sharding required): it is in too many servers for one connection"
		f.Hint = "the bridge does not shard: give it its own Discord application, in fewer than 2,500 servers, then restart the bridge"
	case 4012:
		f.Reason = "Discord no longer accepts the bridge's gateway API version (gateway close 4012 Invalid API version)"
		f.Remedy, f.Hint = bridges.RemedyUpgrade, hintUpgrade
	case 4013:
		f.Reason = "Discord refused the gateway intents the bridge asked for (gateway close 4013 Invalid intent(s))"
		f.Remedy, f.Hint = bridges.RemedyUpgrade, hintUpgrade
	default:
		return nil
	}
	return f
}
