package pool

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// floodWarmModel sends n POST requests for fresh tokens of tokenLen hex
// characters to m from workers connections in parallel, and returns how
// many were answered with each status.
func floodWarmModel(t *testing.T, m *warmModel, n, tokenLen, workers int) map[int]int {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		firstErr error
		wg       sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := make([]byte, tokenLen/2)
			for i := w; i < n; i += workers {
				if _, err := rand.Read(raw); err != nil {
					panic(err)
				}
				url := m.baseURL(hex.EncodeToString(raw)) + "/v1/messages"
				resp, err := client.Post(url, "application/json", strings.NewReader(`{"model":"m","stream":false}`))
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("flood: %v", firstErr)
	}
	return statuses
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestWarmModelFreshTokensKeepNothing is attack 6 of issue 20 against the
// stand-in itself: 20,000 requests, each for a fresh 4 KB token (the
// attacker chooses the token, and its length), are refused with 404, and
// the live heap grows by less than 5 MB (the old stand-in kept a counter
// per token: +80 MB). A token the pool issued is answered and counted
// before and after the flood, and forgotten tokens are refused.
func TestWarmModelFreshTokensKeepNothing(t *testing.T) {
	m, err := startWarmModel(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	token, err := m.issue()
	if err != nil {
		t.Fatal(err)
	}
	post := func(tok string) int {
		t.Helper()
		resp, err := http.Post(m.baseURL(tok)+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(token); code != http.StatusOK || m.requests(token) != 1 {
		t.Fatalf("issued token: status %d, %d requests counted; want 200, 1", code, m.requests(token))
	}

	before := heapInUse()
	const n = 20000
	statuses := floodWarmModel(t, m, n, 4096, 8)
	after := heapInUse()
	t.Logf("20,000 fresh 4 KB tokens: statuses %v, live heap %d → %d bytes (%+.2f MB)", statuses, before, after, (float64(after)-float64(before))/(1<<20))
	if statuses[http.StatusNotFound] != n {
		t.Errorf("statuses %v: want all %d refused with 404", statuses, n)
	}
	if after > before && after-before > 5<<20 {
		t.Errorf("the live heap grew by %d bytes for fresh tokens, want under 5 MB", after-before)
	}

	if code := post(token); code != http.StatusOK || m.requests(token) != 2 {
		t.Errorf("issued token after the flood: status %d, %d requests counted; want 200, 2", code, m.requests(token))
	}
	m.forget(token)
	if code := post(token); code != http.StatusNotFound || m.requests(token) != 0 {
		t.Errorf("forgotten token: status %d, %d requests counted; want 404, 0", code, m.requests(token))
	}
}

// TestWarmModelBoundsHeaders: a request whose headers exceed the bound
// is refused before any handler runs (an attacker's token, however long,
// is never taken in whole).
func TestWarmModelBoundsHeaders(t *testing.T) {
	m, err := startWarmModel(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	req, err := http.NewRequest(http.MethodPost, m.baseURL(strings.Repeat("a", 2*warmModelMaxHeader))+"/v1/messages", bytes.NewReader([]byte("{}")))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("oversized request line: status %d, want 431", resp.StatusCode)
	}
	// net/http lingers 500 ms on a connection it refused (rstAvoidanceDelay)
	// in a goroutine Close does not wait for.
	time.Sleep(700 * time.Millisecond)
}
