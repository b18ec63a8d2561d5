package pkgcache

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodManifest = "Format: 1.4\nType: Library\nFullName: com.example.Evil\nClasses:\n  com.example.Evil: Evil.yaml\n"

func TestAddRejectsHostileArchives(t *testing.T) {
	manifest := zipEntry{name: "manifest.yaml", body: goodManifest}
	class := zipEntry{name: "Classes/Evil.yaml", body: "Name: com.example.Evil\n"}
	valid := zipRaw(t, []zipEntry{manifest, class})
	tests := []struct {
		name    string
		data    []byte
		max     int64
		wantErr string
	}{
		{"dotdot entry", zipRaw(t, []zipEntry{manifest, class, {name: "../evil", body: "x"}}), 0, `leaves the package`},
		{"nested dotdot entry", zipRaw(t, []zipEntry{manifest, class, {name: "Classes/../../evil", body: "x"}}), 0, `leaves the package`},
		{"absolute entry", zipRaw(t, []zipEntry{manifest, class, {name: "/etc/evil", body: "x"}}), 0, `absolute`},
		{"backslash entry", zipRaw(t, []zipEntry{manifest, class, {name: `..\evil`, body: "x"}}), 0, `absolute or non-portable`},
		{"absolute link", zipRaw(t, []zipEntry{manifest, class, {name: "l", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}}), 0, `outside the package`},
		{"dotdot link", zipRaw(t, []zipEntry{manifest, class, {name: "Classes/l", body: "../../x", mode: fs.ModeSymlink | 0o777}}), 0, `outside the package`},
		{"link through link", zipRaw(t, []zipEntry{manifest, class,
			{name: "a/b/up", body: "..", mode: fs.ModeSymlink | 0o777},
			{name: "a/esc", body: "b/up/../..", mode: fs.ModeSymlink | 0o777}}), 0, `outside the package`},
		// a -> . and b -> a/. make b the package root; from there ".."
		// leaves it, though every target is local by name.
		{"chain of links", zipRaw(t, []zipEntry{manifest, class,
			{name: "a", body: ".", mode: fs.ModeSymlink | 0o777},
			{name: "b", body: "a/.", mode: fs.ModeSymlink | 0o777},
			{name: "hooks/C/destroy", body: "../../b/../outside", mode: fs.ModeSymlink | 0o777}}), 0, `leads outside the package`},
		{"chain of links to the parent", zipRaw(t, []zipEntry{manifest, class,
			{name: "a", body: ".", mode: fs.ModeSymlink | 0o777},
			{name: "b", body: "a/.", mode: fs.ModeSymlink | 0o777},
			{name: "c", body: "b/..", mode: fs.ModeSymlink | 0o777}}), 0, `leads outside the package`},
		{"link loop", zipRaw(t, []zipEntry{manifest, class,
			{name: "p", body: "q", mode: fs.ModeSymlink | 0o777},
			{name: "q", body: "p", mode: fs.ModeSymlink | 0o777}}), 0, `cannot be resolved`},
		{"entry under a link", zipRaw(t, []zipEntry{manifest, class,
			{name: "d", body: "Classes", mode: fs.ModeSymlink | 0o777},
			{name: "d/x", body: "x", mode: fs.ModeSymlink | 0o777}}), 0, `under the link`},
		{"too large", zipRaw(t, []zipEntry{manifest, class, {name: "big", body: strings.Repeat("x", 4096)}}), 2048, `limit`},
		{"no manifest", zipRaw(t, []zipEntry{class}), 0, `no manifest.yaml`},
		{"manifest in a folder", zipRaw(t, []zipEntry{{name: "pkg/manifest.yaml", body: goodManifest}}), 0,
			`no manifest.yaml at the archive root; it is at pkg/manifest.yaml: zip the package folder's contents (cd pkg && zip -r ../pkg.zip .), not the folder`},
		{"invalid manifest", zipRaw(t, []zipEntry{{name: "manifest.yaml", body: "FullName: [\n"}}), 0, `not valid YAML`},
		{"no FullName", zipRaw(t, []zipEntry{{name: "manifest.yaml", body: "Name: x\n"}}), 0, `no FullName`},
		{"FullName path", zipRaw(t, []zipEntry{{name: "manifest.yaml", body: "FullName: ../../etc\n"}}), 0, `not a safe path component`},
		{"FullName slash", zipRaw(t, []zipEntry{{name: "manifest.yaml", body: "FullName: a/b\n"}}), 0, `not a safe path component`},
		{"Version path", zipRaw(t, []zipEntry{{name: "manifest.yaml", body: "FullName: a\nVersion: ../x\n"}}), 0, `not a safe path component`},
		{"missing class file", zipRaw(t, []zipEntry{manifest}), 0, `Evil.yaml`},
		{"class file not yaml", zipRaw(t, []zipEntry{manifest, {name: "Classes/Evil.yaml", body: "Name: [\n"}}), 0, `Evil.yaml`},
		{"duplicate entry", zipRaw(t, []zipEntry{manifest, class, class}), 0, `twice`},
		{"truncated", valid[:len(valid)/2], 0, `truncated`},
		{"not a zip", []byte("hello"), 0, `not a zip archive`},
		{"empty", nil, 0, `not a zip archive`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := openCache(t)
			c.MaxUnpackedSize = tt.max
			src := writeFile(t, t.TempDir(), "evil.zip", tt.data)
			_, err := c.Add(context.Background(), src)
			if !errors.Is(err, ErrInvalidPackage) {
				t.Fatalf("err = %v, want ErrInvalidPackage", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			assertEmpty(t, c)
		})
	}
	t.Run("links inside pass, dangling ones too", func(t *testing.T) {
		c := openCache(t)
		data := zipRaw(t, []zipEntry{manifest, class,
			{name: "scripts/d.sh", body: "#!/bin/sh\n", mode: 0o755},
			{name: "a", body: ".", mode: fs.ModeSymlink | 0o777},
			{name: "b", body: "a/.", mode: fs.ModeSymlink | 0o777},
			{name: "hooks/C/destroy", body: "../../b/scripts/d.sh", mode: fs.ModeSymlink | 0o777},
			{name: "hooks/C/gone", body: "../../b/missing/../../..", mode: fs.ModeSymlink | 0o777},
			{name: "hooks/C/file", body: "../../manifest.yaml/../..", mode: fs.ModeSymlink | 0o777}})
		res, err := c.Add(context.Background(), writeFile(t, t.TempDir(), "ok.zip", data))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(res.Entry.Dir, "hooks", "C", "destroy"))
		if err != nil || string(got) != "#!/bin/sh\n" {
			t.Errorf("hooks/C/destroy reads %q, %v", got, err)
		}
	})
	t.Run("valid one passes", func(t *testing.T) {
		c := openCache(t)
		if _, err := c.Add(context.Background(), writeFile(t, t.TempDir(), "ok.zip", valid)); err != nil {
			t.Fatal(err)
		}
	})
}

