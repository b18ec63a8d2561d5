package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCacheAddSignal: `objgc cache add URL` waiting for a server that
// accepted the request and never answers stops on the first SIGINT or
// SIGTERM, exits 130 and leaves nothing in the cache. objgc is a real
// process (this test binary run as "objgc", see TestMain); the signal is
// sent once the server holds its request.
func TestCacheAddSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				select { // never answers
				case <-r.Context().Done():
				case <-done:
				}
			}))
			defer srv.Close()
			defer close(done)
			cache := filepath.Join(t.TempDir(), "cache")
			cmd := exec.Command(os.Args[0], "cache", "add", "--cache-dir", cache, srv.URL+"/io.murano.zip")
			cmd.Args[0] = "objgc"
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-arrived:
			case err := <-exited:
				t.Fatalf("objgc exited before the request arrived: %v\n%s", err, &stderr)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(30 * time.Second): // a hang, not a measurement
				cmd.Process.Kill()
				<-exited
				t.Fatalf("objgc did not stop on %v within 30 s", sig)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Errorf("exit: %v, want status 130\n%s", err, &stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr %q does not say interrupted", &stderr)
			}
			// Nothing but objgc's own, empty, staging directory: no
			// package, no record.
			if ents, err := os.ReadDir(cache); err != nil || len(ents) != 1 || ents[0].Name() != ".objgc" {
				t.Errorf("%s: %v, %v; want only .objgc/", cache, ents, err)
			}
			ents, err := os.ReadDir(filepath.Join(cache, ".objgc", "tmp"))
			if err != nil || len(ents) != 0 {
				t.Errorf(".objgc/tmp/: %v, %v; want it empty", ents, err)
			}
			if _, err := os.Stat(filepath.Join(cache, ".objgc", "records")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf(".objgc/records/: %v; want none", err)
			}
		})
	}
}
