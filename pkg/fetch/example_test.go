package fetch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"

	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Fetch hands out a pinned source's bytes only when they hash to its pin,
// and keeps them in a content-addressed cache: the second fetch of the same
// pin does not reach the server.
func ExampleFetcher_Fetch() {
	upstream := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n")
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write(upstream)
	}))
	defer srv.Close()
	cache, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(cache)

	sum := sha256.Sum256(upstream)
	src := pin.Source{URL: srv.URL + "/core-components.yaml", SHA256: hex.EncodeToString(sum[:])}
	f := &fetch.Fetcher{CacheDir: cache}
	for range 2 {
		data, err := f.Fetch(context.Background(), src)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(data), "bytes, requests so far:", requests.Load())
	}

	src.URL = srv.URL + "/other.yaml"
	src.SHA256 = hex.EncodeToString(make([]byte, 32)) // not what the server sends
	_, err = f.Fetch(context.Background(), src)
	var mismatch *fetch.ErrDigestMismatch
	fmt.Println("wrong pin refused:", errors.As(err, &mismatch))
	// Output:
	// 61 bytes, requests so far: 1
	// 61 bytes, requests so far: 1
	// wrong pin refused: true
}
