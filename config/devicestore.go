package config

// checkDeviceStores rejects WhatsApp bots whose device store is the bridge
// database or another WhatsApp bot's device store: two clients on one
// device fight (the server replaces one stream with the other), and the
// device tables do not belong in the bridge database. Paths are compared
// after resolution against data_dir.
func (d *decoder) checkDeviceStores(c *Config) {
	db := c.DBPath()
	first := map[string]int{} // device store path → index of the first bot using it
	for i, b := range c.Bots {
		if b == nil || b.WhatsApp == nil || b.WhatsApp.DeviceStore == "" {
			continue
		}
		p := child(child(index("bots", i), "whatsapp"), "device_store")
		if !d.set[p] {
			p = child(index("bots", i), "platform") // the default is in effect: point at the bot
		}
		path := b.WhatsApp.DeviceStore
		if path == db {
			d.addf(d.lineOf(p), p, "the device store must not be the bridge database (%s): give this bot its own whatsapp.device_store file", path)
			continue
		}
		if j, dup := first[path]; dup {
			d.addf(d.lineOf(p), p, "device store %s is also used by bots[%d] (%s): each WhatsApp bot needs its own whatsapp.device_store file",
				path, j, c.Bots[j].Name)
			continue
		}
		first[path] = i
	}
}

// DefaultDeviceStore is a WhatsApp bot's device store file when
// whatsapp.device_store is not given: "whatsapp-NAME.db" (characters other
// than letters, digits, '.', '-' and '_' in the bot name become '_'), so
// that bots never share one by default.
func DefaultDeviceStore(bot string) string {
	safe := []rune(bot)
	for i, r := range safe {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			safe[i] = '_'
		}
	}
	return "whatsapp-" + string(safe) + ".db"
}
