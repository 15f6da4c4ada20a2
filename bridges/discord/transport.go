package discord

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// rewriteTransport sends the requests that discordgo addresses to its
// built-in API base (https://discord.com/api/v9/) to the configured
// api_url instead: scheme, host and path prefix are replaced. Other
// requests (CDN downloads, the gateway) pass unchanged.
//
// This is how discord.api_url works without touching discordgo's package
// variables, so several bridges (and parallel tests) can point at
// different servers in one process.
type rewriteTransport struct {
	from *url.URL // discordgo's API base
	to   *url.URL // the configured api_url (ends in "/")
	base http.RoundTripper
}

func newRewriteTransport(from, to string, base http.RoundTripper) (*rewriteTransport, error) {
	f, err := url.Parse(from)
	if err != nil {
		return nil, fmt.Errorf("parse discordgo API base %q: %w", from, err)
	}
	t, err := parseAPIURL(to)
	if err != nil {
		return nil, err
	}
	return &rewriteTransport{from: f, to: t, base: base}, nil
}

// parseAPIURL checks an api_url: absolute http(s), no query, ending in "/".
func parseAPIURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("discord api_url %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("discord api_url %q: want an absolute http(s) URL such as https://discord.com/api/v9/", s)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// RoundTrip implements http.RoundTripper.
func (t *rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if u.Scheme != t.from.Scheme || u.Host != t.from.Host || !strings.HasPrefix(u.Path, t.from.Path) {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	nu := *u
	nu.Scheme = t.to.Scheme
	nu.Host = t.to.Host
	nu.Path = t.to.Path + strings.TrimPrefix(u.Path, t.from.Path)
	nu.RawPath = ""
	if u.RawPath != "" {
		nu.RawPath = t.to.EscapedPath() + strings.TrimPrefix(u.RawPath, t.from.EscapedPath())
	}
	r.URL = &nu
	r.Host = ""
	return t.base.RoundTrip(r)
}
