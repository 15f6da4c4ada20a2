package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Transcription configures speech-to-text for voice notes and audio clips
// (yaml transcription). The bridge posts each audio file to URL in the
// OpenAI-style multipart shape (fields file and model; the answer's JSON
// field text is the transcript), so a hosted service or a local whisper
// server both serve. An empty URL turns voice notes off: people who send
// one are told so and the note does not reach the agent.
type Transcription struct {
	// URL is the full endpoint, e.g.
	// https://api.openai.com/v1/audio/transcriptions or
	// http://127.0.0.1:8080/v1/audio/transcriptions (yaml url; http(s)).
	URL string
	// Model is sent as the form field model (yaml model; required with url,
	// e.g. whisper-1).
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" (yaml api_key; may be
	// empty for a local server). A secret: never logged nor summarised, and
	// never sent over plain http to another machine.
	APIKey string
}

// Enabled reports whether voice notes are transcribed.
func (t Transcription) Enabled() bool { return t.URL != "" }

// String implements fmt.Stringer with the key redacted.
func (t Transcription) String() string {
	return fmt.Sprintf("transcription{url:%s model:%s api_key:%s}", t.URL, t.Model, Redact(t.APIKey))
}

// GoString implements fmt.GoStringer (%#v) with the key redacted.
func (t Transcription) GoString() string { return "config." + t.String() }

// LogValue implements slog.LogValuer with the key redacted.
func (t Transcription) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", t.URL), slog.String("model", t.Model), slog.String("api_key", Redact(t.APIKey)))
}

// transcriptionSection decodes the top-level transcription mapping.
func (d *decoder) transcriptionSection(dst *Transcription) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"url":     d.Str(&dst.URL),
			"model":   d.Str(&dst.Model),
			"api_key": d.Str(&dst.APIKey),
		})
	}
}

// finishTranscription checks transcription: a url needs a model and must
// be http(s) with a host; an api_key goes over https, or plain http only
// to a loopback address (fail closed: the key would cross the network in
// clear); model or api_key without url is a mistake, not "off".
func (d *decoder) finishTranscription(c *Config) {
	t := c.Transcription
	const p = "transcription"
	up, mp, kp := decode.Child(p, "url"), decode.Child(p, "model"), decode.Child(p, "api_key")
	if t.URL == "" {
		switch {
		case d.IsBad(up):
		case t.Model != "":
			d.Addf(d.LineOf(mp), mp, "transcription.model is set but transcription.url is empty (voice notes stay off)")
		case t.APIKey != "":
			d.Addf(d.LineOf(kp), kp, "transcription.api_key is set but transcription.url is empty (voice notes stay off)")
		}
		return
	}
	u, err := url.Parse(t.URL)
	if err == nil && u.User != nil { // a password in the url: never echoed
		d.Addf(d.LineOf(up), up, "bad transcription url: credentials in the url are not accepted (put the key in transcription.api_key)")
		return
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.Addf(d.LineOf(up), up, "bad transcription url %s: want http(s)://host[:port]/path, e.g. https://api.openai.com/v1/audio/transcriptions", d.Show(up, t.URL))
		return
	}
	if t.Model == "" && !d.IsBad(mp) {
		d.Addf(d.LineOf(up), mp, "transcription.model is required with transcription.url (e.g. whisper-1)")
	}
	if t.APIKey != "" && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		d.Addf(d.LineOf(up), up, "transcription.api_key would be sent in clear to %s: use https, or plain http only to a loopback address", u.Hostname())
	}
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// transcriptionString formats transcription for the summary (never the key).
func transcriptionString(t Transcription) string {
	key := "none"
	if t.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("url=%s model=%s api_key=%s", t.URL, t.Model, key)
}
