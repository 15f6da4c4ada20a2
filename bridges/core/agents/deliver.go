package agents

import "github.com/agentbridge/agentbridge/config"

// SecretPaths are the bridge's own files an agent must never see: data_dir
// (database, session states), the config file and the files bots keep
// credentials in (a WhatsApp device store), which may lie outside
// data_dir. Every spawn hides them (ProfileOptions), and so do the
// features that confine what runs on an agent's files.
func SecretPaths(cfg *config.Config) []string {
	var out []string
	for _, p := range []string{cfg.DataDir, cfg.Path} {
		if p != "" {
			out = append(out, p)
		}
	}
	for _, b := range cfg.Bots {
		out = append(out, b.SecretFiles()...)
	}
	return out
}
