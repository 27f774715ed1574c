package server

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestAdmitLoad measures admission latency at a fixed rate over loopback
// (docs/admission.md, "Latency"): cached (the same content every request)
// and uncached (new content every request). Only with PINSEAL_ADMIT_LOAD=1;
// the figures are logged, never asserted.
func TestAdmitLoad(t *testing.T) {
	if os.Getenv("PINSEAL_ADMIT_LOAD") != "1" {
		t.Skip("set PINSEAL_ADMIT_LOAD=1 to measure admission latency (30 s per case)")
	}
	const rate, dur = 100, 30 * time.Second
	for _, cached := range []bool{true, false} {
		ts := startServer(t, admitConfig(t, "enforce"), &admitEngine{})
		hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		base := ts.admitClient(t).Base
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		tick := time.NewTicker(time.Second / rate)
		end := time.Now().Add(dur)
		for i := 0; time.Now().Before(end); i++ {
			<-tick.C
			comps := admitComponents
			if !cached {
				comps += fmt.Sprintf("# %d\n", i)
			}
			body := admitConfigMap(t, "v1.10.1-core", comps)
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				resp, err := hc.Post(base+"/admit", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}()
		}
		tick.Stop()
		wg.Wait()
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
		t.Logf("cached=%v: %d requests at %d/s for %s: p50 %s p99 %s max %s", cached, len(lat), rate, dur, p(0.5), p(0.99), lat[len(lat)-1])
	}
}
