package decode

import "testing"

func TestParseByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false}, {"1024", 1024, false}, {"4GiB", 4 << 30, false}, {"512MiB", 512 << 20, false},
		{"1.5G", 3 << 29, false}, {"2GB", 2e9, false}, {"64K", 64 << 10, false}, {"10 MiB", 10 << 20, false},
		{"-1G", 0, true}, {"lots", 0, true}, {"GiB", 0, true}, {"1e300T", 0, true},
	} {
		got, err := ParseByteSize(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, bad=%v", c.in, got, err, c.want, c.bad)
		}
	}
}
