package discord

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/agentbridge/agentbridge/bridges"
)

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
