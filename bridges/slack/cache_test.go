package slack

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUserCache(t *testing.T) {
	t.Parallel()
	lookups := map[string]int{}
	lookup := func(_ context.Context, id string) (string, error) {
		lookups[id]++
		if id == "Ubad" {
			return "", errors.New("users.info: user_not_found")
		}
		return "name of " + id, nil
	}
	tests := []struct {
		name    string
		cap     int
		ttl     time.Duration
		ids     []string // looked up in this order
		want    string   // name of the last id
		lookups map[string]int
	}{
		{"cached", 4, time.Hour, []string{"U1", "U1", "U1"}, "name of U1", map[string]int{"U1": 1}},
		{"failure falls back to the id", 4, time.Hour, []string{"Ubad", "Ubad"}, "Ubad", map[string]int{"Ubad": 1}},
		{"least recently used forgotten", 2, time.Hour, []string{"U1", "U2", "U1", "U3", "U1", "U2"}, "name of U2", map[string]int{"U1": 1, "U2": 2, "U3": 1}},
		{"expired", 4, 0, []string{"U1", "U1"}, "name of U1", map[string]int{"U1": 2}},
		{"empty id", 4, time.Hour, []string{""}, "", map[string]int{}},
	}
	for _, tt := range tests {
		clear(lookups)
		c := newUserCache(tt.cap, tt.ttl)
		var got string
		for _, id := range tt.ids {
			got = c.Name(t.Context(), id, lookup)
		}
		if got != tt.want {
			t.Errorf("%s: name = %q, want %q", tt.name, got, tt.want)
		}
		if len(lookups) != len(tt.lookups) {
			t.Errorf("%s: lookups = %v, want %v", tt.name, lookups, tt.lookups)
		}
		for id, n := range tt.lookups {
			if lookups[id] != n {
				t.Errorf("%s: lookups = %v, want %v", tt.name, lookups, tt.lookups)
				break
			}
		}
	}
}
