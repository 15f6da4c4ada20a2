package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/config/schedules"
)

// decoder is the config's decode.Decoder with what only the top level of
// the schema needs: the platforms bots may use and the bots' settings
// mappings, kept for their adapters.
type decoder struct {
	*decode.Decoder
	platforms []Platform            // the chat platforms bots may use (see Platform)
	sections  map[string]*yaml.Node // bot settings mappings by path ("bots[0].slack"), read by finishBot
}

func newDecoder(lookupEnv func(string) (string, bool), platforms []Platform) *decoder {
	return &decoder{Decoder: decode.New(lookupEnv), platforms: platforms, sections: map[string]*yaml.Node{}}
}

// This file maps YAML keys to struct fields. Keys are snake_case as in
// DESIGN §5; every mapping is strict (unknown keys are problems).

func (d *decoder) config(root *yaml.Node) *Config {
	c := &Config{}
	d.Fields(root, "", map[string]decode.Field{
		"data_dir": d.Str(&c.DataDir),
		"log": func(v *yaml.Node, p string) {
			d.Fields(v, p, map[string]decode.Field{
				"level":  d.Str(&c.Log.Level),
				"format": d.Str(&c.Log.Format),
			})
		},
		"http": func(v *yaml.Node, p string) {
			d.Fields(v, p, map[string]decode.Field{
				"listen": d.Str(&c.HTTP.Listen),
			})
		},
		"agents": func(v *yaml.Node, p string) {
			c.Agents = map[string]*profile.Agent{}
			d.Pairs(v, p, func(name string, k, v *yaml.Node) {
				ap := decode.Child(p, name)
				d.SetLine(ap, k.Line)
				c.Agents[name] = profile.Decode(d.Decoder, name, v, ap)
			})
		},
		"bots": func(v *yaml.Node, p string) {
			d.List(v, p, "bots", func(item *yaml.Node, bp string) {
				if d.MappingItem(item, bp) {
					c.Bots = append(c.Bots, d.bot(item, bp))
				} else {
					c.Bots = append(c.Bots, nil) // keep indexes aligned with paths
				}
			})
		},
		"retention":     d.retention(&c.Retention),
		"status_delay":  d.statusDelay(&c.StatusDelay),
		"delivery":      d.deliverySection(&c.Delivery),
		"store":         d.storeSection(&c.Store),
		"replicas":      d.replicasSection(&c.Replicas),
		"limits":        d.limitsSection(&c.Limits),
		"schedules":     schedules.Decode(d.Decoder, &c.Schedules),
		"web":           d.webSection(&c.Web),
		"transcription": d.transcriptionSection(&c.Transcription),
		"handoff":       d.handoffSection(&c.Handoff),
	})
	return c
}

func (d *decoder) bot(v *yaml.Node, p string) *Bot {
	b := &Bot{}
	known := map[string]decode.Field{
		"name":      d.Str(&b.Name),
		"platform":  d.Str(&b.Platform),
		"agent":     d.Str(&b.Agent),
		"agents":    d.StrList(&b.Agents),
		"verbosity": d.Str(&b.Verbosity),
		"access": func(v *yaml.Node, ap string) {
			d.Fields(v, ap, map[string]decode.Field{
				"channels":  d.StrList(&b.Access.Channels),
				"users":     d.StrList(&b.Access.Users),
				"approvers": d.StrList(&b.Access.Approvers),
				"admins":    d.StrList(&b.Access.Admins),
			})
		},
	}
	// A platform's settings mapping is kept as written: its adapter reads
	// it once the bot's platform is known (finishBot).
	for _, pl := range d.platforms {
		if pl.Settings != nil {
			known[pl.Name] = func(v *yaml.Node, sp string) { d.sections[sp] = v }
		}
	}
	d.Fields(v, p, known)
	return b
}