// assertEmpty checks that the cache holds no package and .objgc/tmp/ and
// .objgc/records/ are empty.
func assertEmpty(t *testing.T, c *Cache) {
	t.Helper()
	if keys, _ := c.scan(); len(keys) != 0 {
		t.Errorf("the cache holds %v after a rejected add", keys)
	}
	for _, d := range []string{c.tmpDir(), c.recordsDir()} {
		if n := dirNames(t, d); len(n) != 0 {
			t.Errorf("%s holds %v after a rejected add", d, n)
		}
	}
}

func TestAddRejectsBadDownloads(t *testing.T) {
	data := zipPackage(t, testPkg("com.example.databases.MySql"), nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/missing.zip", http.NotFound)
	mux.HandleFunc("/cut.zip", func(w http.ResponseWriter, r *http.Request) {
		// Promise the whole archive, send half, drop the connection.
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: application/zip\r\n\r\n", len(data))
		buf.Write(data[:len(data)/2])
		buf.Flush()
	})
	mux.HandleFunc("/cut-chunked.zip", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", len(data)/2)
		buf.Write(data[:len(data)/2])
		buf.WriteString("\r\n")
		buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		bufio.NewReader(conn).ReadByte()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tt := range []struct{ path, want string }{
		{"/missing.zip", "404"},
		{"/cut.zip", "body"},
		{"/cut-chunked.zip", "body"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			c := openCache(t)
			_, err := c.Add(context.Background(), srv.URL+tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
			assertEmpty(t, c)
		})
	}
}
