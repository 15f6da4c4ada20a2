package auth

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/agentbridge/agentbridge/config"
)

func mustPrefixes(t *testing.T, entries ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, e := range entries {
		p, err := config.ParseTrustedProxy(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestClientAddr: which address failures count under.
func TestClientAddr(t *testing.T) {
	trusted := mustPrefixes(t, "127.0.0.1", "10.0.0.0/8")
	for _, tc := range []struct {
		remote, xff string
		trusted     bool
		want        string
	}{
		{"203.0.113.1:5000", "", true, "203.0.113.1"},
		{"203.0.113.1:5000", "198.51.100.1", true, "203.0.113.1"}, // not from a proxy: header ignored
		{"127.0.0.1:5000", "198.51.100.1", true, "198.51.100.1"},
		{"127.0.0.1:5000", "198.51.100.1", false, "127.0.0.1"},
		{"127.0.0.1:5000", "6.6.6.6, 198.51.100.1, 10.2.3.4", true, "198.51.100.1"}, // the left part is the client's word
		{"127.0.0.1:5000", "garbage, 10.2.3.4", true, "10.2.3.4"},
		{"127.0.0.1:5000", "", true, "127.0.0.1"},
		{"[2001:db8:1:2:3:4:5:6]:5000", "", true, "2001:db8:1:2::/64"},
		{"[::ffff:203.0.113.1]:5000", "", true, "203.0.113.1"},
		{"pipe", "", true, "unknown"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/signin", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		tr := trusted
		if !tc.trusted {
			tr = nil
		}
		if got := ClientAddr(r, tr); got != tc.want {
			t.Errorf("ClientAddr(%s, XFF %q, trusted %v) = %q, want %q", tc.remote, tc.xff, tc.trusted, got, tc.want)
		}
	}
}
