package agent

import (
	"regexp"
	"sync"
)

// stderrTailBytes is how much of the end of the CLI's stderr an Exit keeps.
const stderrTailBytes = 4 << 10

// tailBuffer keeps the last max bytes written to it. Safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the tail with anything that looks like a credential
// replaced by "[redacted]".
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return redactSecrets(string(t.buf))
}

// secretPatterns match credential-like text: API keys and tokens with
// well-known prefixes, bearer/basic auth values, key=value pairs whose key
// names a secret, and long opaque base64/hex runs.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(sk-ant-|sk-|xox[abposr]-|xapp-|ghp_|gho_|ghs_|github_pat_|glpat-|AKIA)[A-Za-z0-9_\-./+=]{6,}`),
	regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9_\-./+=:]{8,}`),
	regexp.MustCompile(`(?i)\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|AUTH)[A-Z0-9_]*)(["']?\s*[:=]\s*["']?)[^\s"',;]+`),
	regexp.MustCompile(`[A-Za-z0-9+_]{40,}={0,2}`),
}

// redactSecrets replaces credential-like substrings of s.
func redactSecrets(s string) string {
	for i, re := range secretPatterns {
		if i == 2 {
			s = re.ReplaceAllString(s, "${1}${2}[redacted]")
			continue
		}
		s = re.ReplaceAllString(s, "[redacted]")
	}
	return s
}

// LastLine is the last non-empty line of s.
func LastLine(s string) string {
	for len(s) > 0 {
		i := len(s) - 1
		for i >= 0 && s[i] != '\n' {
			i--
		}
		if line := s[i+1:]; len(line) > 0 && line != "\r" {
			return line
		}
		s = s[:max(i, 0)]
	}
	return ""
}
