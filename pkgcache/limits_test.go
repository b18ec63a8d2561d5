package pkgcache

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A server that accepts and never answers, and one that sends half a body
// and then nothing: both end with an error instead of a hang, and leave
// nothing in the cache.
func TestAddDownloadTimeouts(t *testing.T) {
	data := zipPackage(t, testPkg("com.example.databases.MySql"), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- conn // held open, never read, never answered
		}
	}()
	defer func() {
		ln.Close()
		for conn := range accepted {
			conn.Close()
		}
	}()
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()

	for _, tt := range []struct {
		name, url, want string
	}{
		{"no answer", "http://" + ln.Addr().String() + "/p.zip", "timeout awaiting response headers"},
		{"stalled body", srv.URL + "/p.zip", "no data received for 200ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := openCache(t)
			c.HeaderTimeout, c.IdleTimeout = 200*time.Millisecond, 200*time.Millisecond
			_, err := c.Add(context.Background(), tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			assertEmpty(t, c)
		})
	}
}

// Cancelling the context (objgc's first SIGINT) ends a download that
// waits for a silent server, without waiting for any timeout.
func TestAddCancelledDownload(t *testing.T) {
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := openCache(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.Add(ctx, srv.URL+"/p.zip")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertEmpty(t, c)
}

func TestAddEntryLimit(t *testing.T) {
	entries := []zipEntry{
		{name: "manifest.yaml", body: goodManifest},
		{name: "Classes/Evil.yaml", body: "Name: com.example.Evil\n"},
	}
	for i := range 20 {
		entries = append(entries, zipEntry{name: fmt.Sprintf("Resources/%d", i)})
	}
	data := zipRaw(t, entries)
	c := openCache(t)
	c.MaxEntries = 21
	_, err := c.Add(context.Background(), writeFile(t, t.TempDir(), "many.zip", data))
	if !errors.Is(err, ErrInvalidPackage) || !strings.Contains(err.Error(), "22 entries, more than the limit of 21") {
		t.Fatalf("err = %v, want the entry limit", err)
	}
	assertEmpty(t, c)
	c.MaxEntries = 22
	if _, err := c.Add(context.Background(), writeFile(t, t.TempDir(), "many.zip", data)); err != nil {
		t.Fatal(err)
	}
}

// A prune whose context ends midway (objgc's first SIGINT) claims nothing
// more, deletes what it claimed, and leaves every other package whole.
func TestPruneCancelled(t *testing.T) {
	c := openCache(t)
	for _, n := range []string{"com.example.apache.ApacheHttpServer-0.0.0", "com.example.apache.ApacheHttpServer-1.0.0", "com.example.databases.MySql", "com.example.WordPress", "io.murano"} {
		addZip(t, c, zipPackage(t, testPkg(n), nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := c.Prune(ctx, PruneOptions{LimitSize: true, MaxSize: 0, Progress: func(done, total int) {
		cancel() // after the first claim
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	left, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) == 0 || len(res.Removed)+len(left) != 5 {
		t.Errorf("removed %d, %d left, want some removed and the rest there", len(res.Removed), len(left))
	}
	v, err := c.Verify(context.Background())
	if err != nil || len(v.Problems) != 0 || v.Checked != len(left) {
		t.Errorf("verify after the interrupted prune: %+v, %v", v, err)
	}
	if n := dirNames(t, c.tmpDir()); len(n) != 0 {
		t.Errorf("tmp/ holds %v", n)
	}
}

// A removal killed between its rename and the end of the deletion leaves
// .objgc/trash/<random>: no listing or verify sees it, and the next prune
// deletes it.
func TestPruneRemovesTrashLeftovers(t *testing.T) {
	c := openCache(t)
	addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil))
	trash, err := c.trashName()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(trash, "Classes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(trash, "Classes", "half.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if list, err := c.List(ctx); err != nil || len(list) != 1 {
		t.Errorf("list: %v, %v", list, err)
	}
	if v, err := c.Verify(ctx); err != nil || len(v.Problems) != 0 {
		t.Errorf("verify: %+v, %v", v, err)
	}
	p, err := c.Prune(ctx, PruneOptions{Outdated: true})
	if err != nil || p.Leftovers != 1 || len(p.Removed) != 0 {
		t.Errorf("prune: %+v, %v; want 1 leftover removed", p, err)
	}
	if _, err := os.Stat(trash); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", trash, err)
	}
}
