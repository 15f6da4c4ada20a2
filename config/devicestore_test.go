package config

import "testing"

func TestDefaultDeviceStore(t *testing.T) {
	tests := []struct{ bot, want string }{
		{"phone", "whatsapp-phone.db"},
		{"team-2_a.b", "whatsapp-team-2_a.b.db"},
		{"../x y", "whatsapp-.._x_y.db"}, // no path separator survives
		{"çà", "whatsapp-__.db"},
	}
	for _, tt := range tests {
		t.Run(tt.bot, func(t *testing.T) {
			if got := DefaultDeviceStore(tt.bot); got != tt.want {
				t.Errorf("DefaultDeviceStore(%q) = %q, want %q", tt.bot, got, tt.want)
			}
		})
	}
}
