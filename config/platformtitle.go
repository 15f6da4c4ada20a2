package config

// PlatformTitle is how people call a platform in messages ("Slack",
// "WhatsApp"); an unknown name is returned as it is.
func PlatformTitle(platform string) string {
	switch platform {
	case PlatformSlack:
		return "Slack"
	case PlatformDiscord:
		return "Discord"
	case PlatformWhatsApp:
		return "WhatsApp"
	case PlatformWeb:
		return "web console"
	}
	return platform
}
