package web

import "github.com/agentbridge/agentbridge/config"

// Platform is the web console's entry in the bridge's list of platforms.
// A web bot has no settings mapping: the console's users are the top-level
// web section (config.Web), and its bot is served on http.listen.
func Platform() config.Platform {
	return config.Platform{Name: config.PlatformWeb}
}
